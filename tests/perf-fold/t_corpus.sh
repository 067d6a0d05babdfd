#!/usr/bin/env bash
# Byte-compatibility with stackcollapse-perf.pl on FlameGraph's test inputs:
# every input x option against results-head/ (compatible default) and
# results-eof/ (--eof), the plain default against the example fold, and - when a
# FlameGraph checkout is found (FLAMEGRAPH_DIR) - the Perl script itself on
# every input with the default options.
set -u
. "$(dirname "$0")/../tap.sh"
pf=${SF_BIN:-$top/bin}/perf-fold
corpus=$top/tests/data/corpus/flamegraph
fg=${FLAMEGRAPH_DIR:-}
tap_tmpdir

if [ ! -d "$corpus/test/results-head" ]; then
    notok "corpus comparisons: no corpus at $corpus"
    tap_plan; exit 0
fi
for opt in pid tid kernel jit all addrs; do
    for f in "$corpus"/test/*.txt; do
        b=$(basename "$f" .txt)
        for mode in head eof; do
            want=$corpus/test/results-$mode/$b-collapsed-$opt.txt
            extra=(); [ "$mode" = eof ] && extra=(--eof)
            "$pf" -q "${extra[@]}" --"$opt" "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
            if [ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$want"; then
                ok "$b --$opt matches results-$mode"
            else
                notok "$b --$opt matches results-$mode (exit $rc)"
                diff "$want" "$tmp/out" | head -5 | sed 's/^/#   /'
            fi
        done
    done
done
gz=$corpus/example/example-perf-stacks.txt.gz
if [ -f "$gz" ]; then
    gzip -dc "$gz" | "$pf" -q >"$tmp/out"
    cmp -s "$tmp/out" "$corpus/example/example-perf-stacks-collapsed.txt" &&
        ok "example-perf-stacks default fold identical" || notok "example-perf-stacks default fold identical"
fi
# stdin and a file give the same fold; two files fold as their concatenation
f=$corpus/test/perf-numa-stacks-01.txt
"$pf" -q <"$f" >"$tmp/a"; "$pf" -q "$f" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok "stdin and file fold alike" || notok "stdin and file fold alike"
if [ -f "$fg/stackcollapse-perf.pl" ]; then
    for f in "$corpus"/test/*.txt; do
        b=$(basename "$f" .txt)
        for opt in "" --pid --all --addrs; do
            perl "$fg/stackcollapse-perf.pl" $opt "$f" >"$tmp/want" 2>/dev/null
            "$pf" -q $opt "$f" >"$tmp/out" 2>/dev/null
            cmp -s "$tmp/out" "$tmp/want" && ok "$b ${opt:-default} same as stackcollapse-perf.pl" ||
                notok "$b ${opt:-default} same as stackcollapse-perf.pl"
        done
    done
    cat "$corpus"/test/perf-funcab-*.txt >"$tmp/two.txt"
    perl "$fg/stackcollapse-perf.pl" "$corpus"/test/perf-funcab-cmd-01.txt "$corpus"/test/perf-funcab-pid-01.txt >"$tmp/want" 2>/dev/null
    "$pf" -q "$corpus"/test/perf-funcab-cmd-01.txt "$corpus"/test/perf-funcab-pid-01.txt >"$tmp/out"
    cmp -s "$tmp/out" "$tmp/want" && ok "two inputs fold like stackcollapse-perf.pl A B" || notok "two inputs fold like stackcollapse-perf.pl A B"
else
    skip "direct comparison with stackcollapse-perf.pl" "no FlameGraph checkout (set FLAMEGRAPH_DIR)"
fi
tap_plan

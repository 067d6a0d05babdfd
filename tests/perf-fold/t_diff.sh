#!/usr/bin/env bash
# perf-fold diff: difffolded.pl-compatible output (-s, -n), byte order, inclusive
# shares, the --fail-if gate and its exit status, bad input.
set -u
. "$(dirname "$0")/../tap.sh"
pf=${SF_BIN:-$top/bin}/perf-fold
corpus=$top/tests/data/corpus/flamegraph
fg=${FLAMEGRAPH_DIR:-}
tap_tmpdir
export LC_ALL=C

ref=$corpus/flamegraph-ref/diff
if [ -d "$ref" ]; then
    "$pf" diff -q -s "$ref/vertx-hex-a.folded" "$ref/vertx-hex-b.folded" >"$tmp/d"; rc=$?
    check "diff -s exits 0" [ "$rc" -eq 0 ]
    sort "$ref/vertx-striphex.diff.txt" >"$tmp/want"
    check "diff -s: same lines as difffolded.pl -s (reference)" cmp -s "$tmp/want" <(sort "$tmp/d")
    check "diff output is in byte order" sort -c "$tmp/d"
else
    notok "difffolded.pl reference: no corpus at $corpus"
fi
h=$corpus/test/results-head
if [ -f "$fg/difffolded.pl" ] && [ -d "$h" ]; then
    a=$h/perf-vertx-stacks-01-collapsed-all.txt b=$h/perf-java-stacks-01-collapsed-all.txt
    for o in "" -n -s "-n -s"; do
        perl "$fg/difffolded.pl" $o "$a" "$b" | sort >"$tmp/want"
        "$pf" diff -q $o "$a" "$b" >"$tmp/got"
        check "diff ${o:-(plain)} same lines as difffolded.pl" cmp -s "$tmp/want" "$tmp/got"
    done
else
    skip "direct comparison with difffolded.pl" "no FlameGraph checkout (set FLAMEGRAPH_DIR)"
fi

printf 'app;main;b 90\napp;main;c 10\n' >"$tmp/base"
printf 'app;main;b 50\napp;main;c 50\n' >"$tmp/new"
printf 'app;main;b 60\napp;main;c 60\n' >"$tmp/more"
"$pf" diff -q --fail-if 'frame>+5pt' "$tmp/base" "$tmp/base" >/dev/null
check "same profile passes frame>+5pt" [ $? -eq 0 ]
"$pf" diff --fail-if 'frame>+5pt' --summary "$tmp/sum.md" "$tmp/base" "$tmp/new" >"$tmp/out" 2>"$tmp/err"
check "c up 40 points fails frame>+5pt (exit 1)" [ $? -eq 1 ]
check "summary names c with +40.00 pt" grep -q '^| `c` | 10.00 | 50.00 | +40.00 |$' "$tmp/sum.md"
check "summary marks the failed gate" grep -qF '| `frame>+5pt` | **FAIL** | c\: 10\.00 \% \-\> 50\.00 \%' "$tmp/sum.md"
check "--summary: stderr holds only the failed gate's line" \
    [ "$(cat "$tmp/err")" = "perf-fold diff: gate 'frame>+5pt' failed: c: 10.00 % -> 50.00 % of samples, +40 pt [27.84, 50.61] at 95 % confidence" ]
check "two-column output" cmp -s "$tmp/out" <(printf 'app;main;b 90 50\napp;main;c 10 50\n')
"$pf" diff -q --fail-if 'frame>+45pt' "$tmp/base" "$tmp/new" >/dev/null
check "40 points passes frame>+45pt" [ $? -eq 0 ]
"$pf" diff -q --fail-if 'c>+300%' "$tmp/base" "$tmp/new" >/dev/null
check "c share +400% fails c>+300%" [ $? -eq 1 ]
"$pf" diff -q --fail-if 'b>+1%pt' "$tmp/base" "$tmp/new" >/dev/null
check "b shrinking passes b>+1%pt" [ $? -eq 0 ]
"$pf" diff -q --fail-if 'total>+10%' "$tmp/base" "$tmp/more" >/dev/null
check "total +20% fails total>+10%" [ $? -eq 1 ]
"$pf" diff -q --fail-if 'total>+25%' "$tmp/base" "$tmp/more" >/dev/null
check "total +20% passes total>+25%" [ $? -eq 0 ]
"$pf" diff -n "$tmp/base" "$tmp/more" 2>/dev/null >"$tmp/out"
check "-n scales base to the new total (int(c1*t2/t1))" cmp -s "$tmp/out" <(printf 'app;main;b 108 60\napp;main;c 12 60\n')
printf 'a;b;a 10\n' >"$tmp/rec1"; printf 'a;b;a 10\nz 10\n' >"$tmp/rec2"
"$pf" diff "$tmp/rec2" "$tmp/rec1" 2>"$tmp/md" >/dev/null
check "recursive frame counted once per stack (a: 50% -> 100%)" grep -q '^| `a` | 50.00 | 100.00 | +50.00 |$' "$tmp/md"
"$pf" diff --fail-if 'frame>5' "$tmp/base" "$tmp/new" >/dev/null 2>&1
check "bad --fail-if is a usage error (exit 2)" [ $? -eq 2 ]
printf 'app;main;b 90\ngarbage line\n\napp;main;c x\n' >"$tmp/bad"
"$pf" diff -q "$tmp/bad" "$tmp/new" >"$tmp/out" 2>"$tmp/err"
check "bad folded lines skipped: exit 1" [ $? -eq 1 ]
check "the skipped lines are counted" grep -q "perf-fold diff: 3 bad lines skipped" "$tmp/err"
check "bad folded lines reported as FILE:LINE" grep -q "perf-fold diff: $tmp/bad:2: not a folded line" "$tmp/err"
check "good lines still diffed" grep -q '^app;main;b 90 50$' "$tmp/out"
printf 'x 1.5\n' >"$tmp/f1"; printf 'x 2\n' >"$tmp/f2"
check "decimal counts as difffolded.pl" cmp -s <("$pf" diff -q "$tmp/f1" "$tmp/f2") <(printf 'x 1.5 2\n')
tap_plan

#!/usr/bin/env bash
# Live end to end (root and perf needed; skipped with the reason otherwise):
# tests/perf-fold/live_spans.c burns CPU in burn_in_span() between trace_marker
# span markers (own tracefs instance, trace_clock mono) and in burn_outside()
# between spans, recorded with `perf record -k mono -g`.
#  1. span folding: burn_in_span lands under [span ID] roots, burn_outside under
#     [unattributed]; intervals from tracefs2spans when built and tracefs is
#     usable, else from the program's own CLOCK_MONOTONIC log.
#  2. --inline: the always-inlined mix_step appears (addr2line), and the fold is
#     byte-identical to stackcollapse-perf.pl --inline when FlameGraph is there.
#  3. the diff gate: a rerun of the same workload passes 'frame>+5pt'; the slow
#     variant (extra_work inside every span) fails it.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
fg=${FLAMEGRAPH_DIR:-}
tap_name="live perf tests"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (perf record, tracefs)"
command -v perf >/dev/null || tap_skip_all "perf not installed (linux-perf)"
command -v cc >/dev/null || tap_skip_all "no C compiler"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"
tmp=$(mktemp -d); inst=""
cleanup() { [ -n "$inst" ] && rmdir "$inst" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export LC_ALL=C
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/live_spans" "$top/tests/perf-fold/live_spans.c" ||
    tap_skip_all "cannot compile live_spans.c"

# a private tracefs instance with the mono clock (the global buffer is not touched)
tr=/sys/kernel/tracing
[ -d "$tr/instances" ] || mount -t tracefs nodev "$tr" 2>/dev/null
marker=-
if [ -d "$tr/instances" ] && mkdir "$tr/instances/pf-live-$$" 2>/dev/null; then
    inst=$tr/instances/pf-live-$$
    echo mono >"$inst/trace_clock" && echo 1 >"$inst/tracing_on" && marker=$inst/trace_marker
fi
record() { # NAME SLOW SPANS
    perf record -q -k mono -g -F 2999 -e cpu-clock -o "$tmp/$1.data" -- \
        "$tmp/live_spans" "$marker" "$3" "$2" >"$tmp/$1.log" 2>/dev/null &&
        perf script --header -i "$tmp/$1.data" >"$tmp/$1.txt" 2>/dev/null
}
record base 0 25 || tap_skip_all "perf record failed (perf_event_paranoid?)"
if [ -n "$inst" ]; then { echo "# tracer: nop"; echo "# trace_clock: mono"; cat "$inst/trace"; } >"$tmp/trace.txt"; fi
record rerun 0 25 && record slow 1 25 || tap_skip_all "perf record failed"

# 1. span folding
db=$tmp/live.db
"$bin/perf-fold" -q --db "$db" "$tmp/base.txt" >"$tmp/base.folded"
check "perf script --header clock is monotonic" [ "$(sqlite3 "$db" "SELECT clock FROM sources")" = monotonic ]
how="program log"
if [ -x "$bin/tracefs2spans" ] && [ -s "$tmp/trace.txt" ] && grep -q 'span:5ba' "$tmp/trace.txt"; then
    "$bin/tracefs2spans" --quiet --db "$db" "$tmp/trace.txt" >/dev/null 2>&1 && how="tracefs2spans"
fi
if [ "$how" = "program log" ]; then
    sqlite3 "$db" "INSERT INTO sources (id, kind, path, clock, tool, tool_version, status)
                   VALUES (1000, 'tracefs', 'live.log', 'monotonic', 'test', '0', 'complete');"
    while read -r tid id t0 t1; do
        echo "INSERT INTO span_intervals (source_id, span_id, tid, start_ns, end_ns) VALUES (1000, '$id', $tid, $t0, $t1);"
    done <"$tmp/base.log" | sqlite3 "$db"
fi
echo "# intervals from: $how"
check "25 span intervals" [ "$(sqlite3 "$db" "SELECT count(DISTINCT span_id) FROM span_intervals")" = 25 ]
"$bin/perf-fold" -q --db "$db" --group-by span >"$tmp/span.folded"
sum_re() { grep -e "$1" "$tmp/span.folded" | awk '{ s += $NF } END { print s + 0 }'; }
in_all=$(sum_re ';burn_in_span'); in_span=$(sum_re '^\[span 5ba[0-9a-f]*\];live_spans;.*burn_in_span')
out_all=$(sum_re ';burn_outside'); out_un=$(sum_re '^\[unattributed\];live_spans;.*burn_outside')
echo "# burn_in_span: $in_span of $in_all under a span root; burn_outside: $out_un of $out_all unattributed"
check "burn_in_span sampled" [ "$in_all" -gt 0 ]
check ">= 95% of burn_in_span under [span 5ba...] roots" [ $((in_span * 100)) -ge $((in_all * 95)) ]
check ">= 95% of burn_outside under [unattributed]" [ $((out_un * 100)) -ge $((out_all * 95)) ]

# 2. --inline
"$bin/perf-fold" -q --inline "$tmp/base.txt" >"$tmp/inline.folded" 2>/dev/null
check "--inline shows the inlined mix_step under burn_in_span" grep -q 'burn_in_span;mix_step' "$tmp/inline.folded"
"$bin/perf-fold" -q --inline --context "$tmp/base.txt" >"$tmp/ctx.folded" 2>/dev/null
check "--inline --context adds file:line" grep -q 'mix_step:live_spans.c:[0-9]' "$tmp/ctx.folded"
if [ -f "$fg/stackcollapse-perf.pl" ]; then
    for o in --inline "--inline --context"; do
        perl "$fg/stackcollapse-perf.pl" $o "$tmp/base.txt" >"$tmp/want" 2>/dev/null
        "$bin/perf-fold" -q $o "$tmp/base.txt" >"$tmp/got" 2>/dev/null
        check "$o identical to stackcollapse-perf.pl $o" cmp -s "$tmp/want" "$tmp/got"
    done
else
    n=$((n + 1)); echo "ok $n - --inline vs stackcollapse-perf.pl # SKIP no FlameGraph (FLAMEGRAPH_DIR)"
fi

# 3. the gate: noise-robust thresholds (see README: share noise ~ sqrt(p(1-p)/N))
for v in rerun slow; do "$bin/perf-fold" -q "$tmp/$v.txt" >"$tmp/$v.folded"; done
"$bin/perf-fold" diff -q --fail-if 'frame>+5pt' "$tmp/base.folded" "$tmp/rerun.folded" >/dev/null
check "rerun of the same workload passes frame>+5pt" [ $? -eq 0 ]
"$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$tmp/slow.md" "$tmp/base.folded" "$tmp/slow.folded" >/dev/null
check "slow variant fails frame>+5pt (exit 1)" [ $? -eq 1 ]
check "the summary names extra_work as the top regression" grep -q "^| .extra_work[.a-z0-9]*. | 0.00 |" "$tmp/slow.md"
sed "s/^/# /" "$tmp/slow.md" | head -12
tap_plan

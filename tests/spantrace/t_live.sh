#!/usr/bin/env bash
# spantrace live test: attach to a real program's USDT probes and uprobes and
# check that every span it marked comes out as a begin and an end marker with the
# right id and decision, in the tracefs text format (and that tracefs2spans, when
# built, reads them).  Needs root, BPF and kernel BTF; skips with the reason
# otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
bad() { n=$((n + 1)); echo "not ok $n - $1"; }
tap_name="spantrace live"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (CAP_BPF, CAP_PERFMON)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built (needs clang, bpftool, libbpf-dev)"
tmp=$(mktemp -d); trap 'kill $st 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -o "$tmp/probe_target" "$top/tests/spantrace/probe_target.c" || tap_skip_all "cannot build probe_target (sys/sdt.h from systemtap-sdt-dev)"
count=40

# $1 = mode args; $2 = output; waits until spantrace has attached, runs the target, stops.
trace() {
    "$bin/spantrace" "$@" -d 30 "$tmp/probe_target" 2>"$tmp/err" &
    st=$!
    for _ in $(seq 1 100); do grep -q tracing "$tmp/err" && break; sleep 0.1; done
    "$tmp/probe_target" "$count" 1000 >/dev/null
    sleep 0.3
    kill -INT $st; wait $st
}

trace --usdt spanfold:span_begin:span_end --decision-arg 1 -o "$tmp/usdt.txt"
rc=$?
[ $rc = 0 ] && ok "spantrace --usdt exits 0 on SIGINT" || bad "spantrace --usdt exits 0 on SIGINT (rc $rc: $(cat "$tmp/err"))"
check() { # file label
    local f=$1 label=$2 missing=0 i id
    for ((i = 0; i < count; i++)); do
        id=$(printf '%016x' $((0x1000 + i)))
        grep -q "span:$id begin decision:$((i % 2))\$" "$f" || missing=$((missing + 1))
        grep -q "span:$id end decision:$((i % 2))\$" "$f" || missing=$((missing + 1))
    done
    [ $missing = 0 ] && ok "$label: all $count spans have begin and end markers with their decision" ||
        bad "$label: $missing of $((2 * count)) markers missing"
    [ "$(grep -c 'spantrace: span:' "$f")" = $((2 * count)) ] && ok "$label: no extra markers" ||
        bad "$label: $(grep -c 'spantrace: span:' "$f") markers, want $((2 * count))"
    grep -Eq '^ *probe_target-[0-9]+ +\( *[0-9]+\) \[[0-9]{3}\] \.\.\.\.\. +[0-9]+\.[0-9]{9}: spantrace: ' "$f" &&
        ok "$label: lines follow the tracefs layout with ns timestamps" || bad "$label: line layout"
    # begin before end for each span, timestamps non-decreasing per thread
    awk '/spantrace: span:/ { split($0, a, ": spantrace: "); n = split(a[1], f, " "); ts = f[n];
             if (ts + 0 < last + 0) bad = 1; last = ts } END { exit bad }' "$f" &&
        ok "$label: timestamps never go backwards" || bad "$label: timestamps go backwards"
}
check "$tmp/usdt.txt" usdt
grep -q '^# trace_clock: mono' "$tmp/usdt.txt" && ok "header names the clock" || bad "header names the clock"

trace --func sf_probe_span_begin,sf_probe_span_end --decision-arg 1 -o "$tmp/func.txt"
check "$tmp/func.txt" uprobe

if [ -x "$bin/tracefs2spans" ]; then
    "$bin/tracefs2spans" --db "$tmp/t.db" "$tmp/usdt.txt" >/dev/null 2>"$tmp/t2s.err"
    got=$(sqlite3 "$tmp/t.db" "SELECT count(DISTINCT span_id) FROM span_intervals" 2>/dev/null)
    [ "$got" = "$count" ] && ok "tracefs2spans builds $count span intervals from spantrace output" ||
        bad "tracefs2spans read $got intervals, want $count ($(head -c 300 "$tmp/t2s.err"))"
fi
"$bin/spantrace" --usdt nosuch:probe:x "$tmp/probe_target" -d 1 2>"$tmp/e2" >/dev/null
rc=$?
[ $rc = 2 ] && grep -q 'failed to attach USDT nosuch:probe' "$tmp/e2" && ok "a missing probe is a clear error, exit 2" ||
    bad "missing probe: rc $rc, $(cat "$tmp/e2")"
tap_plan

#!/usr/bin/env bash
# Live (issue #30.1): the demo service slowed by waiting (--slow-kind lock: a pool of one
# backend connection and its 15 ms answer), its off-CPU time recorded by `spantrace
# --offcpu` (BPF) beside perf's plain 199 Hz CPU profile, with no scheduler events in perf
# (scripts/record-demo.sh with SLOW_KIND=lock OFFCPU=bpf, about 14 s).  spanfold ingest of
# the capture, the profile, the markers and offcpu.txt, then spanfold report: the off-CPU
# intervals are stored and attributed to spans, each complete (its end after its start, a
# state, a stack ending in the scheduler), the heaviest blocked stack of the slow searches
# is the backend's sleep under search_backend, and the report names /api/search's slow
# phase as blocked near the true start, the parts adding up.  Needs root, BPF, perf,
# tcpdump; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording, off-CPU time from spantrace --offcpu"
. "$top/tests/demo/live_need.sh"
tap_tmpdir t_demo_live_offcpu_bpf

live_cause blocked --reason-any do_nanosleep,futex --grew blocked_ns:8e6 -- SLOW_KIND=lock OFFCPU=bpf
check_eval "scripts/record-demo.sh recorded a run slowed by waiting, with spantrace --offcpu" \
    "[ -s '$tmp/rec/offcpu.txt' ] && grep -q 'spantrace_offcpu: end=' '$tmp/rec/offcpu.txt'"
sed 's/^/# /' "$tmp/rec/offcpu.err"
perf=$tmp/rec/perf.txt
[ -f "$perf" ] || perf=$perf.gz
check_eval "the CPU profile has no scheduler events (off-CPU time is spantrace's alone)" \
    "! zgrep -q 'sched:sched_switch' '$perf'"
sed 's/^/# /' "$tmp/ingest.err" | grep -i -E 'off-cpu|offcpu' | head -3
q() { sqlite3 "$tmp/r.db" "$1"; }
lines=$(grep -c 'spantrace_offcpu: end=' "$tmp/rec/offcpu.txt")
check_eval "ingest: every off-CPU line stored ($(q "SELECT count(*) FROM offcpu") of $lines), each complete" \
    "[ '$(q "SELECT count(*) FROM offcpu o JOIN sources s ON s.id = o.source_id WHERE s.kind = 'tracefs'")' = '$lines' ] &&
     [ '$(q "SELECT count(*) FROM offcpu o JOIN stacks st ON st.id = o.stack_id WHERE o.end_ns >= o.ts_ns
             AND o.state IS NOT NULL AND st.frames LIKE '%;__schedule'")' = '$lines' ]"
check_eval "ingest: off-CPU intervals attributed to spans ($(q "SELECT count(span_id) FROM offcpu"))" \
    "[ '$(q "SELECT count(span_id) > 50 FROM offcpu")' = 1 ]"
"$bin/spanfold" stacks --db "$tmp/r.db" --offcpu --where 'endpoint = "/api/search" and duration > p95' \
    >"$tmp/slow.off" 2>"$tmp/stacks.err"
heavy=$(tail -n +2 "$tmp/slow.off" | awk '{print $NF, $0}' | sort -n -r | head -1 | cut -d' ' -f2-)
echo "# heaviest: ${heavy:0:300}"
check_eval "stacks --offcpu of the slowest searches: the heaviest blocks under search_backend" \
    "echo \"\$heavy\" | grep -q 'search_backend'"
sed 's/^/# /' "$tmp/why"
check_eval "report: /api/search's slow phase is blocked (the backend's sleep or the pool's futex), near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
tap_plan

#!/usr/bin/env bash
# Live (issue #30.5): the demo service slowed by waiting, not by CPU (--slow-kind lock: a pool
# of one backend connection and its 15 ms answer), recorded on this machine with
# docs/recording.md's off-CPU recipe (scripts/record-demo.sh with SLOW_KIND=lock OFFCPU=1,
# about 14 s), then spanfold ingest of the perf.data-derived text and spanfold report: the
# report names /api/search's slow phase as blocked, in the backend's sleep or the pool's
# futex, near the true start (2.5 s: live, short phases), the parts adding up.  Needs root, BPF,
# perf, tcpdump; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording, slowed by waiting"
. "$top/tests/demo/live_need.sh"
[ -d /sys/kernel/tracing/events/sched/sched_switch ] || [ -d /sys/kernel/debug/tracing/events/sched/sched_switch ] ||
    tap_skip_all "no sched:sched_switch tracepoint"
tap_tmpdir t_demo_live_blocked

live_cause blocked --reason-any do_nanosleep,futex --grew blocked_ns:8e6 -- SLOW_KIND=lock OFFCPU=1
ok "scripts/record-demo.sh recorded a run slowed by waiting, with every sched_switch"
check_eval "ingest: off-CPU intervals, attributed to spans" \
    '[ "$(sqlite3 "$tmp/r.db" "SELECT count(span_id) > 50 FROM offcpu")" = 1 ]'
check_eval "report: exit 0" '[ -s "$tmp/rep/findings.json" ]'
sed 's/^/# /' "$tmp/why"
check_eval "report: /api/search's slow phase is blocked (the backend's sleep or the pool's futex), near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
tap_plan

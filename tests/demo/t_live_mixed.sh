#!/usr/bin/env bash
# Live (issue #30.5): the demo service slowed two ways at once (--slow-kind mixed: every
# search waits on its backend, which slow mode asks for 25 ms instead of 2, and burns CPU
# in slow_regex_backtrack), recorded on this machine (scripts/record-demo.sh with
# SLOW_KIND=mixed, about 14 s), then spanfold ingest and report: the report names both,
# downstream to /api/backend and CPU, each with its share, near the true start, the parts
# adding up.  Needs root, BPF, perf, tcpdump; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording, slowed by its backend and its CPU at once"
. "$top/tests/demo/live_need.sh"
tap_tmpdir t_demo_live_mixed

live_cause downstream --second cpu --endpoint /api/backend -- SLOW_KIND=mixed
ok "scripts/record-demo.sh recorded a run slowed by the backend and the CPU at once"
sed 's/^/# /' "$tmp/why"
check_eval "report: /api/search's slow phase is downstream (to /api/backend) and CPU, both named, near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
sed -n '1s/^/# /p' "$tmp/rep.err" | cut -c1-400
check_eval "the verdict names both in words" \
    "grep -q 'downstream call to /api/backend' '$tmp/rep.err' && grep -q ', and [0-9]* % ' '$tmp/rep.err'"
tap_plan

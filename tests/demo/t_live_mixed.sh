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

live_record 4.5 SLOW_KIND=mixed
ok "scripts/record-demo.sh recorded a run slowed by the backend and the CPU at once"
perf=$tmp/rec/perf.txt
[ -f "$perf" ] || perf=$perf.gz
"$bin/spanfold" ingest --db "$tmp/r.db" "$tmp/rec/demo.pcap" "$perf" "$tmp/rec/markers.txt" \
    2>"$tmp/ingest.err"
"$bin/spanfold" report --db "$tmp/r.db" --out "$tmp/rep" 2>"$tmp/rep.err"
python3 - "$tmp/rep/findings.json" "$tmp/rec/MANIFEST.json" >"$tmp/why" 2>&1 <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
lat = [i for i in f["inflections"] if i["endpoint"] == "/api/search" and i["metric"] in ("p50", "p95", "p99")]
i = min(lat, key=lambda i: abs(i["time_ns"] - m["slow_start_realtime_ns"])) if lat else None
ok = i is not None and {i["cause"], i.get("cause_second")} == {"downstream", "cpu"} and \
    i.get("cause_endpoint") == "/api/backend" and i["cause_second_share"] >= 0.2 and \
    abs(i["time_ns"] - m["slow_start_realtime_ns"]) < 2.5e9  # live, short phases, a busy machine
if ok:
    s = i["breakdown"]["slow"]
    parts = sum(s[k] or 0 for k in ("cpu_ns", "blocked_ns", "downstream_ns", "network_ns", "unaccounted_ns"))
    ok = abs(parts - s["duration_ns"]) <= 4
print("LIVE_OK" if ok else "LIVE_BAD", i and (i["cause"], i["cause_share"], i.get("cause_second"),
      i.get("cause_second_share")), i and (i["time_ns"] - m["slow_start_realtime_ns"]) / 1e9)
PY
sed 's/^/# /' "$tmp/why"
check_eval "report: /api/search's slow phase is downstream (to /api/backend) and CPU, both named, near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
sed -n '1s/^/# /p' "$tmp/rep.err" | cut -c1-400
check_eval "the verdict names both in words" \
    "grep -q 'downstream call to /api/backend' '$tmp/rep.err' && grep -q ', and [0-9]* % ' '$tmp/rep.err'"
tap_plan

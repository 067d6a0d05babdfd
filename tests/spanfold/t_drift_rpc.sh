#!/usr/bin/env bash
# The drift explanation on MCP calls (issue #35, item 1: the sampling parameters as
# attributes the drift explanation can use).  rpc_drift.py writes 600
# sampling/createMessage calls, half hinting model "legacy", whose trace sampling
# (traceparent in params._meta) stops for the "legacy" calls half way; the report must
# find the drop on the method's endpoint and name model_hint = legacy as its cause.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v python3 >/dev/null || tap_skip_all "python3 is needed (scripts/deps.sh check)"
tap_tmpdir t_drift_rpc
python3 "$top/tests/spanfold/rpc_drift.py" "$tmp/d.pcap"
"$bin/pcap2spans" --quiet --db "$tmp/d.db" "$tmp/d.pcap"
check_rc $? "600 MCP calls into a database"
"$bin/spanfold" report --db "$tmp/d.db" --out "$tmp/r" >"$tmp/out" 2>&1
check_rc $? "spanfold report runs"
f() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$tmp/r/findings.json" "$1"; }
check "a drift on sampling/createMessage, 1 -> 0.5" \
    [ "$(f '[(x["endpoint"], x["from_rate"], x["to_rate"]) for x in d["drift"]]')" = "[('sampling/createMessage', 1, 0.5)]" ]
check "explained by model_hint = legacy, all of it" \
    [ "$(f '[(e["attribute"], e["value"], e["explained"]) for e in d["drift"][0]["explained_by"]][:1]')" = "[('model_hint', 'legacy', 1)]" ]
check "the verdict says so in words" grep -q "model_hint = legacy" "$tmp/out"
if command -v sqlite3 >/dev/null; then
    check "the database holds each call's hint and temperature" \
        [ "$(sqlite3 "$tmp/d.db" "SELECT count(*) FROM spans WHERE model_hint = 'legacy' AND temperature = 0.5")" = 300 ]
else
    skip "the database holds each call's hint and temperature" "the sqlite3 shell is not installed"
fi
tap_plan

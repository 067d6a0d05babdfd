#!/usr/bin/env bash
# The report on MCP traffic (issue #35, item 3): recorded with the reference SDK over the
# SSE transport (tests/pcap2spans/data/mcp/sse.pcap, see its README), where every call's
# response rides one long GET /sse stream and every POST is a 202.  The report's
# endpoints must be the JSON-RPC methods with their tools, never the HTTP exchanges that
# carried them; a JSON-RPC error and a tool's isError count as errors; the 2 s tool call
# is 2 s long.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v python3 >/dev/null || tap_skip_all "python3 is needed (scripts/deps.sh check)"
tap_tmpdir t_report_mcp
"$bin/pcap2spans" --quiet --db "$tmp/m.db" "$top/tests/pcap2spans/data/mcp/sse.pcap"
check_rc $? "the SSE-transport session into a database"
"$bin/spanfold" report --db "$tmp/m.db" --out "$tmp/r" >"$tmp/out" 2>&1
check_rc $? "spanfold report runs on it"
f() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); e = {x["endpoint"]: x for x in d["endpoints"]}
print(eval(sys.argv[2]))' "$tmp/r/findings.json" "$1"; }
check "its endpoints are the JSON-RPC methods with their tools" \
    [ "$(f '"tools/call trigger-long-running-operation" in e and "sampling/createMessage" in e and "prompts/get simple-prompt" in e')" = True ]
check "and never the carriers (/sse, /message)" \
    [ "$(f 'sorted(k for k in e if k.startswith("/"))')" = "[]" ]
check "the spans counted are the calls and notifications (16 + 7), not the 17 HTTP exchanges" \
    [ "$(f 'sum(x["spans"] for x in e.values())')" = 23 ]
check "a JSON-RPC error and a tool's isError are errors" \
    [ "$(f '(e["no/such-method"]["error_rate"], e["tools/call no-such-tool"]["error_rate"], e["tools/call echo"]["error_rate"])')" = "(1, 1, 0)" ]
check "the 2 s tool call is 2 s, though its POST took a few ms" \
    [ "$(f '1900 < e["tools/call trigger-long-running-operation"]["p50_ms"] < 2200')" = True ]
check "report.html names the tool" grep -q "tools/call trigger-long-running-operation" "$tmp/r/report.html"
tap_plan

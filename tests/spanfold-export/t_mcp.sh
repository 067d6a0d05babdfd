#!/usr/bin/env bash
# JSON-RPC calls in the exports (issue #35, item 2): the MCP session the reference SDK
# recorded (tests/pcap2spans/data/mcp/http.pcap, see its README) exported as OTLP and
# Zipkin carries OpenTelemetry's MCP and GenAI names: the span named "METHOD TARGET",
# rpc.system jsonrpc, mcp.method.name, jsonrpc.request.id, mcp.session.id,
# gen_ai.tool.name, the JSON-RPC error and a tool's isError as errors, the server's
# sampling request a CLIENT span with its gen_ai.request.* parameters.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
for c in python3 sqlite3; do
    command -v $c >/dev/null || tap_skip_all "$c is needed (scripts/deps.sh check)"
done
tap_tmpdir t_export_mcp
"$bin/pcap2spans" --quiet --db "$tmp/m.db" "$top/tests/pcap2spans/data/mcp/http.pcap"
check_rc $? "the MCP session into a database"
"$bin/spanfold-export" --db "$tmp/m.db" --format otlp --all -o "$tmp/o.jsonl" 2>/dev/null
check_rc $? "OTLP export with --all"
"$bin/spanfold-export" --db "$tmp/m.db" --format zipkin --all -o "$tmp/z.json" 2>/dev/null
check_rc $? "Zipkin export with --all"
all=$(sqlite3 "$tmp/m.db" "SELECT count(*) FROM spans")
for f in otlp:o.jsonl zipkin:z.json; do
    check "${f%%:*} passes its consumer's rules with all $all spans (validate.py)" \
        sh -c 'python3 "$1" "$2" "$3" "$4" --start 1 >/dev/null' - \
        "$top/tests/spanfold-export/validate.py" "${f%%:*}" "$tmp/${f#*:}" "$all"
done
otlp() { python3 - "$tmp/o.jsonl" "$1" <<'PY'
import json, sys
spans = []
for line in open(sys.argv[1]):
    for rs in json.loads(line)["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                s["a"] = {a["key"]: list(a["value"].values())[0] for a in s["attributes"]}
                spans.append(s)
print(eval(sys.argv[2]))
PY
}
check "every call is a span named by its method and tool (16 calls, 5 notifications)" \
    [ "$(otlp 'sum(1 for s in spans if s["a"].get("rpc.system") == "jsonrpc")')" = 21 ]
check "tools/call echo: mcp.method.name, gen_ai.tool.name, jsonrpc.request.id, mcp.session.id" \
    [ "$(otlp '[(s["a"]["mcp.method.name"], s["a"]["gen_ai.tool.name"], s["a"]["jsonrpc.request.id"], len(s["a"]["mcp.session.id"])) for s in spans if s["name"] == "tools/call echo"][0]')" = "('tools/call', 'echo', '2', 36)" ]
check "its _meta traceparent is its trace" \
    [ "$(otlp '[s["traceId"] for s in spans if s["name"] == "tools/call echo"][0]')" = 4bf92f3577b34da6a3ce929d0e0e4736 ]
check "a JSON-RPC error is an error span with its code and message" \
    [ "$(otlp '[(s["status"], s["a"]["rpc.jsonrpc.error_code"]) for s in spans if s["name"] == "no/such-method"]')" = "[({'code': 2, 'message': 'Method not found'}, '-32601')]" ]
check "a tool result with isError is an error span, error.type tool_error" \
    [ "$(otlp '[(s["status"]["code"], s["a"]["error.type"]) for s in spans if s["name"] == "tools/call no-such-tool"]')" = "[(2, 'tool_error')]" ]
check "the server's sampling request: a CLIENT span with its gen_ai.request parameters" \
    [ "$(otlp '[(s["kind"], s["a"]["gen_ai.request.temperature"], s["a"]["gen_ai.request.max_tokens"]) for s in spans if s["name"] == "sampling/createMessage"]')" = "[(3, 0.7, '32')]" ]
check "JSON-RPC spans carry no http.* attributes (their HTTP parent does)" \
    [ "$(otlp 'sum(1 for s in spans if s["a"].get("rpc.system") == "jsonrpc" and any(k.startswith("http.") for k in s["a"]))')" = 0 ]
# a call whose HTTP request carried the trace context (rpc_cases.py, exchange 14)
python3 "$top/tests/pcap2spans/rpc_cases.py" "$tmp/cases.pcap"
"$bin/pcap2spans" --quiet --db "$tmp/c.db" "$tmp/cases.pcap"
"$bin/spanfold-export" --db "$tmp/c.db" --format otlp -o "$tmp/c.jsonl" 2>/dev/null
check "a call in a traced HTTP exchange: exported without --all, the exchange's child" \
    [ "$(python3 - "$tmp/c.jsonl" <<'PY'
import json, sys
spans = [s for l in open(sys.argv[1]) for rs in json.loads(l)["resourceSpans"]
         for ss in rs["scopeSpans"] for s in ss["spans"]]
call = [s for s in spans if s["name"] == "tools/call traced"]
http = [s for s in spans if s["spanId"] == "2222222222222222"]
print(len(call) == 1 and len(http) == 1 and call[0]["traceId"] == "1" * 32 and
      call[0].get("parentSpanId") == "2222222222222222" and call[0]["spanId"] != "2222222222222222")
PY
)" = True ]
check "Zipkin: the tags and the error" \
    python3 -c 'import json,sys
z = json.load(open(sys.argv[1]))
e = [s for s in z if s["name"] == "no/such-method"][0]["tags"]
sys.exit(0 if e["mcp.method.name"] == "no/such-method" and e["rpc.jsonrpc.error_code"] == "-32601" and e["error"] == "Method not found" and "http.method" not in e else 1)' "$tmp/z.json"
tap_plan

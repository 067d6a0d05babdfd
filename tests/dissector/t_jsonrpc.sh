#!/usr/bin/env bash
# The plugin's JSON-RPC fields (issue #35, item 2) in tshark 4.0, on the MCP session the
# reference SDK recorded (tests/pcap2spans/data/mcp/http.pcap, see its README): the
# messages of every HTTP/1.1 body, named as pcap2spans names them, filterable as
# spanfold.jsonrpc.*; requests and notifications per (method, direction) equal
# pcap2spans' JSON-RPC spans; a response names its request's method and frame.
# tshark ignores personal plugin folders as root, so it runs as `nobody`.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
so=${SF_BUILD:-$top/build}/dissector/spanfold.so
tap_name="dissector JSON-RPC with tshark"
command -v tshark >/dev/null || tap_skip_all "tshark not installed"
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
[ -f "$so" ] || tap_skip_all "plugin not built (needs libwireshark-dev 4.0)"
ldd "$so" 2>/dev/null | grep -q 'libasan' &&
    tap_skip_all "plugin built with AddressSanitizer (SAN=1): an uninstrumented tshark cannot load it"
tap_tmpdir t_dissector_jsonrpc
mkdir -p "$tmp/plugins/4.0/epan" "$tmp/home"
cp "$so" "$tmp/plugins/4.0/epan/"
cp "$top/tests/pcap2spans/data/mcp/http.pcap" "$tmp/"
chmod -R a+rwX "$tmp"
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
ts() { (cd "$tmp" && "${as_user[@]}" env HOME="$tmp/home" WIRESHARK_PLUGIN_DIR="$tmp/plugins" tshark "$@"); }

ts -G fields 2>/dev/null | grep -q $'\tspanfold.jsonrpc.method\t'
check_rc $? "spanfold.jsonrpc.method is a registered field"
ts -r http.pcap -Y spanfold -T fields -E occurrence=a -E separator='|' -e frame.number \
    -e spanfold.jsonrpc.kind -e spanfold.jsonrpc.method -e spanfold.jsonrpc.id \
    -e spanfold.jsonrpc.name -e spanfold.jsonrpc.direction -e spanfold.jsonrpc.error_code \
    -e spanfold.jsonrpc.tool_error -e spanfold.jsonrpc.request_in >"$tmp/ts.txt" 2>"$tmp/ts.err"
check_rc $? "tshark reads the session with the plugin"
"$bin/pcap2spans" --quiet "$tmp/http.pcap" >"$tmp/p2s.ndjson"
py() { python3 - "$tmp/ts.txt" "$tmp/p2s.ndjson" "$1" <<'PY'
import json, sys
from collections import Counter
msgs = []  # (frame, kind, method, id, name, direction, error_code, tool_error, request_in)
for line in open(sys.argv[1]):
    cols = [c.split(",") for c in line.rstrip("\n").split("|")]
    for k in range(len(cols[1])):
        msgs.append(tuple([cols[0][0]] + [c[k] if k < len(c) else "" for c in cols[1:]]))
spans = [json.loads(l) for l in open(sys.argv[2])]
rpc = [s for s in spans if s["proto"] == "jsonrpc"]
print(eval(sys.argv[3]))
PY
}
check "requests: tshark's per method and direction equal pcap2spans' calls" \
    [ "$(py 'Counter((m[2], m[5]) for m in msgs if m[1] == "request") == Counter((s["method"], s["rpc_direction"]) for s in rpc if s["rpc_id"]) and len(rpc) > 0')" = True ]
check "notifications: the same" \
    [ "$(py 'Counter((m[2], m[5]) for m in msgs if m[1] == "notification") == Counter((s["method"], s["rpc_direction"]) for s in rpc if not s["rpc_id"])')" = True ]
check "the tool names agree" \
    [ "$(py 'sorted(m[4] for m in msgs if m[1] == "request" and m[4]) == sorted(s["rpc_name"] for s in rpc if s["rpc_name"])')" = True ]
check "a response names its request's method and frame (tools/call no-such-tool: tool error)" \
    [ "$(py '[(m[2], m[7], int(m[8]) > 0) for m in msgs if m[1] == "response" and m[3] == "6"]')" = "[('tools/call', '1', True)]" ]
check "the JSON-RPC error -32601 on the response to no/such-method" \
    [ "$(py '[(m[2], m[6]) for m in msgs if m[1] == "response" and m[6]]')" = "[('no/such-method', '-32601')]" ]
n_samp=$(ts -r http.pcap -Y 'spanfold.jsonrpc.method == "sampling/createMessage"' 2>/dev/null | wc -l)
check "the filter spanfold.jsonrpc.method == \"sampling/createMessage\" finds its frame ($n_samp)" [ "$n_samp" -ge 1 ]
n_exp=$(ts -r http.pcap -q -z expert,note 2>/dev/null | grep -c "JSON-RPC error\|isError")
check "expert info: the JSON-RPC error and the tool error ($n_exp)" [ "$n_exp" -ge 2 ]
tap_plan

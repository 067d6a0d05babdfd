#!/usr/bin/env bash
# JSON-RPC 2.0 and MCP calls as spans (issue #35, pcap2spans/rpc.h).
#
# data/mcp/{http,sse}.pcap were recorded here by tests/mcp/record.sh: the reference MCP
# SDK's client driving its server-everything example (both from the npm registry,
# tests/mcp/package-lock.json) on 127.0.0.1, over Streamable HTTP and over the older SSE
# transport, and over WebSocket (the SDK's client transport, tests/mcp/ws-server.mjs in
# front of the same server's logic, permessage-deflate on); data/mcp/*.log is the client's own log of every JSON-RPC message it sent
# and received.  data/mcp/h2c.* and tls-*.* (tests/mcp/record-h2.sh) are HTTP/2 in
# cleartext, and HTTP/2 and HTTP/1.1 in TLS 1.3 with curl's key log: curl through
# nghttpx to the same server, the log made from what curl sent and got.  The spans must match that log one for one (check_mcp.py).  With root,
# node, npm and tcpdump the test records both sessions afresh and checks them too.
# rpc_cases.py adds hostile bodies on one connection, each with what it must give.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
here=$top/tests/pcap2spans
tap_tmpdir t_mcp
command -v python3 >/dev/null || tap_skip_all "python3 is needed (scripts/deps.sh check)"

# check_mcp.py's verdict lines as TAP tests
against_log() { # NAME LOG PCAP [KEYLOG]
    local name=$1 log=$2 cap=$3 line kl=()
    [ $# -gt 3 ] && kl=(--keylog "$4")
    if ! "$bin/pcap2spans" --quiet "${kl[@]}" "$cap" >"$tmp/$name.ndjson"; then
        notok "$name: pcap2spans read the capture"
        return
    fi
    while IFS= read -r line; do
        case $line in
        "ok: "*) ok "$name: ${line#ok: }" ;;
        "FAIL: "*) notok "$name: ${line#FAIL: }" ;;
        *) echo "$line" ;;
        esac
    done < <(python3 "$here/check_mcp.py" "$log" "$tmp/$name.ndjson")
}

for t in http sse ws h2c; do
    against_log "$t" "$here/data/mcp/$t.log" "$here/data/mcp/$t.pcap"
done
for t in tls-h2 tls-http11; do
    against_log "$t" "$here/data/mcp/$t.log" "$here/data/mcp/$t.pcap" "$here/data/mcp/$t.keylog"
done

# what the recorded sessions show beyond the log
jqn() { python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
print(eval(sys.argv[2], {"rows": rows}))' "$@"; }
check "http: the echo call carries its _meta traceparent as its trace id" \
    [ "$(jqn "$tmp/http.ndjson" '[r["trace_id"] for r in rows if r["endpoint"] == "tools/call echo"][0]')" = 4bf92f3577b34da6a3ce929d0e0e4736 ]
check "http: sampling/createMessage goes server to client with temperature 0.7 and maxTokens 32" \
    [ "$(jqn "$tmp/http.ndjson" '[(r["rpc_direction"], r["temperature"], r["max_tokens"]) for r in rows if r["method"] == "sampling/createMessage"]')" = "[('s2c', 0.7, 32)]" ]
check "http: the HTTP spans count the messages they carried (two a call, one a notification)" \
    [ "$(jqn "$tmp/http.ndjson" 'sum(r["rpc_messages"] or 0 for r in rows if r["proto"] == "http/1.1") == sum(2 if r["rpc_id"] else 1 for r in rows if r["proto"] == "jsonrpc")')" = True ]
check "sse: the 2 s tool call is a 2 s span, its POST a 202 of a few ms" \
    [ "$(jqn "$tmp/sse.ndjson" '[r["duration_ns"] > 1.9e9 for r in rows if r["endpoint"] == "tools/call trigger-long-running-operation"] == [True] and max(r["duration_ns"] for r in rows if r["status"] == 202) < 1e8')" = True ]
check "sse: every call has the session its endpoint event named" \
    [ "$(jqn "$tmp/sse.ndjson" 'len(set(r["rpc_session"] for r in rows if r["proto"] == "jsonrpc")) == 1 and None not in set(r["rpc_session"] for r in rows if r["proto"] == "jsonrpc")')" = True ]

# the database has what NDJSON has; -j 2 writes what -j 1 writes
"$bin/pcap2spans" --quiet --db "$tmp/m.db" "$here/data/mcp/http.pcap" "$here/data/mcp/sse.pcap"
check_rc $? "both sessions into a database"
if command -v sqlite3 >/dev/null; then
    nd=$(cat "$tmp/http.ndjson" "$tmp/sse.ndjson" | grep -c '"proto":"jsonrpc"')
    check "the database holds the same $nd JSON-RPC spans" \
        [ "$(sqlite3 "$tmp/m.db" "SELECT count(*) FROM spans WHERE proto = 'jsonrpc'")" = "$nd" ]
    check "with their sampling parameters" \
        [ "$(sqlite3 "$tmp/m.db" "SELECT group_concat(temperature || '/' || max_tokens) FROM spans WHERE method = 'sampling/createMessage'")" = "0.7/32,0.7/32" ]
else
    skip "the database holds the same JSON-RPC spans" "the sqlite3 shell is not installed"
    skip "with their sampling parameters" "the sqlite3 shell is not installed"
fi
"$bin/pcap2spans" --quiet -j 2 "$here/data/mcp/http.pcap" "$here/data/mcp/sse.pcap" >"$tmp/j2"
"$bin/pcap2spans" --quiet "$here/data/mcp/http.pcap" "$here/data/mcp/sse.pcap" >"$tmp/j1"
check "-j 2 writes the JSON-RPC spans -j 1 writes" cmp -s "$tmp/j1" "$tmp/j2"

# hostile bodies, each beside good ones (rpc_cases.py numbers them)
python3 "$here/rpc_cases.py" "$tmp/cases.pcap"
"$bin/pcap2spans" "$tmp/cases.pcap" >"$tmp/cases.ndjson" 2>"$tmp/cases.err"
check_rc $? "hostile bodies: exit 0 (flagged, not errors)"
c() { jqn "$tmp/cases.ndjson" "$1"; }
check "1: a chunked request answered: ping" [ "$(c '[(r["method"], r["partial"]) for r in rows if r["stream_id"] == 1 and r["proto"] == "jsonrpc"]')" = "[('ping', 0)]" ]
check "2: truncated JSON: one flagged span with the byte" \
    [ "$(c '[r["partial_reason"] for r in rows if r["stream_id"] == 2 and r["proto"] == "jsonrpc"]')" = "['malformed JSON-RPC: expected a member name at byte 56 of the body']" ]
check "3: a response to an unknown id: request not seen" \
    [ "$(c '[r["partial_reason"] for r in rows if r["rpc_id"] == "99"]')" = "['request not seen']" ]
check "4: nesting 1,000 deep: flagged" \
    [ "$(c 'sum(1 for r in rows if (r["partial_reason"] or "").startswith("malformed JSON-RPC: nested deeper than 64"))')" = 1 ]
check "5: a batch answered out of order over SSE: error, isError and result each on its call" \
    [ "$(c 'sorted((r["method"], r["rpc_error_code"], r["rpc_tool_error"]) for r in rows if r["stream_id"] == 5 and r["proto"] == "jsonrpc")')" = "[('m10', -32000, 0), ('m11', None, 1), ('m12', None, 0)]" ]
check "6: ids \"s\", 5 and \"5\" are three calls, each answered by its own" \
    [ "$(c 'sorted((r["rpc_id"], r["method"], r["partial"]) for r in rows if r["stream_id"] == 6 and r["proto"] == "jsonrpc")')" = "[('\"5\"', 'c', 0), ('\"s\"', 'a', 0), ('5', 'b', 0)]" ]
check "7: a duplicate member and invalid UTF-8: two flagged spans" \
    [ "$(c 'sum(1 for r in rows if r["stream_id"] == 7 and r["proto"] == "jsonrpc" and r["partial"])')" = 2 ]
check "8: JSON that is not JSON-RPC: no span, no flag" \
    [ "$(c 'sum(1 for r in rows if r["stream_id"] == 8 and r["proto"] == "jsonrpc")')" = 0 ]
check "9: sampling parameters and the _meta trace id on the call, its notification beside" \
    [ "$(c '[(r["temperature"], r["max_tokens"], r["stop_sequences"], r["model_hint"], r["trace_id"], r["rpc_session"]) for r in rows if r["method"] == "sampling/createMessage"]')" = "[(0.25, 64, 1, 'claude', '0af7651916cd43dd8448eb211c80319c', 'sess-1')]" ]
check "10: a request never answered: no response, named by its tool" \
    [ "$(c '[(r["endpoint"], r["partial_reason"]) for r in rows if r["stream_id"] == 10 and r["proto"] == "jsonrpc"]')" = "[('tools/call slow', 'no response')]" ]
check "the summary counts the four malformed bodies" grep -q "jsonrpc_malformed 4" "$tmp/cases.err"
check "11: a deflate request and a gzip response: one call, answered" \
    [ "$(c '[(r["endpoint"], r["partial"], r["status"]) for r in rows if r["stream_id"] == 11 and r["proto"] == "jsonrpc"]')" = "[('tools/call zipped', 0, 200)]" ]
check "12: a gzip bomb stops at --max-rpc-bytes: an over-limit event" \
    grep -q "jsonrpc_over_limit 1" "$tmp/cases.err"
check "13: a coding not known: an event says so" grep -q "jsonrpc_encoded_body 1" "$tmp/cases.err"
check "12, 13: their requests are spans without a response" \
    [ "$(c 'sorted((r["method"], r["partial_reason"]) for r in rows if r["stream_id"] in (12, 13) and r["proto"] == "jsonrpc")')" = "[('bomb', 'no response'), ('lzw', 'no response')]" ]

# WebSocket (ws_cases.py numbers the parts)
python3 "$here/ws_cases.py" "$tmp/ws.pcap"
"$bin/pcap2spans" "$tmp/ws.pcap" >"$tmp/ws.ndjson" 2>"$tmp/ws.err"
w() { jqn "$tmp/ws.ndjson" "$1"; }
check "ws 1: a request in masked fragments around a ping, a deflated response: one call" \
    [ "$(w '[(r["endpoint"], r["partial"]) for r in rows if r["rpc_id"] == "1"]')" = "[('tools/call fragmented', 0)]" ]
check "ws 2: a response deflated with the window kept from the first (context takeover)" \
    [ "$(w '[(r["endpoint"], r["partial"], r["resp_bytes"]) for r in rows if r["rpc_id"] == "2"]')" = "[('tools/call takeover', 0, 382)]" ]
check "ws 3: after a control frame over 125 bytes the server's side is unread, said once" \
    sh -c 'grep -q "websocket_unread 1" "$1"' - "$tmp/ws.err"
check "ws 3: so its request has no response" \
    [ "$(w '[r["partial_reason"] for r in rows if r["rpc_id"] == "3"]')" = "['no response']" ]

# live: record the transports afresh with the real peers
why=""
[ "$(id -u)" = 0 ] || why="not root (tcpdump on lo)"
for cmd in node npm tcpdump; do
    [ -n "$why" ] || command -v $cmd >/dev/null || why="$cmd not installed (scripts/deps.sh heavy)"
done
if [ -z "$why" ] && [ ! -d "$top/tests/mcp/node_modules/@modelcontextprotocol/server-everything" ]; then
    (cd "$top/tests/mcp" && npm ci --no-audit --no-fund) >"$tmp/npm.log" 2>&1 ||
        why="npm ci in tests/mcp failed: $(tail -1 "$tmp/npm.log")"
fi
if [ -n "$why" ]; then
    for t in http sse ws h2c tls-h2; do skip "live $t session: spans match the client's log" "$why"; done
else
    # two free loopback ports in a row (record-h2.sh uses PORT and PORT+1), asked of the
    # kernel: a fixed number would meet another run's servers
    free_ports() {
        python3 -c 'import socket
for _ in range(200):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError:
        pass
    finally:
        a.close(); b.close()'
    }
    for t in http sse ws; do
        port=$(free_ports)
        if "$top/tests/mcp/record.sh" "$t" "$port" "$tmp/live-$t" >"$tmp/rec-$t.log" 2>&1; then
            against_log "live $t" "$tmp/live-$t.log" "$tmp/live-$t.pcap"
        else
            notok "live $t session recorded ($(tail -1 "$tmp/rec-$t.log"))"
        fi
    done
    for t in h2c tls-h2; do
        port=$(free_ports)
        opt=()
        [ $t = tls-h2 ] && opt=(--tls h2)
        if ! command -v curl >/dev/null || ! command -v nghttpx >/dev/null; then
            skip "live $t session: spans match the client's log" "curl or nghttpx not installed (scripts/deps.sh heavy)"
        elif "$top/tests/mcp/record-h2.sh" "${opt[@]}" "$port" "$tmp/live-$t" >"$tmp/rec-$t.log" 2>&1; then
            if [ $t = tls-h2 ]; then
                against_log "live $t" "$tmp/live-$t.log" "$tmp/live-$t.pcap" "$tmp/live-$t.keylog"
            else
                against_log "live $t" "$tmp/live-$t.log" "$tmp/live-$t.pcap"
            fi
        else
            notok "live $t session recorded ($(tail -1 "$tmp/rec-$t.log"))"
        fi
    done
fi
tap_plan

#!/usr/bin/env bash
# Record one MCP session between the reference SDK's client (client.mjs) and its
# server-everything example, both from the npm registry (package-lock.json), on
# 127.0.0.1, with tcpdump on lo.
#
#   tests/mcp/record.sh http|sse|ws PORT OUT   (root, node, tcpdump; npm ci done here)
#
# Writes OUT.pcap (the capture) and OUT.log (the client's log of every JSON-RPC
# message it sent and received, client.mjs).  http is the Streamable HTTP transport
# (POST /mcp, responses as JSON or an event stream), sse the older SSE transport
# (GET /sse plus POST /message?sessionId=...), ws the SDK's WebSocket client transport
# to the same server's MCP logic behind ws-server.mjs (permessage-deflate on).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: record.sh http|sse PORT OUT" >&2; exit 2; }
kind=$1 port=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
srv=$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js
[ -f "$srv" ] || { echo "record.sh: run npm ci in $here first" >&2; exit 2; }
node_opts=()
case $kind in
http) run=("$srv" streamableHttp) url=http://127.0.0.1:$port/mcp ;;
sse) run=("$srv" sse) url=http://127.0.0.1:$port/sse ;;
ws) run=("$here/ws-server.mjs") url=ws://127.0.0.1:$port/
    # Node 20 has the WebSocket client behind a flag, later ones by default
    node --experimental-websocket -e '' 2>/dev/null && node_opts=(--experimental-websocket) ;;
*) echo "record.sh: http, sse or ws, not '$kind'" >&2; exit 2 ;;
esac
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
PORT=$port node "${run[@]}" >"$out.server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
tcpdump -i lo -U --immediate-mode -s 0 -w "$out.pcap" "tcp port $port" 2>"$out.tcpdump.log" &
tcpd=$!
pids+=($tcpd)
for _ in $(seq 50); do grep -q "listening on" "$out.tcpdump.log" && break; sleep 0.1; done
sleep 0.3
timeout 60 node "${node_opts[@]}" "$here/client.mjs" "$kind" "$url" "$out.log"
sleep 1
kill -INT "$tcpd"
wait "$tcpd" 2>/dev/null || true

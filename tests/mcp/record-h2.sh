#!/usr/bin/env bash
# Record an MCP session between curl and the server-everything example behind nghttpx
# (nghttp2's proxy: HTTP/2 or HTTP/1.1 to the client, HTTP/1.1 to the server), on
# 127.0.0.1, with tcpdump on the client's hop.
#
#   tests/mcp/record-h2.sh [--tls h2|http/1.1] PORT OUT
#                                     (root, node, curl, nghttpx, tcpdump; npm ci here)
#
# Without --tls: HTTP/2 in cleartext (h2c, prior knowledge).  With it: TLS (a
# self-signed certificate made here, openssl) with that protocol chosen by ALPN, and
# curl's TLS secrets in OUT.keylog (SSLKEYLOGFILE).  Writes OUT.pcap and OUT.log: every
# JSON-RPC message curl sent and received, in client.mjs's format (the responses as the
# server wrote them, events split here).  Uses ports PORT (the server) and PORT+1.
set -euo pipefail
tls=""
if [ "${1:-}" = --tls ]; then tls=$2; shift 2; fi
[ $# -eq 2 ] || { echo "usage: record-h2.sh [--tls h2|http/1.1] PORT OUT" >&2; exit 2; }
port=$1 out=$2 front=$(($1 + 1))
here=$(cd "$(dirname "$0")" && pwd)
srv=$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js
[ -f "$srv" ] || { echo "record-h2.sh: run npm ci in $here first" >&2; exit 2; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
PORT=$port node "$srv" streamableHttp >"$out.server.log" 2>&1 &
pids+=($!)
if [ -n "$tls" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj /CN=mcp.test -keyout "$out.key" -out "$out.crt" 2>/dev/null
    nghttpx -f"127.0.0.1,$front" -b"127.0.0.1,$port" --workers=1 --no-ocsp --log-level=WARN \
        "$out.key" "$out.crt" >"$out.nghttpx.log" 2>&1 &
    scheme=https proto_opt=$([ "$tls" = h2 ] && echo --http2 || echo --http1.1)
    export SSLKEYLOGFILE=$out.keylog
    : >"$out.keylog"
else
    nghttpx -f"127.0.0.1,$front;no-tls" -b"127.0.0.1,$port" --workers=1 --no-ocsp \
        --log-level=WARN >"$out.nghttpx.log" 2>&1 &
    scheme=http proto_opt=--http2-prior-knowledge
fi
pids+=($!)
for p in $port $front; do
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.1; done
done
tcpdump -i lo -U --immediate-mode -s 0 -w "$out.pcap" "tcp port $front" 2>"$out.tcpdump.log" &
tcpd=$!
pids+=($tcpd)
for _ in $(seq 50); do grep -q "listening on" "$out.tcpdump.log" && break; sleep 0.1; done
sleep 0.3
: >"$out.bodies"
call() { # BODY: POST it, keep what was sent and what came back
    local sid=()
    [ -s "$out.sid" ] && sid=(-H "Mcp-Session-Id: $(cat "$out.sid")" -H "Mcp-Protocol-Version: 2025-11-25")
    curl -sS -k "$proto_opt" -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' "${sid[@]}" -D "$out.hdr" \
        -d "$1" "$scheme://127.0.0.1:$front/mcp" >"$out.resp"
    [ -s "$out.sid" ] || tr -d '\r' <"$out.hdr" | sed -n 's/^mcp-session-id: //Ip' >"$out.sid"
    python3 -c 'import json,sys; print(json.dumps({"sent": sys.argv[1], "got": open(sys.argv[2]).read(), "ctype": [l.split(":",1)[1].strip() for l in open(sys.argv[3]) if l.lower().startswith("content-type:")]}))' \
        "$1" "$out.resp" "$out.hdr" >>"$out.bodies"
}
rm -f "$out.sid"
call '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
call '{"jsonrpc":"2.0","method":"notifications/initialized"}'
call '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}'
call '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}'
call '{"jsonrpc":"2.0","id":"four","method":"ping"}'
call '{"jsonrpc":"2.0","id":5,"method":"no/such-method"}'
sleep 1
kill -INT "$tcpd"
wait "$tcpd" 2>/dev/null || true
python3 - "$out.bodies" >"$out.log" <<'PY'
import json, sys
sent = {}
def row(d, m):
    if "method" in m:
        k = "request" if "id" in m else "notification"
        if k == "request":
            sent[json.dumps(m["id"])] = m["method"]
        return {"dir": d, "kind": k, "method": m["method"], "id": m.get("id"), "error": None}
    return {"dir": d, "kind": "response", "method": sent.get(json.dumps(m.get("id"))),
            "id": m.get("id"), "error": (m.get("error") or {}).get("code"),
            "isError": (m.get("result") or {}).get("isError") is True}
for line in open(sys.argv[1]):
    b = json.loads(line)
    print(json.dumps(row("c2s", json.loads(b["sent"]))))
    got = b["got"]
    if any("event-stream" in c for c in b["ctype"]):
        for ev in got.replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(l[5:].lstrip(" ") if l.startswith("data:") else "" for l in ev.split("\n") if l.startswith("data:"))
            if data.strip():
                print(json.dumps(row("s2c", json.loads(data))))
    elif got.strip():
        print(json.dumps(row("s2c", json.loads(got))))
PY

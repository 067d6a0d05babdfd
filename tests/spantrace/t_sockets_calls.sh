#!/usr/bin/env bash
# Live: downstream calls of an uninstrumented service, from socket events.  A front
# service (python3's ThreadingHTTPServer) answers /rN by calling a backend (another
# ThreadingHTTPServer, 20 ms a request) for /bN through urllib, which sends no trace
# context; the clients send a traceparent to the front only.  tcpdump on both ports and
# spantrace --sockets on the front's process alone (--port of both: its own, and the
# backend's it calls).  After pcap2spans and tracefs2spans, every backend request (no
# context, no span id) has as parent the front request whose handler made it (known here
# by the paths), set by the tracefs source; none wrong.  Needs root, BPF, tcpdump,
# python3, curl, sqlite3; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spantrace --sockets: downstream calls of an uninstrumented service"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (BPF, tcpdump)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built"
for t in tcpdump python3 curl sqlite3; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
tap_tmpdir t_sockets_calls
pids=()
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
front=$(free_port)
back=$(free_port)
cat >"$tmp/server.py" <<'PY'
import http.server, sys, time, urllib.request
port, back = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if back == "-":                       # the backend
            time.sleep(0.02)
            body = b"b" * 500
        else:                                 # the front: one call per request, no context
            n = self.path.lstrip("/r")
            body = urllib.request.urlopen("http://127.0.0.1:%s/b%s" % (back, n)).read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    request_queue_size = 64
S(("127.0.0.1", port), H).serve_forever()
PY
python3 "$tmp/server.py" "$back" - &
pids+=($!)
python3 "$tmp/server.py" "$front" "$back" &
pids+=($!)
front_pid=$!
for port in "$back" "$front"; do
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/r0" && break; sleep 0.1; done
done
tcpdump -i lo -U -s 0 -w "$tmp/cap.pcap" "tcp port $front or tcp port $back" 2>"$tmp/tcpdump.err" &
pids+=($!)
tcpdump_pid=$!
"$bin/spantrace" --sockets -p "$front_pid" --port "$front" --port "$back" -o "$tmp/sockets.txt" 2>"$tmp/st.err" &
st_pid=$!
pids+=($st_pid)
for _ in $(seq 100); do grep -q tracing "$tmp/st.err" 2>/dev/null && grep -q listening "$tmp/tcpdump.err" && break; sleep 0.1; done
seq 1 24 | xargs -P 4 -I{} sh -c 'i=$(printf %016x {}); curl -s -o /dev/null \
    -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-$i-01" http://127.0.0.1:'"$front"'/r{}'
sleep 2 # tcpdump writes what it has received (on a loaded machine, later)
kill -INT "$st_pid"; wait "$st_pid" 2>/dev/null
kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null

db=$tmp/x.db
"$bin/pcap2spans" --quiet --db "$db" "$tmp/cap.pcap"
"$bin/tracefs2spans" --db "$db" "$tmp/sockets.txt" 2>"$tmp/t2s.err"
check_eval "tracefs2spans --db joins the socket events: exit 0" "[ $? = 0 ]"
grep 'socket events, ' "$tmp/t2s.err" | sed 's/^/#   /'
q() { sqlite3 "$db" "$1"; }
src=$(q "SELECT id FROM sources WHERE kind = 'tracefs'")
nb=$(q "SELECT count(*) FROM spans s JOIN connections c ON c.id = s.connection_id
        WHERE c.server_port = $back AND s.path GLOB '/b[0-9]*' AND s.path <> '/b0'")
nc=$(q "SELECT count(*) FROM spans s JOIN connections c ON c.id = s.connection_id
        WHERE c.server_port = $back AND s.span_id IS NULL AND s.req_seq_start IS NOT NULL")
check_eval "the capture holds the backend's requests ($nb of 24), with no context ($nc without a span id)" \
    "[ $nb -ge 20 ] && [ $nc -ge $nb ]"
# the truth by the paths: /bN was called by the handler of /rN
read -r right wrong none < <(q "SELECT sum(b.parent_span_id = f.span_id AND b.parent_source = $src),
        sum(b.parent_span_id IS NOT NULL AND b.parent_span_id <> f.span_id),
        sum(b.parent_span_id IS NULL)
    FROM spans b JOIN connections cb ON cb.id = b.connection_id AND cb.server_port = $back
    JOIN spans f ON f.path = '/r' || substr(b.path, 3)
    JOIN connections cf ON cf.id = f.connection_id AND cf.server_port = $front
    WHERE b.path GLOB '/b[0-9]*' AND b.path <> '/b0'" | tr '|' ' ')
check_eval "each backend request's parent is the front request that made it: $right right, $wrong wrong, $none without" \
    "[ '${right:-0}' -ge 20 ] && [ '${wrong:-1}' = 0 ] && [ '${right:-0}' -ge $((nb - 2)) ]"
check_eval "tracefs2spans says how many calls it saw and linked" \
    "grep -Eq '[0-9]+ calls made by traced threads, [0-9]+ given the span their thread served as parent' '$tmp/t2s.err'"
tap_plan

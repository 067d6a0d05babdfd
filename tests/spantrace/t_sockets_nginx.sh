#!/usr/bin/env bash
# Live: spantrace --sockets on an event loop and on threads.  nginx (one worker: an
# event loop) proxies to python3's ThreadingHTTPServer (a thread per connection) that
# takes 40 ms per request; 60 requests, 12 at a time, each with its own traceparent.
# After tcpdump + spantrace --sockets, pcap2spans and tracefs2spans:
#   - every span on both sides is placed on a thread of its server;
#   - nginx's worker serves requests at once: the time they overlap is marked shared,
#     with the candidates, and every two requests that the capture shows overlapping
#     by more than 5 ms appear together in shared time (never silently given to one);
#   - no thread time is given to two spans, or to a span and the shared time;
#   - the threaded backend answers each request on its own thread: no shared time.
# Needs root, BPF, nginx, tcpdump, python3, curl, sqlite3; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spantrace --sockets on nginx and a threaded server"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (BPF, tcpdump)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || tap_skip_all "nginx not installed"
for t in tcpdump python3 curl sqlite3; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
tap_tmpdir t_sockets_nginx
pids=()
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'stop_all; [ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
front=$(free_port)
back=$(free_port)
cat >"$tmp/backend.py" <<'PY'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(0.04)
        body = b"x" * 2000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$tmp/backend.py" "$back" &
pids+=($!)
backend_pid=$!
mkdir -p "$tmp/ng"
cat >"$tmp/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $tmp/nginx.pid;
error_log $tmp/ng/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $tmp/ng; proxy_temp_path $tmp/ng; fastcgi_temp_path $tmp/ng;
    uwsgi_temp_path $tmp/ng; scgi_temp_path $tmp/ng;
    server { listen 127.0.0.1:$front; location / { proxy_pass http://127.0.0.1:$back; } }
}
CONF
"$nginx" -c "$tmp/nginx.conf" -p "$tmp/ng" 2>"$tmp/nginx.err" || tap_skip_all "nginx did not start: $(head -c 200 "$tmp/nginx.err")"
tcpdump -i lo -U -s 0 -w "$tmp/cap.pcap" "tcp port $front or tcp port $back" 2>"$tmp/tcpdump.err" &
pids+=($!)
tcpdump_pid=$!
"$bin/spantrace" --sockets --port "$front" --port "$back" -o "$tmp/sockets.txt" 2>"$tmp/st.err" &
st_pid=$!
pids+=($st_pid)
for _ in $(seq 100); do grep -q tracing "$tmp/st.err" 2>/dev/null && grep -q listening "$tmp/tcpdump.err" && break; sleep 0.1; done
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$back/" && break; sleep 0.1; done
seq 1 60 | xargs -P 12 -I{} sh -c 'i=$(printf %016x {}); curl -s -o /dev/null \
    -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-$i-01" http://127.0.0.1:'"$front"'/r{}'
sleep 0.5
kill -INT "$st_pid"; wait "$st_pid" 2>/dev/null
kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null
worker=$(pgrep -P "$(cat "$tmp/nginx.pid")" | head -1)

db=$tmp/x.db
"$bin/pcap2spans" --quiet --db "$db" "$tmp/cap.pcap"
"$bin/tracefs2spans" --db "$db" "$tmp/sockets.txt" 2>"$tmp/t2s.err"
check_eval "tracefs2spans --db joins the socket events: exit 0" "[ $? = 0 ]"
grep 'socket events, ' "$tmp/t2s.err" | sed 's/^/#   /'
q() { sqlite3 "$db" "$1"; }
span_side() { # the spans of one server port
    echo "SELECT s.span_id FROM spans s JOIN connections c ON c.id = s.connection_id WHERE c.server_port = $1 AND s.span_id IS NOT NULL"
}
nf=$(q "SELECT count(*) FROM ($(span_side "$front"))")
nb=$(q "SELECT count(*) FROM ($(span_side "$back"))")
check_eval "the capture holds the 60 requests on both sides ($nf at nginx, $nb at the backend)" \
    "[ $nf = 60 ] && [ $nb = 60 ]"
placed=$(q "SELECT count(DISTINCT span_id) FROM span_events WHERE source = 'socket' AND pid = $worker
            AND span_id IN ($(span_side "$front"))")
check_eval "every nginx span is placed on nginx's worker (pid $worker): $placed" "[ $placed = 60 ]"
shared=$(q "SELECT count(*) FROM shared_intervals WHERE pid = $worker AND spans >= 2")
check_eval "nginx's overlapping requests give shared time ($shared pieces, each with 2+ candidates)" \
    "[ $shared -gt 0 ]"
# every two nginx requests whose windows in the capture (request end .. response end)
# overlap by more than 5 ms share time on the worker
miss=$(q "WITH f AS (SELECT s.span_id, s.req_end_ns a, s.resp_end_ns b FROM spans s JOIN connections c
          ON c.id = s.connection_id WHERE c.server_port = $front)
          SELECT count(*) FROM f x JOIN f y ON x.span_id < y.span_id
          WHERE min(x.b, y.b) - max(x.a, y.a) > 5000000 AND NOT EXISTS (SELECT 1 FROM shared_intervals h
          WHERE h.pid = $worker AND instr(h.span_ids, x.span_id) AND instr(h.span_ids, y.span_id))")
pairs=$(q "WITH f AS (SELECT s.span_id, s.req_end_ns a, s.resp_end_ns b FROM spans s JOIN connections c
          ON c.id = s.connection_id WHERE c.server_port = $front)
          SELECT count(*) FROM f x JOIN f y ON x.span_id < y.span_id WHERE min(x.b, y.b) - max(x.a, y.a) > 5000000")
check_eval "all $pairs pairs of requests that overlap in the capture share time ($miss missing)" \
    "[ $pairs -gt 0 ] && [ $miss = 0 ]"
double=$(q "SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id
            AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket' AND y.source = 'socket'")
double2=$(q "SELECT count(*) FROM span_intervals x JOIN shared_intervals y ON x.tid = y.tid
             AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket'")
check_eval "no thread time goes to two spans, or to a span and the shared time ($double, $double2)" \
    "[ $double = 0 ] && [ $double2 = 0 ]"
bplaced=$(q "SELECT count(DISTINCT span_id) FROM span_intervals WHERE source = 'socket' AND pid = $backend_pid")
bshared=$(q "SELECT count(*) FROM shared_intervals WHERE pid = $backend_pid")
bthreads=$(q "SELECT count(DISTINCT tid) FROM span_intervals WHERE source = 'socket' AND pid = $backend_pid")
check_eval "the threaded backend: $bplaced spans on $bthreads threads of its own, $bshared shared pieces" \
    "[ $bplaced = 60 ] && [ $bthreads -gt 1 ] && [ $bshared = 0 ]"
tap_plan

#!/usr/bin/env bash
# Live: spantrace --sockets on an event loop and on threads.  nginx (one worker: an
# event loop) proxies to python3's ThreadingHTTPServer (a thread per connection) that
# takes 40 ms per request; 60 requests, 12 at a time, each with its own traceparent.
# After tcpdump + spantrace --sockets, pcap2spans and tracefs2spans:
#   - every span on both sides is placed on a thread of its server;
#   - nginx's worker serves requests at once: the time they overlap is marked shared,
#     with the candidates, and every two requests the worker served at once (by more
#     than 1 ms) appear together in shared time (never silently given to one);
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
trap 'stop_all; [ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

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
class S(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops SYNs of 12 clients: 1 s retries
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
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
for port in "$back" "$front"; do
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
done
seq 1 60 | xargs -P 12 -I{} sh -c 'i=$(printf %016x {}); curl -s -o /dev/null \
    -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-$i-01" http://127.0.0.1:'"$front"'/r{}'
sleep 2 # tcpdump writes what it has received (on a loaded machine, later)
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
whole() { # ... whose request and response the capture holds whole
    echo "$(span_side "$1") AND s.req_seq_start IS NOT NULL AND s.resp_seq_start IS NOT NULL"
}
nf=$(q "SELECT count(*) FROM ($(span_side "$front"))")
nb=$(q "SELECT count(*) FROM ($(span_side "$back"))")
wf=$(q "SELECT count(*) FROM ($(whole "$front"))")
wb=$(q "SELECT count(*) FROM ($(whole "$back"))")
check_eval "the capture holds the requests on both sides ($nf at nginx, $nb at the backend; $wf and $wb whole)" \
    "[ $nf -ge 50 ] && [ $nb -ge 50 ] && [ $wf -ge 50 ] && [ $wb -ge 50 ]"
placed=$(q "SELECT count(DISTINCT span_id) FROM span_events WHERE source = 'socket' AND pid = $worker
            AND span_id IN ($(whole "$front"))")
check_eval "every whole nginx span is placed on nginx's worker (pid $worker): $placed of $wf" \
    "[ $placed = $wf ]"
shared=$(q "SELECT count(*) FROM shared_intervals WHERE pid = $worker AND spans >= 2")
check_eval "nginx's overlapping requests give shared time ($shared pieces, each with 2+ candidates)" \
    "[ $shared -gt 0 ]"
# every two nginx requests that the worker served at once share time: each
# connection's window on the worker (its first recv to its last send, read from the raw
# socket events by connection, without the sequence join) against the shared rows
out=$(python3 - "$tmp/sockets.txt" "$db" "$front" <<'PY'
import re, sqlite3, sys
ev, db, front = sys.argv[1], sqlite3.connect(sys.argv[2]), sys.argv[3]
rx = re.compile(r" (\d+)\.(\d{9}): spantrace_sock: (send|recv) \S+:(\d+) \S+:(\d+) ")
win = {}
for line in open(ev):
    m = rx.search(line)
    if not m or m[4] != front:
        continue
    ts = int(m[1]) * 10**9 + int(m[2])
    w = win.setdefault(int(m[5]), [None, None])
    if m[3] == "recv" and w[0] is None:
        w[0] = ts
    if m[3] == "send":
        w[1] = ts
# spans whose two messages the capture holds whole
span = dict(db.execute("SELECT c.client_port, s.span_id FROM spans s JOIN connections c ON "
                       "c.id = s.connection_id WHERE c.server_port = ? AND s.span_id IS NOT NULL "
                       "AND s.req_seq_start IS NOT NULL AND s.resp_seq_start IS NOT NULL",
                       (int(front),)))
shared = [set(r[0].split(",")) for r in db.execute("SELECT span_ids FROM shared_intervals")]
w = [(span[p], a, b) for p, (a, b) in win.items() if p in span and a and b]
pairs = miss = 0
for i in range(len(w)):
    for j in range(i + 1, len(w)):
        if min(w[i][2], w[j][2]) - max(w[i][1], w[j][1]) > 1000000:
            pairs += 1
            miss += not any(w[i][0] in h and w[j][0] in h for h in shared)
print(pairs, miss)
PY
)
set -- $out
check_eval "all ${1:-?} pairs of requests the worker served at once share time (${2:-?} missing)" \
    "[ ${1:-0} -gt 0 ] && [ ${2:-1} = 0 ]"
double=$(q "SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id
            AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket' AND y.source = 'socket'")
double2=$(q "SELECT count(*) FROM span_intervals x JOIN shared_intervals y ON x.tid = y.tid
             AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket'")
check_eval "no thread time goes to two spans, or to a span and the shared time ($double, $double2)" \
    "[ $double = 0 ] && [ $double2 = 0 ]"
bplaced=$(q "SELECT count(DISTINCT span_id) FROM span_intervals WHERE source = 'socket' AND pid = $backend_pid
             AND span_id IN ($(whole "$back"))")
bshared=$(q "SELECT count(*) FROM shared_intervals WHERE pid = $backend_pid")
bthreads=$(q "SELECT count(DISTINCT tid) FROM span_intervals WHERE source = 'socket' AND pid = $backend_pid")
check_eval "the threaded backend: $bplaced of $wb whole spans on $bthreads threads, $bshared shared pieces" \
    "[ $bplaced = $wb ] && [ $bthreads -gt 1 ] && [ $bshared = 0 ]"
tap_plan

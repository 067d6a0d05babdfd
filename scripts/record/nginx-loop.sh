#!/usr/bin/env bash
# Record nginx's event loop interleaving requests, with the truth of which were expensive.
#
#   scripts/record/nginx-loop.sh OUTDIR [BIG_BYTES] [REQUESTS]   (root; default 1500000 48)
#
# nginx from Debian, one worker, gzip on every response (level 6), an 8 KiB send buffer;
# REQUESTS requests, 8 at a time, each client (curl --compressed) reading at 150 KB/s, so
# that the worker compresses and writes each response in many turns of its loop, between
# the others'; one request in four asks for big.txt (BIG_BYTES of words to deflate), the
# rest for small.txt (3 KB).  Each request carries a traceparent with its own span id.
# Recorded: tcpdump on lo (OUTDIR/cap.pcap), `spantrace --sockets --port PORT` (TCP calls
# and the worker's readiness waits: OUTDIR/sockets.txt), `perf record -k mono -g -F 2999
# --sample-cpu -p WORKER` (OUTDIR/perf.data, and its `perf script` text, OUTDIR/perf.txt.gz), nginx's
# access log with the span ids (OUTDIR/access.log), and OUTDIR/truth.json: the worker's
# pid and the span ids of the big requests.  Exits 2 with the reason when something is
# missing (tests skip on it), 1 when the recording failed.
set -euo pipefail
out=${1:?usage: nginx-loop.sh OUTDIR [BIG_BYTES] [REQUESTS]}
big=${2:-1500000}
nreq=${3:-48}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SF_BIN:-$top/bin}
say() { echo "nginx-loop: $*" >&2; }
die() { say "$*"; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (BPF, perf, tcpdump)"
[ -x "$bin/spantrace" ] || die "spantrace not built"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx not installed (scripts/deps.sh heavy)"
for t in perf tcpdump python3 curl; do command -v $t >/dev/null || die "$t not installed"; done
[ -d /sys/kernel/tracing/events/syscalls/sys_exit_epoll_wait ] ||
    [ -d /sys/kernel/debug/tracing/events/syscalls/sys_exit_epoll_wait ] ||
    die "the kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS): readiness waits cannot be traced"
mkdir -p "$out"
W=$(mktemp -d /tmp/nginx-loop.XXXXXX)
chmod a+rx "$W" # nginx's worker is not root
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ ! -f "$W/nginx.pid" ] || kill "$(cat "$W/nginx.pid")" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/www" "$W/ng"
python3 - "$W/www" "$big" <<'PY'
import random, sys
r = random.Random(7)
words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))
         for _ in range(5000)]
def text(n):
    out, size = [], 0
    while size < n:
        w = r.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)
open(sys.argv[1] + "/big.txt", "w").write(text(int(sys.argv[2])))
open(sys.argv[1] + "/small.txt", "w").write(text(200))
PY
chmod a+rx "$W/www" && chmod a+r "$W/www"/*
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$W/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $W/nginx.pid;
error_log $W/ng/error.log;
events { worker_connections 256; }
http {
    log_format spans '\$msec \$request \$status \$body_bytes_sent \$http_traceparent';
    access_log $W/access.log spans;
    client_body_temp_path $W/ng; proxy_temp_path $W/ng; fastcgi_temp_path $W/ng;
    uwsgi_temp_path $W/ng; scgi_temp_path $W/ng;
    gzip on; gzip_types text/plain; gzip_comp_level 6; gzip_min_length 0;
    sendfile off;
    server {
        listen 127.0.0.1:$port sndbuf=8k;
        location / { root $W/www; default_type text/plain; }
    }
}
CONF
"$nginx" -c "$W/nginx.conf" -p "$W/ng" 2>"$W/nginx.err" || die "nginx did not start: $(head -c 200 "$W/nginx.err")"
for _ in $(seq 50); do [ -s "$W/nginx.pid" ] && pgrep -P "$(cat "$W/nginx.pid")" >/dev/null && break; sleep 0.1; done
worker=$(pgrep -P "$(cat "$W/nginx.pid")" | head -1)
tcpdump -i lo -U -s 0 -w "$W/cap.pcap" "tcp port $port" 2>"$W/tcpdump.err" &
pids+=($!)
"$bin/spantrace" --sockets --port "$port" -o "$W/sockets.txt" 2>"$W/st.err" &
pids+=($!)
perf record -q -k mono -g -F 2999 -e cpu-clock --sample-cpu -p "$worker" -o "$W/perf.data" 2>"$W/perf.err" &
pids+=($!)
for _ in $(seq 100); do grep -q tracing "$W/st.err" 2>/dev/null && grep -q listening "$W/tcpdump.err" && break; sleep 0.1; done
sleep 0.5
seq 1 "$nreq" | xargs -P 8 -I{} sh -c 'i=$(printf %016x {}); f=small; [ $(({} % 4)) = 1 ] && f=big
    curl -s -o /dev/null --compressed --limit-rate 150k \
    -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-$i-01" http://127.0.0.1:'"$port"'/$f.txt' ||
    { say "a client failed"; exit 1; }
sleep 1 # tcpdump writes what it has received (on a loaded machine, later)
for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
grep -q 'waits=yes' "$W/sockets.txt" ||
    die "spantrace could not trace the readiness waits here: $(grep 'waits not traced' "$W/st.err" | head -1)"
perf script -i "$W/perf.data" --header --ns -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
    2>/dev/null | gzip -9n >"$W/perf.txt.gz"
cp "$W/cap.pcap" "$W/sockets.txt" "$W/perf.data" "$W/perf.txt.gz" "$W/access.log" "$out/"
python3 - "$out" "$worker" "$big" "$nreq" "$(nginx -v 2>&1)" <<'PY'
import json, sys
out, worker, big, nreq, version = sys.argv[1:6]
bigs = sorted(l.split()[-1].split("-")[2] for l in open(out + "/access.log") if " /big.txt " in l)
json.dump({"server": version + ", one worker, gzip level 6, sndbuf 8k", "worker_pid": int(worker),
           "requests": int(nreq), "clients": 8, "client_rate": "150 KB/s (curl --limit-rate)",
           "big_bytes": int(big), "small_bytes": 200, "big_span_ids": bigs,
           "truth": "deflate samples of the worker belong to the big.txt requests"},
          open(out + "/truth.json", "w"), indent=1)
PY
say "wrote $out: $(du -sh "$out" | cut -f1), worker $worker"

#!/usr/bin/env bash
# The throughput cost of spantrace --sockets on the demo service under load (root).
#
#   scripts/bench-sockets.sh [ROUNDS] [REQUESTS] [demo|nginx|go|grpc]   (default 3 4000 demo)
#
# demo: builds the demo service (samples/demo-service/, as scripts/record-demo.sh
# does), starts it on 127.0.0.1, and drives it with h2load (nghttp2-client) over
# HTTP/1.1, 8 connections, on two paths: /api/checkout (the service's real work) and
# /nothing (a 404: no work, so the socket events' per-call cost weighs most).
# nginx: one nginx worker serving a 2000-byte file (tens of thousands of requests a
# second: the worst case, two socket events per request and no work).
# go, grpc: tests/data/goserver (net/http, HTTP/1.1: /work?n=1, no work, and /work?n=300, 300
# rounds of SHA-256) and tests/data/gogrpc (grpc-go, one cheap unary call, h2load over h2c
# with 8 connections) built with Debian's Go,
# GOMAXPROCS=2: spantrace adds its goroutine probes (runtime.execute, and the goroutine
# starts' two), which fire on every goroutine switch and start.  Each round runs
# both paths without and then with `spantrace --sockets -p PID --port PORT` attached,
# alternating so that the load of a shared machine falls on both alike; prints the
# requests/s of every run and the median loss per path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
reqs=${2:-4000}
target=${3:-demo}
say() { echo "bench-sockets: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (BPF)"; exit 2; }
command -v h2load >/dev/null || { say "h2load not installed (nghttp2-client)"; exit 2; }
spantrace=${SF_BIN:-$top/bin}/spantrace
[ -x "$spantrace" ] || { say "spantrace not built"; exit 2; }
W=$(mktemp -d /tmp/spanfold-bench-sockets.XXXXXX)
svc_pid=
cleanup() {
    [ -z "$svc_pid" ] || kill "$svc_pid" 2>/dev/null || true
    [ ! -f "$W/nginx.pid" ] || kill "$(cat "$W/nginx.pid")" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
h2opt=(--h1)
if [ "$target" = nginx ]; then
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$W/html" && head -c 2000 /dev/zero | tr '\0' x >"$W/html/index.html"
    printf 'worker_processes 1; daemon on; pid %s/nginx.pid; error_log %s/error.log;\n%s\n' \
        "$W" "$W" "events { worker_connections 256; } http { access_log off; server {
        listen 127.0.0.1:$port; location / { root $W/html; } } }" >"$W/nginx.conf"
    "$nginx" -c "$W/nginx.conf" -p "$W"
    sleep 0.3
    svc_pid=
    paths=/index.html
    pidopt=()
elif [ "$target" = go ] || [ "$target" = grpc ]; then
    command -v go >/dev/null || { say "go not installed (golang-go)"; exit 2; }
    . "$top/scripts/bench/go_server.sh"
    prog=goserver args=()
    [ "$target" = go ] || { prog=gogrpc args=(serve); }
    go_server_build "$prog" "$W" || { say "go build of $prog failed: $(head -c 300 "$W/build.err")"; exit 2; }
    go_server_start "$W/$prog" "${args[@]}" || { svc_pid=$svc; say "$prog did not start"; exit 2; }
    svc_pid=$svc
    pidopt=(-p "$svc_pid")
    if [ "$target" = go ]; then
        paths="/work?n=1 /work?n=300"
    else # one gRPC message: Int64Value{value: 1}, length-prefixed
        printf '\0\0\0\0\2\10\1' >"$W/call.bin"
        paths=/spanfold.Work/Burn
        h2opt=(-d "$W/call.bin" -H "content-type: application/grpc" -H "te: trailers")
    fi
else
. "$top/scripts/bench/demo_service.sh"
bench_demo_start "$W"
paths="/api/checkout /nothing"
pidopt=(-p "$svc_pid")
fi
run() { # PATH -> requests/s
    h2load "${h2opt[@]}" -n "$reqs" -c 8 -t 1 "http://127.0.0.1:$port$1" 2>/dev/null |
        sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p'
}
declare -A off on
for r in $(seq "$rounds"); do
    for p in $paths; do
        off[$p]+="$(run $p) "
        "$spantrace" --sockets "${pidopt[@]}" --port "$port" -o "$W/sockets.txt" 2>"$W/st.err" &
        st=$!
        for _ in $(seq 100); do grep -q tracing "$W/st.err" 2>/dev/null && break; sleep 0.1; done
        on[$p]+="$(run $p) "
        kill -INT "$st"; wait "$st" || true
        say "round $r $p: events $(grep -c spantrace_sock "$W/sockets.txt"), $(tail -n 1 "$W/st.err")"
    done
done
for p in $paths; do
    python3 - "$p" "${off[$p]}" "${on[$p]}" <<'PY'
import statistics, sys
p, off, on = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
loss = [100.0 * (a - b) / a for a, b in zip(off, on)]
print(f"{p}: without {off} req/s, with --sockets {on} req/s; "
      f"median loss {statistics.median(loss):.1f} % (per round {[round(x, 1) for x in loss]})")
PY
done

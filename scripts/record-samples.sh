#!/usr/bin/env bash
# Record the real sample captures of samples/pcap/ and write samples/pcap/MANIFEST.json.
#
#   scripts/record-samples.sh [OUTDIR]       (root; default OUTDIR samples/pcap)
#
# Real clients and servers from Debian's packages talk over 127.0.0.1 on free high ports
# while tcpdump records `lo` (and `any`, for the Linux-cooked variants):
#   http1     nginx 1.22 + curl 7.88 (keep-alive, POST, chunked, 404, HEAD, pipelining through
#             a raw socket, every trace-context format, malformed contexts)
#   h2c       nghttpd + nghttp / h2load (prior knowledge, many streams, CONTINUATION) and
#             curl --http2 (Upgrade: h2c)
#   grpc      python3-grpcio client and server (true-binary grpc-trace-bin, traceparent, error
#             status, deadline) and nghttp as a gRPC client (base64 grpc-trace-bin)
#   tls       nginx over TLS 1.3 + curl --http2/--http1.1, 0-RTT with openssl s_client against
#             nginx (accepted, rejected) and openssl s_server, a failed mTLS handshake; key logs
# and editcap conversions of http1 to pcapng and nanosecond pcap.  Every server is started here
# and stopped by pid; every client and the whole run are bounded in time.  Needs: nginx,
# nghttp2-client, nghttp2-server, nghttp2-proxy, python3-grpcio, curl, openssl, tcpdump,
# tshark (editcap, capinfos).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/samples/pcap}
rec=$top/scripts/record
py=/usr/bin/python3 # Debian's python3, where python3-grpcio lives
export PYTHONDONTWRITEBYTECODE=1

# The whole run is bounded: 10 minutes, then everything it started is stopped.
if [ -z "${SPANFOLD_REC_TIMED:-}" ]; then
    SPANFOLD_REC_TIMED=1 exec timeout 600 "$0" "$@"
fi
[ "$(id -u)" -eq 0 ] || { echo "record-samples: needs root (tcpdump)" >&2; exit 2; }
for t in nginx nghttpd nghttp nghttpx h2load curl openssl tcpdump editcap capinfos; do
    command -v "$t" >/dev/null || { echo "record-samples: $t not installed" >&2; exit 2; }
done
$py -c 'import grpc' 2>/dev/null || { echo "record-samples: python3-grpcio missing" >&2; exit 2; }

W=$(mktemp -d /tmp/spanfold-rec.XXXXXX)
chmod 755 "$W" # nginx workers run as nobody
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$W"
}
trap cleanup EXIT

say() { echo "record-samples: $*" >&2; }

free_port() { $py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_port() { # PORT: wait until something listens (5 s); read /proc, do not connect
    local i
    for i in $(seq 50); do
        (cd "$rec" && $py -c "import drive,sys; sys.exit(0 if drive.listening($1) else 1)") && return 0
        sleep 0.1
    done
    say "nothing listens on port $1"; return 1
}

start_bg() { # start a server in the background; its pid is in $last
    "$@" &
    last=$!
    pids+=("$last")
}

stop_pid() { # PID: stop one process we started, and wait for it
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

cap_start() { # NAME IFACE [tcpdump options...] -- FILTER: start tcpdump, wait until it listens
    local name=$1 iface=$2; shift 2
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    tcpdump -i "$iface" "${opts[@]}" --immediate-mode -B 32768 -U -s 0 -w "$W/$name" "$@" 2>"$W/$name.log" &
    last=$!
    pids+=("$last")
    local i
    for i in $(seq 50); do grep -q 'listening on' "$W/$name.log" && return 0; sleep 0.1; done
    say "tcpdump for $name did not start: $(cat "$W/$name.log")"; return 1
}

cap_stop() { # PID NAME: let the last packets arrive, stop tcpdump; fail if it dropped any
    sleep 0.3
    kill -INT "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    if ! grep -q '^0 packets dropped by kernel' "$W/$2.log"; then
        say "tcpdump lost packets in $2: $(tr '\n' ' ' < "$W/$2.log")"
        return 1
    fi
}

# ---- content served by nginx and nghttpd --------------------------------------------------
mkdir -p "$W/www/chunked" "$W/tmp" "$W/grpc"
{ echo "<!doctype html><title>spanfold sample</title>"
  for i in $(seq 40); do echo "<p>line $i of the spanfold sample page</p>"; done; } > "$W/www/index.html"
cp "$W/www/index.html" "$W/www/chunked/page.html"
echo "small" > "$W/www/small.txt"
chmod -R a+rX "$W/www"

nginx_conf() { # FILE PORT [TLSPORT TLS_EXTRA [PROTOCOLS]]: write an nginx config into the temp dir
    local f=$1 port=$2 tport=${3:-} textra=${4:-} protos=${5:-TLSv1.3}
    cat > "$f" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $W/nginx.pid;
error_log $W/nginx-error.log warn;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    default_type text/plain;
    access_log $W/nginx-access.log;
    client_body_temp_path $W/tmp/body;
    proxy_temp_path $W/tmp/proxy;
    fastcgi_temp_path $W/tmp/fastcgi;
    uwsgi_temp_path $W/tmp/uwsgi;
    scgi_temp_path $W/tmp/scgi;
    keepalive_requests 1000;
    server {
        listen 127.0.0.1:$port;
        root $W/www;
        location = /post { return 201 "created\n"; }
        location /chunked/ { gzip on; gzip_min_length 1; gzip_types text/plain; }
        location /t/ { return 200 "traced\n"; }
    }
EOF
    if [ -n "$tport" ]; then
        cat >> "$f" <<EOF
    server {
        listen 127.0.0.1:$tport ssl http2;
        server_name sample.spanfold.test;
        root $W/www;
        ssl_certificate $W/tls/server.crt;
        ssl_certificate_key $W/tls/server.key;
        ssl_protocols $protos;
        $textra
        location = /post { return 201 "created\n"; }
        location /t/ { return 200 "traced\n"; }
    }
EOF
    fi
    echo "}" >> "$f"
}


# ---- 1. HTTP/1.1: nginx + curl; recorded on lo and on any (cooked v1 and v2) ---------------
record_http1() {
    local port; port=$(free_port)
    nginx_conf "$W/nginx-h1.conf" "$port"
    start_bg nginx -c "$W/nginx-h1.conf"; local ng=$last
    wait_port "$port"
    cap_start http1.pcap lo -- "tcp port $port"; local c1=$last
    cap_start http1-cooked.pcap any -y LINUX_SLL -- "tcp port $port"; local c2=$last
    cap_start http1-cooked2.pcap any -y LINUX_SLL2 -- "tcp port $port"; local c3=$last
    (cd "$rec" && $py drive.py h1 --port "$port" --out "$W/part-http1.json")
    cap_stop "$c1" http1.pcap; cap_stop "$c2" http1-cooked.pcap; cap_stop "$c3" http1-cooked2.pcap
    stop_pid "$ng"
    echo "$port" > "$W/port-http1"
}

# ---- 2. HTTP/2 cleartext: nghttpd + nghttp/h2load/curl; nghttpx for Upgrade: h2c ---------
record_h2c() {
    local port uport bport; port=$(free_port); uport=$(free_port); bport=$(free_port)
    start_bg nghttpd --no-tls -a 127.0.0.1 -d "$W/www" "$port"; local nd=$last
    nginx_conf "$W/nginx-backend.conf" "$bport"
    start_bg nginx -c "$W/nginx-backend.conf"; local ng=$last
    # nghttpx: cleartext frontend that accepts Upgrade: h2c, nginx (HTTP/1.1) behind it.
    start_bg nghttpx -f"127.0.0.1,$uport;no-tls" -b"127.0.0.1,$bport" --conf=/dev/null \
        --workers=1 --pid-file="$W/nghttpx.pid" --errorlog-file="$W/nghttpx.log" \
        --accesslog-file=/dev/null; local nx=$last
    wait_port "$port"; wait_port "$uport"; wait_port "$bport"
    cap_start h2c.pcap lo -- "tcp port $port or tcp port $uport"; local c1=$last
    (cd "$rec" && $py drive.py h2 --port "$port" --port2 "$uport" --out "$W/part-h2c.json")
    cap_stop "$c1" h2c.pcap
    stop_pid "$nd"; stop_pid "$nx"; stop_pid "$ng"
    echo "$port $uport" > "$W/port-h2c"
}

# ---- 2b. IPv6: curl -> nginx and nghttp -> nghttpd over ::1 ------------------------------
record_ipv6() {
    local port port2; port=$(free_port); port2=$(free_port)
    nginx_conf "$W/nginx-v6.conf" "$port"
    sed -i "s/listen 127.0.0.1:$port;/listen [::1]:$port;/" "$W/nginx-v6.conf"
    start_bg nginx -c "$W/nginx-v6.conf"; local ng=$last
    start_bg nghttpd --no-tls -a ::1 -d "$W/www" "$port2"; local nd=$last
    wait_port "$port"; wait_port "$port2"
    cap_start ipv6.pcap lo -- "tcp port $port or tcp port $port2"; local c1=$last
    (cd "$rec" && $py drive.py ipv6 --port "$port" --port2 "$port2" --out "$W/part-ipv6.json")
    cap_stop "$c1" ipv6.pcap
    stop_pid "$ng"; stop_pid "$nd"
    echo "$port $port2" > "$W/port-ipv6"
}

# ---- 3. gRPC: python3-grpcio server and client; nghttp as a base64 gRPC client ------------
record_grpc() {
    local port; port=$(free_port)
    start_bg $py "$rec/grpc_server.py" "$port"; local gs=$last
    wait_port "$port"
    cap_start grpc.pcap lo -- "tcp port $port"; local c1=$last
    (cd "$rec" && $py drive.py grpc --port "$port" --dir "$W/grpc" --out "$W/part-grpc.json")
    cap_stop "$c1" grpc.pcap
    $py "$rec/wire_outcomes.py" "$W/grpc.pcap" "$port" "$W/part-grpc.json"
    stop_pid "$gs"
    echo "$port" > "$W/port-grpc"
}

# ---- 4. TLS 1.3: nginx + curl, 0-RTT (nginx, s_server), failed mTLS; key logs ------------
tls_certs() {
    local d=$W/tls
    mkdir -p "$d"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout "$d/server.key" -out "$d/server.crt" -days 3650 \
        -subj /CN=sample.spanfold.test -addext subjectAltName=DNS:sample.spanfold.test 2>/dev/null
    local n
    for n in 1 2; do # two CAs: the server trusts ca1, the client's certificate is from ca2
        openssl req -x509 "${ec[@]}" -keyout "$d/ca$n.key" -out "$d/ca$n.crt" -days 3650 \
            -subj "/CN=spanfold sample CA $n" 2>/dev/null
    done
    openssl req "${ec[@]}" -keyout "$d/client2.key" -out "$d/client2.csr" \
        -subj /CN=spanfold-client 2>/dev/null
    openssl x509 -req -in "$d/client2.csr" -CA "$d/ca2.crt" -CAkey "$d/ca2.key" \
        -CAcreateserial -out "$d/client2.crt" -days 3650 2>/dev/null
    head -c 80 /dev/urandom > "$d/ticket1.key"
    head -c 80 /dev/urandom > "$d/ticket2.key"
    chmod -R a+rX "$d"
}

record_tls() {
    tls_certs
    local port hport; port=$(free_port); hport=$(free_port)
    # nginx + curl --http2 / --http1.1, one connection per TLS 1.3 cipher suite.
    nginx_conf "$W/nginx-tls.conf" "$hport" "$port" ""
    start_bg nginx -c "$W/nginx-tls.conf"; local ng=$last
    wait_port "$port"
    cap_start tls-nginx.pcap lo -- "tcp port $port"; local c1=$last
    (cd "$rec" && $py drive.py tls_nginx --port "$port" --dir "$W/tls" --out "$W/part-tls-nginx.json")
    cap_stop "$c1" tls-nginx.pcap
    stop_pid "$ng"
    echo "$port" > "$W/port-tls-nginx"
    cp "$W/tls/tls-nginx.keylog" "$W/"
    editcap --inject-secrets "tls,$W/tls-nginx.keylog" "$W/tls-nginx.pcap" "$W/tls-nginx-dsb.pcapng"

    # TLS 1.2 (CLIENT_RANDOM key log lines): curl with three ECDHE-ECDSA AEAD suites.
    port=$(free_port); hport=$(free_port)
    nginx_conf "$W/nginx-tls12.conf" "$hport" "$port" "" TLSv1.2
    start_bg nginx -c "$W/nginx-tls12.conf"; ng=$last
    wait_port "$port"
    cap_start tls12-nginx.pcap lo -- "tcp port $port"; c1=$last
    (cd "$rec" && $py drive.py tls12_nginx --port "$port" --dir "$W/tls" \
        --out "$W/part-tls12-nginx.json")
    cap_stop "$c1" tls12-nginx.pcap
    stop_pid "$ng"
    echo "$port" > "$W/port-tls12-nginx"

    # 0-RTT against nginx: three configurations of one port (drive.py restarts nginx).
    port=$(free_port); hport=$(free_port)
    nginx_conf "$W/tls/nginx-0rtt-A.conf" "$hport" "$port" \
        "ssl_early_data on; ssl_session_ticket_key $W/tls/ticket1.key;"
    nginx_conf "$W/tls/nginx-0rtt-B.conf" "$hport" "$port" \
        "ssl_early_data on; ssl_session_ticket_key $W/tls/ticket2.key;"
    nginx_conf "$W/tls/nginx-0rtt-C.conf" "$hport" "$port" \
        "ssl_early_data off; ssl_session_ticket_key $W/tls/ticket1.key;"
    cap_start tls-0rtt-nginx.pcap lo -- "tcp port $port"; c1=$last
    (cd "$rec" && $py drive.py tls_0rtt_nginx --port "$port" --dir "$W/tls" \
        --out "$W/part-tls-0rtt-nginx.json")
    cap_stop "$c1" tls-0rtt-nginx.pcap
    echo "$port" > "$W/port-tls-0rtt-nginx"

    # 0-RTT against openssl s_server -early_data.
    port=$(free_port)
    cap_start tls-0rtt-s_server.pcap lo -- "tcp port $port"; c1=$last
    (cd "$rec" && $py drive.py tls_0rtt_s_server --port "$port" --dir "$W/tls" \
        --out "$W/part-tls-0rtt-s_server.json")
    cap_stop "$c1" tls-0rtt-s_server.pcap
    echo "$port" > "$W/port-tls-0rtt-s_server"

    # mTLS: client certificate from an unknown CA, the server aborts with an alert.
    port=$(free_port)
    cap_start tls-mtls-fail.pcap lo -- "tcp port $port"; c1=$last
    (cd "$rec" && $py drive.py tls_mtls_fail --port "$port" --dir "$W/tls" \
        --out "$W/part-tls-mtls-fail.json")
    cap_stop "$c1" tls-mtls-fail.pcap
    echo "$port" > "$W/port-tls-mtls-fail"
    cp "$W"/tls/*.keylog "$W/"
}

# ---- run ---------------------------------------------------------------------------------
steps=${SPANFOLD_REC_ONLY:-http1 h2c ipv6 grpc tls}
for s in $steps; do "record_$s"; say "$s recorded"; done

# Format coverage: the same HTTP/1.1 traffic as pcapng and as nanosecond pcap.
if [ -f "$W/http1.pcap" ]; then
    editcap -F pcapng "$W/http1.pcap" "$W/http1.pcapng"
    editcap -F nsecpcap "$W/http1.pcap" "$W/http1-nsec.pcap"
fi

mkdir -p "$out"
for f in "$W"/*.pcap "$W"/*.pcapng "$W"/*.keylog; do
    [ -e "$f" ] && cp "$f" "$out/"
done
chmod 644 "$out"/*
$py "$rec/manifest.py" "$W" "$out"
say "wrote $out/MANIFEST.json ($(du -sh "$out" | cut -f1) in $out)"

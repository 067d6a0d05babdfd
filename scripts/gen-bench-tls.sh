#!/usr/bin/env bash
# Generate the TLS benchmark captures (never committed), the same HTTP/2 traffic twice:
#   $OUT/tls.pcap + $OUT/tls.keylog   h2load (HTTP/2, ALPN h2) over TLS 1.3 to nginx
#                                     (self-signed, TLS_AES_256_GCM_SHA384), key log from
#                                     h2load's SSLKEYLOGFILE support
#   $OUT/h2c.pcap                     the same requests in cleartext (prior-knowledge h2c)
# Each: h2load, 8 connections x 20 concurrent streams (curl 7.88 cannot multiplex h2c and
# nghttp has no key log), requests cycling over a 1 KB response (twice), an 8 KB page
# and a 32 KB script (mean ~10 KB, as scripts/gen-bench-pcap.sh's web mix) with trace
# headers; about 115 MB each.  BENCH_TLS_MIX=rpc: 64-byte responses only, so the capture is
# almost all HTTP/2 headers (API/RPC traffic: the per-request costs dominate); about 103 MB.
# Usage: scripts/gen-bench-tls.sh [OUT_DIR]  (default /tmp/spanfold-bench-tls-MIX; needs root,
#        nginx, nghttp2-client (h2load), openssl, tcpdump)
set -euo pipefail
mix=${BENCH_TLS_MIX:-web}
out=${1:-${BENCH_TLS_DIR:-/tmp/spanfold-bench-tls-$mix}}
case $mix in # requests per path per connection (x 4 paths x 8 connections)
web) per=${BENCH_TLS_REQS:-330} paths="small.txt page.html small.txt app.js" ;;
rpc) per=${BENCH_TLS_REQS:-9600} paths="tiny.txt tiny.txt tiny.txt tiny.txt" ;;
*) echo "gen-bench-tls: BENCH_TLS_MIX is web or rpc" >&2; exit 2 ;;
esac
mkdir -p "$out"
if [ -s "$out/tls.pcap" ] && [ -s "$out/h2c.pcap" ] && [ -s "$out/tls.keylog" ]; then
    echo "gen-bench-tls: $out/tls.pcap exists"; exit 0
fi
for t in nginx h2load openssl tcpdump; do
    command -v $t >/dev/null || { echo "gen-bench-tls: $t not installed" >&2; exit 2; }
done
port1=18590 port2=18591
. "$(dirname "$0")/bench/nginx.sh"
bench_nginx_work spanfold-nginx-tls
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench.spanfold.test \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
bench_nginx_start "server { listen 127.0.0.1:$port1 ssl http2; root \$root; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem; ssl_protocols TLSv1.3; }" \
    "server { listen 127.0.0.1:$port2 http2; root \$root; }"
hdr=(-H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
     -H 'tracestate: congo=t61rcWkgMzE'
     -H 'b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1')
run() { # run BASE_URL: 8 connections x 20 concurrent streams
    local urls=() p
    for p in $paths; do urls+=("$1/$p"); done
    h2load -n $((per * 4 * 8)) -c 8 -m 20 -T 120 "${hdr[@]}" "${urls[@]}" >/dev/null
}
capture() { # capture FILE PORT
    tcpdump -i lo -B 65536 -s 0 -U -w "$1" "tcp port $2" 2>/dev/null &
    td=$!
    sleep 1
}
stop() { sleep 1; kill "$td"; wait "$td" 2>/dev/null || true; td=; }
rm -f "$out/tls.keylog"
capture "$out/tls.pcap" $port1
SSLKEYLOGFILE=$out/tls.keylog run "https://127.0.0.1:$port1"
stop
capture "$out/h2c.pcap" $port2
run "http://127.0.0.1:$port2"
stop
ls -l "$out"/tls.pcap "$out"/h2c.pcap "$out"/tls.keylog

#!/usr/bin/env bash
# Generate the pcap2spans benchmark captures (never committed):
#   $OUT/bench.pcap     >= 100 MB of real HTTP/1.1 and HTTP/2 (h2c) traffic with trace
#                       headers: nginx on 127.0.0.1, h2load (--h1 for HTTP/1.1 keep-alive,
#                       prior-knowledge h2c for HTTP/2) as clients, recorded by tcpdump on lo.
#                       BENCH_MIX=web (default): requests cycle over an API-sized 1 KB
#                       response (twice), an 8 KB page and a 32 KB script (mean ~10 KB);
#                       BENCH_MIX=api: 1 KB and 8 KB only (mean ~4.5 KB, twice the spans
#                       per MB: the hard case for the parsers and the output);
#                       BENCH_MIX=rpc: 64-byte responses, so the capture is almost all
#                       headers (API/RPC traffic, what SPECS' tshark figures were taken on:
#                       ~190 bytes per packet);
#   $OUT/bench10.pcap   the same traffic ten times over (editcap -t shifts each copy past
#                       the previous one, mergecap -a appends), for the memory check.
# BENCH_MTU=1500 records the segments an Ethernet link carries: for the length of the
# recording, lo gets that MTU and its segmentation offloads (TSO, GSO) are turned off, so
# tcpdump sees wire-sized packets instead of the up-to-64 KB ones of loopback (and of a
# host capture with offloads on).  Both settings are put back on exit.
# Usage: scripts/gen-bench-pcap.sh [OUT_DIR]   (default /tmp/spanfold-bench-MIX[-mtuN];
#        needs root, nginx, nghttp2-client (h2load), tcpdump, tshark's editcap/mergecap,
#        and for BENCH_MTU iproute2 and ethtool)
set -euo pipefail
mix=${BENCH_MIX:-web}
mtu=${BENCH_MTU:-}
out=${1:-${BENCH_DIR:-/tmp/spanfold-bench-$mix${mtu:+-mtu$mtu}}}
case $mix in
web) reqs=${BENCH_REQS:-5600} paths="small.txt page.html small.txt app.js" ;;
api) reqs=${BENCH_REQS:-12000} paths="small.txt page.html" ;;
rpc) reqs=${BENCH_REQS:-90000} paths="tiny.txt" ;;
*) echo "gen-bench-pcap: BENCH_MIX is web, api or rpc" >&2; exit 2 ;;
esac
mkdir -p "$out"
if [ -s "$out/bench.pcap" ] && [ -s "$out/bench10.pcap" ]; then
    echo "gen-bench-pcap: $out/bench.pcap exists"; exit 0
fi
for t in nginx h2load tcpdump editcap mergecap; do
    command -v $t >/dev/null || { echo "gen-bench-pcap: $t not installed" >&2; exit 2; }
done
port1=18580 port2=18581
. "$(dirname "$0")/bench/nginx.sh"
bench_nginx_work spanfold-nginx
if [ -n "$mtu" ]; then
    for t in ip ethtool; do
        command -v $t >/dev/null || { echo "gen-bench-pcap: $t not installed (BENCH_MTU)" >&2; exit 2; }
    done
    bench_lo_mtu "$mtu"
fi
bench_nginx_start "server { listen 127.0.0.1:$port1; root \$root; }" \
    "server { listen 127.0.0.1:$port2 http2; root \$root; }"
tcpdump -i lo -B 65536 -s 0 -U -w "$out/bench.pcap" "tcp port $port1 or tcp port $port2" 2>/dev/null &
td=$!
sleep 1
hdr=(-H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
     -H 'tracestate: congo=t61rcWkgMzE'
     -H 'b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1'
     -H 'x-datadog-trace-id: 1234567890123456789' -H 'x-datadog-parent-id: 987654321')
# HTTP/1.1 keep-alive, 20 connections; HTTP/2 prior knowledge, 20 connections x 10 streams
urls() { for p in $paths; do echo "http://127.0.0.1:$1/$p"; done; }
h2load --h1 -n "$reqs" -c 20 -T 30 "${hdr[@]}" $(urls $port1) >/dev/null
h2load -n "$reqs" -c 20 -m 10 -T 30 "${hdr[@]}" $(urls $port2) >/dev/null
sleep 1
kill "$td"; wait "$td" 2>/dev/null || true; td=
# ten copies, each shifted one hour after the previous one
span=3600
files=()
for i in 0 1 2 3 4 5 6 7 8 9; do
    editcap -t $((i * span)) "$out/bench.pcap" "$out/part$i.pcap"
    files+=("$out/part$i.pcap")
done
mergecap -a -F pcap -w "$out/bench10.pcap" "${files[@]}"
rm -f "${files[@]}"
ls -l "$out"/bench.pcap "$out"/bench10.pcap

#!/usr/bin/env bash
# Record the small HTTP/1.1 (and h2c upgrade) captures the pcap2spans tests use, with
# real clients and servers on loopback: server.py (http.server, HTTP/1.1), curl and a
# pipelining client.  The same traffic is
# captured three times at once: -i lo (Ethernet), -i any as Linux cooked v1 and v2.
# Needs root (tcpdump), curl, python3.
# Usage: tests/pcap2spans/data/record.sh   (rewrites h1-*.pcap here)
set -euo pipefail
cd "$(dirname "$0")"
port=18480
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
python3 server.py $port & pids+=($!)
sleep 1
filter="tcp port $port"
tcpdump -i lo -U -w h1-lo.pcap "$filter" 2>/dev/null & t1=$!
tcpdump -i any -y LINUX_SLL -U -w h1-sll.pcap "$filter" 2>/dev/null & t2=$!
tcpdump -i any -y LINUX_SLL2 -U -w h1-sll2.pcap "$filter" 2>/dev/null & t3=$!
pids+=($t1 $t2 $t3)
sleep 1
tp=traceparent:00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
# keep-alive: three requests on one connection
curl -s -o /dev/null -o /dev/null -o /dev/null -H "$tp" \
    "http://127.0.0.1:$port/plain" "http://127.0.0.1:$port/chunked" "http://127.0.0.1:$port/204"
curl -s -o /dev/null -H 'b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90' \
    "http://127.0.0.1:$port/close"
curl -s -o /dev/null -H 'traceparent: 00-zzzz-00f067aa0ba902b7-01' -H 'X-Amzn-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' \
    -d 'field=value' "http://127.0.0.1:$port/304"
python3 pipeline.py $port
sleep 1
kill $t1 $t2 $t3; wait $t1 $t2 $t3 2>/dev/null || true
ls -l h1-*.pcap
# the same traffic with the packet carrying the chunked body (frame 13) lost: a gap
editcap h1-lo.pcap h1-gap.pcap 13

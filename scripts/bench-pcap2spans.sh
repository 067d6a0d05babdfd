#!/usr/bin/env bash
# Benchmark pcap2spans (issue 3, "Speed and memory") on a >= 100 MB capture of real
# HTTP/1.1 + HTTP/2 traffic made by scripts/gen-bench-pcap.sh, in one run:
#   1. throughput of `pcap2spans --ndjson >/dev/null` as a share of a bare libpcap loop
#      (scripts/bench/pcap_loop.c) over the same file           goal >= 25 %
#   2. speed against `tshark -r F -T fields` extracting what pcap2spans reads: the HTTP/1
#      request line and header lines, the HTTP/1 status code, the HTTP/2 header names and
#      values (decode-as for the benchmark's ports)                 goal >= 50x
#   3. the --db figure beside it
#   4. peak RSS on the file and on the same traffic ten times over  goal <= +10 %
# Times are CPU seconds (user + sys, from wait4 of each run: scripts/bench/measure.sh),
# medians of BENCH_RUNS runs (default 5; tshark BENCH_TSHARK_RUNS, default 1, since one
# run takes minutes; 0 skips tshark).
# BENCH_MIX=web|api|rpc picks the traffic mix (see gen-bench-pcap.sh); BENCH_DIR overrides
# where captures live; P2S_BIN measures another pcap2spans build (before/after figures).
# The loop's own time varies with the machine's load (page cache, other processes):
# compare figures from one run only.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mix=${BENCH_MIX:-web}
dir=${BENCH_DIR:-/tmp/spanfold-bench-$mix}
runs=${BENCH_RUNS:-5}
truns=${BENCH_TSHARK_RUNS:-1}
p2s=${P2S_BIN:-$top/bin/pcap2spans}
[ -x "$p2s" ] || { echo "bench-pcap2spans: build bin/pcap2spans first (make)"; exit 2; }
if [ ! -s "$dir/bench.pcap" ]; then
    BENCH_MIX=$mix "$top/scripts/gen-bench-pcap.sh" "$dir" || {
        echo "bench-pcap2spans: cannot generate the capture (needs root, nginx, h2load, tcpdump)"; exit 2; }
fi
f=$dir/bench.pcap f10=$dir/bench10.pcap
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/pcap_loop" "$top/scripts/bench/pcap_loop.c" $(pkg-config --cflags --libs libpcap) || exit 2

. "$top/scripts/bench/measure.sh"
runn() { bench_runs "$@"; }
db_run() { rm -f "$tmp/b.db"*; "$p2s" --quiet --db "$tmp/b.db" "$1"; }
export -f db_run; export p2s tmp

mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN {printf "%.1f", b / 1e6}')
echo "capture: $f ($mb MB, mix $mix)"
read -r loop_cpu _ < <(runn "$runs" "$tmp/pcap_loop" "$f")
read -r nd_cpu nd_rss < <(runn "$runs" "$p2s" --quiet --ndjson "$f")
read -r db_cpu _ < <(runn "$runs" bash -c 'db_run "$0"' "$f")
spans=$("$p2s" --quiet --ndjson "$f" | wc -l)
rate() { awk -v m="$mb" -v c="$1" 'BEGIN {printf "%.0f", (c > 0) ? m / c : 0}'; }
echo "bare libpcap loop:        ${loop_cpu} s CPU  $(rate "$loop_cpu") MB/s"
echo "pcap2spans --ndjson:      ${nd_cpu} s CPU  $(rate "$nd_cpu") MB/s  ($spans spans)"
echo "pcap2spans --db:          ${db_cpu} s CPU  $(rate "$db_cpu") MB/s"
awk -v l="$loop_cpu" -v n="$nd_cpu" -v d="$db_cpu" 'BEGIN {
    printf "ratio: pcap2spans --ndjson throughput = %.1f %% of the bare loop (goal >= 25 %%)\n", 100 * l / n
    printf "ratio: pcap2spans --db throughput     = %.1f %% of the bare loop\n", 100 * l / d }'

if [ "$truns" = 0 ]; then
    echo "tshark: skipped (BENCH_TSHARK_RUNS=0)"
elif command -v tshark >/dev/null; then
    read -r ts_cpu ts_rss < <(runn "$truns" tshark -r "$f" -d tcp.port==18580,http -d tcp.port==18581,http2 -T fields \
        -e http.request.line -e http.response.code -e http2.header.name -e http2.header.value)
    echo "tshark -T fields:         ${ts_cpu} s CPU  $(rate "$ts_cpu") MB/s  peak RSS $((ts_rss / 1024)) MB ($truns run(s))"
    awk -v t="$ts_cpu" -v n="$nd_cpu" 'BEGIN {printf "ratio: pcap2spans is %.0fx faster than tshark (goal >= 50x)\n", t / n}'
else
    echo "tshark: not installed (apt-get install tshark); speed ratio against it not measured"
fi

if [ -s "$f10" ]; then
    read -r _ rss10 < <(runn 1 "$p2s" --quiet --ndjson "$f10")
    awk -v a="$nd_rss" -v b="$rss10" 'BEGIN {
        printf "peak RSS: %d KB on the file, %d KB on 10x the traffic: %+.1f %% (goal <= +10 %%)\n", a, b, 100 * (b - a) / a }'
else
    echo "peak RSS: $f10 missing (scripts/gen-bench-pcap.sh makes it)"
fi

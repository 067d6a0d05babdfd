#!/usr/bin/env bash
# Benchmark the pcap2spans TLS layer (speed against cleartext and tshark) on >= 100 MB of HTTP/2 recorded
# twice by scripts/gen-bench-tls.sh: over TLS 1.3 with its key log, and in cleartext (h2c).
#   1. `pcap2spans --keylog K --ndjson` on the TLS capture (decrypt + spans) against
#      `pcap2spans --ndjson` on the cleartext capture of the same requests    goal <= 3x
#   2. against `tshark -o tls.keylog_file:K -T fields -e http2.header.name
#      -e http2.header.value` on the TLS capture (decrypt + the same fields)  goal >= 20x
# Times are CPU seconds (user + sys, wait4 of each run: scripts/bench/measure.sh), medians
# of BENCH_RUNS interleaved rounds (default 3; tshark in the first BENCH_TSHARK_RUNS,
# default 3, 0 skips it).  BENCH_TLS_MIX=web (default; mean response ~10 KB) or rpc
# (64-byte responses: nearly all headers) picks the traffic; BENCH_TLS_DIR overrides
# where the captures live (default /tmp/spanfold-bench-tls-MIX; generated when missing,
# needs root).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mix=${BENCH_TLS_MIX:-web}
dir=${BENCH_TLS_DIR:-/tmp/spanfold-bench-tls-$mix}
runs=${BENCH_RUNS:-3}
truns=${BENCH_TSHARK_RUNS:-3}
p2s=$top/bin/pcap2spans
[ -x "$p2s" ] || { echo "bench-tls: build bin/pcap2spans first (make)"; exit 2; }
if [ ! -s "$dir/tls.pcap" ] || [ ! -s "$dir/h2c.pcap" ]; then
    BENCH_TLS_MIX=$mix "$top/scripts/gen-bench-tls.sh" "$dir" || {
        echo "bench-tls: cannot generate the captures (needs root, nginx, h2load, tcpdump)"; exit 2; }
fi
tls=$dir/tls.pcap h2c=$dir/h2c.pcap key=$dir/tls.keylog
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

. "$top/scripts/bench/measure.sh"
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN {printf "%.1f", b / 1e6}'; }

s_tls=$("$p2s" --quiet --ndjson --keylog "$key" "$tls" | wc -l)
s_h2c=$("$p2s" --quiet --ndjson "$h2c" | wc -l)
echo "mix $mix; captures: $tls ($(mb "$tls") MB, $s_tls spans decrypted), $h2c ($(mb "$h2c") MB, $s_h2c spans)"
if [ "$s_tls" != "$s_h2c" ] || [ "$s_tls" = 0 ]; then
    echo "bench-tls: the two captures do not give the same number of spans; not comparable"
    exit 1
fi
# Interleaved rounds (TLS, cleartext, tshark in each), so that a change in the machine's
# load reaches every command alike; ratios are medians of the per-round ratios.
has_tshark=0
if [ "$truns" != 0 ] && command -v tshark >/dev/null; then has_tshark=1; fi
for r in $(seq "$runs"); do
    a=$(bench_measure "$p2s" --quiet --ndjson --keylog "$key" "$tls")
    b=$(bench_measure "$p2s" --quiet --ndjson "$h2c")
    a=${a% *} b=${b% *}
    echo "$a" >>"$tmp/tls"
    echo "$b" >>"$tmp/h2c"
    bench_ratio "$a" "$b" >>"$tmp/r_clear"
    if [ "$has_tshark" = 1 ] && [ "$r" -le "$truns" ]; then
        t=$(bench_measure tshark -r "$tls" -o "tls.keylog_file:$key" -T fields \
            -e http2.header.name -e http2.header.value)
        echo "${t% *}" >>"$tmp/ts"
        bench_ratio "${t% *}" "$a" >>"$tmp/r_ts"
    fi
done
rounds() { bench_rounds "$tmp/$1" "$2"; }
echo "pcap2spans --keylog (TLS 1.3):  $(bench_median <"$tmp/tls") s CPU (median of $runs)"
echo "pcap2spans (cleartext h2c):     $(bench_median <"$tmp/h2c") s CPU (median of $runs)"
printf 'ratio: decrypting + spans = %.2fx the CPU of spans from cleartext' \
    "$(bench_median <"$tmp/r_clear")"
printf ' (goal <= 3x; rounds: %s)\n' "$(rounds r_clear %.2f)"
if [ "$truns" = 0 ]; then
    echo "tshark: skipped (BENCH_TSHARK_RUNS=0)"
elif [ "$has_tshark" = 1 ]; then
    echo "tshark -o tls.keylog_file -T fields: $(bench_median <"$tmp/ts") s CPU" \
        "(median of $(wc -l <"$tmp/ts"))"
    printf 'ratio: pcap2spans is %.1fx faster than tshark decrypting the same file' \
        "$(bench_median <"$tmp/r_ts")"
    printf ' (goal >= 20x; rounds: %s)\n' "$(rounds r_ts %.1f)"
else
    echo "tshark: not installed (apt-get install tshark); speed ratio against it not measured"
fi

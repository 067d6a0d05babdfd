#!/usr/bin/env bash
# Instructions pcap2spans spends, in all and in the trace-context parser (lib/sf_tracectx and
# lib/sf_tc_*), on a bench capture with --ndjson; with PEER_P2S (another build, e.g. the one
# before a change) the same for it, the ratio, and whether both write the same NDJSON.
# Instruction counts are exact and repeat from run to run, so each build runs once: under
# `perf stat -e instructions:u` where the machine has the counter, else under callgrind
# (which also gives the parser's share: the inclusive cost of sf_tracectx_set_add_id and
# sf_tracectx_set_finish).  The capture is BENCH_DIR/bench.pcap (default the rpc mix,
# /tmp/spanfold-bench-rpc, made by scripts/gen-bench-pcap.sh: 3 trace contexts per request).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-/tmp/spanfold-bench-${BENCH_MIX:-rpc}${BENCH_MTU:+-mtu$BENCH_MTU}}
pcap=$dir/bench.pcap
[ -f "$pcap" ] || { echo "bench-tracectx: no capture $pcap (scripts/gen-bench-pcap.sh); skipped"; exit 0; }
work=$(mktemp -d /tmp/bench-tracectx.XXXXXX); trap 'rm -rf "$work"' EXIT

if perf stat -x, -e instructions:u true 2>&1 | grep -q '^[0-9]'; then
    how=perf
elif command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    how=callgrind
else
    echo "bench-tracectx: neither an instructions counter (perf) nor valgrind; skipped"; exit 0
fi

# count LABEL BIN: prints "LABEL total parser md5" (parser "-" under perf)
count() {
    local out=$work/$1
    if [ $how = perf ]; then
        perf stat -x, -e instructions:u -o "$out.perf" "$2" --quiet --ndjson "$pcap" >"$out.json"
        echo "$1 $(grep instructions "$out.perf" | cut -d, -f1) - $(md5sum <"$out.json" | cut -c1-32)"
    else
        valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$2" --quiet --ndjson "$pcap" \
            >"$out.json" 2>/dev/null
        callgrind_annotate --inclusive=yes "$out.cg" >"$out.txt" 2>/dev/null
        local total parser
        total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' "$out.txt")
        # the functions' own summary lines ("N (p%)  file:function [binary]"), not call sites
        parser=$(awk '$0 ~ /:sf_tracectx_set_(add_id|finish) \[/ && !/=>/ { gsub(",", "", $1); s += $1 }
                      END { print s + 0 }' "$out.txt")
        echo "$1 $total $parser $(md5sum <"$out.json" | cut -c1-32)"
    fi
}

echo "capture $pcap ($(du -m "$pcap" | cut -f1) MB), --ndjson, instructions by $how"
read -r _ t1 p1 m1 < <(count this "$top/bin/pcap2spans")
printf '%-6s %15s instructions, trace-context parser %s\n' this "$t1" "$p1"
[ -n "${PEER_P2S:-}" ] || exit 0
read -r _ t0 p0 m0 < <(count peer "$PEER_P2S")
printf '%-6s %15s instructions, trace-context parser %s (%s)\n' peer "$t0" "$p0" "$PEER_P2S"
awk -v a="$t1" -v b="$t0" 'BEGIN { printf "this / peer: %.4f in all", a / b }'
[ "$p0" != - ] && [ "$p0" -gt 0 ] && awk -v a="$p1" -v b="$p0" 'BEGIN { printf ", %.4f in the parser", a / b }'
echo
if [ "$m0" = "$m1" ]; then echo "NDJSON identical ($m1)"; else echo "NDJSON differs: $m0 (peer) $m1 (this)"; exit 1; fi

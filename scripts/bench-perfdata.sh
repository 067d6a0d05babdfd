#!/usr/bin/env bash
# Benchmark perf-fold reading perf.data itself (issue #32) against the pipeline it
# replaces, `perf script -F comm,pid,tid,time,period,event,ip,sym,dso | perf-fold`, in one
# run: a frame-pointer recording made here by the installed perf (BENCH_PERFDATA: one of
# your own instead), the two outputs checked byte-identical, then the CPU time (user +
# sys, the pipeline's both processes) of RUNS interleaved rounds, medians and the
# speed-up (goal of #32: >= 10x on a frame-pointer recording).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
pf=$top/bin/perf-fold
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-perfdata.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -x "$pf" ] || { echo "bench-perfdata: $pf not built (make bin/perf-fold)"; exit 2; }
command -v perf >/dev/null || { echo "perf.data: not measured (perf is not installed)"; exit 0; }
cp "$pf" "$tmp/perf-fold" && pf=$tmp/perf-fold
. "$top/scripts/bench/measure.sh"
data=${BENCH_PERFDATA:-}
if [ -z "$data" ]; then
    data=$tmp/xz.data
    head -c 60000000 /dev/urandom >"$tmp/rnd"
    ev=cpu-clock
    perf record -q -k mono -g -F 4999 -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1 ||
        ev=cpu-clock:u
    perf record -q -k mono -g -F 4999 -e "$ev" -o "$data" xz -T2 -6 -c "$tmp/rnd" >/dev/null 2>&1 ||
        { echo "perf.data: not measured (perf record fails here)"; exit 0; }
fi
fields=comm,pid,tid,time,period,event,ip,sym,dso
# cpu_all CMD...: the CPU seconds of CMD and every process it starts (perf stat's
# task-clock counts the children a program does not wait for, which wait4 misses: perf
# script's addr2line children are of those)
cpu_all() {
    perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" >/dev/null 2>&1
    awk -F, '$3 == "task-clock" || $3 ~ /^task-clock/ {printf "%.4f\n", $1 / 1000}' "$tmp/stat"
}
# compare NAME DATA GOAL MEASURE: the two outputs byte-identical, then RUNS interleaved
# rounds of MEASURE (bench_measure, or cpu_all where children do work)
compare() {
    local name=$1 data=$2 goal=$3 measure=$4
    perf script -i "$data" -F $fields --ns 2>/dev/null | "$pf" >"$tmp/text.folded"
    "$pf" "$data" >"$tmp/data.folded" 2>/dev/null
    if cmp -s "$tmp/text.folded" "$tmp/data.folded"; then
        echo "perf-fold on perf.data ($name): byte-identical to perf script | perf-fold ($(wc -l <"$tmp/text.folded") stacks, $(du -k "$data" | cut -f1) KB of perf.data)"
    else
        echo "perf-fold on perf.data ($name): DIFFERS from perf script | perf-fold"
        return 1
    fi
    : >"$tmp/a"; : >"$tmp/b"; : >"$tmp/r"
    for _ in $(seq "$runs"); do
        a=$($measure "$pf" "$data")
        b=$($measure bash -c 'perf script -i "$0" -F "$1" --ns 2>/dev/null | "$2" >/dev/null' \
            "$data" "$fields" "$pf")
        echo "${a% *}" >>"$tmp/a"; echo "${b% *}" >>"$tmp/b"
        bench_ratio "${b% *}" "${a% *}" >>"$tmp/r"
    done
    printf 'perf-fold FILE (%s): %s s CPU; perf script | perf-fold: %s s CPU; speed-up %.1fx (rounds %s; goal >= %sx)\n' \
        "$name" "$(bench_median <"$tmp/a")" "$(bench_median <"$tmp/b")" "$(bench_median <"$tmp/r")" \
        "$(bench_rounds "$tmp/r" %.1f)" "$goal"
}
compare "frame pointers" "$data" 10 bench_measure || exit 1
# --call-graph dwarf (BENCH_PERFDATA_DWARF: one of your own instead): python3 through a
# shell; the inline frames come from addr2line children on both sides, whose CPU time
# is counted (cpu_all)
dwarf=${BENCH_PERFDATA_DWARF:-}
if [ -z "$dwarf" ]; then
    dwarf=$tmp/dwarf.data
    perf record -q -k mono --call-graph dwarf,8192 -c 300000 -e cpu-clock:u -o "$dwarf" sh -c \
        'python3 -c "import json; [json.dumps({\"a\": i}) for i in range(100000)]"' >/dev/null 2>&1 ||
        { echo "perf.data (dwarf): not measured (perf record --call-graph dwarf fails here)"; exit 0; }
fi
compare "--call-graph dwarf" "$dwarf" 5 cpu_all || exit 1

#!/usr/bin/env bash
# Benchmark perf-fold against FlameGraph's stackcollapse-perf.pl and `wc -l` on a
# large real `perf script` text, in one run:
#   - CPU time (user+sys), median of RUNS runs of each tool, file in page cache
#   - perf-fold output checked byte-identical to stackcollapse-perf.pl's
#   - speed-up over stackcollapse-perf.pl (target >= 40x)
#   - throughput relative to `wc -l` (target >= 15 %)
#   - peak RSS of perf-fold on the file and on the file twice (stdin), which
#     must stay flat: memory grows with distinct stacks, not input size
#   - perf-fold --db (a new database per run) against its folded text output on the
#     same input, per-round CPU ratios of RUNS interleaved rounds (goal <= 1.5x); without
#     the large input, on a smaller one: 200 copies of samples/tracefs/perf.txt
# Input: BENCH_PERF_FILE (default build/bench/bench.perf.txt), made by
# scripts/gen-bench-perf.sh.  FlameGraph: FLAMEGRAPH_DIR (a checkout outside
# this repository, FLAMEGRAPH_DIR).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
pf=$top/bin/perf-fold
in=${BENCH_PERF_FILE:-$top/build/bench/bench.perf.txt}
fg=${FLAMEGRAPH_DIR:-}
runs=${RUNS:-5} # the machine is shared: medians of 5+
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-perf-fold.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ -x "$pf" ] || { echo "bench-perf-fold: $pf not built (make bin/perf-fold)"; exit 2; }
# a private copy: a rebuild in the shared tree must not swap the binary mid-run
cp "$pf" "$tmp/perf-fold" && pf=$tmp/perf-fold
[ -x /usr/bin/time ] || { echo "bench-perf-fold: GNU time (/usr/bin/time) is needed"; exit 2; }
. "$top/scripts/bench/measure.sh"
. "$top/scripts/bench/sqlite_floor.sh"

# perf-fold --db against perf-fold's text output on input $1 (what it is: $2)
db_ratio() {
    local f=$1 what=$2 t d
    : >"$tmp/r_db"; : >"$tmp/c_txt"; : >"$tmp/c_db"
    for _ in $(seq "$runs"); do
        t=$(bench_measure "$pf" -q "$f")
        rm -f "$tmp/b.db"*
        d=$(bench_measure "$pf" -q --db "$tmp/b.db" "$f")
        echo "${t% *}" >>"$tmp/c_txt"; echo "${d% *}" >>"$tmp/c_db"
        bench_ratio "${d% *}" "${t% *}" >>"$tmp/r_db"
    done
    echo "perf-fold text: $(bench_median <"$tmp/c_txt") s CPU, perf-fold --db: $(bench_median <"$tmp/c_db") s CPU ($what; $(sqlite3 "$tmp/b.db" 'SELECT count(*) FROM samples' 2>/dev/null) samples)"
    printf 'ratio: perf-fold --db CPU = %.2fx its text output (goal <= 1.5x; rounds: %s)\n' \
        "$(bench_median <"$tmp/r_db")" "$(bench_rounds "$tmp/r_db" %.2f)"
    # SQLite's own cost of storing the same rows (scripts/bench/sqlite_floor.sh)
    sqlite_floor_prepare "$tmp/b.db" "$tmp/floor.db" "$tmp/floor.sql" || return 0
    : >"$tmp/r_fl"
    for _ in $(seq "$runs"); do
        rm -f "$tmp/fl.db"*; cp "$tmp/floor.db" "$tmp/fl.db"
        d=$(bench_measure bash -c 'sqlite3 "$0" <"$1"' "$tmp/fl.db" "$tmp/floor.sql")
        bench_ratio "${d% *}" "$(bench_median <"$tmp/c_txt")" >>"$tmp/r_fl"
    done
    printf 'ratio: SQLite alone, storing the same rows = %.2fx perf-fold text output (rounds: %s)\n' \
        "$(bench_median <"$tmp/r_fl")" "$(bench_rounds "$tmp/r_fl" %.2f)"
}

if [ ! -s "$in" ]; then
    echo "bench-perf-fold: no input $in"
    echo "bench-perf-fold: generate it with scripts/gen-bench-perf.sh (records real programs, ~5 min)"
    for _ in $(seq 200); do cat "$top/samples/tracefs/perf.txt"; done >"$tmp/small.perf.txt"
    db_ratio "$tmp/small.perf.txt" "the large input missing: 200 copies of samples/tracefs/perf.txt, $(($(stat -c %s "$tmp/small.perf.txt") / 1000000)) MB"
    exit 0
fi
mb=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "input: $in ($mb MB, $(wc -l <"$in") lines)"

# cpu SECONDS and peak RSS KB of one command (stdout to $2, stdin from $3)
measure() {
    local out=$1 stdin=$2; shift 2
    /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" <"$stdin" >"$out" 2>/dev/null
    awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$tmp/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
series() { # name runs cmd... -> prints median cpu; leaves rss in $tmp/rss.<name>
    local name=$1 k=$2; shift 2
    : >"$tmp/cpu.$name"
    for _ in $(seq "$k"); do
        measure "$tmp/out.$name" /dev/null "$@" >"$tmp/m"
        cut -d' ' -f1 "$tmp/m" >>"$tmp/cpu.$name"
        cut -d' ' -f2 "$tmp/m" >"$tmp/rss.$name"
    done
    median <"$tmp/cpu.$name"
}
cat "$in" >/dev/null # page cache

pf_cpu=$(series perf-fold "$runs" "$pf" -q "$in")
wc_cpu=$(series wc "$runs" wc -l "$in")
echo "perf-fold:  median CPU of $runs runs $(awk -v c="$pf_cpu" -v m="$mb" 'BEGIN { printf "%.2f s = %.0f MB/s", c, m / c }')"
echo "wc -l:      median CPU of $runs runs $(awk -v c="$wc_cpu" -v m="$mb" 'BEGIN { printf "%.3f s = %.0f MB/s", c, m / c }')"
awk -v p="$pf_cpu" -v w="$wc_cpu" 'BEGIN { r = w / p * 100;
    printf "ratio: perf-fold throughput = %.1f %% of wc -l (target >= 15 %%): %s\n", r, (r >= 15 ? "met" : "NOT met") }'

if [ -n "$fg" ] && [ -f "$fg/stackcollapse-perf.pl" ]; then
    pl_cpu=$(series perl "$runs" perl "$fg/stackcollapse-perf.pl" "$in")
    echo "stackcollapse-perf.pl: median CPU of $runs runs $(awk -v c="$pl_cpu" -v m="$mb" 'BEGIN { printf "%.1f s = %.1f MB/s", c, m / c }')"
    if cmp -s "$tmp/out.perl" "$tmp/out.perf-fold"; then
        echo "output: identical to stackcollapse-perf.pl ($(wc -l <"$tmp/out.perf-fold") stacks)"
    else
        echo "output: DIFFERS from stackcollapse-perf.pl"
    fi
    awk -v p="$pf_cpu" -v l="$pl_cpu" 'BEGIN { r = l / p;
        printf "ratio: perf-fold is %.1fx faster than stackcollapse-perf.pl (target >= 40x): %s\n", r, (r >= 40 ? "met" : "NOT met") }'
else
    echo "stackcollapse-perf.pl: FlameGraph not found (set FLAMEGRAPH_DIR to a checkout); no ratio"
fi

rss1=$(cat "$tmp/rss.perf-fold")
cat "$in" "$in" | /usr/bin/time -f '%M' -o "$tmp/time2" "$pf" -q - >/dev/null 2>&1
rss2=$(tail -n 1 "$tmp/time2")
awk -v a="$rss1" -v b="$rss2" 'BEGIN { printf "peak RSS: %.1f MB on 1x, %.1f MB on 2x input (ratio %.2f)\n", a / 1024, b / 1024, b / a }'
db_ratio "$in" "$mb MB"

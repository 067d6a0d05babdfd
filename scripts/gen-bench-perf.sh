#!/usr/bin/env bash
# Generate a large real `perf script` text for scripts/bench-perf-fold.sh.
#
# Records real programs with call graphs (perf record -g, cpu-clock, -k mono):
#   build   a from-scratch build of this repository's library and tools (gcc/cc1/as/ld)
#   xz      xz -6 compressing a generated text file
#   perl    FlameGraph-like Perl: sorting and hashing words
#   python  python3 doing JSON and regex work
#   sqlite  sqlite3 building and querying a table
#   files   find + cat over /usr (kernel-heavy, deep kernel stacks)
#   git     git log -p of this repository
# Each recording is converted with `perf script --header` and appended to the
# output until it reaches the target size.  Recording 400 MB of stacks takes long,
# so when one round of distinct recordings is smaller than the target, rounds are
# repeated (each round is a new recording: new pids, times, stacks) up to
# MAX_ROUNDS; only then are existing texts concatenated again to reach the size.
#
# Usage: scripts/gen-bench-perf.sh [OUT [SIZE_MB]]
#   OUT      default build/bench/bench.perf.txt (under build/, never committed)
#   SIZE_MB  default 400
# Needs root (or perf_event_paranoid <= 1) and the perf tool (linux-perf).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench/bench.perf.txt}
size_mb=${2:-400}
max_rounds=${MAX_ROUNDS:-12}
freq=${PERF_FREQ:-10000}
case "$out" in "$top"/*) echo "gen-bench-perf: refusing to write inside the repository: $out" >&2; exit 2;; esac
command -v perf >/dev/null || { echo "gen-bench-perf: perf not found (apt-get install linux-perf)" >&2; exit 2; }
dir=$(dirname "$out")
mkdir -p "$dir"
work=$(mktemp -d "$dir/gen.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$out"

seq 1 400000 | awk '{ printf "line %d %x %s\n", $1, $1 * 2654435761 % 4294967296, ($1 % 7 ? "alpha" : "omega") }' >"$work/words.txt"

# The workloads live in a script file so that perf's "# cmdline" header stays
# one line.
cat >"$work/wl.sh" <<'WL'
work=$1 top=$2
case $3 in
build)
    rm -rf "$work/src" && mkdir -p "$work/src"
    (cd "$top" && git ls-files -z lib perf-fold | xargs -0 cp --parents -t "$work/src")
    cd "$work/src"
    for f in lib/*.c perf-fold/*.c; do
        gcc -O2 -g -std=c11 -D_GNU_SOURCE -Ilib -I"$top/build/gen" -c "$f" -o /dev/null || true
    done ;;
xz) xz -6 -c "$work/words.txt" >/dev/null ;;
perl)
    perl -e 'my %h; while (<>) { for my $w (split) { $h{$w}++ } }
             my @k = sort { $h{$b} <=> $h{$a} || $a cmp $b } keys %h; print scalar(@k), "\n";' \
        "$work/words.txt" >/dev/null ;;
python)
    python3 -c '
import json, re
rows = [{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 13)]} for i in range(150000)]
back = json.loads(json.dumps(rows))
pat = re.compile(r"n(\d+)7\b")
print(len(back), sum(1 for r in back if pat.match(r["name"])))' >/dev/null ;;
sqlite)
    sqlite3 ":memory:" "CREATE TABLE t(a INTEGER, b TEXT);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)
        INSERT INTO t SELECT x, printf('%x-%d', x * 7919, x % 97) FROM c;
        CREATE INDEX tb ON t(b); SELECT count(*), max(b) FROM t GROUP BY a % 101;" >/dev/null ;;
files)
    # kernel-heavy: directory walks, stat, reads (deep kernel stacks)
    find /usr/lib /usr/share -xdev -type f -size +2k 2>/dev/null | head -n 20000 |
        xargs -d '\n' cat 2>/dev/null | cksum >/dev/null ;;
git) git -C "$top" log -p --stat >/dev/null 2>&1 ;;
esac
WL

round=0
bytes() { stat -c %s "$out"; }
while [ "$(bytes)" -lt $((size_mb * 1024 * 1024)) ] && [ "$round" -lt "$max_rounds" ]; do
    round=$((round + 1))
    for wl in build xz perl python sqlite files git; do
        data="$work/$wl.data"
        perf record -q -g -k mono -e cpu-clock -F "$freq" -o "$data" -- \
            bash "$work/wl.sh" "$work" "$top" "$wl" >/dev/null 2>&1 || true
        perf script --header -i "$data" >>"$out" 2>/dev/null || true
        rm -f "$data"
        echo "gen-bench-perf: round $round $wl: $(( $(bytes) / 1048576 )) MB" >&2
    done
done
# Still short: append copies of what was recorded (documented in the benchmark output).
if [ "$(bytes)" -lt $((size_mb * 1024 * 1024)) ]; then
    cp "$out" "$work/once.txt"
    while [ "$(bytes)" -lt $((size_mb * 1024 * 1024)) ]; do cat "$work/once.txt" >>"$out"; done
    echo "gen-bench-perf: recorded $(stat -c %s "$work/once.txt") bytes in $round rounds; repeated to reach ${size_mb} MB" >&2
fi
echo "gen-bench-perf: wrote $out ($(( $(bytes) / 1048576 )) MB)" >&2

#!/usr/bin/env bash
# Generate a large folded-stack file for scripts/bench-flamegraph.sh from a real profile.
#
# The source is a real fold: by default the corpus' example-perf-stacks (FlameGraph's
# common benchmark input, a `perf record -g` profile, folded by stackcollapse-perf.pl), or
# any folded file given as SRC.  It is replicated until the output reaches SIZE_MB; replica
# k renames the leaf frame of every stack ("f" -> "f_rK") and, every 16 replicas, the
# process frame ("java" -> "java_g3"), so every line is a distinct stack and the frame tree
# keeps growing, as a long profile of many processes does.  The output is never written
# inside the repository.
#
# Usage: scripts/gen-bench-folded.sh [OUT [SIZE_MB [SRC]]]
#   OUT      default build/bench/bench.folded
#   SIZE_MB  default 110
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench/bench.folded}
size_mb=${2:-110}
src=${3:-$top/tests/data/corpus/flamegraph/example/example-perf-stacks-collapsed.txt}
case "$out" in "$top"/*) echo "gen-bench-folded: refusing to write inside the repository: $out" >&2; exit 2 ;; esac
[ -s "$src" ] || { echo "gen-bench-folded: source fold not found: $src" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
src_bytes=$(wc -c <"$src")
reps=$(( (size_mb * 1048576 + src_bytes - 1) / src_bytes ))
awk -v reps="$reps" '
    { line[NR] = $0 }
    END {
        for (k = 0; k < reps; k++)
            for (i = 1; i <= NR; i++) {
                s = line[i]; c = s; sub(/.* /, "", c); s = substr(s, 1, length(s) - length(c) - 1)
                n = split(s, f, ";")
                if (k >= 16) f[1] = f[1] "_g" int(k / 16)
                if (k > 0) f[n] = f[n] "_r" k
                out = f[1]; for (j = 2; j <= n; j++) out = out ";" f[j]
                print out, c
            }
    }' "$src" >"$out.tmp"
mv "$out.tmp" "$out"
echo "gen-bench-folded: $out: $(wc -c <"$out") bytes, $(wc -l <"$out") stacks ($reps replicas of $src)"

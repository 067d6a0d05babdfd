#!/usr/bin/env bash
# Run each libFuzzer target for a bounded time with its seed corpus
# (tests/fuzz/corpus/<target>/); new crashes are saved under build/fuzz/crashes/.
# Usage: scripts/fuzz.sh SECONDS TARGET...
set -u
secs=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
# leaks inside the libraries we link (not ours) are listed there, with why
export LSAN_OPTIONS=suppressions=$top/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
for t in "$@"; do
    name=$(basename "$t")
    seeds=$top/tests/fuzz/corpus/$name
    work=$top/build/fuzz/work/$name
    crashes=$top/build/fuzz/crashes/$name
    mkdir -p "$work" "$crashes"
    args=("$work")
    [ -d "$seeds" ] && args+=("$seeds")
    echo "fuzz: $name for ${secs}s"
    if ! "$t" -max_total_time="$secs" -rss_limit_mb=2048 -artifact_prefix="$crashes/" \
        -print_final_stats=0 "${args[@]}" >"$top/build/fuzz/$name.log" 2>&1; then
        echo "fuzz: $name FAILED; see build/fuzz/$name.log and $crashes/"
        rc=1
    fi
done
exit $rc

#!/usr/bin/env bash
# Run every benchmark driver scripts/bench-*.sh.  Each compares a spanfold tool with
# its peer in the same run (CPU time, median of several runs) and prints ratios.
# Peer tools are found through environment variables (e.g. FLAMEGRAPH_DIR) and are
# never part of this repository.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
for b in "$top"/scripts/bench-*.sh; do
    [ -e "$b" ] || continue
    echo "=== $(basename "$b")"
    "$b" || rc=1
done
exit $rc

#!/usr/bin/env bash
# The main job end to end on the bundled samples/, into out/ (or $1).
# Runs every tool that is built; each stage says where its output is.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
bin=$top/bin
mkdir -p "$out"
db=$out/spans.db
rm -f "$db" "$db-wal" "$db-shm"
ran=0
stage() { echo "demo: $*"; }

for stage_script in "$top"/scripts/demo.d/*.sh; do
    [ -e "$stage_script" ] || continue
    # each stage is sourced with $top $bin $out $db set; it decides whether its tool exists
    # shellcheck source=/dev/null
    . "$stage_script"
    ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then
    echo "demo: no stages yet (scripts/demo.d/ is empty)" >&2
    exit 2
fi
stage "database: $db"

#!/usr/bin/env bash
# The demo on this machine, live: record the demo service under load (root), then run
# the main pipeline on that recording.
#
#   scripts/demo-live.sh [OUT [PHASE_SECONDS]]     (root; default out/live/, 15)
#
# OUT/recording/ gets the capture, the perf samples, the span markers and the manifest
# (scripts/record-demo.sh); OUT/ gets the database, flame graphs and report
# (scripts/demo.sh).  Exit status: that of the first step that failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out/live}
phase=${2:-15}
mkdir -p "$out"
"$top/scripts/record-demo.sh" "$out/recording" "$phase"
make -C "$top" --no-print-directory -s all >&2
exec "$top/scripts/demo.sh" "$out" "$out/recording"

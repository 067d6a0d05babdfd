#!/usr/bin/env bash
# Record samples/perf/{base,rerun,slow}.perf.txt: the workload of
# tests/perf-fold/live_spans.c (CPU in burn_in_span() inside "spans", burn_outside()
# between them; the slow variant adds extra_work() inside every span), with
#   perf record -k mono -g -F 499 -e cpu-clock; perf script --header
# Needs root (or perf_event_paranoid <= 1) and linux-perf.  Used by the demo
# (scripts/demo.d/20-perf-fold.sh) to show the diff gate failing on a real
# regression and passing on a rerun.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/live_spans" "$top/tests/perf-fold/live_spans.c"
for v in base:0 rerun:0 slow:1; do
    name=${v%%:*} slow=${v##*:}
    perf record -q -k mono -g -F 499 -e cpu-clock -o "$tmp/$name.data" -- \
        "$tmp/live_spans" - 12 "$slow" >/dev/null
    # the binary's temporary path is replaced so the text does not depend on it
    perf script --header -i "$tmp/$name.data" | sed "s|$tmp/live_spans|/usr/local/bin/live_spans|g" \
        >"$here/$name.perf.txt"
done
ls -l "$here"/*.perf.txt

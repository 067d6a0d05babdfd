#!/usr/bin/env bash
# The main job end to end on the bundled recording of the demo service, into out/.
#
#   scripts/demo.sh [OUT [SAMPLES]]      (default out/ and samples/demo/; no root needed)
#
# SAMPLES is a recording made by scripts/record-demo.sh: demo.pcap (packets),
# perf.txt or perf.txt.gz (perf script --header), markers.txt (spantrace span
# markers) and MANIFEST.json.  The stages in scripts/demo.d/ run in name order, each
# sourced with $top $bin $out $db $samples set and the helpers below:
#   10 pcap2spans     packets -> spans (+ the protocol samples of samples/pcap as NDJSON)
#   20 perf-fold      perf samples -> database, all stacks folded; the CI gate on samples/perf
#   30 tracefs2spans  span markers -> span intervals, clock fit, samples get their span
#   40 fold-groups    perf-fold --group-by: per endpoint, gRPC method, sampled, span;
#                     the slowest 5 % of requests; slow vs normal phase and their diff
#   50 flamegraph     SVG flame graphs of all of those, the differential graph
#   60 inflect        inflection points, sampling drift, clock drift: the report
#   65 export         OTLP/JSON, Zipkin, Perfetto, speedscope and pprof files
#   70 findings       what was found, next to what the manifest says happened
# Each stage says where its output is; the last lines list the main results.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
samples=${2:-$top/samples/demo}
bin=${SPANFOLD_BIN:-$top/bin}
mkdir -p "$out"
out=$(cd "$out" && pwd)
db=$out/spans.db
rm -f "$db" "$db-wal" "$db-shm"
stage() { echo "demo: $*"; }
# manifest KEY: a top-level number or string of $samples/MANIFEST.json (indent 1)
manifest() {
    sed -n "s/^ \{1,2\}\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$samples/MANIFEST.json" | head -n 1
}
# perf_cat: the recording's perf script text, decompressed when it was gzipped
perf_cat() {
    if [ -f "$samples/perf.txt.gz" ]; then zcat "$samples/perf.txt.gz"; else cat "$samples/perf.txt"; fi
}
for f in demo.pcap markers.txt MANIFEST.json; do
    [ -f "$samples/$f" ] || { echo "demo: $samples/$f missing (scripts/record-demo.sh records it)" >&2; exit 2; }
done
[ -f "$samples/perf.txt" ] || [ -f "$samples/perf.txt.gz" ] ||
    { echo "demo: $samples/perf.txt(.gz) missing" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "demo: needs the sqlite3 shell (Debian sqlite3)" >&2; exit 2; }

t_start=$(date +%s.%N)
ran=0
for stage_script in "$top"/scripts/demo.d/*.sh; do
    [ -e "$stage_script" ] || continue
    # shellcheck source=/dev/null
    . "$stage_script"
    ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then
    echo "demo: no stages (scripts/demo.d/ is empty)" >&2
    exit 2
fi
echo
stage "done in $(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s. Main results:"
for r in "$db|the database (open it with sqlite3)" \
    "$out/flamegraph/all.svg|flame graph of every CPU sample" \
    "$out/flamegraph/by-endpoint.svg|flame graph per endpoint (one root per span group)" \
    "$out/flamegraph/slow-diff.svg|differential flame graph, slow vs normal phase" \
    "$out/flamegraph/slowest-5pct.svg|flame graph of the slowest 5 % of requests" \
    "$out/report/report.html|inflection and sampling-drift report" \
    "$out/export|exports: OTLP (Jaeger), Zipkin, Perfetto, speedscope, pprof" \
    "$out/findings.txt|the findings above"; do
    if [ -e "${r%%|*}" ]; then printf '  %-52s %s\n' "${r#*|}" "${r%%|*}"; fi
done

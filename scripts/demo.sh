#!/usr/bin/env bash
# The main job end to end on the bundled recording of the demo service, into out/: exactly
# what a user types on their own incident, on samples/demo/.
#
#   scripts/demo.sh [OUT [RECORDING]]      (default out/ and samples/demo/; no root needed)
#
# RECORDING is any folder of artefacts (scripts/record-demo.sh makes one: demo.pcap,
# perf.txt, markers.txt, and a MANIFEST.json that nothing here reads). The steps:
#   1. spanfold ingest   every file by content -> OUT/spans.db (clocks fitted, samples
#                        attributed to spans)
#   2. spanfold report   OUT/report/report.html (one self-contained page) and findings.json
#   3. spanfold stacks   the extra pictures: all CPU, the slowest 5 %, slowest vs rest
#   4. perf-fold diff    the CI gate on samples/perf (a rerun passes, a regression fails)
#   5. spanfold export   the joins as OTLP, Zipkin, Perfetto, speedscope and pprof
# The last lines list the results and the report's verdict.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
rec=${2:-$top/samples/demo}
bin=${SPANFOLD_BIN:-$top/bin}
sf=$bin/spanfold
say() { echo "demo: $*"; }
[ -d "$rec" ] || { echo "demo: $rec: no such folder" >&2; exit 2; }
[ -x "$sf" ] || { echo "demo: $sf not built (make)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
db=$out/spans.db
rm -f "$db" "$db-wal" "$db-shm"
t_start=$(date +%s.%N)

# 1. every artefact of the recording, recognised by content
"$sf" ingest --db "$db" "$rec" 2>"$out/ingest.txt" || {
    rc=$?
    cat "$out/ingest.txt" >&2
    [ "$rc" -le 1 ] || { echo "demo: spanfold ingest failed (exit $rc)" >&2; exit 2; }
}
sed 's/^/  /' "$out/ingest.txt"
grep -q '^missing: no span markers' "$out/ingest.txt" &&
    { echo "demo: $rec has no span markers: there is nothing to join" >&2; exit 2; }

# 2. the report: verdict, timelines, inflections, drift, flame graphs, tables
"$sf" report --db "$db" --out "$out/report" 2>"$out/report.txt" || {
    cat "$out/report.txt" >&2
    echo "demo: spanfold report failed" >&2
    exit 2
}

# 3. flame graphs of chosen spans, beside the report
mkdir -p "$out/flamegraph" "$out/folded"
"$sf" stacks --db "$db" --title "CPU of every request of the demo service" \
    -o "$out/flamegraph/all.svg"
"$sf" stacks --db "$db" --slowest 5% --title "CPU of the slowest 5 % of requests" \
    -o "$out/flamegraph/slowest-5pct.svg"
"$sf" stacks --db "$db" --slowest 5% --folded >"$out/folded/slowest-5pct.folded"
"$sf" stacks --db "$db" --slowest 5% --vs rest \
    --title "The slowest 5 % of requests against the rest (red: more of their CPU)" \
    -o "$out/flamegraph/slowest-vs-rest.svg"
say "flame graphs: $out/flamegraph/ (open an .svg in a browser: click to zoom, Ctrl-F to search)"

# 4. the CI gate on two builds' profiles: a rerun passes, the slow build fails
gate=$top/samples/perf
if [ -f "$gate/base.perf.txt" ] && [ -f "$gate/slow.perf.txt" ]; then
    mkdir -p "$out/gate"
    for v in base rerun slow; do
        # counted in samples: the gate's statistics are about samples, not ns
        "$bin/perf-fold" --quiet --samples "$gate/$v.perf.txt" >"$out/gate/$v.folded"
    done
    for v in rerun slow; do
        rc=0
        "$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$out/gate/gate-$v.md" \
            "$out/gate/base.folded" "$out/gate/$v.folded" >"$out/gate/$v.diff" 2>/dev/null || rc=$?
        say "CI gate frame>+5pt, base against the $v build: exit $rc ($([ $rc = 0 ] && echo pass || echo fail)); $out/gate/gate-$v.md"
    done
fi

# 5. the joins in the formats other tools open
mkdir -p "$out/export"
for f in otlp:spans.otlp.jsonl zipkin:spans.zipkin.json chrome:trace.perfetto.json \
    speedscope:profiles.speedscope.json pprof:cpu.pprof.gz; do
    "$sf" export --db "$db" --format "${f%%:*}" -o "$out/export/${f#*:}" 2>>"$out/export/export.log"
done
say "exports: $out/export/ (OTLP for Jaeger, Zipkin, Perfetto, speedscope, pprof)"

echo
say "done in $(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s."
sed -n 's/^spanfold report: \(.*\) (window .*)$/  verdict: \1/p' "$out/report.txt"
for r in "$out/report/report.html|the report: one page, open it in a browser" \
    "$out/report/findings.json|the same findings for machines" \
    "$db|the database (open it with sqlite3)" \
    "$out/flamegraph/slowest-vs-rest.svg|differential flame graph, slowest 5 % vs the rest" \
    "$out/export|exports for Jaeger, Zipkin, Perfetto, speedscope, pprof"; do
    if [ -e "${r%%|*}" ]; then printf '  %-56s %s\n' "${r#*|}" "${r%%|*}"; fi
done

#!/usr/bin/env bash
# The main command's pipeline (scripts/demo.sh: spanfold ingest, report, stacks) on the
# committed demo recording (samples/demo/), into a temporary directory, checked against the
# recording's manifest by check_demo.py: every request is a span and an interval, the clock
# fit, every sample inside a span carries its id, the slow endpoint's heavy function is the
# top of its spans' CPU, the slow phase is an inflection within 1.5 s, the rate change is a
# drift.  Also: the run's outputs exist, it takes well under a minute, the demo scripts hold
# no SQL, and a recording without markers is refused clearly.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
sample=$top/samples/demo
tap_tmpdir t_demo

need=""
for t in spanfold perf-fold; do
    [ -x "$bin/$t" ] || need="$need $t"
done
for t in python3 sqlite3 gnuplot; do command -v "$t" >/dev/null || need="$need $t"; done
if [ -n "$need" ]; then
    tap_name="demo pipeline"; tap_skip_all "missing:$need"
fi

t0=$(date +%s.%N)
rc=0
SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out" "$sample" >"$tmp/demo.log" 2>&1 || rc=$?
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check_eval "scripts/demo.sh exits 0 on samples/demo (rc $rc)" '[ $rc = 0 ]'
[ $rc = 0 ] || sed 's/^/#   /' "$tmp/demo.log" | tail -n 20
check_eval "the whole pipeline takes well under a minute (${secs} s)" 'awk -v s="$secs" "BEGIN { exit !(s < 60) }"'
for f in spans.db report/report.html report/findings.json flamegraph/all.svg \
    flamegraph/slowest-5pct.svg flamegraph/slowest-vs-rest.svg folded/slowest-5pct.folded \
    export/spans.otlp.jsonl gate/gate-slow.md; do
    check_eval "output $f written" '[ -s "$tmp/out/$f" ]'
done
check_eval "the run prints where the report is and its verdict, naming the slow function" \
    'grep -q "report/report.html" "$tmp/demo.log" && grep -q "verdict: .*slow_regex_backtrack" "$tmp/demo.log"'
check_eval "the demo script holds no SQL: it runs spanfold" \
    '! grep -Eq "\b(SELECT|INSERT|UPDATE|DELETE)\b|sqlite3 +[\"$]" "$top/scripts/demo.sh"'
check_eval "the differential graph is a whole SVG that shows slow_regex_backtrack" \
    '[ "$(grep -c "<svg" "$tmp/out/flamegraph/slowest-vs-rest.svg")" = 1 ] && grep -q "</svg>" "$tmp/out/flamegraph/slowest-vs-rest.svg" &&
       grep -q "slow_regex_backtrack" "$tmp/out/flamegraph/slowest-vs-rest.svg"'
check_eval "the CI gate passes a rerun and fails the slow build" \
    'grep -q "CI gate frame>+5pt, base against the slow build: exit 1" "$tmp/demo.log" &&
       grep -q "CI gate frame>+5pt, base against the rerun build: exit 0" "$tmp/demo.log"'

# the per-phase folds check_demo.py reads, by spanfold stacks with the manifest's times
if [ $rc = 0 ]; then
    ep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["service"]["slow_endpoint"])' "$sample/MANIFEST.json")
    ts=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["slow_start_realtime_ns"])' "$sample/MANIFEST.json")
    iso() { python3 -c 'import datetime,sys; print(datetime.datetime.fromtimestamp(int(sys.argv[1]) / 1e9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))' "$1"; }
    "$bin/spanfold" stacks --db "$tmp/out/spans.db" --where "endpoint = \"$ep\"" --folded >"$tmp/out/folded/endpoint.folded"
    rate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["service"]["rate_initial"])' "$sample/MANIFEST.json")
    "$bin/spanfold" report --quiet --db "$tmp/out/spans.db" --out "$tmp/out/report-configured" --expect-rate "$rate"
    "$bin/spanfold" stacks --db "$tmp/out/spans.db" --where "endpoint = \"$ep\"" --during "..$(iso "$ts")" --folded >"$tmp/out/folded/slow-endpoint-normal.folded"
    "$bin/spanfold" stacks --db "$tmp/out/spans.db" --where "endpoint = \"$ep\"" --during "$(iso $((ts + 2000000000)))..$(iso $((ts + 12000000000)))" --folded >"$tmp/out/folded/slow-endpoint-slow.folded"
fi
if [ $rc = 0 ]; then
    out=$(python3 "$top/tests/demo/check_demo.py" "$tmp/out" "$sample" "$((n + 1))")
    printf '%s\n' "$out" | grep -v '^# next'
    next=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
    if [ -n "$next" ]; then n=$((next - 1)); else notok "check_demo.py crashed"; fi
fi

# the recorder gzips perf.txt over 1 MB: the same recording with perf.txt.gz gives the same join
mkdir -p "$tmp/gz"
cp "$sample/MANIFEST.json" "$sample/demo.pcap" "$sample/markers.txt" "$tmp/gz/"
gzip -c "$sample/perf.txt" >"$tmp/gz/perf.txt.gz"
rc=0
SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out-gz" "$tmp/gz" >/dev/null 2>&1 || rc=$?
q='SELECT count(*) || " " || count(span_id) FROM samples'
check_eval "perf.txt.gz is read through its compression: same samples, same attribution (rc $rc)" \
    '[ $rc = 0 ] && [ "$(sqlite3 "$tmp/out-gz/spans.db" "$q")" = "$(sqlite3 "$tmp/out/spans.db" "$q")" ]'

# a recording without span markers: exit 2, and why
mkdir -p "$tmp/broken"
cp "$sample/MANIFEST.json" "$sample/demo.pcap" "$sample/perf.txt" "$tmp/broken/"
rc=0
SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out2" "$tmp/broken" >/dev/null 2>"$tmp/err" || rc=$?
check_eval "a recording without markers is refused with exit 2 and the reason (rc $rc)" \
    '[ $rc = 2 ] && grep -q "no span markers" "$tmp/err"'
tap_plan

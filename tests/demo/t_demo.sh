#!/usr/bin/env bash
# The main command's pipeline (scripts/demo.sh) on the committed demo recording
# (samples/demo/), into a temporary directory, checked against the recording's manifest
# by check_demo.py: every request is a span and an interval, the clock fit, every sample
# inside a span carries its id, the slow endpoint's heavy function dominates its span
# group, the slow phase is an inflection point within one window, the rate change is a
# drift.  Also: the run's outputs exist, it takes well under a minute, and a recording
# with a file missing is refused clearly.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
sample=$top/samples/demo
n=1
tap_tmpdir t_demo
ok() { echo "ok $n - $1"; n=$((n + 1)); }
fail() { echo "not ok $n - $1"; n=$((n + 1)); }
check() { if eval "$1"; then ok "$2"; else fail "$2"; fi; }

need=""
for t in pcap2spans perf-fold tracefs2spans flamegraph inflect; do
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
check '[ $rc = 0 ]' "scripts/demo.sh exits 0 on samples/demo (rc $rc)"
[ $rc = 0 ] || sed 's/^/#   /' "$tmp/demo.log" | tail -n 20
check 'awk -v s="$secs" "BEGIN { exit !(s < 60) }"' "the whole pipeline takes well under a minute (${secs} s)"
for f in spans.db folded/all.folded folded/by-endpoint.folded flamegraph/all.svg \
    flamegraph/by-endpoint.svg flamegraph/slow-diff.svg flamegraph/slowest-5pct.svg \
    report/report.html report/summary.json findings.txt; do
    check '[ -s "$tmp/out/$f" ]' "output $f written"
done
check 'grep -q "report/report.html" "$tmp/demo.log" && grep -q "flamegraph/slow-diff.svg" "$tmp/demo.log"' \
    "the run prints where the report and the differential graph are"
check 'grep -q "api/search/p50: step at t = [0-9]* s" "$tmp/out/findings.txt" &&
       grep -q "api/checkout: down from about t = " "$tmp/out/findings.txt"' \
    "the findings it prints name the slow step and the drift"
check '[ "$(grep -c "<svg" "$tmp/out/flamegraph/slow-diff.svg")" = 1 ] && grep -q "</svg>" "$tmp/out/flamegraph/slow-diff.svg" &&
       grep -q "slow_regex_backtrack" "$tmp/out/flamegraph/slow-diff.svg"' \
    "the differential graph is a whole SVG that shows slow_regex_backtrack"
check 'grep -q "^\[path GET /api/search\];" "$tmp/out/folded/by-endpoint.folded" &&
       grep -q "^\[path POST /demo.Catalog/Lookup\];" "$tmp/out/folded/by-endpoint.folded"' \
    "folded stacks per endpoint have one root frame per span group"

if [ $rc = 0 ]; then
    out=$(python3 "$top/tests/demo/check_demo.py" "$tmp/out" "$sample" "$n")
    printf '%s\n' "$out" | grep -v '^# next'
    n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
    [ -n "$n" ] || { n=99; fail "check_demo.py crashed"; }
fi

# the recorder gzips perf.txt over 1 MB: the same recording with perf.txt.gz gives the same join
mkdir -p "$tmp/gz"
cp "$sample/MANIFEST.json" "$sample/demo.pcap" "$sample/markers.txt" "$tmp/gz/"
gzip -c "$sample/perf.txt" >"$tmp/gz/perf.txt.gz"
rc=0
SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out-gz" "$tmp/gz" >/dev/null 2>&1 || rc=$?
q='SELECT count(*) || " " || count(span_id) FROM samples'
check '[ $rc = 0 ] && [ "$(sqlite3 "$tmp/out-gz/spans.db" "$q")" = "$(sqlite3 "$tmp/out/spans.db" "$q")" ]' \
    "perf.txt.gz is read through zcat: same samples, same attribution (rc $rc)"

# a recording with a file missing: exit 2 and the file named
mkdir -p "$tmp/broken"
cp "$sample/MANIFEST.json" "$sample/demo.pcap" "$tmp/broken/"
rc=0
SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out2" "$tmp/broken" >/dev/null 2>"$tmp/err" || rc=$?
check '[ $rc = 2 ] && grep -q "broken/markers.txt missing" "$tmp/err"' \
    "a recording without markers.txt is refused with exit 2 and the file named (rc $rc)"
echo "1..$((n - 1))"

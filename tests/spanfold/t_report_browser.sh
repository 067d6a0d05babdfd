#!/usr/bin/env bash
# spanfold report's page in headless Chromium (tests/browser/report.test.mjs, playwright-core
# as tests/flamegraph/t_browser.sh uses it): the verdict, the timelines with labelled
# markers and a wall-clock axis, the three inline flame graphs; in the slowest requests'
# graph a click zooms and Search finds the slow function with the share computed here
# from the database; no console error, nothing fetched.  Screenshots go to
# tests/artifacts/report-*.png.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
data=$top/tests/data/demo2

. "$top/tests/browser/need.sh"
tap_tmpdir t_report_browser
db=$tmp/spans.db
{
    "$sf" pcap2spans --quiet --db "$db" "$data/demo.pcap" &&
        "$sf" perf-fold --quiet --db "$db" "$data/perf.txt" >/dev/null &&
        "$sf" tracefs2spans --quiet --db "$db" "$data/markers.txt" &&
        "$sf" report --quiet --db "$db" --out "$tmp/report"
} 2>"$tmp/err" || {
    echo "not ok 1 - ingest and report of tests/data/demo2"
    sed 's/^/# /' "$tmp/err"
    echo "1..1"
    exit 1
}
# the share a correct search of the slowest 5 % graph must report, from the database: the
# slowest 5 % of spans by duration (k = ceil(0.05 n), ties kept, as --slowest 5% selects),
# their samples' periods, those whose stack has a frame matching the slow function
python3 - "$db" "$data/MANIFEST.json" "$tmp/report/report.html" "$art" >"$tmp/config.json" <<'PY'
import json, math, re, sqlite3, sys
db, man, html, art = sys.argv[1:5]
fn = json.load(open(man))["service"]["slow_function"]
c = sqlite3.connect(db)
lat = sorted(r[0] for r in c.execute(
    "SELECT resp_end_ns - req_start_ns FROM spans "
    "WHERE req_start_ns IS NOT NULL AND resp_end_ns IS NOT NULL"))
k = max(1, math.ceil(len(lat) * 0.05))
cut = lat[len(lat) - k]
slow = {r[0] for r in c.execute(
    "SELECT span_id FROM spans WHERE resp_end_ns - req_start_ns >= ?", (cut,))}
rx, hit, tot = re.compile(fn), 0, 0
for sid, frames, period in c.execute(
        "SELECT s.span_id, st.frames, s.period FROM samples s JOIN stacks st ON st.id = s.stack_id "
        "WHERE s.span_id IS NOT NULL"):
    if sid in slow:
        tot += period
        hit += period if any(rx.search(f) for f in frames.split(";")) else 0
print(json.dumps({"html": html, "term": fn, "expect_pct": 100 * hit / tot, "artifacts": art}))
PY
cd "$browser" && node report.test.mjs "$tmp/config.json"
exit $?

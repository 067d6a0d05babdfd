#!/usr/bin/env bash
# The report page's explorer on off-CPU time (tests/browser/explore_offcpu.test.mjs, in
# headless Chromium): tests/data/demo-downstream (spantrace --offcpu beside the CPU
# profile) ingested and reported; a fragment opens the off-CPU view of a range, whose
# folds must equal `spanfold stacks --offcpu --during` of it; On CPU gives the CPU folds
# of the same range; the slowest request's timeline draws each of its off-CPU intervals.
# Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
data=$top/tests/data/demo-downstream

. "$top/tests/browser/need.sh"
tap_tmpdir t_report_explore_offcpu
db=$tmp/r.db
if ! "$sf" ingest --quiet --db "$db" "$data/demo.pcap" "$data/perf.txt.gz" "$data/markers.txt" \
    "$data/offcpu.txt.gz" 2>"$tmp/err" || ! "$sf" report --quiet --db "$db" --out "$tmp/rep" 2>>"$tmp/err"; then
    echo "not ok 1 - ingest and report of tests/data/demo-downstream"
    sed 's/^/# /' "$tmp/err"
    echo "1..1"
    exit 1
fi
# the middle half of the requests' time, in whole ms, and the slowest request in it with
# off-CPU intervals (the explorer lists the selection's slowest)
read -r a b < <(python3 - "$db" <<'PY'
import datetime, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
lo, hi = c.execute("SELECT min(req_start_ns), max(req_start_ns) FROM spans").fetchone()
iso = lambda ns: datetime.datetime.fromtimestamp(ns // 10**6 / 1000, datetime.timezone.utc) \
    .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
print(iso(lo + (hi - lo) // 4), iso(lo + 3 * (hi - lo) // 4))
PY
)
"$sf" stacks --db "$db" --offcpu --during "$a..$b" | tail -n +2 >"$tmp/off"
"$sf" stacks --db "$db" --during "$a..$b" | tail -n +2 >"$tmp/cpu"
python3 - "$db" "$a" "$b" "$tmp/rep/report.html" "$tmp/off" "$tmp/cpu" "$top/tests/artifacts" >"$tmp/cfg.json" <<'PY'
import datetime, json, sqlite3, sys
db, a, b, html, off, cpu, art = sys.argv[1:8]
ns = lambda s: int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
                   .replace(tzinfo=datetime.timezone.utc).timestamp() * 1000) * 10**6
c = sqlite3.connect(db)
# the slowest request of the range (the capture's clock is realtime), and its intervals
span = c.execute("SELECT span_id FROM spans WHERE req_start_ns >= ? AND req_start_ns < ? AND "
                 "resp_end_ns IS NOT NULL AND span_id IS NOT NULL ORDER BY resp_end_ns - req_start_ns DESC "
                 "LIMIT 1", (ns(a), ns(b))).fetchone()[0]
n = c.execute("SELECT count(*) FROM offcpu WHERE span_id = ?", (span,)).fetchone()[0]
print(json.dumps({"html": html, "hash": "#from=%s&to=%s" % (a, b), "cli": open(off).read(),
                  "cpu": open(cpu).read(), "request": {"span": span, "offcpu": n}, "artifacts": art}))
PY
cd "$browser" && node explore_offcpu.test.mjs "$tmp/cfg.json"
exit $?

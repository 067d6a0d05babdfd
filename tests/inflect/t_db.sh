#!/usr/bin/env bash
# inflect --db on a small synthetic database built here with the sqlite3 shell and
# lib/schema.sql: 6,000 spans over 60 windows of 10 s, P99 +20 ms from window 30,
# the kept share 50 % -> 25 % from window 40 (configured 50 %, also visible as
# tracestate ot=th:8), two services, a clock_fits pair.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
inflect=${SF_BIN:-$top/bin}/inflect
tap_tmpdir t_inflect_db

if ! command -v sqlite3 >/dev/null; then
    skip "--db tests" "sqlite3 shell not installed (scripts/deps.sh installs sqlite3)"
    tap_plan
    exit 0
fi
db=$tmp/spans.db
sqlite3 "$db" <"$top/lib/schema.sql"
sqlite3 "$db" <<'SQL'
INSERT INTO sources(id, kind, path, tool, tool_version, status)
    VALUES (1, 'pcap', 'synthetic.pcap', 'test', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 5999)
INSERT INTO spans(id, source_id, proto, method, authority, path, status, grpc_service,
                  grpc_method, grpc_status, req_start_ns, resp_end_ns, trace_id, span_id, sampled)
SELECT i + 1, 1, 'h2', 'POST', CASE WHEN i % 2 THEN 'api' ELSE 'auth' END, '/x',
       CASE WHEN (i * 7919) % 1000 < 3 THEN 500 ELSE 200 END,
       CASE WHEN i % 2 THEN NULL ELSE 'auth.Auth' END, CASE WHEN i % 2 THEN NULL ELSE 'Check' END,
       CASE WHEN i % 2 THEN NULL ELSE 0 END,
       1700000000000000000 + i * 100000000,
       1700000000000000000 + i * 100000000
         + CAST(((CASE WHEN i >= 3000 THEN 40 ELSE 20 END) + ((i * 2654435761) % 1000) / 100.0)
                * 1000000 AS INTEGER),
       printf('%032x', i + 1), printf('%016x', i + 1),
       CASE WHEN ((i * 40503) % 1000) / 1000.0 < (CASE WHEN i >= 4000 THEN 0.25 ELSE 0.5 END)
            THEN 1 ELSE 0 END
FROM n;
INSERT INTO contexts(span_row, format, trace_id, span_id, sampled, tracestate, valid)
SELECT id, 'traceparent', trace_id, span_id, sampled, 'ot=th:8', 1 FROM spans;
INSERT INTO clock_fits(from_clock, to_clock, offset_ns, skew_ppm, ref_ns, valid_from_ns, points,
                       method) VALUES
    ('perf', 'realtime', 1000, 20, 0, 0, 100, 'theil-sen+envelope'),
    ('perf', 'realtime', 201000, 20, 10000000000, 10000000000, 100, 'theil-sen+envelope'),
    ('perf', 'realtime', 401000, 20, 20000000000, 20000000000, 100, 'theil-sen+envelope'),
    ('perf', 'realtime', 601000, 20, 30000000000, 30000000000, 100, 'theil-sen+envelope'),
    ('perf', 'realtime', 901000, 20, 40000000000, 40000000000, 100, 'theil-sen+envelope');
SQL

out=$tmp/report
charts=""
command -v gnuplot >/dev/null || charts=--no-charts
"$inflect" --db "$db" --out "$out" --window 10s --expect-rate 0.5 $charts 2>"$tmp/err"
rc=$?
check_eval "--db --out: exit 0" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
check_eval "report.md, report.html, summary.json, windows.csv written" \
    "[ -s '$out/report.md' ] && [ -s '$out/report.html' ] && [ -s '$out/summary.json' ] && [ -s '$out/windows.csv' ]"
check_eval "report holds the planted P99 step at window 30" "grep -q '^| p99 | 30 | 300 | step |' '$out/report.md'"
check_eval "report holds the sampling drift (down, about window 40)" \
    "grep -Eq 'Sampling DRIFT: the kept share went down from about window 4[0-2]' '$out/report.md'"
check_eval "the HTML report has the same table" "grep -q '<td>p99</td><td>30</td>' '$out/report.html'"
check_eval "the clock pair is reported with its step" "grep -q '^| perf | realtime | 5 | 1000 | 20 |' '$out/report.md'"
if [ -z "$charts" ]; then
    check_eval "latency, sampling and clock charts rendered" \
        "[ -s '$out/chart-00-all.svg' ] && [ -s '$out/chart-01-all-sampling.svg' ] && [ -s '$out/clock-residuals.svg' ]"
else
    skip "charts" "gnuplot not installed"
fi
check_eval "windows.csv has a header and 60 windows" \
    "[ \$(grep -c '^\"all\",' '$out/windows.csv') -eq 60 ] && head -n 1 '$out/windows.csv' | grep -q '^group,window,t_s,count,throughput,p50,p95,p99'"

# JSON shape per series
"$inflect" --db "$db" --window 10s --json "$tmp/s.json" 2>/dev/null
check_eval "--db --json: exit 0" "[ $? -eq 0 ]"
if command -v python3 >/dev/null; then
    python3 - "$tmp/s.json" >"$tmp/shape" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["windows"] == 60 and d["spans"] == 6000, (d["windows"], d["spans"])
assert d["name"] == "all/p99" and [c["index"] for c in d["change_points"]] == [30]
names = [s["name"] for s in d["series"]]
assert "all/p99" in names and "all/error_rate" in names and "all/sampled_share" in names
for s in d["series"]:
    assert set(s["by_detector"]) == {"pelt", "pelt_mbic", "binseg", "cusum", "baseline"}
    for c in s["change_points"]:
        assert {"index", "time", "before", "after", "change", "kind", "detector"} <= set(c)
dr = d["drift"][0]
assert dr["configured"] == "ot=th" and dr["alarm"] and dr["direction"] == "down", dr
assert 38 <= dr["onset_window"] <= 42, dr
assert d["clock"][0]["steps"] == 1 and abs(d["clock"][0]["skew_ppm"] - 20) < 10, d["clock"]
print("shape ok")
PY
    check_eval "per-series JSON, drift from ot=th (no --expect-rate), clock step" "grep -q 'shape ok' '$tmp/shape'"
    grep -v 'shape ok' "$tmp/shape" | sed 's/^/# /'
else
    skip "per-series JSON" "python3 not installed"
fi

# the default window adapts to span density (lib/sf_window.h): 10 spans/s in one group
# give 16 / 10 = 1.6 s, rounded down to 1 s; the note on stderr says so
"$inflect" --db "$db" --json "$tmp/auto.json" 2>"$tmp/auto.err"
check_eval "default window adapted to span density: 1 s, 600 windows, noted on stderr" \
    "grep -q '\"window_s\": 1,' '$tmp/auto.json' && grep -q '\"windows\": 600,' '$tmp/auto.json' && grep -q 'window 1s, adapted to span density' '$tmp/auto.err'"

# gates on the database
"$inflect" --db "$db" --json /dev/null --gate 'p99>+20%' 2>/dev/null
check_eval "--gate p99>+20%: exit 1 (P99 +67 %)" "[ $? -eq 1 ]"
"$inflect" --db "$db" --json /dev/null --gate drift 2>/dev/null
check_eval "--gate drift: exit 1" "[ $? -eq 1 ]"
"$inflect" --db "$db" --json /dev/null --gate 'error_rate>1pt' 2>/dev/null
check_eval "--gate error_rate>1pt (0.3 %): exit 0" "[ $? -eq 0 ]"
"$inflect" --db "$db" --json /dev/null --gate 'error_rate>1' 2>"$tmp/err"
check_eval "--gate error_rate>1 (no unit on a share): exit 2 naming the units" \
    "[ $? -eq 2 ] && grep -q \"column 13: 'error_rate' takes pt or %\" '$tmp/err'"
"$inflect" --db "$db" --json /dev/null --gate 'p99>+5pt' 2>"$tmp/err"
check_eval "--gate p99>+5pt (points on a latency): exit 2" "[ $? -eq 2 ]"
"$inflect" --db "$db" --json /dev/null --gate 'p999>+20%' 2>"$tmp/err"
check_eval "--gate on an unknown metric: exit 2" "[ $? -eq 2 ] && grep -q 'unknown metric' '$tmp/err'"
"$inflect" --db "$db" --json /dev/null --gate 'all/p99>+20%' 2>/dev/null
check_eval "--gate GROUP/METRIC on the one group 'all': exit 1" "[ $? -eq 1 ]"
"$inflect" --db "$db" --json /dev/null --gate 'nosuchgroup/p99>+20%' 2>"$tmp/err"
check_eval "--gate on a group that matches nothing: exit 2" \
    "[ $? -eq 2 ] && grep -q \"no group named 'nosuchgroup'\" '$tmp/err'"
"$inflect" --db "$db" --json /dev/null --allow-missing --gate 'nosuchgroup/p99>+20%' 2>/dev/null
check_eval "... passes with --allow-missing" "[ $? -eq 0 ]"
cp "$db" "$tmp/norate.db"
sqlite3 "$tmp/norate.db" "UPDATE contexts SET tracestate = NULL;"
"$inflect" --db "$tmp/norate.db" --json /dev/null --gate drift 2>"$tmp/err"
check_eval "--gate drift with no configured rate (no --expect-rate, no ot=th): exit 2, never pass" \
    "[ $? -eq 2 ] && grep -q \"gate 'drift' cannot be evaluated: no configured sampling rate\" '$tmp/err'"
"$inflect" --db "$tmp/norate.db" --json /dev/null --expect-rate 0.5 --gate drift 2>/dev/null
check_eval "... with --expect-rate 0.5 it is evaluated (the planted drift: exit 1)" "[ $? -eq 1 ]"
sqlite3 "$tmp/empty.db" <"$top/lib/schema.sql"
"$inflect" --db "$tmp/empty.db" --json /dev/null --gate 'p99>+20%' 2>"$tmp/err"
check_eval "a gate on a database without spans: exit 2" \
    "[ $? -eq 2 ] && grep -q 'no spans in .*empty.db: an empty database passes no gate' '$tmp/err'"
"$inflect" --db "$db" --json /dev/null --expect-rate 0.5 --tiers 2 --gate drift 2>/dev/null
check_eval "--tiers 2 (expects 25 %, sees 50 % then 25 %): drift alarm (up) exit 1" "[ $? -eq 1 ]"

# groups
"$inflect" --db "$db" --by service --json "$tmp/svc.json" 2>/dev/null
check_eval "--by service: both services" \
    "grep -q '\"name\": \"api/p99\"' '$tmp/svc.json' && grep -q '\"name\": \"auth.Auth/p99\"' '$tmp/svc.json'"
"$inflect" --db "$db" --by service --expect-rate api=0.5 --expect-rate auth.Auth=0.25 \
    --json "$tmp/rates.json" 2>/dev/null
check_eval "--expect-rate GROUP=R: per-service configured rates (auth at 25 % sees 50 %: up)" \
    "grep -A3 '\"group\": \"auth.Auth\"' '$tmp/rates.json' | grep -q '\"expect_rate\": 0.25' &&
     grep -A12 '\"group\": \"auth.Auth\"' '$tmp/rates.json' | grep -q '\"direction\": \"up\"'"
"$inflect" --db "$db" --by grpc_method --json "$tmp/m.json" 2>/dev/null
check_eval "--by grpc_method: only gRPC spans" \
    "grep -q '\"name\": \"auth.Auth/Check/p99\"' '$tmp/m.json' && ! grep -q '\"name\": \"api' '$tmp/m.json'"
"$inflect" --db "$db" --window 1m --json "$tmp/w.json" 2>/dev/null
check_eval "--window 1m: 10 windows" "grep -q '\"windows\": 10,' '$tmp/w.json'"

# the rates at the 1 s default window (10 spans, 0.3 % errors): binomial counts of their
# trials, so the lone errors are no change points; the kept share is 5 of 10 in 400 of
# the 408 windows before 408 (4 or 6 in the others: chance for a binomial, jumps for
# the old Gaussian cost), then this generator alternates 8 windows of 0 and 8 of 5
# (real changes), so its first change point is at 408 or 409 and none comes earlier
if command -v python3 >/dev/null; then
    python3 - "$tmp/auto.json" >"$tmp/rates" 2>&1 <<'PY'
import json, sys
d = {s["name"]: s for s in json.load(open(sys.argv[1]))["series"]}
e, k = d["all/error_rate"], d["all/sampled_share"]
assert e["model"]["cost"] == "binomial" and e["change_points"] == [], e
assert k["model"]["cost"] == "binomial", k["model"]
assert [c["index"] for c in k["change_points"]][:1] in ([408], [409]), k["change_points"][:2]
print("rates ok")
PY
    check_eval "1 s windows: error_rate binomial, no change point; sampled_share's first at 408" \
        "grep -q 'rates ok' '$tmp/rates'"
    grep -v 'rates ok' "$tmp/rates" | sed 's/^/# /'
else
    skip "rates at the default window" "python3 not installed"
fi

# errors
"$inflect" --db "$tmp/missing.db" 2>"$tmp/err"
check_eval "missing database: exit 2, named" "[ $? -eq 2 ] && grep -q 'missing.db' '$tmp/err'"
printf 'not a database, just text\n%.0s' $(seq 1 200) >"$tmp/junk.db"
"$inflect" --db "$tmp/junk.db" 2>"$tmp/err"
check_eval "a file that is not SQLite: exit 2" "[ $? -eq 2 ] && grep -q 'junk.db' '$tmp/err'"
sqlite3 "$tmp/empty.db" <"$top/lib/schema.sql"
"$inflect" --db "$tmp/empty.db" --json "$tmp/e.json" 2>"$tmp/err"
check_eval "a database without spans: exit 0, says so" "[ $? -eq 0 ] && grep -q 'no spans' '$tmp/err'"
check_eval "a database without spans: the same JSON keys, empty" \
    "grep -q '\"change_points\": \[\]' '$tmp/e.json' && grep -q '\"pelt\": \[\]' '$tmp/e.json'"
tap_plan

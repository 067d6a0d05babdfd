#!/usr/bin/env bash
# inflect command line: --series JSON shape, gates and exit codes, gnuplot charts
# (byte-stable), a missing gnuplot, usage errors.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
inflect=${SF_BIN:-$top/bin}/inflect
tap_tmpdir t_inflect_cli

# A latency series: 100 ms with a little deterministic noise, +50 % from row 60.
{
    echo "time,p99,errors"
    for i in $(seq 0 119); do
        v=$((100 + (i * 37 % 7) - 3)); [ "$i" -ge 60 ] && v=$((v + 50))
        printf '2024-05-01T12:%02d:%02dZ,%d,%s\n' $((i / 6)) $((i % 6 * 10)) "$v" \
            "$([ $((i % 10)) -eq 0 ] && echo "" || echo 0.002)"
    done
} >"$tmp/step.csv"
{
    echo "t,p99"
    for i in $(seq 0 119); do echo "$i,$((100 + (i * 37 % 7) - 3))"; done
} >"$tmp/flat.csv"

"$inflect" --series "$tmp/step.csv" --column p99 --json "$tmp/step.json" 2>"$tmp/err"
check_eval "--series --json exits 0" "[ $? -eq 0 ] && [ -s '$tmp/step.json' ]"
if command -v python3 >/dev/null; then
    python3 - "$tmp/step.json" >"$tmp/shape" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cp = d["change_points"]
assert isinstance(cp, list) and len(cp) == 1, cp
c = cp[0]
for k in ("index", "time", "before", "after", "change", "kind", "detector"):
    assert k in c, k
assert c["index"] == 60, c
assert c["time"] == "2024-05-01T12:10:00Z", c
assert c["kind"] == "step" and c["detector"] == "pelt", c
assert abs(c["change"] - 0.5) < 0.05, c
assert set(d["by_detector"]) == {"pelt", "pelt_mbic", "binseg", "cusum", "baseline"}
assert d["by_detector"]["pelt"] == [60]
assert all(isinstance(i, int) for v in d["by_detector"].values() for i in v)
assert len(d["series"]) == 1 and d["series"][0]["name"] == "p99"
print("shape ok")
PY
    check_eval "JSON shape: change_points {index,time,before,after,change,kind,detector}, by_detector" \
        "grep -q 'shape ok' '$tmp/shape'"
    [ -s "$tmp/shape" ] && sed 's/^/# /' "$tmp/shape" | grep -v 'shape ok'
else
    skip "JSON shape" "python3 not installed"
fi

"$inflect" --series "$tmp/step.csv" --json - >"$tmp/both.json" 2>/dev/null
check_eval "--json - writes to stdout, every value column analysed" \
    "grep -q '\"name\": \"errors\"' '$tmp/both.json' && grep -q '\"name\": \"p99\"' '$tmp/both.json'"

# gates
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99>+20%' 2>"$tmp/err"
check_eval "gate p99>+20% on a +50% step: exit 1" "[ $? -eq 1 ] && grep -q \"gate 'p99>+20%' failed\" '$tmp/err'"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99>+80%' 2>/dev/null
check_eval "gate p99>+80% on a +50% step: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/flat.csv" --json /dev/null --gate 'p99>+20%' 2>/dev/null
check_eval "gate on a flat series: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'errors>1pt' 2>/dev/null
check_eval "level gate errors>1pt on 0.2%: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'errors>0.1pt' 2>/dev/null
check_eval "level gate errors>0.1pt on 0.2%: exit 1" "[ $? -eq 1 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'errors>0.1%' 2>/dev/null
check_eval "errors>0.1% is a relative change (one meaning of %), not a level: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99<-10%' 2>/dev/null
check_eval "gate p99<-10% on a rise: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'nosuch>+1%' 2>"$tmp/err"
check_eval "gate on an unknown metric: exit 2 with a reason" \
    "[ $? -eq 2 ] && grep -q \"gate 'nosuch>+1%' cannot be evaluated: no column named 'nosuch'\" '$tmp/err'"
"$inflect" --series "$tmp/step.csv" --json /dev/null --allow-missing --gate 'nosuch>+1%' 2>/dev/null
check_eval "--allow-missing: a gate on a missing column passes (exit 0)" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99>+20' 2>/dev/null
check_eval "p99>+20: a change of 20 in the column's unit (+50 on the step): exit 1" "[ $? -eq 1 ]"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99>+60' 2>/dev/null
check_eval "p99>+60 on a +50 step: exit 0" "[ $? -eq 0 ]"
"$inflect" --series "$tmp/step.csv" --gate 'p99>+20xx' 2>"$tmp/err"
check_eval "bad unit: usage error 2 naming the column" \
    "[ $? -eq 2 ] && grep -q \"inflect: gate 'p99>+20xx': column 8: unknown unit 'xx'\" '$tmp/err'"
"$inflect" --series "$tmp/step.csv" --gate drift 2>"$tmp/err"
check_eval "drift with --series: usage error 2" "[ $? -eq 2 ] && grep -q 'drift needs --db' '$tmp/err'"
printf 't,p99\n0,1\n1,2\n2,3\n' >"$tmp/short.csv"
"$inflect" --series "$tmp/short.csv" --json /dev/null --gate 'p99>+20%' 2>"$tmp/err"
check_eval "3 rows are too few for a change: exit 2 stating the minimum" \
    "[ $? -eq 2 ] && grep -q 'a change needs at least 4 rows with data; the longest series has 3' '$tmp/err'"
printf '# earlier\n' >"$tmp/sum.md"
"$inflect" --series "$tmp/step.csv" --json /dev/null --gate 'p99>+20%' --gate 'p99<-10%' \
    --summary "$tmp/sum.md" --junit "$tmp/j.xml" 2>/dev/null
check_eval "--summary appends a gate table" \
    "[ \"\$(head -n 1 '$tmp/sum.md')\" = '# earlier' ] && grep -q '^| \`p99>+20%\` | \*\*FAIL\*\* |' '$tmp/sum.md'"
if command -v xmllint >/dev/null; then
    check_eval "--junit: two test cases, one failure, valid XML" \
        "xmllint --noout '$tmp/j.xml' && [ \"\$(xmllint --xpath 'count(//testcase)' '$tmp/j.xml')\" = 2 ] && [ \"\$(xmllint --xpath 'count(//failure)' '$tmp/j.xml')\" = 1 ]"
else
    skip "--junit checked with xmllint" "xmllint missing (apt-get install libxml2-utils)"
fi
"$inflect" --series "$tmp/step.csv" --json "$tmp/g.json" --gate 'p99>+20%' 2>/dev/null
check_eval "gate verdict in the JSON" "grep -q '\"result\": \"fail\"' '$tmp/g.json'"

# charts
if command -v gnuplot >/dev/null; then
    "$inflect" --series "$tmp/step.csv" --out "$tmp/r1" 2>"$tmp/err"
    rc=$?
    check_eval "--out: exit 0" "[ $rc -eq 0 ]"
    check_eval "--out: report.md, report.html, summary.json" \
        "[ -s '$tmp/r1/report.md' ] && [ -s '$tmp/r1/report.html' ] && [ -s '$tmp/r1/summary.json' ]"
    svg=$(ls "$tmp/r1"/chart-*p99*.svg 2>/dev/null | head -n 1)
    check_eval "gnuplot SVG chart produced" "[ -n '$svg' ] && grep -q '<svg' '$svg'"
    check_eval "the report links the chart and lists the step" \
        "grep -q \"$(basename "${svg:-none}")\" '$tmp/r1/report.md' && grep -q '| 60 |' '$tmp/r1/report.md'"
    "$inflect" --series "$tmp/step.csv" --out "$tmp/r2" 2>/dev/null
    check_eval "charts are byte-identical across runs" "cmp -s '$svg' '$tmp/r2/$(basename "${svg:-none}")'"
else
    skip "--out charts" "gnuplot not installed (scripts/deps.sh installs gnuplot-nox)"
fi
PATH=/nonexistent "$inflect" --series "$tmp/step.csv" --out "$tmp/r3" 2>"$tmp/err"
check_eval "no gnuplot on PATH: exit 2, clear message" \
    "[ $? -eq 2 ] && grep -q 'gnuplot not found on PATH' '$tmp/err'"
PATH=/nonexistent "$inflect" --series "$tmp/step.csv" --out "$tmp/r4" --no-charts 2>/dev/null
check_eval "--no-charts works without gnuplot" "[ $? -eq 0 ] && [ -s '$tmp/r4/report.md' ]"

# usage and input errors
"$inflect" 2>/dev/null; check_eval "no arguments: 2" "[ $? -eq 2 ]"
"$inflect" --series a --db b 2>/dev/null; check_eval "--series and --db: 2" "[ $? -eq 2 ]"
"$inflect" --db x --window 0s 2>/dev/null; check_eval "bad --window: 2" "[ $? -eq 2 ]"
"$inflect" --db x --by host 2>/dev/null; check_eval "bad --by: 2" "[ $? -eq 2 ]"
"$inflect" --db x --expect-rate 1.5 2>/dev/null; check_eval "bad --expect-rate: 2" "[ $? -eq 2 ]"
"$inflect" --series "$tmp/none.csv" 2>"$tmp/err"
check_eval "missing file: 2 with its name" "[ $? -eq 2 ] && grep -q 'none.csv' '$tmp/err'"
"$inflect" --help >"$tmp/help"; check_eval "--help: 0 and the synopsis" "[ $? -eq 0 ] && grep -q -- '--gate' '$tmp/help'"
"$inflect" --version >"$tmp/ver"; check_eval "--version" "[ $? -eq 0 ] && grep -q '^inflect (spanfold)' '$tmp/ver'"
tap_plan

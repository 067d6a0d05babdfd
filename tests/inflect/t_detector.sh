#!/usr/bin/env bash
# inflect's default detector from the command line: every change point carries a
# confidence and a location interval, --min-confidence drops the weak ones, --cost
# and --penalty choose the model, and bad values are usage errors.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
inflect=${SF_BIN:-$top/bin}/inflect
tap_tmpdir t_inflect_detector

# P99 with deterministic noise (-3..+3 ms): a 2 ms step at row 60 (about the
# noise) and a 60 ms step at row 120.
{
    echo "t,p99"
    for i in $(seq 0 179); do
        v=$((100 + (i * 37 % 7) - 3))
        [ "$i" -ge 60 ] && v=$((v + 2))
        [ "$i" -ge 120 ] && v=$((v + 60))
        echo "$i,$v"
    done
} >"$tmp/two.csv"

if ! command -v python3 >/dev/null; then
    skip "confidence and interval in the JSON" "python3 not installed"
    tap_plan
    exit 0
fi

# field check: prints "n=<points> min=<lowest confidence>" or the failed assertion
fields() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cps = d["change_points"]
for c in cps:
    assert 0 < c["confidence"] <= 1, c
    assert c["lo"] <= c["index"] <= c["hi"], c
assert d["model"]["cost"] in ("mean", "meanvar", "linear", "poisson"), d["model"]
print("n=%d min=%.17g cost=%s" % (len(cps), min([c["confidence"] for c in cps] or [1]),
                                  d["model"]["cost"]))
PY
}

"$inflect" --series "$tmp/two.csv" --json "$tmp/all.json" 2>"$tmp/err"
check_eval "two steps: exit 0" "[ $? -eq 0 ]"
all=$(fields "$tmp/all.json" 2>&1)
echo "# default: $all"
check_eval "every change point has confidence in (0, 1] and lo <= index <= hi" \
    "[[ '$all' == n=* ]]"
n_all=${all#n=}; n_all=${n_all%% *}
check_eval "both steps found (2 points)" "[ '$n_all' = 2 ]"
low=$(python3 -c "import sys; print(sys.argv[1].split()[1][4:])" "$all")
check_eval "the 2 ms step is less than certain (confidence $low < 1)" \
    "python3 -c 'import sys; sys.exit(0 if float(\"$low\") < 1 else 1)'"

check_eval "the 2 ms step's interval is wider than the 60 ms step's" \
    "python3 -c 'import json; c=json.load(open(\"$tmp/all.json\"))[\"change_points\"]; \
assert c[0][\"hi\"] - c[0][\"lo\"] > c[1][\"hi\"] - c[1][\"lo\"], c'"

# a threshold just above the weakest point drops it, and only it
thr=$(python3 -c "import sys; c=float(sys.argv[1]); print(repr(c + (1 - c) / 2))" "$low")
"$inflect" --series "$tmp/two.csv" --min-confidence "$thr" --json "$tmp/hi.json" 2>/dev/null
check_eval "--min-confidence $thr: exit 0" "[ $? -eq 0 ]"
hi=$(fields "$tmp/hi.json" 2>&1)
echo "# --min-confidence $thr: $hi"
check_eval "--min-confidence above the weak step keeps one point, the 60 ms step" \
    "[[ '$hi' == n=1\ * ]] && python3 -c 'import json; d=json.load(open(\"$tmp/hi.json\")); \
c=d[\"change_points\"][0]; assert abs(c[\"index\"] - 120) <= 1 and c[\"confidence\"] >= $thr'"
"$inflect" --series "$tmp/two.csv" --min-confidence 0 --json "$tmp/zero.json" 2>/dev/null
check_eval "--min-confidence 0 keeps everything" "cmp -s '$tmp/zero.json' '$tmp/all.json'"

# the report shows both
"$inflect" --series "$tmp/two.csv" --out "$tmp/rep" --no-charts 2>/dev/null
check_eval "report: confidence and interval columns" \
    "grep -q '| confidence | interval |' '$tmp/rep/report.md' && grep -q '| 120 | 120 | step' '$tmp/rep/report.md'"

# --cost and --penalty
"$inflect" --series "$tmp/two.csv" --cost meanvar --json "$tmp/mv.json" 2>/dev/null
check_eval "--cost meanvar: the model says meanvar" "[[ '$(fields "$tmp/mv.json")' == *cost=meanvar ]]"
"$inflect" --series "$tmp/two.csv" --cost poisson --json "$tmp/po.json" 2>/dev/null
check_eval "--cost poisson on counts: the model says poisson" "[[ '$(fields "$tmp/po.json")' == *cost=poisson ]]"
sed 's/,\([0-9]*\)$/,\1.5/' "$tmp/two.csv" >"$tmp/frac.csv"
"$inflect" --series "$tmp/frac.csv" --cost poisson --json "$tmp/pf.json" 2>/dev/null
check_eval "--cost poisson on non-counts falls back to mean" "[[ '$(fields "$tmp/pf.json")' == *cost=mean ]]"
"$inflect" --series "$tmp/two.csv" --penalty 50 --json "$tmp/p200.json" 2>/dev/null
check_eval "--penalty 50: the weak step is gone, the strong one stays" "[[ '$(fields "$tmp/p200.json")' == n=1\ * ]]"

# usage errors
for bad in "--min-confidence 1.5" "--min-confidence -0.1" "--min-confidence x" "--cost median" \
    "--penalty 0" "--penalty -1" "--rho-max 1" "--rho-max -0.5"; do
    # shellcheck disable=SC2086
    "$inflect" --series "$tmp/two.csv" $bad --json /dev/null 2>"$tmp/err"
    check_eval "$bad: usage error 2 with a message" "[ $? -eq 2 ] && grep -q '^inflect: ' '$tmp/err'"
done
tap_plan

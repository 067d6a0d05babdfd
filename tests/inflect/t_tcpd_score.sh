#!/usr/bin/env bash
# The TCPD metrics of the inflect bench (scripts/bench/tcpd_cv.py) on cases worked out
# by hand from their definitions: F1 with margin 5 over every annotator (0 added to
# both sides), and segmentation covering.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
out=$(PYTHONPATH="$top/scripts/bench" python3 - <<'PY' 2>&1
import tcpd_cv as t
def near(a, b):
    return abs(a - b) < 1e-9
ann = {"a": [10], "b": []}
checks = [
    # X = {0, 12}, T* = {0, 10}: P = 2/2; R = (2/2 + 1/1) / 2
    ("F1: a prediction 2 off a marked change is a hit", near(t.f1(ann, [12]), 1.0)),
    # 6 off: outside the margin; P = 1/2, R = (1/2 + 1) / 2 = 3/4, F1 = 2PR/(P+R) = 0.6
    ("F1: 6 off is a miss", near(t.f1(ann, [16]), 0.6)),
    # nothing predicted: P = 1, R = 3/4, F1 = 6/7
    ("F1: no prediction", near(t.f1(ann, []), 6 / 7)),
    # two predictions near one mark: one match only; P = 2/3, R = (2/2 + 1/1) / 2 = 1
    ("F1: one mark matches one prediction", near(t.f1(ann, [9, 11]), 0.8)),
    # a: [0,10) [10,50) vs [0,12) [12,50): (10 * 10/12 + 40 * 38/40) / 50
    # b: [0,50) vs the same: 50 * 38/50 / 50
    ("cover: two annotators averaged", near(t.cover(ann, [12], 50), ((10 * 10 / 12 + 38) / 50 + 0.76) / 2)),
    ("cover: exact answer for one annotator", near(t.cover({"a": [10]}, [10], 50), 1.0)),
    ("cover: out-of-range predictions ignored", near(t.cover({"a": []}, [0, 50, 99], 50), 1.0)),
]
for name, ok in checks:
    print(("ok" if ok else "FAIL"), name)
PY
)
while IFS= read -r line; do
    case $line in
    "ok "*) ok "${line#ok }" ;;
    "FAIL "*) notok "${line#FAIL }" ;;
    *) echo "# $line"; notok "scorer ran" ;;
    esac
done <<<"$out"
tap_plan

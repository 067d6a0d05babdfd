#!/usr/bin/env bash
# Accuracy and speed of inflect's change-point detectors on TCPD series.
#
# The 13 annotated TCPD series in TCPD_DIR (default tests/data/tcpd, the tuning set;
# the benchmark's other series are kept back and never scored here) are z-scored as
# the benchmark does (R's scale(): mean 0, sample sd 1), written as CSV and analysed
# by `inflect --series`.  Scores are the benchmark's two metrics, computed here from
# their definitions (van den Burg & Williams 2020): F1 with a margin of 5 against
# every annotator, and segmentation covering.
#
# Model choice is honest: every candidate setting of the default detector (cost x
# penalty, the grid below) is run on every series, and each series is scored with
# the candidate chosen on the OTHER 12 (leave-one-out cross-validation: the best
# mean of F1 and cover, ties to the earlier candidate).  The cross-validated score
# is the headline; the in-sample score of the shipped default is printed beside it.
#
# Speed: CPU time (user+sys) of inflect per series against the same PELT in pure
# Python (ruptures' Pelt(l2) too when `import ruptures` works), median of 5 runs.
#
# Exit status 1 when the cross-validated F1 < 0.70 or cover < 0.65, when any detector
# gives other change points on a series in its natural units than z-scored, or when the
# default finds nothing on a series where every annotator marked a change.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tcpd=${TCPD_DIR:-$top/tests/data/tcpd}
bin=${SF_BIN:-$top/bin}/inflect
if [ ! -f "$tcpd/annotations.json" ]; then
    echo "bench-inflect: TCPD data not found in $tcpd (set TCPD_DIR)"
    exit 2
fi
[ -x "$bin" ] || { echo "bench-inflect: $bin not built (make bin/inflect)"; exit 2; }
command -v python3 >/dev/null || { echo "bench-inflect: python3 missing; skipped"; exit 0; }
work=$(mktemp -d /tmp/bench-inflect.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$top/scripts/bench/tcpd_cv.py" "$tcpd" "$bin" "$work"

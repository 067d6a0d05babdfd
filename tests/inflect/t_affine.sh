#!/usr/bin/env bash
# Every detector gives the same change points, kinds and confidences for a x + b
# (a > 0) as for x (issue #33.1): the committed TCPD series in natural units and
# seeded random ones, a from 1e-12 to 1e15, b 0 and +-1000 sd; no result marks most
# of a series.  See affine_check.py.
set -u
. "$(dirname "$0")/../tap.sh"
tap_name="affine invariance"
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
tap_tmpdir
python3 "$top/tests/inflect/affine_check.py" "${SF_BIN:-$top/bin}/inflect" "$top/tests/data/tcpd" "$tmp"

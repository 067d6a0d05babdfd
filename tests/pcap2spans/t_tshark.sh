#!/usr/bin/env bash
# tshark's own dissection of samples/pcap agrees with pcap2spans on every request, method,
# path, status and trace header value.  TAP on stdout (see check_tshark.py).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
samples=$top/samples/pcap
py=$(command -v python3)
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree

if [ -z "$py" ]; then
    tap_name="tshark cross-check"; tap_skip_all "python3 not installed"
fi
if [ ! -x "$bin" ]; then
    tap_name="tshark cross-check"; tap_skip_all "pcap2spans not built"
fi
if ! command -v tshark >/dev/null; then
    tap_name="tshark cross-check"; tap_skip_all "tshark not installed (scripts/deps.sh)"
fi
cd "$top/tests/pcap2spans" && exec "$py" check_tshark.py "$bin" "$samples"

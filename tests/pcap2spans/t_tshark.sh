#!/usr/bin/env bash
# tshark's own dissection of samples/pcap agrees with pcap2spans on every request, method,
# path, status and trace header value.  TAP on stdout (see check_tshark.py).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SF_BIN:-$top/bin}/pcap2spans
samples=$top/samples/pcap
py=$(command -v python3)
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree

if [ -z "$py" ]; then
    echo "ok 1 - tshark cross-check # SKIP python3 not installed"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "ok 1 - tshark cross-check # SKIP pcap2spans not built"
    exit 0
fi
if ! command -v tshark >/dev/null; then
    echo "ok 1 - tshark cross-check # SKIP tshark not installed (scripts/deps.sh)"
    exit 0
fi
cd "$top/tests/pcap2spans" && exec "$py" check_tshark.py "$bin" "$samples"

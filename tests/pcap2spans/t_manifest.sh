#!/usr/bin/env bash
# pcap2spans against samples/pcap/MANIFEST.json: every request sent by the real clients of
# scripts/record-samples.sh is found with the right ids, method, path, status, gRPC fields,
# sampling, validity and reason, sane timing; format variants give identical spans; TLS
# connections have the expected facts.  TAP on stdout (see check_manifest.py).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
samples=$top/samples/pcap
py=$(command -v python3)
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree

if [ -z "$py" ]; then
    tap_name="manifest checks"; tap_skip_all "python3 not installed"
fi
if [ ! -x "$bin" ]; then
    tap_name="manifest checks"; tap_skip_all "pcap2spans not built"
fi
if [ ! -f "$samples/MANIFEST.json" ]; then
    echo "not ok 1 - samples/pcap/MANIFEST.json missing (scripts/record-samples.sh)"
    exit 1
fi
exec "$py" "$top/tests/pcap2spans/check_manifest.py" "$bin" "$samples"

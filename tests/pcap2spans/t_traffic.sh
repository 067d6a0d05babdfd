#!/usr/bin/env bash
# The classes of real traffic of issue #18 (rebuilt by traffic_cases.py: loss recovery,
# long-lived HTTP/2, keep-alive probes, big header sections, ...): pcap2spans gives the
# spans each case expects, and agrees with tshark's decode of the same capture.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
[ -x "$bin" ] || tap_skip_all "pcap2spans not built"
command -v tshark >/dev/null || tap_skip_all "tshark not installed (scripts/deps.sh)"
tap_tmpdir
export PYTHONDONTWRITEBYTECODE=1
cd "$top/tests/pcap2spans" || exit 2
python3 traffic_cases.py "$tmp" || exit 2
exec python3 check_traffic.py "$bin" "$tmp"

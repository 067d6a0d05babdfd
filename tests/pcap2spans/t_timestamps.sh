#!/usr/bin/env bash
# Capture timestamps outside int64 nanoseconds since 1970 (a pcapng timestamp past the
# year 2262) are an error naming the packet and its offset, and the packet is skipped
# (exit 1): never a signed overflow (UBSan) or a negative time in the spans.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
# A pcapng (SHB, IDB with if_tsresol = 9, i.e. nanoseconds) holding one HTTP/1.1 exchange
# whose response packet (packet 5) is stamped 2^63 + 10^9 ns, after 2262-04-11.
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top/tests/pcap2spans" python3 - "$tmp/t.pcapng" <<'PY'
import struct, sys
import tcp_pcap
req = b"GET /t HTTP/1.1\r\nHost: h\r\n\r\n"
resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
tcp_pcap.write_exchange(sys.argv[1] + ".pcap", req, resp)
raw = open(sys.argv[1] + ".pcap", "rb").read()[24:]
pkts = []
while raw:
    _, _, cl, _ = struct.unpack("<IIII", raw[:16])
    pkts.append(raw[16:16 + cl]); raw = raw[16 + cl:]
def block(t, body):
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", t, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))
out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
opt = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)  # if_tsresol 9, opt_endofopt
out += block(1, struct.pack("<HHI", 1, 0, 65535) + opt)
for i, p in enumerate(pkts):
    ts = 1700000000 * 10**9 + i * 10**6
    if i == 4:
        ts = 2**63 + 10**9
    out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xffffffff, len(p), len(p)) + p)
open(sys.argv[1], "wb").write(out)
PY
rc=0
"$bin/pcap2spans" --quiet --ndjson "$tmp/t.pcapng" >"$tmp/out" 2>"$tmp/err" || rc=$?
check_eval "exit status 1: a packet was skipped (rc $rc)" '[ "$rc" -eq 1 ]'
check_eval "the error names the file, packet 5 and its block's offset" \
    'grep -q "t.pcapng: packet 5 @0x[0-9a-f]*: pcap: timestamp 9223372037.854775808 s is outside" "$tmp/err"'
check_eval "no sanitizer report" '! grep -q "runtime error" "$tmp/err"'
check_eval "no negative time in the spans" '! grep -q -- "_ns\":-" "$tmp/out"'
check_eval "the request is still a span, without the skipped response" \
    'grep -q "\"path\":\"/t\"" "$tmp/out" && grep -q "\"status\":null" "$tmp/out"'
tap_plan

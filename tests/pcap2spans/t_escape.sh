#!/usr/bin/env bash
# JSON escaping in --ndjson at every string length: the writer checks strings 16 and 8
# bytes at a time, with overlapping last steps, so a byte that needs escaping ('"', '\',
# a control byte, DEL) must be found at any position of a string of any length.  One
# pipelined HTTP/1.1 connection carries request paths of 1 to 48 bytes with such a byte
# first, in the middle or last (and clean ones); every line must be valid JSON whose path
# is the one sent, byte for byte.  Captures of 32 pipelined requests each (pcap2spans
# keeps at most 64 unanswered requests per connection), all read in one run.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top/tests/pcap2spans" python3 - "$tmp" <<'PY'
import sys
import tcp_pcap
paths = []
for length in range(1, 49):
    for special in (None, b'"', b"\\", b"\x01", b"\x1f", b"\x7f"):
        for pos in ((length - 1,) if special is None else sorted({0, length // 2, length - 1})):
            p = bytearray(b"/" + b"a" * (length - 1))
            if special is not None and pos > 0:  # keep the leading '/'
                p[pos] = special[0]
            paths.append(bytes(p))
for k in range(0, len(paths), 32):
    batch = paths[k:k + 32]
    req = b"".join(b"GET " + p + b" HTTP/1.1\r\nHost: h\r\n\r\n" for p in batch)
    resp = b"HTTP/1.1 204 No Content\r\n\r\n" * len(batch)
    tcp_pcap.write_exchange("%s/e%03d.pcap" % (sys.argv[1], k // 32), req, resp)
open(sys.argv[1] + "/paths", "wb").write(b"\n".join(p.hex().encode() for p in paths))
PY
"$bin/pcap2spans" --quiet --ndjson "$tmp"/e*.pcap >"$tmp/e.ndjson"
python3 - "$tmp/e.ndjson" "$tmp/paths" <<'PY'
import json, sys
n = 0
def tap(ok, name):
    global n; n += 1; print("%sok %d - %s" % ("" if ok else "not ", n, name))
want = [bytes.fromhex(h) for h in open(sys.argv[2]).read().split()]
lines = open(sys.argv[1], "rb").read().splitlines()
tap(len(lines) == len(want), "%d spans for %d pipelined requests" % (len(lines), len(want)))
bad_json, wrong = [], []
for i, (line, p) in enumerate(zip(lines, want)):
    try:
        got = json.loads(line)["path"].encode("latin-1")
    except (ValueError, KeyError, UnicodeEncodeError):
        bad_json.append(i)
        continue
    if got != p:
        wrong.append((i, p, got))
tap(not bad_json, "every line is valid JSON (bad: %s)" % bad_json[:5])
tap(not wrong, "every path comes back byte for byte (first wrong: %r)" % (wrong[:1],))
print("1..%d" % n)
PY

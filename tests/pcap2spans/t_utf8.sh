#!/usr/bin/env bash
# Non-ASCII text: --ndjson writes valid UTF-8 as it is and other bytes as \u00XX, so
# a request path with UTF-8 and a header value with a stray 0xff come out as valid JSON
# that equals what --db stores (valid UTF-8) and escapes only what is not UTF-8.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
python3 - "$tmp/u.pcap" <<'PY'
import struct, sys
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
def pkt(src, dst, sport, dport, seq, ack, flags, data=b""):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return b"\0" * 12 + b"\x08\x00" + ip + tcp
c, s = [10, 0, 0, 1], [10, 0, 0, 2]
req = ("GET /caf\u00e9 HTTP/1.1\r\nHost: api\r\n"
       "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n").encode() + \
      b"baggage: note=\xffbad\r\n\r\n"
resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
pkts = [pkt(c, s, 40000, 80, 100, 0, 0x02), pkt(s, c, 80, 40000, 500, 101, 0x12),
        pkt(c, s, 40000, 80, 101, 501, 0x10), pkt(c, s, 40000, 80, 101, 501, 0x18, req),
        pkt(s, c, 80, 40000, 501, 101 + len(req), 0x18, resp)]
out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
for i, p in enumerate(pkts):
    out += struct.pack("<IIII", 1700000000, i * 1000, len(p), len(p)) + p
open(sys.argv[1], "wb").write(out)
PY
"$bin/pcap2spans" --quiet --ndjson "$tmp/u.pcap" >"$tmp/u.ndjson"
"$bin/pcap2spans" --quiet --db "$tmp/u.db" "$tmp/u.pcap"
python3 - "$tmp/u.ndjson" "$tmp/u.db" <<'PY'
import json, sqlite3, sys
n = 0
def tap(ok, name):
    global n; n += 1; print("%sok %d - %s" % ("" if ok else "not ", n, name))
lines = open(sys.argv[1], "rb").read().splitlines()
tap(len(lines) == 1, "one span from the synthetic capture")
raw = lines[0] if lines else b"{}"
try:
    span = json.loads(raw); valid = True
except ValueError:
    span = {}; valid = False
tap(valid, "the NDJSON line is valid JSON")
tap(b"/caf\xc3\xa9" in raw, "valid UTF-8 in the path is written as UTF-8, not as \\u00XX per byte")
db = sqlite3.connect(sys.argv[2]); db.text_factory = bytes
path = db.execute("SELECT path FROM spans").fetchone()[0]
tap(span.get("path", "").encode() == path, "--ndjson and --db agree on the path (%r)" % path)
bag = [c for c in span.get("contexts", []) if c["format"] == "baggage"]
tap(bag and "\\u00ff" in raw.decode("utf-8", "replace") and bag[0]["raw"].endswith("\u00ffbad"),
    "a stray 0xff byte is escaped as \\u00ff")
print("1..%d" % n)
PY

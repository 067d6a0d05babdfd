#!/usr/bin/env bash
# Non-ASCII text: --ndjson writes valid UTF-8 as it is and other bytes as \u00XX, so
# a request path with UTF-8 and a header value with a stray 0xff come out as valid JSON
# that equals what --db stores (valid UTF-8) and escapes only what is not UTF-8.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top/tests/pcap2spans" python3 - "$tmp/u.pcap" <<'PY'
import sys
import tcp_pcap
req = ("GET /caf\u00e9 HTTP/1.1\r\nHost: api\r\n"
       "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n").encode() + \
      b"baggage: note=\xffbad\r\n\r\n"
resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
tcp_pcap.write_exchange(sys.argv[1], req, resp)
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

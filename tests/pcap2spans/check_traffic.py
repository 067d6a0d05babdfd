#!/usr/bin/env python3
"""check_traffic.py PCAP2SPANS DIR - the captures of traffic_cases.py against pcap2spans
and tshark.  TAP on stdout.

Per case of DIR/cases.json:
  - pcap2spans --ndjson gives exactly the spans listed, in request order: every key given
    (path, status, trace_id, partial, ...) equals the span's, and no other span;
  - each listed event kind (connection_events, from --db) occurs as often as said;
  - tshark's own decode of the capture finds the same requests, methods, paths, statuses
    and trace headers (check_tshark.check_file), unless the case says tshark cannot
    decode it ("tshark": false, with the reason).
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from check_manifest import Tap
import check_tshark


def spans_of(binary, path):
    p = subprocess.run([binary, "--ndjson", "--quiet", path], capture_output=True, timeout=300)
    spans = [json.loads(x) for x in p.stdout.decode().splitlines() if x.strip()]
    return p.returncode, spans, p.stderr.decode(errors="replace")


def events_of(binary, path):
    with tempfile.TemporaryDirectory() as t:
        db = os.path.join(t, "e.db")
        subprocess.run([binary, "--quiet", "--db", db, path], capture_output=True, timeout=300)
        con = sqlite3.connect(db)
        rows = con.execute("SELECT kind, count(*) FROM connection_events GROUP BY kind").fetchall()
        con.close()
    return dict(rows)


def check_case(tap, binary, d, c):
    path = os.path.join(d, c["file"])
    rc, spans, err = spans_of(binary, path)
    spans.sort(key=lambda s: (s.get("req_start_ns") or 0, s.get("stream_id") or 0))
    want = c["spans"]
    diags = []
    if len(spans) != len(want):
        diags.append("%d spans, want %d" % (len(spans), len(want)))
    for i, (w, s) in enumerate(zip(want, spans)):
        for k, v in w.items():
            if s.get(k) != v:
                diags.append("span %d: %s = %r, want %r" % (i + 1, k, s.get(k), v))
    tap.result(rc == c.get("rc", 0) and not diags,
               "%s: %d spans as expected (%s)" % (c["file"], len(want), c.get("what", "")),
               diags[:12] + (["exit status %d; stderr %s" % (rc, err[-300:])]
                             if rc != c.get("rc", 0) else []))
    if c.get("events"):
        ev = events_of(binary, path)
        bad = ["%s: %d, want %d" % (k, ev.get(k, 0), n) for k, n in c["events"].items()
               if ev.get(k, 0) != n]
        tap.result(not bad, "%s: connection events %s" % (c["file"], c["events"]), bad)
    if c.get("tshark", True) is not True:
        tap.result(True, "%s: tshark comparison" % c["file"], skip=c["tshark"])
        return
    f = {"file": c["file"], "requests": [], "server_ports": c["server_ports"],
         "h2c_ports": c.get("h2c_ports", [])}
    check_tshark.check_file(tap, binary, d, f, False, {c["file"]: f})


def main():
    binary, d = sys.argv[1], sys.argv[2]
    tap = Tap()
    for c in json.load(open(os.path.join(d, "cases.json"))):
        check_case(tap, binary, d, c)
    tap.done()
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

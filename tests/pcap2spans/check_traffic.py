#!/usr/bin/env python3
"""check_traffic.py PCAP2SPANS DIR - the captures of traffic_cases.py against pcap2spans
and tshark.  TAP on stdout.

Per case of DIR/cases.json:
  - pcap2spans --ndjson gives exactly the spans listed, in request order: every key given
    (path, status, trace_id, partial, ...) equals the span's, and no other span;
  - each listed event kind (connection_events, from --db) occurs as often as said;
  - tshark's own decode of the capture finds the same requests, methods, paths, statuses
    and trace headers (check_tshark's helpers), unless the case says tshark cannot decode
    it ("tshark": the reason) or one response ("tshark_unanswered", "tshark_why").
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
    check_with_tshark(tap, c, path, spans)


def check_with_tshark(tap, c, path, spans):
    """The requests tshark decodes (check_tshark.tshark_requests) against the spans: the
    same requests, methods, paths, statuses and trace headers.  A path listed in the
    case's "tshark_unanswered" is one whose response tshark does not decode (it says why
    in "tshark_why"): its status is not compared."""
    treqs = check_tshark.tshark_requests(path, c.get("h2c_ports", []), None,
                                         set(c["server_ports"]))
    pspans = check_tshark.span_keys(spans)
    miss = sorted(str(k) for k in treqs if k not in pspans)
    extra = sorted(str(k) for k in pspans if k not in treqs)
    tap.result(treqs and not miss and not extra,
               "%s: tshark decodes the same %d requests" % (c["file"], len(treqs)),
               ["only tshark: " + k for k in miss[:6]] + ["only pcap2spans: " + k for k in extra[:6]])
    unanswered = set(c.get("tshark_unanswered", []))
    d, notes = [], {"true-binary": 0}
    for k, rec in sorted(treqs.items(), key=lambda x: str(x[0])):
        s = pspans.get(k)
        if s is None:
            continue
        for fld in ("method", "path", "status"):
            if fld == "status" and rec.get("path") in unanswered:
                continue
            if rec.get(fld) != s.get(fld):
                d.append("%s: %s tshark %r, pcap2spans %r" % (k, fld, rec.get(fld), s.get(fld)))
        d += check_tshark.compare_contexts(k, s, rec, notes)
    why = " (not %s: %s)" % (", ".join(sorted(unanswered)), c["tshark_why"]) if unanswered else ""
    tap.result(not d, "%s: methods, paths, statuses and trace headers agree with tshark%s"
               % (c["file"], why), d[:12])


def main():
    binary, d = sys.argv[1], sys.argv[2]
    tap = Tap()
    for c in json.load(open(os.path.join(d, "cases.json"))):
        check_case(tap, binary, d, c)
    tap.done()
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

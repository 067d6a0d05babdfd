#!/usr/bin/env python3
"""Compare the Trace Context plugin's view of a capture with pcap2spans' and the
manifest's.  Prints TAP lines (numbering continues from --start).

  compare.py --tshark-json T.json [--tshark2-json T2.json] [--ndjson P.ndjson]
             [--manifest M.json] --file NAME --start N

Without --manifest (captures that have none, e.g. tests/pcap2spans/traffic_cases.py)
only the plugin and pcap2spans are compared.

A context is compared as the tuple (format, trace_id, span_id, parent_span_id,
sampled, debug, trace_id_64, valid, error, tracestate); each side's request
contexts form a multiset (HTTP/1 requests carry no stream id, and both tools see
the same requests, so counts must match exactly)."""
import argparse
import collections
import json
import sys


def as_list(v):
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def b(v):
    return None if v is None else int(v in (True, 1, "1", "True", "true"))


def tshark_contexts(path, skip_rejected=False):
    """Request contexts from tshark -T json --no-duplicate-keys -J tracectx.  With
    skip_rejected, requests the plugin marks as 0-RTT rejected by the server are left
    out (the verdict needs the second pass, tshark -2)."""
    out = collections.Counter()
    for pkt in json.load(open(path)):
        layer = pkt["_source"]["layers"].get("tracectx")
        for tc in as_list(layer):
            for msg in as_list(tc.get("tracectx.message")):
                if msg.get("tracectx.direction") != "request":
                    continue
                if skip_rejected and msg.get("tracectx.early_data.outcome") == "rejected":
                    continue
                for c in as_list(msg.get("tracectx.context")):
                    out[key(
                        c.get("tracectx.format"), c.get("tracectx.trace_id"),
                        c.get("tracectx.span_id"), c.get("tracectx.parent_id"),
                        b(c.get("tracectx.sampled")), b(c.get("tracectx.debug")),
                        b(c.get("tracectx.trace_id_64", 0)), b(c.get("tracectx.valid")),
                        c.get("tracectx.error"), c.get("tracectx.tracestate"))] += 1
    return out


def key(fmt, tid, sid, pid, sampled, debug, t64, valid, error, ts):
    return (fmt, tid or None, sid or None, pid or None, sampled, debug or 0, t64 or 0,
            valid, error or None, ts or None)


def tshark_early(path):
    """{span_id: outcome} of the requests the plugin marks as TLS 0-RTT early data."""
    out = {}
    for pkt in json.load(open(path)):
        for tc in as_list(pkt["_source"]["layers"].get("tracectx")):
            for msg in as_list(tc.get("tracectx.message")):
                if msg.get("tracectx.direction") == "request" and b(msg.get("tracectx.early_data")):
                    for c in as_list(msg.get("tracectx.context"))[:1]:
                        out[c.get("tracectx.span_id")] = msg.get("tracectx.early_data.outcome")
    return out


def pcap2spans_contexts(path, delivered=None):
    """Request contexts of pcap2spans' spans (only those with that delivered value)."""
    out = collections.Counter()
    for line in open(path):
        span = json.loads(line)
        if delivered is not None and span.get("delivered") != delivered:
            continue
        for c in span.get("contexts", []):
            if c.get("direction", "request") != "request":
                continue
            out[key(c["format"], c["trace_id"], c["span_id"], c["parent_span_id"],
                    None if c["sampled"] is None or c["sampled"] < 0 else c["sampled"],
                    c["debug"], c["trace_id_64"], c["valid"], c["error"], c["tracestate"])] += 1
    return out


def manifest_contexts(manifest, name):
    files = {f["file"]: f for f in manifest["files"]}
    f = files[name]
    while not f["requests"] and f.get("same_spans_as"):
        f = files[f["same_spans_as"]]
    out = collections.Counter()
    for r in f["requests"]:
        for c in r["contexts"]:
            s = c.get("sampled")
            out[(c["format"], c.get("trace_id"), c.get("span_id"), c.get("parent_span_id"),
                 None if s is None or s < 0 else int(s), int(bool(c["valid"])))] += 1
    return out


def short(counter):
    return {k: (k[:6], n) for k, n in counter.items()}


def diff(a, b):
    only_a = a - b
    only_b = b - a
    lines = []
    for k, n in list(only_a.items())[:4]:
        lines.append("#   only in first (x%d): %s" % (n, k))
    for k, n in list(only_b.items())[:4]:
        lines.append("#   only in second (x%d): %s" % (n, k))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tshark-json", required=True)
    ap.add_argument("--tshark2-json")
    ap.add_argument("--ndjson")
    ap.add_argument("--manifest")
    ap.add_argument("--file", required=True)
    ap.add_argument("--start", type=int, default=1)
    a = ap.parse_args()
    n = a.start
    failed = 0
    ts = tshark_contexts(a.tshark_json)
    man = manifest_contexts(json.load(open(a.manifest)), a.file) if a.manifest else None

    def tap(ok, name, detail=""):
        nonlocal n, failed
        print("%sok %d - %s" % ("" if ok else "not ", n, name))
        if not ok:
            failed += 1
            if detail:
                print(detail)
        n += 1

    tap(sum(ts.values()) > 0 or (man is not None and sum(man.values()) == 0),
        "%s: the plugin finds %d request contexts" % (a.file, sum(ts.values())))
    if man is not None:
        ts6 = collections.Counter()
        for k, v in ts.items():
            ts6[(k[0], k[1], k[2], k[3], k[4], k[7])] += v
        tap(ts6 == man, "%s: plugin agrees with the manifest on format, ids, sampled, validity "
            "(%d contexts)" % (a.file, sum(man.values())), diff(ts6, man))
    if a.ndjson:
        # Requests in 0-RTT data the server rejected are spans too (delivered = 0): every
        # request the plugin shows is one, and the rejected ones are the same on both sides.
        p2s = pcap2spans_contexts(a.ndjson)
        both = tshark_contexts(a.tshark2_json or a.tshark_json)
        tap(both == p2s, "%s: plugin agrees with pcap2spans field for field, reasons included "
            "(%d contexts)" % (a.file, sum(p2s.values())), diff(both, p2s))
        rej = both - tshark_contexts(a.tshark2_json or a.tshark_json, skip_rejected=True)
        p2s_rej = pcap2spans_contexts(a.ndjson, delivered=0)
        tap(rej == p2s_rej, "%s: the %d contexts of rejected 0-RTT requests are pcap2spans' "
            "delivered = 0 spans" % (a.file, sum(rej.values())), diff(rej, p2s_rej))
    want_early = set()
    if a.manifest:
        files = {f["file"]: f for f in json.load(open(a.manifest))["files"]}
        mf = files[a.file]
        while not mf["requests"] and mf.get("same_spans_as"):
            mf = files[mf["same_spans_as"]]
        want_early = {r["contexts"][0]["span_id"] for r in mf["requests"]
                      if r.get("early_data") and r["contexts"]}
    if a.tshark2_json and want_early:
        early = tshark_early(a.tshark2_json)
        tap(set(early) == want_early and all(v in ("accepted", "rejected") for v in early.values()),
            "%s: the plugin marks exactly the manifest's %d 0-RTT requests, each with the server's "
            "verdict (%s)" % (a.file, len(want_early), ", ".join("%s=%s" % kv for kv in sorted(early.items()))),
            "want %s" % sorted(want_early))
    if a.tshark2_json:
        ts2 = tshark_contexts(a.tshark2_json)
        tap(ts2 == ts, "%s: tshark -2 (two passes) shows the same contexts as one pass" % a.file,
            diff(ts2, ts))
    print("# next %d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

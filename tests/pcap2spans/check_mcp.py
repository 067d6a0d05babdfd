#!/usr/bin/env python3
"""check_mcp.py LOG NDJSON: the JSON-RPC spans of pcap2spans --ndjson against the MCP
client's own log of every message it sent and received (tests/mcp/client.mjs).

One line per check, "ok: ..." or "FAIL: ...", and exit 1 on any FAIL:
  calls        every request in the log is one span (direction, method, id), and no other
  answers      each span's error code and isError are its response's in the log
  notes        notifications: as many spans per (direction, method) as log lines
  order        the requests' spans, by their start, come in the log's order
  complete     no JSON-RPC span is partial (all answered, none malformed)
"""
import json
import sys
from collections import Counter


def id_text(v):
    """The id as pcap2spans writes rpc_id: a number as written, a string in quotes."""
    if v is None:
        return None
    if isinstance(v, str):
        return '"%s"' % v
    return json.dumps(v)


def main():
    log = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    spans = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    rpc = [s for s in spans if s["proto"] == "jsonrpc"]
    fails = 0

    def say(ok, what):
        nonlocal fails
        print(("ok: " if ok else "FAIL: ") + what)
        fails += not ok

    answers = {}
    for r in log:
        if r["kind"] == "response":
            req_dir = "s2c" if r["dir"] == "c2s" else "c2s"
            answers[(req_dir, id_text(r["id"]))] = r
    want, want_order = Counter(), []
    for r in log:
        if r["kind"] != "request":
            continue
        a = answers.get((r["dir"], id_text(r["id"])))
        key = (r["dir"], r["method"], id_text(r["id"]),
               a["error"] if a else None, (1 if a.get("isError") else 0) if a else None)
        want[key] += 1
        want_order.append((r["dir"], r["method"], id_text(r["id"])))
    got, got_order = Counter(), []
    for s in sorted((s for s in rpc if s["rpc_id"] is not None), key=lambda s: s["req_start_ns"] or 0):
        got[(s["rpc_direction"], s["method"], s["rpc_id"], s["rpc_error_code"], s["rpc_tool_error"])] += 1
        got_order.append((s["rpc_direction"], s["method"], s["rpc_id"]))
    n_req = sum(want.values())
    say(n_req > 0, "the log has requests (%d)" % n_req)
    say(Counter(k[:3] for k in got.elements()) == Counter(k[:3] for k in want.elements()),
        "calls: %d request spans for %d requests, one for one" % (sum(got.values()), n_req))
    if got != want:
        for k in sorted((want - got).keys(), key=str):
            print("#   missing %s" % (k,))
        for k in sorted((got - want).keys(), key=str):
            print("#   extra   %s" % (k,))
    say(got == want, "answers: each span's error and isError are its response's")
    wn = Counter((r["dir"], r["method"]) for r in log if r["kind"] == "notification")
    gn = Counter((s["rpc_direction"], s["method"]) for s in rpc if s["rpc_id"] is None)
    say(wn == gn and sum(wn.values()) > 0,
        "notes: %d notification spans for %d notifications" % (sum(gn.values()), sum(wn.values())))
    say(got_order == want_order, "order: the requests' spans start in the log's order")
    partial = [s for s in rpc if s["partial"]]
    say(not partial, "complete: no JSON-RPC span is partial (%d are)" % len(partial))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

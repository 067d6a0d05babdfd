#!/usr/bin/env python3
"""What the live cause tests (tests/demo/t_live_*.sh) ask of a report: /api/search's latency
inflection nearest the recording's true slow start (MANIFEST.json) is within 2.5 s of it (live,
short phases, a busy machine), its breakdown adds up to the spans' duration, and its cause is
the one injected.  Prints "LIVE_OK ..." or "LIVE_BAD ..." with what was found.

  check_cause.py FINDINGS.json MANIFEST.json CAUSE [options]
    --second CAUSE       the second cause named too (a mixed slowdown; the two in either order)
    --endpoint E         the downstream endpoint named (cause_endpoint)
    --reason-any A,B     the blocked reason holds one of these words
    --grew PART:NS       the slow side's PART (blocked_ns, downstream_ns, ...) is at least NS
                         more than the normal side's
    --any-endpoint       the inflection of any endpoint, not only /api/search's (a slowdown
                         that is not the service's own, such as the network's, hits them all)
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("findings")
ap.add_argument("manifest")
ap.add_argument("cause")
ap.add_argument("--second")
ap.add_argument("--endpoint")
ap.add_argument("--reason-any")
ap.add_argument("--grew")
ap.add_argument("--any-endpoint", action="store_true")
a = ap.parse_args()
f = json.load(open(a.findings))
m = json.load(open(a.manifest))
start = m["slow_start_realtime_ns"]
lat = [i for i in f["inflections"] if (a.any_endpoint or i["endpoint"] == "/api/search")
       and i["metric"] in ("p50", "p95", "p99")]
i = min(lat, key=lambda i: abs(i["time_ns"] - start)) if lat else None
ok = i is not None and abs(i["time_ns"] - start) < 2.5e9
if ok and a.second:
    ok = {i["cause"], i.get("cause_second")} == {a.cause, a.second}
elif ok:
    ok = i["cause"] == a.cause
if ok and a.endpoint:
    ok = i.get("cause_endpoint") == a.endpoint
if ok and a.reason_any:
    ok = any(w in (i.get("cause_reason") or "") for w in a.reason_any.split(","))
if ok:
    s, n = i["breakdown"]["slow"], i["breakdown"]["normal"]
    parts = sum(s[k] or 0 for k in ("cpu_ns", "blocked_ns", "downstream_ns", "network_ns", "unaccounted_ns"))
    ok = abs(parts - s["duration_ns"]) <= 4
    if ok and a.grew:
        part, ns = a.grew.split(":")
        ok = (s[part] or 0) - (n[part] or 0) > float(ns)
print("LIVE_OK" if ok else "LIVE_BAD",
      i and (i["cause"], i.get("cause_share"), i.get("cause_second"), i.get("cause_second_share")),
      i and (i.get("cause_endpoint") or i.get("cause_reason")), i and (i["time_ns"] - start) / 1e9)

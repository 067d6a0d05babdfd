#!/usr/bin/env python3
"""The data a spanfold report page carries for its explorer, read as a reader of the
format would (spanfold/report_explore.c documents it), with no browser: decoded,
checked for consistency, folded.

  explore_data.py PAGE check           sizes agree; prints "spans SAMPLES KEPT OF FRACTION"
  explore_data.py PAGE fold [A B]      folded lines of the spans that started in [A, B)
                                       (ISO 8601 UTC times, whole ms; none: every span)
  explore_data.py PAGE fold-off [A B]  the same of their off-CPU intervals (ns)
  explore_data.py PAGE ids             the span ids carried, one a line
  explore_data.py PAGE eps             the endpoint names, as JSON
  explore_data.py PAGE canon           the page with its explorer data as plain JSON (keys
                                       sorted), to compare two pages
"""
import base64, datetime, json, re, sys, zlib

page, cmd = sys.argv[1], sys.argv[2]
html = open(page, encoding="utf-8").read()
m = re.search(r'<script type="application/octet-stream" id="sf-explore-data" '
              r'data-format="([^"]+)"[^>]*>(.*?)</script>', html, re.S)
raw = base64.b64decode("".join(m.group(2).split()))
d = json.loads(zlib.decompress(raw) if m.group(1) == "deflate+base64" else raw)


def ms(iso):
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return round(t.timestamp() * 1000)


sp = d["span"]
ns = len(sp["id"])
if cmd == "check":
    ok = (len(d["at"]) == ns + 1 and d["at"][0] == 0 and d["at"][-1] == len(d["node"])
          and len(d["w"]) == len(d["dt"]) == len(d["node"])
          and len(d["off"]["at"]) == ns + 1 and d["off"]["at"][-1] == len(d["off"]["node"])
          and len(d["off"]["w"]) == len(d["off"]["dt"]) == len(d["off"]["node"])
          and all(len(sp[k]) == ns for k in ("ep", "start", "dur", "req", "srv", "resp"))
          and all(a <= b for a, b in zip(sp["start"], sp["start"][1:]))
          and all(0 <= n <= len(d["nodes"]) // 2 for n in d["node"])
          and d["kept"]["spans"] == ns)
    print("OK" if ok else "BAD", ns, len(d["node"]), d["kept"]["spans"], d["kept"]["of"],
          d["kept"]["fraction"])
elif cmd in ("fold", "fold-off"):
    rows = d["off"] if cmd == "fold-off" else d
    lo, hi = (ms(sys.argv[3]), ms(sys.argv[4])) if len(sys.argv) > 4 else (None, None)
    path = {0: None}

    def name(i):
        if i not in path:
            p, f = d["nodes"][2 * (i - 1)], d["nodes"][2 * (i - 1) + 1]
            up = name(p)
            path[i] = d["frames"][f] if up is None else up + ";" + d["frames"][f]
        return path[i]

    sys.setrecursionlimit(100000)
    fold = {}
    for s in range(ns):
        t = d["base_ms"] * 1000000 + sp["start"][s]
        if lo is not None and not (lo * 1000000 <= t < hi * 1000000):
            continue
        for k in range(rows["at"][s], rows["at"][s + 1]):
            key = name(rows["node"][k])
            fold[key] = fold.get(key, 0) + rows["w"][k]
    for key in sorted(fold, key=lambda k: k.encode()):
        print(key, fold[key])
elif cmd == "canon":
    sys.stdout.write(html[:m.start()] + json.dumps(d, sort_keys=True) + html[m.end():])
elif cmd == "ids":
    print("\n".join(sp["id"]))
elif cmd == "eps":
    print(json.dumps(d["eps"]))

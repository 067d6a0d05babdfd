#!/usr/bin/env python3
"""Check the main command's results on a demo recording against its manifest (TAP lines).

    check_demo.py OUT SAMPLES FIRST_TEST_NUMBER

OUT is what scripts/demo.sh wrote (spans.db, folded/, report/summary.json), SAMPLES the
recording (MANIFEST.json).  The facts come from the manifest, which the recorder wrote
from what it did (what it sent, when it switched the slow mode and the rate, the true
clock offset), never from the tools' output.  Prints TAP lines numbered from
FIRST_TEST_NUMBER and, last, "# next N".
"""
import json, sqlite3, sys

out, samples, n = sys.argv[1], sys.argv[2], int(sys.argv[3]) - 1
man = json.load(open(f"{samples}/MANIFEST.json"))
db = sqlite3.connect(f"{out}/spans.db")
summary = json.load(open(f"{out}/report/summary.json"))


def ok(cond, name, diag=None):
    global n
    n += 1
    print(("ok" if cond else "not ok"), n, "-", name)
    if not cond and diag:
        for line in str(diag).splitlines()[:12]:
            print("#  ", line)


# -- every request the clients sent is a span in the packets and an interval in the markers
sent = {r["id"]: r for r in man["requests"]}
spans = {r[0]: r for r in db.execute("SELECT span_id, path, proto, grpc_status FROM spans")}
missing = [i for i in sent if i not in spans]
ok(not missing and len(spans) == len(sent),
   f"{len(sent)} requests sent, {len(spans)} spans in the capture, each with the id sent",
   f"missing {missing[:5]}; extra {[s for s in spans if s not in sent][:5]}")
wrong = [i for i, r in sent.items() if i in spans and spans[i][1] != r["endpoint"]]
ok(not wrong, "each span's path is the endpoint the client called", wrong[:5])
ivs = {r[0]: r for r in db.execute("SELECT span_id, count(*) FROM span_intervals GROUP BY span_id")}
ok(all(ivs.get(i, (0, 0))[1] == 1 for i in sent),
   f"each request has exactly one span interval from its begin/end markers ({len(ivs)} intervals)",
   [i for i in sent if ivs.get(i, (0, 0))[1] != 1][:5])

# -- clock fit against the true offset the recorder measured
fit = db.execute("SELECT offset_ns FROM clock_fits WHERE from_clock = 'monotonic' AND "
                 "to_clock = 'realtime'").fetchall()
err = abs(fit[0][0] - man["true_offset_ns"]) if fit else None
ok(err is not None and err < 1_000_000,
   f"monotonic -> realtime offset within 1 ms of the true offset (off by {err} ns)")

# -- every perf sample inside a marked span carries its span id; outside, none
inside = db.execute("""
    SELECT s.id, s.span_id, i.span_id FROM samples s JOIN span_intervals i
      ON i.tid = s.tid AND i.start_ns < s.ts_ns AND s.ts_ns < i.end_ns""").fetchall()
bad = [r for r in inside if r[1] != r[2]]
ok(len(inside) > 0 and not bad,
   f"all {len(inside)} perf samples inside a marked span carry its span id",
   f"{len(bad)} wrong, e.g. {bad[:5]}")
outside = db.execute("""
    SELECT count(*) FROM samples s WHERE s.span_id IS NOT NULL AND NOT EXISTS
      (SELECT 1 FROM span_intervals i WHERE i.tid = s.tid AND i.start_ns <= s.ts_ns
          AND s.ts_ns <= i.end_ns)""").fetchone()[0]
ok(outside == 0, f"no sample outside every span interval has a span id ({outside})")

# -- the slow endpoint's heavy function dominates its span group's folded stacks
ep, heavy = man["service"]["slow_endpoint"], man["service"]["slow_function"]


def leaves(path, root=None):
    """self weight per leaf function of a folded file (only under root, if given)"""
    w = {}
    for line in open(path):
        stack, _, c = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if root and frames[0] != root:
            continue
        w[frames[-1]] = w.get(frames[-1], 0) + int(c)
    return w


root = [l.split(";")[0] for l in open(f"{out}/folded/by-endpoint.folded")
        if l.startswith("[path ") and l.split(";")[0].endswith(" " + ep + "]")]
grp = leaves(f"{out}/folded/by-endpoint.folded", root[0] if root else "-")
top = max(grp, key=grp.get) if grp else None
ok(top == heavy, f"{heavy} is the top function of the {ep} span group "
   f"({100 * grp.get(heavy, 0) / max(1, sum(grp.values())):.0f} % of its CPU)",
   sorted(grp.items(), key=lambda kv: -kv[1])[:4])
slow = leaves(f"{out}/folded/slow-endpoint-slow.folded")
normal = leaves(f"{out}/folded/slow-endpoint-normal.folded")
share = slow.get(heavy, 0) / max(1, sum(slow.values()))
ok(share > 0.5 and normal.get(heavy, 0) == 0 and sum(normal.values()) > 0,
   f"{heavy}: {share:.0%} of {ep}'s CPU in the slow phase, none before it")
others = {f for e, fs in man["service"]["functions"].items() if e != ep for f in fs}
ok(not (set(grp) & others), f"no function of another endpoint in the {ep} group",
   set(grp) & others)

slowest = leaves(f"{out}/folded/slowest-5pct.folded")
top = max(slowest, key=slowest.get) if slowest else None
ok(top == heavy, f"{heavy} is the top function in the CPU of the slowest 5 % of requests",
   sorted(slowest.items(), key=lambda kv: -kv[1])[:4])

# -- the slow phase's start is an inflection point within one window
t0, win = summary["t0_ns"], summary["window_s"]
slow_w = (man["slow_start_realtime_ns"] - t0) / 1e9 / win
rate_w = (man["rate_change_realtime_ns"] - t0) / 1e9 / win
lat = [(s["name"], c) for s in summary["series"] if s["name"].endswith(
    tuple(f"{ep}/{m}" for m in ("p50", "p95", "p99"))) for c in s["change_points"]]
hit = [(nm, c["index"]) for nm, c in lat if abs(c["index"] - slow_w) <= 1 and c["after"] > c["before"]]
ok(hit, f"slow phase at window {slow_w:.2f}: latency inflection of {ep} within one window {hit[:3]}",
   [(nm, c["index"], c["kind"]) for nm, c in lat])

# -- the sampling-rate change is reported as drift where the service decides
deferred = {r["endpoint"] for r in man["requests"] if r["sampled_sent"] is None}
drift = {d["group"]: d for d in summary["drift"]}
for e in sorted({r["endpoint"] for r in man["requests"]}):
    g = [d for k, d in drift.items() if k.endswith(e)]
    d = g[0] if g else {}
    if e in deferred:
        good = (d.get("alarm") and d.get("direction") == "down" and d["alarm_window"] >= int(rate_w)
                and abs(d["onset_window"] - rate_w) <= 3 and d["rate_after"] < d["rate_before"])
        ok(good, f"{e}: rate change at window {rate_w:.2f} reported as a downward drift "
           f"(onset {d.get('onset_window')}, alarm {d.get('alarm_window')}, "
           f"{d.get('rate_before')} -> {d.get('rate_after')})", d)
    else:
        ok(d and not d.get("alarm"), f"{e}: decided by its callers, no drift alarm", d)
print("# next", n + 1)

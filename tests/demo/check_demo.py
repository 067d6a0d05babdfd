#!/usr/bin/env python3
"""Check the main command's results on a demo recording against its manifest (TAP lines).

    check_demo.py OUT SAMPLES FIRST_TEST_NUMBER

OUT is what scripts/demo.sh wrote (spans.db, folded/, report/findings.json, and
stacks.folded: `spanfold stacks --folded` per phase, written by t_demo.sh), SAMPLES the
recording (MANIFEST.json).  The facts come from the manifest, which the recorder wrote
from what it did (what it sent, when it switched the slow mode and the rate, the true
clock offset), never from the tools' output.  Prints TAP lines numbered from
FIRST_TEST_NUMBER and, last, "# next N".
"""
import json, sqlite3, sys

out, samples, n = sys.argv[1], sys.argv[2], int(sys.argv[3]) - 1
man = json.load(open(f"{samples}/MANIFEST.json"))
db = sqlite3.connect(f"{out}/spans.db")
findings = json.load(open(f"{out}/report/findings.json"))


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
        if line.startswith("# weight: "):  # spanfold stacks' unit line
            continue
        stack, _, c = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if root and frames[0] != root:
            continue
        w[frames[-1]] = w.get(frames[-1], 0) + int(c)
    return w


slow_top = [s for s in findings["slow"] if s["endpoint"].endswith(" " + ep) or s["endpoint"].endswith(ep)]
tops = slow_top[0]["top_functions"] if slow_top else []
ok(tops and tops[0]["name"] == heavy,
   f"findings.json: {heavy} is the top function of the slowest {ep} requests "
   f"({100 * (tops[0]['share'] if tops else 0):.0f} % of their CPU)", tops[:3])
grp = leaves(f"{out}/folded/endpoint.folded")
top = max(grp, key=grp.get) if grp else None
ok(top == heavy, f"spanfold stacks --where 'endpoint = \"{ep}\"': {heavy} is its top function "
   f"({100 * grp.get(heavy, 0) / max(1, sum(grp.values())):.0f} % of its CPU)",
   sorted(grp.items(), key=lambda kv: -kv[1])[:4])
slow = leaves(f"{out}/folded/slow-endpoint-slow.folded")
normal = leaves(f"{out}/folded/slow-endpoint-normal.folded")
share = slow.get(heavy, 0) / max(1, sum(slow.values()))
ok(share > 0.5 and normal.get(heavy, 0) == 0 and sum(normal.values()) > 0,
   f"{heavy}: {share:.0%} of {ep}'s CPU in the slow phase, none before it (spanfold stacks --during)")
others = {f for e, fs in man["service"]["functions"].items() if e != ep for f in fs}
ok(not (set(grp) & others), f"no function of another endpoint in the {ep} spans' stacks",
   set(grp) & others)

slowest = leaves(f"{out}/folded/slowest-5pct.folded")
top = max(slowest, key=slowest.get) if slowest else None
ok(top == heavy, f"{heavy} is the top function in the CPU of the slowest 5 % of requests",
   sorted(slowest.items(), key=lambda kv: -kv[1])[:4])

# -- the slow phase's start is a latency inflection within 1.5 s, in CLOCK_REALTIME ns
t_slow = man["slow_start_realtime_ns"]
lat = [i for i in findings["inflections"] if i["endpoint"].endswith(ep)
       and i["metric"] in ("p50", "p95", "p99")]
hit = [i for i in lat if abs(i["time_ns"] - t_slow) <= 1_500_000_000 and i["after"] > i["before"]]
ok(hit, f"slow phase at {t_slow}: a latency inflection of {ep} within 1.5 s "
   f"({[(i['metric'], round((i['time_ns'] - t_slow) / 1e9, 2)) for i in hit][:3]} s off)",
   [(i["metric"], i["time_utc"], i["kind"]) for i in lat])

# -- the sampling-rate change is reported as drift where the service decides.  Without a
# configured rate the report compares with the first regime's kept share: every drift it
# reports must be real, and at least one is found; given the configured rate (what the
# operator set, report-configured/), every endpoint the service samples is found.
t_rate = man["rate_change_realtime_ns"]
deferred = {r["endpoint"] for r in man["requests"] if r["sampled_sent"] is None}
configured = json.load(open(f"{out}/report-configured/findings.json"))


def drift_ok(d, e):
    # the rate change, or for the slow endpoint its sampler's breaker (rate x0.1 while its
    # mean latency is over 250 ms, the manifest's service.sampling), which opens when the
    # slow phase starts: both are real drops of the kept share
    near = [t_rate] + ([t_slow] if e == ep else [])
    return d["direction"] == "down" and d["to_rate"] < d["from_rate"] \
        and min(abs(d["time_ns"] - t) for t in near) <= 5_000_000_000


for label, fnd in (("unconfigured", findings), ("configured", configured)):
    found = set()
    for e in sorted({r["endpoint"] for r in man["requests"]}):
        d = [x for x in fnd["drift"] if x["endpoint"].endswith(e)]
        if e not in deferred:
            ok(not d, f"{label}: {e} is decided by its callers: no drift alarm", d)
        elif d:
            ok(drift_ok(d[0], e), f"{label}: {e}: a downward drift within 5 s of the rate change"
               f"{' or the breaker' if e == ep else ''} ({d[0]['from_rate']:.2f} -> "
               f"{d[0]['to_rate']:.2f}, {(d[0]['time_ns'] - t_rate) / 1e9:+.1f} s from the rate "
               f"change)", d)
            found.add(e)
    if label == "unconfigured":
        ok(found, f"unconfigured: the rate change is found on {sorted(found)} of {sorted(deferred)}")
    else:
        ok(found == deferred, f"configured: the rate change is found on every endpoint the service "
           f"samples ({sorted(found)})")
print("# next", n + 1)

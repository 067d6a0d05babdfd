"""Affine invariance of inflect's detectors (issue #33.1), driven through the CLI.

For each series (the committed TCPD series in natural units, and seeded random ones:
steps, ramps, spikes, noise, integer series near 1.6e13 the way a GDP in dollars is,
short series of 8-19 points), inflect --series runs on x and on a x + b for scales a
from 1e-12 to 1e15 and offsets b of 0 and +-1000 standard deviations; every detector's
change points, the default's kinds, and its confidences (to 1e-6) must be those of x.
Prints TAP, the plan last.
"""
import json
import os
import random
import subprocess
import sys

inflect, tcpd, work = sys.argv[1:4]
SCALES = [1e-12, 1e-6, 1e-3, 1e3, 1e9, 1e15]
OFFSETS = [0.0, 1000.0, -1000.0]  # in standard deviations of a x


def series_set():
    out = []
    with open(os.path.join(tcpd, "annotations.json")) as f:
        names = sorted(json.load(f))
    for name in names:
        p = os.path.join(tcpd, "datasets", name + ".json")
        if not os.path.exists(p):
            continue
        d = json.load(open(p))
        if d.get("n_dim", 1) != 1:
            continue
        x = [v for v in d["series"][0]["raw"] if v is not None]
        out.append(("tcpd/" + name, x))
    rnd = random.Random(33)
    for k in range(24):
        kind = k % 6
        n = rnd.randint(8, 19) if kind == 5 else rnd.randint(40, 300)
        level, sd = rnd.uniform(-50, 50), rnd.uniform(0.5, 5)
        x, at = [], sorted(rnd.sample(range(2, n - 2), 2))
        for i in range(n):
            v = level + rnd.gauss(0, sd)
            if kind == 0 and i >= at[0]:  # a step
                v += rnd.choice([-1, 1]) * 6 * sd
            if kind == 1:  # a ramp between the two points
                v += 8 * sd * min(max((i - at[0]) / max(at[1] - at[0], 1), 0), 1)
            if kind == 2 and i == at[0]:  # a spike
                v += 10 * sd
            if kind == 4:  # integers near 1.6e13, growing: a GDP in dollars
                v = float(round(1.6e13 * (1 + 0.02 * i) + rnd.gauss(0, 2e11)))
            if kind == 5 and i >= at[0]:
                v += 5 * sd
            x.append(v)
        out.append(("random/%d-%s" % (k, "step ramp spike noise gdp short".split()[kind]), x))
    return out


def run(name, x):
    path = os.path.join(work, "s.csv")
    with open(path, "w") as f:
        f.write("t,v\n")
        for i, v in enumerate(x):
            f.write("%d,%r\n" % (i, v))
    r = subprocess.run([inflect, "--series", path, "--json", os.path.join(work, "s.json")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    s = json.load(open(os.path.join(work, "s.json")))["series"][0]
    pts = [(p["index"], p["kind"], p["confidence"]) for p in s["change_points"]]
    return s["by_detector"], pts


def same(a, b):
    if a is None or b is None or a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    for (i, k, c), (j, l, d) in zip(a[1], b[1]):
        if i != j or k != l or abs(c - d) > 1e-6:
            return False
    return True


n = 0
for name, x in series_set():
    base = run(name, x)
    m = sum(x) / len(x)
    sd = (sum((v - m) ** 2 for v in x) / len(x)) ** 0.5 or 1.0
    bad = []
    for a in SCALES:
        for off in OFFSETS:
            y = [a * v + off * a * sd for v in x]
            if not same(base, run(name, y)):
                bad.append("%g x %+g sd" % (a, off))
    n += 1
    dense = base is not None and len(base[1]) * 3 > len(x) and len(base[1]) >= 3
    ok = base is not None and not bad and not dense
    why = "" if ok else " # differs at " + ", ".join(bad[:4]) if bad else " # marks most points"
    print("%s %d - %s (%d points, %d change points): the same for %d affine maps%s" %
          ("ok" if ok else "not ok", n, name, len(x), len(base[1]) if base else -1,
           len(SCALES) * len(OFFSETS), why))
# the density guard: the poisson cost, asked for, on a GDP in dollars marks every point;
# that is reported as none, with the count in model.rejected and the report's words
gdp = [x for name, x in series_set() if name.endswith("-gdp")][0]
path = os.path.join(work, "gdp.csv")
with open(path, "w") as f:
    f.write("t,v\n" + "".join("%d,%r\n" % (i, v) for i, v in enumerate(gdp)))
subprocess.run([inflect, "--series", path, "--cost", "poisson", "--json",
                os.path.join(work, "g.json"), "--out", os.path.join(work, "rep"), "--no-charts"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
g = json.load(open(os.path.join(work, "g.json")))["series"][0]
n += 1
ok = g["model"]["rejected"] * 3 > len(gdp) and g["change_points"] == [] and g["by_detector"]["pelt"] == []
print("%s %d - --cost poisson on a GDP in dollars: %d of %d points marked, rejected, none reported"
      % ("ok" if ok else "not ok", n, g["model"]["rejected"], len(gdp)))
n += 1
md = open(os.path.join(work, "rep", "report.md")).read()
print("%s %d - report.md says the model failed" %
      ("ok" if "a failure of the model" in md else "not ok", n))
print("1..%d" % n)

#!/usr/bin/env bash
# Accuracy and speed of inflect's change-point detectors on the TCPD benchmark.
#
# Each of the annotated TCPD series (TCPD_DIR, default tests/data/tcpd) is
# z-scored as the benchmark does (R's scale(): mean 0, sample sd 1), written as a
# CSV and analysed once by `inflect --series`; the JSON's by_detector lists give
# every detector's change points with its default settings (one setting for all
# series).  tcpd_eval.py (the benchmark's exact metrics) scores them, next to the
# "zero" answer (no change at all) and the published default-setting scores.
#
# Speed: CPU time (user+sys) of inflect per series against the same PELT
# algorithm in pure Python (the reference implementation style of the benchmark
# era; and ruptures' Pelt when `import ruptures` works), median of 5 runs, as ratios.
#
# Exit status 1 when the default detector does not beat every published default
# method on both metrics.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tcpd=${TCPD_DIR:-$top/tests/data/tcpd}
bin=${SF_BIN:-$top/bin}/inflect
if [ ! -f "$tcpd/tcpd_eval.py" ] || [ ! -f "$tcpd/annotations.json" ]; then
    echo "bench-inflect: TCPD data not found in $tcpd (set TCPD_DIR); skipped"
    exit 0
fi
[ -x "$bin" ] || { echo "bench-inflect: $bin not built (make bin/inflect)"; exit 2; }
command -v python3 >/dev/null || { echo "bench-inflect: python3 missing; skipped"; exit 0; }
work=$(mktemp -d /tmp/bench-inflect.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$tcpd" "$bin" "$work" <<'PY'
import json, math, os, resource, statistics, subprocess, sys, time
tcpd, binary, work = sys.argv[1:4]

def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

ann = json.load(open(os.path.join(tcpd, "annotations.json")))
names = []
for name in sorted(ann):
    p = os.path.join(tcpd, "datasets", name + ".json")
    if not os.path.exists(p):
        continue
    d = json.load(open(p))
    if d.get("n_dim", 1) != 1:   # the univariate set only, as the benchmark's tables
        continue
    x = d["series"][0]["raw"]
    vals = [v for v in x if v is not None]
    m = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1)) or 1.0
    with open(os.path.join(work, name + ".csv"), "w") as f:
        f.write("t,value\n")
        for i, v in enumerate(x):
            f.write("%d,%s\n" % (i, "" if v is None else repr((v - m) / sd)))
    names.append(name)

preds, times = {}, {}
for name in names:
    csv = os.path.join(work, name + ".csv")
    out = os.path.join(work, name + ".out.json")
    runs = []
    for _ in range(5):
        c0 = cpu_children()
        rc = subprocess.run([binary, "--series", csv, "--json", out]).returncode
        runs.append(cpu_children() - c0)
        if rc != 0:
            sys.exit("bench-inflect: inflect failed on %s (status %d)" % (name, rc))
    times[name] = statistics.median(runs)
    res = json.load(open(out))
    for det, idx in res["by_detector"].items():
        preds.setdefault(det, {})[name] = idx
    preds.setdefault("zero", {})[name] = []

files = []
for det in preds:
    p = os.path.join(work, "pred-%s.json" % det)
    json.dump(preds[det], open(p, "w"))
    files.append("%s=%s" % (det, p))
scores = os.path.join(work, "scores.json")
subprocess.run([sys.executable, os.path.join(tcpd, "tcpd_eval.py"), "--tcpd", tcpd,
                "--datasets", ",".join(names), "--json", scores] + files,
               stdout=subprocess.DEVNULL, check=True)
sc = json.load(open(scores))["results"]
published = {"binseg": (0.700, 0.672), "amoc": (0.718, 0.721), "pelt": (0.673, 0.671)}
print("TCPD, %d univariate series, F1 (margin 5) and cover, one default setting for all:"
      % len(names))
print("  %-22s %6s %6s" % ("detector", "F1", "cover"))
for det in preds:
    s = sc[det]["summary"]
    tag = "  <- inflect default" if det == "pelt" else ""
    print("  %-22s %6.3f %6.3f%s" % (det, s["f1"], s["cover"], tag))
for k, (f, c) in published.items():
    print("  %-22s %6.3f %6.3f" % ("published " + k, f, c))
d = sc["pelt"]["summary"]
ok = all(d["f1"] > f and d["cover"] > c for f, c in published.values())
print("default detector beats every published default method on both metrics: %s"
      % ("yes" if ok else "NO"))

# Speed: the same PELT (squared-error cost, O(1) from prefix sums) in pure Python.
def pelt_py(z, pen, ms=2):
    n = len(z); S = [0.0]; S2 = [0.0]
    for a in z:
        S.append(S[-1] + a); S2.append(S2[-1] + a * a)
    def c(s, t):
        sx = S[t] - S[s]
        return S2[t] - S2[s] - sx * sx / (t - s)
    F = [-pen] + [0.0] * n; last = [0] * (n + 1); R = [0]
    for t in range(ms, n + 1):
        vals = [(s, F[s] + c(s, t) + pen) for s in R if t - s >= ms]
        bs, best = min(vals, key=lambda p: p[1])
        F[t] = best; last[t] = bs
        R = [s for s, v in vals if v - pen <= best] + [s for s in R if t - s < ms]
        if t + 1 - ms >= ms:
            R.append(t + 1 - ms)
    return last
py = {}
for name in names:
    z = [float(l.split(",")[1]) for l in open(os.path.join(work, name + ".csv")).read().split("\n")[1:] if l and l.split(",")[1]]
    runs = []
    for _ in range(5):
        c0 = cpu_self(); pelt_py(z, 3 * math.log(len(z))); runs.append(cpu_self() - c0)
    py[name] = statistics.median(runs)
tot_c, tot_p = sum(times.values()), sum(py.values())
print("CPU time per series (median of 5, user+sys): inflect %.2f ms (all 5 detectors,"
      " process start included), pure-Python PELT %.2f ms (one pass); ratio python/inflect %.1f"
      % (1000 * tot_c / len(names), 1000 * tot_p / len(names), tot_p / tot_c if tot_c else float("nan")))
try:
    import ruptures, numpy
    rr = []
    for name in names:
        z = numpy.loadtxt(os.path.join(work, name + ".csv"), delimiter=",", skiprows=1)[:, 1]
        c0 = cpu_self(); ruptures.Pelt(model="l2", min_size=2, jump=1).fit(z).predict(pen=3 * math.log(len(z))); rr.append(cpu_self() - c0)
    print("ruptures Pelt(l2): %.2f ms per series; ratio ruptures/inflect %.1f"
          % (1000 * sum(rr) / len(names), sum(rr) / tot_c if tot_c else float("nan")))
except ImportError:
    print("ruptures not installed (pip install ruptures): that peer is skipped")
sys.exit(0 if ok else 1)
PY

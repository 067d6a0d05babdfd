#!/usr/bin/env bash
# Clock fit through the whole tool: a generated trace (one begin/end span every 100 ms for
# 600 s on one thread, clock mono) and a database with the matching pcap spans (realtime =
# mono + theta + 37 ppm, one-sided lognormal delays, 1 % mismatched span ids, a +3 ms clock
# step at 300 s) and perf samples stamped in realtime.  tracefs2spans must report the step,
# store two clock_fits segments with their validity ranges, recover skew and offsets, and
# attribute realtime samples through the right segment.  TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v python3 >/dev/null || { tap_name="clock fit end to end"; tap_skip_all "python3 missing"; }
tap_tmpdir t2s_fit
"$bin/tracefs2spans" --quiet --db "$tmp/x.db" /dev/null || { echo "not ok 1 - create database"; exit 1; }
python3 - "$tmp" <<'PY'
import math, random, sqlite3, sys
tmp = sys.argv[1]
random.seed(4)
theta, skew, x0, step_at, step = 1764000000123456789, 37e-6, 1000 * 10**9, 300 * 10**9, 3000000
def truth(x):
    return theta + skew * (x - x0) + (step if x - x0 >= step_at else 0)
con = sqlite3.connect(f"{tmp}/x.db")
con.execute("INSERT INTO sources (id, kind, path, clock, tool, tool_version, status) VALUES "
            "(100, 'pcap', 'p', 'realtime', 'x', 'x', 'complete'), (101, 'perf', 'q', 'realtime', 'x', 'x', 'complete')")
spans, samples = [], []
with open(f"{tmp}/trace.txt", "w") as f:
    f.write("# trace_clock: mono\n")
    for i in range(6000):
        x = x0 + i * 100_000_000 + random.randrange(5_000_000)
        x -= x % 1000
        sp = "%016x" % (0x1000 + i)
        f.write(f"   svc-77 [000] ..... {x // 10**9}.{x % 10**9 // 1000:06d}: tracing_mark_write: span:{sp} begin\n")
        e = x + 2_000_000
        f.write(f"   svc-77 [000] ..... {e // 10**9}.{e % 10**9 // 1000:06d}: tracing_mark_write: span:{sp} end\n")
        y = x + round(truth(x)) - round(math.exp(math.log(50e3) + random.gauss(0, 1)))
        spans.append([sp, y])
        if i % 50 == 25:   # a perf sample 1 ms into the span, stamped in realtime
            samples.append((77, e - 1_000_000 + round(truth(e - 1_000_000)), sp))
for i in range(len(spans)):
    if random.random() < 0.01:
        j = random.randrange(len(spans))
        spans[i][1], spans[j][1] = spans[j][1], spans[i][1]
con.executemany("INSERT INTO spans (source_id, span_id, req_start_ns) VALUES (100, ?, ?)", spans)
con.executemany("INSERT INTO samples (source_id, tid, ts_ns) VALUES (101, ?, ?)", [(t, ts) for t, ts, _ in samples])
con.commit()
open(f"{tmp}/want.txt", "w").write("".join(f"{t} {ts} {sp}\n" for t, ts, sp in samples))
PY
"$bin/tracefs2spans" --db "$tmp/x.db" "$tmp/trace.txt" 2>"$tmp/err"
echo "# $(grep -c . "$tmp/err") lines on stderr:"; sed 's/^/#   /' "$tmp/err"
python3 - "$tmp" <<'PY'
import sqlite3, sys
tmp = sys.argv[1]
con = sqlite3.connect(f"{tmp}/x.db")
n = 0
def ok(c, name):
    global n
    n += 1
    print(("ok" if c else "not ok"), n, "-", name)
err = open(f"{tmp}/err").read()
ok("clock step of +3.0" in err, "the +3 ms clock step is reported on stderr")
fits = con.execute("SELECT offset_ns, skew_ppm, ref_ns, valid_from_ns, valid_to_ns, points, method FROM clock_fits ORDER BY id").fetchall()
ok(len(fits) == 2, f"two clock_fits segments ({len(fits)})")
theta, x0, step_at = 1764000000123456789, 1000 * 10**9, 300 * 10**9
if len(fits) == 2:
    (o1, k1, r1, f1, t1, p1, m1), (o2, k2, r2, f2, t2, p2, m2) = fits
    ok(f1 is None and t2 is None and t1 is not None and f2 == t1 + 1, "validity ranges: open ends, adjacent at the step")
    ok(abs(f2 - x0 - step_at) < 500_000_000, f"step placed at {(f2 - x0) / 1e9:.3f} s (true 300 s)")
    for (o, k, r), extra, name in (((o1, k1, r1), 0, "before"), ((o2, k2, r2), 3000000, "after")):
        worst = 0
        lo, hi = (x0, x0 + step_at - 10**9) if extra == 0 else (x0 + step_at + 10**9, x0 + 600 * 10**9)
        for x in range(lo, hi, 10**9):
            fit = o + k * 1e-6 * (x - r)
            worst = max(worst, abs(fit - (theta + 37e-6 * (x - x0) + extra)))
        ok(abs(k - 37) < 0.1 and worst < 10000, f"segment {name} the step: skew {k:.4f} ppm, offset within 10 us (worst {worst:.0f} ns), {m1 if extra == 0 else m2}")
want = [l.split() for l in open(f"{tmp}/want.txt")]
got = dict(((int(t), int(ts)), sp) for t, ts, sp in con.execute("SELECT tid, ts_ns, span_id FROM samples"))
bad = [w for w in want if got.get((int(w[0]), int(w[1]))) != w[2]]
ok(not bad and len(want) == 120, f"{len(want)} realtime samples attributed through the segment of their time ({len(bad)} wrong)")
print(f"1..{n}")
PY

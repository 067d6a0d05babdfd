#!/usr/bin/env python3
"""Check a spanfold database built from one recorded tracefs sample (TAP lines).

    check_sample.py DB SAMPLE_DIR LABEL FIRST_TEST_NUMBER [nofit]

Independently of the C code: span intervals are rebuilt from SAMPLE_DIR/trace.txt (the
begin/end markers of each thread), and every perf sample in the database must carry the
span of the innermost interval holding it on its thread, NULL outside every interval.
The fitted monotonic -> realtime offset must be within 1 ms of the true offset that the
recorder measured (MANIFEST.json).  Prints TAP lines numbered from FIRST_TEST_NUMBER and,
last, "# next N".  With "nofit" the clock fit is not checked (attribution only).
"""
import json, re, sqlite3, sys

db, d, label, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) - 1
nofit = len(sys.argv) > 5 and sys.argv[5] == "nofit"
man = json.load(open(f"{d}/MANIFEST.json"))
con = sqlite3.connect(db)
fails = 0


def ok(cond, name, diag=None):
    global n, fails
    n += 1
    print(("ok" if cond else "not ok"), n, "-", label + ": " + name)
    if not cond:
        fails += 1
        if diag:
            print("#  ", diag)


mark = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d{6}): tracing_mark_write: span:([0-9a-f]{16})\b.*\b(begin|end)\s*$")
open_, iv = {}, []
for line in open(f"{d}/trace.txt"):
    m = mark.match(line)
    if not m:
        continue
    tid, ts, span, what = int(m[2]), int(m[4]) * 10**9 + int(m[5]) * 1000, m[6], m[7]
    st = open_.setdefault(tid, [])
    if what == "begin":
        st.append((span, ts))
    else:
        for k in range(len(st) - 1, -1, -1):
            if st[k][0] == span:
                iv.append((tid, st[k][1], ts, k, span))
                del st[k:]
                break
ok(len(iv) == man["requests"], f"{len(iv)} begin/end intervals in trace.txt for {man['requests']} requests")

rows = con.execute("SELECT s.tid, s.ts_ns, s.span_id FROM samples s JOIN sources so ON so.id = s.source_id WHERE so.kind = 'perf'").fetchall()
ok(len(rows) == man["perf_samples"], f"{len(rows)} samples in the database, {man['perf_samples']} in perf.txt")
by_tid = {}
for t in iv:
    by_tid.setdefault(t[0], []).append(t)
wrong, inside = [], 0
for tid, ts, got in rows:
    best = None
    for (_, s, e, depth, span) in by_tid.get(tid, []):
        if s <= ts <= e and (best is None or depth > best[0] or (depth == best[0] and s >= best[1])):
            best = (depth, s, span)
    want = best[2] if best else None
    inside += want is not None
    if got != want:
        wrong.append((tid, ts, got, want))
ok(inside >= len(rows) // 2, f"{inside} of {len(rows)} samples fall inside marked spans (the work is in the spans)")
ok(not wrong, f"every sample inside a marked span on its thread carries that span's id, others none ({len(wrong)} wrong)",
   wrong[:5])

fits = [] if nofit else con.execute("SELECT offset_ns, skew_ppm, ref_ns, points, residual_ns, method FROM clock_fits f JOIN sources so ON so.id = f.from_source "
                   "WHERE so.kind = 'tracefs' AND f.from_clock = 'monotonic' AND f.to_clock = 'realtime'").fetchall()
if not nofit:
    ok(len(fits) == 1, f"one clock fit monotonic -> realtime ({len(fits)})")
if fits:
    off, skew, ref, points, res, method = fits[0]
    # the fit at the middle of the recording
    mid = sum(t[1] for t in iv) // max(len(iv), 1)
    at_mid = off + skew * 1e-6 * (mid - ref)
    err = at_mid - man["true_offset_ns"]
    ok(abs(err) < 1e6, f"fitted offset within 1 ms of the true offset (error {err / 1e3:+.1f} us, {points} pairs, {method})")
    print(f"# {label}: fitted {off} ns, true {man['true_offset_ns']} ns, error {err / 1e3:+.1f} us, skew {skew} ppm, residual median {res} ns")
print(f"# next {n + 1}")
sys.exit(1 if fails else 0)

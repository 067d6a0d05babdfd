#!/usr/bin/env python3
"""Socket events against span markers on one recording of the demo service.

  check_sockets.py MARKERS.db SOCKETS.db MANIFEST.json FIRST_TEST_NUMBER

MARKERS.db holds the capture, the perf samples and the USDT span markers (the
reference); SOCKETS.db the same capture and samples with the spantrace --sockets events
instead.  Prints TAP lines: of the spans the socket events place without ambiguity,
>= 95 % on the thread the markers name; of the samples attributed through socket events,
>= 95 % on the span the markers give them or, where the markers give none, at the edge
of that span's marker interval on the same thread; of the samples the markers attribute,
>= 95 % on the same span through socket events; the slow endpoint's top function is the
same; the clock fit from the (event, packet) pairs is near the true offset.  Figures as
diagnostics."""
import json
import sqlite3
import sys

mdb, sdb, manifest, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) - 1
man = json.load(open(manifest))
m = sqlite3.connect(mdb)
s = sqlite3.connect(sdb)


def ok(cond, name, diag=None):
    global n
    n += 1
    print(("ok" if cond else "not ok"), n, "-", name)
    if diag:
        print("#  ", diag)


# threads: the marker's thread per span, the socket's where it owns time alone
ref = {}
for sid, tid in m.execute("SELECT span_id, tid FROM span_intervals WHERE source = 'marker'"):
    ref.setdefault(sid, set()).add(tid)
shared = set()
for (ids,) in s.execute("SELECT span_ids FROM shared_intervals"):
    shared.update(ids.split(","))
sock = {}
for sid, tid in s.execute("SELECT span_id, tid FROM span_intervals WHERE source = 'socket'"):
    sock.setdefault(sid, set()).add(tid)
spans = s.execute("SELECT count(*) FROM spans WHERE span_id IS NOT NULL").fetchone()[0]
clear = [x for x in sock if x not in shared and x in ref]
same = [x for x in clear if sock[x] & ref[x]]
ok(len(clear) >= 0.9 * spans,
   f"socket events place {len(clear)} of {spans} spans without ambiguity",
   f"{len(sock)} placed, {len(shared)} in shared time, {len(ref)} with markers")
ok(clear and len(same) >= 0.95 * len(clear),
   f"{len(same)} of {len(clear)} ({100.0 * len(same) / max(1, len(clear)):.1f} %) "
   "on the thread the markers name (goal >= 95 %)")

# samples: the span through socket events against the span through markers.  The
# markers bracket the handler, so they leave out the edges of a request's own work that
# the socket events rightly keep: parsing the request before the span id is known, the
# end marker's probe (its uprobe trap runs after the end timestamp is taken), and the
# write of the response with its loopback delivery, run in softirq on the same thread.
# A sample the markers leave out counts as its span's edge when the marker interval
# nearest to it on its thread, either side, is that span's; any other span's is a miss.
ms = dict(((ts, tid), sid) for ts, tid, sid in
          m.execute("SELECT ts_ns, tid, span_id FROM samples"))
marks = {}
for sid, tid, a, b in m.execute("SELECT span_id, tid, start_ns, end_ns FROM span_intervals "
                                "WHERE source = 'marker'"):
    marks.setdefault(tid, []).append((a, b, sid))


def nearest_marker(ts, tid):
    """(span, distance in ns) of the marker interval on thread tid nearest to ts"""
    best = (None, None)
    for a, b, sid in marks.get(tid, ()):
        d = a - ts if ts < a else ts - b if ts > b else 0
        if best[1] is None or d < best[1]:
            best = (sid, d)
    return best


att = s.execute("SELECT ts_ns, tid, span_id FROM samples WHERE span_id IS NOT NULL").fetchall()
agree = edge = miss = 0
far = 0
for ts, tid, sid in att:
    ref_sid = ms.get((ts, tid))
    if ref_sid == sid:
        agree += 1
        continue
    near, dist = nearest_marker(ts, tid) if ref_sid is None else (None, None)
    if near == sid:
        edge += 1
        far = max(far, dist)
    else:
        miss += 1
total = s.execute("SELECT count(*) FROM samples").fetchone()[0]
marked = sum(1 for v in ms.values() if v)
good = agree + edge
ok(att and good >= 0.95 * len(att),
   f"{good} of {len(att)} samples attributed through socket events "
   f"({100.0 * good / max(1, len(att)):.1f} %) land on the markers' span or at its edge "
   "(goal >= 95 %)",
   f"{agree} inside the markers ({100.0 * agree / max(1, len(att)):.1f} %), {edge} at the "
   f"edge of the span's marker interval (at most {far / 1e3:.0f} us out), {miss} on another "
   f"span or none near; {len(att)} of {total} samples attributed through socket events, "
   f"{marked} through markers")
found = sum(1 for ts, tid, sid in att if ms.get((ts, tid)) == sid)
ok(marked and found >= 0.95 * marked,
   f"{found} of {marked} samples the markers attribute "
   f"({100.0 * found / max(1, marked):.1f} %) have the same span through socket events "
   "(goal >= 95 %)")


def top_function(db, path):
    q = ("SELECT st.frames FROM samples sa JOIN stacks st ON st.id = sa.stack_id WHERE "
         "sa.span_id IN (SELECT span_id FROM spans WHERE path = ?)")
    count = {}
    for (frames,) in db.execute(q, (path,)):
        leaf = frames.split(";")[-1]
        count[leaf] = count.get(leaf, 0) + 1
    return max(count.items(), key=lambda kv: kv[1]) if count else (None, 0)


slow = man["service"]["slow_endpoint"]
tm, ts_ = top_function(m, slow), top_function(s, slow)
ok(tm[0] is not None and tm[0] == ts_[0],
   f"{slow}: the top function is the same through sockets and markers ({ts_[0]})",
   f"markers {tm}, sockets {ts_}")

fit = s.execute("SELECT offset_ns, residual_ns, points FROM clock_fits "
                "ORDER BY points DESC LIMIT 1").fetchone()
true = man["true_offset_ns"]
# within 200 us, or within twice the fit's own residual when the recording was noisier:
# the fit must be as good as it says it is
ok(fit is not None and abs(fit[0] - true) <= max(200000, 2 * (fit[1] or 0)),
   "clock fit from socket events and their packets within max(200 us, 2 x its residual) "
   "of the true offset",
   fit and f"off by {fit[0] - true} ns, residual median {fit[1]} ns over {fit[2]} pairs")
print(f"# next {n + 1}")

#!/usr/bin/env bash
# Speed of tracefs2spans against its peer, CPU time (user+sys), median of 5 runs, as ratios.
#
# There is no packaged tool that turns tracefs text into span intervals, so the peer is
# a reference parser of the kernel's trace line layout in Python: the regex that passes every saved
# tracefs line, plus the same marker and begin/end bookkeeping, printing the same NDJSON
# records.  Input: 300,000 generated lines (begin marker, a sched_switch event, end marker
# per span on 16 threads) under /tmp, removed afterwards.
# Also measured: tracefs2spans --db (a new database per run) against its NDJSON output on
# the same lines, per-round CPU ratios of 5 interleaved rounds (goal <= 1.5x); and the attribution (sf_db_attribute_samples) of 1,000,000 samples against
# 100,000 intervals in a fresh database (tracefs2spans --refit), CPU time per sample.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SF_BIN:-$top/bin}/tracefs2spans
[ -x "$bin" ] || { echo "bench-tracefs2spans: $bin not built (make bin/tracefs2spans)"; exit 2; }
command -v python3 >/dev/null || { echo "bench-tracefs2spans: python3 missing; skipped"; exit 0; }
command -v sqlite3 >/dev/null || { echo "bench-tracefs2spans: sqlite3 missing; skipped"; exit 0; }
work=$(mktemp -d /tmp/bench-tracefs2spans.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$bin" "$work" <<'PY'
import os, resource, statistics, subprocess, sys
binary, work = sys.argv[1:3]
trace = os.path.join(work, "trace.txt")
with open(trace, "w") as f:
    f.write("# tracer: nop\n# trace_clock: mono\n")
    t = 1000000000
    for i in range(100000):
        tid, sp = 100 + i % 16, "%016x" % (i + 1)
        for ev, msg in (("tracing_mark_write", f"span:{sp} begin"),
                        ("sched_switch", f"prev_comm=server prev_pid={tid} next_pid=0"),
                        ("tracing_mark_write", f"span:{sp} end")):
            t += 9
            f.write(f"          server-{tid:<7d} [{i % 4:03d}] ..... {t // 1000000:5d}.{t % 1000000:06d}: {ev}: {msg}\n")

peer = r'''
import json, re, sys
r = re.compile(r"^\s*(.+?)-(\d+)\s+(?:\(\s*(\d+|-+)\)\s+)?\[(\d{3,})\]\s+(?:([.a-zA-Z0-9]{4,})\s+)?(\d+(?:\.\d+)?):\s(.*)$")
mk = re.compile(r"span:([0-9a-f]{1,16})\b.*?\b(begin|end)\b")
open_ = {}
out = sys.stdout
for line in open(sys.argv[1]):
    m = r.match(line)
    if not m:
        continue
    ev, _, msg = m[7].partition(": ")
    if ev not in ("tracing_mark_write", "bpf_trace_printk"):
        continue
    k = mk.search(msg)
    if not k:
        continue
    s, f = m[6].split(".")
    ts = int(s) * 10**9 + int(f.ljust(9, "0"))
    tid, span = int(m[2]), k[1].rjust(16, "0")
    out.write(json.dumps({"type": "event", "ts_ns": ts, "tid": tid, "comm": m[1], "kind": k[2], "span_id": span, "message": msg}) + "\n")
    st = open_.setdefault(tid, [])
    if k[2] == "begin":
        st.append((span, ts))
    else:
        for i in range(len(st) - 1, -1, -1):
            if st[i][0] == span:
                out.write(json.dumps({"type": "interval", "span_id": span, "tid": tid, "start_ns": st[i][1], "end_ns": ts, "depth": i}) + "\n")
                del st[i:]
                break
'''
open(os.path.join(work, "peer.py"), "w").write(peer)

def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

ours = statistics.median(cpu([binary, "--quiet", trace]) for _ in range(5))
theirs = statistics.median(cpu([sys.executable, os.path.join(work, "peer.py"), trace]) for _ in range(5))
print(f"parse 300000 lines -> NDJSON: tracefs2spans {ours:.3f} s CPU, Python reference parser {theirs:.3f} s CPU; "
      f"ratio peer/ours {theirs / ours:.1f}x")

def db_run():
    for ext in ("", "-wal", "-shm", "-owners"):
        if os.path.exists(os.path.join(work, "t.db" + ext)):
            os.unlink(os.path.join(work, "t.db" + ext))
    return cpu([binary, "--quiet", "--db", os.path.join(work, "t.db"), trace])

rounds = [(cpu([binary, "--quiet", trace]), db_run()) for _ in range(5)]
ratios = sorted(d / t for t, d in rounds if t > 0)
print(f"tracefs2spans NDJSON {statistics.median(t for t, _ in rounds):.3f} s CPU, --db "
      f"{statistics.median(d for _, d in rounds):.3f} s CPU (300000 lines)")
print(f"ratio: tracefs2spans --db CPU = {statistics.median(ratios):.2f}x its NDJSON output (goal <= 1.5x; "
      f"rounds: {' '.join('%.2f' % r for r in ratios)})")

db = os.path.join(work, "attr.db")
subprocess.run([binary, "--quiet", "--db", db, "/dev/null"], check=True)
subprocess.run(["sqlite3", db], check=True, text=True, input="""
INSERT INTO sources (id, kind, path, clock, tool, tool_version, status) VALUES
 (10, 'perf', 'p', 'monotonic', 'x', 'x', 'complete'), (11, 'tracefs', 't', 'monotonic', 'x', 'x', 'complete');
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 99999)
INSERT INTO span_intervals (source_id, span_id, tid, start_ns, end_ns, depth, end_rule)
SELECT 11, printf('%016x', i + 1), 1000 + i % 100, (i / 100) * 10000000, (i / 100) * 10000000 + 6000000, 0, 'end-marker' FROM c;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 999999)
INSERT INTO samples (source_id, ts_ns, tid, pid) SELECT 10, (i / 100) * 1000000 + 37, 1000 + i % 100, 1 FROM c;
""")
first = cpu([binary, "--quiet", "--db", db, "--refit"])
again = statistics.median(cpu([binary, "--quiet", "--db", db, "--refit"]) for _ in range(3))
print(f"attribution of 1000000 samples / 100000 intervals: first run {first:.2f} s CPU "
      f"({first / 1e6 * 1e6:.2f} us per sample, 600000 rows written), re-run {again:.2f} s CPU "
      f"(nothing to write; ratio first/re-run {first / again:.1f}x)")
PY

#!/usr/bin/env bash
# flamegraph against FlameGraph's flamegraph.pl on the same >= 100 MB folded file.
#
# Input: BENCH_FOLDED (default build/bench/bench.folded, made by
# scripts/gen-bench-folded.sh from a real profile when missing).  Peer: FLAMEGRAPH_DIR (a
# FlameGraph checkout, never part of this repository; FLAMEGRAPH_DIR).
# For the default mode and --flamechart: CPU time (user+sys) median of RUNS (3) runs of
# each tool in this same run, peak RSS (max of the runs), the ratios, and a check that both
# drew the same frames (tests/flamegraph/fgcompare.py).  Targets: >= 30x less CPU time,
# <= 1/4 of the peak memory; exit status 1 when a target or the frame check fails.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SF_BIN:-$top/bin}/flamegraph
input=${BENCH_FOLDED:-$top/build/bench/bench.folded}
runs=${RUNS:-3}
[ -x "$bin" ] || { echo "bench-flamegraph: $bin not built (make bin/flamegraph)"; exit 2; }
if [ ! -s "$input" ]; then
    "$top/scripts/gen-bench-folded.sh" "$input" || exit 2
fi
peer=""
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
    peer=$FLAMEGRAPH_DIR/flamegraph.pl
else
    echo "bench-flamegraph: FlameGraph not found: set FLAMEGRAPH_DIR to a checkout of"
    echo "  github.com/brendangregg/FlameGraph (FLAMEGRAPH_DIR); no ratios without it"
fi
work=$(mktemp -d /tmp/bench-flamegraph.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$bin" "$peer" "$input" "$runs" "$work" "$top/tests/flamegraph/fgcompare.py" <<'PY'
import os, statistics, subprocess, sys
ours, peer, path, runs, work, compare = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
mb = os.path.getsize(path) / 1048576

def measure(cmd, out):
    """CPU seconds (user+sys) and peak RSS in MB of one run, from wait4 of that child."""
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench-flamegraph: %s failed" % cmd[0])
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024

print("bench-flamegraph: %s, %.0f MB, %d runs each, median CPU time" % (path, mb, runs))
failed = False
for mode in ([], ["--flamechart"]):
    name = "default" if not mode else mode[0]
    tools = [("flamegraph", [ours] + mode + [path])]
    if peer:
        tools.append(("flamegraph.pl", ["perl", peer] + mode + [path]))
    res = {}
    for label, cmd in tools:
        cpu, rss = [], []
        for i in range(runs):
            c, r = measure(cmd, os.path.join(work, label + ".svg"))
            cpu.append(c); rss.append(r)
        res[label] = (statistics.median(cpu), max(rss))
        print("  %-11s %-13s cpu %7.2f s  %6.1f MB/s  peak rss %7.1f MB" % (
            name, label, res[label][0], mb / max(res[label][0], 1e-9), res[label][1]))
    if not peer:
        continue
    same = subprocess.run([sys.executable, compare, os.path.join(work, "flamegraph.pl.svg"),
                           os.path.join(work, "flamegraph.svg")], capture_output=True, text=True)
    speed = res["flamegraph.pl"][0] / max(res["flamegraph"][0], 1e-9)
    mem = res["flamegraph"][1] / res["flamegraph.pl"][1]
    print("  %-11s ratio: %.1fx less CPU time (target >= 30x), %.3f of the peak memory "
          "(target <= 0.25); frames %s" % (name, speed, mem,
                                         "identical" if same.returncode == 0 else "DIFFER"))
    if same.returncode != 0:
        print(same.stdout.rstrip())
    failed |= speed < 30 or mem > 0.25 or same.returncode != 0
sys.exit(1 if failed else 0)
PY

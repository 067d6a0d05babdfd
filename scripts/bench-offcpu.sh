#!/usr/bin/env bash
# The throughput cost of recording off-CPU time with perf (docs/recording.md's recipe) on
# the demo service under load (root).
#
#   scripts/bench-offcpu.sh [ROUNDS] [REQUESTS]     (default 3 4000)
#
# Builds the demo service as scripts/record-demo.sh does, starts it on 127.0.0.1 and
# drives it with h2load (nghttp2-client) over HTTP/1.1, 8 connections, on /api/checkout
# (the service's real work) and /nothing (a 404: no work, the scheduler events weigh
# most).  Each round runs every path three ways, in turn so that a shared machine's load
# falls on all alike: no recorder; `perf record -k mono -g -F 199 -e cpu-clock -p PID`
# (the CPU profile alone); and the off-CPU recipe, `perf record -k mono -g --sample-cpu
# -c 1 -e cpu-clock/period=5025125/ -e sched:sched_switch -e sched:sched_wakeup -p PID`;
# and, where spantrace is built, the CPU profile with `spantrace --offcpu -p PID` beside it
# (BPF: every off-CPU interval with its stacks, named in user space).
# The demo service is not CPU-bound under this load (each connection waits on the
# network), so requests/s barely move; what a recorder costs is CPU: the service's
# own CPU time per request (utime + stime from /proc) and perf record's (its children's
# rusage; spantrace's too in the last way).  Prints, per path, the medians of requests/s,
# the service's CPU us a request and the recorders' CPU us a request, for each way.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
reqs=${2:-4000}
say() { echo "bench-offcpu: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (perf on another process)"; exit 2; }
for t in h2load perf clang; do command -v $t >/dev/null || { say "$t not installed"; exit 2; }; done
W=$(mktemp -d /tmp/spanfold-bench-offcpu.XXXXXX)
svc_pid=
cleanup() {
    [ -z "$svc_pid" ] || kill "$svc_pid" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
make -C "$top" --no-print-directory -s build/libspanfold.a >&2
. "$top/scripts/bench/demo_service.sh"
bench_demo_start "$W"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$svc_pid/stat"; }
run() { # PATH -> "requests/s:service CPU us a request"
    local t0 t1 rps
    t0=$(cpu_ticks)
    rps=$(h2load --h1 -n "$reqs" -c 8 -t 1 "http://127.0.0.1:$port$1" 2>/dev/null |
        sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p')
    t1=$(cpu_ticks)
    echo "$rps:$(((t1 - t0) * 1000000 / $(getconf CLK_TCK) / reqs))"
}
recorded() { # PATH perf-record-args... -> "requests/s:service us:perf us" with perf attached
    local p=$1 pp r
    shift
    /usr/bin/time -f '%U %S' -o "$W/perf.time" perf record -q -k mono -g "$@" -p "$svc_pid" \
        -o "$W/perf.data" 2>"$W/perf.err" &
    pp=$!
    sleep 1 # perf record has no ready message
    r=$(run "$p")
    kill -INT "$(pgrep -P "$pp" perf || echo "$pp")" 2>/dev/null || true
    wait "$pp" || true
    echo "$r:$(awk -v n="$reqs" '{printf "%d", ($1 + $2) * 1000000 / n}' "$W/perf.time")"
}
spantrace=${SF_BIN:-$top/bin}/spantrace
bpf_recorded() { # PATH -> the same, with perf's CPU profile and spantrace --offcpu attached
    local p=$1 st r
    /usr/bin/time -f '%U %S' -o "$W/st.time" "$spantrace" --offcpu -p "$svc_pid" \
        -o "$W/offcpu.txt" 2>"$W/st.err" &
    st=$!
    for _ in $(seq 100); do grep -q tracing "$W/st.err" 2>/dev/null && break; sleep 0.1; done
    r=$(recorded "$p" -F 199 -e cpu-clock)
    kill -INT "$(pgrep -P "$st" spantrace || echo "$st")" 2>/dev/null || true
    wait "$st" || true
    awk -v r="$r" -v n="$reqs" '{split(r, a, ":"); printf "%s:%s:%d", a[1], a[2], a[3] + ($1 + $2) * 1000000 / n}' "$W/st.time"
}
declare -A none cpu offcpu bpf
for r in $(seq "$rounds"); do
    for p in /api/checkout /nothing; do
        none[$p]+="$(run $p) "
        cpu[$p]+="$(recorded $p -F 199 -e cpu-clock) "
        offcpu[$p]+="$(recorded $p --sample-cpu -c 1 -e 'cpu-clock/period=5025125,name=cpu-clock/' \
            -e sched:sched_switch -e sched:sched_wakeup) "
        say "round $r $p: perf.data of the off-CPU run $(du -h "$W/perf.data" | cut -f1)"
        if [ -x "$spantrace" ]; then
            bpf[$p]+="$(bpf_recorded $p) "
            say "round $r $p: spantrace --offcpu: $(tail -n 1 "$W/st.err")"
        fi
    done
done
for p in /api/checkout /nothing; do
    python3 - "$p" "${none[$p]}" "${cpu[$p]}" "${offcpu[$p]}" "${bpf[$p]:-}" <<'PY'
import statistics, sys
p = sys.argv[1]
ways = [[[float(v) for v in run.split(":")] for run in a.split()] for a in sys.argv[2:6]]
med = lambda w, k: statistics.median(r[k] for r in w)
out = []
names = ("no recorder", "CPU profile (-F 199)", "off-CPU recipe",
         "CPU profile + spantrace --offcpu")
for name, w in zip(names, ways):
    if not w:
        continue
    s = "%s %.0f req/s, service %.0f us CPU a request" % (name, med(w, 0), med(w, 1))
    if len(w[0]) > 2:
        s += ", recorders %.0f us a request" % med(w, 2)
    out.append(s)
print(p + ": " + "; ".join(out))
PY
done

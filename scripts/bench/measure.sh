# scripts/bench/measure.sh - sourced by the bench scripts: the CPU time (user + sys) and
# peak RSS of one command, and medians over runs.
#
# The figures come from wait4() on that very child, so nothing else is counted: an
# earlier version read getrusage(RUSAGE_CHILDREN) in a Python wrapper, which also
# counted whatever the interpreter itself had spawned at startup (80 ms here, with a
# pyenv shim), and inflated every short run.  A command run through `bash -c` is
# measured with its own children, since wait4 reports a reaped child's descendants.

# bench_spawn CMD... : prints "cpu_seconds peak_rss_kb wall_seconds" of one run of CMD,
# all three from around that child alone; its stdout and stderr go to /dev/null; a failing
# command is reported on stderr.
bench_spawn() {
    python3 - "$@" <<'PY'
import os, sys, time
null = [(os.POSIX_SPAWN_OPEN, fd, "/dev/null", os.O_WRONLY, 0) for fd in (1, 2)]
t0 = time.monotonic()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, file_actions=null)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
rc = os.waitstatus_to_exitcode(status)
if rc:
    print("bench: exit %d: %s" % (rc, " ".join(sys.argv[1:])), file=sys.stderr)
print("%.4f %d %.4f" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss, wall))
PY
}

# bench_measure CMD... : prints "cpu_seconds peak_rss_kb"
bench_measure() {
    local r
    r=$(bench_spawn "$@")
    echo "${r% *}"
}

# bench_timed CMD... : prints "wall_seconds cpu_seconds" (timing around bench_measure
# instead would add the interpreter's start to every wall time)
bench_timed() {
    local r
    r=$(bench_spawn "$@")
    set -- $r
    echo "$3 $1"
}

# bench_median: the median of the numbers on stdin, one per line
bench_median() {
    sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'
}

# bench_runs N CMD... : runs CMD N times; prints "median_cpu_seconds max_peak_rss_kb"
bench_runs() {
    local n=$1 runs
    shift
    runs=$(for _ in $(seq "$n"); do bench_measure "$@"; done)
    echo "$(cut -d' ' -f1 <<<"$runs" | bench_median) $(cut -d' ' -f2 <<<"$runs" | sort -n | tail -1)"
}

# bench_ratio A B [K]: K * A / B (K defaults to 1), or nothing when B is 0, so that a
# run too short to time is left out of a median (the printed rounds show it)
bench_ratio() {
    awk -v a="$1" -v b="$2" -v k="${3:-1}" 'BEGIN {if (b > 0) print k * a / b}'
}

# bench_rounds FILE FORMAT: the numbers in FILE sorted, each printf-formatted, on one line
bench_rounds() {
    sort -n "$1" | awk -v f="$2" '{s = s (NR > 1 ? " " : "") sprintf(f, $1)} END {print s}'
}

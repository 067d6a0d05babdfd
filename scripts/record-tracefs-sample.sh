#!/usr/bin/env bash
# Record the real tracefs sample of samples/tracefs/: packets, kernel span markers and
# perf samples of one small instrumented service, on this machine, with the true
# CLOCK_REALTIME - CLOCK_MONOTONIC offset at recording time.
#
#   scripts/record-tracefs-sample.sh [OUTDIR] [REQUESTS]   (root; default samples/tracefs, 120)
#
# What it does (everything it starts is stopped by pid; the run is bounded in time):
#   1. mounts tracefs at /sys/kernel/tracing if it is not mounted;
#   2. creates its own tracefs instance (instances/spanfold-PID) and sets that instance's
#      trace_clock to mono.  An instance has its own buffer, clock and trace_marker, so the
#      global trace_clock (and whoever else traces) is left alone; setting a clock clears
#      that buffer, which is why it is set before anything is written.  The instance is
#      removed at the end;
#   3. builds scripts/record/tracefs-demo.c (an HTTP/1.1 server + client on 127.0.0.1 that
#      writes "span:<id> trace:<id> begin" / "span:<id> end" markers around real CPU work);
#   4. runs tcpdump on lo (the demo's port only) and `perf record -k mono -g` of the demo;
#   5. writes OUTDIR/trace.txt (the instance's `trace`, with a "# trace_clock: mono" line
#      added under "# tracer:"), OUTDIR/http.pcap, OUTDIR/perf.txt (`perf script --header
#      -F +pid`, whose header says "# clockid: monotonic"), OUTDIR/MANIFEST.json.
# Needs: root, tracefs, perf (linux-perf), tcpdump, cc.  Exits 2 with the reason otherwise.
set -euo pipefail
if [ -z "${SPANFOLD_REC_TIMED:-}" ]; then
    SPANFOLD_REC_TIMED=1 exec timeout 180 "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/samples/tracefs}
requests=${2:-120}
say() { echo "record-tracefs-sample: $*" >&2; }
die() { say "$*"; exit 2; }

[ "$(id -u)" -eq 0 ] || die "needs root (tracefs, perf, tcpdump)"
for t in perf tcpdump cc python3; do command -v "$t" >/dev/null || die "$t not installed"; done
T=/sys/kernel/tracing
if [ ! -e "$T/trace_marker" ]; then
    mount -t tracefs nodev "$T" 2>/dev/null || die "cannot mount tracefs at $T"
fi
[ -d "$T/instances" ] || die "$T/instances missing (kernel without tracing instances)"

W=$(mktemp -d /tmp/spanfold-tracefs.XXXXXX)
inst=$T/instances/spanfold-$$
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -d "$inst" ] && rmdir "$inst" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/tracefs-demo" "$top/scripts/record/tracefs-demo.c"
mkdir "$inst" || die "cannot create tracefs instance $inst"
echo mono >"$inst/trace_clock" # clears this instance's buffer
echo 4096 >"$inst/buffer_size_kb"
echo 1 >"$inst/tracing_on"
grep -q '\[mono\]' "$inst/trace_clock" || die "trace_clock mono not accepted"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tcpdump -i lo -U -s 0 -w "$W/http.pcap" "tcp port $port" 2>"$W/tcpdump.err" &
pids+=($!)
for _ in $(seq 50); do grep -q "listening on" "$W/tcpdump.err" && break; sleep 0.1; done
grep -q "listening on" "$W/tcpdump.err" || die "tcpdump did not start: $(cat "$W/tcpdump.err")"

say "recording $requests requests on 127.0.0.1:$port"
perf record -q -k mono -g -F 1999 -e cpu-clock -o "$W/perf.data" -- \
    "$W/tracefs-demo" "$inst/trace_marker" "$port" "$requests" "$W/demo.json" 2>"$W/perf.err" ||
    die "perf record failed: $(cat "$W/perf.err")"
sleep 0.3
kill -INT "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
echo 0 >"$inst/tracing_on"

mkdir -p "$out"
# the trace, with its clock named for tracefs2spans (a copy of `trace` does not say it)
awk '{ print } /^# tracer:/ { print "# trace_clock: mono" }' "$inst/trace" >"$out/trace.txt"
cp "$W/http.pcap" "$out/http.pcap"
perf script --header -F +pid -i "$W/perf.data" >"$out/perf.txt" 2>/dev/null
python3 - "$W/demo.json" "$out" <<'PY'
import json, os, platform, subprocess, sys
demo = json.load(open(sys.argv[1]))
out = sys.argv[2]
b, a = demo["realtime_minus_monotonic_ns_before"], demo["realtime_minus_monotonic_ns_after"]
markers = sum(1 for l in open(os.path.join(out, "trace.txt")) if "tracing_mark_write: span:" in l)
samples = sum(1 for l in open(os.path.join(out, "perf.txt")) if l[:1] not in ("#", "\t", "\n", " ") and l.strip())
perf = subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout.strip()
m = {
    "what": "one instrumented HTTP/1.1 service on 127.0.0.1 (scripts/record/tracefs-demo.c): "
            "span markers in a tracefs instance (trace_clock mono), packets on lo, perf record -k mono -g",
    "recorded_by": "scripts/record-tracefs-sample.sh",
    "kernel": platform.release(),
    "perf": perf,
    "files": {
        "trace.txt": "tracefs `trace` of the instance, '# trace_clock: mono' added under '# tracer:'",
        "http.pcap": "tcpdump -i lo (CLOCK_REALTIME, microseconds)",
        "perf.txt": "perf script --header -F +pid (clockid monotonic)",
    },
    "requests": demo["requests"],
    "markers": markers,
    "perf_samples": samples,
    "true_offset_ns": (a + b) // 2,
    "true_offset": {"realtime_minus_monotonic_before_ns": b, "window_before_ns": demo["window_ns_before"],
                    "realtime_minus_monotonic_after_ns": a, "window_after_ns": demo["window_ns_after"],
                    "method": "tightest of 2000 back-to-back CLOCK_MONOTONIC, CLOCK_REALTIME, "
                              "CLOCK_MONOTONIC reads; realtime minus the midpoint of the two mono reads"},
}
json.dump(m, open(os.path.join(out, "MANIFEST.json"), "w"), indent=1)
PY
say "wrote $out: $(du -sh "$out" | cut -f1) ($(grep -c 'span:' "$out/trace.txt") markers)"

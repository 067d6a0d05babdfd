#!/usr/bin/env bash
# Record the demo sample (samples/demo/): the demo service under real load, with
# packets, perf samples and spantrace span markers, on this machine.
#
#   scripts/record-demo.sh [OUTDIR] [PHASE_SECONDS]     (root; default samples/demo, 15)
#
# What it does (everything it starts is stopped by pid; the run is bounded by timeout):
#   1. builds build/libspanfold.a and bin/spantrace (make), the service
#      (samples/demo-service/*.c with libnghttp2) and scripts/record/demo-clockoffset.c;
#   2. mounts tracefs at /sys/kernel/tracing if it is not mounted (spantrace needs it for
#      its probes' events; its own output does not go through the trace buffer);
#   3. starts the service on 127.0.0.1 (a free port, and a second one for the admin
#      commands; at nice -10), tcpdump on lo (the service port only),
#      `perf record -k mono -g -F 199 -e cpu-clock --sample-cpu -p PID`, and
#      `spantrace --usdt spanfold:span_begin:span_end --decision-arg 1 -p PID`;
#   4. measures CLOCK_REALTIME - CLOCK_MONOTONIC (tightest of 5000 back-to-back reads)
#      before and after the load;
#   5. drives load with scripts/record/demo-load.py (curl HTTP/1.1, curl h2c prior
#      knowledge, python3-grpcio): PHASE_SECONDS normal, then slow mode on
#      (/api/search runs slow_regex_backtrack), then the sampling rate 0.5 -> 0.1;
#      With SOCKETS=1 in the environment, a second `spantrace --sockets -p PID --port PORT`
#      records the service's TCP send/receive calls at the same time (OUTDIR/sockets.txt);
#      SLOW_KIND=lock makes the slow mode wait instead of burn CPU (the service's
#      --slow-kind lock: a pool of one connection and a 15 ms answer), SLOW_KIND=downstream
#      makes every search call a backend of its own (scripts/record/backend.py, python3's
#      ThreadingHTTPServer, captured too) that slow mode asks to take 25 ms instead of 2
#      (the service passes its trace on in B3 headers), SLOW_KIND=mixed both that and the
#      cpu kind's slow_regex_backtrack at once; SLOW_KIND=network leaves the service alone
#      and makes the network slow instead: from the slow phase on, each of the clients'
#      request segments to the service is dropped with LOSS % odds (default 80), at most
#      one a connection (conntrack's mark), so that no request waits out TCP's backoff
#      (nftables, a table of its own on the input hook, removed at exit); the capture on
#      lo saw the segment before the drop, so it holds both copies; OFFCPU=1 records
#      with docs/recording.md's off-CPU recipe: every sched_switch and sched_wakeup of the
#      service beside a cpu-clock of the same rate (-c 1, period 5025125 ns: 199 Hz);
#      OFFCPU=bpf records the off-CPU time with `spantrace --offcpu -p PID` instead (the
#      CPU profile stays perf's 199 Hz cpu-clock), into OUTDIR/offcpu.txt;
#      SCENARIO=baggage|header|upstream|uniform records 2 x PHASE_SECONDS instead: normal,
#      then one sampling failure mode (demo-load.py --scenario; the service runs with the
#      matching rule: --drop-baggage env=prod-legacy, --rate-header
#      x-envoy-downstream-service-cluster=0.05), for the drift explanation's tests;
#   6. writes OUTDIR/demo.pcap, OUTDIR/perf.txt (`perf script --header --ns -F
#      comm,pid,tid,cpu,time,period,event,ip,sym,dso`, gzipped to perf.txt.gz when over
#      1 MB), OUTDIR/markers.txt (spantrace), OUTDIR/MANIFEST.json.
# Needs: root, perf (linux-perf), tcpdump, curl, python3-grpcio, libnghttp2-dev,
# systemtap-sdt-dev, and spantrace's build needs (clang, bpftool, libbpf-dev, kernel BTF);
# SLOW_KIND=network nft (nftables) and a kernel with nf_tables.
# Exits 2 with the reason when something is missing, 1 when the recording failed.
set -euo pipefail
if [ -z "${SPANFOLD_REC_TIMED:-}" ]; then
    SPANFOLD_REC_TIMED=1 exec timeout 600 "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/samples/demo}
phase=${2:-15}
say() { echo "record-demo: $*" >&2; }
die() { say "$*"; exit 2; }
py=/usr/bin/python3 # Debian's, where python3-grpcio lives

[ "$(id -u)" -eq 0 ] || die "needs root (perf, tcpdump, BPF)"
for t in perf tcpdump curl cc clang make pkg-config; do
    command -v "$t" >/dev/null || die "$t not installed"
done
"$py" -c 'import grpc' 2>/dev/null || die "python3-grpcio not installed"
pkg-config --exists libnghttp2 || die "libnghttp2-dev not installed"
echo '#include <sys/sdt.h>' | cc -E -x c - >/dev/null 2>&1 || die "sys/sdt.h missing (systemtap-sdt-dev)"
# the service links the plain (not sanitizer) library; spantrace may come from $SF_BIN
spantrace=${SF_BIN:-$top/bin}/spantrace
[ -x "$spantrace" ] || spantrace=$top/bin/spantrace
make -C "$top" --no-print-directory -s build/libspanfold.a $([ -x "$spantrace" ] || echo bin/spantrace) >&2 ||
    die "cannot build bin/spantrace (needs clang, bpftool, libbpf-dev, kernel BTF)"
[ -x "$spantrace" ] || die "spantrace not built: $(make -C "$top" -s 2>&1 | grep spantrace)"
T=/sys/kernel/tracing
if [ ! -e "$T/trace_marker" ]; then
    mount -t tracefs nodev "$T" 2>/dev/null || die "cannot mount tracefs at $T"
fi

W=$(mktemp -d /tmp/spanfold-demo.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -z "${loss_table:-}" ] || nft delete table inet "$loss_table" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
# stop one background process by pid and wait for it
stop_pid() {
    kill -"$2" "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    local keep=() p
    for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    pids=("${keep[@]}")
}
wait_for() { # FILE PATTERN WHAT
    for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    die "$3 did not start: $(head -c 400 "$1")"
}

svc=$W/spanfold-demo-service
# Frame pointers everywhere, no tail calls: perf -g sees every function of a request.
# clang, because gcc 12 drops the frame pointer of leaf functions even with
# -mno-omit-leaf-frame-pointer, and the leaves are where the samples land.
svc_cflags="-std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
    -fno-optimize-sibling-calls -Wall -Wextra -I$top/lib"
# shellcheck disable=SC2086
clang $svc_cflags -o "$svc" "$top"/samples/demo-service/*.c "$top/build/libspanfold.a" \
    $(pkg-config --libs libnghttp2) -pthread
cc -O2 -o "$W/clockoffset" "$top/scripts/record/demo-clockoffset.c"

# nice -10: the machine may be shared, and the phases should show the service's own
# latency rather than the neighbours' builds.  The admin commands go to a second port,
# outside the capture, so that the packets hold the service's traffic only.
slow_kind=${SLOW_KIND:-cpu}
case $slow_kind in cpu | lock | downstream | mixed | network) ;; *) die "SLOW_KIND is cpu, lock, downstream, mixed or network" ;; esac
svc_kind=$slow_kind
slow_cmd=()
if [ "$slow_kind" = network ]; then
    svc_kind=cpu # never switched on: the load script drops packets instead
    loss=${LOSS:-80}
    case $loss in [1-9] | [1-9][0-9]) ;; *) die "LOSS is a percentage, 1 to 99" ;; esac
    command -v nft >/dev/null || die "nft not installed (nftables: SLOW_KIND=network drops packets with it)"
    loss_table=spanfold_loss_$$
    nft add table inet "$loss_table" 2>"$W/nft.err" &&
        nft add chain inet "$loss_table" in '{ type filter hook input priority 0 ; }' 2>>"$W/nft.err" ||
        { loss_table_err=$(head -1 "$W/nft.err"); nft delete table inet "$loss_table" 2>/dev/null; loss_table=; die "nftables cannot filter here: $loss_table_err"; }
fi
backend=()
if [ "$slow_kind" = downstream ] || [ "$slow_kind" = mixed ]; then
    "$py" "$top/scripts/record/backend.py" 0 >"$W/backend.out" 2>&1 &
    backend_pid=$!
    pids+=("$backend_pid")
    wait_for "$W/backend.out" "listening on" "the search backend"
    backend_port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$W/backend.out")
    backend=(--backend "$backend_port")
fi
scenario=${SCENARIO:-}
rules=()
case $scenario in
'' | upstream | uniform) ;;
baggage) rules=(--drop-baggage env=prod-legacy) ;;
header) rules=(--rate-header x-envoy-downstream-service-cluster=0.05) ;;
*) die "SCENARIO is baggage, header, upstream or uniform" ;;
esac
nice -n -10 "$svc" --port 0 --admin-port 0 --rate 0.5 --slow-kind "$svc_kind" "${backend[@]}" "${rules[@]}" \
    >"$W/svc.out" 2>"$W/svc.err" &
svc_pid=$!
pids+=("$svc_pid")
wait_for "$W/svc.out" "listening on" "the demo service"
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$W/svc.out")
admin_port=$(sed -n 's/.*(admin 127\.0\.0\.1:\([0-9]*\)).*/\1/p' "$W/svc.out")
# the clients' segments that carry a request: over 120 bytes (IP and TCP headers are 52
# with TCP's timestamps; HTTP/2's preface, settings and window updates stay under it, and
# their loss would be repaired within microseconds: the request's segment behind it
# arrives, SACKs it, and RACK resends at once); one a connection at most (marked 0x5f
# once one is lost), so no request waits out TCP's backoff; SYNs and ACKs pass
[ "$slow_kind" != network ] || slow_cmd=(--slow-cmd "nft add rule inet $loss_table in ip daddr 127.0.0.1 tcp dport $port ip length > 120 ct mark != 0x5f numgen random mod 100 < $loss ct mark set 0x5f counter drop")

tcpdump -i lo -U -s 0 -w "$W/demo.pcap" "tcp port $port${backend_port:+ or tcp port $backend_port}" \
    2>"$W/tcpdump.err" &
pids+=($!)
tcpdump_pid=$!
wait_for "$W/tcpdump.err" "listening on" tcpdump
if [ "${OFFCPU:-0}" = 1 ]; then
    perf_events=(-c 1 -e 'cpu-clock/period=5025125,name=cpu-clock/' -e sched:sched_switch
        -e sched:sched_wakeup)
else
    perf_events=(-F 199 -e cpu-clock)
fi
perf record -q -k mono -g "${perf_events[@]}" --sample-cpu -p "$svc_pid" -o "$W/perf.data" \
    2>"$W/perf.err" &
perf_pid=$!
pids+=("$perf_pid")
"$spantrace" --usdt spanfold:span_begin:span_end --decision-arg 1 -p "$svc_pid" \
    -o "$W/markers.txt" "$svc" 2>"$W/spantrace.err" &
st_pid=$!
pids+=("$st_pid")
wait_for "$W/spantrace.err" "tracing" spantrace
if [ "${SOCKETS:-0}" = 1 ]; then
    "$spantrace" --sockets -p "$svc_pid" --port "$port" -o "$W/sockets.txt" 2>"$W/sockets.err" &
    sock_pid=$!
    pids+=("$sock_pid")
    wait_for "$W/sockets.err" "tracing" "spantrace --sockets"
fi
if [ "${OFFCPU:-0}" = bpf ]; then
    "$spantrace" --offcpu -p "$svc_pid" -o "$W/offcpu.txt" 2>"$W/offcpu.err" &
    off_pid=$!
    pids+=("$off_pid")
    wait_for "$W/offcpu.err" "tracing" "spantrace --offcpu"
fi
sleep 1 # perf record has no ready message; give it time to open its events

"$W/clockoffset" >"$W/offset-before.json"
say "recording ${scenario:+$scenario: }$([ -n "$scenario" ] && echo 2 || echo 3) x ${phase}s of load on 127.0.0.1:$port"
load_rc=0
"$py" "$top/scripts/record/demo-load.py" "$port" "$W/load.json" --admin-port "$admin_port" \
    --phase "$phase" ${scenario:+--scenario "$scenario"} "${slow_cmd[@]}" || load_rc=$?
"$W/clockoffset" >"$W/offset-after.json"
sleep 0.5
stop_pid "$st_pid" INT
[ -z "${sock_pid:-}" ] || stop_pid "$sock_pid" INT
[ -z "${off_pid:-}" ] || stop_pid "$off_pid" INT
stop_pid "$perf_pid" INT
stop_pid "$tcpdump_pid" INT
stop_pid "$svc_pid" TERM
dropped=0
if [ -n "${loss_table:-}" ]; then
    dropped=$(nft list table inet "$loss_table" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
    nft delete table inet "$loss_table"
    loss_table=
fi
# a background python3 ignores SIGINT (a non-interactive shell's background job)
[ -z "${backend_pid:-}" ] || stop_pid "$backend_pid" TERM
[ "$load_rc" -eq 0 ] || { say "load failed (status $load_rc)"; exit 1; }

mkdir -p "$out"
rm -f "$out/perf.txt" "$out/perf.txt.gz"
cp "$W/demo.pcap" "$out/demo.pcap"
cp "$W/markers.txt" "$out/markers.txt"
[ -z "${sock_pid:-}" ] || cp "$W/sockets.txt" "$W/sockets.err" "$out/"
[ -z "${off_pid:-}" ] || cp "$W/offcpu.txt" "$W/offcpu.err" "$out/"
fields=comm,pid,tid,cpu,time,period,event,ip,sym,dso
tp=()
[ "${OFFCPU:-0}" = 1 ] && tp=(-F "trace:$fields,trace") # the tracepoints with their fields
perf script --header --ns -F "$fields" "${tp[@]}" -i "$W/perf.data" \
    >"$out/perf.txt" 2>"$W/perf-script.err" || die "perf script failed: $(cat "$W/perf-script.err")"
if [ "$(stat -c %s "$out/perf.txt")" -gt 1048576 ]; then
    gzip -9n "$out/perf.txt"
fi
"$py" - "$W" "$out" "$svc" "$(perf --version)" "$(tcpdump --version 2>&1 | head -1)" \
    "$(curl --version | head -1)" "$slow_kind" "${OFFCPU:-0}" "${loss:-0}" "$dropped" <<'PY'
import glob, gzip, json, os, platform, sys
W, out, svc, perfv, tcpdumpv, curlv, slow_kind, offcpu, loss, dropped = sys.argv[1:11]
load = json.load(open(os.path.join(W, "load.json")))
before = json.load(open(os.path.join(W, "offset-before.json")))
after = json.load(open(os.path.join(W, "offset-after.json")))
perf = os.path.join(out, "perf.txt")
perf = perf if os.path.exists(perf) else perf + ".gz"
op = gzip.open if perf.endswith(".gz") else open
samples = sum(1 for l in op(perf, "rt") if l[:1] not in ("#", "\t", "\n", " ") and l.strip()
              and " cpu-clock:" in l)
markers = sum(1 for l in open(os.path.join(out, "markers.txt")) if "spantrace: span:" in l)
ph = {p["what"]: p for p in load["phases"]}
m = {
    "what": "the spanfold demo service (samples/demo-service/) under real load on 127.0.0.1: "
            "packets on lo, perf record -k mono -g of the service at 199 Hz%s, spantrace span "
            "markers (USDT spanfold:span_begin/span_end); normal phase, slow phase (%s), "
            "sampling-rate change" % (
                " with every sched_switch and sched_wakeup (-c 1)" if offcpu == "1" else
                ", spantrace --offcpu (every off-CPU interval, BPF)" if offcpu == "bpf" else "",
                "search waits for a pool of one connection and its 15 ms answer"
                if slow_kind == "lock" else
                "search waits 25 ms instead of 2 for its backend, GET /api/backend"
                if slow_kind == "downstream" else
                "search waits 25 ms for its backend and burns CPU in slow_regex_backtrack"
                if slow_kind == "mixed" else
                "the clients' data segments to the service dropped at %s %% odds, one a connection "
                "at most, after the capture (nftables, input hook): TCP retransmits them" % loss
                if slow_kind == "network" else "search burns CPU in slow_regex_backtrack"),
    "slow_kind": slow_kind,
    "offcpu": offcpu == "1" or offcpu == "bpf",
    "offcpu_recorder": {"1": "perf", "bpf": "spantrace"}.get(offcpu),
    "recorded_by": "scripts/record-demo.sh",
    "kernel": platform.release(),
    "tools": {"perf": perfv, "tcpdump": tcpdumpv, "curl": curlv,
              "grpc": "python3-grpcio (see requests[].client)"},
    "files": {
        "demo.pcap": "tcpdump -i lo 'tcp port PORT' (CLOCK_REALTIME, microseconds)",
        os.path.basename(perf): "perf script --header --ns -F comm,pid,tid,cpu,time,period,event,"
                                "ip,sym,dso%s (clockid monotonic)" %
                                (" -F trace:...,trace" if offcpu == "1" else ""),
        "markers.txt": "spantrace --usdt spanfold:span_begin:span_end --decision-arg 1 -p PID "
                       "(tracefs text format, trace_clock mono, ns)",
    },
    "service": {
        "sampling": "honour the preferred context's sampled flag; else keep when a uniform draw "
                    "< effective rate (rate, x0.1 while the breaker is open: mean latency over "
                    "the last 64 spans > 250 ms or error share > 25 %, for 5 s)",
        "rate_initial": 0.5, "rate_after": load["rate_after"],
        "span_id_marked": "the span id the request carried (client's span id), as on the wire",
        "functions": {
            "/api/checkout": ["work_checkout", "price_cart", "tax_rules"],
            "/api/search": ["work_search", "rank_results", "score_doc"],
            "/demo.Catalog/Lookup": ["work_lookup", "catalog_lookup", "hash_sku"],
        },
        "slow_endpoint": "/api/search",
        "slow_function": "slow_regex_backtrack" if slow_kind == "cpu" else None,
        "slow_blocked_in": ["pool_acquire", "backend_wait"] if slow_kind == "lock" else None,
        "slow_downstream": "/api/backend" if slow_kind in ("downstream", "mixed") else None,
        "slow_network": {"loss_pct": int(loss), "dropped_segments": int(dropped or 0),
                         "how": "nft: ip daddr 127.0.0.1 tcp dport PORT ip length > 120 "
                                "ct mark != 0x5f numgen random mod 100 < LOSS ct mark set "
                                "0x5f drop (input hook: one data segment a connection at "
                                "most; every endpoint alike)"} if slow_kind == "network" else None,
        "marker_functions": ["sf_demo_span_begin", "sf_demo_span_end"],
        "usdt": ["spanfold:span_begin", "spanfold:span_end"],
        "workers": 16, "nice": -10,
        "admin": "POST /admin/slow, /admin/rate on a second port, not in the capture",
    },
    "service_exit": open(os.path.join(W, "svc.err")).read().strip(),
    "phase_s": load["phase_s"],
    "phases": load["phases"],
    "slow_start_realtime_ns": ph.get("slow", {}).get("realtime_ns"),
    "slow_start_monotonic_ns": ph.get("slow", {}).get("monotonic_ns"),
    "rate_change_realtime_ns": ph.get("rate", {}).get("realtime_ns"),
    "rate_change_monotonic_ns": ph.get("rate", {}).get("monotonic_ns"),
    "true_offset_ns": (before["offset_ns"] + after["offset_ns"]) // 2,
    "true_offset": {"before": before, "after": after,
                    "method": "tightest of 5000 back-to-back CLOCK_MONOTONIC, CLOCK_REALTIME, "
                              "CLOCK_MONOTONIC reads (scripts/record/demo-clockoffset.c); "
                              "realtime minus the midpoint of the two mono reads"},
    "markers": markers,
    "perf_samples": samples,
    "request_count": len(load["requests"]),
    "requests": load["requests"],
}
if load.get("scenario"):
    sc = load["scenario"]
    m["scenario"] = sc
    m["what"] = ("the spanfold demo service (samples/demo-service/) under real load on 127.0.0.1, "
                 "packets, perf samples and span markers as above; a normal phase, then the "
                 "sampling failure mode '%s' (scripts/record/demo-load.py --scenario)" % sc)
    m["service"]["rules"] = {"baggage": "--drop-baggage env=prod-legacy",
                             "header": "--rate-header x-envoy-downstream-service-cluster=0.05"
                             }.get(sc)
    sw = [p for p in load["phases"] if p["what"] in ("rate", "scenario:" + sc)][0]
    m["scenario_start_realtime_ns"] = sw["realtime_ns"]
    m["scenario_start_monotonic_ns"] = sw["monotonic_ns"]
json.dump(m, open(os.path.join(out, "MANIFEST.json"), "w"), indent=1)
PY
say "wrote $out: $(du -sh "$out" | cut -f1), $(grep -c 'spantrace: span:' "$out/markers.txt") markers"

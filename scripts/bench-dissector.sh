#!/usr/bin/env bash
# Cost of the Trace Context plugin on top of tshark's own HTTP/2 dissection.
# Records real HTTP/2 traffic (h2load against nghttpd on loopback, with trace
# headers) unless BENCH_H2_PCAP names a capture, then compares the CPU time
# (user+sys, median of RUNS) of
#   A: tshark -T fields -e http2.header.name -e http2.header.value      (plugin not loaded)
#   B: the same, plugin loaded, plus -e tracectx.span_id -e tracectx.trace_id
# Both run as the same unprivileged user (tshark ignores plugin folders as root).
# PEER_SO names another build of the plugin (e.g. the one before a change): it runs as a
# third configuration in the same rounds, and its CPU is compared with this build's.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
so=$top/build/dissector/spanfold.so
runs=${RUNS:-3}
[ -f "$so" ] || { echo "bench-dissector: plugin not built (make); skipped"; exit 0; }
for c in tshark setpriv; do command -v $c >/dev/null || { echo "bench-dissector: $c missing; skipped"; exit 0; }; done
work=$(mktemp -d /tmp/bench-dissector.XXXXXX); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/plugins/4.0/epan" "$work/empty/4.0/epan"
cp "$so" "$work/plugins/4.0/epan/"
peer=${PEER_SO:-}
if [ -n "$peer" ]; then mkdir -p "$work/peer/4.0/epan"; cp "$peer" "$work/peer/4.0/epan/spanfold.so"; fi
port=${BENCH_H2_PORT:-18543}
pcap=${BENCH_H2_PCAP:-}
if [ -z "$pcap" ]; then
    for c in nghttpd h2load tcpdump; do command -v $c >/dev/null || { echo "bench-dissector: $c missing; skipped"; exit 0; }; done
    pcap=$work/h2.pcap
    mkdir -p "$work/www"; head -c 300 /dev/urandom | base64 >"$work/www/index.html"
    nghttpd --no-tls -d "$work/www" "$port" >/dev/null 2>&1 & srv=$!
    tcpdump -i lo -s 0 -U -w "$pcap" "tcp port $port" >/dev/null 2>&1 & cap=$!
    sleep 1
    h2load -n "${BENCH_REQUESTS:-20000}" -c 4 -m 8 \
        -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
        -H 'tracestate: rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' \
        -H 'b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90' \
        "http://127.0.0.1:$port/index.html" >/dev/null
    sleep 1; kill $cap $srv; wait $cap $srv 2>/dev/null || true
fi
chmod -R a+rX "$work"; mkdir -p "$work/o"; chmod 1777 "$work/o"; cp "$pcap" "$work/in.pcap"; chmod a+r "$work/in.pcap"
size=$(stat -c %s "$work/in.pcap")
run() { # $1 = plugin dir; rest = extra fields
    local dir=$1; shift
    setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" WIRESHARK_PLUGIN_DIR="$dir" \
        /usr/bin/time -f '%U %S %M' -o "$work/o/t" tshark -r "$work/in.pcap" -d "tcp.port==$port,http2" \
        -T fields -e http2.header.name -e http2.header.value "$@" >"$work/out" 2>/dev/null
    awk '{printf "%.3f %d\n", $1 + $2, $3}' "$work/o/t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
a=(); b=(); c=()
for _ in $(seq "$runs"); do
    a+=("$(run "$work/empty" | cut -d' ' -f1)")
    b+=("$(run "$work/plugins" -e tracectx.span_id -e tracectx.trace_id | cut -d' ' -f1)")
    [ -z "$peer" ] || c+=("$(run "$work/peer" -e tracectx.span_id -e tracectx.trace_id | cut -d' ' -f1)")
done
grep -q 00f067aa0ba902b7 "$work/out" || { echo "bench-dissector: plugin output has no span ids: not loaded?"; exit 1; }
ma=$(printf '%s\n' "${a[@]}" | median); mb=$(printf '%s\n' "${b[@]}" | median)
echo "capture: $((size / 1000)) kB of HTTP/2 ($runs runs each, CPU user+sys medians)"
echo "tshark HTTP/2 fields, no plugin:      ${ma}s  (runs: ${a[*]})"
echo "tshark + spanfold Trace Context:      ${mb}s  (runs: ${b[*]})"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "plugin overhead: %+.1f%% CPU (target < 20%%)\n", (b / a - 1) * 100}'
if [ -n "$peer" ]; then
    mc=$(printf '%s\n' "${c[@]}" | median)
    echo "tshark + PEER_SO ($peer):  ${mc}s  (runs: ${c[*]})"
    awk -v a="$ma" -v b="$mb" -v c="$mc" 'BEGIN {printf "this plugin / PEER_SO: %.3f of the CPU; overhead %+.1f%% against %+.1f%%\n", b / c, (b / a - 1) * 100, (c / a - 1) * 100}'
fi

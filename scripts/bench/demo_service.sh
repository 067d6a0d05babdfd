# shellcheck shell=bash
# demo_service.sh - the demo service the throughput benchmarks load (sourced).
#
#   . scripts/bench/demo_service.sh
#   bench_demo_start DIR [SERVICE-OPTION...]   # builds and starts it; sets svc_pid, port
#
# Builds samples/demo-service/ as scripts/record-demo.sh does (frame pointers, the plain
# library; build/libspanfold.a must exist) into DIR/svc, starts it on 127.0.0.1 with a
# free port (its admin commands on another), waits until it listens, and sets svc_pid
# and port.  The caller stops it (kill "$svc_pid").
bench_demo_start() {
    local dir=$1
    shift
    # shellcheck disable=SC2046
    clang -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Wall -I"$top/lib" \
        -o "$dir/svc" "$top"/samples/demo-service/*.c "$top/build/libspanfold.a" \
        $(pkg-config --libs libnghttp2) -pthread
    "$dir/svc" --port 0 --admin-port 0 "$@" >"$dir/svc.out" 2>"$dir/svc.err" &
    svc_pid=$!
    for _ in $(seq 100); do grep -q "listening on" "$dir/svc.out" 2>/dev/null && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/svc.out")
}

#!/usr/bin/env bash
# Live (issue #36.2): a Go server, where threads are not requests.  tests/data/goserver
# (net/http, HTTP/1.1), built here with Debian's Go toolchain, GOMAXPROCS=2; 80 requests,
# 16 at a time, one in four expensive (burn(): 100,000 rounds of SHA-256 with a 1 ms sleep
# after every 5,000, so its goroutine parks and resumes on whichever thread is free), the
# rest cheap.  Recorded with tcpdump, spantrace --sockets -p PID (its TCP calls, and one
# event per runtime.execute: which goroutine each thread runs) and perf record -g; spanfold
# ingest joins them by goroutine.  Checks, against which requests were expensive: >= 90 % of
# burn()'s samples on the right span, <= 2 % of those given on a wrong one (#36's goal);
# without the goroutine events (by thread, as before) far fewer.  Needs root, BPF, Go
# (golang-go), perf, tcpdump, curl; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spantrace --sockets on a Go server: goroutines, not threads"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (BPF, perf, tcpdump)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built"
for t in go perf tcpdump python3 curl sqlite3; do command -v $t >/dev/null || tap_skip_all "$t not installed (scripts/deps.sh heavy)"; done
[ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ] || tap_skip_all "Go's register ABI is read on x86_64 and arm64 only"
tap_tmpdir t_sockets_go
. "$top/tests/spantrace/go_live.sh"
trap 'go_live_stop; [ -n "${svc:-}" ] && kill "$svc" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$top/scripts/bench/go_server.sh"
go_server_build goserver "$tmp" || tap_skip_all "go build failed: $(head -c 200 "$tmp/build.err")"
go_server_start "$tmp/goserver" || tap_skip_all "the server did not start: $(head -c 200 "$tmp/svc.out")"
client() {
    seq 1 80 | xargs -P 16 -I{} sh -c 'i=$(printf %016x {}); k=1; [ $(({} % 4)) = 1 ] && k=100000
        curl -s -o /dev/null -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-$i-01" "http://127.0.0.1:'"$port"'/work?n=$k"'
}
go_live_record client
go_live_grade net/http
tap_plan

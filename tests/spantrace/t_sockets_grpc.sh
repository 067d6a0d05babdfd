#!/usr/bin/env bash
# Live (issue #36.2): a Go gRPC server, where the goroutine that does a call's work touches
# no socket.  tests/data/gogrpc (grpc-go from Debian), built here, GOMAXPROCS=2; 80 unary
# calls over one HTTP/2 connection, 16 in flight, one in four expensive (burn(): 100,000
# rounds of SHA-256 with a 1 ms sleep after every 5,000), the rest cheap.  grpc-go reads
# the connection's frames on one goroutine, starts a goroutine per stream for the handler
# and writes the answers from a third: only the goroutine starts (spantrace's "spawn"
# events) tie a handler to its stream.  Recorded with tcpdump, spantrace --sockets -p PID and
# perf record -g (the stacks only grade: the attribution reads none); spanfold ingest joins
# them (tests/spantrace/go_live.sh).  Checks, against which calls were expensive: >= 90 % of
# burn()'s samples on the right span, <= 2 % of those given on a wrong one (#36's goal); by
# thread, far fewer.  Needs root, BPF, Go and golang-google-grpc-dev, perf, tcpdump; skips
# with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spantrace --sockets on a Go gRPC server: goroutines started per stream"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (BPF, perf, tcpdump)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built"
for t in go perf tcpdump python3 sqlite3; do command -v $t >/dev/null || tap_skip_all "$t not installed (scripts/deps.sh heavy)"; done
[ -d /usr/share/gocode/src/google.golang.org/grpc ] || tap_skip_all "grpc-go not installed (golang-google-grpc-dev, scripts/deps.sh heavy)"
[ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ] || tap_skip_all "Go's register ABI is read on x86_64 and arm64 only"
tap_tmpdir t_sockets_grpc
. "$top/tests/spantrace/go_live.sh"
trap 'go_live_stop; [ -n "${svc:-}" ] && kill "$svc" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$top/scripts/bench/go_server.sh"
go_server_build gogrpc "$tmp" || tap_skip_all "go build failed: $(head -c 200 "$tmp/build.err")"
go_server_start "$tmp/gogrpc" serve || tap_skip_all "the server did not start: $(head -c 200 "$tmp/svc.out")"
go_live_record "$tmp/gogrpc" call "127.0.0.1:$port" 80 16 2>"$tmp/client.err"
rc=$?
# The first calls' frames often come with the connection's preface (always on a loaded
# machine): grpc-go's first goroutine reads them, then starts the stream server that
# starts their handlers (tracefs2spans/goroutines.c hand_over); before that rule about one
# recording in four scored 76-83 %.
check_eval "the client's 80 calls succeeded" "[ $rc = 0 ]"
go_live_grade grpc-go
calls=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM spans WHERE proto = 'grpc' AND grpc_method = 'Burn' AND span_id IS NOT NULL")
check_eval "the capture has the 80 calls as gRPC spans with their span ids ($calls)" "[ $calls = 80 ]"
tap_plan

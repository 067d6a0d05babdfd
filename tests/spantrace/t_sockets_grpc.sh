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
mkdir -p "$tmp/go/src/gogrpc"
cp "$top/tests/data/gogrpc/main.go" "$tmp/go/src/gogrpc/"
# GOPATH mode over Debian's Go source packages: no module download
(cd "$tmp/go/src/gogrpc" && GO111MODULE=off GOPATH=$tmp/go:/usr/share/gocode GOCACHE=$tmp/gocache \
    go build -o "$tmp/gogrpc" .) >"$tmp/build.err" 2>&1 ||
    tap_skip_all "go build failed: $(head -c 200 "$tmp/build.err")"
GOMAXPROCS=2 "$tmp/gogrpc" serve >"$tmp/svc.out" 2>&1 &
svc=$!
for _ in $(seq 50); do grep -q listening "$tmp/svc.out" && break; sleep 0.1; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/svc.out")
go_live_record "$tmp/gogrpc" call "127.0.0.1:$port" 80 16 2>"$tmp/client.err"
check_eval "the client's 80 calls succeeded" "[ $? = 0 ]"
go_live_grade grpc-go
calls=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM spans WHERE proto = 'grpc' AND grpc_method = 'Burn' AND span_id IS NOT NULL")
check_eval "the capture has the 80 calls as gRPC spans with their span ids ($calls)" "[ $calls = 80 ]"
tap_plan

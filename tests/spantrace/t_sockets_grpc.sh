#!/usr/bin/env bash
# Live (issue #36.2): a Go gRPC server, where the goroutine that does a call's work touches
# no socket.  tests/data/gogrpc (grpc-go from Debian), built here, GOMAXPROCS=2; 80 unary
# calls over one HTTP/2 connection, 16 in flight, one in four expensive (burn(): 100,000
# rounds of SHA-256 with a 1 ms sleep after every 5,000), the rest cheap.  grpc-go reads
# the connection's frames on one goroutine, starts a goroutine per stream for the handler
# and writes the answers from a third: only the goroutine starts (spantrace's "spawn"
# events) tie a handler to its stream.  Recorded with tcpdump, spantrace --sockets -p PID and
# perf record -g (the stacks only grade: the attribution reads none); spanfold ingest joins
# them.  Checks, against which calls were expensive: >= 90 % of burn()'s samples on
# the right span, <= 2 % of those given on a wrong one (#36's goal); by thread, far fewer.  Needs root, BPF, Go and golang-google-grpc-dev,
# perf, tcpdump; skips with the reason otherwise.
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
pids=()
stop_all() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done; pids=(); }
trap 'stop_all; [ -n "${svc:-}" ] && kill "$svc" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
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
tcpdump -i lo -U -s 0 -w "$tmp/cap.pcap" "tcp port $port" 2>"$tmp/tcpdump.err" &
pids+=($!)
"$bin/spantrace" --sockets -p "$svc" --port "$port" -o "$tmp/sockets.txt" 2>"$tmp/st.err" &
pids+=($!)
perf record -q -k mono -g -F 2999 -e cpu-clock --sample-cpu -p "$svc" -o "$tmp/perf.data" \
    2>"$tmp/perf.err" &
pids+=($!)
for _ in $(seq 100); do grep -q tracing "$tmp/st.err" 2>/dev/null && grep -q listening "$tmp/tcpdump.err" && break; sleep 0.1; done
sleep 0.5
"$tmp/gogrpc" call "127.0.0.1:$port" 80 16 2>"$tmp/client.err"
check_eval "the client's 80 calls succeeded" "[ $? = 0 ]"
sleep 1
stop_all
grep -q 'go=yes' "$tmp/sockets.txt" || tap_skip_all "spantrace could not probe runtime.execute here: $(head -3 "$tmp/st.err" | tr '\n' ' ')"
ok "recorded with $(grep -c 'spantrace_sock: go ' "$tmp/sockets.txt") goroutine runs, $(grep -c 'spantrace_sock: spawn ' "$tmp/sockets.txt") goroutine starts"
python3 - "$tmp/truth.json" "$svc" <<'PY'
import json, sys
json.dump({"worker_pid": int(sys.argv[2]),
           "big_span_ids": ["%016x" % i for i in range(1, 81) if i % 4 == 1]}, open(sys.argv[1], "w"))
PY
"$bin/spanfold" ingest --db "$tmp/x.db" "$tmp/cap.pcap" "$tmp/perf.data" "$tmp/sockets.txt" 2>"$tmp/ingest.err"
check_eval "spanfold ingest joins capture, profile and socket events: exit 0" "[ $? = 0 ]"
grep "($svc)" "$tmp/ingest.err" | sed 's/^/# /'
calls=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM spans WHERE proto = 'grpc' AND grpc_method = 'Burn' AND span_id IS NOT NULL")
check_eval "the capture has the 80 calls as gRPC spans with their span ids ($calls)" "[ $calls = 80 ]"
grep -v 'spantrace_sock: \(go\|spawn\) ' "$tmp/sockets.txt" >"$tmp/nogo.txt"
"$bin/spanfold" ingest --quiet --db "$tmp/n.db" "$tmp/cap.pcap" "$tmp/perf.data" "$tmp/nogo.txt"
. "$top/tests/spantrace/grade.sh"
go_grade "$tmp/x.db" "$tmp/n.db" "$tmp/truth.json" 100
double=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id
            AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns")
check_eval "no thread time goes to two spans ($double); every interval is on a real thread" \
    "[ $double = 0 ] && [ \$(sqlite3 '$tmp/x.db' 'SELECT count(*) FROM span_intervals WHERE tid >= 4294967296 OR tid < 0') = 0 ]"
tap_plan

# shellcheck shell=bash
# go_live.sh - the live Go recordings of #36 (sourced after tap.sh by t_sockets_go.sh and
# t_sockets_grpc.sh, which build and start their server, $svc on 127.0.0.1:$port, in $tmp):
#
# go_live_record CLIENT...: tcpdump on lo, spantrace --sockets -p $svc (its TCP calls, and
#   one event per runtime.execute and per goroutine start) and perf record -g on it, then
#   the client command (80 requests, span ids 1..80, one in four expensive), then all
#   stopped; returns the client's status (skips the whole test where spantrace found no
#   Go runtime to probe).
# go_live_grade LABEL: the recording ingested with and without the goroutine lines, graded
#   against which requests were expensive (grade.sh's go_grade: >= 90 % right, <= 2 %
#   wrong, far fewer by thread); no thread time given twice, none on a goroutine's id.
# go_live_stop: stop what go_live_record started (for the caller's EXIT trap).
go_live_pids=()
go_live_stop() {
    local p
    for p in "${go_live_pids[@]}"; do kill -INT "$p" 2>/dev/null; done
    for p in "${go_live_pids[@]}"; do wait "$p" 2>/dev/null; done
    go_live_pids=()
}

go_live_record() {
    local rc
    tcpdump -i lo -U -s 0 -w "$tmp/cap.pcap" "tcp port $port" 2>"$tmp/tcpdump.err" &
    go_live_pids+=($!)
    "$bin/spantrace" --sockets -p "$svc" --port "$port" -o "$tmp/sockets.txt" 2>"$tmp/st.err" &
    go_live_pids+=($!)
    perf record -q -k mono -g -F 2999 -e cpu-clock --sample-cpu -p "$svc" -o "$tmp/perf.data" \
        2>"$tmp/perf.err" &
    go_live_pids+=($!)
    for _ in $(seq 100); do
        grep -q tracing "$tmp/st.err" 2>/dev/null && grep -q listening "$tmp/tcpdump.err" && break
        sleep 0.1
    done
    sleep 0.5
    "$@"
    rc=$?
    sleep 1
    go_live_stop
    grep -q 'go=yes' "$tmp/sockets.txt" ||
        tap_skip_all "spantrace could not probe runtime.execute here: $(head -3 "$tmp/st.err" | tr '\n' ' ')"
    return $rc
}

# go_live_truth: $tmp/truth.json, which requests were expensive (span ids 1, 5, 9, ...)
go_live_truth() {
    python3 - "$tmp/truth.json" "$svc" <<'PY'
import json, sys
json.dump({"worker_pid": int(sys.argv[2]),
           "big_span_ids": ["%016x" % i for i in range(1, 81) if i % 4 == 1]}, open(sys.argv[1], "w"))
PY
}
go_live_grade() {
    local double
    ok "$1: recorded with $(grep -c 'spantrace_sock: go ' "$tmp/sockets.txt") goroutine runs, $(grep -c 'spantrace_sock: spawn ' "$tmp/sockets.txt") goroutine starts"
    go_live_truth
    "$bin/spanfold" ingest --db "$tmp/x.db" "$tmp/cap.pcap" "$tmp/perf.data" "$tmp/sockets.txt" 2>"$tmp/ingest.err"
    check_eval "$1: spanfold ingest joins capture, profile and socket events: exit 0" "[ $? = 0 ]"
    grep "($svc)" "$tmp/ingest.err" | sed 's/^/# /'
    grep -v 'spantrace_sock: \(go\|spawn\) ' "$tmp/sockets.txt" >"$tmp/nogo.txt"
    "$bin/spanfold" ingest --quiet --db "$tmp/n.db" "$tmp/cap.pcap" "$tmp/perf.data" "$tmp/nogo.txt"
    . "$top/tests/spantrace/grade.sh"
    go_grade "$tmp/x.db" "$tmp/n.db" "$tmp/truth.json" 100
    double=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id
                AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns")
    check_eval "$1: no thread time goes to two spans ($double); every interval is on a real thread" \
        "[ $double = 0 ] && [ \$(sqlite3 '$tmp/x.db' 'SELECT count(*) FROM span_intervals WHERE tid >= 4294967296 OR tid < 0') = 0 ]"
}

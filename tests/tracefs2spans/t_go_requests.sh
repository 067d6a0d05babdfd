#!/usr/bin/env bash
# Goroutines, not threads, from committed recordings (no root, BPF, Go or perf needed):
#   tests/data/go-requests  a Go net/http server (HTTP/1.1) whose expensive requests park
#                           and resume on other threads;
#   tests/data/go-grpc      a grpc-go server whose calls share one HTTP/2 connection and run
#                           on goroutines started per stream, which touch no socket.
# spanfold ingest of the capture, the profile's text and spantrace --sockets' lines with the
# goroutine runs (and starts); graded against which requests were expensive
# (tests/spantrace/loop_score.py): >= 90 % of burn()'s samples on an expensive request,
# <= 2 % of those given on a cheap one (#36's goal); by thread, without the goroutine
# lines, far fewer.  The same checks run live in tests/spantrace/t_sockets_go.sh and
# t_sockets_grpc.sh.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="goroutine join on committed Go recordings"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 not installed"
tap_tmpdir t_go_requests
. "$top/tests/spantrace/grade.sh"
for rec in go-requests:200 go-grpc:200; do
    name=${rec%%:*}
    d=$top/tests/data/$name
    "$bin/spanfold" ingest --db "$tmp/$name.db" "$d/cap.pcap" "$d/perf.txt.gz" "$d/sockets.txt.gz" 2>"$tmp/$name.err"
    check_eval "$name: spanfold ingest reads the three: exit 0" "[ $? = 0 ]"
    gzip -dc "$d/sockets.txt.gz" | grep -v 'spantrace_sock: \(go\|spawn\) ' >"$tmp/$name.nogo.txt"
    "$bin/spanfold" ingest --quiet --db "$tmp/$name.n.db" "$d/cap.pcap" "$d/perf.txt.gz" "$tmp/$name.nogo.txt"
    go_grade "$tmp/$name.db" "$tmp/$name.n.db" "$d/truth.json" "${rec#*:}"
    check_eval "$name: every span interval on a real thread, none overlapping another" \
        "[ \$(sqlite3 '$tmp/$name.db' 'SELECT count(*) FROM span_intervals WHERE tid >= 4294967296 OR tid < 0') = 0 ] && [ \$(sqlite3 '$tmp/$name.db' 'SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns') = 0 ]"
done
check_eval "go-grpc: ingest counts the goroutines' samples apart" "grep -q '[1-9][0-9.]* % by goroutines' '$tmp/go-grpc.err'"
tap_plan

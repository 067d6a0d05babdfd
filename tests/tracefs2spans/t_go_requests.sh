#!/usr/bin/env bash
# Goroutines, not threads, from a committed recording (tests/data/go-requests: a Go net/http
# server whose expensive requests park and resume on other threads; no root, BPF, Go or perf
# needed): spanfold ingest of the capture, the profile's text and spantrace --sockets' lines
# with the goroutine runs; graded against which requests were expensive
# (tests/spantrace/loop_score.py): >= 90 % of burn()'s samples on an expensive request,
# <= 2 % of those given on a cheap one (#36's goal); by thread, without the goroutine lines,
# far fewer.  The same checks run live in tests/spantrace/t_sockets_go.sh.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="goroutine join on a committed Go recording"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 not installed"
tap_tmpdir t_go_requests
d=$top/tests/data/go-requests
"$bin/spanfold" ingest --db "$tmp/x.db" "$d/cap.pcap" "$d/perf.txt.gz" "$d/sockets.txt.gz" 2>"$tmp/ingest.err"
check_eval "spanfold ingest reads the three: exit 0" "[ $? = 0 ]"
gzip -dc "$d/sockets.txt.gz" | grep -v 'spantrace_sock: go ' >"$tmp/nogo.txt"
"$bin/spanfold" ingest --quiet --db "$tmp/n.db" "$d/cap.pcap" "$d/perf.txt.gz" "$tmp/nogo.txt"
. "$top/tests/spantrace/grade.sh"
go_grade "$tmp/x.db" "$tmp/n.db" "$d/truth.json" 200
check_eval "every span interval on a real thread, none overlapping another" \
    "[ \$(sqlite3 '$tmp/x.db' 'SELECT count(*) FROM span_intervals WHERE tid >= 4294967296 OR tid < 0') = 0 ] && [ \$(sqlite3 '$tmp/x.db' 'SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns') = 0 ]"
tap_plan

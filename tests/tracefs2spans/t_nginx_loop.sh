#!/usr/bin/env bash
# An event loop's time, attributed from a committed recording (tests/data/nginx-loop: nginx's
# one worker compressing 24 responses for 8 slow clients at once; no root, BPF or nginx
# needed): spanfold ingest of the capture, the profile's text and spantrace --sockets' lines
# with the readiness waits; graded against which requests were the expensive ones
# (tests/spantrace/loop_score.py): >= 80 % of the worker's samples and of its deflate
# samples given to one span, >= 80 % of the deflate samples on a big request, <= 2 % of
# those given on a small one (#36's goals); without the wait lines far less.  The same
# checks run live in tests/spantrace/t_sockets_loop.sh.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="event-loop attribution on a committed nginx recording"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 not installed"
tap_tmpdir t_nginx_loop
d=$top/tests/data/nginx-loop
"$bin/spanfold" ingest --db "$tmp/x.db" "$d/cap.pcap" "$d/perf.txt.gz" "$d/sockets.txt.gz" 2>"$tmp/ingest.err"
check_eval "spanfold ingest reads the three: exit 0" "[ $? = 0 ]"
gzip -dc "$d/sockets.txt.gz" | grep -v 'spantrace_sock: wait' >"$tmp/nowait.txt"
"$bin/spanfold" ingest --quiet --db "$tmp/n.db" "$d/cap.pcap" "$d/perf.txt.gz" "$tmp/nowait.txt"
. "$top/tests/spantrace/grade.sh"
loop_grade "$tmp/x.db" "$tmp/n.db" "$d/truth.json" 150
sed -n 's/^ *\(nginx (.*\)/# \1/p' "$tmp/ingest.err"
check_eval "ingest says per process what gave the samples their span, the event loop's waits among them" \
    "grep -q 'nginx ([0-9]*): [0-9]* samples: .* by an event loop.s waits' '$tmp/ingest.err'"
check_eval "the loop's pieces are span_intervals with end_rule loop, never overlapping another claim" \
    "[ \$(sqlite3 '$tmp/x.db' \"SELECT count(*) FROM span_intervals WHERE end_rule = 'loop'\") -gt 0 ] && [ \$(sqlite3 '$tmp/x.db' \"SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns\") = 0 ]"
tap_plan

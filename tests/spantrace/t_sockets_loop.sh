#!/usr/bin/env bash
# Live (issue #36.1): an event loop interleaving requests, graded against the clients'
# own truth.  nginx from Debian, one worker, gzip on every response, an 8 KiB send buffer;
# 48 requests, 8 at a time, each client reading at 150 KB/s (back-pressure: the worker
# compresses and writes each response in many turns of its loop, between the others');
# one request in four asks for big.txt (1.5 MB to deflate), the rest for small.txt (200 bytes).
# Recorded with tcpdump, spantrace --sockets (TCP calls and the worker's readiness
# waits) and perf record -g of the worker; spanfold ingest joins them.  Checks: the waits
# were traced; >= 80 % of the worker's samples and of its deflate samples (libz) are
# given to one span, >= 80 % of the deflate samples to a big.txt request and <= 2 % of
# the attributed ones to a small one (the goals of #36); without the wait lines the same
# recording attributes far less (the waits are the signal); no thread time goes to two
# spans.  Needs root, BPF with the syscall tracepoints, nginx, perf, tcpdump, curl,
# python3, sqlite3; skips with the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spantrace --sockets on nginx's event loop, gzip, slow clients"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (BPF, perf, tcpdump)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || tap_skip_all "nginx not installed (scripts/deps.sh heavy)"
for t in perf tcpdump python3 curl sqlite3; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
[ -d /sys/kernel/tracing/events/syscalls/sys_exit_epoll_wait ] ||
    [ -d /sys/kernel/debug/tracing/events/syscalls/sys_exit_epoll_wait ] ||
    tap_skip_all "the kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS): readiness waits cannot be traced"
tap_tmpdir t_sockets_loop
rc=0
SF_BIN=$bin "$top/scripts/record/nginx-loop.sh" "$tmp/rec" 2>"$tmp/rec.err" || rc=$?
[ $rc = 2 ] && tap_skip_all "$(tail -n 1 "$tmp/rec.err")"
[ $rc = 0 ] || { notok "nginx-loop.sh: exit $rc: $(tail -n 2 "$tmp/rec.err" | tr '\n' ' ')"; tap_plan; exit 0; }
worker=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["worker_pid"])' "$tmp/rec/truth.json")
ok "recorded 48 requests to nginx's one worker (pid $worker) with its readiness waits ($(grep -c 'spantrace_sock: wait' "$tmp/rec/sockets.txt") waits)"

"$bin/spanfold" ingest --db "$tmp/x.db" "$tmp/rec/cap.pcap" "$tmp/rec/perf.data" "$tmp/rec/sockets.txt" 2>"$tmp/ingest.err"
check_eval "spanfold ingest joins capture, profile and socket events: exit 0" "[ $? = 0 ]"
grep "($worker)" "$tmp/ingest.err" | sed 's/^/# /'
grep -v 'spantrace_sock: wait' "$tmp/rec/sockets.txt" >"$tmp/nowait.txt"
"$bin/spanfold" ingest --quiet --db "$tmp/n.db" "$tmp/rec/cap.pcap" "$tmp/rec/perf.data" "$tmp/nowait.txt"
nbig=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM spans WHERE path LIKE '/big.txt%' AND span_id IS NOT NULL")
check_eval "the capture holds the 48 requests, 12 of them for big.txt ($nbig)" \
    "[ $nbig = 12 ] && [ $(sqlite3 "$tmp/x.db" "SELECT count(*) FROM spans WHERE span_id IS NOT NULL") = 48 ]"
. "$top/tests/spantrace/grade.sh"
loop_grade "$tmp/x.db" "$tmp/n.db" "$tmp/rec/truth.json" 200
double=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_intervals x JOIN span_intervals y ON x.tid = y.tid AND x.id < y.id
            AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket' AND y.source = 'socket'")
double2=$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_intervals x JOIN shared_intervals y ON x.tid = y.tid
             AND x.start_ns < y.end_ns AND y.start_ns < x.end_ns WHERE x.source = 'socket'")
check_eval "no thread time goes to two spans, or to a span and the shared time ($double, $double2)" \
    "[ $double = 0 ] && [ $double2 = 0 ]"
check_eval "the loop's pieces are marked (end_rule loop) and ingest says how much it gave" \
    "[ \$(sqlite3 '$tmp/x.db' \"SELECT count(*) FROM span_intervals WHERE end_rule = 'loop'\") -gt 0 ] && grep -q 'by an event loop' '$tmp/ingest.err'"
tap_plan

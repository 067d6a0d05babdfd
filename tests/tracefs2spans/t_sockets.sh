#!/usr/bin/env bash
# tracefs2spans --db with socket events, no root needed: spantrace_sock lines made here
# from the TCP ranges pcap2spans found in samples/pcap/ipv6.pcap (IPv6, a keep-alive
# connection): a bad line is reported at its column and counted (exit 1), every span
# whose bytes the events cover gets its socket markers and interval, the clock is
# fitted from the (event, packet) pairs, and a re-run replaces the join, never adds.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
tap_tmpdir t_t2s_sockets
db=$tmp/x.db
"$bin/pcap2spans" --quiet --db "$db" "$top/samples/pcap/ipv6.pcap"
want=$(sqlite3 "$db" "SELECT count(*) FROM spans WHERE span_id IS NOT NULL AND
                      req_seq_start IS NOT NULL AND resp_seq_start IS NOT NULL")
check_eval "pcap2spans gives $want spans with a span id both ranges" "[ $want -ge 2 ]"
# one thread per exchange, as a server would: recv of the request, send of the response,
# 1 ms apart, 5 ms after the capture's own times minus a fixed offset of 1000 s
{
    echo "# tracer: spantrace"
    echo "# trace_clock: mono"
    sqlite3 -separator ' ' "$db" "SELECT 500 + s.id, c.server_addr, c.server_port, c.client_addr,
        c.client_port, s.req_seq_start, (s.req_seq_end - s.req_seq_start + 4294967296) % 4294967296,
        s.resp_seq_start, (s.resp_seq_end - s.resp_seq_start + 4294967296) % 4294967296,
        s.req_start_ns - 1000000000000 + 5000, s.resp_start_ns - 1000000000000 + 5000
        FROM spans s JOIN connections c ON c.id = s.connection_id WHERE s.span_id IS NOT NULL
        AND s.req_seq_start IS NOT NULL AND s.resp_seq_start IS NOT NULL ORDER BY s.id" |
    while read -r tid sa sp ca cp qs ql rs rl tq tr; do
        for x in "recv $qs $ql $tq" "send $rs $rl $tr"; do
            set -- $x
            printf '             svc-%-7s (    500) [000] .....  %d.%09d: spantrace_sock: %s [%s]:%s [%s]:%s seq=%s len=%s\n' \
                "$tid" $(($4 / 1000000000)) $(($4 % 1000000000)) "$1" "$sa" "$sp" "$ca" "$cp" "$2" "$3"
        done
    done
    echo '             svc-599     (    500) [000] .....  9.000000001: spantrace_sock: recv [::1]:80 [::1]:5 seq=12 len=x'
} >"$tmp/sockets.txt"
"$bin/tracefs2spans" --db "$db" "$tmp/sockets.txt" 2>"$tmp/err"
rc=$?
check_eval "one bad socket line: exit 1 ($rc)" "[ $rc = 1 ]"
check_eval "reported with its file, line and column" \
    "grep -q 'sockets.txt:$((2 + 2 * want + 1)):[0-9]*: .*socket event: expected len=N' '$tmp/err'"
q() { sqlite3 "$db" "$1"; }
check_eval "every span gets a socket interval on its own thread ($(q "SELECT count(*) FROM span_intervals WHERE source = 'socket'"))" \
    "[ $(q "SELECT count(DISTINCT span_id || '/' || tid) FROM span_intervals WHERE source = 'socket' AND tid = 500 + (SELECT id FROM spans s WHERE s.span_id = span_intervals.span_id)") = $want ]"
check_eval "a begin and an end marker per span, marked source socket" \
    "[ $(q "SELECT count(*) FROM span_events WHERE source = 'socket' AND kind IN ('begin', 'end')") = $((2 * want)) ]"
check_eval "no shared time between requests that never overlap" \
    "[ $(q "SELECT count(*) FROM shared_intervals") = 0 ]"
off=$(q "SELECT offset_ns FROM clock_fits")
check_eval "the clock is fitted from the event/packet pairs: offset $off ns (1000 s - 5 us)" \
    "[ '$off' = 999999995000 ]"
"$bin/tracefs2spans" --quiet --db "$db" --refit 2>/dev/null
check_eval "--refit replaces the join: the same $want intervals" \
    "[ $(q "SELECT count(*) FROM span_intervals WHERE source = 'socket'") = $want ] &&
     [ $(q "SELECT count(*) FROM span_events WHERE source = 'socket'") = $((2 * want)) ]"
tap_plan

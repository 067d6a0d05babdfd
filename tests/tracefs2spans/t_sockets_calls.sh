#!/usr/bin/env bash
# Downstream calls from socket events (tracefs2spans, no root needed): the exchanges of
# samples/pcap/ipv6.pcap, with spantrace_sock lines made here as a traced server would
# give them: exchange 1 served on thread 900 (its recv and send, on the server's socket),
# and calls made on the client's socket (send of the request, recv of the response):
# exchange 3 (no trace context) from thread 900 while it served exchange 1, exchange 2
# (whose context names a parent) from the same thread, exchange 4 from thread 901 inside
# a marker interval of a span the capture does not have, and exchange 1 from thread 902,
# which serves nothing.  The call without a context gets the span its thread served as
# parent (spans.parent_source: the tracefs source); a context's parent is kept; a
# thread serving nothing gives none; a re-run replaces the links.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
command -v python3 >/dev/null || tap_skip_all "python3 missing (Debian python3)"
tap_tmpdir t_t2s_calls
db=$tmp/x.db
"$bin/pcap2spans" --quiet --db "$db" "$top/samples/pcap/ipv6.pcap"
q() { sqlite3 "$db" "$1"; }
check_eval "the capture: exchange 3 without a context, exchange 2 with a parent in its context" \
    "[ '$(q "SELECT count(*) FROM spans WHERE id = 3 AND span_id IS NULL AND req_seq_start IS NOT NULL")' = 1 ] &&
     [ '$(q "SELECT parent_span_id FROM spans WHERE id = 2")' = 0020000000000001 ]"
python3 - "$db" >"$tmp/events.txt" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = {r[0]: r[1:] for r in c.execute(
    "SELECT s.id, c.server_addr, c.server_port, c.client_addr, c.client_port, s.req_seq_start,"
    " s.req_seq_end, s.resp_seq_start, s.resp_seq_end, s.req_start_ns, s.resp_start_ns"
    " FROM spans s JOIN connections c ON c.id = s.connection_id")}
OFF = 1000 * 10**9  # the events' clock: the capture's minus 1000 s
def line(tid, ts, msg, kind="spantrace_sock"):
    print(f"      svc-{tid:<7} (    500) [000] .....  {ts // 10**9}.{ts % 10**9:09d}: {kind}: {msg}")
def ev(tid, ts, side, direction, i):
    sa, sp, ca, cp, qa, qb, ra, rb = rows[i][:8]
    seq, ln = (qa, (qb - qa) % 2**32) if direction == "request" else (ra, (rb - ra) % 2**32)
    loc, rem = (f"[{sa}]:{sp}", f"[{ca}]:{cp}") if side == "server" else (f"[{ca}]:{cp}", f"[{sa}]:{sp}")
    op = {("server", "request"): "recv", ("server", "response"): "send",
          ("client", "request"): "send", ("client", "response"): "recv"}[(side, direction)]
    line(tid, ts, f"{op} {loc} {rem} seq={seq} len={ln}")
print("# tracer: spantrace\n# trace_clock: mono")
t0, t1 = rows[1][8] - OFF, rows[1][9] - OFF  # exchange 1 on thread 900: its interval
ev(900, t0, "server", "request", 1)
ev(900, t0 + 20000, "client", "request", 3)   # a call without a context, inside it
ev(900, t0 + 30000, "client", "request", 2)   # a call whose context names a parent
ev(900, t0 + 50000, "client", "response", 2)
ev(900, t0 + 60000, "client", "response", 3)
ev(900, t1, "server", "response", 1)
t4 = rows[4][8] - OFF                         # thread 901 inside a marker interval
line(901, t4 - 50000, "span:00000000000000aa begin decision:1", "spantrace")
ev(901, t4 - 10000, "client", "request", 4)
ev(901, t4 + 200000, "client", "response", 4)
line(901, t4 + 300000, "span:00000000000000aa end decision:1", "spantrace")
ev(902, t0 - 500000, "client", "request", 1)  # thread 902 serves nothing
PY
"$bin/tracefs2spans" --db "$db" "$tmp/events.txt" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/err"
src=$(q "SELECT id FROM sources WHERE kind = 'tracefs'")
check_eval "tracefs2spans: exit 0, four calls seen, two given a parent, none by thread 902 (stderr)" \
    "[ $rc = 0 ] && grep -q '4 calls made by traced threads, 2 given the span their thread served as parent' '$tmp/err'"
check_eval "the call without a context: parent the span its thread served (exchange 1), set by source $src" \
    "[ '$(q "SELECT parent_span_id || '/' || parent_source FROM spans WHERE id = 3")' = '00f067aa0ba902b7/$src' ]"
check_eval "the call whose context names a parent keeps it, parent_source NULL" \
    "[ '$(q "SELECT parent_span_id || '/' || COALESCE(parent_source, 'null') FROM spans WHERE id = 2")' = 0020000000000001/null ]"
check_eval "a marker interval on the calling thread names the parent too (the innermost span it served)" \
    "[ '$(q "SELECT parent_span_id FROM spans WHERE id = 4")' = 00000000000000aa ]"
check_eval "the server's thread time goes to exchange 1 alone: no interval without a span id, none shared" \
    "[ '$(q "SELECT group_concat(span_id) FROM span_intervals WHERE source = 'socket'")' = 00f067aa0ba902b7 ] &&
     [ '$(q "SELECT count(*) FROM shared_intervals")' = 0 ]"
"$bin/tracefs2spans" --quiet --db "$db" --refit 2>/dev/null
check_eval "--refit replaces the links: the same parents, nothing else changed" \
    "[ '$(q "SELECT group_concat(id || ':' || COALESCE(parent_span_id, '-') || ':' || COALESCE(parent_source, '-'), ' ') FROM spans")' = '1:-:- 2:0020000000000001:- 3:00f067aa0ba902b7:$src 4:00000000000000aa:$src' ]"
tap_plan

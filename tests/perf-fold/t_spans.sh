#!/usr/bin/env bash
# Span-aware folding on a synthetic database: perf samples ingested by perf-fold,
# spans and span_intervals inserted with sqlite3 as pcap2spans/tracefs2spans
# would write them.  Checks attribution (samples.span_id first, else the
# innermost interval on the same tid in the same clock domain), every grouping,
# filters, that no sample is lost, the clock header, and duplicate ingest.
set -u
. "$(dirname "$0")/../tap.sh"
pf=${SF_BIN:-$top/bin}/perf-fold
tap_tmpdir
export LC_ALL=C
if ! command -v sqlite3 >/dev/null; then
    tap_name="span folding"; tap_skip_all "sqlite3 shell not installed"
fi
db=$tmp/s.db

# Six samples, leaf function names say where each must land:
#  t=10.000100 tid 100  in span A only           -> in_a
#  t=10.000200 tid 100  in A and nested B        -> in_b (innermost)
#  t=10.000200 tid 200  same time, other thread  -> unattributed (other_tid)
#  t=11.000000 tid 100  outside every interval   -> unattributed (outside)
#  t=10.000300 tid 300  interval of clock "perf" -> unattributed (other_clock)
#  t=12.000000 tid 100  samples.span_id set      -> span C (preset)
{
    echo "# ========"
    echo "# clockid: monotonic (1)"
    echo "# ========"
    echo "#"
    s() { printf 'app %s/%s [000] %s: %s cpu-clock: \n\t 1 %s (/usr/bin/app)\n\t 2 main (/usr/bin/app)\n\n' "$@"; }
    s 100 100 10.000100 1 in_a
    s 100 100 10.000200 2 in_b
    s 100 200 10.000200 4 other_tid
    s 100 100 11.000000 8 outside
    s 300 300 10.000300 16 other_clock
    s 100 100 12.000000 32 preset
} >"$tmp/perf.txt"

"$pf" -q --db "$db" "$tmp/perf.txt" >"$tmp/plain"; rc=$?
check "ingest exits 0" [ "$rc" -eq 0 ]
check "ingest still prints the fold" grep -q '^app;main;in_a 1$' "$tmp/plain"
check "clock taken from '# clockid:' header" [ "$(sqlite3 "$db" "SELECT clock FROM sources WHERE kind='perf'")" = monotonic ]
check "6 samples stored with times and tids" [ "$(sqlite3 "$db" "SELECT count(*), sum(period), min(ts_ns), max(tid) FROM samples")" = "6|63|10000100000|300" ]
check "stacks interned once each" [ "$(sqlite3 "$db" "SELECT count(*) FROM stacks")" = 6 ]
"$pf" -q --db "$db" "$tmp/perf.txt" >"$tmp/again" 2>"$tmp/err"
check "re-ingest of the same file is detected" grep -q "already in the database as source 1" "$tmp/err"
check "re-ingest stores nothing" [ "$(sqlite3 "$db" "SELECT count(*) FROM samples")" = 6 ]
check "re-ingest still folds" cmp -s "$tmp/plain" "$tmp/again"

sqlite3 "$db" <<'SQL'
INSERT INTO sources (id, kind, path, clock, tool, tool_version, status) VALUES
  (10, 'pcap', 'x.pcap', 'realtime', 'test', '0', 'complete'),
  (11, 'tracefs', 'trace.txt', 'monotonic', 'test', '0', 'complete'),
  (12, 'tracefs', 'perfclock.txt', 'perf', 'test', '0', 'complete');
INSERT INTO spans (source_id, method, path, trace_id, span_id, sampled, grpc_service, grpc_method) VALUES
  (10, 'GET', '/api', '4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1, NULL, NULL),
  (10, 'POST', '/helloworld.Greeter/SayHello', '4bf92f3577b34da6a3ce929d0e0e4736', 'b7ad6b7169203331', 0, 'helloworld.Greeter', 'SayHello'),
  (10, 'GET', '/preset', '0af7651916cd43dd8448eb211c80319c', 'cccccccccccccccc', NULL, NULL, NULL);
INSERT INTO span_intervals (source_id, span_id, trace_id, tid, start_ns, end_ns, depth) VALUES
  (11, '00f067aa0ba902b7', NULL, 100, 10000000000, 10000500000, 0),
  (11, 'b7ad6b7169203331', NULL, 100, 10000150000, 10000250000, 1),
  (12, 'dddddddddddddddd', NULL, 300, 10000000000, 10000900000, 0);
UPDATE samples SET span_id = 'cccccccccccccccc' WHERE ts_ns = 12000000000;
SQL

"$pf" -q --db "$db" --group-by span >"$tmp/span"; rc=$?
cat >"$tmp/want" <<'W'
[span 00f067aa0ba902b7 GET /api];app;main;in_a 1
[span b7ad6b7169203331 POST /helloworld.Greeter/SayHello];app;main;in_b 2
[span cccccccccccccccc GET /preset];app;main;preset 32
[unattributed];app;main;other_clock 16
[unattributed];app;main;other_tid 4
[unattributed];app;main;outside 8
W
check "group-by span: innermost interval, same tid and clock, preset span_id" cmp -s "$tmp/want" "$tmp/span"
[ "$rc" -eq 0 ] || notok "group-by span exit $rc"
sum() { awk '{ s += $NF } END { print s }' "$1"; }
check "no sample dropped (sum 63)" [ "$(sum "$tmp/span")" = 63 ]
"$pf" -q --db "$db" --group-by trace >"$tmp/trace"
check "group-by trace merges the two spans of one trace" grep -q '^\[trace 4bf92f3577b34da6a3ce929d0e0e4736\];app;main;in_b 2$' "$tmp/trace"
check "group-by trace sums to 63" [ "$(sum "$tmp/trace")" = 63 ]
"$pf" -q --db "$db" --group-by grpc_method >"$tmp/grpc"
check "group-by grpc_method" grep -q '^\[grpc helloworld.Greeter/SayHello\];app;main;in_b 2$' "$tmp/grpc"
check "non-gRPC span grouped apart" grep -q '^\[no grpc method\];app;main;in_a 1$' "$tmp/grpc"
"$pf" -q --db "$db" --group-by path >"$tmp/path"
check "group-by path" grep -q '^\[path GET /api\];app;main;in_a 1$' "$tmp/path"
"$pf" -q --db "$db" --group-by sampled >"$tmp/sampled"
check "group-by sampled" cmp -s "$tmp/sampled" - <<'W'
[sampled unknown];app;main;preset 32
[sampled];app;main;in_a 1
[unattributed];app;main;other_clock 16
[unattributed];app;main;other_tid 4
[unattributed];app;main;outside 8
[unsampled];app;main;in_b 2
W
check "--span filter" cmp -s <("$pf" -q --db "$db" --span b7ad6b7169203331) <(echo '[span b7ad6b7169203331 POST /helloworld.Greeter/SayHello];app;main;in_b 2')
check "--trace filter" [ "$("$pf" -q --db "$db" --group-by trace --trace 4bf92f3577b34da6a3ce929d0e0e4736 | sum /dev/stdin)" = 3 ]
check "--grpc-method filter (Service/Method)" [ "$("$pf" -q --db "$db" --group-by grpc_method --grpc-method helloworld.Greeter/SayHello | wc -l)" = 1 ]
"$pf" --db "$db" --span ffffffffffffffff >"$tmp/none" 2>"$tmp/err"
check "filter matching nothing says so" grep -q "no samples match the filter" "$tmp/err"
"$pf" --group-by span >/dev/null 2>&1
check "--group-by without --db is a usage error" [ $? -eq 2 ]
"$pf" --db "$db" --group-by colour >/dev/null 2>&1
check "unknown --group-by is a usage error" [ $? -eq 2 ]

# stdin ingest: hashed while read; a second identical stdin is detected too
"$pf" -q --db "$tmp/t2.db" <"$tmp/perf.txt" >/dev/null
"$pf" --db "$tmp/t2.db" <"$tmp/perf.txt" >/dev/null 2>"$tmp/err"
check "stdin re-ingest detected by sha256" grep -q "already in the database" "$tmp/err"
check "stdin source complete with sha256" [ "$(sqlite3 "$tmp/t2.db" "SELECT count(*), length(sha256), status FROM sources")" = "1|64|complete" ]
# no clock header: unknown, or --clock
grep -v '^#' "$tmp/perf.txt" >"$tmp/noclock.txt"
"$pf" -q --db "$tmp/t3.db" "$tmp/noclock.txt" >/dev/null
check "no header: clock unknown" [ "$(sqlite3 "$tmp/t3.db" "SELECT clock FROM sources")" = unknown ]
"$pf" -q --db "$tmp/t4.db" --clock monotonic "$tmp/noclock.txt" >/dev/null
check "--clock sets it" [ "$(sqlite3 "$tmp/t4.db" "SELECT clock FROM sources")" = monotonic ]
tap_plan

#!/usr/bin/env bash
# spanfold push, stacks --clickhouse and report --clickhouse against two real ClickHouse servers,
# started here as plain processes on loopback ports, two shards of one cluster
# (remote_servers written into a temp folder).  The demo database is pushed from two
# "hosts": the capture from one to shard 1, the profile and the markers from the other
# to shard 2, so every span is on one shard and every sample on the other.  Checks:
# the counts on the cluster are the SQLite file's; the folds of many selections are
# byte-identical on SQLite and on the cluster, with --during too; the report (findings.json
# and report.html) from the cluster is the file's, and so are the windows the cluster
# computes (windows.csv; inflect and gate --clickhouse) on data made to break them; a
# second push skips every source; an interrupted push is replaced; transient errors are
# retried; a schema mismatch and bad arguments are clear errors.  Skips with the reason
# where no server can start.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spanfold on a two-shard ClickHouse cluster"
[ -x "$bin/spanfold" ] || tap_skip_all "spanfold not built"
command -v clickhouse-server >/dev/null ||
    tap_skip_all "needs clickhouse-server (Debian clickhouse-server; scripts/deps.sh heavy)"
command -v curl >/dev/null || tap_skip_all "needs curl"
command -v sqlite3 >/dev/null || tap_skip_all "needs the sqlite3 shell (Debian sqlite3)"
command -v python3 >/dev/null || tap_skip_all "needs python3 (to find free ports)"
[ -f "$top/samples/demo/demo.pcap" ] || tap_skip_all "samples/demo not recorded"
tap_tmpdir sf_ch
export LC_ALL=C
. "$top/scripts/clickhouse/server.sh"
trap 'ch_stop; rm -rf "$tmp"' EXIT
read -r h1 t1 h2 t2 ch_dead_port < <(ch_ports 5) # http and tcp of each shard; a dead one
ch_server "$tmp/s1" "$h1" "$t1" "$t1" "$t2"
ch_server "$tmp/s2" "$h2" "$t2" "$t1" "$t2"
if ! ch_up "$h1" || ! ch_up "$h2"; then
    tail -n 5 "$tmp/s1/log/stdout" "$tmp/s1/log/err.log" 2>/dev/null | sed 's/^/# /'
    tap_skip_all "clickhouse-server did not start on 127.0.0.1:$h1/$h2 (its log above)"
fi
u1=http://127.0.0.1:$h1/
u2=http://127.0.0.1:$h2/
chq() { curl -sS "$1" --data-binary "$2"; } # chq URL SQL
echo "# ClickHouse $(chq "$u1" 'SELECT version()') on $h1 and $h2"

db=$tmp/demo.db
"$bin/spanfold" ingest --quiet --db "$db" "$top/samples/demo" >"$tmp/ingest.log" 2>&1
check "spanfold ingest builds the demo database" [ -s "$db" ]
q() { sqlite3 "$db" "$1"; }
# hostile paths: invalid UTF-8 (a stray 0xFF, a truncated C3, a truncated E2 A9 that
# SQLite reads as U+00A9) must not hide spans from a fleet query
q "UPDATE spans SET path = path || CAST(X'FFC3' AS TEXT) WHERE id % 5 = 0;
   UPDATE spans SET path = CAST(X'2FE2A9' AS TEXT) || path WHERE id % 7 = 0"

# -- two hosts push their sources, each to its own shard
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --kind pcap --db "$db" 2>"$tmp/p1"
check "host A pushes the capture to shard 1" [ $? -eq 0 ]
"$bin/spanfold" push --clickhouse "$u2" --cluster sf --kind perf,tracefs --db "$db" 2>"$tmp/p2"
check "host B pushes the profile and the markers to shard 2" [ $? -eq 0 ]
sed 's/^/# /' "$tmp/p1" "$tmp/p2"

same_count() { # same_count NAME SQLITE-SQL CLICKHOUSE-SQL
    local a b
    a=$(q "$2")
    b=$(chq "$u1" "$3")
    if [ "$a" = "$b" ] && [ -n "$a" ]; then ok "$1: $a on both"; else notok "$1: SQLite $a, cluster $b"; fi
}
same_count "spans" "SELECT count(*) FROM spans" "SELECT count() FROM spanfold.spans_d"
same_count "samples" "SELECT count(*) FROM samples" "SELECT count() FROM spanfold.samples_d"
same_count "contexts" "SELECT count(*) FROM contexts" "SELECT count() FROM spanfold.contexts_d"
same_count "span events" "SELECT count(*) FROM span_events" "SELECT count() FROM spanfold.span_events_d"
same_count "connections" "SELECT count(*) FROM connections" "SELECT count() FROM spanfold.connections_d"
same_count "clock fits" "SELECT count(*) FROM clock_fits" "SELECT count() FROM spanfold.clock_fits_d"
same_count "stacks of samples" "SELECT count(DISTINCT stack_id) FROM samples" \
    "SELECT uniqExact(stack_key) FROM spanfold.stacks_d"
same_count "complete sources" "SELECT count(*) FROM sources" \
    "SELECT count() FROM spanfold.sources_d WHERE push_state = 'complete'"
same_count "periods of the samples" "SELECT sum(period) FROM samples" \
    "SELECT sum(period) FROM spanfold.samples_d"
check "spans are on shard 1 only, samples on shard 2 only" [ \
    "$(chq "$u1" 'SELECT count() FROM spanfold.samples') $(chq "$u2" 'SELECT count() FROM spanfold.spans')" = "0 0" ]
check "every pushed row has its source's key (sha256 prefix)" [ \
    "$(chq "$u1" "SELECT count() FROM spanfold.spans_d WHERE skey != reinterpretAsUInt64(reverse(unhex(substring('$(q "SELECT sha256 FROM sources WHERE kind = 'pcap'")', 1, 16))))")" = 0 ]

# -- the same folds on SQLite and on the cluster, byte for byte
slow=$(q "SELECT path FROM spans GROUP BY path ORDER BY avg(resp_end_ns - req_start_ns) DESC LIMIT 1")
trace=$(q "SELECT trace_id FROM spans WHERE span_id IN (SELECT span_id FROM samples) LIMIT 1")
sels=("" "--where|endpoint = \"$slow\" and duration > p95" "--slowest|5%" "--slowest|3"
    "--status|2xx" "--where|path ~ \"/api/[a-c]*\"" "--where|path like \"%CHECK%\""
    "--where|not partial and (duration >= 2ms or sampled)" "--trace-id|$trace"
    "--grpc-method|Lookup" "--vs|duration < p50" "--where|duration > p90|--vs|rest"
    "--where|path ~ \"*\"" "--where|path ~ \"/api/*?\"" $'--where|path ~ "/\xc2\xa9*"'
    "--where|path ~ \"[^a]*\"" "--where|path ~ \"/api/[^a-r]*\"" $'--where|path ~ "*\xa9*"')
same_fold() { # same_fold URL 'OPT|ARG|...': stacks on the file and on the cluster
    local a r1 r2
    IFS='|' read -r -a a <<<"$2"
    "$bin/spanfold" stacks --db "$db" "${a[@]}" >"$tmp/f1" 2>"$tmp/e1"
    r1=$?
    "$bin/spanfold" stacks --clickhouse "$1" --cluster sf "${a[@]}" >"$tmp/f2" 2>"$tmp/e2"
    r2=$?
    if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s "$tmp/f1" ] && cmp -s "$tmp/f1" "$tmp/f2"; then
        ok "stacks ${2:-(every span)}: $(wc -l <"$tmp/f1") identical lines"
    else
        notok "stacks ${2:-(every span)}: exit $r1/$r2, $(wc -l <"$tmp/f1")/$(wc -l <"$tmp/f2") lines"
        sed 's/^/# /' "$tmp/e1" "$tmp/e2"
    fi
}
for s in "${sels[@]}"; do same_fold "$u2" "$s"; done
# where a selection's span ids would pass a server's memory limit for a query, they are
# sent in buckets of their hash: budgeted a tenth of the limit per id, the same folds in
# several questions
lim=$(chq "$u1" "SELECT value FROM system.settings WHERE name = 'max_memory_usage'")
for s in "--slowest|5%" "--where|duration > p90|--vs|rest"; do
    IFS='|' read -r -a a <<<"$s"
    "$bin/spanfold" stacks --db "$db" "${a[@]}" >"$tmp/f1" 2>/dev/null
    SF_CH_TRACE=1 SPANFOLD_CH_ID_BYTES=$((${lim:-0} / 10)) "$bin/spanfold" stacks \
        --clickhouse "$u2" --cluster sf "${a[@]}" >"$tmp/f2" 2>"$tmp/e2"
    nq=$(grep -c '^ClickHouse request [0-9]*: SELECT frames' "$tmp/e2")
    check_eval "stacks ${s//|/ }: the span ids in $nq questions, the same $(wc -l <"$tmp/f1") lines" \
        '[ "${lim:-0}" -gt 0 ] && [ "$nq" -gt 2 ] && [ -s "$tmp/f1" ] && cmp -s "$tmp/f1" "$tmp/f2"'
done
"$bin/spanfold" stacks --clickhouse "$u2" --cluster sf --where $'path ~ "*\xff?"' >/dev/null 2>"$tmp/e"
r=$?
check_eval "an invalid byte in a glob is refused on ClickHouse (SQLite reads it as U+FFFD), exit $r" \
    '[ $r -eq 2 ] && grep -q "invalid UTF-8" "$tmp/e"'
"$bin/spanfold" stacks --db "$db" --slowest 10% -o "$tmp/a.svg" 2>/dev/null
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --slowest 10% -o "$tmp/b.svg" 2>/dev/null
check "the flame graph of the slowest 10 % is the same SVG" cmp -s "$tmp/a.svg" "$tmp/b.svg"
"$bin/spanfold" stacks --clickhouse "$u1" --slowest 10% >"$tmp/local" 2>"$tmp/e"
r=$?
check_eval "without --cluster: shard 1's own tables (spans, no samples) give nothing, exit 2" \
    '[ $r -eq 2 ] && grep -q "no CPU sample" "$tmp/e"'

# -- --during on the cluster: the window placed through the same code as on the file
for w in "10:21:15..10:21:30" "+5s..+20s" "..10:21:25" "+20s.." "+5s..+20s|--vs|all|--during|..+5s" \
    "+10s..+30s|--where|duration > p90"; do
    same_fold "$u1" "--during|$w"
done
"$bin/spanfold" stacks --db "$db" --during "+1h.." >/dev/null 2>"$tmp/e1"
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --during "+1h.." >/dev/null 2>"$tmp/e2"
check "a window after the capture selects nothing on either (exit 2)" [ $? -eq 2 ]
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --during "10:21..x" >/dev/null 2>"$tmp/e"
r=$?
check_eval "a bad --during on ClickHouse: exit 2, the column shown" \
    '[ $r -eq 2 ] && grep -q "^spanfold stacks: --during: column" "$tmp/e"'

# -- the report from the cluster is the report from the file
"$bin/spanfold" report --quiet --db "$db" --out "$tmp/r1" 2>"$tmp/e1"
r1=$?
mkdir -p "$tmp/tmpdir"
TMPDIR=$tmp/tmpdir "$bin/spanfold" report --quiet --clickhouse "$u2" --cluster sf --out "$tmp/r2" \
    2>"$tmp/e2"
r2=$?
sed 's/^/# /' "$tmp/e1" "$tmp/e2"
check "spanfold report from the file and from the cluster: exit 0" [ "$r1 $r2" = "0 0" ]
check "findings.json has findings (an inflection)" grep -q '"metric": "p50"' "$tmp/r1/findings.json"
shown="http://127.0.0.1:$h2/ spanfold on cluster sf"
check "the cluster's page names the cluster" grep -qF "$shown" "$tmp/r2/report.html"
# everything the report reads is pushed, connection_events (retransmissions, handshakes)
# among it: the cluster's findings and page are the file's.  A page is compared with its
# explorer's data as plain JSON (explore_data.py canon)
canon() { python3 "$top/tests/spanfold/explore_data.py" "$1" canon; }
sed "s|$db|DATA|g" "$tmp/r1/findings.json" >"$tmp/a"
sed "s|$shown|DATA|g" "$tmp/r2/findings.json" >"$tmp/b"
check "findings.json: the same bytes but for the name of the data ($(wc -c <"$tmp/a") bytes)" \
    cmp -s "$tmp/a" "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || diff "$tmp/a" "$tmp/b" | head -8 | sed 's/^/#   /'
canon "$tmp/r1/report.html" | sed "s|$db|DATA|g" >"$tmp/a"
canon "$tmp/r2/report.html" | sed "s|$shown|DATA|g" >"$tmp/b"
check "report.html: the same bytes but for the name of the data ($(wc -c <"$tmp/a") bytes)" \
    cmp -s "$tmp/a" "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || diff <(tr ',' '\n' <"$tmp/a") <(tr ',' '\n' <"$tmp/b") | head -5 | sed 's/^/#   /'
"$bin/spanfold" report --quiet --db "$db" --name incident --out "$tmp/r3" 2>/dev/null
"$bin/spanfold" report --quiet --clickhouse "$u1" --cluster sf --name incident --out "$tmp/r4" 2>/dev/null
check_eval "with --name both: findings.json and report.html byte-identical" \
    'cmp -s "$tmp/r3/findings.json" "$tmp/r4/findings.json" && cmp -s <(canon "$tmp/r3/report.html") <(canon "$tmp/r4/report.html")'
# where the slow functions' (span id, stack) groups would pass a server's memory limit
# for a query they are asked in buckets of span ids: budgeted a larger share of the
# limit per group, the same report in several questions
SPANFOLD_CH_GROUP_BYTES=$((${lim:-0} / 300)) "$bin/spanfold" report --clickhouse "$u1" \
    --cluster sf --name incident --out "$tmp/r4b" 2>"$tmp/r4b.err"
"$bin/spanfold" report --clickhouse "$u1" --cluster sf --name incident --out "$tmp/r4a" \
    2>"$tmp/r4a.err"
queries() { sed -n 's/.*from the cluster in all: \([0-9]*\) queries.*/\1/p' "$1"; }
qa=$(queries "$tmp/r4a.err") qb=$(queries "$tmp/r4b.err")
check_eval "slow functions in buckets of span ids (a group budgeted $((${lim:-0} / 300)) bytes): $qb queries against $qa, the same report" \
    '[ "${lim:-0}" -gt 0 ] && [ "${qb:-0}" -gt $((${qa:-0} + 1)) ] && cmp -s "$tmp/r3/findings.json" "$tmp/r4b/findings.json" && cmp -s <(canon "$tmp/r3/report.html") <(canon "$tmp/r4b/report.html")'
# and the slow sets' folds send their span ids in buckets the same way
SPANFOLD_CH_ID_BYTES=$((${lim:-0} / 10)) "$bin/spanfold" report --clickhouse "$u1" \
    --cluster sf --name incident --out "$tmp/r4c" 2>"$tmp/r4c.err"
qc=$(queries "$tmp/r4c.err")
check_eval "the slow sets' span ids in buckets (an id budgeted $((${lim:-0} / 10)) bytes): $qc queries against $qa, the same report" \
    '[ "${lim:-0}" -gt 0 ] && [ "${qc:-0}" -gt $((${qa:-0} + 1)) ] && cmp -s "$tmp/r3/findings.json" "$tmp/r4c/findings.json" && cmp -s <(canon "$tmp/r3/report.html") <(canon "$tmp/r4c/report.html")'
# past --page-samples the explorer carries a uniform sample of the requests: the cluster
# counts, and only the kept requests' samples come back (the rest stay there)
"$bin/spanfold" report --quiet --db "$db" --name incident --page-samples 200 --out "$tmp/r3s" 2>/dev/null
"$bin/spanfold" report --quiet --clickhouse "$u1" --cluster sf --name incident --page-samples 200 \
    --out "$tmp/r4s" 2>/dev/null
canon "$tmp/r4s/report.html" >"$tmp/r4s.canon"
check_eval "--page-samples 200: the page's sample of the requests is the file's ($(grep -o '"kept": {[^}]*}' "$tmp/r4s.canon"))" \
    'grep -q "\"fraction\": 0\.[0-9]" "$tmp/r4s.canon" && cmp -s "$tmp/r3s/findings.json" "$tmp/r4s/findings.json" && cmp -s <(canon "$tmp/r3s/report.html") "$tmp/r4s.canon"'
"$bin/spanfold" report --quiet --db "$db" --name incident --page-samples 0 --out "$tmp/r3z" 2>/dev/null
"$bin/spanfold" report --quiet --clickhouse "$u1" --cluster sf --name incident --page-samples 0 \
    --out "$tmp/r4z" 2>/dev/null
check_eval "--page-samples 0: no request in the page's explorer, from the file and from the cluster" \
    'canon "$tmp/r4z/report.html" | grep -q "\"spans\": 0" && cmp -s <(canon "$tmp/r3z/report.html") <(canon "$tmp/r4z/report.html")'
# past --spans-max only the sample of the traces is read back; the windows, cuts and folds
# stay over every request (the cluster counts them all)
"$bin/spanfold" report --db "$db" --name incident --spans-max 200 --out "$tmp/r3t" 2>/dev/null
"$bin/spanfold" report --clickhouse "$u1" --cluster sf --name incident --spans-max 200 \
    --out "$tmp/r4t" 2>"$tmp/r4t.err"
"$bin/spanfold" report --clickhouse "$u1" --cluster sf --name incident --out "$tmp/r4" \
    2>"$tmp/r4.err"
inall() { sed -n 's/.*from the cluster in all: [0-9]* queries, \([0-9]*\) bytes.*/\1/p' "$1"; }
bt=$(inall "$tmp/r4t.err") ba=$(inall "$tmp/r4.err")
check_eval "--spans-max 200: $(grep -o '"requests": [0-9]*' "$tmp/r3t/findings.json") analysed, the same report from both; ${bt:-?} bytes received against ${ba:-?}" \
    'grep -q "requests analysed one by one" "$tmp/r3t/findings.json" && cmp -s "$tmp/r3t/findings.json" "$tmp/r4t/findings.json" && cmp -s <(canon "$tmp/r3t/report.html") <(canon "$tmp/r4t/report.html") && cmp -s "$tmp/r3t/windows.csv" "$tmp/r4/windows.csv" && [ "${bt:-0}" -gt 0 ] && [ "$bt" -lt $((ba * 2 / 3)) ]'
"$bin/spanfold" report --quiet --clickhouse "$u1" --out "$tmp/r5" 2>/dev/null
check_eval "without --cluster: shard 1's spans alone, no CPU: a report without flame graphs" \
    'grep -q "no CPU samples" "$tmp/r5/report.html" && ! cmp -s "$tmp/r1/findings.json" "$tmp/r5/findings.json"'
check "no temporary file of the report left behind (in its TMPDIR)" [ -z "$(ls -A "$tmp/tmpdir")" ]

# -- two hosts' files (their row ids collide) against one file that holds both
for d in demo2 demo3; do
    "$bin/spanfold" ingest --quiet --db "$tmp/$d.db" "$top/tests/data/$d" >/dev/null 2>&1
done
"$bin/spanfold" ingest --quiet --db "$tmp/both.db" "$top/tests/data/demo2" "$top/tests/data/demo3" \
    >/dev/null 2>&1
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database two --db "$tmp/demo2.db" 2>/dev/null &&
    "$bin/spanfold" push --clickhouse "$u2" --cluster sf --database two --db "$tmp/demo3.db" 2>/dev/null
check "two recordings pushed from two files to two shards" [ $? -eq 0 ]
"$bin/spanfold" report --quiet --db "$tmp/both.db" --name two --out "$tmp/t1" 2>/dev/null
"$bin/spanfold" report --quiet --clickhouse "$u1" --cluster sf --database two --name two \
    --out "$tmp/t2" 2>/dev/null
check_eval "their report from the cluster is that of one file with both (findings.json, report.html)" \
    'cmp -s "$tmp/t1/findings.json" "$tmp/t2/findings.json" && cmp -s <(canon "$tmp/t1/report.html") <(canon "$tmp/t2/report.html")'
check_eval "two hosts: the windows the cluster gathered are the file's (windows.csv, $(wc -l <"$tmp/t1/windows.csv") lines)" \
    '[ -s "$tmp/t1/windows.csv" ] && cmp -s "$tmp/t1/windows.csv" "$tmp/t2/windows.csv"'

# -- recordings of every kind the report explains: requests of Go and of an event loop
# (socket-attributed samples, time shared by many requests), retransmissions, a slow
# downstream, off-CPU time (blocked): the profile stays on the cluster, the report is
# the file's
for d in go-requests nginx-loop demo-network demo-downstream demo-blocked; do
    rdb=$tmp/rec.db
    rm -f "$rdb"
    "$bin/spanfold" ingest --quiet --db "$rdb" "$top/tests/data/$d" >/dev/null 2>&1
    rn=r_${d//-/_}
    "$bin/spanfold" push --clickhouse "$u1" --cluster sf --database "$rn" --kind pcap --db "$rdb" 2>/dev/null
    "$bin/spanfold" push --clickhouse "$u2" --cluster sf --database "$rn" --kind perf,tracefs \
        --db "$rdb" 2>/dev/null
    "$bin/spanfold" report --quiet --db "$rdb" --name "$d" --out "$tmp/k1" 2>/dev/null
    "$bin/spanfold" report --quiet --clickhouse "$u2" --cluster sf --database "$rn" --name "$d" \
        --out "$tmp/k2" 2>/dev/null
    what=$(sqlite3 "$rdb" "SELECT (SELECT count(*) FROM samples) || ' samples, ' ||
      (SELECT count(*) FROM offcpu) || ' off-CPU intervals, ' ||
      (SELECT count(*) FROM shared_intervals) || ' shared intervals'")
    check_eval "$d ($what): findings.json and report.html from the cluster are the file's" \
        '[ -s "$tmp/k1/findings.json" ] && cmp -s "$tmp/k1/findings.json" "$tmp/k2/findings.json" && cmp -s <(canon "$tmp/k1/report.html") <(canon "$tmp/k2/report.html")'
    # a third of the requests analysed one by one: the same sample of the traces from both
    third=$(($(sqlite3 "$rdb" 'SELECT count(*) FROM spans') / 3 + 1))
    "$bin/spanfold" report --quiet --db "$rdb" --name "$d" --spans-max "$third" --out "$tmp/k1" \
        2>/dev/null
    "$bin/spanfold" report --quiet --clickhouse "$u2" --cluster sf --database "$rn" --name "$d" \
        --spans-max "$third" --out "$tmp/k2" 2>/dev/null
    check_eval "$d, --spans-max $third: $(grep -o '"requests": [0-9]*' "$tmp/k1/findings.json") analysed, from the cluster as from the file" \
        'grep -q "requests analysed one by one" "$tmp/k1/findings.json" && cmp -s "$tmp/k1/findings.json" "$tmp/k2/findings.json" && cmp -s <(canon "$tmp/k1/report.html") <(canon "$tmp/k2/report.html")'
    # the off-CPU folds (the stacks the requests blocked in; with --wall beside their CPU)
    [ "$(sqlite3 "$rdb" 'SELECT count(*) FROM offcpu')" -gt 0 ] || continue
    for s in "--offcpu" "--wall" "--offcpu|--where|duration > p90|--vs|rest" "--wall|--slowest|5%"; do
        IFS='|' read -r -a a <<<"$s"
        "$bin/spanfold" stacks --db "$rdb" "${a[@]}" --folded >"$tmp/f1" 2>/dev/null
        "$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --database "$rn" "${a[@]}" --folded \
            >"$tmp/f2" 2>/dev/null
        check_eval "$d: stacks $s on the cluster as on the file ($(wc -l <"$tmp/f1") lines)" \
            '[ -s "$tmp/f1" ] && cmp -s "$tmp/f1" "$tmp/f2"'
    done
done
check "--wall stacks end in why the thread waited, on the cluster too" \
    grep -q ';\[off-CPU: [a-z_]*\] [0-9]*$' "$tmp/f2"
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --offcpu >/dev/null 2>"$tmp/e"
check_eval "stacks --offcpu on a cluster without off-CPU intervals: exit 2, says how to record them" \
    '[ $? -eq 2 ] && grep -q "no off-CPU intervals" "$tmp/e"'
check "the blocked time is the cause the cluster names too (demo-blocked)" \
    grep -q '"cause": "blocked"' "$tmp/k2/findings.json"

# -- the windows gathered by the cluster (spanfold/ch_series.c) on data made to break them:
# more endpoints than groups (the rest fold into "(other)", and a path named "(other)"
# comes first), long names that share their first 127 bytes (cut before a two-byte
# character), starts tied to the millisecond, unknown and negative latencies, errors,
# JSON-RPC exchanges (in no group), traces shared by many spans, OpenTelemetry
# thresholds in any case and in a tracestate of 2 KB, decisions from the markers; and
# for the CPU sets the cluster folds (spanfold/ch_sets.c): spans of several endpoints
# sharing one span id, samples without a period, stacks whose leaf is empty or quoted
hdb=$tmp/hostile.db
cp "$db" "$hdb"
long=/$(printf 'a%.0s' $(seq 125))
sqlite3 "$hdb" "
  UPDATE spans SET path = '/e' || (id % 90) WHERE grpc_method IS NULL AND id % 3 = 0;
  UPDATE spans SET path = '$long' || char(233) || (id % 3) WHERE grpc_method IS NULL AND id % 11 = 0;
  UPDATE spans SET path = '(other)' WHERE id = (SELECT min(id) FROM spans WHERE grpc_method IS NULL);
  UPDATE spans SET req_start_ns = req_start_ns - req_start_ns % 1000000;
  UPDATE spans SET resp_end_ns = NULL, resp_start_ns = NULL WHERE id % 13 = 0;
  UPDATE spans SET resp_end_ns = req_start_ns - 5 WHERE id % 17 = 0;
  UPDATE spans SET status = 503 WHERE id % 19 = 0 AND status IS NOT NULL;
  UPDATE spans SET rpc_messages = 2 WHERE id % 23 = 0;
  UPDATE spans SET trace_id = 'shared' || (id % 7) WHERE id % 5 = 0;
  UPDATE spans SET sampled = 1 - sampled WHERE id % 10 = 0 AND sampled IS NOT NULL;
  UPDATE spans SET span_id = (SELECT span_id FROM spans WHERE id = 40) WHERE id % 29 = 0;
  UPDATE spans SET trace_id = NULL WHERE id % 37 = 0;
  UPDATE spans SET trace_id = '', span_id = NULL WHERE id % 41 = 0;
  UPDATE samples SET period = NULL WHERE id % 31 = 0;
  UPDATE stacks SET frames = frames || ';' WHERE id % 7 = 0;
  UPDATE stacks SET frames = frames || ';q''uo\\te' WHERE id % 11 = 0;
  UPDATE contexts SET tracestate = CASE WHEN id % 2 = 0 THEN 'ot=th:8' ELSE 'vendor=x,OT=th:c' END
    WHERE id % 3 = 0;
  UPDATE contexts SET tracestate = 'ot=th:4,v=' || printf('%02000d', id) WHERE id % 7 = 0;"
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database hostile --kind pcap --db "$hdb" \
    2>/dev/null &&
    "$bin/spanfold" push --clickhouse "$u2" --cluster sf --database hostile --kind perf,tracefs \
        --db "$hdb" 2>/dev/null
check "the hostile copy pushed, its capture to shard 1, the rest to shard 2" [ $? -eq 0 ]
for w in "" 250ms 7s; do
    "$bin/spanfold" report --quiet --db "$hdb" --name h ${w:+--window $w} --out "$tmp/h1" 2>/dev/null
    "$bin/spanfold" report --quiet --clickhouse "$u2" --cluster sf --database hostile --name h \
        ${w:+--window $w} --out "$tmp/h2" 2>"$tmp/h2.err"
    check_eval "hostile data, window ${w:-adapted}: the cluster's windows are the file's ($(grep -c '^"(other)"' "$tmp/h1/windows.csv") of \"(other)\", $(wc -l <"$tmp/h1/windows.csv") lines), so are the findings and the page" \
        'grep -q "^\"(other)\"" "$tmp/h1/windows.csv" && cmp -s "$tmp/h1/windows.csv" "$tmp/h2/windows.csv" && cmp -s "$tmp/h1/findings.json" "$tmp/h2/findings.json" && cmp -s <(canon "$tmp/h1/report.html") <(canon "$tmp/h2/report.html")'
done
# past --spans-max a sample of the traces (spans without a trace id by their span id, without
# either by their start): the cluster sends the same requests the file keeps
"$bin/spanfold" report --quiet --db "$hdb" --name h --spans-max 150 --out "$tmp/h1" 2>/dev/null
"$bin/spanfold" report --quiet --clickhouse "$u2" --cluster sf --database hostile --name h \
    --spans-max 150 --out "$tmp/h2" 2>/dev/null
check_eval "hostile data, --spans-max 150: the cluster's sample is the file's ($(grep -o '"requests": [0-9]*' "$tmp/h1/findings.json") of $(grep -o '^  "spans": [0-9]*' "$tmp/h1/findings.json" | tr -dc 0-9)), so are the findings and the page" \
    'grep -q "requests analysed one by one" "$tmp/h1/findings.json" && cmp -s "$tmp/h1/findings.json" "$tmp/h2/findings.json" && cmp -s <(canon "$tmp/h1/report.html") <(canon "$tmp/h2/report.html")'
"$bin/spanfold" report --clickhouse "$u2" --cluster sf --database hostile --out "$tmp/h3" 2>"$tmp/h3.err"
# same_json A B: two inflect JSON summaries equal but for the name of the data and the
# clock report (the clock fits stay on the hosts), and with spans
same_json() {
    python3 -c "import json,sys
a, b = ([kv for kv in json.load(open(f), object_pairs_hook=list)
         if kv[0] not in ('input', 'clock')] for f in sys.argv[1:])
sys.exit(a != b or dict(a)['spans'] == 0)" "$1" "$2"
}

# many long names: 540 paths of 500 bytes make queries longer than a server parses by
# default (max_query_size, 256 KiB), which spanfold then says; past 1,000 long names the
# cluster's windows refuse, clearly
wdb=$tmp/wide.db
cp "$db" "$wdb"
sqlite3 "$wdb" "UPDATE spans SET path = '/' || printf('%0499d', id) WHERE grpc_method IS NULL"
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database wide --kind pcap --db "$wdb" 2>/dev/null
"$bin/spanfold" push --clickhouse "$u2" --cluster sf --database wide --kind perf,tracefs \
    --db "$wdb" 2>/dev/null
"$bin/spanfold" inflect --quiet --db "$wdb" --by endpoint --json "$tmp/w1.json" 2>/dev/null
"$bin/spanfold" inflect --quiet --clickhouse "$u2" --cluster sf --database wide --by endpoint \
    --json "$tmp/w2.json" 2>"$tmp/e"
check_eval "$(sqlite3 "$wdb" "SELECT count(DISTINCT path) FROM spans WHERE length(path) > 127") names of 500 bytes: the cluster's windows are the file's (queries over 256 KiB)" \
    'same_json "$tmp/w1.json" "$tmp/w2.json"'
sqlite3 "$wdb" "INSERT INTO spans (source_id, proto, method, path, req_start_ns, resp_end_ns)
  SELECT source_id, proto, method, path || 'x', req_start_ns + 1, resp_end_ns FROM spans
  WHERE grpc_method IS NULL"
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database wider --db "$wdb" 2>/dev/null
"$bin/spanfold" inflect --quiet --clickhouse "$u2" --cluster sf --database wider --by endpoint \
    --json /dev/null 2>"$tmp/e"
check_eval "past 1,000 long names: exit 2, said (use --db or another --by)" \
    '[ $? -eq 2 ] && grep -q "more than 1000 group names longer than 127 bytes" "$tmp/e"'

# inflect and gate on the cluster's windows: every --by, the file's JSON (same_json)
for by in all service endpoint grpc_method; do
    "$bin/spanfold" inflect --quiet --db "$hdb" --by "$by" --json "$tmp/i1.json" 2>/dev/null
    "$bin/spanfold" inflect --quiet --clickhouse "$u1" --cluster sf --database hostile --by "$by" \
        --json "$tmp/i2.json" 2>/dev/null
    check_eval "spanfold inflect --clickhouse --by $by: the file's change points and drift" \
        'same_json "$tmp/i1.json" "$tmp/i2.json"'
done
gate() { "$bin/spanfold" gate --by endpoint --gate 'p50>+50%' --gate 'error_rate>20pt' "$@" 2>&1; }
gate --db "$hdb" >"$tmp/g1"
r1=$?
gate --clickhouse "$u2" --cluster sf --database hostile >"$tmp/g2"
r2=$?
check_eval "spanfold gate --clickhouse: the file's verdict (exit $r1/$r2), the same words" \
    '[ "$r1" = "$r2" ] && [ -s "$tmp/g1" ] && cmp -s "$tmp/g1" "$tmp/g2"'
"$bin/inflect" --clickhouse "$u1" >/dev/null 2>"$tmp/e"
check_eval "the inflect program itself has no ClickHouse client: exit 2, says to use spanfold" \
    '[ $? -eq 2 ] && grep -q "run spanfold inflect" "$tmp/e"'
bytes=$(sed -n 's/.*the windows gathered by the cluster: [0-9]* queries, \([0-9]*\) bytes.*/\1/p' "$tmp/h3.err")
check_eval "the windows travel, not the spans: ${bytes:-?} bytes for $(wc -l <"$tmp/h3/windows.csv") windows" \
    '[ -n "$bytes" ] && [ "$bytes" -gt 0 ] && [ "$bytes" -lt $(($(wc -l <"$tmp/h3/windows.csv") * 400)) ]'
# the CPU sets are folded on the cluster (spanfold/ch_sets.c): stacks and sums travel, not
# samples, so ten times the samples cost the same bytes (the sums are fixed-width)
sets_bytes() { sed -n 's/.*the CPU sets folded by the cluster: \([0-9]*\) queries, \([0-9]*\) bytes.*/\1 \2/p' "$1"; }
mdb=$tmp/many.db
cp "$db" "$mdb"
sqlite3 "$mdb" "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k WHERE x < 9)
  INSERT INTO samples (id, source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id)
  SELECT s.id + x * 10000000, source_id, ts_ns + x, pid, tid, cpu, comm, event, period, stack_id,
  span_id FROM samples s, k"
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database many --kind pcap --db "$mdb" 2>/dev/null
"$bin/spanfold" push --clickhouse "$u2" --cluster sf --database many --kind perf,tracefs \
    --db "$mdb" 2>/dev/null
"$bin/spanfold" report --clickhouse "$u1" --cluster sf --database many --out "$tmp/m1" 2>"$tmp/m1.err"
"$bin/spanfold" report --clickhouse "$u1" --cluster sf --out "$tmp/m0" 2>"$tmp/m0.err"
b0=$(sets_bytes "$tmp/m0.err")
b1=$(sets_bytes "$tmp/m1.err")
check_eval "the CPU sets travel as stacks: ${b0:-?} (queries, bytes) for $(sqlite3 "$db" 'SELECT count(*) FROM samples') samples, ${b1:-?} for ten times as many" \
    '[ -n "$b0" ] && [ "$b0" = "$b1" ] && ! cmp -s "$tmp/m0/findings.json" "$tmp/m1/findings.json"'
for s in "--slowest|10%" "--during|+20s..+11m|--vs|rest"; do
    IFS='|' read -r -a a <<<"$s"
    "$bin/spanfold" stacks --db "$tmp/both.db" "${a[@]}" >"$tmp/f1" 2>/dev/null
    "$bin/spanfold" stacks --clickhouse "$u2" --cluster sf --database two "${a[@]}" >"$tmp/f2" 2>/dev/null
    check_eval "two hosts: stacks $s as on the file with both ($(wc -l <"$tmp/f1") lines)" \
        '[ -s "$tmp/f1" ] && cmp -s "$tmp/f1" "$tmp/f2"'
done

# -- idempotent: a second push skips every source
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --db "$db" 2>"$tmp/p3"
check "a second push of every source exits 0" [ $? -eq 0 ]
check "and skips all three (one is on each shard)" [ "$(grep -c 'already in ClickHouse' "$tmp/p3")" = 3 ]
same_count "spans after the second push" "SELECT count(*) FROM spans" "SELECT count() FROM spanfold.spans_d"

# -- an interrupted push is replaced; transient errors are retried
# where to cut: the requests a push makes (SF_CH_TRACE), numbered as SF_CH_FAIL_AT counts
# them; each source's push begins with two checks, the second "SELECT if(countIf(...", then
# its sources row ('started') and its tables' rows
checks() { # PUSH-ARGS...: the request numbers of the sources' second checks
    SF_CH_TRACE=1 "$bin/spanfold" push "$@" 2>&1 >/dev/null |
        grep -a -o '^ClickHouse request [0-9]*: SELECT if(countIf' | sed 's/[^0-9]*\([0-9]*\).*/\1/'
}
cut_at=$(($(checks --clickhouse "$u1" --database trace --db "$db" | sed -n 2p) + 2))
half_at=$(($(checks --clickhouse "$u2" --kind pcap --database trace2 --db "$db" | sed -n 1p) + 2))
SF_CH_FAIL_AT=$cut_at SF_CH_FAIL_COUNT=99 "$bin/spanfold" push --clickhouse "$u1" --database cut \
    --db "$db" 2>"$tmp/p4"
check "a push whose requests fail from the ${cut_at}th on (the profile's samples) exits 2" [ $? -eq 2 ]
started=$(chq "$u1" "SELECT count() FROM (SELECT skey FROM cut.sources GROUP BY skey
                     HAVING countIf(push_state = 'complete') = 0)")
check "and leaves a source 'started', not 'complete' (${started:-none})" [ "${started:-0}" -ge 1 ]
"$bin/spanfold" push --clickhouse "$u1" --database cut --db "$db" 2>"$tmp/p5"
check "pushing again exits 0" [ $? -eq 0 ]
check "and says it replaced the interrupted source" grep -q "interrupted push .* here: replaced" "$tmp/p5"
for t in spans samples contexts span_events; do
    check "$t after the replace: $(q "SELECT count(*) FROM $t")" \
        [ "$(q "SELECT count(*) FROM $t")" = "$(chq "$u1" "SELECT count() FROM cut.$t")" ]
done
# a half push of the capture to shard 2 (it is complete on shard 1): the next push with
# --cluster removes the half and skips the source, so nothing is counted twice
SF_CH_FAIL_AT=$half_at SF_CH_FAIL_COUNT=99 "$bin/spanfold" push --clickhouse "$u2" --kind pcap \
    --db "$db" 2>/dev/null
check "a half push of the capture to the other shard fails (exit 2)" [ $? -eq 2 ]
check "leaving rows there" [ "$(chq "$u2" "SELECT count() FROM spanfold.sources")" -gt 0 ]
"$bin/spanfold" push --clickhouse "$u2" --cluster sf --kind pcap --db "$db" 2>"$tmp/p8"
check "pushing it with --cluster exits 0" [ $? -eq 0 ]
check_eval "removes the half there and skips the source complete on shard 1" \
    'grep -q "here: removed" "$tmp/p8" && grep -q "already in ClickHouse" "$tmp/p8"'
same_count "connections after the removal" "SELECT count(*) FROM connections" \
    "SELECT count() FROM spanfold.connections_d"
same_count "sources rows after the removal (started + complete of each)" \
    "SELECT count(*) * 2 FROM sources" "SELECT count() FROM spanfold.sources_d"
SF_CH_FAIL_AT=5 SF_CH_FAIL_COUNT=3 "$bin/spanfold" push --clickhouse "$u1" --database retry \
    --db "$db" 2>"$tmp/p6"
check "three transient failures in a row are retried: exit 0" [ $? -eq 0 ]
check "and every sample arrives once" \
    [ "$(q 'SELECT count(*) FROM samples')" = "$(chq "$u1" 'SELECT count() FROM retry.samples')" ]

# -- ingest straight to ClickHouse (a temporary SQLite file in between)
ntmp() { find /tmp -maxdepth 1 -name 'spanfold-push.*' 2>/dev/null | wc -l; }
before=$(ntmp)
"$bin/spanfold" ingest --quiet --clickhouse "$u1" --database direct "$top/samples/demo" \
    >/dev/null 2>"$tmp/p7"
check "spanfold ingest --clickhouse exits 0" [ $? -eq 0 ]
"$bin/spanfold" stacks --db "$db" --slowest 10% >"$tmp/f1" 2>/dev/null
"$bin/spanfold" stacks --clickhouse "$u1" --database direct --slowest 10% >"$tmp/f2" 2>/dev/null
check "and its data folds as the file's" cmp -s "$tmp/f1" "$tmp/f2"
check "leaving no temporary database behind" [ "$(ntmp)" = "$before" ]

# -- a shard without the database, a shard that is down: the answer of the others, said
"$bin/spanfold" push --clickhouse "$u1" --cluster sf --database lone --db "$db" 2>"$tmp/p9"
check_eval "push to a cluster where shard 2 has no such database: exit 0, said" \
    '[ $? -eq 0 ] && grep -q "1 of 2 shards of cluster sf answered; missing: shard 2 (127.0.0.1:$t2): no database" "$tmp/p9"'
"$bin/spanfold" stacks --db "$db" --slowest 10% >"$tmp/f1" 2>/dev/null
"$bin/spanfold" stacks --clickhouse "$u2" --cluster sf --database lone --slowest 10% \
    >"$tmp/f2" 2>"$tmp/e"
r=$?
check_eval "stacks through shard 2, which lacks the database: exit 0, shard 1's folds" \
    '[ $r -eq 0 ] && [ -s "$tmp/f1" ] && cmp -s "$tmp/f1" "$tmp/f2"'
check "and says which shard did not answer" grep -q "note: 1 of 2 shards .*shard 2 (127.0.0.1:$t2): no database" "$tmp/e"
"$bin/spanfold" report --quiet --clickhouse "$u1" --cluster sf --database lone --out "$tmp/r9" \
    2>/dev/null
check_eval "report: exit 0, findings.json and the page say the answer is partial" \
    '[ $? -eq 0 ] && grep -q "1 of 2 shards of cluster sf answered" "$tmp/r9/findings.json" &&
     grep -q "1 of 2 shards of cluster sf answered" "$tmp/r9/report.html"'
"$bin/spanfold" inflect --clickhouse "$u2" --cluster sf --database lone --by endpoint \
    --json "$tmp/i9.json" 2>"$tmp/e"
check_eval "inflect through shard 2: exit 0, a warning on stderr and in the JSON names the missing shard" \
    '[ $? -eq 0 ] && grep -q "warning: 1 of 2 shards of cluster sf answered" "$tmp/e" &&
     grep -q "1 of 2 shards of cluster sf answered" "$tmp/i9.json"'
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf_dead --slowest 10% >"$tmp/f3" 2>"$tmp/e"
r=$?
check_eval "stacks on a cluster with a dead third shard: exit 0, the two shards' folds" \
    '[ $r -eq 0 ] && cmp -s "$tmp/f1" "$tmp/f3"'
check "and names the dead shard" grep -q "2 of 3 shards of cluster sf_dead answered; missing: shard 3 (127.0.0.1:$ch_dead_port): did not answer" "$tmp/e"
"$bin/spanfold" push --clickhouse "$u1" --cluster sf_dead --database lone --db "$db" 2>"$tmp/e"
r=$?
check_eval "push with a shard down: exit 2, it cannot tell what that shard holds" \
    '[ $r -eq 2 ] && grep -q "shard 3 (127.0.0.1:$ch_dead_port): did not answer: a source may be stored there already" "$tmp/e"'
"$bin/spanfold" stacks --clickhouse "$u1" --cluster nowhere >/dev/null 2>"$tmp/e"
r=$?
check_eval "an unknown cluster: exit 2, named" '[ $r -eq 2 ] && grep -q "no cluster nowhere" "$tmp/e"'

# -- errors
chq "$u1" "CREATE DATABASE mm" >/dev/null
chq "$u1" "CREATE TABLE mm.spans (skey UInt64, id String) ENGINE = MergeTree() ORDER BY skey" >/dev/null
"$bin/spanfold" push --clickhouse "$u1" --database mm --db "$db" 2>"$tmp/e"
check "a table of other columns: exit 2" [ $? -eq 2 ]
check "says schema mismatch and the column" grep -q 'schema mismatch: spans.id is String' "$tmp/e"
"$bin/spanfold" push --clickhouse "http://127.0.0.1:$t1/" --db "$db" 2>"$tmp/e"
check "a port that is not HTTP: exit 2" [ $? -eq 2 ]
"$bin/spanfold" push --clickhouse "ftp://x/" --db "$db" 2>"$tmp/e"
r=$?
check_eval "a URL that is not http: exit 2 with the reason" \
    '[ $r -eq 2 ] && grep -q "HTTP interface" "$tmp/e"'
"$bin/spanfold" push --clickhouse "$u1" --database 'x;DROP' --db "$db" 2>"$tmp/e"
check "a database name that is not an identifier: exit 2" [ $? -eq 2 ]
fails_with() { # fails_with NAME PATTERN ARGS...: spanfold ARGS exits 2, stderr matches
    local name=$1 pat=$2 r
    shift 2
    "$bin/spanfold" "$@" >/dev/null 2>"$tmp/e"
    r=$?
    check_eval "$name: exit 2, said" '[ $r -eq 2 ] && grep -q "$pat" "$tmp/e"'
}
fails_with "report from a server that is not there (curl's reason)" \
    "^spanfold report: http://127.0.0.1:[0-9]*/: ClickHouse: " \
    report --clickhouse "http://127.0.0.1:$(ch_ports 1)/" --out "$tmp/r6"
fails_with "report from a database of other columns (the schema mismatch)" \
    "schema mismatch: spans.id is String" report --clickhouse "$u1" --database mm --out "$tmp/r7"
fails_with "stacks --during on that database (the same message)" \
    "schema mismatch: spans.id is String" stacks --clickhouse "$u1" --database mm --during +1s..
fails_with "a gate with 'where' on the cluster (the attributes are on the hosts)" "'where' needs --db" \
    gate --clickhouse "$u2" --cluster sf --database hostile \
    --gate 'sampled_share where baggage.env = "prod" < 10pt'
fails_with "report from a database push never wrote" \
    "no spanfold tables in ClickHouse database nothing_here" \
    report --clickhouse "$u1" --database nothing_here --out "$tmp/r8"
hostile='path = "it'\''s\\" or path = "\\'\''--"' # the strings it's\ and \'--
"$bin/spanfold" stacks --clickhouse "$u1" --cluster sf --where "$hostile" >/dev/null 2>"$tmp/e"
r=$?
check_eval "quotes and backslashes in a literal stay in it (no match, exit 2, no SQL error)" \
    '[ $r -eq 2 ] && grep -q "no CPU sample" "$tmp/e" && ! grep -q "Code:" "$tmp/e"'
tap_plan

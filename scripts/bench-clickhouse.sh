#!/usr/bin/env bash
# Benchmark spanfold push into ClickHouse (one server started here on loopback ports, as
# a plain process; scripts/clickhouse/server.sh) on a synthetic database of
# BENCH_CH_SPANS spans (default 100000) and BENCH_CH_SAMPLES samples (default 500000),
# each sample attributed to a span, 500 distinct stacks:
#   - push wall time and rows per second (the whole push: SQLite reads, attribution,
#     RowBinary, HTTP, the server's inserts), median of RUNS runs into fresh databases
#   - bytes per span and per sample: RowBinary on the wire, and on disk in the MergeTree
#     parts (compressed, active parts, after OPTIMIZE)
#   - RowBinary against JSONEachRow for the same rows: size, and the server's time to
#     insert each (curl, the body in the page cache)
#   - spanfold stacks --clickhouse on the pushed data against --db on the file (CPU, as
#     the report below)
#   - spanfold report --clickhouse against --db on the file, CPU time (user + sys, the
#     median of RUNS_REPORT interleaved runs, scripts/bench/measure.sh): the demo data on
#     a two-shard cluster (the capture on one shard, the profile and markers on the other)
#     and the synthetic database on one server; the servers' CPU (their /proc stat
#     ticks over each run) is given beside the client's
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
sfb=$top/bin/spanfold
nspans=${BENCH_CH_SPANS:-100000}
nsamples=${BENCH_CH_SAMPLES:-500000}
runs=${RUNS:-3}
command -v clickhouse-server >/dev/null ||
    { echo "bench-clickhouse: needs clickhouse-server (scripts/deps.sh heavy)"; exit 0; }
[ -x "$sfb" ] || { echo "bench-clickhouse: $sfb not built (make)"; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-clickhouse.XXXXXX")
cp "$sfb" "$tmp/spanfold" && sfb=$tmp/spanfold # a rebuild must not swap it mid-run
. "$top/scripts/clickhouse/server.sh"
trap 'ch_stop; rm -rf "$tmp"' EXIT
. "$top/scripts/bench/measure.sh"
ch_two_shards "$tmp" || { echo "bench-clickhouse: clickhouse-server did not start"; exit 2; }
http=$ch_http1 http2=$ch_http2
u=http://127.0.0.1:$http/
u2=http://127.0.0.1:$http2/
runs_report=${RUNS_REPORT:-7}
chq() { curl -sS "$u" --data-binary "$1"; }
now() { date +%s.%N; }

# the database: the demo's schema (spanfold ingest), synthetic rows
db=$tmp/bench.db
"$sfb" ingest --quiet --db "$db" "$top/samples/demo" >/dev/null 2>&1
sqlite3 "$db" <<SQL
DELETE FROM samples; DELETE FROM stacks; DELETE FROM contexts; DELETE FROM spans;
DELETE FROM span_events; DELETE FROM span_intervals; DELETE FROM connections;
DELETE FROM clock_fits; DELETE FROM sources;
INSERT INTO sources(id, kind, path, sha256, clock, tool, tool_version, status) VALUES
 (1, 'pcap', 'bench.pcap', lower(hex(randomblob(32))), 'realtime', 'bench', '0', 'complete'),
 (2, 'perf', 'bench.perf', lower(hex(randomblob(32))), 'realtime', 'bench', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $nspans)
INSERT INTO spans(id, source_id, stream_id, proto, method, authority, path, status,
  req_start_ns, req_end_ns, resp_start_ns, resp_end_ns, trace_id, span_id, sampled, ctx_format,
  ctx_valid)
SELECT i, 1, i % 1000, 'h2', CASE i % 3 WHEN 0 THEN 'POST' ELSE 'GET' END, 'shop.example',
  CASE i % 3 WHEN 0 THEN '/api/checkout' WHEN 1 THEN '/api/search?q=' || (i % 97) ELSE '/' END,
  CASE WHEN i % 50 = 0 THEN 503 ELSE 200 END, 1796126400000000000 + i * 1000000,
  1796126400000000000 + i * 1000000 + 20000, 1796126400000000000 + i * 1000000 + 900000,
  1796126400000000000 + i * 1000000 + 1000000 + (i % 13) * 100000, printf('%032x', i * 7919),
  printf('%016x', i), i % 2, 'traceparent', 1 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO stacks(id, frames) SELECT i, 'main;serve;handle_' || (i % 20) || ';work_' || (i % 7)
  || ';leaf_' || i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $nsamples)
INSERT INTO samples(id, source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id)
SELECT i, 2, 1796126400000000000 + i * 200000, 100, 100 + i % 8, i % 2, 'shop', 'cpu-clock',
  1000000, 1 + (i * 31) % 500, printf('%016x', 1 + (i * 7) % $nspans) FROM n;
SQL
echo "database: $nspans spans, $nsamples samples, 500 stacks ($(du -k "$db" | cut -f1) KiB SQLite)"

times=()
for r in $(seq "$runs"); do
    t0=$(now)
    "$sfb" push --clickhouse "$u" --database "b$r" --db "$db" 2>"$tmp/push.$r" ||
        { cat "$tmp/push.$r"; exit 2; }
    times+=("$(echo "$(now) - $t0" | bc)")
done
med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
rows=$((nspans + nsamples))
printf 'push: %s s median of %d (%s), %.0f spans+samples per second\n' "$med" "$runs" \
    "$(echo "${times[*]}" | tr ' ' ,)" "$(echo "$rows / $med" | bc -l)"
tail -n 1 "$tmp/push.1"

chq "OPTIMIZE TABLE b1.spans FINAL" >/dev/null
chq "OPTIMIZE TABLE b1.samples FINAL" >/dev/null
for t in spans samples; do
    chq "SELECT * FROM b1.$t FORMAT RowBinary" >"$tmp/$t.rb"
    chq "SELECT * FROM b1.$t FORMAT JSONEachRow" >"$tmp/$t.json"
    n=$(chq "SELECT count() FROM b1.$t")
    disk=$(chq "SELECT sum(data_compressed_bytes) FROM system.parts WHERE database = 'b1' AND
                table = '$t' AND active")
    for f in RowBinary JSONEachRow; do
        ext=$([ $f = RowBinary ] && echo rb || echo json)
        chq "CREATE TABLE b1.${t}_$ext AS b1.$t" >/dev/null
        t0=$(now)
        curl -sS "${u}?query=$(printf 'INSERT%%20INTO%%20b1.%s_%s%%20FORMAT%%20%s' "$t" "$ext" "$f")" \
            --data-binary "@$tmp/$t.$ext" >/dev/null
        eval "ins_$ext=\$(echo \"\$(now) - \$t0\" | bc)"
    done
    printf '%s: %d rows; RowBinary %.1f B/row (insert %.2f s), JSONEachRow %.1f B/row (insert %.2f s); on disk %.1f B/row\n' \
        "$t" "$n" "$(echo "$(stat -c %s "$tmp/$t.rb") / $n" | bc -l)" "$ins_rb" \
        "$(echo "$(stat -c %s "$tmp/$t.json") / $n" | bc -l)" "$ins_json" "$(echo "$disk / $n" | bc -l)"
done

# the servers' CPU seconds so far (utime + stime of every server ch_server started)
servers_cpu() {
    local p t=0
    for p in "${ch_pids[@]}"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
    echo "$t $(getconf CLK_TCK)" | awk '{printf "%.4f\n", $1 / $2}'
}

# pair_bench NAME RUNS FILE-CMD... -- CLICKHOUSE-CMD...: interleaved runs of the command on
# the file and on ClickHouse; the medians of the client's CPU, the servers' beside it
pair_bench() {
    local name=$1 n=$2 i s0 c1 c2 sv a=()
    shift 2
    while [ "$1" != -- ]; do a+=("$1") && shift; done
    shift
    : >"$tmp/rf" && : >"$tmp/rc" && : >"$tmp/rs"
    for i in $(seq "$n"); do
        bench_measure "${a[@]}" | cut -d' ' -f1 >>"$tmp/rf"
        s0=$(servers_cpu)
        bench_measure "$@" | cut -d' ' -f1 >>"$tmp/rc"
        echo "$(servers_cpu) - $s0" | bc >>"$tmp/rs"
    done
    c1=$(bench_median <"$tmp/rf")
    c2=$(bench_median <"$tmp/rc")
    sv=$(bench_median <"$tmp/rs")
    printf '%s: file %.3f s CPU, ClickHouse %.3f s CPU client + %.3f s servers, ratio %.2f (client) %.2f (with the servers)\n' \
        "$name" "$c1" "$c2" "$sv" "$(bench_ratio "$c2" "$c1")" "$(bench_ratio "$(echo "$c2 + $sv" | bc)" "$c1")"
    echo "  rounds: file $(bench_rounds "$tmp/rf" %.3f); ClickHouse $(bench_rounds "$tmp/rc" %.3f); servers $(bench_rounds "$tmp/rs" %.3f)"
}

# same A B FILE...: each FILE of the file's run (in A) and of ClickHouse's (in B) is the same
same() {
    local f
    for f in "${@:3}"; do cmp -s "$1/$f" "$2/$f" || { echo "  DIFFERENT: $f" && return 1; }; done
    echo "  identical: ${*:3}"
}

sel='endpoint = "/api/checkout" and duration > p90'
mkdir -p "$tmp/sf" "$tmp/sc"
pair_bench "stacks (checkout, duration > p90)" "$runs_report" \
    "$sfb" stacks --db "$db" --where "$sel" --folded -o "$tmp/sf/out" -- \
    "$sfb" stacks --clickhouse "$u" --database b1 --where "$sel" --folded -o "$tmp/sc/out"
same "$tmp/sf" "$tmp/sc" out && echo "  ($(wc -l <"$tmp/sf/out") lines)"
same_stacks=$?

# report_bench NAME RUNS FILE CLICKHOUSE-ARGS...: report from the file and from ClickHouse
report_bench() {
    local name=$1 n=$2 file=$3
    shift 3
    pair_bench "report ($name)" "$n" "$sfb" report --quiet --db "$file" --name x --out "$tmp/rep_f" \
        -- "$sfb" report --quiet "$@" --name x --out "$tmp/rep_c"
    same "$tmp/rep_f" "$tmp/rep_c" findings.json report.html
}

demo=$tmp/demo.db
"$sfb" ingest --quiet --db "$demo" "$top/samples/demo" >/dev/null 2>&1
"$sfb" push --clickhouse "$u" --cluster sf --kind pcap --db "$demo" 2>/dev/null &&
    "$sfb" push --clickhouse "$u2" --cluster sf --kind perf,tracefs --db "$demo" 2>/dev/null ||
    { echo "bench-clickhouse: pushing the demo failed"; exit 2; }
report_bench "demo, 2 shards" "$runs_report" "$demo" --clickhouse "$u2" --cluster sf
same_demo=$?
report_bench "$nspans spans, $nsamples samples, 1 server" "$(((runs_report + 1) / 2))" "$db" \
    --clickhouse "$u" --database b1
same_big=$?
[ "$same_stacks$same_demo$same_big" = 000 ]

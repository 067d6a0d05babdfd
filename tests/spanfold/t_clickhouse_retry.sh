#!/usr/bin/env bash
# spanfold push when the answer to an INSERT is lost after the server wrote it: a proxy
# (ch_lossy_proxy.py) passes every request on to a real ClickHouse server, waits for
# its answer, and the first time it sees an INSERT throws the answer away and closes
# the connection.  The push retries; each batch must land once, and the sources table
# must hold one 'started' and one 'complete' row per source, whatever the retries.
# Then the same with the INSERTs lost on the way there: each is sent again, once.
# Skips with the reason where no server can start.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spanfold push with lost answers"
[ -x "$bin/spanfold" ] || tap_skip_all "spanfold not built"
command -v clickhouse-server >/dev/null ||
    tap_skip_all "needs clickhouse-server (Debian clickhouse-server; scripts/deps.sh heavy)"
command -v curl >/dev/null || tap_skip_all "needs curl"
command -v sqlite3 >/dev/null || tap_skip_all "needs the sqlite3 shell (Debian sqlite3)"
command -v python3 >/dev/null || tap_skip_all "needs python3 (the proxy)"
[ -f "$top/samples/demo/demo.pcap" ] || tap_skip_all "samples/demo not recorded"
tap_tmpdir sf_chr
export LC_ALL=C
. "$top/scripts/clickhouse/server.sh"
proxies=()
trap 'for x in "${proxies[@]}"; do kill "$x" 2>/dev/null; done; ch_stop; rm -rf "$tmp"' EXIT
read -r h t p p2 < <(ch_ports 4) # http, tcp, the proxies
ch_server "$tmp/s" "$h" "$t" "$t"
if ! ch_up "$h"; then
    tail -n 5 "$tmp/s/log/stdout" "$tmp/s/log/err.log" 2>/dev/null | sed 's/^/# /'
    tap_skip_all "clickhouse-server did not start on 127.0.0.1:$h (its log above)"
fi
proxy() { # proxy PORT LOG MODE
    python3 "$(dirname "$0")/ch_lossy_proxy.py" "$1" "$h" "$2" "$3" >"$2.out" 2>&1 &
    proxies+=($!)
    for _ in $(seq 50); do grep -q ready "$2.out" 2>/dev/null && break; sleep 0.1; done
}
proxy "$p" "$tmp/lost" answer
proxy "$p2" "$tmp/lost2" request
u=http://127.0.0.1:$h/
chq() { curl -sS "$u" --data-binary "$1"; } # chq SQL
echo "# ClickHouse $(chq 'SELECT version()') on $h, the proxy on $p"

db=$tmp/demo.db
"$bin/spanfold" ingest --quiet --db "$db" "$top/samples/demo" >"$tmp/ingest.log" 2>&1
check "spanfold ingest builds the demo database" [ -s "$db" ]
q() { sqlite3 "$db" "$1"; }

"$bin/spanfold" push --clickhouse "http://127.0.0.1:$p/" --db "$db" 2>"$tmp/push"
r=$?
sed 's/^/# /' "$tmp/push"
check "a push whose every INSERT loses its first answer exits 0 (exit $r)" [ $r -eq 0 ]
lost=$(wc -l <"$tmp/lost" 2>/dev/null || echo 0)
check "the proxy lost answers: one per INSERT, $lost of them (sources rows among them)" \
    grep -q "^lost INSERT INTO spanfold.sources " "$tmp/lost"
nsrc=$(q "SELECT count(*) FROM sources")
check "sources: one 'started' row per source ($nsrc), not one per attempt" \
    [ "$(chq "SELECT count() FROM spanfold.sources WHERE push_state = 'started'")" = "$nsrc" ]
check "sources: one 'complete' row per source ($nsrc)" \
    [ "$(chq "SELECT count() FROM spanfold.sources WHERE push_state = 'complete'")" = "$nsrc" ]
for tb in connections spans contexts span_events span_intervals samples clock_fits; do
    a=$(q "SELECT count(*) FROM $tb")
    b=$(chq "SELECT count() FROM spanfold.$tb")
    check "$tb: every row once ($a in SQLite, $b in ClickHouse)" [ "$a" = "$b" ]
done
check "stacks: every stack there (duplicates of a key are merged on read)" \
    [ "$(q "SELECT count(DISTINCT stack_id) FROM samples")" = \
    "$(chq "SELECT uniqExact(stack_key) FROM spanfold.stacks")" ]

# a second push through the proxy: every source is there, nothing is written again
"$bin/spanfold" push --clickhouse "http://127.0.0.1:$p/" --db "$db" 2>"$tmp/push2"
r=$?
check_eval "a second push exits 0 (exit $r) and skips every source" \
    '[ $r -eq 0 ] && [ "$(grep -c "already in ClickHouse" "$tmp/push2")" = "$nsrc" ]'
check "sources: still 2 rows per source" \
    [ "$(chq "SELECT count() FROM spanfold.sources")" = "$((2 * nsrc))" ]
check "the first push said which answers were lost and that their rows are there" \
    grep -q "the answer to an INSERT of 862 spans row(s) was lost: they are there, not sent again" \
    "$tmp/push"

# the requests lost instead: nothing was written, each INSERT is sent again
"$bin/spanfold" push --clickhouse "http://127.0.0.1:$p2/" --database lostreq --db "$db" \
    2>"$tmp/push3"
r=$?
check "a push whose every INSERT is lost on the way exits 0 (exit $r)" [ $r -eq 0 ]
check "and says they were sent again" grep -q "they are not there, sent again" "$tmp/push3"
check "the proxy lost requests: $(wc -l <"$tmp/lost2" 2>/dev/null || echo 0)" [ -s "$tmp/lost2" ]
for tb in sources spans samples span_events; do
    a=$(q "SELECT count(*) FROM $tb")
    [ "$tb" = sources ] && a=$((2 * a))
    b=$(chq "SELECT count() FROM lostreq.$tb")
    check "$tb: every row once ($a in SQLite, $b in ClickHouse)" [ "$a" = "$b" ]
done
tap_plan

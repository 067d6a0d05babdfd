#!/usr/bin/env bash
# inflect --db against hostile databases (issue 19, items 3, 4 and 6):
#   - one span 39,000,000 s after the rest: sparse windows, a fast small report, and
#     the outlier reported (stderr, report.md, summary.json);
#   - spans spread thin over a long time: gaps are cut, the report stays small;
#   - a source that was interrupted: a warning (stderr, report, JSON), and
#     --complete-only leaves it out;
#   - another program's SQLite file is refused and left unchanged (no tables added,
#     not switched to WAL); a mistyped path is not created; a database on
#     read-only media is read.
# Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
inflect=${SF_BIN:-$top/bin}/inflect
tap_tmpdir t_hostile_db
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"

# newdb FILE: the schema and one complete source 1 (as tests/inflect/t_db.sh does)
newdb() {
    sqlite3 "$1" <"$top/lib/schema.sql"
    sqlite3 "$1" "INSERT INTO sources(id, kind, path, tool,
        tool_version, status) VALUES (1, 'pcap', 'a.pcap', 'test', '0', 'complete')"
}
# spans DB SOURCE N STEP_NS: N spans 10 ms apart from 1700000000 s, 20-26 ms long
spans() {
    sqlite3 "$1" "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $3 - 1)
        INSERT INTO spans(source_id, proto, req_start_ns, resp_end_ns)
        SELECT $2, 'h1', 1700000000000000000 + i * $4,
               1700000000000000000 + i * $4 + 20000000 + (i % 7) * 1000000 FROM n"
}

# --- one far-off timestamp -----------------------------------------------------------
db=$tmp/far.db
newdb "$db"
spans "$db" 1 6000 10000000
sqlite3 "$db" "INSERT INTO spans(source_id, proto, req_start_ns, resp_end_ns) VALUES
    (1, 'h1', 1739000000000000000, 1739000000005000000)"
( ulimit -v 1000000; timeout 20 "$inflect" --db "$db" --out "$tmp/far" --window 10s --no-charts ) \
    >"$tmp/far.json" 2>"$tmp/far.err"
rc=$?
check_eval "a span 39,000,000 s after the rest: done in 20 s and 1 GB, exit 0 (got $rc)" \
    '[ "$rc" = 0 ]'
size=$(stat -c %s "$tmp/far/windows.csv" 2>/dev/null || echo 999999999)
check_eval "windows.csv stays small ($size bytes)" '[ "$size" -lt 10000 ]'
check_eval "summary: 1 outlier after the bulk" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"outliers\"][\"after\"] == 1 and d[\"spans\"] == 6000 and d[\"windows\"] == 6))" "$tmp/far/summary.json"'
check_eval "stderr names the outlier" 'grep -q "1 span far from the bulk left out" "$tmp/far.err"'
check_eval "and so does report.md" 'grep -q "^Warning: 1 span far from the bulk" "$tmp/far/report.md"'
# the adapted default window follows the bulk (100 spans/s), not the 39,000,000 s
"$inflect" --db "$db" --json "$tmp/far-auto.json" 2>/dev/null
check_eval "the default window is adapted to the bulk, not stretched by the outlier" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"window_s\"] <= 1 and d[\"outliers\"][\"after\"] == 1))" "$tmp/far-auto.json"'

# --- thin spans over a long time: gaps are cut --------------------------------------
db=$tmp/thin.db
newdb "$db"
spans "$db" 1 50 1000000000000000 # 50 spans, 1,000,000 s apart
( ulimit -v 1000000; timeout 20 "$inflect" --db "$db" --window 10s --json "$tmp/thin.json" ) 2>"$tmp/thin.err"
rc=$?
check_eval "50 spans over 49,000,000 s: exit 0 (got $rc)" '[ "$rc" = 0 ]'
check_eval "at most 50 + 49 x 100 windows, 49 gaps cut, no outliers" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"windows\"] <= 4950 and d[\"outliers\"][\"gaps_cut\"] == 49 and d[\"spans\"] == 50))" "$tmp/thin.json"'

# --- an interrupted source -------------------------------------------------------------
db=$tmp/partial.db
newdb "$db"
spans "$db" 1 600 10000000
sqlite3 "$db" "INSERT INTO sources(id, kind, path, tool, tool_version, status, error)
    VALUES (2, 'pcap', 'killed.pcap', 'pcap2spans', '0', 'partial', 'interrupted')"
spans "$db" 2 400 10000000
"$inflect" --db "$db" --out "$tmp/partial" --no-charts >"$tmp/p.json" 2>"$tmp/p.err"
rc=$?
check_eval "an interrupted source: exit 0 (got $rc)" '[ "$rc" = 0 ]'
check_eval "warning on stderr naming it" \
    'grep -q "warning: 1 of 2 sources is not complete .*source 2 killed.pcap: interrupted" "$tmp/p.err"'
check_eval "in report.md" 'grep -q "^Warning: 1 of 2 sources is not complete" "$tmp/partial/report.md"'
check_eval "in summary.json warnings, with its spans counted (1000)" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"spans\"] == 1000 and any(\"killed.pcap\" in w for w in d[\"warnings\"])))" "$tmp/partial/summary.json"'
"$inflect" --db "$db" --complete-only --json "$tmp/c.json" 2>"$tmp/c.err"
rc=$?
check_eval "--complete-only: exit 0 (got $rc), only the complete source's 600 spans" \
    '[ "$rc" = 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d[\"spans\"] != 600)" "$tmp/c.json"'
check_eval "and says what it left out" 'grep -q "is left out (--complete-only)" "$tmp/c.err"'

# --- readers do not write ---------------------------------------------------------------
other=$tmp/other.db
sqlite3 "$other" "CREATE TABLE t(a); INSERT INTO t VALUES (1)"
sum=$(sha256sum "$other" | cut -c1-64)
"$inflect" --db "$other" 2>"$tmp/o.err" >/dev/null
rc=$?
check_eval "another program's database: exit 2 (got $rc)" '[ "$rc" = 2 ]'
check_eval "saying it is not a spanfold database" 'grep -q "not a spanfold database" "$tmp/o.err"'
check_eval "the file is unchanged" '[ "$(sha256sum "$other" | cut -c1-64)" = "$sum" ]'
check_eval "no tables added, not switched to WAL" \
    '[ "$(sqlite3 "$other" "SELECT count(*) FROM sqlite_master; PRAGMA journal_mode" | tr "\n" " ")" = "1 delete " ]'
"$inflect" --db "$tmp/typo.db" >/dev/null 2>&1
rc=$?
check_eval "a mistyped path: exit 2 (got $rc), nothing created" '[ "$rc" = 2 ] && [ ! -e "$tmp/typo.db" ]'

# read-only media: a bind mount remounted read-only in a private mount namespace
ro=$tmp/ro
mkdir -p "$ro"
cp "$tmp/partial.db" "$ro/ro.db"
sqlite3 "$ro/ro.db" "PRAGMA journal_mode = WAL" >/dev/null
if unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
        ! touch "$1/x" 2>/dev/null && "$2" --db "$1/ro.db" --complete-only --json -' \
        sh "$ro" "$inflect" >"$tmp/ro.json" 2>"$tmp/ro.err"
    rc=$?
    check_eval "a WAL database on a read-only mount is read (exit $rc)" \
        '[ "$rc" = 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d[\"spans\"] != 600)" "$tmp/ro.json"'
else
    skip "a WAL database on a read-only mount is read" "needs unshare -m (root)"
fi
tap_plan

#!/usr/bin/env bash
# A database written through lib/sf_db is readable by the sqlite3 shell, with the
# schema version, the embedded schema and the rows a writer put there.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
writer=${SF_BUILD:-$top/build}/tests/unit/test_db
n=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
if ! command -v sqlite3 >/dev/null; then
    echo "ok 1 - sqlite3 shell # SKIP sqlite3 not installed"; echo "1..1"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$writer" "$tmp/x.db"; t $? "writer created a database"
[ "$(sqlite3 "$tmp/x.db" 'PRAGMA user_version')" = 1 ]; t $? "sqlite3 shell reads user_version 1"
[ "$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_events WHERE span_id='00f067aa0ba902b7'")" = 42 ]
t $? "span id query as typed in the shell finds 42 rows"
[ "$(sqlite3 "$tmp/x.db" "SELECT status||'/'||clock FROM sources")" = "complete/monotonic" ]
t $? "source row complete with its clock"
sqlite3 "$tmp/x.db" 'PRAGMA integrity_check' | grep -qx ok; t $? "integrity_check ok"
sqlite3 "$tmp/x.db" 'PRAGMA foreign_key_check' | grep -q . ; t $((! $?)) "no foreign key violations"
# the schema stored in the file is the one in lib/schema.sql
sqlite3 "$tmp/x.db" .schema | grep -qE 'trace_id_lo +TEXT GENERATED ALWAYS'; t $? "schema has the generated trace_id_lo"
echo "1..$n"

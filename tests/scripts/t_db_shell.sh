#!/usr/bin/env bash
# A database written through lib/sf_db is readable by the sqlite3 shell, with the
# schema version, the embedded schema and the rows a writer put there.
set -u
. "$(dirname "$0")/../tap.sh"
writer=${SF_BUILD:-$top/build}/tests/unit/test_db
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
if ! command -v sqlite3 >/dev/null; then
    tap_name="sqlite3 shell"; tap_skip_all "sqlite3 not installed"
fi
tap_tmpdir
"$writer" "$tmp/x.db"; t $? "writer created a database"
ver=$(sed -n 's/^#define SF_DB_SCHEMA_VERSION //p' "$top/lib/sf_db.h")
[ "$(sqlite3 "$tmp/x.db" 'PRAGMA user_version')" = "$ver" ]; t $? "sqlite3 shell reads user_version $ver"
[ "$(sqlite3 "$tmp/x.db" "SELECT count(*) FROM span_events WHERE span_id='00f067aa0ba902b7'")" = 42 ]
t $? "span id query as typed in the shell finds 42 rows"
[ "$(sqlite3 "$tmp/x.db" "SELECT status||'/'||clock FROM sources")" = "complete/monotonic" ]
t $? "source row complete with its clock"
sqlite3 "$tmp/x.db" 'PRAGMA integrity_check' | grep -qx ok; t $? "integrity_check ok"
sqlite3 "$tmp/x.db" 'PRAGMA foreign_key_check' | grep -q . ; t $((! $?)) "no foreign key violations"
# the schema stored in the file is the one in lib/schema.sql
sqlite3 "$tmp/x.db" .schema | grep -qE 'trace_id_lo +TEXT GENERATED ALWAYS'; t $? "schema has the generated trace_id_lo"
# a file made by the sqlite3 shell from lib/schema.sql alone is the current version too
sqlite3 "$tmp/shell.db" <"$top/lib/schema.sql"
[ "$(sqlite3 "$tmp/shell.db" 'PRAGMA user_version')" = "$ver" ]
t $? "lib/schema.sql sets user_version $ver (SF_DB_SCHEMA_VERSION)"
tap_plan

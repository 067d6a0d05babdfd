#!/usr/bin/env bash
# Schema 3 -> 4 (lib/sf_db.c): a version 3 database written by pcap2spans before the
# change (tests/data/db-v3/spans-v3.db) is rebuilt without the CHECK on contexts.format.
# Every row of every table is the same afterwards, ids included; contexts has the columns,
# indexes and foreign key of a new database; a name outside the old list is accepted; and
# a file whose contexts lost their span is left at version 3, untouched.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
fixture=$top/tests/data/db-v3/spans-v3.db
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 not installed"
tap_tmpdir
q() { sqlite3 "$@"; }
# every table's rows in rowid order; sources only up to the fixture's last one; an empty
# table is not listed (a later migration adds tables, empty)
# rows DB LAST [COLS_DB]: every table's rows, in the columns COLS_DB's tables have (a later
# migration adds columns, NULL in the old rows)
rows() {
    local cols
    for t in $(q "$1" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
        [ "$(q "$1" "SELECT count(*) FROM \"$t\"")" = 0 ] && continue
        echo "== $t"
        cols=$(q "${3:-$1}" "SELECT group_concat(name, ', ') FROM pragma_table_xinfo('$t')")
        q "$1" "SELECT $cols FROM \"$t\" WHERE '$t' <> 'sources' OR rowid <= $2 ORDER BY rowid"
    done
}
# what a table is: its columns, indexes and foreign keys (not the text it was created with)
shape() {
    q "$1" "SELECT * FROM pragma_table_info('$2'); SELECT name, \"unique\", origin, partial
            FROM pragma_index_list('$2') ORDER BY name; SELECT * FROM pragma_foreign_key_list('$2');
            SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '$2' ORDER BY name"
}
# a capture with no packets: writing it opens (so migrates) the database and adds one source
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000\377\377\000\000\001\000\000\000' \
    >"$tmp/empty.pcap"

cp "$fixture" "$tmp/v3.db"
last=$(q "$tmp/v3.db" "SELECT max(id) FROM sources")
check_eval "the fixture is version 3 with the CHECK on contexts.format" \
    '[ "$(q "$tmp/v3.db" "PRAGMA user_version")" = 3 ] &&
     q "$tmp/v3.db" "SELECT sql FROM sqlite_master WHERE name = '"'contexts'"'" | grep -q "CHECK (format ="'
rows "$tmp/v3.db" "$last" >"$tmp/before"
check_eval "the fixture has contexts of 8 formats" \
    '[ "$(q "$tmp/v3.db" "SELECT count(DISTINCT format) FROM contexts")" = 8 ]'
check "pcap2spans --db migrates it" "$bin" --quiet --db "$tmp/v3.db" "$tmp/empty.pcap"
ver=$(sed -n 's/^#define SF_DB_SCHEMA_VERSION //p' "$top/lib/sf_db.h")
check_eval "the current version ($ver)" '[ "$(q "$tmp/v3.db" "PRAGMA user_version")" = "$ver" ]'
cp "$fixture" "$tmp/v3-as-was.db"
rows "$tmp/v3.db" "$last" "$tmp/v3-as-was.db" >"$tmp/after"
if cmp -s "$tmp/before" "$tmp/after"; then
    ok "every row of every table is the same ($(grep -vc '^==' "$tmp/after") rows)"
else
    notok "every row of every table is the same"
    diff "$tmp/before" "$tmp/after" | head -5 | sed 's/^/# /'
fi
"$bin" --quiet --db "$tmp/new.db" "$tmp/empty.pcap"
for t in contexts spans sources sample_events; do
    check_eval "$t has the shape of a new database's" \
        '[ "$(shape "$tmp/v3.db" '$t')" = "$(shape "$tmp/new.db" '$t')" ]'
done
check_eval "integrity_check ok, no foreign key violation" \
    '[ "$(q "$tmp/v3.db" "PRAGMA integrity_check; PRAGMA foreign_key_check")" = ok ]'
check_eval "contexts.format takes a name outside the old list (a new format, no migration)" \
    'q "$tmp/v3.db" "INSERT INTO contexts (span_row, format, valid) VALUES (1, '"'new-format'"', 1)"'
check_eval "deleting a span still deletes its contexts (ON DELETE CASCADE)" \
    '[ "$(q "$tmp/v3.db" "PRAGMA foreign_keys = ON; DELETE FROM spans WHERE id = 1;
                         SELECT count(*) FROM contexts WHERE span_row = 1")" = 0 ]'

# step 10 of SQLite's procedure (foreign keys checked): a context whose span is gone stops the
# migration, rolled back
cp "$fixture" "$tmp/broken.db"
q "$tmp/broken.db" "PRAGMA foreign_keys = OFF; INSERT INTO contexts (span_row, format, valid)
                    VALUES (999999, 'traceparent', 0)"
rows "$tmp/broken.db" "$last" >"$tmp/broken-before"
"$bin" --quiet --db "$tmp/broken.db" "$tmp/empty.pcap" 2>"$tmp/err"
check_eval "an orphan context: pcap2spans fails (exit 2) saying why" \
    '[ $? = 2 ] && grep -q "migrating schema 3 to 4: sqlite: FOREIGN KEY constraint failed" "$tmp/err"'
check_eval "... and the file is left at version 3, every row as it was" \
    '[ "$(q "$tmp/broken.db" "PRAGMA user_version")" = 3 ] &&
     rows "$tmp/broken.db" "$last" | cmp -s - "$tmp/broken-before"'
tap_plan

#!/usr/bin/env bash
# tracefs2spans --db against files that are not its database (issue 19, items 4 and
# 5): a file that is not SQLite gave a segfault (an uninitialised struct sf_err) or
# stack bytes in the message; another program's SQLite file was migrated into;
# --refit created a mistyped path.  Each must be a clean exit 2 naming the file, with
# the file left as it was.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
t2s=${SF_BIN:-$top/bin}/tracefs2spans
trace=$top/samples/tracefs/trace.txt
tap_tmpdir t_t2s_db_errors

printf 'this is not a database, just %d bytes of text\n' 42 >"$tmp/notadb.db"
head -c 4096 /dev/urandom >>"$tmp/notadb.db"
sum=$(sha256sum "$tmp/notadb.db" | cut -c1-64)
"$t2s" --db "$tmp/notadb.db" "$trace" >/dev/null 2>"$tmp/err"
rc=$?
check_eval "a file that is not SQLite: exit 2, no crash (got $rc)" '[ "$rc" = 2 ]'
check_eval "the message names the file and the reason" \
    'grep -q "^tracefs2spans: $tmp/notadb.db: .*not a database" "$tmp/err"'
check_eval "the message is one printable line" \
    '[ "$(wc -l <"$tmp/err")" = 1 ] && ! LC_ALL=C grep -q "[^[:print:]]" "$tmp/err"'
check_eval "the file is unchanged" '[ "$(sha256sum "$tmp/notadb.db" | cut -c1-64)" = "$sum" ]'

if command -v sqlite3 >/dev/null; then
    sqlite3 "$tmp/other.db" "CREATE TABLE t(a); INSERT INTO t VALUES (1)"
    "$t2s" --db "$tmp/other.db" "$trace" >/dev/null 2>"$tmp/err"
    rc=$?
    check_eval "another program's database: exit 2 (got $rc)" '[ "$rc" = 2 ]'
    check_eval "saying it is not a spanfold database" 'grep -q "not a spanfold database" "$tmp/err"'
    check_eval "no tables added, not switched to WAL" \
        '[ "$(sqlite3 "$tmp/other.db" "SELECT count(*) FROM sqlite_master; PRAGMA journal_mode" | tr "\n" " ")" = "1 delete " ]'
else
    skip "another program's database" "sqlite3 shell not installed"
fi

"$t2s" --refit --db "$tmp/typo.db" >/dev/null 2>"$tmp/err"
rc=$?
check_eval "--refit on a mistyped path: exit 2 (got $rc)" '[ "$rc" = 2 ]'
check_eval "and nothing is created" '[ ! -e "$tmp/typo.db" ]'

"$t2s" --quiet --db "$tmp/good.db" "$trace" >/dev/null 2>&1
rc=$?
check_eval "a new path is still created by an ingest (exit $rc)" \
    '[ "$rc" -le 1 ] && [ -s "$tmp/good.db" ]'
tap_plan

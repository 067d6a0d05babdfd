#!/usr/bin/env bash
# spanfold-export and sources that are not complete (issue 19, items 3 and 4): an
# interrupted capture is exported with a warning naming it, or left out with
# --complete-only; the export opens the database read-only and never writes it.
# Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir t_export_partial
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"
db=$tmp/s.db
"$bin/pcap2spans" --quiet --db "$db" "$top/samples/tracefs/http.pcap" || exit 2
sqlite3 "$db" "UPDATE sources SET status = 'partial', error = 'interrupted'"
sum=$(sha256sum "$db" | cut -c1-64)
"$bin/spanfold-export" --db "$db" --format zipkin >"$tmp/all.json" 2>"$tmp/err"
rc=$?
check_eval "an interrupted capture: exit 0 (got $rc), its spans exported" \
    '[ "$rc" = 0 ] && grep -q "otlp\|zipkin: [1-9][0-9]* spans" "$tmp/err"'
check_eval "with a warning naming it" \
    'grep -q "warning: 1 of 1 sources is not complete .*http.pcap: interrupted" "$tmp/err"'
"$bin/spanfold-export" --db "$db" --format zipkin --complete-only >"$tmp/none.json" 2>"$tmp/err"
rc=$?
check_eval "--complete-only: exit 0 (got $rc), no spans" \
    '[ "$rc" = 0 ] && grep -q "zipkin: 0 spans" "$tmp/err" && grep -q "left out" "$tmp/err"'
check_eval "the database was not written" '[ "$(sha256sum "$db" | cut -c1-64)" = "$sum" ]'
sqlite3 "$tmp/other.db" "CREATE TABLE t(a)"
"$bin/spanfold-export" --db "$tmp/other.db" --format otlp >/dev/null 2>"$tmp/err"
rc=$?
check_eval "another program's database: exit 2 (got $rc), not migrated" \
    '[ "$rc" = 2 ] && [ "$(sqlite3 "$tmp/other.db" "SELECT count(*) FROM sqlite_master")" = 1 ]'
tap_plan

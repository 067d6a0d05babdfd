#!/usr/bin/env bash
# perf-fold --group-by reading a database (issue 19, items 3 and 4): a source that
# was interrupted is used with a warning naming it, or left out with --complete-only;
# reading never creates a mistyped path and never writes.  The database is built
# from samples/tracefs (pcap, perf, tracefs), then the perf source is marked as a run
# that was killed.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir t_pf_db_read
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"
db=$tmp/s.db
s=$top/samples/tracefs
"$bin/pcap2spans" --quiet --db "$db" "$s/http.pcap" &&
    "$bin/perf-fold" -q --db "$db" "$s/perf.txt" >/dev/null &&
    "$bin/tracefs2spans" --quiet --db "$db" "$s/trace.txt" || exit 2
full=$("$bin/perf-fold" -q --db "$db" --group-by span | wc -l)
check_eval "all sources complete: folded stacks ($full), no warning" \
    '[ "$full" -gt 10 ] && [ -z "$("$bin/perf-fold" --db "$db" --group-by span 2>&1 >/dev/null)" ]'

sqlite3 "$db" "UPDATE sources SET status = 'partial', error = 'interrupted' WHERE kind = 'perf'"
sum=$(sha256sum "$db" | cut -c1-64)
"$bin/perf-fold" --db "$db" --group-by span >"$tmp/out" 2>"$tmp/err"
rc=$?
check_eval "an interrupted perf source: exit 0 (got $rc), its stacks used" \
    '[ "$rc" = 0 ] && [ "$(wc -l <"$tmp/out")" = "$full" ]'
check_eval "with a warning naming it" \
    'grep -q "warning: 1 of 3 sources is not complete .*perf.txt: interrupted" "$tmp/err"'
"$bin/perf-fold" --db "$db" --group-by span --complete-only >"$tmp/out" 2>"$tmp/err"
rc=$?
check_eval "--complete-only: exit 0 (got $rc), no samples left" \
    '[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && grep -q "left out (--complete-only)" "$tmp/err"'
check_eval "reading wrote nothing" '[ "$(sha256sum "$db" | cut -c1-64)" = "$sum" ]'
"$bin/perf-fold" --complete-only "$s/perf.txt" >/dev/null 2>&1
check_eval "--complete-only without --group-by is a usage error" '[ $? = 2 ]'

"$bin/perf-fold" --db "$tmp/typo.db" --group-by span >/dev/null 2>"$tmp/err"
rc=$?
check_eval "--group-by on a mistyped path: exit 2 (got $rc), nothing created" \
    '[ "$rc" = 2 ] && [ ! -e "$tmp/typo.db" ] && grep -q "typo.db" "$tmp/err"'
tap_plan

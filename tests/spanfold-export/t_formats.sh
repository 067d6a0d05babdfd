#!/usr/bin/env bash
# spanfold-export's formats are one table (spanfold-export/main.c formats[]): every format
# in it (the hidden --list-formats prints its names) is in --help, the man page, the
# docs' synopsis and the unknown-format message, and exports a database with exit 0;
# and --help lists no format the table lacks.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir t_export_formats
fmts=$("$bin/spanfold-export" --list-formats 2>&1); rc=$?
check_eval "--list-formats: exit 0, some formats ($(echo $fmts))" '[ "$rc" = 0 ] && [ -n "$fmts" ]'
"$bin/spanfold-export" --help >"$tmp/help"
"$top/scripts/man.sh" "$bin/spanfold-export" spanfold-export >"$tmp/man.1"
"$bin/spanfold-export" --db "$tmp/x.db" --format no-such >/dev/null 2>"$tmp/unknown"
"$bin/pcap2spans" --quiet --db "$tmp/s.db" "$top/tests/pcap2spans/data/h1-lo.pcap" >/dev/null || exit 2
listed=$(awk '/^Formats:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$tmp/help")
check_eval "--help lists exactly the formats of the table ($(echo $listed))" '[ "$listed" = "$fmts" ]'
syn=$(sed -n 's/.*--format \([a-z|]*\) .*/\1/p' "$top/docs/spanfold-export.md" | head -n 1)
check_eval "docs/spanfold-export.md's synopsis names exactly them ($syn)" \
    '[ "$syn" = "$(echo $fmts | tr " " "|")" ]'
for f in $fmts; do
    check "$f: a .TP item of the man page" grep -qx "\\\\fB$f\\\\fR" "$tmp/man.1"
    check "$f: named by the unknown-format message" grep -q "unknown format 'no-such' (.*\\b$f\\b" "$tmp/unknown"
    "$bin/spanfold-export" --db "$tmp/s.db" --format "$f" --all -o "$tmp/out.$f" 2>"$tmp/err.$f"; rc=$?
    check_eval "$f: exports the database (exit $rc, $(head -c 60 "$tmp/err.$f"))" \
        '[ "$rc" = 0 ] && [ -s "$tmp/out.$f" ] && grep -q "^spanfold-export: $f: [0-9][0-9]* spans" "$tmp/err.$f"'
done
tap_plan

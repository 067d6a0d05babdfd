#!/usr/bin/env bash
# The one list of trace-context formats (lib/sf_tc_formats.h) against what docs/ says:
# the table of docs/pcap2spans.md (name, headers, preference), the contexts.format list of
# docs/database.md and the tracectx.format row of docs/dissector.md.  The list comes from
# the build (test_tracectx --list-formats), so a format added to the X-macro and not to the
# docs fails here.
set -u
. "$(dirname "$0")/../tap.sh"
driver=${SF_BUILD:-$top/build}/tests/unit/test_tracectx
if [ ! -x "$driver" ]; then
    notok "driver $driver not built (make build/tests/unit/test_tracectx)"; tap_plan; exit 0
fi
list=$("$driver" --list-formats)
check_eval "the build lists formats" '[ "$(printf "%s\n" "$list" | wc -l)" -ge 9 ]'
names=$(printf '%s\n' "$list" | cut -f1 | paste -sd, - | sed 's/,/, /g')

# docs/pcap2spans.md: "| `name` | `H1`, `H2` | rank |" rows under "## Trace-context formats"
table=$(awk '/^## Trace-context formats/ { on = 1; next } /^## / { on = 0 }
             on && /^\| `/ { print }' "$top/docs/pcap2spans.md" |
        sed -e 's/`//g' -e 's/^| //' -e 's/ |$//' -e 's/ | /\t/g')
if [ "$table" = "$list" ]; then
    ok "docs/pcap2spans.md format table == the build's list"
else
    notok "docs/pcap2spans.md format table == the build's list"
    diff <(printf '%s\n' "$list") <(printf '%s\n' "$table") | sed 's/^/# /'
fi

# docs/database.md: the contexts row, "`format` (a, b, ...)"
db=$(grep '^| `contexts` |' "$top/docs/database.md" | sed -n 's/.*`format` (\([^:)]*\)[:)].*/\1/p')
check_eval "docs/database.md contexts.format list == the build's ($db)" '[ "$db" = "$names" ]'

# docs/dissector.md: the tracectx.format row lists the names in backticks
ws=$(grep '^| `tracectx.format` |' "$top/docs/dissector.md" | cut -d'|' -f4 | sed 's/ (.*//' |
     grep -o '`[^`]*`' | tr -d '`' | paste -sd, - | sed 's/,/, /g')
check_eval "docs/dissector.md tracectx.format == the build's ($ws)" '[ "$ws" = "$names" ]'
tap_plan

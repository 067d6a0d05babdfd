#!/usr/bin/env bash
# spanfold gate: its own command line (which engine, which options go with which), the
# reports through the front end, and the exit statuses of docs/exit-status.md.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
tap_tmpdir
export LC_ALL=C

printf 'app;main;b 90\napp;main;c 10\n' >"$tmp/base"
printf 'app;main;b 50\napp;main;c 50\n' >"$tmp/new"
"$sf" gate --gate 'c>+5pt' "$tmp/base" "$tmp/new" >"$tmp/out" 2>"$tmp/err"
check "a failed gate over two profiles: exit 1" [ $? -eq 1 ]
check "... nothing on stdout (no diff lines)" [ ! -s "$tmp/out" ]
check "... the reason on stderr" grep -q "gate 'c>+5pt' failed: c: 10.00 % -> 50.00 %" "$tmp/err"
"$sf" gate "$tmp/base" "$tmp/new" --gate 'c>+45pt' 2>/dev/null
check "options after the profiles; a gate that holds: exit 0" [ $? -eq 0 ]
"$sf" gate "$tmp/base" "$tmp/new" 2>"$tmp/err"
check "no gate at all: exit 2 (nothing checked is no pass)" [ $? -eq 2 ] && grep -q "no --gate given" "$tmp/err"
"$sf" gate --gate 'c>+5pt' "$tmp/base" 2>/dev/null
check "one profile only: exit 2" [ $? -eq 2 ]
"$sf" gate --gate 'c>+5pt' --window 1s "$tmp/base" "$tmp/new" 2>"$tmp/err"
check "--window without --db: exit 2" [ $? -eq 2 ] && grep -q "go with --db" "$tmp/err"
"$sf" gate --gate 'p99>+20%' --db "$tmp/x.db" --confidence 0.99 2>"$tmp/err"
check "--confidence with --db: exit 2" [ $? -eq 2 ] && grep -q "apply to two profiles" "$tmp/err"
"$sf" gate --gate 'p99>+20%' --db "$tmp/x.db" "$tmp/base" 2>/dev/null
check "--db with profiles: exit 2" [ $? -eq 2 ]
"$sf" gate --gate 'p99>+20%' --db "$tmp/missing.db" 2>/dev/null
check "an unreadable database: exit 2" [ $? -eq 2 ]
"$sf" gate --bogus 2>/dev/null
check "an unknown option: exit 2" [ $? -eq 2 ]
"$sf" gate --help >"$tmp/help"
check "--help: exit 0 and the synopsis" [ $? -eq 0 ] && grep -q -- '--on-inconclusive' "$tmp/help"
"$sf" gate -h >"$tmp/h"
check "-h is --help" cmp -s "$tmp/h" "$tmp/help"

printf '# job\n' >"$tmp/sum.md"
"$sf" gate --gate 'c>+5pt' --gate 'total>+10%' --summary "$tmp/sum.md" --junit "$tmp/j.xml" \
    "$tmp/base" "$tmp/new" 2>/dev/null
check "--summary through the front end appends" [ "$(head -n 1 "$tmp/sum.md")" = "# job" ] \
    && grep -q '^| `c>+5pt` | \*\*FAIL\*\* |' "$tmp/sum.md"
if command -v xmllint >/dev/null; then
    check "--junit through the front end: two test cases, valid XML" \
        [ "$(xmllint --xpath 'count(//testcase)' "$tmp/j.xml")" = 2 ]
else
    skip "--junit through the front end" "xmllint missing (apt-get install libxml2-utils)"
fi
tap_plan

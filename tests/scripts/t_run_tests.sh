#!/usr/bin/env bash
# tests/run-tests.sh, the runner make check uses, on small TAP programs written here: a
# program passes only when it exits 0, prints no "not ok" and prints exactly one plan
# that counts what it printed.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
tap_tmpdir t_run_tests
run=$top/tests/run-tests.sh

# prog NAME BODY: an executable sh script $tmp/NAME printing BODY (printf format)
prog() {
    printf '#!/bin/sh\nprintf '"'"'%s'"'"'\n' "$2" >"$tmp/$1"
    chmod +x "$tmp/$1"
}
prog good '1..2\nok 1 - a\nok 2 - b # SKIP no b\n'
prog plan_last 'ok 1 - a\n1..1\n'
prog died 'ok 1 - a\nok 2 - b\n'
prog short 'ok 1 - a\nok 2 - b\n1..3\n'
prog long '1..1\nok 1 - a\nok 2 - b\n'
prog twice '1..1\nok 1 - a\n1..1\n'
prog fails '1..1\nnot ok 1 - a\n'

verdict() { "$run" "$tmp/$1" >"$tmp/$1.out" 2>&1; echo $?; }
check_eval "a plan first and a skip: passes, counted as 1 passed, 1 skipped" \
    '[ "$(verdict good)" = 0 ] && grep -q "^1 passed, 0 failed, 1 skipped" "$tmp/good.out"'
check_eval "a plan last: passes" '[ "$(verdict plan_last)" = 0 ]'
for p in died short long twice fails; do
    check_eval "$p: fails the run" '[ "$(verdict '"$p"')" = 1 ] && grep -q "failed" "$tmp/'"$p"'.out"'
done
check_eval "no plan: said so" 'grep -q "printed 0 TAP plans" "$tmp/died.out"'
check_eval "a plan of 3 for 2 results: said so" 'grep -q "planned 3 results and printed 2" "$tmp/short.out"'
check_eval "two plans: said so" 'grep -q "printed 2 TAP plans" "$tmp/twice.out"'
tap_plan

#!/usr/bin/env bash
# Run every test program given (unit binaries, TAP-printing scripts), show their
# output, and sum their TAP results into one closing line:
#   N passed, N failed, N skipped
# A program that exits non-zero without a "not ok" line (a crash, a sanitizer
# report) counts as one failure, and so does one whose TAP plan ("1..N", first or
# last) is missing, given twice or not the number of results it printed: a script
# that dies halfway after 10 of 40 "ok"s has failed.  Exit status 1 when anything
# failed.
set -u
pass=0 fail=0 skip=0 bad=()
for t in "$@"; do
    echo "# --- $t"
    # an entry may be a command line ("valgrind -q X", "tests/run-golden.sh TOOL")
    if [[ "$t" == *" "* ]]; then out=$(bash -c "$t" 2>&1); else out=$("$t" 2>&1); fi
    rc=$?
    printf '%s\n' "$out" | grep -a -v -E '^[0-9]+ passed, [0-9]+ failed' 
    p=$(printf '%s\n' "$out" | grep -a -E '^ok [0-9]+' | grep -a -vc '# SKIP')
    s=$(printf '%s\n' "$out" | grep -a -E '^ok [0-9]+' | grep -a -c '# SKIP')
    f=$(printf '%s\n' "$out" | grep -a -cE '^not ok [0-9]+')
    printed=$((p + s + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $t exited with status $rc"
    fi
    plans=$(printf '%s\n' "$out" | grep -a -E '^1\.\.[0-9]+' | sed -E 's/^1\.\.([0-9]+).*/\1/')
    nplans=$(printf '%s' "$plans" | grep -c '')
    if [ "$nplans" -ne 1 ]; then
        f=$((f + 1))
        echo "not ok - $t printed $nplans TAP plans (1..N), not one"
    elif [ "$plans" -ne "$printed" ]; then
        f=$((f + 1))
        echo "not ok - $t planned $plans results and printed $printed"
    fi
    pass=$((pass + p)); skip=$((skip + s)); fail=$((fail + f))
    [ "$f" -gt 0 ] && bad+=("$t")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "# failing: ${bad[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

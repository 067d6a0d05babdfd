#!/usr/bin/env bash
# Run every test program given (unit binaries, TAP-printing scripts), show their
# output, and sum their TAP results into one closing line:
#   N passed, N failed, N skipped
# A program that exits non-zero without a "not ok" line (a crash, a sanitizer
# report) counts as one failure.  Exit status 1 when anything failed.
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
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $t exited with status $rc"
    fi
    pass=$((pass + p)); skip=$((skip + s)); fail=$((fail + f))
    [ "$f" -gt 0 ] && bad+=("$t")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "# failing: ${bad[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

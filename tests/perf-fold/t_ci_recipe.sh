#!/usr/bin/env bash
# The CI recipe of docs/ci.md, run locally: the base branch's artefact is folded from
# samples/perf/base.perf.txt, then scripts/ci-perf-gate.sh (the script both CI jobs
# call) gates a rerun (passes) and the slow variant (fails), appends the summary to a
# step summary that already holds text, and writes a JUnit file xmllint accepts.
set -u
. "$(dirname "$0")/../tap.sh"
export PATH="${SF_BIN:-$top/bin}:$PATH" LC_ALL=C
gate=$top/scripts/ci-perf-gate.sh
s=$top/samples/perf
tap_tmpdir

check "docs/ci.md's jobs call the script this test runs" \
    [ "$(grep -c 'scripts/ci-perf-gate.sh -o out/perf-gate' "$top/docs/ci.md")" -ge 2 ]

# the base branch's run: its artefact is new.folded
"$gate" -o "$tmp/main" "$s/base.perf.txt" "$s/base.perf.txt" 2>/dev/null
check "the base branch against itself: exit 0" [ $? -eq 0 ]
check "its artefact new.folded holds sample counts" \
    [ "$(awk '{ s += $NF } END { print s }' "$tmp/main/new.folded")" -eq 101 ]

export GITHUB_STEP_SUMMARY=$tmp/step-summary.md
printf '## Build\n\nok\n' >"$GITHUB_STEP_SUMMARY"
"$gate" -o "$tmp/pr1" "$tmp/main/new.folded" "$s/rerun.perf.txt" 2>"$tmp/err"
check "a rerun (noise only) against the artefact: exit 0" [ $? -eq 0 ]
check "the step summary keeps the earlier step's text" [ "$(head -n 1 "$GITHUB_STEP_SUMMARY")" = "## Build" ]
check "... and gains the gate's section" grep -q '^| `frame>+5pt` | pass |' "$GITHUB_STEP_SUMMARY"

"$gate" -o "$tmp/pr2" "$tmp/main/new.folded" "$s/slow.perf.txt" 2>"$tmp/err"
check "the slow variant: exit 1 (a regression)" [ $? -eq 1 ]
check "the CI log names the regression" grep -q "gate 'frame>+5pt' failed: extra_work" "$tmp/err"
check "the comment body names it with its interval" \
    grep -q '^| `frame>+5pt` | \*\*FAIL\*\* | extra\\_work.* at 99 \\% confidence |$' "$tmp/pr2/summary.md"
check "the comment body is this run's section only" [ "$(grep -c '^## perf-fold diff' "$tmp/pr2/summary.md")" -eq 1 ]
check "the step summary now holds both runs" [ "$(grep -c '^## perf-fold diff' "$GITHUB_STEP_SUMMARY")" -eq 2 ]
check "diff.folded for a differential flame graph" grep -q '^live_spans;.*extra_work.constprop.0 0 [0-9]*$' "$tmp/pr2/diff.folded"
if command -v xmllint >/dev/null; then
    check "gate.xml is well-formed XML" xmllint --noout "$tmp/pr2/gate.xml"
    check "gate.xml: one test case, one failure" \
        [ "$(xmllint --xpath 'concat(count(//testcase), "/", count(//testcase/failure))' "$tmp/pr2/gate.xml")" = 1/1 ]
    check "gate.xml of the rerun: no failure" \
        [ "$(xmllint --xpath 'count(//failure)' "$tmp/pr1/gate.xml")" = 0 ]
else
    skip "gate.xml checked with xmllint" "xmllint missing (apt-get install libxml2-utils)"
fi

unset GITHUB_STEP_SUMMARY
"$gate" -o "$tmp/pr3" "$tmp/none/new.folded" "$s/slow.perf.txt" 2>"$tmp/err"
check "no base artefact: exit 2, never a pass" [ $? -eq 2 ] && grep -q "no base profile" "$tmp/err"
: >"$tmp/empty.perf.txt"
"$gate" -o "$tmp/pr4" "$tmp/main/new.folded" "$tmp/empty.perf.txt" 2>"$tmp/err"
check "an empty profile (a broken perf record step): exit 2" [ $? -eq 2 ] && grep -q "empty profile" "$tmp/err"
tap_plan

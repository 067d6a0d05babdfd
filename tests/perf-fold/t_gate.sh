#!/usr/bin/env bash
# perf-fold diff as a CI gate: no silent pass (a typo, an empty or unreadable profile),
# confidence intervals from the sample counts, --on-inconclusive, the appended
# Markdown summary, the JUnit report (checked with xmllint), hostile frame names.
set -u
. "$(dirname "$0")/../tap.sh"
pf=${SF_BIN:-$top/bin}/perf-fold
tap_tmpdir
export LC_ALL=C

printf 'app;main;b 90\napp;main;c 10\n' >"$tmp/base"
printf 'app;main;b 50\napp;main;c 50\n' >"$tmp/new"

"$pf" diff -q --fail-if 'nosuchframe>+5pt' "$tmp/base" "$tmp/new" >/dev/null 2>"$tmp/err"
check "a gate on a frame that matches nothing: exit 2" [ $? -eq 2 ]
check "... and it says so" grep -q "gate 'nosuchframe>+5pt' cannot be evaluated: no frame named 'nosuchframe' in either profile" "$tmp/err"
"$pf" diff -q --allow-missing --fail-if 'nosuchframe>+5pt' "$tmp/base" "$tmp/new" >/dev/null 2>&1
check "--allow-missing lets it pass (exit 0)" [ $? -eq 0 ]
"$pf" diff -q --fail-if 'frame>+5pt' "$tmp/base" /dev/null >/dev/null 2>"$tmp/err"
check "an empty new profile (/dev/null): exit 2" [ $? -eq 2 ]
check "... named as empty" grep -q "perf-fold diff: /dev/null: empty profile: no samples" "$tmp/err"
printf 'garbage\n' >"$tmp/junk"
"$pf" diff -q --fail-if 'frame>+5pt' "$tmp/junk" "$tmp/new" >/dev/null 2>"$tmp/err"
check "a profile of bad lines only: exit 2" [ $? -eq 2 ] && grep -q "empty profile: no samples (every line was bad)" "$tmp/err"
"$pf" diff -q --fail-if 'frame>+5pt' "$tmp/base" "$tmp/nonexistent" >/dev/null 2>"$tmp/err"
check "an unreadable profile: exit 2" [ $? -eq 2 ] && grep -q "nonexistent: cannot open" "$tmp/err"
"$pf" diff -q --fail-if 'frame>+5xx' "$tmp/base" "$tmp/new" >/dev/null 2>"$tmp/err"
check "a bad unit: exit 2 with the column" [ $? -eq 2 ] && grep -q "gate 'frame>+5xx': column 9: unknown unit 'xx'" "$tmp/err"
"$pf" diff -q --fail-if 'total>+5pt' "$tmp/base" "$tmp/new" >/dev/null 2>"$tmp/err"
check "pt on the total (not a share): exit 2" [ $? -eq 2 ] && grep -q "column 9: 'total' takes samples" "$tmp/err"

printf 'app;main;b 90\napp;old 10\n' >"$tmp/gone"
"$pf" diff -q --no-diff --fail-if 'frame<-5pt' "$tmp/gone" "$tmp/new" 2>"$tmp/err"
check "frame<-5pt: a frame only in BASE that vanished (10 % -> 0) fails" [ $? -eq 1 ] && grep -q "failed: old: 10.00 % -> 0.00 %" "$tmp/err"

# a 2-point change: 30 % -> 32 % of 300 samples, and of 300,000
awk 'BEGIN { print "a;x 90"; print "a;y 210" }' >"$tmp/s0"
awk 'BEGIN { print "a;x 96"; print "a;y 204" }' >"$tmp/s1"
awk 'BEGIN { print "a;x 90000"; print "a;y 210000" }' >"$tmp/b0"
awk 'BEGIN { print "a;x 96000"; print "a;y 204000" }' >"$tmp/b1"
"$pf" diff -q --no-diff --confidence 0.99 --fail-if 'x>+1pt' "$tmp/s0" "$tmp/s1" 2>"$tmp/err"
check "+2 pt on 300 samples at 0.99: not significant, exit 0" [ $? -eq 0 ]
check "... said to be inconclusive, with the confidence" grep -q "gate 'x>+1pt' inconclusive, counted as passed: x: 30.00 % -> 32.00 % of samples, +2 pt \[.*\] at 99 % confidence" "$tmp/err"
"$pf" diff -q --no-diff --confidence 0.99 --on-inconclusive fail --fail-if 'x>+1pt' "$tmp/s0" "$tmp/s1" 2>/dev/null
check "--on-inconclusive fail: exit 1" [ $? -eq 1 ]
"$pf" diff -q --no-diff --confidence 0.99 --fail-if 'x>+1pt' "$tmp/b0" "$tmp/b1" 2>/dev/null
check "+2 pt on 300,000 samples at 0.99: significant, exit 1" [ $? -eq 1 ]
printf 'a;x 3\na;y 2\n' >"$tmp/t0"
"$pf" diff -q --no-diff --confidence 0.99 --fail-if 'x>+1pt' "$tmp/t0" "$tmp/s1" 2>"$tmp/err"
check "too few samples for the interval: exit 2, the minimum stated" [ $? -eq 2 ] && grep -q "needs at least 10 samples in each profile (base has 5, new 300)" "$tmp/err"
"$pf" diff -q --confidence 1.5 "$tmp/s0" "$tmp/s1" >/dev/null 2>&1
check "--confidence outside (0, 1): exit 2" [ $? -eq 2 ]

# the summary appends; its Samples line counts samples
printf '# earlier step\n' >"$tmp/sum.md"
"$pf" diff --no-diff --summary "$tmp/sum.md" --fail-if 'frame>+5pt' "$tmp/s0" "$tmp/s1" 2>/dev/null
"$pf" diff --no-diff --summary "$tmp/sum.md" --fail-if 'frame>+5pt' "$tmp/base" "$tmp/new" 2>/dev/null
check "--summary appends: the earlier text stays" [ "$(head -n 1 "$tmp/sum.md")" = "# earlier step" ]
check "--summary appends: two sections" [ "$(grep -c '^## perf-fold diff' "$tmp/sum.md")" -eq 2 ]
check "Samples: counts of samples" grep -q '^Samples: base 300, new 300 (+0.0 %).$' "$tmp/sum.md"
"$pf" --samples "$top/samples/perf/base.perf.txt" >"$tmp/p0" && "$pf" "$top/samples/perf/base.perf.txt" >"$tmp/w0"
check "perf-fold --samples counts one per sample, not the period" \
    [ "$(awk '{s+=$NF} END {print s}' "$tmp/p0")" -lt "$(awk '{s+=$NF} END {print s}' "$tmp/w0")" ] \
    && [ "$(awk '{s+=$NF} END {print s}' "$tmp/p0")" -eq "$(grep -c -E '^\S.* [0-9]+ +cpu-clock|^live_spans ' "$top/samples/perf/base.perf.txt")" ]

"$pf" "$top/samples/perf/base.perf.txt" >"$tmp/w1"
"$pf" diff -q --no-diff --fail-if 'frame>+90pt' "$tmp/w0" "$tmp/w1" 2>"$tmp/err"
check "period-weighted profiles: the gate still runs (exit 0)" [ $? -eq 0 ]
check "... with a note that the intervals assume samples" grep -q "look like summed periods, not samples.*perf-fold --samples" "$tmp/err"
"$pf" diff -q --no-diff --fail-if 'frame>+90pt' "$tmp/p0" "$tmp/p0" 2>"$tmp/err"
check "no such note on sample counts" [ ! -s "$tmp/err" ]

# JUnit: one test case per gate, valid XML even for hostile names
printf 'app;<x&y>\xff`|*\033[2J 50\napp;b 50\n' >"$tmp/h0"
printf 'app;<x&y>\xff`|*\033[2J 90\napp;b 10\n' >"$tmp/h1"
"$pf" diff --no-diff --summary "$tmp/h.md" --junit "$tmp/j.xml" --fail-if 'frame>+5pt' \
    --fail-if 'b>+5pt' --fail-if 'total>+50%' "$tmp/h0" "$tmp/h1" 2>"$tmp/err"
check "hostile frame name: the gate fails (exit 1)" [ $? -eq 1 ]
check "the CI log line carries no escape byte" [ "$(grep -c $'\033' "$tmp/err")" -eq 0 ]
if command -v xmllint >/dev/null; then
    check "JUnit file is well-formed XML" xmllint --noout "$tmp/j.xml"
    check "JUnit: three test cases" [ "$(xmllint --xpath 'count(//testcase)' "$tmp/j.xml")" = 3 ]
    check "JUnit: one failure" [ "$(xmllint --xpath 'count(//testcase/failure)' "$tmp/j.xml")" = 1 ]
    xmllint --xpath 'string(//testcase[@name="frame>+5pt"]/failure)' "$tmp/j.xml" >"$tmp/fail.txt"
    check "JUnit: the failure names the frame (invalid bytes as U+FFFD, ESC as ␛)" \
        grep -qF "<x&y>"$'\xef\xbf\xbd''`|*'$'\xe2\x90\x9b''[2J: 50.00 %' "$tmp/fail.txt"
else
    skip "JUnit checked with xmllint" "xmllint missing (apt-get install libxml2-utils)"
fi
check "Markdown: the hostile name is one code span, '|' escaped, ESC as a control picture" \
    grep -qF '| ``<x&y>'$'\xef\xbf\xbd''`\|*'$'\xe2\x90\x9b''[2J`` | 50.00 | 90.00 | +40.00 |' "$tmp/h.md"
check "Markdown: no raw '<' outside code spans in the gate row" \
    grep -q '^| `frame>+5pt` | \*\*FAIL\*\* | \\<x\\&y\\>' "$tmp/h.md"
tap_plan

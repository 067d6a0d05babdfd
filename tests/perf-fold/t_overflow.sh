#!/usr/bin/env bash
# Counts that do not fit: a folded count above 2^63-1 is a bad line (said, counted,
# exit 1) and a sum of counts that would pass it is an error (exit 2), in every tool
# that adds counts — never a share computed from a clipped total, never a pass.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir t_overflow
big=18446744073709551615 # 2^64-1
printf 'main;a 10\nmain;b 10\n' >"$tmp/base.f"
printf 'main;a %s\nmain;b 5\n' "$big" >"$tmp/new.f"
printf 'main;a 9223372036854775000\nmain;b 9000\n' >"$tmp/sum.f"

# perf-fold diff and spanfold gate (the same engine): the issue's own case
for g in 'a>+5pt' 'b>+5pt' 'a<-5pt'; do
    "$bin/perf-fold" diff -q --no-diff --fail-if "$g" "$tmp/base.f" "$tmp/new.f" 2>"$tmp/e"; rc=$?
    check_eval "perf-fold diff --fail-if '$g' with a 2^64-1 count: not a pass (rc $rc)" '[ $rc -ne 0 ]'
done
check_eval "the count is named as a bad line with file and line" \
    'grep -q "new.f:1: count $big is more than 9223372036854775807" "$tmp/e"'
"$bin/spanfold" gate --gate 'a>+5pt' "$tmp/base.f" "$tmp/new.f" 2>/dev/null; rc=$?
check_eval "spanfold gate on the same: exit 1, a skipped line (rc $rc)" '[ $rc -eq 1 ]'
"$bin/perf-fold" diff -q --no-diff --fail-if 'a>+5pt' "$tmp/base.f" "$tmp/sum.f" 2>"$tmp/e"; rc=$?
check_eval "perf-fold diff: counts that sum past 2^63-1 are an error (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "sum.f:2: the counts sum past" "$tmp/e"'
"$bin/spanfold" gate --gate 'total>+10%' "$tmp/base.f" "$tmp/sum.f" 2>/dev/null; rc=$?
check_eval "spanfold gate: the same sum is an error (rc $rc)" '[ $rc -eq 2 ]'

# flamegraph
"$bin/flamegraph" "$tmp/new.f" >"$tmp/o.svg" 2>"$tmp/e"; rc=$?
check_eval "flamegraph: a 2^64-1 count is a bad line, exit 1 (rc $rc)" \
    '[ $rc -eq 1 ] && grep -q "new.f:1:8: count is more than" "$tmp/e" && grep -q "main;b\|>b<\|b (5 samples" "$tmp/o.svg"'
"$bin/flamegraph" "$tmp/sum.f" >/dev/null 2>"$tmp/e"; rc=$?
check_eval "flamegraph: counts that sum past 2^63-1 are an error (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "sum.f:2:8: the counts sum past" "$tmp/e"'
printf 'main;b 1 2\nmain;a 1 %s\n' "$big" | "$bin/flamegraph" >/dev/null 2>"$tmp/e"; rc=$?
check_eval "flamegraph: a differential count too is checked (rc $rc)" '[ $rc -eq 1 ]'
"$bin/flamegraph" --format json "$tmp/sum.f" >/dev/null 2>&1; rc=$?
check_eval "flamegraph --format json: the same error (rc $rc)" '[ $rc -eq 2 ]'

# perf-fold folding perf script: periods that sum past 2^63-1, and one above it
sample() { printf 'svc 7/7 [000] 1.%06d: %s cpu-clock:\n\t  1 work (/bin/svc)\n\t  2 main (/bin/svc)\n\n' "$1" "$2"; }
{ sample 1 9223372036854775000; sample 2 9000; } >"$tmp/sum.perf"
"$bin/perf-fold" "$tmp/sum.perf" >"$tmp/o" 2>"$tmp/e"; rc=$?
check_eval "perf-fold: periods of one stack that sum past 2^63-1 are an error (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "sum past" "$tmp/e"'
sample 1 "$big" >"$tmp/big.perf"
"$bin/perf-fold" "$tmp/big.perf" >"$tmp/o" 2>"$tmp/e"; rc=$?
check_eval "perf-fold: a period above 2^63-1 is an error, not clipped (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "period is more than" "$tmp/e"'
"$bin/perf-fold" --samples "$tmp/sum.perf" >"$tmp/o" 2>"$tmp/e"; rc=$?
check_eval "perf-fold --samples counts the same recording as 2 samples (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(cat "$tmp/o")" = "svc;main;work 2" ]'

# the database: sums of stored periods
if command -v sqlite3 >/dev/null; then
    { sample 1 9000; sample 2 9000; } >"$tmp/two.perf"
    "$bin/perf-fold" --quiet --db "$tmp/p.db" "$tmp/two.perf" >/dev/null 2>&1
    sqlite3 "$tmp/p.db" "UPDATE samples SET period = 9223372036854775000 WHERE rowid = (SELECT min(rowid) FROM samples)"
    "$bin/perf-fold" --db "$tmp/p.db" --group-by span >"$tmp/o" 2>"$tmp/e"; rc=$?
    check_eval "perf-fold --group-by: stored periods that sum past 2^63-1 are an error (rc $rc)" \
        '[ $rc -eq 2 ] && [ ! -s "$tmp/o" ] && grep -q "integer overflow" "$tmp/e"'
else
    skip "perf-fold --group-by: stored periods that sum past 2^63-1" "sqlite3 shell not installed"
fi
tap_plan

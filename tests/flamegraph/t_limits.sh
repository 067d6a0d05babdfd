#!/usr/bin/env bash
# flamegraph on one very deep stack: --max-depth (1024 by default) draws the frames
# past it as one '[… K frames]' frame and says so; --max-size refuses an output
# estimated too large before writing a byte.  Under the limits nothing changes.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir t_limits
deep() { awk -v n="$1" -v c="$2" 'BEGIN { s = "main"; for (i = 1; i < n; i++) s = s ";f" i % 7; print s, c }'; }

deep 5000 10 >"$tmp/deep.f"
printf 'main;short 5\n' >>"$tmp/deep.f"
"$bin/flamegraph" "$tmp/deep.f" >"$tmp/d.svg" 2>"$tmp/d.err"; rc=$?
check_eval "a 5,000-frame stack: exit 0 (rc $rc)" '[ $rc -eq 0 ]'
check_eval "the frames from 1024 on are one '[… 3977 frames]' frame" \
    'grep -q "<title>\[… 3977 frames\] (10 samples" "$tmp/d.svg"'
check_eval "the graph is 1,024 frames tall, not 5,000 (every frame has a <title>)" \
    '[ "$(grep -c "<title>" "$tmp/d.svg")" -eq 1026 ]'
check_eval "stderr says how many stacks were cut, and where" \
    'grep -q "1 stack deeper than --max-depth 1024: from frame 1024 on" "$tmp/d.err"'
"$bin/flamegraph" --max-depth 100 --format json "$tmp/deep.f" >"$tmp/d.json" 2>/dev/null
check_eval "--max-depth 100 --format json: the cut frame in the JSON too" \
    'grep -q "\[… 4901 frames\]" "$tmp/d.json" && python3 -m json.tool "$tmp/d.json" >/dev/null'
"$bin/flamegraph" --max-depth 0 "$tmp/deep.f" >"$tmp/d0.svg" 2>"$tmp/d0.err"
check_eval "--max-depth 0: no limit, all 5,000 frames drawn" \
    '[ "$(grep -c "<title>" "$tmp/d0.svg")" -eq 5002 ] && ! grep -q "frames\]" "$tmp/d0.svg"'
deep 1024 10 >"$tmp/edge.f"
"$bin/flamegraph" "$tmp/edge.f" >"$tmp/e1.svg" 2>"$tmp/e1.err"
"$bin/flamegraph" --max-depth 0 "$tmp/edge.f" >"$tmp/e0.svg" 2>/dev/null
check_eval "a stack of exactly 1,024 frames is drawn as without a limit, byte for byte" \
    'cmp -s "$tmp/e1.svg" "$tmp/e0.svg" && [ ! -s "$tmp/e1.err" ]'
"$bin/flamegraph" --max-depth 1 "$tmp/deep.f" >/dev/null 2>&1; rc=$?
check_eval "--max-depth 1 is a usage error (rc $rc)" '[ $rc -eq 2 ]'

# --max-size: estimated before writing
"$bin/flamegraph" --max-depth 0 --max-size 100000 "$tmp/deep.f" >"$tmp/s.svg" 2>"$tmp/s.err"; rc=$?
check_eval "--max-size 100000 on a 5,000-frame graph: exit 2, nothing written (rc $rc)" \
    '[ $rc -eq 2 ] && [ ! -s "$tmp/s.svg" ] && grep -q "over --max-size" "$tmp/s.err"'
"$bin/flamegraph" --max-depth 0 --max-size 0 "$tmp/deep.f" >/dev/null 2>&1; rc=$?
check_eval "--max-size 0: no limit (rc $rc)" '[ $rc -eq 0 ]'
"$bin/flamegraph" --max-depth 0 "$tmp/deep.f" >"$tmp/s2.svg" 2>/dev/null
est_ok=$(( $(wc -c <"$tmp/s2.svg") <= 5003 * 260 + 3 * 5000 * 2 + 65536 ))
check_eval "the estimate is an upper bound of the real size ($(wc -c <"$tmp/s2.svg") bytes)" '[ $est_ok -eq 1 ]'
tap_plan

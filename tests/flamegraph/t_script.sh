#!/usr/bin/env bash
# The flame graph's script is flamegraph/flamegraph.js, embedded at build time: the
# <script> of an SVG is the file byte for byte (after the FG settings line the renderer
# writes), it never closes the CDATA section, and node parses it as JavaScript.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
js=$top/flamegraph/flamegraph.js
printf 'main;work;leaf 3\nmain;idle 1\n' | "$bin/flamegraph" >"$tmp/fg.svg"; rc=$?
check_eval "flamegraph renders an SVG (exit $rc)" '[ "$rc" = 0 ] && grep -q "<script" "$tmp/fg.svg"'
# the script: from the line after "var FG = {...};" up to the CDATA end
awk '/^<script/ { on = 1; next } on && /^\]\]>$/ { exit } on == 2 { print } on == 1 && /^var FG = / { on = 2 }' \
    "$tmp/fg.svg" >"$tmp/script.js"
check "the SVG's script is flamegraph/flamegraph.js byte for byte" cmp -s "$js" "$tmp/script.js"
check_eval "flamegraph.js never ends the CDATA section" '! grep -q "]]>" "$js"'
if command -v node >/dev/null; then
    check "node parses flamegraph.js (node --check)" node --check "$js"
else
    skip "node parses flamegraph.js" "node not installed"
fi
tap_plan

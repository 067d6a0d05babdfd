#!/usr/bin/env bash
# spanfold stacks -o draws with flamegraph's code, so its depth limit (1024 frames)
# holds on the database side too: a 3,000-frame stack put into the demo database is
# drawn 1,024 frames tall with one '[… 1977 frames]' frame, and stderr says so (the
# flamegraph code runs --quiet inside spanfold stacks); the folded lines keep every frame.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="spanfold stacks on a very deep stack"
[ -x "$bin/spanfold" ] || tap_skip_all "spanfold not built"
command -v sqlite3 >/dev/null || tap_skip_all "needs the sqlite3 shell (Debian sqlite3)"
[ -f "$top/samples/demo/demo.pcap" ] || tap_skip_all "samples/demo not recorded"
tap_tmpdir sf_deep
export LC_ALL=C
db=$tmp/demo.db
"$bin/spanfold" ingest --quiet --db "$db" "$top/samples/demo" >/dev/null 2>&1
check "spanfold ingest builds the demo database" [ -s "$db" ]
# the stack of most samples becomes main;f1;f2;...: 3,000 frames
sqlite3 "$db" "WITH RECURSIVE r(i, s) AS (SELECT 1, 'main' UNION ALL
                 SELECT i + 1, s || ';f' || (i % 7) FROM r WHERE i < 3000)
               UPDATE stacks SET frames = (SELECT s FROM r WHERE i = 3000)
               WHERE id = (SELECT stack_id FROM samples GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)"
"$bin/spanfold" stacks --db "$db" -o "$tmp/a.svg" 2>"$tmp/e"
r=$?
sed 's/^/# /' "$tmp/e"
check "spanfold stacks -o exits 0 (exit $r)" [ $r -eq 0 ]
check "the frames from 1024 on are one '[… 1977 frames]' frame" \
    grep -q '<title>\[… 1977 frames\] (' "$tmp/a.svg"
check "no frame of the deep stack is drawn past depth 1024" \
    [ "$(grep -c '<title>f[0-9] (' "$tmp/a.svg")" -le 1030 ]
check "stderr says one stack was cut, and where" \
    grep -q "^spanfold stacks: 1 stack deeper than 1024 frames: from frame 1024 on" "$tmp/e"
"$bin/spanfold" stacks --db "$db" >"$tmp/f" 2>/dev/null
check_eval "the folded lines keep all 3,000 frames, and say nothing of a cut" \
    '[ "$(awk -F";" "{ if (NF > m) m = NF } END { print m }" "$tmp/f")" -ge 3000 ] && ! grep -q "frames\]" "$tmp/f"'
tap_plan

#!/usr/bin/env bash
# pcap2spans' layers include only what is below them (docs/architecture.md): the include
# graph between its modules has no cycle, no layer includes p2s.h (the whole tool, for
# the driver: main.c, par.c, and the tests), and the parsers see a connection through conn.h, never tcp.h.
# The checker itself must catch a cycle, so it also runs on a folder that has one.
set -u
. "$(dirname "$0")/../tap.sh"
tap_tmpdir
graph=$top/scripts/include-graph.sh
d=$top/pcap2spans

check "pcap2spans: no include cycle" "$graph" "$d"
users=$(grep -l '#include "p2s.h"' "$d"/*.c "$d"/*.h | xargs -n1 basename | sort | tr '\n' ' ')
check_eval "only the driver includes p2s.h (got: $users)" '[ "$users" = "main.c p2s.c par.c " ]'
parsers_tcp=$(grep -l '#include "tcp.h"' "$d"/h1.c "$d"/h2*.c "$d"/tls*.c "$d"/hpack.c "$d"/grpc.c)
check_eval "parsers do not include tcp.h" '[ -z "$parsers_tcp" ]'
writers_up=$(grep -lE '#include "(ctx|conn|tcp)\.h"' "$d"/out*.c "$d"/out.h)
check_eval "writers include nothing above them" '[ -z "$writers_up" ]'

mkdir "$tmp/cyc"
printf '#include "b.h"\n' >"$tmp/cyc/a.c"
printf '#include "c.h"\n' >"$tmp/cyc/b.h"
printf '#include "a.h"\n' >"$tmp/cyc/c.c"
: >"$tmp/cyc/a.h"
: >"$tmp/cyc/c.h"
"$graph" "$tmp/cyc" 2>"$tmp/err"
rc=$?
check_eval "a -> b -> c -> a is found (exit $rc)" '[ "$rc" -eq 1 ]'
check_eval "the cycle's modules are named" 'grep -q "^a$" "$tmp/err" && grep -q "^b$" "$tmp/err"'
rm "$tmp/cyc/c.c"
check "without c.c's include the graph is acyclic" "$graph" "$tmp/cyc"
tap_plan

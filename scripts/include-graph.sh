#!/usr/bin/env bash
# The include graph of one tool folder, between its modules (foo.c and foo.h are module
# foo; headers from lib/ and the system are left out), and whether it has a cycle.
#   scripts/include-graph.sh DIR          exit 0 acyclic, 1 a cycle (printed), 2 usage
#   scripts/include-graph.sh --edges DIR  print "from to" edges as well
# A layer that includes only what is below it gives an acyclic graph (docs/architecture.md).
set -u
edges=0
[ "${1:-}" = --edges ] && { edges=1; shift; }
dir=${1:-}
[ -d "$dir" ] || { echo "usage: include-graph.sh [--edges] DIR" >&2; exit 2; }
pairs=$(for f in "$dir"/*.c "$dir"/*.h; do
    [ -f "$f" ] || continue
    from=$(basename "$f"); from=${from%.*}
    echo "$from $from" # every module is a node, also one without edges
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)\.h".*/\1/p' "$f" |
        while read -r to; do
            [ -f "$dir/$to.h" ] && [ "$to" != "$from" ] && echo "$from $to"
        done
done | sort -u)
[ "$edges" = 1 ] && echo "$pairs" | awk '$1 != $2'
if ! out=$(echo "$pairs" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
    echo "include-graph: $dir: cycle between modules:" >&2
    echo "$out" | sed -n 's/^tsort: //p' >&2
    exit 1
fi
exit 0

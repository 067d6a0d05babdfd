#!/usr/bin/env bash
# Regenerate ref/*.frames from flamegraph.pl (FLAMEGRAPH_DIR, a FlameGraph checkout at
# 41fee1f; never part of this repository).  Only the frame facts are kept: title, x, y,
# width, height, fill.  Usage: FLAMEGRAPH_DIR=DIR tests/flamegraph/mkref.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cases.sh"
fg=${FLAMEGRAPH_DIR:?set FLAMEGRAPH_DIR to a FlameGraph checkout}/flamegraph.pl
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
TOOL=(env PERL_HASH_SEED=0 perl "$fg")
grep -v '^#' "$here/cases.txt" | while IFS='|' read -r name input ref args; do
    case $ref in frames | frames+* | nofill) ;; *) continue ;; esac
    case_run || true
    python3 "$here/fgcompare.py" --dump "$tmp/out.svg" >"$here/ref/$name.frames"
    [ -f "$tmp/run/palette.map" ] && case " $args " in *" --cp "*)
        cp "$tmp/run/palette.map" "$here/ref/$name.palette.map" ;; esac
    echo "ref/$name.frames"
done

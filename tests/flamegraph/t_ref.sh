#!/usr/bin/env bash
# Structure checks against flamegraph.pl: every case of cases.txt rendered by our
# flamegraph and compared, as a set of frames (title, x, y, width, height, fill), with the
# corpus' reference SVG or with ref/NAME.frames (flamegraph.pl's frames, see mkref.sh).
# Our SVG must also parse as XML.  Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tap.sh"
. "$here/cases.sh"
fgbin=${SF_BIN:-$top/bin}/flamegraph
tap_tmpdir
TOOL=("$fgbin")
while IFS='|' read -r name input ref args; do
    case $name in '#'* | '') continue ;; esac
    n=$((n + 1))
    if [ ! -d "$CORPUS" ]; then
        echo "not ok $n - $name: corpus not found at $CORPUS"
        continue
    fi
    flags=(--valid)
    case $ref in
    corpus:*) want=$CORPUS/flamegraph-ref/${ref#corpus:} ;;
    nofill) want=$here/ref/$name.frames; flags+=(--no-fill) ;;
    frames+*) want=$here/ref/$name.frames; flags+=(--allow-extra "${ref#frames+}") ;;
    *) want=$here/ref/$name.frames ;;
    esac
    if ! case_run; then
        echo "not ok $n - $name: flamegraph failed"; sed 's/^/#   /' "$tmp/err.txt"; continue
    fi
    if out=$(python3 "$here/fgcompare.py" "${flags[@]}" "$want" "$tmp/out.svg"); then
        pal=ok
        if [ -f "$here/ref/$name.palette.map" ] &&
            ! cmp -s "$here/ref/$name.palette.map" "$tmp/run/palette.map"; then
            pal="palette.map differs from flamegraph.pl's"
        fi
        if [ "$pal" = ok ]; then
            echo "ok $n - $name [${args:-defaults}] ${out#\# }"
        else
            echo "not ok $n - $name: $pal"
        fi
    else
        echo "not ok $n - $name [${args:-defaults}]"
        printf '%s\n' "$out"
    fi
done <"$here/cases.txt"
echo "1..$n"

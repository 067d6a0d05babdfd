#!/usr/bin/env bash
# Golden tests: each directory tests/golden/<tool>/<case>/ holds
#   cmd   the command line, run by bash in the case directory with bin/ first on PATH
#   in    (optional) standard input
#   out   expected standard output      err  expected standard error (optional)
#   rc    expected exit status (optional, default 0)
# Prints TAP.  With UPDATE=1 the expected files are rewritten from what the
# command produced (review the diff before committing).
# Usage: tests/run-golden.sh [TOOL...]   (default: every tool folder)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# SF_BIN: the binaries under test (make SAN=1 points it at build/san/bin)
export PATH="${SF_BIN:-$top/bin}:$PATH" SF_TOP="$top" LC_ALL=C
cd "$top/tests/golden" || exit 1
tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(*/)
n=0 fails=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for tool in "${tools[@]}"; do
    tool=${tool%/}
    [ -d "$tool" ] || continue
    for case in "$tool"/*/; do
        case=${case%/}
        [ -f "$case/cmd" ] || continue
        n=$((n + 1))
        input=/dev/null; [ -f "$case/in" ] && input="$case/in"
        (cd "$case" && bash ./cmd) <"$input" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        want_rc=0; [ -f "$case/rc" ] && want_rc=$(cat "$case/rc")
        if [ "${UPDATE:-0}" = 1 ]; then
            cp "$tmp/out" "$case/out"
            if [ -s "$tmp/err" ] || [ -f "$case/err" ]; then cp "$tmp/err" "$case/err"; fi
            if [ "$rc" -ne 0 ]; then echo "$rc" >"$case/rc"; else rm -f "$case/rc"; fi
            echo "ok $n - $case (updated)"
            continue
        fi
        why=""
        [ "$rc" = "$want_rc" ] || why="exit status $rc, want $want_rc"
        cmp -s "$tmp/out" "$case/out" || why="${why:+$why; }stdout differs"
        if [ -f "$case/err" ]; then cmp -s "$tmp/err" "$case/err" || why="${why:+$why; }stderr differs"; fi
        if [ -z "$why" ]; then
            echo "ok $n - golden $case"
        else
            fails=$((fails + 1))
            echo "not ok $n - golden $case: $why"
            diff -u "$case/out" "$tmp/out" | head -n 20 | sed 's/^/#   /'
            [ -f "$case/err" ] && diff -u "$case/err" "$tmp/err" | head -n 10 | sed 's/^/#   /'
        fi
    done
done
echo "1..$n"
[ "$fails" -eq 0 ]

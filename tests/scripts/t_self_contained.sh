#!/usr/bin/env bash
# A fresh clone must stand alone: no test, script or build file may read a path outside
# the repository (a user's clone has no shared folder, no /work, no peer checkouts beside it).
# Peer tools for comparisons come only through environment variables (FLAMEGRAPH_DIR, ...),
# and tests that need them skip with that reason.
set -u
. "$(dirname "$0")/../tap.sh"
cd "$top" || exit 2

files=$(git ls-files -- tests scripts Makefile '*/build.mk' .ci 2>/dev/null |
        grep -v -e '^tests/data/' -e '^tests/fuzz/corpus/' -e 'node_modules/' -e '^tests/scripts/t_self_contained.sh$')
if [ -z "$files" ]; then
    notok "tracked files to scan (not a git checkout?)"; tap_plan; exit 0
fi
# What reaches outside: the development machines' shared folder, an absolute /work path,
# a path that climbs above the repository root, and the old corpus override.
patterns=('\.\./shared' '/work/(shared|peers|main|wt|\.library|\.mirror)' '\$top/\.\.' '\$SF_TOP/\.\.' '\bSF_''CORPUS\b') # (split, so that this file does not name it)
for p in "${patterns[@]}"; do
    hits=$(printf '%s\n' "$files" | xargs grep -n -E -e "$p" 2>/dev/null | head -5)
    if [ -z "$hits" ]; then
        ok "no file refers to '$p'"
    else
        notok "no file refers to '$p'"
        printf '%s\n' "$hits" | sed 's/^/#   /'
    fi
done
# Every test data folder names its source and carries a licence.
for d in tests/data/corpus/*/ $(ls -d tests/data/*/ | grep -v '^tests/data/corpus/$'); do
    [ -d "$d" ] || continue
    name=${d#tests/data/}; name=${name%/}
    lic=$(find "$d" "$(dirname "$d")" -maxdepth 1 -iname '*licen[cs]e*' | head -1)
    [ -z "$lic" ] && grep -qi 'licen[cs]e' "$d/README.md" 2>/dev/null && lic="$d/README.md"
    if grep -q "\`$name/" tests/data/README.md && [ -n "$lic" ]; then
        ok "$name: source named in tests/data/README.md, licence $lic"
    else
        notok "$name: source named in tests/data/README.md and a licence beside it"
    fi
done
tap_plan

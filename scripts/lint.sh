#!/usr/bin/env bash
# Lint: curl's banned-function list, then cppcheck over lib/ and the tools.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
rc=0
files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
banned='\b(gets|strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atof|sscanf)\s*\('
if grep -nE "$banned" $files; then
    echo "lint: banned functions used (see above); use snprintf, memcpy, strtol, sf_opt_*"
    rc=1
fi
if command -v cppcheck >/dev/null; then
    cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
        --enable=warning,portability --suppress=missingIncludeSystem \
        -Ilib $files || rc=1
fi
exit $rc

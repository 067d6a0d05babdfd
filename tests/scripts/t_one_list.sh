#!/usr/bin/env bash
# Facts kept in one place (issue 38): the capture magic numbers live in
# lib/sf_capmagic.h and nowhere else in the C sources; pcap2spans has no switch on link
# types outside link.c's table; lib/sf_map is the only hash table (no bucket arrays of
# chained entries elsewhere); JSON punctuation is written by lib/sf_json only and the
# speedscope format by lib/sf_speedscope only; includes go down the floors.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
cd "$top" || exit 2
# every C source outside tests/ and the build output (find, not git: a tarball works too)
src=$(find . \( -path ./tests -o -path ./build -o -path ./bin -o -path ./.git \) -prune -o \
    \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | grep -v '^lib/sf_capmagic.h$' | sort)
check_eval "the sources are there ($(echo "$src" | wc -l) files)" \
    '[ "$(echo "$src" | grep -c "^lib/sf_map.c$\|^pcap2spans/link.c$")" = 2 ]'
# the magic numbers (in code, not comments) as integers, byte arrays or string escapes, either byte order
pat='0x(a1b2c3d4|d4c3b2a1|a1b23c4d|4d3cb2a1|0a0d0d0a|1a2b3c4d|4d3c2b1a)|\{ *0x(0a|a1|d4|4d), *0x(0d|b2|c3|3c), *0x(0d|c3|b2|2b)|\\x0a\\x0d\\x0d\\x0a|\\x1a\\x2b\\x3c\\x4d|\\x4d\\x3c\\x2b\\x1a'
hits=$(grep -nEi "$pat" $src | grep -vE '^[^:]+:[0-9]+: *(/?\*|//)') # comments may name them
check_eval "capture magic numbers only in lib/sf_capmagic.h${hits:+: $hits}" '[ -z "$hits" ]'
hits=$(grep -nE 'case (DLT|LINKTYPE)_' pcap2spans/*.c)
check_eval "no switch on link types in pcap2spans${hits:+: $hits}" '[ -z "$hits" ]'
hits=$(grep -nE '\bN?BUCKETS?\b|\bbuckets?\[' $src | grep -v '^lib/sf_map\.[ch]:')
check_eval "one hash table, lib/sf_map${hits:+: $hits}" '[ -z "$hits" ]'
hits=$(grep -nE 'speedscope\.app/file-format-schema' $src | grep -v '^lib/sf_speedscope\.[ch]:')
check_eval "one speedscope encoder, lib/sf_speedscope${hits:+: $hits}" '[ -z "$hits" ]'
# a quote-colon or an opening brace and quote in a C string is JSON by hand (scripts/record
# holds a recording helper that prints one line of numbers, not captured strings)
hits=$(grep -nE '(fputs|printf|fprintf)\([^;]*"[^"]*(\{\\"|\\":)' $src |
    grep -vE '^(lib/sf_json\.c|scripts/record/)')
check_eval "JSON written through lib/sf_json only${hits:+: $hits}" '[ -z "$hits" ]'
# the floors (docs/architecture.md): lib/ includes no tool's header; inflect/ nothing of
# spanfold/; spanfold/ only inflect's analysis (its windows, quantiles and series are lib's)
hits=$(grep -nE '#include "\.\./' $(echo "$src" | grep '^lib/'))
check_eval "lib/ includes no tool's headers${hits:+: $hits}" '[ -z "$hits" ]'
hits=$(grep -nE '#include "\.\./spanfold/' $(echo "$src" | grep '^inflect/'))
check_eval "inflect/ includes nothing of spanfold/${hits:+: $hits}" '[ -z "$hits" ]'
hits=$(grep -nE '#include "\.\./inflect/' $(echo "$src" | grep '^spanfold/') |
    grep -vE '"\.\./inflect/(clockdrift|drift|inflect|run)\.h"')
check_eval "spanfold/ takes from inflect/ only its analysis${hits:+: $hits}" '[ -z "$hits" ]'
tap_plan

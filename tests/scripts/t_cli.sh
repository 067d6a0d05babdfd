#!/usr/bin/env bash
# Every tool's command line: -h, --help and --version answer on stdout with exit 0; an
# unknown option names the tool (never the path it was run by) and exits 2; man pages
# made from --help render without warnings; completion loads and completes options; and
# `make install DESTDIR=...` installs binaries, man pages and completion.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
build=${SF_BUILD:-$top/build}
tap_tmpdir
tools=(spanfold pcap2spans perf-fold tracefs2spans flamegraph inflect spanfold-export)
[ -x "$bin/spantrace" ] && tools+=(spantrace)

for t in "${tools[@]}"; do
    for h in -h --help; do
        out=$("$bin/$t" $h 2>"$tmp/err"); rc=$?
        check_eval "$t $h: exit 0, usage on stdout, nothing on stderr" \
            '[ "$rc" -eq 0 ] && printf "%s" "$out" | head -n 1 | grep -qi "^usage:" && [ ! -s "$tmp/err" ]'
    done
    v=$("$bin/$t" --version 2>&1); rc=$?
    check_eval "$t --version: exit 0, names the tool" '[ "$rc" -eq 0 ] && printf "%s" "$v" | grep -q "^$t "'
    "$bin/$t" --no-such-option >/dev/null 2>"$tmp/err"; rc=$?
    first=$(head -n 1 "$tmp/err")
    check_eval "$t --no-such-option: exit 2, message starts with '$t:' ($first)" \
        '[ "$rc" -eq 2 ] && case $first in "$t:"*) true ;; *) false ;; esac'
done
# the workflow commands come from spanfold's one command table (--list-commands, hidden)
cmds=$("$bin/spanfold" --list-commands 2>&1); rc=$?
want=$("$bin/spanfold" --help | awk '/^The incident workflow:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
check_eval "spanfold --list-commands: exit 0, the workflow commands of --help ($(echo $cmds))" \
    '[ "$rc" -eq 0 ] && [ -n "$cmds" ] && [ "$cmds" = "$want" ]'
for c in $cmds; do
    "$bin/spanfold" "$c" --help >"$tmp/h" 2>&1; rc=$?
    check_eval "spanfold $c --help: exit 0" '[ "$rc" -eq 0 ] && grep -qi "^usage:" "$tmp/h"'
    "$bin/spanfold" help "$c" >"$tmp/h2" 2>&1
    check "spanfold help $c is spanfold $c --help" cmp -s "$tmp/h" "$tmp/h2"
done
"$bin/spanfold" no-such-command >/dev/null 2>"$tmp/err"; rc=$?
check_eval "spanfold no-such-command: exit 2 with a message" '[ "$rc" -eq 2 ] && grep -q "not a spanfold command" "$tmp/err"'
"$bin/spanfold" pcap2spans --version >"$tmp/v" 2>&1
check "spanfold pcap2spans runs the linked-in tool" grep -q '^pcap2spans ' "$tmp/v"

# man pages and completion, made from --help; then an install into a scratch root
if ! command -v man >/dev/null; then
    skip "man pages render" "man (package man-db) not installed"
else
    for t in "${tools[@]}"; do
        sub=(); [ "$t" = spanfold ] && sub=($cmds); [ "$t" = perf-fold ] && sub=(diff)
        "$top/scripts/man.sh" "$bin/$t" "$t" "${sub[@]}" >"$tmp/$t.1" 2>"$tmp/err"
        MANWIDTH=80 man --warnings -l "$tmp/$t.1" >"$tmp/$t.txt" 2>"$tmp/manerr"
        check_eval "$t.1 renders without warnings and lists every long option of --help" '
            [ ! -s "$tmp/manerr" ] && grep -q "^NAME" "$tmp/$t.txt" &&
            for o in $("$bin/$t" --help | grep -oE "(^|[ ,[])--[a-z][a-z0-9-]*" | sed "s/^[ ,[]*//" | sort -u); do
                grep -q -- "$o" "$tmp/$t.txt" || { echo "# $o missing"; false; } || break; done'
    done
fi
"$top/scripts/completion.sh" "$bin" >"$tmp/comp.bash"
got=$(bash -c '. "$1"; COMP_WORDS=(pcap2spans --max-f); COMP_CWORD=1; _spanfold_complete; echo "${COMPREPLY[*]}"' _ "$tmp/comp.bash")
check_eval "completion: pcap2spans --max-f completes to --max-field-bytes --max-flows ($got)" '[ "$got" = "--max-field-bytes --max-flows" ]'
got=$(bash -c '. "$1"; COMP_WORDS=(spanfold re); COMP_CWORD=1; _spanfold_complete; echo "${COMPREPLY[*]}"' _ "$tmp/comp.bash")
check_eval "completion: spanfold re completes to report ($got)" '[ "$got" = "report" ]'
got=$(bash -c '. "$1"; COMP_WORDS=(spanfold s); COMP_CWORD=1; _spanfold_complete; echo "${COMPREPLY[*]}"' _ "$tmp/comp.bash")
check_eval "completion: spanfold s offers stacks once, and no 'spanfold' from the usage examples ($got)" \
    '[ "$got" = "stacks" ]'

dest=$tmp/root
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top" install DESTDIR="$dest" PREFIX=/usr >"$tmp/inst" 2>&1; then
    ok "make install DESTDIR=... PREFIX=/usr"
    for t in "${tools[@]}"; do
        check_eval "installed $t, its man page and completion" \
            '[ -x "$dest/usr/bin/$t" ] && [ -f "$dest/usr/share/man/man1/$t.1" ] && [ -f "$dest/usr/share/bash-completion/completions/$t" ]'
    done
    for c in $cmds; do
        check "installed spanfold.1 has a section for spanfold $c" \
            grep -qx ".SH \"spanfold $c\"" "$dest/usr/share/man/man1/spanfold.1"
    done
    check "installed the licence and the docs" test -f "$dest/usr/share/doc/spanfold/LICENSE" -a -f "$dest/usr/share/doc/spanfold/pcap2spans.md"
else
    notok "make install DESTDIR=... PREFIX=/usr"; sed 's/^/#   /' "$tmp/inst" | tail -5
fi
tap_plan

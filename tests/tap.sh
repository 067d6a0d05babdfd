# tests/tap.sh: the TAP preamble shared by the shell tests tests/*/t_*.sh.
# Source it first thing:   . "$(dirname "$0")/../tap.sh"
#
#   top                    repository root: $SF_TOP (make check sets it) or two folders
#                          up from the test script
#   n                      number of the last test printed; starts at 0
#   ok NAME...             print "ok N - NAME"
#   notok NAME...          print "not ok N - NAME"
#   check NAME CMD [ARG]..  run CMD ARG..; ok NAME if it exits 0, else notok NAME
#   check_eval NAME EXPR   the same with a shell expression, run by eval
#   check_rc RC NAME       ok NAME if the status RC (say $?) is 0, else notok NAME
#   skip NAME REASON       print "ok N - NAME # SKIP REASON" (a skip, never a pass)
#   tap_plan               print the plan "1..N" for the tests printed so far
#   tap_tmpdir [NAME]      set tmp to a new directory /tmp/NAME.XXXXXX (or mktemp's
#                          default) and remove it on exit; files that must also stop a
#                          process on exit set their own trap afterwards
#   tap_skip_all REASON    skip the whole file: print "ok 1 - $tap_name # SKIP REASON"
#                          and "1..1", exit 0; tap_name defaults to the file's name
#
# POSIX sh (some tests run under /bin/sh); it sets no shell options, each test keeps its
# own (usually set -u).

# shellcheck disable=SC2034  # top, n and tmp are for the sourcing test
top=${SF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)} # tests/DIR/t_NAME.sh: two up
n=0
tap_name=${tap_name:-$(basename "$0" .sh)}

ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }
check_eval() { if eval "$2"; then ok "$1"; else notok "$1"; fi; }
check_rc() { if [ "$1" = 0 ]; then ok "$2"; else notok "$2"; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
tap_plan() { echo "1..$n"; }
# tap_relay FILE: the TAP lines another test program wrote to FILE, numbered as this
# script's own (its "ok", "not ok" and diagnostics; its plan left out)
tap_relay() {
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${line#ok * - }" ;;
        "not ok "*) notok "${line#not ok * - }" ;;
        "#"*) echo "$line" ;;
        esac
    done <"$1"
}

tap_tmpdir() {
    if [ $# -gt 0 ]; then tmp=$(mktemp -d "/tmp/$1.XXXXXX"); else tmp=$(mktemp -d); fi || exit 2
    trap 'rm -rf "$tmp"' EXIT
}

tap_skip_all() { echo "ok 1 - $tap_name # SKIP $1"; echo "1..1"; exit 0; }

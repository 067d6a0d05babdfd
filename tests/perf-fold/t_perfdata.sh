#!/usr/bin/env bash
# lib/sf_perfdata (perf.data read directly, issue #32) on recordings made here by the
# installed perf: tests/data/perfdata/spin.c built with frame pointers, recorded in file
# mode, in pipe mode (perf record -o -), and with two events at once (samples told apart
# by their ids); for each, every record perf script prints is the one the reader hands
# on (test_perfdata with the recording's name).  Skips where perf is missing or may not
# record (perf_event_paranoid, a container without perf events).
set -u
. "$(dirname "$0")/../tap.sh"
t=${SF_BUILD:-$top/build}/tests/unit/test_perfdata
command -v perf >/dev/null || tap_skip_all "perf is not installed (scripts/deps.sh heavy: linux-perf)"
command -v cc >/dev/null || tap_skip_all "no C compiler"
[ -x "$t" ] || tap_skip_all "test_perfdata not built"
tap_tmpdir t_perfdata
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/spin" "$top/tests/data/perfdata/spin.c" || exit 2
perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/probe.data" "$tmp/spin" \
    >/dev/null 2>"$tmp/probe.err" || tap_skip_all "perf record fails here: $(head -1 "$tmp/probe.err")"
record() { # NAME PERF-RECORD-ARGS...: NAME.data and perf script's reading of it
    local name=$1
    shift
    if [ "$1" = pipe ]; then
        shift
        perf record -q -k mono -g "$@" -o - "$tmp/spin" 2>/dev/null >"$tmp/$name.data"
    else
        perf record -q -k mono -g "$@" -o "$tmp/$name.data" "$tmp/spin" >/dev/null 2>&1
    fi
    perf script -i "$tmp/$name.data" --ns --show-task-events --show-mmap-events \
        -F pid,tid,time,period,event >"$tmp/$name.perf-script.txt" 2>/dev/null
}
record file -c 50000 -e cpu-clock:u
record pipe pipe -c 50000 -e cpu-clock:u
record two -c 50000 -e cpu-clock:u -e task-clock:u
for name in file pipe two; do
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${line#ok * - }" ;;
        "not ok "*) notok "${line#not ok * - }" ;;
        "#"*) echo "$line" ;;
        esac
    done < <(SF_TOP=$top "$t" "$tmp/$name")
done
tap_plan

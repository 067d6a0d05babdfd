#!/usr/bin/env bash
# trace-cmd's trace.dat (issue #32 item 5): tracefs2spans and spanfold ingest read it by its
# content, with libtracecmd, and store the rows they store from the tracefs text of the same
# events — tests/data/tracedat/markers.dat against markers.trace.txt, the `trace` text of the
# same buffer: span events, span intervals, the clock.  The text has the kernel's
# microseconds (rounded to the nearest), the trace.dat the nanoseconds: times are compared
# as the kernel rounds them.  Then damaged and hostile files (none may kill the tool), and a
# recording made here (tests/data/tracedat/record.sh, in a tracefs instance of its own)
# where root, a writable tracefs and trace-cmd are present.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
data=$top/tests/data/tracedat
tap_tmpdir t_tracedat
command -v sqlite3 >/dev/null || tap_skip_all "no sqlite3 shell"
q() { sqlite3 "$1" "$2"; }
# the rows of a database, times in microseconds: ns (a trace.dat's) rounded, or us * 1000
rows() { # DB ROUND
    local t="(ts_ns + $2) / 1000" s="(start_ns + $2) / 1000" e="(end_ns + $2) / 1000"
    q "$1" "SELECT 'ev', $t, cpu, pid, tid, comm, kind, span_id, trace_id, decision, message,
                   source FROM span_events ORDER BY 2, tid, kind, message;
            SELECT 'iv', span_id, trace_id, pid, tid, $s, $e, depth, decision, end_rule
                   FROM span_intervals ORDER BY span_id;
            SELECT 'src', kind, clock, status FROM sources"
}
compare() { # NAME DAT TEXT [OPTIONS]: the trace.dat's rows against the text's
    local name=$1 dat=$2 txt=$3
    shift 3
    rm -f "$tmp/d.db" "$tmp/t.db"
    "$bin/tracefs2spans" --quiet "$@" --db "$tmp/d.db" "$dat" 2>"$tmp/d.err"
    local rc=$?
    "$bin/tracefs2spans" --quiet "$@" --db "$tmp/t.db" "$txt" 2>/dev/null
    rows "$tmp/d.db" 500 >"$tmp/d.rows"
    rows "$tmp/t.db" 0 >"$tmp/t.rows"
    local nev niv
    nev=$(grep -c '^ev|' "$tmp/d.rows")
    niv=$(grep -c '^iv|' "$tmp/d.rows")
    check_eval "$name: tracefs2spans reads the trace.dat (rc $rc)" '[ $rc -eq 0 ] && [ ! -s "$tmp/d.err" ]'
    check_eval "$name: the span events, intervals and clock of the tracefs text of the same buffer ($nev events, $niv intervals)" \
        '[ "$niv" -ge 12 ] && cmp -s "$tmp/t.rows" "$tmp/d.rows"'
    diff "$tmp/t.rows" "$tmp/d.rows" | head -4 | sed 's/^/# /'
}
compare markers "$data/markers.dat" "$data/markers.trace.txt"
check_eval "the recording's trace_clock (mono) is read from the trace.dat" \
    '[ "$(q "$tmp/d.db" "SELECT clock FROM sources")" = monotonic ]'
check_eval "the nanoseconds are kept (the text has microseconds)" \
    '[ "$(q "$tmp/d.db" "SELECT count(*) FROM span_events WHERE ts_ns % 1000 != 0")" -gt 0 ]'

# spanfold ingest: by content, through compression, said as trace.dat
xz -c "$data/markers.dat" >"$tmp/markers.dat.xz"
"$bin/spanfold" ingest --db "$tmp/i.db" "$tmp/markers.dat.xz" 2>"$tmp/i.err"
rc=$?
check_eval "spanfold ingest takes an xz'd trace.dat by its content (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "trace.dat   $tmp/markers.dat.xz via xz: $(q "$tmp/d.db" "SELECT count(*) FROM span_events") span events, 0 of [0-9]* lines skipped, clock monotonic, complete" "$tmp/i.err"'
check_eval "ingest stores the spans' intervals" \
    '[ "$(q "$tmp/i.db" "SELECT count(*) FROM span_intervals")" = 12 ]'

# damaged: a file cut short, one with nothing after its magic, one with its formats and
# data scrambled; the tool says so and is never killed
size=$(wc -c <"$data/markers.dat")
head -c $((size / 2)) "$data/markers.dat" >"$tmp/cut.dat"
"$bin/tracefs2spans" --db "$tmp/cut.db" "$tmp/cut.dat" 2>"$tmp/cut.err"
rc=$?
check_eval "a trace.dat cut in half: exit 2, said (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "cut.dat: .*trace.dat: libtracecmd cannot open it" "$tmp/cut.err"'
printf '\027\010Dtracing6\0garbage' >"$tmp/garbage.dat"
"$bin/tracefs2spans" --db "$tmp/g.db" "$tmp/garbage.dat" 2>"$tmp/g.err"
rc=$?
check_eval "a trace.dat magic and garbage: exit 2, said (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "garbage.dat: .*cannot open it" "$tmp/g.err"'
killed=0
for seed in 1 2 3 4 5 6 7 8; do
    python3 - "$data/markers.dat" "$tmp/hostile.dat" "$seed" <<'PY'
import random, sys
b = bytearray(open(sys.argv[1], "rb").read())
r = random.Random(int(sys.argv[3]))
fmt = max(b.find(b"name: sched_switch"), 64)  # formats zstd'd in version 7: anywhere
for _ in range(40):  # in the event formats and anywhere
    k = r.randrange(fmt, fmt + 3000) if r.random() < 0.6 else r.randrange(64, len(b))
    b[k] = r.randrange(256)
open(sys.argv[2], "wb").write(b)
PY
    "$bin/tracefs2spans" --quiet --db "$tmp/h$seed.db" "$tmp/hostile.dat" >/dev/null 2>&1
    rc=$?
    [ $rc -ge 128 ] && { killed=$((killed + 1)); echo "# seed $seed: rc $rc"; }
done
check_eval "eight scrambled trace.dat files: the tool is never killed (killed $killed)" '[ $killed -eq 0 ]'

# a recording made here, in a tracefs instance of its own (trace-cmd 3.1 records an
# instance's clock as the top buffer's: both sides are told mono)
if [ "$(id -u)" != 0 ]; then
    skip "a trace.dat recorded here" "not root"
    skip "a trace.dat recorded here: the same rows" "not root"
else
    "$data/record.sh" "$tmp/live" >/dev/null 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then
        skip "a trace.dat recorded here" "no trace-cmd, no writable tracefs, or no extract here (scripts/deps.sh heavy)"
        skip "a trace.dat recorded here: the same rows" "no trace-cmd, no writable tracefs, or no extract here"
    else
        compare "recorded here" "$tmp/live.dat" "$tmp/live.trace.txt" --clock mono
    fi
fi
tap_plan

#!/usr/bin/env bash
# perf.data into the database without perf (issue #32 item 4): `perf-fold --db` and
# `spanfold ingest` read the recordings in tests/data/perfdata (file and pipe mode, a CPU
# profile with sched:sched_switch and sched:sched_wakeup, recorded as docs/recording.md
# says) with no perf on PATH, and store what the text path stores from perf's own reading
# of the same files (*.trace.txt: perf script --header -F ...,trace): the same samples,
# the same events counted, the same off-CPU intervals (times, threads, the state each
# left in, the waker), the same clock.  Stacks are left out of the comparison: their
# kernel frames are resolved from this machine's kallsyms, perf's text from the
# recording machine's.  Then damaged files: cut short, and with the tracing data broken.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
data=$top/tests/data/perfdata
tap_tmpdir t_perfdata_db
q() { sqlite3 "$1" "$2"; }
# the rows of a database that do not depend on symbols, one table per line group
rows() {
    q "$1" "SELECT 'off', ts_ns, end_ns, end_rule, pid, tid, comm, state, waker_tid FROM offcpu
            ORDER BY ts_ns, tid;
            SELECT 'smp', ts_ns, pid, tid, cpu, period, comm FROM samples ORDER BY ts_ns, tid;
            SELECT 'ev', event, kind, records, stored FROM sample_events ORDER BY event;
            SELECT 'src', kind, clock, status FROM sources"
}
for name in sleep-sched sleep-sched-pipe; do
    PATH=/nonexistent "$bin/perf-fold" --quiet --db "$tmp/$name.data.db" "$data/$name.data" \
        >"$tmp/data.folded" 2>"$tmp/data.err"
    rc=$?
    "$bin/perf-fold" --quiet --db "$tmp/$name.text.db" "$data/$name.trace.txt" >/dev/null 2>&1
    rows "$tmp/$name.data.db" >"$tmp/data.rows"
    rows "$tmp/$name.text.db" >"$tmp/text.rows"
    noff=$(grep -c '^off|' "$tmp/data.rows")
    nsmp=$(grep -c '^smp|' "$tmp/data.rows")
    check_eval "$name: perf-fold --db reads it with no perf on PATH (rc $rc)" \
        '[ $rc -eq 0 ] && [ ! -s "$tmp/data.err" ]'
    check_eval "$name: the samples, events, off-CPU intervals and clock perf script's text gives ($nsmp samples, $noff intervals)" \
        '[ "$noff" -gt 3 ] && [ "$nsmp" -gt 3 ] && cmp -s "$tmp/text.rows" "$tmp/data.rows"'
    diff "$tmp/text.rows" "$tmp/data.rows" | head -5 | sed 's/^/# /'
    check_eval "$name: the tracepoints' fields were read (threads left in states S and D, wakers named)" \
        '[ "$(q "$tmp/$name.data.db" "SELECT count(*) FROM offcpu WHERE state IN (\"S\", \"D\")")" -gt 0 ] &&
         [ "$(q "$tmp/$name.data.db" "SELECT count(*) FROM offcpu WHERE waker_tid IS NOT NULL")" -gt 0 ]'
    check_eval "$name: the clock is the recording's (perf record -k mono)" \
        '[ "$(q "$tmp/$name.data.db" "SELECT clock FROM sources")" = monotonic ]'
    PATH=/nonexistent "$bin/spanfold" ingest --db "$tmp/$name.ingest.db" "$data/$name.data" \
        2>"$tmp/ingest.err"
    rc=$?
    rows "$tmp/$name.ingest.db" >"$tmp/ingest.rows"
    check_eval "$name: spanfold ingest stores the same rows with no perf on PATH (rc $rc)" \
        '[ $rc -eq 0 ] && cmp -s "$tmp/data.rows" "$tmp/ingest.rows"'
    check_eval "$name: ingest says what it read: records, off-CPU intervals" \
        'grep -q "$name.data: [0-9]* samples of cpu-clock.*, $noff off-CPU intervals, 0 of [0-9]* records skipped, clock monotonic, complete" "$tmp/ingest.err"'
done

# in perf's order, ids and all: the samples as perf script hands them on (by time, a round
# late), also from the file with the first sample of its first round moved past that
# round's end (tests/perf-fold/reround.py: perf reads it in its place)
order() { q "$1" "SELECT id, ts_ns, pid, tid, cpu, period, comm FROM samples ORDER BY id"; }
for name in sleep-sched sleep-sched-pipe; do
    python3 "$top/tests/perf-fold/reround.py" "$data/$name.data" "$tmp/$name.rr.data"
    "$bin/perf-fold" --quiet --db "$tmp/$name.rr.db" "$tmp/$name.rr.data" >/dev/null 2>&1
    check_eval "$name: the samples in perf's order, ids and all, from the file and from it with a sample a round late" \
        'order "$tmp/$name.text.db" >"$tmp/o.text" && order "$tmp/$name.data.db" | cmp -s - "$tmp/o.text" &&
         order "$tmp/$name.rr.db" | cmp -s - "$tmp/o.text" && ! cmp -s "$data/$name.data" "$tmp/$name.rr.data"'
done

# cut short: the rows before the cut are kept, the place is said, the source is partial
size=$(wc -c <"$data/sleep-sched-pipe.data")
head -c $((size * 2 / 3)) "$data/sleep-sched-pipe.data" >"$tmp/cut.data"
PATH=/nonexistent "$bin/perf-fold" --db "$tmp/cut.db" "$tmp/cut.data" >/dev/null 2>"$tmp/cut.err"
rc=$?
whole=$(q "$tmp/sleep-sched-pipe.data.db" "SELECT count(*) FROM samples")
got=$(q "$tmp/cut.db" "SELECT count(*) FROM samples")
check_eval "a pipe-mode file cut at 2/3: exit 1, the byte said, $got of $whole samples kept (rc $rc)" \
    '[ $rc -eq 1 ] && grep -q "cut.data: byte [0-9]*: perf.data: the data ends inside a record" "$tmp/cut.err" &&
     [ "$got" -gt 0 ] && [ "$got" -lt "$whole" ]'
check_eval "the cut file's source is partial, with where it stopped" \
    '[ "$(q "$tmp/cut.db" "SELECT status FROM sources")" = partial ] &&
     q "$tmp/cut.db" "SELECT error FROM sources" | grep -q "^stopped at byte [0-9]*: perf.data: the data ends"'

# the tracing data damaged (its magic): said once, the samples still stored, no fields
python3 - "$data/sleep-sched.data" "$tmp/notrace.data" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
k = b.find(b"\x17\x08Dtracing")
assert k > 0
b[k + 2] = ord("X")
open(sys.argv[2], "wb").write(b)
EOF
"$bin/perf-fold" --quiet --db "$tmp/notrace.db" "$tmp/notrace.data" >/dev/null 2>"$tmp/notrace.err"
rc=$?
check_eval "damaged tracing data: said, samples stored, switches counted without fields (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "notrace.data: the tracing data has no .*magic: tracepoints without their fields" "$tmp/notrace.err" &&
     [ "$(q "$tmp/notrace.db" "SELECT count(*) FROM samples")" = "$(q "$tmp/sleep-sched.data.db" "SELECT count(*) FROM samples")" ] &&
     [ "$(q "$tmp/notrace.db" "SELECT count(*) FROM offcpu WHERE state IS NOT NULL")" = 0 ]'
tap_plan

#!/usr/bin/env bash
# Tracepoints are not CPU samples (issue #33.3).  A recording with -e cpu-clock -e
# sched:sched_switch -e sched:sched_wakeup (what off-CPU analysis needs) stores only
# the sampling event's records in samples, every other event counted in
# sample_events, whatever the text form (tracepoint fields printed or not, header or
# not) and whichever event comes first.  perf.data is read with the fields the
# recording has: a command or -p recording has no CPU field, and perf script stops
# when asked for it.  Live, with root and perf: ingest of recordings made with -p,
# -a and a command, and docs/recording.md's off-CPU recipe.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
d=$top/tests/data/perf-events
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
q() { sqlite3 "$1" "$2"; }

# What the text says, counted here by grep: header lines ending in the event name.
ncpu=$(grep -cE '^\S.* cpu-clock: *$' "$d/sched-cmd.fields.txt")
nsw=$(grep -cE ' sched:sched_switch: *$' "$d/sched-cmd.fields.txt")
nwk=$(grep -cE ' sched:sched_wakeup: *$' "$d/sched-cmd.fields.txt")
check_eval "the recording has all three events, a tracepoint first ($ncpu, $nsw, $nwk)" \
    '[ "$ncpu" -gt 0 ] && [ "$nsw" -gt 0 ] && [ "$nwk" -gt 0 ] &&
     grep -v "^#" "$d/sched-cmd.fields.txt" | head -1 | grep -q " sched:"'
grep -v '^#' "$d/sched-cmd.txt" >"$tmp/nohdr.txt"

for f in sched-cmd.fields.txt sched-cmd.txt nohdr.txt; do
    in=$d/$f
    [ "$f" = nohdr.txt ] && in=$tmp/nohdr.txt
    db=$tmp/$f.db
    "$bin/perf-fold" --db "$db" "$in" >/dev/null 2>"$tmp/err"
    check_eval "$f: samples holds the $ncpu cpu-clock records only" \
        '[ "$(q "$db" "SELECT count(*) || '"'"' '"'"' || group_concat(DISTINCT event) FROM samples")" = "$ncpu cpu-clock" ]'
    check_eval "$f: sample_events counts every event, tracepoints kept out" \
        '[ "$(q "$db" "SELECT event, kind, records, stored FROM sample_events ORDER BY event")" = "cpu-clock|sampling|$ncpu|1
sched:sched_switch|tracepoint|$nsw|0
sched:sched_wakeup|tracepoint|$nwk|0" ]'
    check "$f: perf-fold says what it kept out" \
        grep -q "not CPU samples, kept out of the samples table (sample_events counts them): .*$nsw sched:sched_switch" "$tmp/err"
done
# off-CPU intervals (issue #30.1), worked out here from the text: a thread is off CPU from
# the sched_switch that took it off (prev_pid) to the switch that put it back (next_pid),
# or else to its next record of any event
python3 - "$d/sched-cmd.txt" >"$tmp/want.off" <<'PY'
import re, sys
hdr = re.compile(r"^\S.*?\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s+(?:\d+\s+)?(\S+):(.*)$")
off, out = {}, []
for line in open(sys.argv[1]):
    m = hdr.match(line.rstrip("\n"))
    if not m or line.startswith("#"):
        continue
    tid = int(m.group(2) or m.group(1))
    sec, frac = m.group(3).split(".")
    t = int(sec) * 10**9 + int(frac.ljust(9, "0")[:9])
    ev, args = m.group(4), m.group(5)
    if tid in off:
        out.append((tid, off.pop(tid), t, "next-event"))
    if ev == "sched:sched_switch":
        a = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
        nxt = int(a.get("next_pid", 0))
        if nxt in off:
            out.append((nxt, off.pop(nxt), t, "switch-in"))
        off[int(a.get("prev_pid", tid))] = t
for r in sorted(out):
    print("%d|%d|%d|%s" % r)
PY
"$bin/perf-fold" --db "$tmp/off.db" "$d/sched-cmd.txt" >/dev/null 2>&1
q "$tmp/off.db" "SELECT tid, ts_ns, end_ns, end_rule FROM offcpu ORDER BY 1, 2, 3" >"$tmp/got.off"
check_eval "off-CPU intervals: the $(wc -l <"$tmp/want.off") worked out from the text, to the ns" \
    '[ -s "$tmp/want.off" ] && cmp -s "$tmp/want.off" "$tmp/got.off"'
check_eval "... each blocked one names the kernel function (io_schedule, do_wait ...), a preempted one says so" \
    '[ "$(q "$tmp/off.db" "SELECT count(*) FROM offcpu WHERE reason IS NULL OR reason LIKE '"'"'%schedule%'"'"' AND reason <> '"'"'io_schedule'"'"' OR (state LIKE '"'"'R%'"'"') <> (reason = '"'"'preempted'"'"')")" = 0 ]'
check_eval "... and no CPU sample came from a scheduler record" \
    '[ "$(q "$tmp/off.db" "SELECT count(*) FROM samples")" = "$ncpu" ]'
"$bin/perf-fold" --db "$tmp/offf.db" "$d/sched-cmd.fields.txt" >/dev/null 2>&1
check_eval "without the tracepoints' fields: the same intervals by the record's own thread, state unknown" \
    '[ "$(q "$tmp/offf.db" "SELECT count(*), count(state) FROM offcpu")" = "$(grep -c next-event "$tmp/want.off")|0" ] ||
     [ "$(q "$tmp/offf.db" "SELECT count(*) > 0, count(state) FROM offcpu")" = "1|0" ]'
# hostile: 150 random variants of the recording's two texts (mutate_perf.py) through --db:
# never a crash, never an interval that ends before it starts, the database whole
bad=0
for seed in $(seq 1 150); do
    python3 "$top/tests/perf-fold/mutate_perf.py" "$seed" "$d" >"$tmp/m.txt" 2>/dev/null || continue
    rm -f "$tmp/m.db"
    "$bin/perf-fold" -q --db "$tmp/m.db" "$tmp/m.txt" >/dev/null 2>&1
    rc=$?
    if [ $rc -gt 2 ] || [ "$(q "$tmp/m.db" "SELECT count(*) FROM offcpu WHERE end_ns < ts_ns")" != 0 ] ||
        [ "$(q "$tmp/m.db" "PRAGMA integrity_check")" != ok ]; then
        bad=$((bad + 1))
        echo "# seed $seed: exit $rc"
    fi
done
check_eval "150 mutated recordings: no crash, no backwards interval, the database whole ($bad bad)" '[ $bad = 0 ]'
"$bin/perf-fold" --db "$tmp/tp.db" --event-filter sched:sched_switch "$d/sched-cmd.txt" >/dev/null 2>&1
check_eval "--event-filter names a tracepoint: its records, and only they, are stored" \
    '[ "$(q "$tmp/tp.db" "SELECT count(*) || '"'"' '"'"' || group_concat(DISTINCT event) FROM samples")" = "$nsw sched:sched_switch" ]'
# without --db the fold stays stackcollapse-perf.pl's: the first event seen
"$bin/perf-fold" "$d/sched-cmd.fields.txt" 2>/dev/null | awk '{n += $NF} END {print n + 0}' >"$tmp/n"
check_eval "without --db the fold is stackcollapse-perf.pl's: the first event (the switches)" \
    '[ "$(cat "$tmp/n")" = "$nsw" ]'

# perf.data through perf script
if ! command -v perf >/dev/null; then
    skip "perf.data ingest" "perf not installed (linux-perf)"
else
    "$bin/spanfold" ingest --db "$tmp/i.db" "$d/sched-cmd.data" 2>"$tmp/i.err"
    rc=$?
    check_eval "ingest of a command's perf.data (no CPU field): exit 0 or 1 (nothing but a profile), not perf's failure (rc $rc)" \
        '[ $rc -le 1 ] && ! grep -q "do not have CPU attribute" "$tmp/i.err"'
    check_eval "... $ncpu cpu-clock samples, cpu NULL" \
        '[ "$(q "$tmp/i.db" "SELECT count(*), count(cpu) FROM samples")" = "$ncpu|0" ]'
    check_eval "... the switches and wakeups counted, kept out" \
        '[ "$(q "$tmp/i.db" "SELECT sum(records) FROM sample_events WHERE NOT stored")" = $((nsw + nwk)) ]'
    check "... and the ingest line says so" \
        grep -q "$ncpu samples of cpu-clock (not CPU samples, kept out: .*sched:sched_switch" "$tmp/i.err"
fi

# live: -p, -a, a command, and the off-CPU recipe of docs/recording.md
if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null; then
    skip "live recordings with -p, -a, a command, the off-CPU recipe" "needs root and perf"
else
    # busy until killed: it must outlive every -p recording, however slow the machine
    sh -c 'i=0; while :; do i=$((i+1)); [ $((i % 50000)) = 0 ] && sleep 0.01; done' &
    busy=$!
    rec() { # NAME perf-record-args...
        local r=$1
        shift
        perf record -q -k mono -g -o "$tmp/$r.data" "$@" >/dev/null 2>&1
    }
    rec p -F 999 -p "$busy" -- sleep 1
    rec a -F 199 -a -- sleep 0.5
    rec cmd -F 999 -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'
    rec offcpu --sample-cpu -c 1 -e 'cpu-clock/period=1001001,name=cpu-clock/' \
        -e sched:sched_switch -e sched:sched_wakeup -p "$busy" -- sleep 1
    { kill "$busy" && wait "$busy"; } 2>/dev/null
    for r in p a cmd offcpu; do
        if [ ! -s "$tmp/$r.data" ]; then
            notok "perf record ($r) made a recording"
            notok "ingest of the $r recording"
            continue
        fi
        "$bin/spanfold" ingest --db "$tmp/$r.db" "$tmp/$r.data" 2>"$tmp/$r.err"
        rc=$?
        check_eval "ingest of a recording made with $r: exit ≤ 1 (rc $rc), its samples stored" \
            '[ $rc -le 1 ] && [ "$(q "$tmp/$r.db" "SELECT count(*) FROM samples")" -gt 0 ]'
        case $r in
        offcpu)
            check_eval "the off-CPU recipe: only cpu-clock in samples, the switches counted, off-CPU intervals" \
                '[ "$(q "$tmp/$r.db" "SELECT group_concat(DISTINCT event) FROM samples")" = cpu-clock ] &&
                 [ "$(q "$tmp/$r.db" "SELECT records > 0 FROM sample_events WHERE event = '"'"'sched:sched_switch'"'"'")" = 1 ] &&
                 [ "$(q "$tmp/$r.db" "SELECT count(*) > 0 FROM offcpu WHERE reason IS NOT NULL")" = 1 ]' ;;
        a) check_eval "-a: every sample has its CPU" \
            '[ "$(q "$tmp/$r.db" "SELECT count(*) = count(cpu) FROM samples")" = 1 ]' ;;
        *) check_eval "$r: no sample has a CPU (the recording has none)" \
            '[ "$(q "$tmp/$r.db" "SELECT count(cpu) FROM samples")" = 0 ]' ;;
        esac
    done
fi
tap_plan

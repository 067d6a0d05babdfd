#!/usr/bin/env bash
# tracefs2spans --db with the off-CPU lines of spantrace --offcpu, no root needed: a
# crafted trace with span markers on a thread and spantrace_offcpu lines on it inside
# and outside the span (and on another thread) gives offcpu rows as perf-fold's
# sched_switch records do (state, waker, frame, reason, interned stack, end_rule
# switch-in), the one inside the span attributed to it, `spanfold stacks --offcpu`
# weighs them in ns; bad lines are reported at their column and kept raw, the good
# ones around them stored; a re-run or --refit never adds rows.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
tap_tmpdir t_t2s_offcpu
db=$tmp/x.db
span=00f067aa0ba902b7
futex="svc;main;pool_acquire;pthread_mutex_lock;__lll_lock_wait;syscall;entry_SYSCALL_64;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_wait_queue;schedule;__schedule"
io="svc;main;read_file;read;entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read;filemap_read;folio_wait_bit_common;io_schedule+0x4f;schedule+0x3c;__schedule+0x2a5"
preempt="svc;main;work;asm_sysvec_apic_timer_interrupt;irqentry_exit;preempt_schedule_irq;__schedule"
epoll="svc;main;Pool::get(int, long);ep_poll;schedule_hrtimeout_range;__schedule"

# one trace line of thread TID of process 4242 at TS: "EVENT: MESSAGE"
line() { printf '%16s-%-7s (%7s) [001] ..... %14s: %s\n' svc "$1" 4242 "$2" "$3"; }
{
    echo "# tracer: spantrace"
    echo "# trace_clock: mono"
    line 4243 100.000000000 "spantrace: span:$span begin decision:1"
    # written when they end, as spantrace does: their stamps (the starts) go back
    line 4244 100.002000000 "spantrace_offcpu: end=100.002700000 state=D waker=- frame=- stack=$io"
    line 4243 100.001000000 "spantrace_offcpu: end=100.003500000 state=S waker=4250 frame=11 stack=$futex"
    line 4243 100.004000000 "spantrace_offcpu: end=100.004500000 state=S waker=4243 frame=3 stack=$epoll"
    line 4243 100.005000000 "spantrace: span:$span end decision:1"
    line 4243 100.006000000 "spantrace_offcpu: end=100.006250000 state=R+ waker=- frame=- stack=$preempt"
    line 4243 100.007000000 "spantrace_offcpu: end=100.006000000 state=S waker=- frame=- stack=svc;main;x"
    line 4243 100.008000000 "spantrace_offcpu: end=100.009000000 state=S waker=- frame=-"
    line 4243 100.009000000 "spantrace_offcpu: end=100.010000000 state=S waker=abc frame=- stack=svc;main;x"
    line 4243 100.010000000 "spantrace_offcpu: end=100.011000000 state=S waker=1 frame=9 stack=svc;main;x"
} >"$tmp/off.txt"

"$bin/tracefs2spans" --db "$db" "$tmp/off.txt" 2>"$tmp/err"
rc=$?
check_eval "four bad off-CPU lines: exit 1 (got $rc)" "[ $rc = 1 ]"
# the column each error names: the value of end=, the end of the line, the value of
# waker=, the value of frame=
col_after() { # LINENO TEXT: 1-based column just after TEXT's first occurrence on line LINENO
    local l before
    l=$(sed -n "${1}p" "$tmp/off.txt")
    before=${l%%"$2"*}
    echo $((${#before} + ${#2} + 1))
}
len10=$(sed -n 10p "$tmp/off.txt" | wc -c)
check_eval "end before start: FILE:LINE:COL at end=" \
    "grep -qF 'off.txt:9:$(col_after 9 'end='): off-CPU event: end= before' '$tmp/err'"
check_eval "missing stack=: FILE:LINE:COL at the line's end" \
    "grep -qF 'off.txt:10:$len10: off-CPU event: expected stack=' '$tmp/err'"
check_eval "a bad waker: FILE:LINE:COL at waker=" \
    "grep -qF 'off.txt:11:$(col_after 11 'waker='): off-CPU event: expected waker=TID' '$tmp/err'"
check_eval "frame= past the stack: FILE:LINE:COL at frame=" \
    "grep -qF 'off.txt:12:$(col_after 12 'frame='): off-CPU event: frame=K beyond' '$tmp/err'"
check_eval "the summary counts the off-CPU intervals stored and the bad lines" \
    "grep -q 'off.txt: 12 lines, 10 events, 2 markers, 1 intervals, .* 4 bad lines, 4 off-CPU intervals; clock monotonic' '$tmp/err'"
check_eval "off-CPU lines out of order by their stamps are no clock step" \
    "! grep -q 'time goes back' '$tmp/err'"

q() { sqlite3 -separator '|' "$db" "$1"; }
check_eval "the four good lines are offcpu rows ($(q "SELECT count(*) FROM offcpu"))" \
    "[ $(q "SELECT count(*) FROM offcpu") = 4 ]"
check_eval "the bad lines are kept raw in span_events, the good ones are not there" \
    "[ $(q "SELECT count(*) FROM span_events WHERE kind = 'raw' AND message LIKE 'spantrace_offcpu: %'") = 4 ] &&
     [ $(q "SELECT count(*) FROM span_events WHERE message LIKE '%stack=svc;main;pool_acquire%'") = 0 ]"
check_eval "the source counts its bad lines" \
    "[ '$(q "SELECT status, bad_units FROM sources")' = 'complete|4' ]"

row() { q "SELECT ts_ns, end_ns, end_rule, pid, tid, comm, state, coalesce(waker_tid, 'null'),
           coalesce(waker_stack_id, 'null'), coalesce(frame, 'null'), coalesce(reason, 'null'),
           coalesce(o.span_id, 'null'), k.frames FROM offcpu o JOIN stacks k ON k.id = o.stack_id
           WHERE ts_ns = $1"; }
got=$(row 100001000000)
check_eval "blocked on a futex inside the span: every column ($got)" \
    "[ '$got' = '100001000000|100003500000|switch-in|4242|4243|svc|S|4250|null|pool_acquire|futex_wait_queue|$span|$futex' ]"
got=$(row 100004000000)
check_eval "frame=3 names a frame with blanks; reason ep_poll; the same span ($got)" \
    "[ '$got' = '100004000000|100004500000|switch-in|4242|4243|svc|S|4243|null|Pool::get(int, long)|ep_poll|$span|$epoll' ]"
got=$(row 100002000000)
check_eval "another thread in the span's time: no span; reason without its +0x offset ($got)" \
    "[ '$got' = '100002000000|100002700000|switch-in|4242|4244|svc|D|null|null|null|io_schedule|null|$io' ]"
got=$(row 100006000000)
check_eval "after the span's end, state R+: reason preempted, no span ($got)" \
    "[ '$got' = '100006000000|100006250000|switch-in|4242|4243|svc|R+|null|null|null|preempted|null|$preempt' ]"
check_eval "each stack interned once in stacks" \
    "[ $(q "SELECT count(*) FROM stacks") = 4 ]"

"$bin/spanfold" stacks --db "$db" --offcpu >"$tmp/stacks" 2>"$tmp/stacks.err"
rc=$?
check_eval "spanfold stacks --offcpu: exit 0 (got $rc)" "[ $rc = 0 ]"
check_eval "the futex stack weighs its 2.5 ms in ns" "grep -qxF '$futex 2500000' '$tmp/stacks'"
check_eval "the epoll stack weighs its 0.5 ms" "grep -qxF '$epoll 500000' '$tmp/stacks'"
check_eval "no interval outside the span is folded" \
    "[ $(grep -c . "$tmp/stacks") = 3 ] && ! grep -q preempt_schedule_irq '$tmp/stacks'"
"$bin/spanfold" stacks --db "$db" --wall >"$tmp/wall" 2>/dev/null
check_eval "spanfold stacks --wall: the blocked frame as the leaf" \
    "grep -qxF '$futex;[off-CPU: futex_wait_queue] 2500000' '$tmp/wall'"

"$bin/tracefs2spans" --db "$db" "$tmp/off.txt" 2>"$tmp/err2"
check_eval "a re-run of the same file: skipped, no row added" \
    "grep -q 'already ingested' '$tmp/err2' && [ $(q "SELECT count(*) FROM offcpu") = 4 ]"
q "UPDATE offcpu SET span_id = NULL"
"$bin/tracefs2spans" --quiet --db "$db" --refit 2>/dev/null
check_eval "--refit attributes again, adds nothing" \
    "[ $(q "SELECT count(*) FROM offcpu") = 4 ] &&
     [ '$(q "SELECT group_concat(ts_ns) FROM (SELECT ts_ns FROM offcpu WHERE span_id = '$span' ORDER BY 1)")' = '100001000000,100004000000' ]"

# without --db: NDJSON objects of type offcpu
"$bin/tracefs2spans" --quiet "$tmp/off.txt" >"$tmp/nd" 2>/dev/null
check_eval "NDJSON: one offcpu object per good line" "[ $(grep -c '\"type\":\"offcpu\"' "$tmp/nd") = 4 ]"
check_eval "NDJSON: its columns" \
    "grep -qF '\"type\":\"offcpu\",\"line\":8,\"ts_ns\":100006000000,\"end_ns\":100006250000,\"end_rule\":\"switch-in\",\"pid\":4242,\"tid\":4243,\"comm\":\"svc\",\"state\":\"R+\",\"reason\":\"preempted\",\"frame\":null,\"waker_tid\":null,\"stack\":\"$preempt\"}' '$tmp/nd'"

# a raw-count clock (no decimal point): end= is a count too
{
    echo "# tracer: spantrace"
    printf '%16s-%-7s (%7s) [001] ..... %14s: %s\n' svc 7 7 12345 \
        "spantrace_offcpu: end=12400 state=S waker=- frame=1 stack=svc;op+0x1f;io_schedule+0x4f"
    printf '%16s-%-7s (%7s) [001] ..... %14s: %s\n' svc 7 7 12500 \
        "spantrace_offcpu: end=12600.5 state=S waker=- frame=- stack=svc;x"
} >"$tmp/raw.txt"
"$bin/tracefs2spans" --quiet --db "$tmp/raw.db" "$tmp/raw.txt" 2>"$tmp/err3"
rc=$?
check_eval "a counter clock: end= a count, a fraction refused (exit $rc)" \
    "[ $rc = 1 ] && grep -q 'raw.txt:3:[0-9]*: off-CPU event: expected end=N' '$tmp/err3' &&
     [ '$(sqlite3 "$tmp/raw.db" "SELECT ts_ns, end_ns, frame, reason FROM offcpu")' = '12345|12400|op|io_schedule' ]"
tap_plan

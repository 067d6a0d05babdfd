#!/bin/sh
# record.sh OUT [top]: span markers (trace_marker, spantrace's grammar) and the scheduler's
# switches and wakeups, recorded in a tracefs instance of its own (so that nothing else
# using tracefs is disturbed) with trace_clock mono, and kept twice: OUT.trace.txt, the
# instance's `trace` text (read without consuming it, with a "# trace_clock:" line
# first), and OUT.dat, trace-cmd's trace.dat of the same buffer (trace-cmd extract).
# With "top", the top-level buffer is used instead (its trace_clock set back to local
# after): trace-cmd 3.1 then records the clock, which it records as the top buffer's for
# an instance.  Needs root, a writable tracefs and a trace-cmd that can extract its buffer;
# exits 77 when one is missing.
set -u
out=$1
T=${TRACEFS:-/sys/kernel/tracing}
name=spanfold-$$
command -v trace-cmd >/dev/null 2>&1 || exit 77
if [ "${2:-}" = top ]; then
    I=$T
    echo 0 >"$I/tracing_on" && echo >"$I/trace" || exit 77
    trap 'echo local >"$I/trace_clock"; echo 1 >"$I/tracing_on"' EXIT
else
    mkdir "$T/instances/$name" 2>/dev/null || exit 77
    I=$T/instances/$name
    trap 'rmdir "$I" 2>/dev/null' EXIT
fi
echo mono >"$I/trace_clock" || exit 77
echo 1 >"$I/events/sched/sched_switch/enable" || exit 77
echo 1 >"$I/events/sched/sched_wakeup/enable"
echo 1 >"$I/tracing_on"
i=1
while [ $i -le 12 ]; do
    s=00f067aa0ba902$(printf %02x $i)
    echo "begin span=$s trace_id=4bf92f3577b34da6a3ce929d0e0e47$(printf %02x $i) sampled=1" \
        >"$I/trace_marker"
    sleep 0.002
    echo "end span=$s" >"$I/trace_marker"
    i=$((i + 1))
done
echo 0 >"$I/tracing_on"
echo 0 >"$I/events/sched/sched_switch/enable"
echo 0 >"$I/events/sched/sched_wakeup/enable"
{ echo "# trace_clock: $(cat "$I/trace_clock")"; cat "$I/trace"; } >"$out.trace.txt"
# trace-cmd that cannot read the buffer here (a kernel or container it does not support)
# is a missing tool to the test, not a failure of what it tests: 77 as well
if [ "${2:-}" = top ]; then
    trace-cmd extract -o "$out.dat" >/dev/null 2>&1 || exit 77
else
    trace-cmd extract -B "$name" -o "$out.dat" >/dev/null 2>&1 || exit 77
fi
[ -s "$out.dat" ] && [ -s "$out.trace.txt" ] || exit 77

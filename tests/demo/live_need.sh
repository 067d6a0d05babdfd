# shellcheck shell=bash
# live_need.sh - what a live recording of the demo service needs (sourced after tap.sh):
# root, kernel BTF, spantrace, perf, tcpdump, curl, clang, python3 with grpcio.  Skips the
# whole test with the reason when one is missing.
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (perf, tcpdump, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF (spantrace)"
[ -x "${SF_BIN:-$top/bin}/spantrace" ] || [ -x "$top/bin/spantrace" ] ||
    tap_skip_all "spantrace not built (needs clang, bpftool, libbpf-dev)"
for t in perf tcpdump curl clang python3; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
/usr/bin/python3 -c 'import grpc' 2>/dev/null || tap_skip_all "python3-grpcio not installed"

# live_record PHASE_SECONDS [VAR=VALUE...]: scripts/record-demo.sh into $tmp/rec with those
# variables in its environment; skips the whole test when the recorder cannot run here
# (exit 2), ends it with one failure when the recording failed.
live_record() {
    local phase=$1 rc=0
    shift
    env "$@" SF_BIN="$bin" "$top/scripts/record-demo.sh" "$tmp/rec" "$phase" 2>"$tmp/rec.err" || rc=$?
    if [ $rc = 2 ]; then
        tap_skip_all "recorder cannot run here: $(tail -n 1 "$tmp/rec.err")"
    elif [ $rc != 0 ]; then
        notok "record-demo.sh: exit $rc: $(tail -n 2 "$tmp/rec.err" | tr '\n' ' ')"
        tap_plan
        exit 0
    fi
}

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

# live_cause CHECK_ARGS... -- VAR=VALUE...: a recording (live_record 4.5 with the variables),
# its files ingested into $tmp/r.db (demo.pcap, the profile, markers.txt, offcpu.txt where
# recorded), spanfold report into $tmp/rep (stderr $tmp/rep.err) and check_cause.py with
# CHECK_ARGS into $tmp/why.  A live recording on a shared machine can lose its slow phase to
# the machine's load (a make check beside it slows every request alike), or keep too few slow
# requests in 4.5 s for the headline to name it: when a recording's check fails, or its
# verdict names no latency inflection, it is said, and another recording is made, three in
# all.  Returns the check's status; the files are the last recording's.
live_cause() {
    local args=() vars=() sep=0 x try perf files
    for x; do
        if [ "$x" = -- ]; then sep=1; elif [ $sep = 0 ]; then args+=("$x"); else vars+=("$x"); fi
    done
    for try in 1 2 3; do
        rm -rf "$tmp/rec" "$tmp/r.db" "$tmp/rep"
        live_record 4.5 "${vars[@]}"
        perf=$tmp/rec/perf.txt
        [ -f "$perf" ] || perf=$perf.gz
        files=("$tmp/rec/demo.pcap" "$perf" "$tmp/rec/markers.txt")
        [ ! -f "$tmp/rec/offcpu.txt" ] || files+=("$tmp/rec/offcpu.txt")
        "${SF_BIN:-$top/bin}/spanfold" ingest --db "$tmp/r.db" "${files[@]}" 2>"$tmp/ingest.err"
        "${SF_BIN:-$top/bin}/spanfold" report --db "$tmp/r.db" --out "$tmp/rep" 2>"$tmp/rep.err"
        python3 "$top/tests/demo/check_cause.py" "$tmp/rep/findings.json" "$tmp/rec/MANIFEST.json" \
            "${args[@]}" >"$tmp/why" 2>&1
        grep -q LIVE_OK "$tmp/why" && ! grep -q 'no latency inflection' "$tmp/rep.err" && return 0
        [ $try = 3 ] || sed "s/^/# recording $try: /" "$tmp/why"
    done
    return 1
}

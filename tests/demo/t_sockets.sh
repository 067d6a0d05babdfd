#!/usr/bin/env bash
# Live: the demo service recorded with spantrace's USDT span markers and spantrace
# --sockets at once (scripts/record-demo.sh with SOCKETS=1, about 12 s); the socket
# events alone, joined to the capture by 4-tuple and TCP sequence range, must place the
# spans on the threads the markers name and attribute the samples to the same spans
# (check_sockets.py), and `spanfold ingest` (and `report`, where built) must work on a
# recording made with --sockets alone.  Needs root, BPF, perf, tcpdump; skips with the
# reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="socket events on the demo service"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (perf, tcpdump, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF (spantrace)"
[ -x "$bin/spantrace" ] || tap_skip_all "spantrace not built (needs clang, bpftool, libbpf-dev)"
for t in perf tcpdump curl clang python3 sqlite3; do
    command -v $t >/dev/null || tap_skip_all "$t not installed"
done
/usr/bin/python3 -c 'import grpc' 2>/dev/null || tap_skip_all "python3-grpcio not installed"
tap_tmpdir t_sockets
export PYTHONDONTWRITEBYTECODE=1

# record + join + check: check_sockets.py's TAP lines (numbered from $1) in check.out
attempt() {
    rc=0
    rm -rf "$tmp/rec" "$tmp/markers.db" "$tmp/sockets.db"
    SOCKETS=1 SF_BIN=$bin "$top/scripts/record-demo.sh" "$tmp/rec" 4 2>"$tmp/rec.err" || rc=$?
    [ $rc = 0 ] || return $rc
    r=$tmp/rec
    for db in markers sockets; do
        "$bin/pcap2spans" --quiet --db "$tmp/$db.db" "$r/demo.pcap" &&
            "$bin/perf-fold" --quiet --db "$tmp/$db.db" "$r"/perf.txt* >/dev/null
    done
    "$bin/tracefs2spans" --quiet --db "$tmp/markers.db" "$r/markers.txt" || return 3
    "$bin/tracefs2spans" --db "$tmp/sockets.db" "$r/sockets.txt" 2>"$tmp/t2s.err" || return 4
    python3 "$top/tests/demo/check_sockets.py" "$tmp/markers.db" "$tmp/sockets.db" \
        "$r/MANIFEST.json" "$1" >"$tmp/check.out"
}
# The goals are measured on a live recording, on a machine other work may share.  Fresh
# clones' CI runs gave 86-91 % of the socket-attributed samples inside the markers' span
# where a quiet machine gives 96-98 %: on a slower machine the USDT probe's trap and the
# response write weigh more, and those are samples at the handler's edge that the markers
# leave out, which check_sockets.py now tells apart from samples on another span.  When a
# goal still misses, the recording is made again, up to three recordings in all, and the
# last one counts; the earlier ones' results are printed as comments.
for try in 1 2 3; do
    attempt 1
    rc=$?
    [ $rc = 0 ] && [ $try -lt 3 ] && grep -q '^not ok' "$tmp/check.out" || break
    sed "s/^/# recording $try: /" "$tmp/check.out" | grep -v '# next'
done
if [ $rc = 2 ]; then
    tap_skip_all "recorder cannot run here: $(tail -n 1 "$tmp/rec.err")"
fi
check_eval "record-demo.sh with SOCKETS=1, the events joined: exit 0 ($rc)" "[ $rc = 0 ]"
if [ $rc != 0 ]; then
    tail -n 5 "$tmp/rec.err" | sed 's/^/#   /'
    tap_plan
    exit 0
fi
r=$tmp/rec
check_eval "socket events recorded, none lost ($(tail -n 1 "$r/sockets.err"))" \
    "grep -q 'spantrace_sock: recv ' '$r/sockets.txt' && grep -q ', 0 dropped' '$r/sockets.err'"
sed 's/^/#   /' "$tmp/t2s.err" | grep -E 'socket events|realtime|pid ' | head -5
out=$(python3 "$top/tests/demo/check_sockets.py" "$tmp/markers.db" "$tmp/sockets.db" \
    "$r/MANIFEST.json" $((n + 1)))
printf '%s\n' "$out" | grep -v '^# next'
n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
[ -n "$n" ] && n=$((n - 1)) || { n=99; notok "check_sockets.py crashed"; }

# the front end on a recording with socket events alone
mkdir -p "$tmp/only" && cp "$r/demo.pcap" "$r"/perf.txt* "$r/sockets.txt" "$tmp/only/"
"$bin/spanfold" ingest --db "$tmp/only.db" "$tmp/only" >"$tmp/ingest.out" 2>&1
att=$(sqlite3 "$tmp/only.db" "SELECT count(*) FROM samples WHERE span_id IS NOT NULL")
check_eval "spanfold ingest on pcap + perf + sockets: exit 0, $att samples in spans" \
    "[ $? = 0 ] && [ ${att:-0} -gt 0 ]"
"$bin/spanfold" report --db "$tmp/only.db" --out "$tmp/report" >"$tmp/report.out" 2>&1
check_eval "spanfold report on it: exit 0, report.html" "[ $? = 0 ] && [ -s '$tmp/report/report.html' ]"
tap_plan

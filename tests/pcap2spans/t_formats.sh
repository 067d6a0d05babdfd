#!/usr/bin/env bash
# pcap2spans end to end: the same traffic as pcap, pcapng, nanosecond pcap and Linux
# cooked v1/v2 captures gives the same spans; the database rows; stdin; damaged input.
# Prints TAP.  Needs bin/pcap2spans on PATH (make check-pcap2spans does that).
set -u
. "$(dirname "$0")/../tap.sh"
d=$top/tests/pcap2spans/data
tap_tmpdir
p2s() { pcap2spans --quiet "$@"; }
# the times, and the duration made of them
nots() { sed -E 's/"((req|resp)_(start|end)|duration)_ns":[0-9]+,//g'; }

p2s "$d/h1-lo.pcap" >"$tmp/lo.json"; rc=$?
check_rc $rc "h1-lo.pcap reads cleanly"
[ "$(wc -l <"$tmp/lo.json")" -eq 8 ]; check_rc $? "h1-lo.pcap: 8 spans"

if command -v editcap >/dev/null; then
    editcap -F pcapng "$d/h1-lo.pcap" "$tmp/x.pcapng" && p2s "$tmp/x.pcapng" >"$tmp/ng.json"
    cmp -s "$tmp/lo.json" "$tmp/ng.json"; check_rc $? "pcapng (editcap) gives identical spans"
    editcap -F nsecpcap "$d/h1-lo.pcap" "$tmp/x.ns.pcap" && p2s "$tmp/x.ns.pcap" >"$tmp/ns.json"
    cmp -s "$tmp/lo.json" "$tmp/ns.json"; check_rc $? "nanosecond pcap (editcap) gives identical spans"
else
    skip "pcapng (editcap) gives identical spans" "editcap (tshark) not installed"
    skip "nanosecond pcap (editcap) gives identical spans" "editcap (tshark) not installed"
fi
p2s "$d/h1-lo.pcapng" >"$tmp/ng2.json"
cmp -s "$tmp/lo.json" "$tmp/ng2.json"; check_rc $? "committed pcapng copy gives identical spans"

# The cooked captures were recorded at the same time by other tcpdump processes, so
# their timestamps differ by microseconds: compare everything else exactly, and the
# timestamps within 1 ms.
for v in sll sll2; do
    p2s "$d/h1-$v.pcap" >"$tmp/$v.json"
    cmp -s <(nots <"$tmp/lo.json") <(nots <"$tmp/$v.json"); check_rc $? "Linux cooked $v: identical spans apart from timestamps"
    python3 - "$tmp/lo.json" "$tmp/$v.json" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
bad = [k for x, y in zip(a, b) for k in ("req_start_ns", "req_end_ns", "resp_start_ns", "resp_end_ns")
       if (x[k] is None) != (y[k] is None) or (x[k] is not None and abs(x[k] - y[k]) > 1000000)]
sys.exit(1 if bad or len(a) != len(b) else 0)
PY
    check_rc $? "Linux cooked $v: timestamps within 1 ms"
done

# stdin
p2s - <"$d/h1-lo.pcap" >"$tmp/stdin.json"
cmp -s "$tmp/lo.json" "$tmp/stdin.json"; check_rc $? "stdin gives identical spans"

# database
db=$tmp/t.db
pcap2spans --quiet --db "$db" "$d/h1-lo.pcap" "$d/h1-sll2.pcap"; check_rc $? "--db with two inputs"
q() { sqlite3 "$db" "$1"; }
[ "$(q "select count(*) from sources where status='complete'")" = 2 ]; check_rc $? "two complete sources rows"
[ "$(q "select count(*) from spans")" = 16 ]; check_rc $? "16 spans rows"
[ "$(q "select count(*) from connections where close is not null and app_proto='http/1.1'")" = 8 ]; check_rc $? "8 closed http/1.1 connections"
[ "$(q "select method||' '||path||' '||status from spans where span_id='a2fb4a1d1a96d312' and source_id=1")" = "GET /plain 200" ]
check_rc $? "span found by its B3 span id"
[ "$(q "select count(*) from contexts c join spans s on s.id=c.span_row where s.source_id=1 and c.valid=0 and c.error like 'traceparent:%'")" = 1 ]
check_rc $? "the malformed traceparent is kept, invalid, with its reason"
[ "$(q "select trace_id_64 from contexts where format='uber-trace-id' limit 1")" = 1 ]; check_rc $? "64-bit uber trace id flagged"
pcap2spans --db "$db" "$d/h1-lo.pcap" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && grep -q "already ingested" "$tmp/err" && [ "$(q "select count(*) from spans")" = 16 ]
check_rc $? "re-ingesting the same file is detected, not duplicated"

# a lost segment: counted on the connection and as an event
pcap2spans --quiet --db "$tmp/gap.db" "$d/h1-gap.pcap"; check_rc $? "capture with a lost segment reads"
[ "$(sqlite3 "$tmp/gap.db" "select gaps||' '||gap_bytes from connections where gaps > 0")" = "1 3056" ]
check_rc $? "connection row: 1 gap of 3056 bytes"
[ "$(sqlite3 "$tmp/gap.db" "select kind||' '||detail from connection_events where kind='gap'")" = "gap s2c 3056 bytes" ]
check_rc $? "connection_events: the gap with its direction and size"
[ "$(sqlite3 "$tmp/gap.db" "select count(*) from spans where partial=1")" = 2 ]
check_rc $? "the two exchanges touched by the gap are partial"

# damaged input: everything before the damage is kept and committed, exit 2
head -c 9000 "$d/h1-lo.pcap" >"$tmp/cut.pcap"
pcap2spans --quiet --db "$tmp/cut.db" "$tmp/cut.pcap" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ]; check_rc $? "truncated capture exits 2"
grep -qE '^pcap2spans: .*cut.pcap: packet [0-9]+ @0x[0-9a-f]+: pcap: truncated' "$tmp/err"; check_rc $? "error names file, packet and offset"
[ "$(sqlite3 "$tmp/cut.db" "select status from sources")" = partial ] && [ "$(sqlite3 "$tmp/cut.db" "select count(*) from spans")" -ge 1 ]
check_rc $? "source marked partial, spans before the cut committed"

# not a capture / unsupported link type / usage
echo "not a capture" >"$tmp/junk"
pcap2spans --quiet "$tmp/junk" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "not a capture file" "$tmp/err"; check_rc $? "garbage file: exit 2 with a message"
if command -v editcap >/dev/null; then
    editcap -T ieee-802-11 "$d/h1-lo.pcap" "$tmp/wifi.pcap" 2>/dev/null
    pcap2spans "$tmp/wifi.pcap" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 0 ] && grep -q "link type 105 .* not supported" "$tmp/err" && grep -q "unsupported: link 65" "$tmp/err"
    check_rc $? "unsupported link type: reported once, counted, not fatal"
else
    skip "unsupported link type" "editcap (tshark) not installed"
fi
pcap2spans --bogus 2>/dev/null; [ $? = 2 ]; check_rc $? "unknown option exits 2"
pcap2spans --help | grep -q -- "--keylog"; check_rc $? "--help documents --keylog"
pcap2spans --version | grep -q pcap2spans; check_rc $? "--version"
tap_plan

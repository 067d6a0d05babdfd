#!/usr/bin/env bash
# Zero receive windows as network stalls (issue #30.3): data/zero-window.pcap was recorded
# here with tcpdump on lo (snap length 200): curl --limit-rate 300k reading 30 MB from
# python3 -m http.server, so curl's receive buffer filled and its side advertised a zero
# window again and again.  pcap2spans gives each closed-then-opened window one
# connection_events row "zero_window", "stall_ns=S response" (the server's response
# waited); tshark's own analysis bounds how many there can be.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
tap_tmpdir t_zero_window
cap=$top/tests/pcap2spans/data/zero-window.pcap
"$bin/pcap2spans" --quiet --db "$tmp/z.db" "$cap"
check "zero-window.pcap: exit 0 (its truncated payloads are gaps, not errors)" [ $? -le 1 ]
q() { sqlite3 "$tmp/z.db" "$1"; }
nzw=$(q "SELECT count(*) FROM connection_events WHERE kind = 'zero_window'")
check "zero-window stalls found ($nzw)" [ "$nzw" -ge 5 ]
check_eval "each is the response waiting, with a positive stall" \
    '[ "$(q "SELECT count(*) FROM connection_events WHERE kind = '"'zero_window'"' AND detail LIKE '"'stall_ns=% response'"' AND CAST(substr(detail, 10) AS INTEGER) > 0")" = "$nzw" ]'
check_eval "their stalls add up to less than the capture lasted" \
    '[ "$(q "SELECT sum(CAST(substr(e.detail, 10) AS INTEGER)) < max(c.last_ns) - min(c.first_ns) FROM connection_events e, connections c WHERE e.kind = '"'zero_window'"'")" = 1 ]'
if command -v tshark >/dev/null; then
    zw=$(tshark -r "$cap" -Y 'tcp.analysis.zero_window' 2>/dev/null | wc -l)
    check "no more stalls than tshark's zero-window packets ($nzw <= $zw)" [ "$nzw" -le "$zw" ]
else
    skip "no more stalls than tshark's zero-window packets" "tshark not installed"
fi
"$bin/pcap2spans" --quiet --db "$tmp/h.db" "$top/samples/pcap/http1.pcap"
check_eval "a capture without a full receive buffer has none" \
    '[ "$(sqlite3 "$tmp/h.db" "SELECT count(*) FROM connection_events WHERE kind = '"'zero_window'"'")" = 0 ]'
tap_plan

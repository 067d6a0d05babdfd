#!/usr/bin/env bash
# The handshake times of a new connection (issue #30.3), against tshark's own dissection of
# the same captures: connection_events "tcp_handshake_done" is the client's first SYN to
# its ACK of the SYN-ACK, "tls_handshake_done" the ClientHello to the client's first
# protected record after the ServerHello (TLS 1.3: its Finished; TLS 1.2: the record
# after its change_cipher_spec), both "ns=N", to the microsecond of the capture.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
command -v tshark >/dev/null || tap_skip_all "tshark is needed to check against (scripts/deps.sh)"
tap_tmpdir t_handshake_times
for f in tls-nginx tls12-nginx http1; do
    cap=$top/samples/pcap/$f.pcap
    "$bin/pcap2spans" --quiet --db "$tmp/$f.db" "$cap"
    sqlite3 -separator ' ' "$tmp/$f.db" "SELECT c.client_port, e.kind, substr(e.detail, 4)
        FROM connection_events e JOIN connections c ON c.id = e.connection_id
        WHERE e.kind LIKE '%handshake_done' ORDER BY 1, 2" >"$tmp/$f.ours"
    tshark -r "$cap" -o tls.desegment_ssl_records:TRUE -T fields -e tcp.stream -e tcp.srcport \
        -e tcp.dstport -e frame.time_epoch -e tcp.flags.syn -e tcp.flags.ack -e tcp.len \
        -e tls.record.content_type -e tls.handshake.type 2>/dev/null >"$tmp/$f.ts"
    python3 - "$tmp/$f.ts" "$tmp/$f.ours" "$f" >"$tmp/$f.cmp" <<'PY'
import sys
from decimal import Decimal
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
conn = {}
for st, sp, dp, t, syn, ack, ln, ctype, hst in rows:
    c = conn.setdefault(st, {"client": None, "events": []})
    t = int(Decimal(t) * 1000000000)
    if syn == "1" and ack == "0" and c["client"] is None:
        c["client"], c["syn"] = sp, t
    c["events"].append((t, sp, syn, ack, ctype.split(","), hst.split(",")))
want = []
for c in conn.values():
    if c["client"] is None:
        continue
    cl, synack, tcp_done, ch, sh, ccs, tls_done = c["client"], False, None, None, False, False, None
    for t, sp, syn, ack, ctypes, hts in c["events"]:
        mine = sp == cl
        if not mine and syn == "1":
            synack = True
        elif mine and synack and tcp_done is None and syn == "0" and ack == "1":
            tcp_done = t - c["syn"]
        if mine and "1" in hts and ch is None:
            ch = t
        if not mine and "2" in hts:
            sh = True
        if mine and sh and tls_done is None and ch is not None:
            tls12 = "16" in hts
            if "23" in ctypes and not ccs and not tls12:
                tls_done = t - ch
            if "20" in ctypes or tls12:
                tls_done = t - ch
    if tcp_done is not None:
        want.append("%s tcp_handshake_done %d" % (cl, tcp_done))
    if tls_done is not None:
        want.append("%s tls_handshake_done %d" % (cl, tls_done))
ours = [l.strip() for l in open(sys.argv[2]) if l.strip()]
want.sort()
print("SAME" if sorted(ours) == want and ours else "DIFF", len(ours), len(want))
for a, b in zip(sorted(ours), want):
    if a != b:
        print("# ours %s, tshark %s" % (a, b))
PY
    sed 's/^/# /' "$tmp/$f.cmp"
    check_eval "$f: handshake times as tshark's, one per connection and protocol" \
        "grep -q '^SAME' '$tmp/$f.cmp'"
done
tap_plan

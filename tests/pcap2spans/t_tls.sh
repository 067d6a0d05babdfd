#!/usr/bin/env bash
# pcap2spans TLS layer on the real captures of samples/pcap: a key log with one byte changed
# gives decrypt_error and no spans; no key log gives the cleartext facts and no spans; the
# context hash is sha256(client_random || server_random || u64be(early_data_bytes)) with the
# randoms as tshark reads them; a capture cut anywhere never crashes.  TAP on stdout.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
samples=$top/samples/pcap
fail=0

notok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; shift; for d in "$@"; do echo "#   $d"; done; }

if [ ! -x "$bin" ]; then
    tap_name="TLS checks"; tap_skip_all "pcap2spans not built"
fi
if ! command -v sqlite3 >/dev/null; then
    tap_name="TLS checks"; tap_skip_all "sqlite3 not installed (scripts/deps.sh)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

q() { sqlite3 "$1" "$2"; }

# Change one hex digit (one byte) of every secret logged under LABEL.
corrupt() {
    awk -v L="$2" '$1 == L { s = $3; c = substr(s, 11, 1); c = (c == "0") ? "1" : "0";
                             $3 = substr(s, 1, 10) c substr(s, 12) } { print }' "$1"
}

for f in tls-nginx tls-0rtt-nginx tls-0rtt-s_server; do
    for label in SERVER_HANDSHAKE_TRAFFIC_SECRET CLIENT_TRAFFIC_SECRET_0; do
        corrupt "$samples/$f.keylog" "$label" >"$tmp/bad.keylog"
        if cmp -s "$tmp/bad.keylog" "$samples/$f.keylog"; then
            notok "$f: $label changed in the key log" "corrupting the key log changed nothing"
            continue
        fi
        rm -f "$tmp/w.db"
        "$bin" --quiet --db "$tmp/w.db" --keylog "$tmp/bad.keylog" "$samples/$f.pcap" 2>"$tmp/err"
        rc=$?
        nconn=$(q "$tmp/w.db" "SELECT count(*) FROM connections WHERE tls_version IS NOT NULL")
        nerr=$(q "$tmp/w.db" "SELECT count(*) FROM connections WHERE decrypted = 0 AND
                 decrypt_error LIKE 'authentication failed at record %'")
        # A request sent whole in accepted 0-RTT data, answered under the server's key,
        # never needs CLIENT_TRAFFIC_SECRET_0: its span is genuine and may be emitted before
        # the client's first record under that key (its close_notify) fails, or the
        # connection may never use the key at all (then it stays decrypted).  So is a
        # request in 0-RTT data the server rejected (delivered = 0): it opened under the
        # unchanged CLIENT_EARLY_TRAFFIC_SECRET, and the rejection is in the cleartext
        # ServerHello.  Every other span is forbidden.
        nok=$(q "$tmp/w.db" "SELECT count(*) FROM connections WHERE decrypted = 1 AND
                 '$label' = 'CLIENT_TRAFFIC_SECRET_0' AND early_data = 'accepted'")
        nspans=$(q "$tmp/w.db" "SELECT count(*) FROM spans s JOIN connections c
                 ON c.id = s.connection_id WHERE NOT ('$label' = 'CLIENT_TRAFFIC_SECRET_0'
                 AND c.early_data = 'accepted' AND s.early_data = 1)
                 AND NOT (s.early_data = 1 AND s.delivered = 0)")
        if [ "$rc" = 0 ] && [ "$nconn" -gt 0 ] && [ $((nerr + nok)) = "$nconn" ] &&
            [ "$nspans" = 0 ]; then
            ok "$f: one byte of each $label changed: $nerr connections 'authentication failed'$( \
                [ "$nok" = 0 ] || echo ", $nok with only accepted 0-RTT requests"), no span but 0-RTT ones"
        else
            notok "$f: one byte of each $label changed" "exit $rc, $nconn TLS connections," \
                "$nerr with an authentication error, $nspans spans" \
                "$(q "$tmp/w.db" "SELECT id, decrypted, decrypt_error FROM connections")"
        fi
    done
    rm -f "$tmp/n.db"
    "$bin" --quiet --db "$tmp/n.db" "$samples/$f.pcap"
    rc=$?
    nconn=$(q "$tmp/n.db" "SELECT count(*) FROM connections WHERE tls_version = 'TLS 1.3'
             AND decrypted = 0 AND decrypt_error = 'no key log' AND sni IS NOT NULL
             AND ctx_hash IS NOT NULL AND app_proto = 'tls'")
    all=$(q "$tmp/n.db" "SELECT count(*) FROM connections")
    nspans=$(q "$tmp/n.db" "SELECT count(*) FROM spans")
    if [ "$rc" = 0 ] && [ "$nconn" = "$all" ] && [ "$nspans" = 0 ]; then
        ok "$f: without a key log: $all connections with cleartext facts, 'no key log', no span"
    else
        notok "$f: without a key log" "exit $rc; $nconn of $all connections as expected; $nspans spans"
    fi
done

# TLS 1.2 (CLIENT_RANDOM): tests/pcap2spans/data/tls12-s_server.pcap, recorded on lo with
# "openssl s_server -tls1_2 -www" and "openssl s_client -tls1_2 -cipher C -keylogfile",
# one GET per suite: ECDHE-RSA-AES128-GCM-SHA256, -AES256-GCM-SHA384, -CHACHA20-POLY1305.
d=$top/tests/pcap2spans/data
rm -f "$tmp/12.db"
"$bin" --quiet --db "$tmp/12.db" --keylog "$d/tls12-s_server.keylog" "$d/tls12-s_server.pcap"
rc=$?
got=$(q "$tmp/12.db" "SELECT c.tls_version || ' ' || c.tls_cipher || ' ' || c.decrypted || ' ' ||
        s.method || ' ' || s.path || ' ' || s.status || ' ' || s.resp_bytes
        FROM spans s JOIN connections c ON c.id = s.connection_id ORDER BY c.first_ns")
want="TLS 1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 1 GET /t12-ECDHE-RSA-AES128-GCM-SHA256 200 4227
TLS 1.2 TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 1 GET /t12-ECDHE-RSA-AES256-GCM-SHA384 200 4227
TLS 1.2 TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 1 GET /t12-ECDHE-RSA-CHACHA20-POLY1305 200 4227"
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
    ok "TLS 1.2: AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 decrypt from CLIENT_RANDOM"
else
    notok "TLS 1.2 decryption" "exit $rc" "got: $got"
fi
if command -v tshark >/dev/null; then
    ts=$(tshark -r "$d/tls12-s_server.pcap" -o "tls.keylog_file:$d/tls12-s_server.keylog" \
        -Y http.request -T fields -e http.request.uri 2>/dev/null | tr '\n' ' ')
    mine=$(q "$tmp/12.db" "SELECT path FROM spans ORDER BY req_start_ns" | tr '\n' ' ')
    if [ -n "$ts" ] && [ "$ts" = "$mine" ]; then
        ok "TLS 1.2: tshark decrypts the same requests ($ts)"
    else
        notok "TLS 1.2: tshark agrees" "tshark: $ts" "pcap2spans: $mine"
    fi
else
    skip "TLS 1.2: tshark agrees" "tshark not installed"
fi

# The context hash, recomputed from tshark's view of the randoms.
if command -v tshark >/dev/null && command -v python3 >/dev/null; then
    for f in tls-nginx tls-0rtt-nginx tls-0rtt-s_server tls-mtls-fail; do
        rm -f "$tmp/h.db"
        "$bin" --quiet --db "$tmp/h.db" --keylog "$samples/$f.keylog" "$samples/$f.pcap"
        q "$tmp/h.db" "SELECT client_port, early_data_bytes, ctx_hash FROM connections
                       ORDER BY first_ns" >"$tmp/rows"
        tshark -r "$samples/$f.pcap" -Y 'tls.handshake.type == 1 || tls.handshake.type == 2' \
            -T fields -e tcp.srcport -e tcp.dstport -e tls.handshake.type \
            -e tls.handshake.random 2>/dev/null >"$tmp/randoms"
        out=$(python3 - "$tmp/rows" "$tmp/randoms" <<'EOF'
import hashlib, sys
HRR = "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c"
cr, sr = {}, {}
for line in open(sys.argv[2]):
    sp, dp, types, rnd = (line.rstrip("\n").split("\t") + ["", "", "", ""])[:4]
    for t, r in zip(types.split(","), rnd.split(",")):
        if t == "1":
            cr.setdefault(sp, r)           # the first ClientHello (HRR repeats it)
        elif t == "2" and r != HRR:
            sr[dp] = r
bad = 0
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
for port, early, h in rows:
    want = hashlib.sha256(bytes.fromhex(cr[port]) + bytes.fromhex(sr.get(port, "00" * 32))
                          + int(early).to_bytes(8, "big")).hexdigest()
    if want != h:
        bad += 1
        print("# port %s: ctx_hash %s, recomputed %s" % (port, h, want))
print("rows %d bad %d" % (len(rows), bad))
EOF
)
        case "$out" in
        *"bad 0"*) ok "$f: ctx_hash recomputed from tshark's randoms (${out##*# })" ;;
        *) notok "$f: ctx_hash recomputed from tshark's randoms" "$out" ;;
        esac
    done
else
    skip "ctx_hash recomputed from tshark's randoms" "tshark or python3 missing"
fi

# Truncation sweep: a capture cut at ~40 places per file exits 0, 1 or 2, never by a signal,
# and a damaged capture is reported with its packet.
for f in tls-nginx tls-0rtt-nginx tls-mtls-fail; do
    size=$(stat -c %s "$samples/$f.pcap")
    bad=""
    for i in $(seq 1 40); do
        cut=$(( (size * i) / 41 + (i * 7) % 13 ))
        head -c "$cut" "$samples/$f.pcap" >"$tmp/cut.pcap"
        "$bin" --quiet --ndjson --keylog "$samples/$f.keylog" "$tmp/cut.pcap" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -gt 2 ]; then
            bad="$bad cut $cut: exit $rc;"
        elif [ "$rc" = 2 ] && ! grep -q 'packet [0-9]' "$tmp/err"; then
            bad="$bad cut $cut: exit 2 without naming the packet ($(head -c 200 "$tmp/err"));"
        elif ! python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/out"
        then
            bad="$bad cut $cut: output is not NDJSON;"
        fi
    done
    if [ -z "$bad" ]; then
        ok "$f: cut at 40 places: no crash, damage named by packet, NDJSON intact"
    else
        notok "$f: truncation sweep" "$bad"
    fi
done

tap_plan
exit $fail

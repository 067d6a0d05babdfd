#!/usr/bin/env bash
# Any number of key logs: per-session SSLKEYLOGFILE dumps give a folder of hundreds.
# They are merged by client random and label: split into one file per line, with
# hundreds of decoys, they decrypt exactly what the one file does; a secret that
# disagrees with an earlier one for the same random and label is said with both
# files and lines.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
pc=$top/samples/pcap
tap_tmpdir t_keylogs

"$bin/pcap2spans" --ndjson --quiet --keylog "$pc/tls-0rtt-nginx.keylog" --keylog "$pc/tls-nginx.keylog" \
    "$pc/tls-0rtt-nginx.pcap" "$pc/tls-nginx.pcap" >"$tmp/ref.ndjson" 2>/dev/null
nref=$(grep -c '"path"' "$tmp/ref.ndjson")
check_eval "the reference decrypts spans with two key logs ($nref)" '[ "$nref" -ge 8 ]'

# one file per key log line, and 400 decoys of the same form for other randoms
mkdir -p "$tmp/k"
cat "$pc/tls-0rtt-nginx.keylog" "$pc/tls-nginx.keylog" | split -l 1 -a 4 - "$tmp/k/session-"
for i in $(seq 1 400); do
    printf 'CLIENT_TRAFFIC_SECRET_0 %064x %064x\n' "$i" "$((i * 7919))" >"$tmp/k/decoy-$i.log"
done
nfiles=$(ls "$tmp/k" | wc -l)
args=()
for f in "$tmp/k"/*; do args+=(--keylog "$f"); done
"$bin/pcap2spans" --ndjson --quiet "${args[@]}" "$pc/tls-0rtt-nginx.pcap" "$pc/tls-nginx.pcap" \
    >"$tmp/many.ndjson" 2>"$tmp/many.err"; rc=$?
check_eval "$nfiles --keylog files: exit 0 (rc $rc)" '[ $rc -eq 0 ]'
check "$nfiles key log files decrypt exactly what one does" cmp -s "$tmp/ref.ndjson" "$tmp/many.ndjson"

# the same again, the key logs given twice over: agreeing duplicates say nothing
"$bin/pcap2spans" --ndjson --quiet "${args[@]}" "${args[@]}" "$pc/tls-nginx.pcap" \
    >/dev/null 2>"$tmp/dup.err"
check_eval "duplicate secrets that agree are merged silently" '! grep -q differs "$tmp/dup.err"'

# a secret that disagrees with an earlier one: said with both places, the later used
line=$(grep -m1 CLIENT_TRAFFIC_SECRET_0 "$pc/tls-nginx.keylog")
label=${line%% *}; rnd=${line#* }; rnd=${rnd%% *}
printf '# a wrong copy\n%s %s %064x\n' "$label" "$rnd" 1 >"$tmp/wrong.log"
"$bin/pcap2spans" --ndjson --quiet --keylog "$pc/tls-nginx.keylog" --keylog "$tmp/wrong.log" \
    "$pc/tls-nginx.pcap" >/dev/null 2>"$tmp/conf.err"
want_line=$(grep -n -m1 CLIENT_TRAFFIC_SECRET_0 "$pc/tls-nginx.keylog" | cut -d: -f1)
check_eval "a conflicting secret names both files and lines" \
    'grep -q "wrong.log:2: CLIENT_TRAFFIC_SECRET_0 for client random ${rnd:0:16}... differs from the one in $pc/tls-nginx.keylog:$want_line" "$tmp/conf.err"'

# spanfold ingest of a folder of 1,000 key logs and the captures
mkdir -p "$tmp/f"
cp "$tmp/k"/* "$tmp/f/"
for i in $(seq 401 $((1000 - nfiles + 400))); do
    printf 'CLIENT_TRAFFIC_SECRET_0 %064x %064x\n' "$i" "$i" >"$tmp/f/decoy-$i.log"
done
cp "$pc/tls-0rtt-nginx.pcap" "$pc/tls-nginx.pcap" "$tmp/f/"
nk=$(ls "$tmp/f"/*.log "$tmp/f"/session-* | wc -l)
"$bin/spanfold" ingest --db "$tmp/f.db" "$tmp/f" 2>"$tmp/f.err"; rc=$?
check_eval "spanfold ingest of a folder with $nk key logs: exit 0 (rc $rc)" '[ $rc -eq 0 ] && [ "$nk" -eq 1000 ]'
got=$(sqlite3 "$tmp/f.db" "SELECT count(*) FROM spans WHERE path IS NOT NULL" 2>/dev/null)
check_eval "it decrypts as many spans as the reference ($got of $nref)" '[ "$got" = "$nref" ]'
tap_plan

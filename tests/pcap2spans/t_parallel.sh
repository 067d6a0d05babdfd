#!/usr/bin/env bash
# pcap2spans -j N (parallel ingest: a thread per input, one writer in input order) gives
# what -j 1 gives: the same NDJSON bytes, stderr and exit status, and the same database
# rows, ids included, on the captures of samples/ and tests/data (TLS decrypted with
# their key logs), with an unreadable input, a damaged one and a non-capture among
# fine ones, with a duplicate input, and under --strict; spanfold ingest -j too.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
kl=()
for f in "$top"/samples/pcap/*.keylog; do kl+=(--keylog "$f"); done
good=("$top"/samples/pcap/*.pcap* "$top"/samples/demo/demo.pcap "$top"/tests/data/demo2/demo.pcap
      "$top"/tests/pcap2spans/data/*.pcap*)
head -c 5000 "$top/samples/pcap/http1.pcap" >"$tmp/damaged.pcap"
echo "not a capture" >"$tmp/text.pcap"
bad=("$top/samples/pcap/grpc.pcap" "$tmp/damaged.pcap" "$tmp/missing.pcap" "$tmp/text.pcap"
     "$top/samples/pcap/h2c.pcap")
dup=("$top/samples/pcap/http1.pcap" "$top/samples/pcap/grpc.pcap" "$top/samples/pcap/http1.pcap")

q="select id, kind, path, bytes, sha256, clock, tool, status, error, units, bad_units
   from sources; select * from connections; select * from spans;
   select * from contexts; select * from connection_events"
# run NAME J [ARGS...]: NDJSON, stderr, exit status, then the database dump
run() {
    local name=$1 j=$2
    shift 2
    "$bin/pcap2spans" --ndjson "${kl[@]}" -j "$j" "$@" >"$tmp/$name.$j.out" 2>"$tmp/$name.$j.err"
    echo $? >"$tmp/$name.$j.rc"
    "$bin/pcap2spans" --db "$tmp/$name.$j.db" "${kl[@]}" -j "$j" "$@" >/dev/null 2>"$tmp/$name.$j.dberr"
    echo $? >>"$tmp/$name.$j.rc"
    sqlite3 "$tmp/$name.$j.db" "$q" >"$tmp/$name.$j.dump"
}
same() { # same NAME J: -j J wrote what -j 1 wrote
    local x
    for x in out err rc dberr dump; do cmp -s "$tmp/$1.1.$x" "$tmp/$1.$2.$x" || return 1; done
}
for set in good bad dup; do
    eval 'inputs=("${'$set'[@]}")'
    for j in 1 2 4; do run "$set" "$j" "${inputs[@]}"; done
done

check_eval "the sample captures give spans" '[ "$(wc -l <"$tmp/good.1.out")" -gt 1000 ]'
check_eval "and TLS ones are decrypted" 'grep -q "\"decrypted\":1" "$tmp/good.1.out"'
for j in 2 4; do
    check "samples: -j $j = -j 1 (NDJSON, stderr, exit, database)" same good "$j"
    check "bad inputs among good: -j $j = -j 1" same bad "$j"
    check "a duplicate input: -j $j = -j 1" same dup "$j"
done
check_eval "bad inputs: exit 2 both ways" '[ "$(tr "\n" " " <"$tmp/bad.4.rc")" = "2 2 " ]'
check_eval "bad inputs: each named on stderr" 'grep -q "damaged.pcap: packet" "$tmp/bad.4.err" &&
    grep -q "missing.pcap" "$tmp/bad.4.err" && grep -q "text.pcap: .*not a capture" "$tmp/bad.4.err"'
check_eval "bad inputs: the fine ones after them are written" \
    '[ "$(grep -c "\"proto\":\"h2\"" "$tmp/bad.4.out")" -gt 0 ]'
check_eval "a duplicate input is skipped: 2 sources" \
    '[ "$(sqlite3 "$tmp/dup.4.db" "select count(*) from sources")" = 2 ]'
check_eval "and said so" 'grep -q "already ingested as source 1; skipped" "$tmp/dup.4.dberr"'

for j in 1 3; do
    "$bin/pcap2spans" --ndjson --strict -j "$j" "${bad[@]}" >"$tmp/strict.$j.out" 2>"$tmp/strict.$j.err"
    echo $? >>"$tmp/strict.$j.err"
done
check_eval "--strict stops at the same input (-j 3 = -j 1)" \
    'cmp -s "$tmp/strict.1.out" "$tmp/strict.3.out" && cmp -s "$tmp/strict.1.err" "$tmp/strict.3.err"'
check_eval "--strict: nothing after the damaged input" '! grep -q "\"proto\":\"h2\"" "$tmp/strict.3.out"'
"$bin/pcap2spans" -j 0 "${good[0]}" >/dev/null 2>"$tmp/j0.err"
check_eval "-j 0 is a usage error" '[ $? -eq 2 ] && grep -q "\-j: expected 1..64" "$tmp/j0.err"'

mkdir "$tmp/incident"
cp "$top"/samples/pcap/tls-nginx.pcap "$top"/samples/pcap/tls-nginx.keylog \
    "$top"/samples/pcap/grpc.pcap "$top"/samples/pcap/http1.pcapng "$tmp/incident/"
for j in 1 2; do
    "$bin/spanfold" ingest --quiet --db "$tmp/in.$j.db" -j "$j" "$tmp/incident" 2>"$tmp/in.$j.err"
    echo $? >>"$tmp/in.$j.err"
    sqlite3 "$tmp/in.$j.db" "$q" >"$tmp/in.$j.dump"
done
check_eval "spanfold ingest -j 2 = -j 1 (database, stderr, exit)" \
    'cmp -s "$tmp/in.1.dump" "$tmp/in.2.dump" && cmp -s "$tmp/in.1.err" "$tmp/in.2.err"'
check_eval "spanfold ingest -j 2 wrote the captures' spans" \
    '[ "$(sqlite3 "$tmp/in.2.db" "select count(distinct source_id) from spans")" = 3 ]'
"$bin/spanfold" ingest --db "$tmp/x.db" -j x "$tmp/incident" 2>"$tmp/jx.err"
check_eval "spanfold ingest -j x is a usage error" '[ $? -eq 2 ] && grep -q "\-j" "$tmp/jx.err"'
tap_plan

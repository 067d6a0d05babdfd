#!/usr/bin/env bash
# The TCP sequence ranges pcap2spans stores per HTTP/1.1 span (spans.req_seq_start ..
# resp_seq_end, for joining socket events) against tshark's own TCP dissection: every
# request and response that travelled in one segment has exactly that segment's bytes,
# and the messages of a keep-alive connection follow each other byte for byte.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
if ! command -v tshark >/dev/null || ! command -v sqlite3 >/dev/null; then
    tap_skip_all "tshark and the sqlite3 shell are needed (scripts/deps.sh)"
fi
tap_tmpdir t_seq
for cap in http1.pcap http1.pcapng ipv6.pcap; do
    f=$top/samples/pcap/$cap
    db=$tmp/${cap%%.*}-$n.db
    "$bin" --quiet --db "$db" "$f" 2>"$tmp/err"
    check_eval "$cap: pcap2spans --db exits 0" "[ $? -eq 0 ]"
    # messages alone in one segment according to tshark (a pipelined segment holding
    # several is left out): seq_raw, seq_raw + len
    for kind in request response; do
        field=$([ $kind = request ] && echo http.request.method || echo http.response.code)
        tshark -r "$f" -Y "http.$kind && !tcp.reassembled_in && !tcp.segments" -T fields \
            -e tcp.seq_raw -e tcp.len -e "$field" 2>/dev/null |
            awk '$3 !~ /,/ { printf "%.0f|%.0f\n", $1, ($1 + $2) % 4294967296 }' |
            sort -u >"$tmp/ts"
        col=$([ $kind = request ] && echo req || echo resp)
        sqlite3 "$db" "SELECT ${col}_seq_start || '|' || ${col}_seq_end FROM spans
                       WHERE ${col}_seq_start IS NOT NULL" | sort -u >"$tmp/ours"
        want=$(wc -l <"$tmp/ts")
        got=$(comm -12 "$tmp/ts" "$tmp/ours" | wc -l)
        check_eval "$cap: all $want one-segment ${kind}s have tshark's bytes (found $got)" \
            "[ $want -gt 0 ] && [ $got -eq $want ]"
    done
    # keep-alive: a request starts where the previous one on its connection ended
    gaps=$(sqlite3 "$db" "SELECT count(*) FROM spans a JOIN spans b ON b.connection_id =
           a.connection_id AND b.stream_id = a.stream_id + 1 WHERE a.proto = 'http/1.1'
           AND a.req_seq_end IS NOT NULL AND b.req_seq_start IS NOT NULL
           AND (b.req_seq_start != a.req_seq_end OR b.resp_seq_start != a.resp_seq_end)")
    pairs=$(sqlite3 "$db" "SELECT count(*) FROM spans a JOIN spans b ON b.connection_id =
           a.connection_id AND b.stream_id = a.stream_id + 1 WHERE a.proto = 'http/1.1'")
    check_eval "$cap: $pairs consecutive exchanges, none with a hole or overlap ($gaps)" \
        "[ $gaps -eq 0 ]"
done
tap_plan

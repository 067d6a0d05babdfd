# demo stage: pcap2spans - the demo service's packets (demo.pcap) into the database: one
# span per HTTP/1.1 exchange, HTTP/2 stream and gRPC call, with every trace context found;
# then the protocol samples of samples/pcap/ (TLS, 0-RTT, IPv6, ...) as NDJSON beside it,
# to show what else the decoder reads (not in the database: other times, other services).
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
p2s_out=$out/pcap2spans
if [ ! -x "$bin/pcap2spans" ]; then
    stage "pcap2spans: not built, skipped"
else
    mkdir -p "$p2s_out"
    p2s_rc=0
    "$bin/pcap2spans" --db "$db" "$samples/demo.pcap" 2>"$p2s_out/summary.txt" || p2s_rc=$?
    if [ "$p2s_rc" -le 1 ]; then
        sqlite3 -header -column "$db" \
            "SELECT proto, count(*) AS spans, sum(partial) AS partial,
                    count(trace_id) AS with_trace_id, sum(sampled IS NULL) AS deferred,
                    round(avg(resp_end_ns - req_start_ns) / 1e6, 3) AS avg_ms
               FROM spans GROUP BY proto;
             SELECT format, count(*) AS contexts, sum(valid = 0) AS invalid
               FROM contexts GROUP BY format ORDER BY 2 DESC;" \
            >"$p2s_out/tables.txt" 2>&1 || true
        stage "pcap2spans: $(sqlite3 "$db" 'SELECT count(*) FROM spans') spans from $samples/demo.pcap; per protocol and context format in $p2s_out/tables.txt"
    else
        stage "pcap2spans: failed (exit $p2s_rc), see $p2s_out/summary.txt"
    fi
    p2s_zoo=$top/samples/pcap
    if ls "$p2s_zoo"/*.pcap >/dev/null 2>&1; then
        p2s_keys=()
        for k in "$p2s_zoo"/*.keylog; do [ -e "$k" ] && p2s_keys+=(--keylog "$k"); done
        "$bin/pcap2spans" --quiet --ndjson "${p2s_keys[@]}" "$p2s_zoo"/*.pcap "$p2s_zoo"/*.pcapng \
            >"$p2s_out/samples-pcap.ndjson" 2>/dev/null || true
        stage "pcap2spans: the protocol samples of $p2s_zoo: $(grep -c . "$p2s_out/samples-pcap.ndjson") spans in $p2s_out/samples-pcap.ndjson"
    fi
fi

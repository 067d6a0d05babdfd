# demo stage: pcap2spans - the sample captures (samples/pcap/) into the database: one span
# per HTTP/1.1 exchange, HTTP/2 stream and gRPC call, with every trace context found.
# Sourced by scripts/demo.sh with $top $bin $out $db set.
p2s_dir=$top/samples/pcap
if [ ! -x "$bin/pcap2spans" ]; then
    stage "pcap2spans: not built, skipped"
elif ! ls "$p2s_dir"/*.pcap >/dev/null 2>&1; then
    stage "pcap2spans: no captures in $p2s_dir, skipped"
else
    mkdir -p "$out/pcap2spans"
    p2s_keys=()
    for k in "$p2s_dir"/*.keylog; do [ -e "$k" ] && p2s_keys+=(--keylog "$k"); done
    p2s_rc=0
    "$bin/pcap2spans" --db "$db" "${p2s_keys[@]}" "$p2s_dir"/*.pcap "$p2s_dir"/*.pcapng \
        2>"$out/pcap2spans/summary.txt" || p2s_rc=$?
    "$bin/pcap2spans" --quiet "$p2s_dir"/*.pcap >"$out/pcap2spans/spans.ndjson" 2>/dev/null || true
    if [ "$p2s_rc" -le 1 ]; then
        stage "pcap2spans: $(grep -c . "$out/pcap2spans/spans.ndjson") spans in $out/pcap2spans/spans.ndjson; summary in $out/pcap2spans/summary.txt"
        if command -v sqlite3 >/dev/null; then
            sqlite3 -header -column "$db" \
                "SELECT proto, count(*) AS spans, sum(partial) AS partial,
                        count(trace_id) AS with_trace_id,
                        round(avg(resp_end_ns - req_start_ns) / 1e6, 3) AS avg_ms
                   FROM spans GROUP BY proto;
                 SELECT format, count(*) AS contexts, sum(valid = 0) AS invalid
                   FROM contexts GROUP BY format ORDER BY 2 DESC;" \
                >"$out/pcap2spans/tables.txt" 2>&1 || true
            stage "pcap2spans: spans per protocol and contexts per format in $out/pcap2spans/tables.txt"
        fi
    else
        stage "pcap2spans: failed (exit $p2s_rc), see $out/pcap2spans/summary.txt"
    fi
fi

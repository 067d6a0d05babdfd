# demo stage: inflect - inflection points (per endpoint: latency percentiles, error rate,
# throughput, sampled share), sampling drift against the rate the service was configured
# with (MANIFEST.json's rate_initial), and the clock fit, as the report.
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
if [ ! -x "$bin/inflect" ]; then
    stage "inflect: not built, skipped"
elif [ "$(sqlite3 "$db" 'SELECT count(*) FROM spans WHERE req_start_ns IS NOT NULL' 2>/dev/null || echo 0)" = 0 ]; then
    stage "inflect: no spans in $db (pcap2spans fills them), skipped"
else
    # 1 s windows: the recording lasts 45 s
    inflect_rate=$(manifest rate_initial)
    inflect_rc=0
    "$bin/inflect" --db "$db" --out "$out/report" --window 1s --by endpoint \
        ${inflect_rate:+--expect-rate "$inflect_rate"} --quiet || inflect_rc=$?
    if [ "$inflect_rc" -le 1 ]; then
        stage "inflect: report in $out/report/report.html (Markdown: report.md, JSON: summary.json, per-window data: windows.csv)"
    else
        stage "inflect: failed with status $inflect_rc"
    fi
fi

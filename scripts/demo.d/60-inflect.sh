# demo stage: inflect - inflection points, sampling drift and clock drift of the
# spans the earlier stages put into the database.  Sourced by scripts/demo.sh
# with $top $bin $out $db set.
if [ ! -x "$bin/inflect" ]; then
    stage "inflect: not built, skipped"
elif [ ! -f "$db" ] || ! command -v sqlite3 >/dev/null ||
    [ "$(sqlite3 "$db" 'SELECT count(*) FROM spans WHERE req_start_ns IS NOT NULL' 2>/dev/null || echo 0)" = 0 ]; then
    stage "inflect: no spans in $db yet (pcap2spans fills them), skipped"
else
    # 250 ms windows: the bundled captures last seconds, not hours
    inflect_rc=0
    "$bin/inflect" --db "$db" --out "$out/report" --window 250ms --quiet || inflect_rc=$?
    if [ "$inflect_rc" -le 1 ]; then
        stage "inflect: report in $out/report/report.html (Markdown: report.md, JSON: summary.json)"
    else
        stage "inflect: failed with status $inflect_rc"
    fi
fi

# demo stage: tracefs2spans - kernel span markers of the recorded service in samples/tracefs/,
# joined with its packets (pcap2spans) and its perf samples (perf-fold --db): the clock fit
# between tracefs (monotonic) and pcap (realtime) time, and the CPU samples of each span.
# Sourced by scripts/demo.sh with $top $bin $out $db set.
t2s_dir=$top/samples/tracefs
if [ ! -x "$bin/tracefs2spans" ]; then
    stage "tracefs2spans: not built, skipped"
elif [ ! -f "$t2s_dir/trace.txt" ]; then
    stage "tracefs2spans: $t2s_dir/trace.txt missing, skipped"
else
    mkdir -p "$out/tracefs"
    # the packets and perf samples recorded with these markers (a second ingest of the
    # same file is detected by its sha256 and skipped)
    [ -x "$bin/pcap2spans" ] && "$bin/pcap2spans" --quiet --db "$db" "$t2s_dir/http.pcap" || true
    [ -x "$bin/perf-fold" ] && "$bin/perf-fold" --quiet --db "$db" "$t2s_dir/perf.txt" >/dev/null || true
    t2s_rc=0
    "$bin/tracefs2spans" --db "$db" "$t2s_dir/trace.txt" 2>"$out/tracefs/tracefs2spans.log" || t2s_rc=$?
    "$bin/tracefs2spans" --quiet "$t2s_dir/trace.txt" >"$out/tracefs/markers.ndjson" 2>/dev/null || true
    if [ "$t2s_rc" -le 1 ]; then
        stage "tracefs2spans: $(grep -c . "$out/tracefs/markers.ndjson") marker/interval records in $out/tracefs/markers.ndjson; log in $out/tracefs/tracefs2spans.log"
        if command -v sqlite3 >/dev/null; then
            sqlite3 -header -column "$db" \
                "SELECT from_clock, to_clock, offset_ns, skew_ppm, points, residual_ns, method FROM clock_fits;
                 SELECT s.span_id, count(*) AS cpu_samples, sp.path FROM samples s
                   LEFT JOIN spans sp ON sp.span_id = s.span_id
                  WHERE s.span_id IS NOT NULL GROUP BY s.span_id ORDER BY 2 DESC LIMIT 5;" \
                >"$out/tracefs/join.txt" 2>&1 || true
            stage "tracefs2spans: clock fit and the busiest spans in $out/tracefs/join.txt"
        fi
    else
        stage "tracefs2spans: failed with status $t2s_rc (see $out/tracefs/tracefs2spans.log)"
    fi
fi

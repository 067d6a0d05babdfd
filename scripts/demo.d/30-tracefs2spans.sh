# demo stage: tracefs2spans - the span markers spantrace recorded (markers.txt, CLOCK_MONOTONIC)
# joined with the packets (CLOCK_REALTIME): the clock fit from the span ids both carry, the
# span intervals on the service's threads, and every perf sample inside one gets its span.
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
t2s_out=$out/tracefs
if [ ! -x "$bin/tracefs2spans" ]; then
    stage "tracefs2spans: not built, skipped"
else
    mkdir -p "$t2s_out"
    t2s_rc=0
    "$bin/tracefs2spans" --db "$db" "$samples/markers.txt" 2>"$t2s_out/tracefs2spans.log" || t2s_rc=$?
    if [ "$t2s_rc" -le 1 ]; then
        t2s_true=$(manifest true_offset_ns)
        sqlite3 -header -column "$db" \
            "SELECT from_clock, to_clock, offset_ns, offset_ns - ${t2s_true:-0} AS minus_true_ns,
                    skew_ppm, points, residual_ns, method FROM clock_fits;
             SELECT count(*) AS samples, count(span_id) AS in_a_span FROM samples;
             SELECT s.span_id, count(*) AS cpu_samples, sp.proto, sp.path FROM samples s
               LEFT JOIN spans sp ON sp.span_id = s.span_id
              WHERE s.span_id IS NOT NULL GROUP BY s.span_id ORDER BY 2 DESC LIMIT 5;" \
            >"$t2s_out/join.txt" 2>&1 || true
        stage "tracefs2spans: $(sqlite3 "$db" 'SELECT count(*) FROM span_intervals') span intervals, $(sqlite3 "$db" 'SELECT count(span_id) FROM samples') samples inside spans; clock fit (vs the true offset the recorder measured) and the busiest spans in $t2s_out/join.txt"
    else
        stage "tracefs2spans: failed with status $t2s_rc (see $t2s_out/tracefs2spans.log)"
    fi
fi

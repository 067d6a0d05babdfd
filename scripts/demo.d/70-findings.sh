# demo stage: findings - what the earlier stages found, in a few lines, next to what the
# recording's manifest says happened (read from report/summary.json with sqlite3's JSON
# functions, and from the folded stacks and the database).  Written to out/findings.txt.
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
fd_sum=$out/report/summary.json
if [ ! -s "$fd_sum" ]; then
    stage "findings: no report/summary.json, skipped"
else
    {
        fd_t0=$(sqlite3 :memory: "SELECT json_extract(readfile('$fd_sum'), '\$.t0_ns')")
        fd_win=$(sqlite3 :memory: "SELECT json_extract(readfile('$fd_sum'), '\$.window_s')")
        for fd_k in slow_start_realtime_ns rate_change_realtime_ns; do
            fd_v=$(manifest $fd_k)
            [ -n "$fd_v" ] && echo "manifest: ${fd_k%_realtime_ns} began at t = $(awk -v a="$fd_v" -v b="$fd_t0" 'BEGIN { printf "%.1f", (a - b) / 1e9 }') s"
        done
        echo "latency inflection points (step or ramp, by pelt):"
        sqlite3 -separator ' ' :memory: \
            "SELECT '  ' || json_extract(s.value, '\$.name') || ': ' || json_extract(c.value, '\$.kind')
                    || ' at t = ' || (json_extract(c.value, '\$.index') * $fd_win) || ' s, '
                    || round(json_extract(c.value, '\$.before'), 1) || ' -> '
                    || round(json_extract(c.value, '\$.after'), 1) || ' ms'
               FROM json_each(readfile('$fd_sum'), '\$.series') s,
                    json_each(s.value, '\$.change_points') c
              WHERE json_extract(s.value, '\$.name') LIKE '%/p50'
                AND json_extract(c.value, '\$.kind') <> 'spike'"
        echo "sampling drift (kept share of traces against the configured rate):"
        sqlite3 -separator ' ' :memory: \
            "SELECT '  ' || json_extract(d.value, '\$.group') || ': ' ||
                    CASE WHEN json_extract(d.value, '\$.alarm') THEN
                        json_extract(d.value, '\$.direction') || ' from about t = ' ||
                        (json_extract(d.value, '\$.onset_window') * $fd_win) || ' s (alarm at ' ||
                        (json_extract(d.value, '\$.alarm_window') * $fd_win) || ' s), ' ||
                        round(json_extract(d.value, '\$.rate_before'), 2) || ' -> ' ||
                        round(json_extract(d.value, '\$.rate_after'), 2)
                    ELSE 'no drift (' || round(json_extract(d.value, '\$.rate_before'), 2) || ' kept)' END
               FROM json_each(readfile('$fd_sum'), '\$.drift') d
              WHERE json_extract(d.value, '\$.trials') > 0"
        if [ -s "$out/folded/slowest-5pct.folded" ]; then
            echo "CPU of the slowest 5 % of requests, top functions (self):"
            awk '{ c = $NF; n = split(substr($0, 1, length($0) - length(c) - 1), f, ";")
                   w[f[n]] += c; t += c }
                 END { for (k in w) printf "  %5.1f %%  %s\n", 100 * w[k] / t, k }' \
                "$out/folded/slowest-5pct.folded" | sort -rn | head -n 3
        fi
        if [ -s "$out/folded/slow-diff.md" ]; then
            echo "slow phase against normal phase, top regression (perf-fold diff):"
            grep -m 1 '^| `' "$out/folded/slow-diff.md" | sed 's/^/  /'
        fi
        echo "clock fit monotonic -> realtime against the true offset:"
        sqlite3 -separator ' ' "$db" \
            "SELECT '  offset ' || offset_ns || ' ns, ' || (offset_ns - $(manifest true_offset_ns)) ||
                    ' ns from the truth, ' || points || ' span pairs' FROM clock_fits"
    } >"$out/findings.txt" 2>&1
    stage "findings ($out/findings.txt):"
    sed 's/^/    /' "$out/findings.txt"
fi

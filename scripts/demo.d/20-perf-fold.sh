# demo stage: perf-fold - the recorded service's perf samples (samples/tracefs/perf.txt) as
# folded stacks and into the database, the same samples folded per span (with the packets
# and span markers of that recording, in a private database), and the CI gate on
# samples/perf/ (a rerun passes, a real regression fails).
# Sourced by scripts/demo.sh with $top $bin $out $db set.
pf_out=$out/perf-fold
pf_trace=$top/samples/tracefs
pf_gate=$top/samples/perf
if [ ! -x "$bin/perf-fold" ]; then
    stage "perf-fold: not built, skipped"
elif [ ! -f "$pf_trace/perf.txt" ]; then
    stage "perf-fold: $pf_trace/perf.txt missing, skipped"
else
    mkdir -p "$pf_out"
    if "$bin/perf-fold" --quiet --db "$db" "$pf_trace/perf.txt" >"$pf_out/cpu.folded"; then
        stage "perf-fold: $(wc -l <"$pf_out/cpu.folded") distinct stacks in $pf_out/cpu.folded; samples in $db"
    else
        stage "perf-fold: folding $pf_trace/perf.txt failed"
    fi
    if [ -x "$bin/pcap2spans" ] && [ -x "$bin/tracefs2spans" ] && [ -f "$pf_trace/trace.txt" ]; then
        pf_db=$pf_out/spans.db
        rm -f "$pf_db" "$pf_db-wal" "$pf_db-shm"
        "$bin/pcap2spans" --quiet --db "$pf_db" "$pf_trace/http.pcap" >/dev/null 2>&1 || true
        "$bin/perf-fold" --quiet --db "$pf_db" "$pf_trace/perf.txt" >/dev/null || true
        "$bin/tracefs2spans" --quiet --db "$pf_db" "$pf_trace/trace.txt" >/dev/null 2>&1 || true
        "$bin/perf-fold" --quiet --db "$pf_db" --group-by span >"$pf_out/per-span.folded" || true
        "$bin/perf-fold" --quiet --db "$pf_db" --group-by path >"$pf_out/per-path.folded" || true
        pf_work=$(grep -c '^\[span [0-9a-f]*.*;handle_work' "$pf_out/per-span.folded" || true)
        stage "perf-fold: per-span fold in $pf_out/per-span.folded ($pf_work span stacks reach handle_work), per path in $pf_out/per-path.folded"
        if [ -x "$bin/flamegraph" ]; then
            "$bin/flamegraph" "$pf_out/per-span.folded" >"$pf_out/per-span.svg" 2>/dev/null &&
                stage "perf-fold: flame graph with one root per span: $pf_out/per-span.svg"
        fi
    fi
    if [ -f "$pf_gate/base.perf.txt" ] && [ -f "$pf_gate/slow.perf.txt" ]; then
        for pf_v in base rerun slow; do
            "$bin/perf-fold" --quiet "$pf_gate/$pf_v.perf.txt" >"$pf_out/$pf_v.folded" || true
        done
        pf_rc=0
        "$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$pf_out/gate-rerun.md" \
            "$pf_out/base.folded" "$pf_out/rerun.folded" >"$pf_out/rerun.diff" || pf_rc=$?
        stage "perf-fold: gate frame>+5pt on a rerun: exit $pf_rc (0 = pass); $pf_out/gate-rerun.md"
        pf_rc=0
        "$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$pf_out/gate-slow.md" \
            "$pf_out/base.folded" "$pf_out/slow.folded" >"$pf_out/slow.diff" || pf_rc=$?
        stage "perf-fold: gate frame>+5pt on the slow variant: exit $pf_rc (1 = regression caught); $pf_out/gate-slow.md"
    fi
fi

# demo stage: perf-fold - the demo service's perf samples into the database and folded
# (stackcollapse-perf.pl format), then the CI gate on samples/perf/ (a rerun passes, a
# real regression fails).
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
pf_out=$out/perf-fold
pf_gate=$top/samples/perf
if [ ! -x "$bin/perf-fold" ]; then
    stage "perf-fold: not built, skipped"
else
    mkdir -p "$pf_out" "$out/folded"
    # perf.txt may be gzipped: perf-fold reads it on stdin then
    if perf_cat | "$bin/perf-fold" --quiet --db "$db" - >"$out/folded/all.folded"; then
        stage "perf-fold: $(sqlite3 "$db" 'SELECT count(*) FROM samples') samples in the database, $(wc -l <"$out/folded/all.folded") distinct stacks in $out/folded/all.folded"
    else
        stage "perf-fold: folding $samples/perf.txt failed"
    fi
    if [ -f "$pf_gate/base.perf.txt" ] && [ -f "$pf_gate/slow.perf.txt" ]; then
        for pf_v in base rerun slow; do
            # --samples: the gate's intervals count samples, not summed periods
            "$bin/perf-fold" --quiet --samples "$pf_gate/$pf_v.perf.txt" >"$pf_out/$pf_v.folded" || true
        done
        # --summary appends (for CI step summaries): start this run's files afresh
        rm -f "$pf_out/gate-rerun.md" "$pf_out/gate-slow.md"
        pf_rc=0
        "$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$pf_out/gate-rerun.md" \
            "$pf_out/base.folded" "$pf_out/rerun.folded" >"$pf_out/rerun.diff" || pf_rc=$?
        stage "perf-fold: CI gate frame>+5pt on a rerun: exit $pf_rc (0 = pass); $pf_out/gate-rerun.md"
        pf_rc=0
        "$bin/perf-fold" diff --fail-if 'frame>+5pt' --summary "$pf_out/gate-slow.md" \
            "$pf_out/base.folded" "$pf_out/slow.folded" >"$pf_out/slow.diff" || pf_rc=$?
        stage "perf-fold: CI gate frame>+5pt on a slow build: exit $pf_rc (1 = regression caught); $pf_out/gate-slow.md"
    fi
fi

# demo stage: perf-fold --group-by - the CPU samples of the database folded per span group
# (one root frame per group): per endpoint (path), gRPC method, sampling decision, span;
# one file per endpoint; and for the slow endpoint the samples of its spans before and
# after the slow phase began (MANIFEST.json's slow_start_monotonic_ns, the clock of the
# perf samples), with perf-fold diff between them.
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
fg_dir=$out/folded
if [ ! -x "$bin/perf-fold" ]; then
    stage "fold groups: perf-fold not built, skipped"
elif [ "$(sqlite3 "$db" 'SELECT count(span_id) FROM samples')" = 0 ]; then
    stage "fold groups: no sample is inside a span (tracefs2spans attributes them), skipped"
else
    mkdir -p "$fg_dir"
    "$bin/perf-fold" --quiet --db "$db" --group-by path >"$fg_dir/by-endpoint.folded"
    for g in grpc_method sampled span; do
        "$bin/perf-fold" --quiet --db "$db" --group-by "$g" >"$fg_dir/by-$g.folded"
    done
    rm -f "$fg_dir"/endpoint-*.folded
    # one file per endpoint, without the group's root frame: "[path GET /api/search];..."
    awk -v dir="$fg_dir" '/^\[path / {
            i = index($0, "];"); root = substr($0, 7, i - 7); rest = substr($0, i + 2)
            n = split(root, w, " "); f = w[n]; gsub(/[^A-Za-z0-9]+/, "-", f); sub(/^-/, "", f)
            print rest > (dir "/endpoint-" f ".folded") }' "$fg_dir/by-endpoint.folded"
    stage "fold groups: per endpoint $fg_dir/by-endpoint.folded ($(ls "$fg_dir"/endpoint-*.folded | wc -l) files endpoint-*.folded), per gRPC method by-grpc_method.folded, kept vs dropped by-sampled.folded, per span by-span.folded"

    # the promise of the join: the CPU of exactly the requests that were slow (the slowest
    # 5 % by latency on the wire, request first byte to response last byte)
    sqlite3 -separator ' ' "$db" \
        "WITH lat AS (SELECT span_id, resp_end_ns - req_start_ns AS ns FROM spans
                       WHERE span_id IS NOT NULL AND resp_end_ns IS NOT NULL),
              cut AS (SELECT ns FROM lat ORDER BY ns DESC
                       LIMIT 1 OFFSET (SELECT count(*) / 20 FROM lat))
         SELECT st.frames, sum(s.period) FROM samples s JOIN stacks st ON st.id = s.stack_id
          WHERE s.span_id IN (SELECT span_id FROM lat WHERE ns >= (SELECT ns FROM cut))
          GROUP BY st.frames ORDER BY st.frames" >"$fg_dir/slowest-5pct.folded"
    stage "fold groups: the CPU of the slowest 5 % of requests: $fg_dir/slowest-5pct.folded"

    fg_slow_at=$(manifest slow_start_monotonic_ns)
    fg_ep=$(manifest slow_endpoint)
    if [ -n "$fg_slow_at" ] && [ -n "$fg_ep" ]; then
        # folded lines straight from the database: the slow endpoint's spans, one phase
        fg_phase() {
            sqlite3 -separator ' ' "$db" \
                "SELECT st.frames, sum(s.period) FROM samples s JOIN stacks st ON st.id = s.stack_id
                  WHERE s.span_id IN (SELECT span_id FROM spans WHERE path = '$fg_ep')
                    AND s.ts_ns $1 $fg_slow_at
                  GROUP BY st.frames ORDER BY st.frames"
        }
        fg_phase '<' >"$fg_dir/slow-endpoint-normal.folded"
        fg_phase '>=' >"$fg_dir/slow-endpoint-slow.folded"
        # -n: the phases differ in length, compare shares; diff exits 1 only with --fail-if
        rm -f "$fg_dir/slow-diff.md" # --summary appends
        "$bin/perf-fold" diff -n --summary "$fg_dir/slow-diff.md" \
            "$fg_dir/slow-endpoint-normal.folded" "$fg_dir/slow-endpoint-slow.folded" \
            >"$fg_dir/slow-diff.diff" || true
        stage "fold groups: $fg_ep before/after the slow phase: $fg_dir/slow-endpoint-{normal,slow}.folded; diff $fg_dir/slow-diff.diff, top regressions $fg_dir/slow-diff.md"
    fi
fi

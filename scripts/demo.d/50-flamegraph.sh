# demo stage: flamegraph - the folded stacks of the earlier stages as interactive SVGs in
# out/flamegraph/ (with d3-flame-graph JSON and speedscope files beside them), and the
# differential graphs: the slow endpoint's slow phase against its normal phase, and
# perf-fold's CI-gate profiles (base against the slow build).
# Sourced by scripts/demo.sh with $top $bin $out $db $samples set.
fg_out=$out/flamegraph
if [ ! -x "$bin/flamegraph" ]; then
    stage "flamegraph: not built, skipped"
else
    mkdir -p "$fg_out"
    fg_ep=$(manifest slow_endpoint)
    # file|title: what each graph shows
    fg_n=0
    for fg_spec in \
        "all|every CPU sample of the demo service" \
        "by-endpoint|CPU per endpoint: one root per span group (HTTP path or gRPC method)" \
        "by-grpc_method|CPU per gRPC method" \
        "by-sampled|CPU of spans the sampler kept (1) and dropped (0)" \
        "by-span|CPU per span: one root per span id" \
        "slowest-5pct|CPU of the slowest 5 % of requests (latency on the wire)" \
        "slow-endpoint-normal|$fg_ep before the slow phase" \
        "slow-endpoint-slow|$fg_ep in the slow phase" \
        $(cd "$out/folded" 2>/dev/null && ls endpoint-*.folded 2>/dev/null | sed 's/\.folded$/|/'); do
        fg_name=${fg_spec%%|*} fg_title=${fg_spec#*|}
        fg_f=$out/folded/$fg_name.folded
        [ -s "$fg_f" ] || continue
        if [ -z "$fg_title" ]; then
            fg_title="CPU of the spans of one endpoint (${fg_name#endpoint-})"
        fi
        if "$bin/flamegraph" --quiet --title "$fg_title" --countname ns "$fg_f" >"$fg_out/$fg_name.svg"; then
            "$bin/flamegraph" --quiet --format json "$fg_f" >"$fg_out/$fg_name.json" || true
            "$bin/flamegraph" --quiet --format speedscope "$fg_f" >"$fg_out/$fg_name.speedscope.json" || true
            fg_n=$((fg_n + 1))
        else
            stage "flamegraph: $fg_f gave no graph (see $fg_out/$fg_name.svg)"
        fi
    done
    stage "flamegraph: $fg_n flame graphs in $fg_out/ (open an .svg in a browser: hover, click to zoom, Ctrl-F to search), with .json (d3-flame-graph) and .speedscope.json"
    # differential graphs from perf-fold diff's "stack before after" lines: red grew, blue shrank
    if [ -s "$out/folded/slow-diff.diff" ]; then
        "$bin/flamegraph" --quiet --countname ns \
            --title "$fg_ep: slow phase against normal phase (red grew, blue shrank; normalised)" \
            "$out/folded/slow-diff.diff" >"$fg_out/slow-diff.svg" &&
            stage "flamegraph: differential graph, $fg_ep slow vs normal phase: $fg_out/slow-diff.svg"
    fi
    if [ -s "$out/perf-fold/slow.diff" ]; then
        "$bin/flamegraph" --quiet --title "perf-fold CI gate: base -> slow build (red grew, blue shrank)" \
            "$out/perf-fold/slow.diff" >"$fg_out/gate-base-vs-slow.svg" &&
            stage "flamegraph: differential graph of the CI-gate profiles: $fg_out/gate-base-vs-slow.svg"
    fi
fi

# demo stage: flamegraph - every folded file the earlier stages wrote (out/*.folded,
# out/*/*.folded) drawn as an interactive SVG in out/flamegraph/, with its d3-flame-graph
# JSON and speedscope file beside it; a differential graph of perf-fold's base vs slow
# profiles when both exist.  Without earlier folds, the bundled real profile
# samples/folded/file-io.folded is drawn.
# Sourced by scripts/demo.sh with $top $bin $out $db set.
fg_out=$out/flamegraph
if [ ! -x "$bin/flamegraph" ]; then
    stage "flamegraph: not built, skipped"
else
    mkdir -p "$fg_out"
    fg_inputs=()
    for fg_f in "$out"/*.folded "$out"/*/*.folded; do
        [ -s "$fg_f" ] && fg_inputs+=("$fg_f")
    done
    [ ${#fg_inputs[@]} -eq 0 ] && fg_inputs=("$top/samples/folded/file-io.folded")
    fg_n=0
    for fg_f in "${fg_inputs[@]}"; do
        fg_name=$(basename "$fg_f" .folded)
        fg_dir=$(basename "$(dirname "$fg_f")")
        [ "$fg_dir" != "$(basename "$out")" ] && [ "$fg_dir" != folded ] && fg_name=$fg_dir-$fg_name
        if "$bin/flamegraph" --quiet --title "$fg_name" "$fg_f" >"$fg_out/$fg_name.svg"; then
            "$bin/flamegraph" --quiet --format json "$fg_f" >"$fg_out/$fg_name.json" || true
            "$bin/flamegraph" --quiet --format speedscope "$fg_f" >"$fg_out/$fg_name.speedscope.json" || true
            fg_n=$((fg_n + 1))
        else
            stage "flamegraph: $fg_f gave no graph (see $fg_out/$fg_name.svg)"
        fi
    done
    stage "flamegraph: $fg_n flame graphs in $fg_out/ (open the .svg in a browser: hover, click to zoom, Ctrl-F to search), with .json (d3-flame-graph) and .speedscope.json"
    fg_base=$out/perf-fold/base.folded fg_slow=$out/perf-fold/slow.folded
    if [ -s "$fg_base" ] && [ -s "$fg_slow" ]; then
        # difffolded.pl's join: "stack before after" for every stack of either profile
        awk 'FNR == 1 { f++ }
             { c = $NF; s = substr($0, 1, length($0) - length(c) - 1); k[s] = 1
               if (f == 1) x[s] += c; else y[s] += c }
             END { for (s in k) print s, x[s] + 0, y[s] + 0 }' "$fg_base" "$fg_slow" >"$fg_out/base-vs-slow.diff.folded"
        "$bin/flamegraph" --quiet --title "base -> slow (red grew, blue shrank)" \
            "$fg_out/base-vs-slow.diff.folded" >"$fg_out/base-vs-slow.svg" &&
            stage "flamegraph: differential graph of perf-fold's base vs slow: $fg_out/base-vs-slow.svg"
    fi
fi

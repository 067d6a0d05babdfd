# cases.sh - shared by t_ref.sh and mkref.sh: reads cases.txt and runs one renderer.
# Sourced; needs $here (tests/flamegraph) and sets CORPUS, DATA.
top=$(cd "$here/../.." && pwd)
CORPUS=$top/tests/data/corpus/flamegraph
DATA=$here/data

# case_input SPEC TMPDIR: print the path of the input file for SPEC.
case_input() {
    local spec=$1 tmp=$2
    case $spec in
    diff:*)
        spec=${spec#diff:}
        local a b
        a=$(eval echo "${spec%%:*}")
        b=$(eval echo "${spec#*:}")
        # difffolded.pl: "stack count1 count2" for every stack in either file
        awk 'FNR == 1 { f++ }
             { c = $NF; s = substr($0, 1, length($0) - length(c) - 1); k[s] = 1
               if (f == 1) x[s] += c; else y[s] += c }
             END { for (s in k) print s, x[s] + 0, y[s] + 0 }' "$a" "$b" >"$tmp/diff.in"
        echo "$tmp/diff.in" ;;
    *) eval echo "$spec" ;;
    esac
}

# case_run TOOL... : run a renderer on one case (uses name input args tmp); the SVG goes to
# $tmp/out.svg and, with --cp, the palette written to $tmp/run/palette.map.
case_run() {
    local in
    in=$(case_input "$input" "$tmp") || return 1
    rm -rf "$tmp/run" && mkdir -p "$tmp/run"
    case " $args " in *" --cp "*) cp "$DATA/palette.map" "$tmp/run/palette.map" ;; esac
    eval "set -- $args"
    # exit 1: lines were skipped and said (the edge cases have some); the graph is drawn
    (cd "$tmp/run" && "${TOOL[@]}" "$@" "$in" >"$tmp/out.svg" 2>"$tmp/err.txt")
    [ $? -le 1 ]
}

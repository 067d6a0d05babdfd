#!/usr/bin/env bash
# man.sh BIN TOOL [SUBCOMMAND...]: a man page in roff on stdout, made from the tool's own
# --help text, which is the one description of its options (the man page and --help can
# never disagree).  `make man` runs it for every tool; `make install` installs the pages.
#
# The --help layout it reads: "usage:" lines first (continuations indented); prose
# paragraphs; option lines "  -x, --opt ARG   text" with continuation lines indented
# further; an unindented line ending in ':' starts a subsection; "Exit..." lines are the
# exit status.
set -euo pipefail
bin=$1 tool=$2
shift 2
version=$("$bin" --version 2>/dev/null | head -n 1 | awk '{ print $NF }')
declare -A summary=(
    [spanfold]="the incident workflow: ingest artefacts, stacks of chosen spans, report, CI gate"
    [pcap2spans]="packet captures to spans with their trace contexts"
    [perf-fold]="perf script output to folded stacks; per-span folds; profile diff gate"
    [tracefs2spans]="tracefs and spantrace text to span markers, thread intervals and clock fits"
    [flamegraph]="folded stacks to an interactive SVG flame graph"
    [inflect]="change points, sampling drift and clock drift over span series"
    [spanfold-export]="spans and span-attributed samples as OTLP, Zipkin, Chrome trace, speedscope, pprof"
    [spantrace]="span markers and socket events from a live service, with libbpf"
)
roff() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/' -e 's/-/\\-/g'; }

# One --help text in roff.  $1: the heading level for its own sections (SH or SS).
convert() {
    awk -v H="$1" '
    function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); if (s ~ /^[.'"'"']/) s = "\\&" s; return s }
    function flush_para() { if (para != "") { print ".PP"; print esc(para); para = "" } }
    BEGIN { mode = "usage" }
    mode == "usage" && /^(usage|Usage):/ { sub(/^(usage|Usage): */, ""); print ".SH SYNOPSIS"; print ".nf"; print esc($0); next }
    mode == "usage" && /^[ \t]+[^ \t]/ && NR > 1 { sub(/^[ \t]+/, ""); print esc($0); next }
    mode == "usage" { print ".fi"; print ".SH DESCRIPTION"; mode = "body" }
    /^[ \t]*$/ { flush_para(); if (verb) { print ".fi"; verb = 0 } inopt = 0; next }
    /^(Exit|exit)( status)?:/ { flush_para(); print "." H " EXIT STATUS"; sub(/^[^:]*: */, ""); para = $0; inopt = 0; next }
    /^[^ \t].*:$/ { flush_para(); if (verb) { print ".fi"; verb = 0 } s = $0; sub(/:$/, "", s); print "." H " " esc(s); inopt = 0; next }
    /^ +[^ ]/ {
        match($0, /^ +/); ind = RLENGTH
        line = substr($0, ind + 1)
        if (inopt && ind > optind + 2 && line !~ /[^ ]  +[^ ]/ || inopt && ind > optind + 6) { print esc(line); next }
        # an item: "-x, --opt ARG   text" or "name   text" (two or more blanks between)
        if (line ~ /^-/ || match(line, /[^ ]  +[^ ]/)) {
            flush_para(); if (verb) { print ".fi"; verb = 0 }
            if (match(line, /  +/)) {
                opt = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH)
            } else { opt = line; text = "" }
            print ".TP"; print "\\fB" esc(opt) "\\fR"
            if (text != "") print esc(text)
            inopt = 1; optind = ind; next
        }
        flush_para(); if (!verb) { print ".nf"; verb = 1 }
        print esc(line); inopt = 0; next
    }
    { s = $0; sub(/^ +/, "", s); para = (para == "" ? s : para " " s) }
    END { flush_para(); if (mode == "usage" || verb) print ".fi" }'
}

printf '.TH %s 1 "%s" "spanfold %s" "spanfold"\n' "$(echo "$tool" | tr a-z A-Z | roff)" \
    "$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)" "$version"
printf '.SH NAME\n%s \\- %s\n' "$(echo "$tool" | roff)" "$(echo "${summary[$tool]:-spanfold tool}" | roff)"
"$bin" --help | convert SH
for sub in "$@"; do
    printf '.SH "%s %s"\n' "$(echo "$tool" | roff)" "$(echo "$sub" | roff)"
    "$bin" "$sub" --help 2>&1 | convert SS | sed -e 's/^\.SH SYNOPSIS$/.SS Synopsis/' -e 's/^\.SH DESCRIPTION$//'
done
printf '.SH SEE ALSO\n'
others=()
for t in spanfold pcap2spans perf-fold tracefs2spans flamegraph inflect spanfold-export spantrace; do
    [ "$t" = "$tool" ] || others+=("\\fB$(echo "$t" | roff)\\fR(1)")
done
(IFS=,; echo "${others[*]}" | sed 's/,/, /g')
printf '.PP\nThe reference with examples: docs/%s.md in the spanfold sources (installed under share/doc/spanfold).\n' "$(echo "$tool" | roff)"

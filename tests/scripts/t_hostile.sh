#!/usr/bin/env bash
# Outputs stay inert and well formed whatever the captured strings hold (issue #20).
# One list of hostile strings (tests/scripts/hostile.py: Markdown, HTML, CSV, XML and
# gnuplot attacks, quotes, control bytes, invalid UTF-8, long names, RTL overrides) goes
# through pcap2spans -> database -> inflect --out (by endpoint, service and gRPC method),
# inflect --series (as column names), spanfold-export, flamegraph and perf-fold diff --summary, from folded stacks whose
# frames are those strings, and perf-fold --inline with modules named like addr2line
# options.  Asserted: every SVG parses (xmllint) and the HTML too, every JSON parses,
# Markdown rendered by cmark-gfm (GitHub's parser) has no heading, link, image or raw
# HTML from the data and no table row with a forged cell, CSV reads back with the right
# record count and no formula, no group loses its section or its chart, addr2line never
# reads a file named by the data, and no file appears where a command would have written
# one.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
here=$top/tests/scripts
command -v xmllint >/dev/null || tap_skip_all "xmllint missing (Debian: libxml2-utils)"
[ -x "$bin/pcap2spans" ] && [ -x "$bin/inflect" ] || tap_skip_all "the tools are not built (make)"
tap_tmpdir hostile
cd "$tmp" || exit 2
chk() { PYTHONDONTWRITEBYTECODE=1 python3 "$here/hostile_check.py" "$@"; }
nstr=$(python3 "$here/hostile.py" list | wc -l)

PYTHONDONTWRITEBYTECODE=1 python3 "$here/hostile.py" pcap h.pcap
"$bin/pcap2spans" --quiet --db h.db h.pcap
check "pcap2spans reads the capture (exit 0)" test $? -eq 0
got=$(sqlite3 h.db 'select count(*) from spans')
check "every exchange is a span ($got of $((3 * nstr)))" test "$got" -eq $((3 * nstr))

# Markdown as GitHub renders it; without cmark-gfm those checks are skips
md_check() { # NAME FILE.md DIR H1 H2 H3
    local name=$1 md=$2
    shift 2
    if ! command -v cmark-gfm >/dev/null; then
        skip "$name" "cmark-gfm missing (Debian: cmark-gfm)"
        return
    fi
    cmark-gfm -e table -e autolink -e strikethrough -e tagfilter "$md" >"$md.html"
    check "$name" chk md "$md" "$md.html" "$@"
}

xml_all() { # every FILE parses as XML
    local f bad=0
    : >xml.err
    for f in "$@"; do xmllint --noout "$f" 2>>xml.err || bad=1; done
    [ "$bad" -eq 0 ] || { head -n 6 xml.err | cut -c 1-200 | sed 's/^/# /'; return 1; }
}

html_ok() { # xmllint's HTML parser has nothing to say about FILE
    local e
    e=$(xmllint --html --noout "$1" 2>&1)
    [ -z "$e" ] || { printf '%s\n' "$e" | head -n 3 | sed 's/^/# /'; return 1; }
}

for by in endpoint service grpc_method; do
    r=r-$by
    "$bin/inflect" --db h.db --by "$by" --window 1s --out "$r" >/dev/null 2>"$r.err"
    check "inflect --by $by: exit 0" test $? -eq 0
    check "inflect --by $by: no chart refused (stderr empty)" test ! -s "$r.err"
    [ -s "$r.err" ] && head -n 3 "$r.err" | cut -c 1-200 | sed 's/^/# /'
    groups=$(chk groups "$r/summary.json")
    charts=$(ls "$r" | grep -c '^chart-.*\.svg$')
    check "inflect --by $by: each of the $groups groups has its chart ($charts)" \
        test "$charts" -ge "$groups"
    check "inflect --by $by: every SVG chart is XML" xml_all "$r"/*.svg
    check "inflect --by $by: report.html parses" html_ok "$r/report.html"
    check "inflect --by $by: summary.json parses" chk json "$r/summary.json"
    # one level-1 heading, a level-2 one per group and the clock section, none deeper
    md_check "inflect --by $by: report.md has only its own headings, images, no HTML" \
        "$r/report.md" "$r" 1 $((groups + 1)) 0
    nwin=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["windows"])' \
        "$r/summary.json")
    check "inflect --by $by: windows.csv has $groups x $nwin records, $groups names" \
        chk csv "$r/windows.csv" $((groups * nwin)) "$groups"
done

# --series: the names are CSV column names
PYTHONDONTWRITEBYTECODE=1 python3 "$here/hostile.py" series ser.csv
"$bin/inflect" --series ser.csv --out r-series >/dev/null 2>r-series.err
check "inflect --series: exit 0, nothing on stderr" test $? -eq 0 -a ! -s r-series.err
charts=$(ls r-series | grep -c '^chart-.*\.svg$')
check "inflect --series: each of the $nstr series has its chart ($charts)" test "$charts" -eq "$nstr"
check "inflect --series: every SVG chart is XML" xml_all r-series/*.svg
check "inflect --series: report.html parses" html_ok r-series/report.html
md_check "inflect --series: report.md has only its own headings, images, no HTML" \
    r-series/report.md r-series 1 "$nstr" 0

# a chart gnuplot fails to draw fails the report: it never just goes missing
mkdir fakegp && printf '#!/bin/sh\ncat >/dev/null\nexit 1\n' >fakegp/gnuplot && chmod +x fakegp/gnuplot
PATH=$tmp/fakegp:$PATH "$bin/inflect" --series ser.csv --out r-fail >/dev/null 2>r-fail.err
check_eval "inflect: a chart gnuplot cannot draw gives exit 2 and says so" \
    "[ $? -eq 2 ] && grep -q 'chart(s) could not be drawn' r-fail.err"

for fmt in otlp zipkin chrome speedscope; do
    "$bin/spanfold-export" --db h.db --all --format "$fmt" -o "x.$fmt" 2>/dev/null
    check "spanfold-export --format $fmt: exit 0 and JSON" chk json "x.$fmt"
done

PYTHONDONTWRITEBYTECODE=1 python3 "$here/hostile.py" folded .
"$bin/flamegraph" --title "$(printf 'T<]]>\001')" new.folded >fg.svg 2>/dev/null
check "flamegraph: the SVG is XML" xml_all fg.svg
"$bin/flamegraph" --format json new.folded >fg.json 2>/dev/null
check "flamegraph --format json parses" chk json fg.json

"$bin/perf-fold" diff --summary sum.md --top 100 --fail-if 'frame>+90pt' base.folded new.folded \
    >d.folded 2>/dev/null
check "perf-fold diff: exit 0 (the gate holds)" test $? -eq 0
md_check "perf-fold diff --summary: only its own headings, no link, image or HTML" sum.md . 0 1 2
# the printable frames of at most 200 bytes come back exactly, each in its own cell
frames=$(python3 - "$here" <<'PY'
import sys, unicodedata
sys.path.insert(0, sys.argv[1])
import hostile
for s in hostile.STRINGS:
    f = s.replace(b";", b":").replace(b"\n", b" ").replace(b"\r", b" ")
    try:
        t = f.decode("utf-8")
    except UnicodeDecodeError:
        continue
    if len(f) <= 200 and not any(unicodedata.category(c) in ("Cc", "Cf", "Cn") for c in t):
        print(f.hex())
PY
)
if command -v cmark-gfm >/dev/null; then
    # shellcheck disable=SC2086  # one argument per frame
    check "perf-fold diff --summary: each frame is one cell's code, byte for byte" \
        chk cells sum.md.html $frames
else
    skip "perf-fold diff --summary: each frame is one cell's code" "cmark-gfm missing"
fi

# addr2line and nm read "@FILE" as options, and "-..." is an option
echo SECRETTOKEN >secret
printf 'prog  1  1.000000:    1 cpu-clock: \n\t  151b f+0x2b (@%s/secret)\n\t  151b g+0x2b (-e%s/secret)\n\t  151b h+0x2b (%s/missing)\n\n' \
    "$tmp" "$tmp" "$tmp" >p.txt
"$bin/perf-fold" --inline p.txt >p.folded 2>p.err
check "perf-fold --inline: no option file read from the data" \
    test "$(grep -c SECRETTOKEN p.folded p.err | awk -F: '{s += $2} END {print s}')" -eq 0
check_eval "perf-fold --inline: the stack is kept" "grep -qx 'prog;h;g;f 1' p.folded"
# a real module named "@pf" is still looked up (as ./@pf)
if command -v addr2line >/dev/null && command -v nm >/dev/null; then
    cp "$bin/perf-fold" @pf
    a=$(nm @pf | awk '$3 == "perf_fold_main" {print $1}')
    printf 'prog  1  1.000000:    1 cpu-clock: \n\t  %s zzz+0x0 (@pf)\n\n' "$a" >q.txt
    "$bin/perf-fold" --inline q.txt >q.folded 2>&1
    check_eval "perf-fold --inline: a module named @pf is read as ./@pf" \
        "grep -qx 'prog;perf_fold_main 1' q.folded"
else
    skip "perf-fold --inline: a module named @pf is read as ./@pf" "no addr2line or nm (binutils)"
fi

check_eval "no command ran: no file gp-pwned, sh-pwned or bang-pwned was made" \
    "[ -z \"\$(find . -name gp-pwned -o -name sh-pwned -o -name bang-pwned)\" ]"
tap_plan

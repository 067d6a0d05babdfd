#!/usr/bin/env bash
# spanfold stacks end to end on the demo database (scripts/demo.sh builds it from
# samples/demo/): the slow endpoint's slowest spans burn their CPU in the function
# MANIFEST.json names; totals equal the same sums done in SQL here; the lines are
# perf-fold's; the differential form is perf-fold diff -n's; errors exit 2 and say
# where or why.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
s=$top/samples/demo
tap_name="spanfold stacks on the demo database"
[ -f "$s/MANIFEST.json" ] || tap_skip_all "samples/demo not recorded"
[ -x "$bin/spanfold" ] || tap_skip_all "spanfold not built"
command -v sqlite3 >/dev/null || tap_skip_all "needs the sqlite3 shell (Debian sqlite3)"
tap_tmpdir sf_stacks
export LC_ALL=C
sf() { "$bin/spanfold" stacks --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }
total() { awk '{ s += $NF } END { printf "%.0f\n", s + 0 }' "$1"; }
# the leaf frame that holds the most of a folded file's counts
top_leaf() { awk '{ c = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); a[f[n]] += c }
                  END { for (k in a) if (a[k] > m) { m = a[k]; t = k }; print t }' "$1"; }
manifest() { sed -n "s/^ \{1,2\}\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$s/MANIFEST.json" | head -n 1; }

SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/demo" >"$tmp/demo.log" 2>&1
check "scripts/demo.sh builds the database" [ -s "$tmp/demo/spans.db" ]
db=$tmp/demo/spans.db
slow_ep=$(manifest slow_endpoint)
slow_fn=$(manifest slow_function)
echo "# manifest: slow endpoint $slow_ep, slow function $slow_fn"

# -- the slowest spans of the slow endpoint
sf --where "endpoint = \"$slow_ep\" and duration > p95" >"$tmp/slow"
check "--where 'endpoint = \"$slow_ep\" and duration > p95' exits 0" [ $? -eq 0 ]
got=$(top_leaf "$tmp/slow")
echo "# top function of those spans: $got"
check "their top function is the manifest's slow function" [ "$got" = "$slow_fn" ]

# the same set in plain SQL: nearest-rank p95 of every span's duration
nd=$(q "SELECT count(*) FROM spans WHERE resp_end_ns - req_start_ns IS NOT NULL")
k=$(((nd * 95 + 99) / 100))
p95=$(q "SELECT d FROM (SELECT resp_end_ns - req_start_ns AS d FROM spans WHERE d IS NOT NULL)
         ORDER BY d LIMIT 1 OFFSET $((k - 1))")
want=$(q "SELECT sum(period) FROM samples WHERE span_id IN (SELECT span_id FROM spans
           WHERE path = '$slow_ep' AND resp_end_ns - req_start_ns > $p95)")
echo "# p95 of $nd durations: $p95 ns; SQL sum of periods: $want"
check "the folded total equals the SQL sum ($want)" [ "$(total "$tmp/slow")" = "$want" ]
check "--folded gives the same lines" \
    cmp -s "$tmp/slow" <(sf --folded --where "endpoint = \"$slow_ep\" and duration > p95")

# -- every attributed sample: perf-fold's lines without the span root
sf >"$tmp/all"
"$bin/perf-fold" -q --db "$db" --group-by span | grep -v '^\[unattributed\];' |
    sed 's/^\[span [^]]*\];//' |
    awk '{ c = $NF; $NF = ""; sub(/ $/, ""); a[$0] += c } END { for (k in a) print k, a[k] }' |
    sort >"$tmp/pf"
check "no selection: perf-fold --group-by span's lines, merged over spans" cmp -s <(tail -n +2 "$tmp/all") "$tmp/pf"
check "the first line says the weight: ns of cpu-clock" [ "$(head -n 1 "$tmp/all")" = "# weight: ns" ]
sf --weight samples >"$tmp/alls"
check_eval "--weight samples: the same stacks, counted in samples ($(tail -n +2 "$tmp/alls" | awk '{ s += $NF } END { print s }'))" \
    '[ "$(head -n 1 "$tmp/alls")" = "# weight: samples" ] &&
     [ "$(tail -n +2 "$tmp/alls" | awk "{ s += \$NF } END { print s }")" = "$(q "SELECT count(*) FROM samples WHERE span_id IS NOT NULL")" ] &&
     cmp -s <(tail -n +2 "$tmp/alls" | sed "s/ [0-9]*$//") <(tail -n +2 "$tmp/all" | sed "s/ [0-9]*$//")'

want=$(q "SELECT sum(period) FROM samples WHERE span_id IS NOT NULL")
check "no selection: every attributed sample ($want)" [ "$(total "$tmp/all")" = "$want" ]

# -- shorthands against SQL
sf --slowest 5% >"$tmp/s5"
k=$(((nd * 5 + 99) / 100))
cut=$(q "SELECT d FROM (SELECT resp_end_ns - req_start_ns AS d FROM spans WHERE d IS NOT NULL)
         ORDER BY d DESC LIMIT 1 OFFSET $((k - 1))")
want=$(q "SELECT sum(period) FROM samples WHERE span_id IN (SELECT span_id FROM spans
           WHERE resp_end_ns - req_start_ns >= $cut)")
check "--slowest 5% totals the $k slowest spans' samples ($want)" [ "$(total "$tmp/s5")" = "$want" ]
tid=$(q "SELECT sp.trace_id FROM samples s JOIN spans sp ON sp.span_id = s.span_id
         WHERE sp.trace_id IS NOT NULL GROUP BY sp.trace_id ORDER BY count(*) DESC LIMIT 1")
want=$(q "SELECT sum(period) FROM samples WHERE span_id IN
           (SELECT span_id FROM spans WHERE trace_id = '$tid')")
sf --trace-id "$(echo "$tid" | tr a-f A-F)" >"$tmp/tr"
check "--trace-id (upper case) totals that trace's samples ($want)" [ "$(total "$tmp/tr")" = "$want" ]
sf --grpc-method demo.Catalog/Lookup >"$tmp/g"
check "--grpc-method: the gRPC handler's stacks" grep -q ';work_lookup' "$tmp/g"
check "--grpc-method: none of the HTTP handlers'" [ "$(grep -c ';work_search\|;work_checkout' "$tmp/g")" = 0 ]

# -- time windows: the slow phase began at the manifest's slow_start_realtime_ns
at=$(manifest slow_start_realtime_ns)
iso=$(date -u -d "@$((at / 1000000000))" +%Y-%m-%dT%H:%M:%S).$(printf '%09d' $((at % 1000000000)))Z
share() { awk -v f="$2" '{ t += $NF } index($0, ";" f) { s += $NF } END { printf "%d\n", t ? 100 * s / t : -1 }' "$1"; }
sf --where "endpoint = \"$slow_ep\"" --during "$iso.." >"$tmp/after"
sf --where "endpoint = \"$slow_ep\"" --during "..$iso" >"$tmp/before"
echo "# $slow_fn share of $slow_ep: $(share "$tmp/before" "$slow_fn") % before $iso, $(share "$tmp/after" "$slow_fn") % after"
check "--during: $slow_fn is over half of $slow_ep's CPU after the slow start" [ "$(share "$tmp/after" "$slow_fn")" -gt 50 ]
check "--during: and under a tenth before it" [ "$(share "$tmp/before" "$slow_fn")" -lt 10 ]
want=$(q "SELECT sum(period) FROM samples WHERE span_id IN (SELECT span_id FROM spans
           WHERE path = '$slow_ep' AND req_start_ns >= $at)")
check "--during ISO..: the SQL sum of the spans that started after it ($want)" [ "$(total "$tmp/after")" = "$want" ]
hms=$(date -u -d "@$((at / 1000000000))" +%H:%M:%S).$(printf '%09d' $((at % 1000000000)))
hms1=$(date -u -d "@$((at / 1000000000 + 3600))" +%H:%M:%S).$(printf '%09d' $((at % 1000000000)))
sf --where "endpoint = \"$slow_ep\"" --during "$hms.." >"$tmp/tod"
check "--during HH:MM:SS.frac.. (UTC, the capture's day): the same as the ISO time" cmp -s "$tmp/tod" "$tmp/after"
TZ=UTC-1 "$bin/spanfold" stacks --db "$db" --tz local --where "endpoint = \"$slow_ep\"" --during "$hms1.." >"$tmp/tod1"
check "--tz local (TZ=UTC-1): an hour later on the clock, the same spans" cmp -s "$tmp/tod1" "$tmp/after"
sf --tz +01:00 --where "endpoint = \"$slow_ep\"" --during "$hms1.." >"$tmp/tod2"
check "--tz +01:00: the same" cmp -s "$tmp/tod2" "$tmp/after"
t0=$(q "SELECT min(t) FROM (SELECT min(first_ns) AS t FROM connections UNION ALL SELECT min(req_start_ns) FROM spans)")
rel=$(((at - t0) / 1000000))
sf --where "endpoint = \"$slow_ep\"" --during "+${rel}ms.." >"$tmp/rel"
want=$(q "SELECT sum(period) FROM samples WHERE span_id IN (SELECT span_id FROM spans
           WHERE path = '$slow_ep' AND req_start_ns >= $t0 + $rel * 1000000)")
check "--during +${rel}ms..: relative to the capture start ($want)" [ "$(total "$tmp/rel")" = "$want" ]

# -- differential
sf --where "endpoint = \"$slow_ep\"" --during "$iso.." --vs "endpoint = \"$slow_ep\"" \
    --during "..$iso" >"$tmp/diff"
check "--vs EXPR --during: perf-fold diff -n of the two sides, byte for byte" \
    cmp -s <(tail -n +2 "$tmp/diff") <("$bin/perf-fold" diff -n "$tmp/before" "$tmp/after" 2>/dev/null)
sf --where "endpoint = \"$slow_ep\" and duration > p95" --vs rest >"$tmp/rest"
check "--vs rest: three columns" awk 'NR > 1 && (NF < 3 || $(NF - 1) !~ /^[0-9]+$/) { exit 1 }' "$tmp/rest"
after=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$tmp/rest")
before=$(awk '{ s += $(NF - 1) } END { printf "%.0f\n", s }' "$tmp/rest")
lines=$(wc -l <"$tmp/rest")
check "--vs rest: the selection's column totals the selection ($after)" [ "$after" = "$(total "$tmp/slow")" ]
check_eval "--vs rest: the rest normalised to it (within one count a line)" \
    '[ "$before" -le "$after" ] && [ $((after - before)) -le "$lines" ]'
sf --vs "endpoint = \"$slow_ep\" and duration > p95" --folded >/dev/null
check "--vs EXPR with no selection of its own exits 0" [ $? -eq 0 ]

# -- flame graphs
sf --where "endpoint = \"$slow_ep\" and duration > p95" -o "$tmp/slow.svg"
check "-o slow.svg exits 0" [ $? -eq 0 ]
check "the SVG is a flame graph with $slow_fn" grep -q "<title>$slow_fn (" "$tmp/slow.svg"
check "its title names the selection" grep -q '<text id="title"[^>]*>CPU of --where endpoint = &quot;' "$tmp/slow.svg"
check "the same SVG as bin/flamegraph draws from the lines" \
    cmp -s "$tmp/slow.svg" <("$bin/flamegraph" --quiet --countname ns \
        --title "CPU of --where endpoint = \"$slow_ep\" and duration > p95" "$tmp/slow")
sf --where "endpoint = \"$slow_ep\"" --vs rest -o "$tmp/d.svg"
check "--vs rest -o d.svg: a differential graph (red frames)" grep -q 'fill="rgb(255,[0-9]*,[0-9]*)"' "$tmp/d.svg"

# -- errors
sf --where "duration > 1s and endpiont = \"$slow_ep\"" >"$tmp/o" 2>"$tmp/e"
check "a misnamed column exits 2" [ $? -eq 2 ]
check "and names it" grep -q "column 19: unknown column 'endpiont'" "$tmp/e"
caret_under() { awk 'NR == 2 { l = $0 } NR == 3 { print substr(l, index($0, "^"), 8) }' "$1"; }
check "the caret is under it" [ "$(caret_under "$tmp/e")" = "endpiont" ]
check "nothing on stdout" [ ! -s "$tmp/o" ]
sf --during "12:00..12:61" 2>"$tmp/e"
check "a bad --during exits 2" [ $? -eq 2 ]
check "with the column" grep -q -- '--during: column 8: bad time of day' "$tmp/e"
sf --where "endpoint = \"/no/such\"" 2>"$tmp/e"
check "a selection of no span exits 2" [ $? -eq 2 ]
check "and says so" grep -q 'no span matches the selection' "$tmp/e"
"$bin/spanfold" stacks --db "$tmp/missing.db" 2>"$tmp/e"
check "a missing database exits 2" [ $? -eq 2 ]
check "and is not created" [ ! -e "$tmp/missing.db" ]
cp "$db" "$tmp/nomark.db"
sqlite3 "$tmp/nomark.db" "DELETE FROM span_intervals; DELETE FROM span_events; UPDATE samples SET span_id = NULL"
"$bin/spanfold" stacks --db "$tmp/nomark.db" -o "$tmp/x.svg" 2>"$tmp/e"
check "no span markers: exit 2" [ $? -eq 2 ]
check "no span markers: says so, and where to read" \
    grep -q 'no span markers: samples cannot be attributed to spans; record them with spantrace, see docs/recording.md' "$tmp/e"
sqlite3 "$tmp/nomark.db" "DELETE FROM samples"
"$bin/spanfold" stacks --db "$tmp/nomark.db" 2>"$tmp/e"
check "no samples: exit 2" [ $? -eq 2 ]
check "no samples: says so" grep -q 'no CPU samples in the database' "$tmp/e"
"$bin/spanfold" stacks --db "$db" extra 2>/dev/null
check "a file argument is a usage error (exit 2)" [ $? -eq 2 ]
"$bin/spanfold" stacks --help | grep -q -- '--where EXPR'
check "--help lists --where" [ $? -eq 0 ]
tap_plan

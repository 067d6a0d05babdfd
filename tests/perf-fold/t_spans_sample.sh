#!/usr/bin/env bash
# Span-aware folding end to end on the recorded sample (samples/tracefs/: a real
# HTTP service whose handler burns CPU in handle_work() between span markers,
# recorded with tcpdump, perf record -k mono -g and a tracefs instance).
# pcap2spans, perf-fold --db and tracefs2spans fill one database; the fold per
# span must show handle_work under span roots named after the requests.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
s=$top/samples/tracefs
tap_name="span folding on samples/tracefs"
[ -f "$s/perf.txt" ] && [ -f "$s/trace.txt" ] || tap_skip_all "samples/tracefs not recorded"
for t in pcap2spans tracefs2spans; do [ -x "$bin/$t" ] || tap_skip_all "$t not built"; done
tap_tmpdir
db=$tmp/s.db
export LC_ALL=C

"$bin/pcap2spans" --quiet --db "$db" "$s/http.pcap" >/dev/null 2>&1
"$bin/perf-fold" -q --db "$db" "$s/perf.txt" >"$tmp/plain"; rc=$?
check "perf-fold --db on the sample exits 0" [ "$rc" -eq 0 ]
"$bin/tracefs2spans" --quiet --db "$db" "$s/trace.txt" >/dev/null 2>&1
"$bin/perf-fold" -q --db "$db" --group-by span >"$tmp/span"; rc=$?
check "group-by span exits 0" [ "$rc" -eq 0 ]
total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
check "every sample kept (grouped total = plain total)" [ "$(total "$tmp/span")" = "$(total "$tmp/plain")" ]
work_all=$(grep ';handle_work' "$tmp/span" | awk '{ s += $NF } END { print s + 0 }')
work_span=$(grep '^\[span [0-9a-f]\{16\} GET /work/[0-9]*\];.*;handle_work' "$tmp/span" | awk '{ s += $NF } END { print s + 0 }')
echo "# handle_work: $work_span of $work_all (period-weighted) under [span ID GET /work/N] roots"
check "handle_work sampled" [ "$work_all" -gt 0 ]
check "at least 90% of handle_work under its request's span root" [ $((work_span * 10)) -ge $((work_all * 9)) ]
check "unattributed samples kept as [unattributed]" grep -q '^\[unattributed\];' "$tmp/span"
first=$(grep -o '^\[span [0-9a-f]\{16\}' "$tmp/span" | head -n 1 | cut -c7-)
"$bin/perf-fold" -q --db "$db" --span "$first" >"$tmp/one"
only_span() { [ -s "$1" ] && ! grep -qv "^\[span $2 " "$1"; }
check "--span $first gives only that span" only_span "$tmp/one" "$first"
"$bin/perf-fold" -q --db "$db" --group-by path >"$tmp/path"
check "group-by path" grep -q '^\[path GET /work/[0-9]*\];.*;handle_work' "$tmp/path"
"$bin/perf-fold" -q --db "$db" --group-by trace >"$tmp/trace"
check "group-by trace" grep -q '^\[trace [0-9a-f]\{32\}\];.*;handle_work' "$tmp/trace"
tap_plan

#!/usr/bin/env bash
# End to end on a real recording: pcap2spans (packets), perf-fold --db (perf samples) and
# tracefs2spans (span markers) into one database; check_sample.py then checks the clock fit
# against the true offset and every sample's span against intervals rebuilt from the trace.
#   1. the committed sample, samples/tracefs/ (scripts/record-tracefs-sample.sh);
#   2. tracefs2spans first: perf-fold --db, run last, must attribute its samples by the same
#      rule (sf_db_attribute_samples); then `tracefs2spans --refit` fits the clocks;
#   3. a fresh recording on this machine (root, perf, tcpdump, tracefs) - skipped otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
here=$top/tests/tracefs2spans
sample=$top/samples/tracefs
n=1
tap_tmpdir t2s_sample
skip() { echo "ok $n - $1 # SKIP $2"; n=$((n + 1)); }
fail() { echo "not ok $n - $1"; n=$((n + 1)); }

need=""
for t in pcap2spans perf-fold tracefs2spans; do [ -x "$bin/$t" ] || need="$need $t"; done
command -v python3 >/dev/null || need="$need python3"

# build DB from DIR in ORDER (normal: pcap, perf, tracefs; tracefs-first: tracefs, pcap, perf, refit)
build() {
    local db=$1 dir=$2 order=$3
    rm -f "$db"
    if [ "$order" = normal ]; then
        "$bin/pcap2spans" --quiet --db "$db" "$dir/http.pcap" &&
            "$bin/perf-fold" --quiet --db "$db" "$dir/perf.txt" >/dev/null &&
            "$bin/tracefs2spans" --quiet --db "$db" "$dir/trace.txt"
    else
        "$bin/tracefs2spans" --quiet --db "$db" "$dir/trace.txt" &&
            "$bin/pcap2spans" --quiet --db "$db" "$dir/http.pcap" &&
            "$bin/perf-fold" --quiet --db "$db" "$dir/perf.txt" >/dev/null
    fi
}

check() { # DB DIR LABEL [nofit]
    local out
    out=$(python3 "$here/check_sample.py" "$1" "$2" "$3" "$n" ${4:-})
    printf '%s\n' "$out" | grep -v '^# next'
    n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
    [ -n "$n" ] || { n=1; fail "$3: check_sample.py crashed"; }
}

if [ -n "$need" ]; then
    skip "committed sample" "not built:$need"
elif [ ! -f "$sample/MANIFEST.json" ]; then
    fail "committed sample: $sample/MANIFEST.json missing"
else
    if build "$tmp/a.db" "$sample" normal; then check "$tmp/a.db" "$sample" "sample"; else fail "sample: ingest"; fi
    if build "$tmp/b.db" "$sample" tracefs-first; then
        check "$tmp/b.db" "$sample" "sample, tracefs2spans first, perf-fold last" nofit
        if "$bin/tracefs2spans" --quiet --db "$tmp/b.db" --refit; then
            check "$tmp/b.db" "$sample" "sample, then tracefs2spans --refit"
        else
            fail "sample: tracefs2spans --refit"
        fi
    else
        fail "sample, tracefs2spans first: ingest"
    fi
fi

why=""
[ "$(id -u)" -eq 0 ] || why="needs root"
for t in perf tcpdump cc; do command -v "$t" >/dev/null || why="${why:-$t not installed}"; done
[ -n "$need" ] && why="${why:-not built:$need}"
if [ -n "$why" ]; then
    skip "live recording on this machine" "$why"
elif ! "$top/scripts/record-tracefs-sample.sh" "$tmp/live" 40 2>"$tmp/rec.err"; then
    if grep -q "needs\|not installed\|cannot mount\|missing\|not accepted" "$tmp/rec.err"; then
        skip "live recording on this machine" "$(tail -n 1 "$tmp/rec.err")"
    else
        fail "live recording: $(tail -n 1 "$tmp/rec.err")"
    fi
elif build "$tmp/c.db" "$tmp/live" normal; then
    check "$tmp/c.db" "$tmp/live" "live"
else
    fail "live: ingest"
fi
echo "1..$((n - 1))"

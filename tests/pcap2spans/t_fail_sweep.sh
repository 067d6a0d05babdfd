#!/usr/bin/env bash
# Anomaly sweep in SQLite's manner (issue 19, item 8): a real ingest of
# samples/pcap/h2c.pcap into a new database, with SF_FAIL_AT failing the Nth
# database write (a full disk) for N = 1, 2, ... until a run no longer meets a
# fault, then the Nth SQLite allocation for N growing by half each time; then the
# same, every 4th write, for perf-fold and tracefs2spans (samples/tracefs).  After
# every run: the tool exited 0 or 2, never crashed; a failed run said so on stderr;
# the database (if any) passes integrity_check and foreign_key_check; a source
# marked complete has exactly the rows of a clean ingest; and a clean re-run then
# leaves one complete source with those rows.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
pcap=$top/samples/pcap/h2c.pcap
tap_tmpdir t_fail_sweep
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"
q() { sqlite3 "$1" "$2" 2>&1; }

# the ingest under test: ingest DB; its input and the table its rows go to
use() {
    case $1 in
    pcap2spans) ingest() { "$bin/pcap2spans" --quiet --db "$1" "$pcap"; }; table=spans ;;
    perf-fold) ingest() { "$bin/perf-fold" -q --db "$1" "$top/samples/tracefs/perf.txt"; }
        table=samples ;;
    tracefs2spans) ingest() { "$bin/tracefs2spans" --quiet --db "$1" \
        "$top/samples/tracefs/trace.txt"; }; table=span_events ;;
    esac
    rm -f "$tmp/ref.db"*
    ingest "$tmp/ref.db" >/dev/null 2>&1 || exit 2
    want=$(q "$tmp/ref.db" "SELECT count(*) FROM $table")
}

# one KIND:N run; prints nothing, sets rc and problem ("" when every check held)
run_one() {
    local spec=$1 db=$tmp/f.db st cnt
    rm -f "$db" "$db-wal" "$db-shm"
    SF_FAIL_AT=$spec ingest "$db" >/dev/null 2>"$tmp/err"
    rc=$?
    problem=""
    case $rc in
    0) ;;
    2) [ -s "$tmp/err" ] || problem="exit 2 without a message" ;;
    *) problem="exit $rc"; return ;;
    esac
    if [ -s "$db" ]; then
        [ "$(q "$db" "PRAGMA integrity_check")" = ok ] || problem="$problem; integrity_check"
        [ -z "$(q "$db" "PRAGMA foreign_key_check")" ] || problem="$problem; foreign keys"
        st=$(q "$db" "SELECT status FROM sources")
        cnt=$(q "$db" "SELECT count(*) FROM $table")
        if [ "$st" = complete ] && [ "$cnt" != "$want" ]; then
            problem="$problem; complete with $cnt rows"
        fi
    fi
    if [ "$rc" = 0 ] && [ "$(q "$db" "SELECT status FROM sources")" != complete ]; then
        problem="$problem; exit 0 but not complete"
    fi
    ingest "$db" >/dev/null 2>&1 || problem="$problem; clean re-run failed"
    [ "$(q "$db" "SELECT count(*) || ' ' || group_concat(status) FROM sources")" = "1 complete" ] &&
        [ "$(q "$db" "SELECT count(*) FROM $table")" = "$want" ] ||
        problem="$problem; re-run did not leave one complete copy"
}

sweep() {
    local kind=$1 next=$2 nmax=$3 N=1 runs=0 failed=0 bad=""
    while [ "$N" -le "$nmax" ]; do
        run_one "$kind:$N"
        runs=$((runs + 1))
        [ "$rc" = 0 ] || failed=$((failed + 1))
        [ -z "$problem" ] || bad="$bad [$kind:$N:$problem]"
        [ "$rc" = 0 ] && [ "$failed" -gt 0 ] && break # past the last call: done
        N=$(eval "echo \$(( $next ))")
    done
    check_eval "$tool $kind sweep: $runs runs, $failed failed cleanly, every database consistent$bad" \
        '[ -z "$bad" ] && [ "$failed" -gt 0 ] && [ "$rc" = 0 ]'
}

tool=pcap2spans
use $tool
check_eval "clean ingest has spans ($want)" '[ "$want" -gt 10 ]'
sweep write 'N + 1' 400
sweep alloc 'N + N / 2 + 1' 10000000
for tool in perf-fold tracefs2spans; do
    use $tool
    check_eval "$tool: clean ingest has rows in $table ($want)" '[ "$want" -gt 10 ]'
    sweep write 'N + 4' 400
    sweep alloc 'N + N + 1' 10000000
done
tool=pcap2spans
use $tool
run_one write:1:0
check_eval "every write failing (a full disk from the start): exit 2 ($rc), said so" \
    '[ "$rc" = 2 ] && [ -z "$problem" ] && grep -q "I/O\|disk" "$tmp/err"'
SF_FAIL_AT=bogus "$bin/pcap2spans" --quiet --db "$tmp/b.db" "$pcap" >/dev/null 2>"$tmp/err"
check_eval "a malformed SF_FAIL_AT is a usage error" '[ $? = 2 ] && grep -q "SF_FAIL_AT" "$tmp/err"'
tap_plan

#!/usr/bin/env bash
# Who owns an in-progress source, with real processes (issue 19, item 2):
#   - an ingest frozen mid-run (SF_FAIL_AT=stop:N, a SIGSTOP at its Nth database
#     write) still owns its source: a second run of the same capture says so and
#     exits 2, a third with --wait waits for it and then finds it done; one copy;
#   - the same frozen ingest killed with SIGKILL: the next run takes the source
#     over and ends with exactly one complete copy;
#   - eight writers creating one new database at the same moment all succeed;
#   - two runs of one capture started together, 20 times: never two copies.
# Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
p2s=${SF_BIN:-$top/bin}/pcap2spans
pcap=$top/samples/demo/demo.pcap
tap_tmpdir t_db_owner
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed"

q() { sqlite3 "$1" "$2" 2>&1; }
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }

# Reference: one plain ingest.
"$p2s" --quiet --db "$tmp/ref.db" "$pcap"
want=$(q "$tmp/ref.db" "SELECT count(*) FROM spans")
check_eval "reference ingest has spans ($want)" '[ "$want" -gt 100 ]'

# Start pcap2spans on $1 frozen at the first write after its source row is committed
# (the database already exists, so that is a handful of writes in); sets pid.
freeze_after_begin() {
    local db=$1 k i st
    for k in $(seq 1 40); do
        rm -f "$db" "$db-wal" "$db-shm"
        "$p2s" --quiet --db "$db" "$top/samples/pcap/grpc.pcap" || return 1
        SF_FAIL_AT=stop:$k "$p2s" --quiet --db "$db" "$pcap" 2>/dev/null &
        pid=$!
        for i in $(seq 200); do
            st=$(state "$pid")
            [ "$st" = T ] || [ -z "$st" ] && break
            sleep 0.01
        done
        if [ "$st" = T ] &&
            [ "$(q "$db" "SELECT count(*) FROM sources WHERE status='partial'")" = 1 ]; then
            return 0
        fi
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    return 1
}

db=$tmp/live.db
if freeze_after_begin "$db"; then
    ok "an ingest frozen after registering its source (pid $pid)"
    "$p2s" --quiet --db "$db" "$pcap" 2>"$tmp/b.err"
    rc=$?
    check_eval "a second run of the same capture exits 2 (got $rc)" '[ "$rc" = 2 ]'
    check_eval "and says another process is ingesting it" \
        'grep -q "another process is ingesting this input" "$tmp/b.err"'
    check_eval "the frozen run's source was left alone" \
        '[ "$(q "$db" "SELECT count(*) FROM sources WHERE status=\"partial\"")" = 1 ]'
    "$p2s" --wait --db "$db" "$pcap" 2>"$tmp/c.err" &
    cpid=$!
    sleep 0.3
    check_eval "--wait waits while the owner lives" '[ -n "$(state "$cpid")" ]'
    kill -CONT "$pid"
    wait "$pid"
    rc=$?
    check_eval "the owner, continued, exits 0 (got $rc)" '[ "$rc" = 0 ]'
    wait "$cpid"
    rc=$?
    check_eval "the waiting run then exits 0 (got $rc)" '[ "$rc" = 0 ]'
    check_eval "saying the capture is already ingested" 'grep -q "already ingested" "$tmp/c.err"'
    cnt=$(q "$db" "SELECT count(*) FROM sources WHERE path LIKE '%demo.pcap'")
    check_eval "one source for the capture (got $cnt)" '[ "$cnt" = 1 ]'
    cnt=$(q "$db" "SELECT count(*) FROM spans s JOIN sources o ON o.id = s.source_id
                 WHERE o.path LIKE '%demo.pcap' AND o.status = 'complete'")
    check_eval "with the spans of one ingest ($cnt, want $want)" '[ "$cnt" = "$want" ]'
else
    notok "could not freeze an ingest after its source row"
fi

db=$tmp/killed.db
if freeze_after_begin "$db"; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    check_eval "a killed ingest leaves its source partial" \
        '[ "$(q "$db" "SELECT count(*) FROM sources WHERE status=\"partial\"")" = 1 ]'
    "$p2s" --quiet --db "$db" "$pcap" 2>"$tmp/d.err"
    rc=$?
    check_eval "the next run takes it over and exits 0 (got $rc)" '[ "$rc" = 0 ]'
    cnt=$(q "$db" "SELECT count(*) FROM sources WHERE path LIKE '%demo.pcap'")
    check_eval "one source left for the capture (got $cnt)" '[ "$cnt" = 1 ]'
    cnt=$(q "$db" "SELECT count(*) FROM spans s JOIN sources o ON o.id = s.source_id
                 WHERE o.path LIKE '%demo.pcap' AND o.status = 'complete'")
    check_eval "complete with the spans of one ingest ($cnt, want $want)" '[ "$cnt" = "$want" ]'
    check_eval "integrity_check ok" '[ "$(q "$db" "PRAGMA integrity_check")" = ok ]'
    check_eval "no foreign key violations" '[ -z "$(q "$db" "PRAGMA foreign_key_check")" ]'
else
    notok "could not freeze an ingest after its source row"
fi

# Eight writers create one new database at once, each with its own capture.
db=$tmp/new.db
files=()
for f in "$top"/samples/pcap/*.pcap; do files+=("$f"); done
pids=()
for f in "${files[@]:0:8}"; do
    "$p2s" --quiet --db "$db" "$f" 2>>"$tmp/new.err" &
    pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
check_eval "8 writers creating one database at once all exit 0 ($bad did not)" '[ "$bad" = 0 ]'
check_eval "no 'database is locked'" '! grep -q "locked" "$tmp/new.err"'
cnt=$(q "$db" "SELECT count(*) FROM sources WHERE status = 'complete'")
check_eval "8 complete sources (got $cnt)" '[ "$cnt" = 8 ]'

# The issue's case: a capture that takes a second to ingest, a second run started
# 0.05-0.5 s after the first.  Before, the second deleted the first's source as
# "interrupted" and both wrote under one id (up to twice the spans).
big=$tmp/big.pcap
python3 "$top/tests/pcap2spans/many_pcap.py" "$big" 30000
for d in 0.05 0.2 0.5; do
    db=$tmp/race$d.db
    "$p2s" --db "$db" "$big" 2>"$tmp/ra.err" &
    a=$!
    sleep "$d"
    "$p2s" --db "$db" "$big" 2>"$tmp/rb.err"
    rb=$?
    wait "$a"
    ra=$?
    cnt=$(q "$db" "SELECT count(*) FROM spans")
    check_eval "second run $d s later: 30000 spans, not more (got $cnt)" '[ "$cnt" = 30000 ]'
    # overlapping: the later one exits 2 saying why; else it finds the capture done
    check_eval "one run exits 0, the other 2 saying why, or 0 as a duplicate (got $ra, $rb)" \
        '{ [ "$ra$rb" = 02 ] && grep -q "another process is ingesting" "$tmp/rb.err"; } ||
         { [ "$ra$rb" = 20 ] && grep -q "another process is ingesting" "$tmp/ra.err"; } ||
         { [ "$ra$rb" = 00 ] && grep -q "already ingested" "$tmp/ra.err" "$tmp/rb.err"; }'
done
db=$tmp/racewait.db
"$p2s" --quiet --db "$db" "$big" &
a=$!
sleep 0.2
"$p2s" --wait --db "$db" "$big" 2>"$tmp/rw.err"
rb=$?
wait "$a"
ra=$?
cnt=$(q "$db" "SELECT count(*) FROM spans")
check_eval "with --wait both exit 0 (got $ra, $rb) and the spans are there once ($cnt)" \
    '[ "$ra$rb" = 00 ] && [ "$cnt" = 30000 ]'
tap_plan

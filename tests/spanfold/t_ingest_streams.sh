#!/usr/bin/env bash
# spanfold ingest of what is not a regular file: a FIFO with a writer and one without,
# a pipe on /dev/stdin, an endless device; and a walked folder holding such things,
# each listed with its reason.  Never a hang, never the first bytes eaten by sniffing.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
cap=$top/samples/pcap/http1.pcap
tap_tmpdir t_ingest_streams
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed (scripts/deps.sh check)"
spans() { sqlite3 "$1" "SELECT count(*) FROM spans" 2>/dev/null; }
want=$("$bin/pcap2spans" --ndjson --quiet "$cap" | wc -l)

mkfifo "$tmp/fifo"
(sleep 1; cat "$cap" >"$tmp/fifo") &
timeout 60 "$bin/spanfold" ingest --db "$tmp/f.db" "$tmp/fifo" 2>"$tmp/f.err"; rc=$?
wait
check_eval "a FIFO whose writer comes a second later: exit 0 (rc $rc)" '[ $rc -eq 0 ]'
check_eval "... and the same $want spans as the capture file" '[ "$(spans "$tmp/f.db")" = "$want" ]'
check_eval "... stored under the FIFO's own name" \
    '[ "$(sqlite3 "$tmp/f.db" "SELECT path FROM sources")" = "$tmp/fifo" ]'

start=$(date +%s)
timeout 60 "$bin/spanfold" ingest --stream-wait 2 --db "$tmp/n.db" "$tmp/fifo" 2>"$tmp/n.err"; rc=$?
took=$(($(date +%s) - start))
check_eval "a FIFO nobody writes to: exit 2 after --stream-wait 2, not a hang (rc $rc, ${took}s)" \
    '[ $rc -eq 2 ] && [ $took -lt 30 ] && grep -q "fifo: no data for 2 s (no writer?) (--stream-wait)" "$tmp/n.err"'

timeout 60 "$bin/spanfold" ingest --db "$tmp/p.db" /dev/stdin <"$cap" 2>/dev/null
check_eval "a regular file on /dev/stdin: $want spans" '[ "$(spans "$tmp/p.db")" = "$want" ]'
cat "$cap" | timeout 60 "$bin/spanfold" ingest --db "$tmp/q.db" /dev/stdin 2>"$tmp/q.err"; rc=$?
check_eval "cat capture | spanfold ingest /dev/stdin: exit 0, $want spans, as pcap2spans (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(spans "$tmp/q.db")" = "$want" ]'
gzip -c "$cap" | timeout 60 "$bin/spanfold" ingest --db "$tmp/z.db" /dev/stdin 2>/dev/null
check_eval "a gzip stream on a pipe: decompressed, $want spans" '[ "$(spans "$tmp/z.db")" = "$want" ]'

timeout 60 "$bin/spanfold" ingest --stream-max 1M --db "$tmp/d.db" /dev/zero 2>"$tmp/d.err"; rc=$?
check_eval "/dev/zero with --stream-max 1M: exit 2, the limit named (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "more than 1048576 bytes (--stream-max)" "$tmp/d.err"'
"$bin/spanfold" ingest --stream-max 12Q --db "$tmp/d.db" /dev/zero 2>/dev/null; rc=$?
check_eval "a bad --stream-max is a usage error (rc $rc)" '[ $rc -eq 2 ]'

# a walked folder: what is not a file is listed with its reason, and nothing hangs
mkdir -p "$tmp/w"
cp "$cap" "$tmp/w/"
mkfifo "$tmp/w/fifo"
ln -s /dev/zero "$tmp/w/zero"
ln -s loop "$tmp/w/loop"
ln -s /nonexistent "$tmp/w/dangling"
ln -s "$tmp" "$tmp/w/up"
timeout 60 "$bin/spanfold" ingest --db "$tmp/w.db" "$tmp/w" 2>"$tmp/w.err"; rc=$?
check_eval "a walked folder with a FIFO, a device link, a loop: exit 0, $want spans (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(spans "$tmp/w.db")" = "$want" ]'
for what in "fifo: ignored (a FIFO" "zero: ignored (a device" "loop: ignored (a symbolic link loop)" \
            "dangling: ignored (a symbolic link to nothing)" "up: ignored (a symbolic link to a folder"; do
    check_eval "listed with its reason: $what" 'grep -qF "$what" "$tmp/w.err"'
done
tap_plan

#!/usr/bin/env bash
# spanfold ingest: every artefact recognised by content (also misnamed and compressed),
# each handed to its tool in-process, and the database the same as the single tools
# make; one line per input; what is missing said in words; damaged and unknown inputs
# are clear errors that keep the good data around them.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
demo=$top/samples/demo
tap_tmpdir t_ingest
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell not installed (scripts/deps.sh check)"
q() { sqlite3 "$1" "$2"; }

# the reference: the single tools, one after another, as docs/demo.md describes
ref=$tmp/ref.db
"$bin/pcap2spans" --quiet --db "$ref" "$demo/demo.pcap"
"$bin/perf-fold" --quiet --db "$ref" "$demo/perf.txt" >/dev/null
"$bin/tracefs2spans" --quiet --db "$ref" "$demo/markers.txt"
counts() { q "$1" "SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM samples),
                          (SELECT count(*) FROM samples WHERE span_id IS NOT NULL),
                          (SELECT count(*) FROM span_intervals), (SELECT count(*) FROM clock_fits)"; }
want=$(counts "$ref")

"$bin/spanfold" ingest --db "$tmp/a.db" "$demo" 2>"$tmp/a.err"; rc=$?
check_eval "ingest of the demo folder exits 0 (rc $rc)" '[ $rc -eq 0 ]'
check_eval "same spans, samples, attributed samples, intervals, clock fits as the single tools ($want)" \
    '[ "$(counts "$tmp/a.db")" = "$want" ]'
check_eval "the attribution is the same sample by sample" \
    '[ "$(q "$tmp/a.db" "SELECT group_concat(ts_ns || span_id) FROM (SELECT ts_ns, span_id FROM samples ORDER BY ts_ns, tid)")" = \
       "$(q "$ref" "SELECT group_concat(ts_ns || span_id) FROM (SELECT ts_ns, span_id FROM samples ORDER BY ts_ns, tid)")" ]'
# the writers append their rows without foreign-key checks (lib/sf_db.c): what every
# tool left must still satisfy every foreign key of the contract
check_eval "no foreign key broken by pcap2spans, perf-fold, tracefs2spans or ingest" \
    '[ -z "$(q "$ref" "PRAGMA foreign_key_check")$(q "$tmp/a.db" "PRAGMA foreign_key_check")" ] &&
     [ "$(q "$ref" "PRAGMA integrity_check")" = ok ]'
check "one line per input: the capture with its spans and clock" grep -qE "^  pcap +$demo/demo.pcap: [0-9]+ spans on [0-9]+ connections .* clock realtime, complete" "$tmp/a.err"
check "one line per input: the profile" grep -qE "^  perf-script +$demo/perf.txt: [0-9]+ samples" "$tmp/a.err"
check "one line per input: the markers" grep -qE "^  tracefs +$demo/markers.txt: [0-9]+ span events" "$tmp/a.err"
check "the clock fit is shown" grep -q "clock fit   monotonic -> realtime" "$tmp/a.err"
check "the share of attributed samples is shown" grep -qE "attributed  [0-9]+ of [0-9]+ samples" "$tmp/a.err"
check "files of no known kind in a folder are ignored with the reason" grep -q "MANIFEST.json: ignored (text" "$tmp/a.err"

# misnamed and compressed: content decides, the sources keep the user's paths
mkdir -p "$tmp/m"
cp "$demo/demo.pcap" "$tmp/m/perf.txt"
xz -c "$demo/perf.txt" >"$tmp/m/capture.pcap"
gzip -c "$demo/markers.txt" >"$tmp/m/keys.log"
"$bin/spanfold" ingest --db "$tmp/m.db" "$tmp/m" 2>"$tmp/m.err"; rc=$?
check_eval "misnamed, xz and gzip inputs: exit 0 and the same database ($(counts "$tmp/m.db"))" \
    '[ $rc -eq 0 ] && [ "$(counts "$tmp/m.db")" = "$want" ]'
check_eval "sources are the user's paths with the kinds found by content" \
    '[ "$(q "$tmp/m.db" "SELECT group_concat(kind || \"=\" || path, \" \") FROM (SELECT * FROM sources ORDER BY path)")" = \
       "perf=$tmp/m/capture.pcap tracefs=$tmp/m/keys.log pcap=$tmp/m/perf.txt" ]'
check "the line says through which compression" grep -qE "perf-script +$tmp/m/capture.pcap via xz: " "$tmp/m.err"
if command -v zstd >/dev/null; then
    zstd -q -c "$demo/demo.pcap" >"$tmp/z.bin"
    "$bin/spanfold" ingest --db "$tmp/z.db" "$tmp/z.bin" 2>"$tmp/z.err"
    check_eval "zstd capture: the same spans" '[ "$(q "$tmp/z.db" "SELECT count(*) FROM spans")" = "$(q "$ref" "SELECT count(*) FROM spans")" ]'
else
    skip "zstd capture" "zstd not installed"
fi

# a key log found by content decrypts the capture beside it
mkdir -p "$tmp/tls"
cp "$top/samples/pcap/tls-nginx.pcap" "$tmp/tls/one"
cp "$top/samples/pcap/tls-nginx.keylog" "$tmp/tls/two"
"$bin/spanfold" ingest --db "$tmp/tls.db" "$tmp/tls" 2>"$tmp/tls.err"
"$bin/pcap2spans" --quiet --db "$tmp/tlsref.db" --keylog "$top/samples/pcap/tls-nginx.keylog" "$top/samples/pcap/tls-nginx.pcap"
check_eval "a misnamed key log decrypts the misnamed capture ($(q "$tmp/tls.db" "SELECT count(*) FROM spans") spans)" \
    '[ "$(q "$tmp/tls.db" "SELECT count(*), sum(path IS NOT NULL) FROM spans")" = "$(q "$tmp/tlsref.db" "SELECT count(*), sum(path IS NOT NULL) FROM spans")" ] &&
     [ "$(q "$tmp/tls.db" "SELECT count(*) FROM spans")" -gt 0 ]'
check "the key log is listed as such" grep -qE "keylog +$tmp/tls/two: TLS secrets" "$tmp/tls.err"
"$bin/spanfold" ingest --db "$tmp/tls2.db" "$tmp/tls/one" 2>"$tmp/tls2.err"
check "without the key log: the undecrypted TLS connections are named as missing" grep -q "TLS connections were not decrypted" "$tmp/tls2.err"

# what is missing for the join, in words
"$bin/spanfold" ingest --db "$tmp/nomark.db" "$demo/demo.pcap" "$demo/perf.txt" 2>"$tmp/nomark.err"
check "capture and profile without markers: 'no span markers' with the way to record them" \
    grep -q "no span markers: samples cannot be attributed to spans; record them with spantrace, see docs/recording.md" "$tmp/nomark.err"
"$bin/spanfold" ingest --db "$tmp/noperf.db" "$demo/demo.pcap" 2>"$tmp/noperf.err"
check "a capture alone: no CPU samples is said" grep -q "missing: no CPU samples" "$tmp/noperf.err"

# damaged and unknown inputs
printf 'just some text\n' >"$tmp/notes.txt"
"$bin/spanfold" ingest --db "$tmp/u.db" "$tmp/notes.txt" 2>"$tmp/u.err"; rc=$?
check_eval "a named file of no known kind: exit 2 with the reason (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "notes.txt: not a capture, key log, perf output or trace log" "$tmp/u.err"'
head -c 400000 "$demo/demo.pcap" | gzip -c >"$tmp/cut.gz"
truncate -s 60000 "$tmp/cut.gz"
"$bin/spanfold" ingest --db "$tmp/cut.db" "$tmp/cut.gz" 2>"$tmp/cut.err"; rc=$?
got=$(q "$tmp/cut.db" "SELECT count(*) FROM spans")
check_eval "a truncated gzip capture: exit 2, the spans before the cut kept ($got), the place said" \
    '[ $rc -eq 2 ] && [ "$got" -gt 10 ] && grep -q "ends inside a member at compressed byte" "$tmp/cut.err"'
check_eval "the source of the truncated capture is partial under the user's path" \
    '[ "$(q "$tmp/cut.db" "SELECT status || \" \" || path FROM sources")" = "partial $tmp/cut.gz" ]'
printf 'PERFILE2' >"$tmp/fake.data"; head -c 200 /dev/zero >>"$tmp/fake.data"
PATH=/nonexistent "$bin/spanfold" ingest --db "$tmp/p.db" "$tmp/fake.data" 2>"$tmp/p.err"; rc=$?
check_eval "a damaged perf.data, read with no perf on PATH: exit 2, what is wrong said (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "fake.data: perf.data: bad file header" "$tmp/p.err"'
"$bin/spanfold" ingest --db "$tmp/x.db" 2>"$tmp/x.err"; rc=$?
check_eval "no input: usage error" '[ $rc -eq 2 ] && grep -q "no input" "$tmp/x.err"'
"$bin/spanfold" ingest "$demo" 2>"$tmp/x.err"; rc=$?
check_eval "no --db: usage error" '[ $rc -eq 2 ] && grep -q -- "--db FILE is required" "$tmp/x.err"'
# ingesting nothing is an error, so that `ingest && report` stops there
mkdir -p "$tmp/empty" "$tmp/junk"
"$bin/spanfold" ingest --db "$tmp/e.db" "$tmp/empty" 2>"$tmp/e.err"; rc=$?
check_eval "an empty folder: exit 2, nothing to ingest, no database (rc $rc)" \
    '[ $rc -eq 2 ] && grep -qF "nothing to ingest in $tmp/empty: 0 files" "$tmp/e.err" && [ ! -e "$tmp/e.db" ]'
echo "hello" >"$tmp/junk/notes.txt"; head -c 3000 /dev/urandom >"$tmp/junk/blob.bin"
"$bin/spanfold" ingest --db "$tmp/j.db" "$tmp/junk" 2>"$tmp/j.err"; rc=$?
check_eval "a folder of unrelated files: exit 2, each file's reason said (rc $rc)" \
    '[ $rc -eq 2 ] && grep -qF "nothing to ingest in $tmp/junk: 2 files, none usable" "$tmp/j.err" &&
     grep -q "notes.txt: ignored" "$tmp/j.err" && grep -q "blob.bin: ignored" "$tmp/j.err"'
"$bin/spanfold" ingest --quiet --db "$tmp/j.db" "$tmp/junk" 2>"$tmp/jq.err"; rc=$?
check_eval "... and with --quiet too, the reasons are said (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "notes.txt: ignored" "$tmp/jq.err" && grep -q "blob.bin: ignored" "$tmp/jq.err"'
mkdir -p "$tmp/keysonly"; cp "$top/samples/pcap/tls-nginx.keylog" "$tmp/keysonly/"
"$bin/spanfold" ingest --db "$tmp/k.db" "$tmp/keysonly" "$tmp/empty" 2>"$tmp/k.err"; rc=$?
check_eval "key logs and no capture: exit 2, the key log said to be unused (rc $rc)" \
    '[ $rc -eq 2 ] && [ ! -e "$tmp/k.db" ] &&
     grep -q "nothing to ingest in the 2 paths given: 1 file, none usable" "$tmp/k.err" &&
     grep -qF "tls-nginx.keylog: not used (a key log decrypts a capture; none given)" "$tmp/k.err"'
# ingesting the same folder again changes nothing
"$bin/spanfold" ingest --db "$tmp/a.db" "$demo" 2>"$tmp/a2.err"
check_eval "a second ingest of the same folder adds nothing" '[ "$(counts "$tmp/a.db")" = "$want" ] &&
     [ "$(q "$tmp/a.db" "SELECT count(*) FROM sources")" = 3 ]'
tap_plan

#!/usr/bin/env bash
# Live (issue #30.5): the demo service slowed by a dependency (--slow-kind downstream: every
# search calls a backend of its own, python3's ThreadingHTTPServer, over a new connection,
# passing its trace on in B3 headers; slow mode asks the backend for 25 ms instead of 2),
# recorded on this machine with both services' traffic in the capture
# (scripts/record-demo.sh with SLOW_KIND=downstream, about 14 s), then spanfold ingest and
# report: every backend call is a child of the search that made it, and the report names
# /api/search's slow phase as waiting on a downstream call to /api/backend, near the true
# start, the parts adding up.  Needs root, BPF, perf, tcpdump; skips with the reason
# otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording, slowed by its backend"
. "$top/tests/demo/live_need.sh"
tap_tmpdir t_demo_live_downstream

live_cause downstream --endpoint /api/backend --grew downstream_ns:15e6 -- SLOW_KIND=downstream
ok "scripts/record-demo.sh recorded a run slowed by the search backend"
q() { sqlite3 "$tmp/r.db" "$1"; }
nb=$(q "SELECT count(*) FROM spans WHERE path = '/api/backend'")
ns=$(q "SELECT count(*) FROM spans WHERE path = '/api/search'")
linked=$(q "SELECT count(*) FROM spans b JOIN spans s ON s.span_id = b.parent_span_id AND
            s.path = '/api/search' AND b.req_start_ns BETWEEN s.req_start_ns AND s.resp_end_ns
            WHERE b.path = '/api/backend'")
check_eval "every backend call ($nb, for $ns searches) is a child of the search that made it, within it ($linked)" \
    "[ $nb -ge 30 ] && [ $linked = $nb ] && [ $nb -ge \$(($ns - 5)) ]"
sed 's/^/# /' "$tmp/why"
check_eval "report: /api/search's slow phase waits on /api/backend, near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
sed -n '1s/^/# /p' "$tmp/rep.err" | cut -c1-400
check_eval "the verdict says it in words" "grep -q 'downstream call to /api/backend' '$tmp/rep.err'"
tap_plan

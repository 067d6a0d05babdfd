#!/usr/bin/env bash
# Connections that never completed a handshake are failed spans of their own (issue #30.3):
# a TCP connection the server refused (data/refused.pcap: curl to a closed port on lo,
# twice, recorded here with tcpdump), and a TLS handshake the server aborted with a fatal
# alert (samples/pcap/tls-mtls-fail.pcap: a client certificate from an unknown CA; the
# TLS 1.3 alert is encrypted, so it is read only with the key log).  The report counts
# them as errors of their endpoint.  A capture of complete exchanges gets none.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
command -v sqlite3 >/dev/null || tap_skip_all "the sqlite3 shell is needed (scripts/deps.sh)"
tap_tmpdir t_handshake_failed
q() { sqlite3 "$1" "$2"; }

"$bin/pcap2spans" --quiet --db "$tmp/r.db" "$top/tests/pcap2spans/data/refused.pcap"
check "refused.pcap: exit 0" [ $? -eq 0 ]
check_eval "two refused connections, two failed spans of endpoint tcp:127.0.0.1:1" \
    '[ "$(q "$tmp/r.db" "SELECT count(*), min(path), max(proto) FROM spans WHERE partial = 1 AND
        partial_reason = '"'handshake failed: connection refused (RST from the server)'"'")" = "2|tcp:127.0.0.1:1|tcp" ]'
check_eval "... and no other span" '[ "$(q "$tmp/r.db" "SELECT count(*) FROM spans")" = 2 ]'
check_eval "... lasting from the SYN to the RST (positive, under a second)" \
    '[ "$(q "$tmp/r.db" "SELECT count(*) FROM spans WHERE resp_end_ns > req_start_ns AND
        resp_end_ns - req_start_ns < 1000000000")" = 2 ]'

mtls=$top/samples/pcap/tls-mtls-fail
"$bin/pcap2spans" --quiet --db "$tmp/t.db" --keylog "$mtls.keylog" "$mtls.pcap"
check_eval "tls-mtls-fail with its key log: one failed span tls:sample.spanfold.test, the alert said" \
    '[ "$(q "$tmp/t.db" "SELECT proto, path, authority, partial_reason FROM spans")" = "tls|tls:sample.spanfold.test|sample.spanfold.test|handshake failed: fatal alert unknown_ca (48) from the server" ]'
"$bin/pcap2spans" --quiet --db "$tmp/t0.db" "$mtls.pcap"
check_eval "without the key log the alert is encrypted: nothing claimed" \
    '[ "$(q "$tmp/t0.db" "SELECT count(*) FROM spans")" = 0 ]'

for cap in http1.pcap h2c.pcap grpc.pcap; do
    "$bin/pcap2spans" --quiet --db "$tmp/ok-$cap.db" "$top/samples/pcap/$cap"
    check_eval "$cap: complete exchanges, no failed-handshake span" \
        '[ "$(q "$tmp/ok-$cap.db" "SELECT count(*) FROM spans WHERE proto IN ('"'tcp'"', '"'tls'"')")" = 0 ]'
done

# the report: the failed handshakes are errors of their endpoint
"$bin/spanfold" report --quiet --db "$tmp/r.db" --out "$tmp/rep" 2>/dev/null
check_eval "report: endpoint tcp:127.0.0.1:1 with error rate 1" \
    "python3 -c \"
import json, sys
e = {x['endpoint']: x for x in json.load(open('$tmp/rep/findings.json'))['endpoints']}
sys.exit(0 if e['tcp:127.0.0.1:1']['error_rate'] == 1 and e['tcp:127.0.0.1:1']['spans'] == 2 else 1)\""
# the exports: named by their endpoint, and errors (Zipkin's error tag, OTLP status 2)
"$bin/spanfold-export" --db "$tmp/r.db" --format zipkin --all >"$tmp/z.json" 2>/dev/null
check_eval "zipkin: tcp:127.0.0.1:1 with the reason as its error tag" \
    "python3 -c \"
import json, sys
d = json.load(open('$tmp/z.json'))
sys.exit(0 if len(d) == 2 and all(x['name'] == 'tcp:127.0.0.1:1' and
    x['tags']['error'].startswith('handshake failed: connection refused') for x in d) else 1)\""
"$bin/spanfold-export" --db "$tmp/r.db" --format otlp --all >"$tmp/o.jsonl" 2>/dev/null
check_eval "otlp: status code 2 (error)" \
    "python3 -c \"
import json, sys
s = [sp for l in open('$tmp/o.jsonl') for rs in json.loads(l)['resourceSpans']
     for ss in rs['scopeSpans'] for sp in ss['spans']]
sys.exit(0 if len(s) == 2 and all(x['status']['code'] == 2 for x in s) else 1)\""
tap_plan

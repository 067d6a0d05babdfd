#!/usr/bin/env bash
# spanfold-export end to end: the demo database (scripts/demo.sh on samples/demo: a
# real service's packets, perf samples and span markers, joined by the real tools),
# export every format, and have each read back by its consumer
# (validate.py for OTLP/Zipkin/Chrome rules, pprof-format and speedscope's own app in
# headless Chromium via consumers.mjs); counts must equal the database's.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
n=1
t() { if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; n=$((n + 1)); }
for b in pcap2spans perf-fold tracefs2spans spanfold-export; do
    [ -x "$bin/$b" ] || { echo "not ok 1 - $b not built"; echo "1..1"; exit 1; }
done
tap_tmpdir
# the demo database: the README's main command on samples/demo (a real service under real
# clients: HTTP/1.1, h2c, gRPC; perf samples and spantrace markers joined by span id)
"$top/scripts/demo.sh" "$tmp/demo" >"$tmp/demo.log" 2>&1
t $? "the demo pipeline (scripts/demo.sh) builds the database"
db=$tmp/demo/spans.db
q() { sqlite3 "$db" "$1"; }
spans=$(q "SELECT count(*) FROM spans WHERE span_id IS NOT NULL AND trace_id IS NOT NULL")
all_spans=$(q "SELECT count(*) FROM spans")
samples=$(q "SELECT count(*) FROM samples")
attributed=$(q "SELECT count(*) FROM samples WHERE span_id IS NOT NULL")
[ "$spans" -gt 0 ] && [ "$attributed" -gt 0 ]; t $? "the database has $spans spans with context and $attributed attributed samples"

ex() { "$bin/spanfold-export" --db "$db" "$@" 2>>"$tmp/err"; }
run_py() {
    out=$(python3 "$top/tests/spanfold-export/validate.py" "$@" --start $n)
    printf '%s\n' "$out" | grep -v '^# next'
    n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
}
ex --format otlp -o "$tmp/o.jsonl"; t $? "otlp export exits 0"
run_py otlp "$tmp/o.jsonl" "$spans"
ex --format zipkin -o "$tmp/z.json"; t $? "zipkin export exits 0"
run_py zipkin "$tmp/z.json" "$spans"
ex --format chrome -o "$tmp/c.json"; t $? "chrome export exits 0"
run_py chrome "$tmp/c.json" "$spans" "$samples"
ex --format otlp --all -o "$tmp/all.jsonl"
got=$(python3 -c "import json,sys; print(sum(len(s['spans']) for l in open('$tmp/all.jsonl') for r in json.loads(l)['resourceSpans'] for s in r['scopeSpans']))")
[ "$got" = "$all_spans" ]; t $? "--all exports every span ($got of $all_spans), synthetic ids where no context"

# spans without trace context: left out by default, synthetic deterministic ids with --all
"$bin/pcap2spans" --db "$tmp/h1.db" --quiet "$top/samples/pcap/http1.pcap"
h1_all=$(sqlite3 "$tmp/h1.db" "SELECT count(*) FROM spans")
h1_ctx=$(sqlite3 "$tmp/h1.db" "SELECT count(*) FROM spans WHERE span_id IS NOT NULL AND trace_id IS NOT NULL")
a=$("$bin/spanfold-export" --db "$tmp/h1.db" --format zipkin 2>/dev/null | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
"$bin/spanfold-export" --db "$tmp/h1.db" --format otlp --all -o "$tmp/h1a.jsonl" 2>/dev/null
"$bin/spanfold-export" --db "$tmp/h1.db" --format otlp --all -o "$tmp/h1b.jsonl" 2>/dev/null
b=$(python3 -c "
import json
sp=[s for l in open('$tmp/h1a.jsonl') for r in json.loads(l)['resourceSpans'] for ss in r['scopeSpans'] for s in ss['spans']]
syn=[s for s in sp if any(a['key']=='spanfold.synthetic_ids' for a in s['attributes'])]
print(len(sp), len(syn))")
[ "$a" = "$h1_ctx" ] && [ "$b" = "$h1_all $((h1_all - h1_ctx))" ] && [ "$h1_all" -gt "$h1_ctx" ]
t $? "http1 sample: $a spans with context by default; --all gives $h1_all, $((h1_all - h1_ctx)) marked synthetic ($b)"
cmp -s "$tmp/h1a.jsonl" "$tmp/h1b.jsonl"; t $? "synthetic ids are deterministic across runs"

# filters: one span, its trace, a time window
sid=$(q "SELECT span_id FROM samples WHERE span_id IS NOT NULL GROUP BY span_id ORDER BY count(*) DESC LIMIT 1")
tid=$(q "SELECT trace_id FROM spans WHERE span_id='$sid' LIMIT 1")
want=$(q "SELECT count(*) FROM samples WHERE span_id='$sid'")
got=$(ex --format speedscope --span "$sid" | python3 -c "import json,sys; d=json.load(sys.stdin); print(len(d['profiles']), sum(len(p['samples']) for p in d['profiles']))")
[ "$got" = "1 $want" ]; t $? "--span $sid: one speedscope profile with its $want samples ($got)"
wantt=$(q "SELECT count(*) FROM spans WHERE trace_id='$tid'")
got=$(ex --format zipkin --trace "$tid" | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
[ "$got" = "$wantt" ]; t $? "--trace: $got spans of trace $tid"
from=$(q "SELECT req_start_ns FROM spans ORDER BY req_start_ns LIMIT 1 OFFSET 10")
to=$(q "SELECT req_start_ns FROM spans ORDER BY req_start_ns LIMIT 1 OFFSET 30")
fs=$(python3 -c "print('%d.%09d' % divmod($from, 10**9))"); ts=$(python3 -c "print('%d.%09d' % divmod($to, 10**9))")
wantw=$(q "SELECT count(*) FROM spans WHERE req_start_ns >= $from AND req_start_ns < $to AND span_id IS NOT NULL")
got=$(ex --format zipkin --from "$fs" --to "$ts" | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
[ "$got" = "$wantw" ]; t $? "--from/--to: $got spans in the window"
gm=$(q "SELECT grpc_service || '/' || grpc_method FROM spans WHERE grpc_method IS NOT NULL LIMIT 1")
if [ -n "$gm" ]; then
    wantg=$(q "SELECT count(*) FROM spans WHERE grpc_service || '/' || grpc_method = '$gm' AND span_id IS NOT NULL")
    got=$(ex --format otlp --grpc-method "$gm" | python3 -c "
import json,sys
sp=[s for l in sys.stdin for r in json.loads(l)['resourceSpans'] for ss in r['scopeSpans'] for s in ss['spans']]
ok=all(any(a['key']=='rpc.system' for a in s['attributes']) for s in sp)
print(len(sp) if ok else -1)")
    [ "$got" = "$wantg" ]; t $? "--grpc-method $gm: $got spans, each with rpc.* attributes"
fi
auth=$(q "SELECT authority FROM spans WHERE authority IS NOT NULL LIMIT 1")
got=$(ex --format zipkin --service-map "$auth=checkout-svc" --service checkout-svc | python3 -c "
import json,sys; sp=json.load(sys.stdin); print(len(sp), all(s['localEndpoint']['serviceName']=='checkout-svc' for s in sp))")
wants=$(q "SELECT count(*) FROM spans WHERE authority = '$auth' AND span_id IS NOT NULL")
[ "$got" = "$wants True" ]; t $? "--service-map/--service: $got spans named by the map"
ex --format nosuch >/dev/null 2>&1; [ $? = 2 ]; t $? "an unknown format is a usage error (exit 2)"
ex --db /nonexistent.db --format otlp >/dev/null 2>&1; [ $? = 2 ]; t $? "an unreadable database is exit 2"

# pprof and speedscope read back by their consumers
ex --format pprof -o "$tmp/p.pb.gz"; t $? "pprof export exits 0"
ex --format speedscope -o "$tmp/s.json"; t $? "speedscope export exits 0"
nm=$top/tests/spanfold-export/node_modules
if [ ! -d "$nm/pprof-format" ] || [ ! -d "$nm/speedscope" ] || [ ! -d "$nm/playwright-core" ]; then
    (cd "$top/tests/spanfold-export" && npm ci --no-audit --no-fund >/dev/null 2>&1 || npm install --no-audit --no-fund >/dev/null 2>&1)
fi
if ! command -v node >/dev/null; then
    echo "ok $n - exports read back by their consumers # SKIP node missing (scripts/deps.sh heavy)"; n=$((n + 1))
elif [ ! -d "$nm/pprof-format" ]; then
    echo "not ok $n - the npm packages (pprof-format, speedscope, playwright-core) did not install"; n=$((n + 1))
elif [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "ok $n - exports read back by their consumers # SKIP chromium missing (scripts/deps.sh heavy)"; n=$((n + 1))
else
    out=$(cd "$top/tests/spanfold-export" && timeout 180 node consumers.mjs "$tmp/p.pb.gz" "$tmp/s.json" "$samples" "$attributed" "$top/tests/artifacts" 2>&1)
    printf '%s\n' "$out" | grep -E '^(not )?ok|^#' | while IFS= read -r l; do
        case "$l" in
        ok*|"not ok"*) echo "${l%% - *}" | sed 's/[0-9]*$//' | tr -d '\n'; echo "$n - ${l#* - }"; n=$((n + 1)) ;;
        *) echo "$l" ;;
        esac
    done
    n=$((n + $(printf '%s\n' "$out" | grep -cE '^(not )?ok')))
fi
echo "1..$((n - 1))"

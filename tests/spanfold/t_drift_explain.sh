#!/usr/bin/env bash
# The drift explanation (lib/sf_explain.h) on the demo service's sampling failure modes
# (tests/data/drift/: real clients, real captures, the injected cause known from each
# MANIFEST.json.gz, which only this test reads): a baggage member a sampler drops, a
# header a proxy stopped sending, an upstream that stopped sampling, and a uniform rate
# change.  Each drift finding of an HTTP endpoint must name the injected attribute first
# with at least 80 % of the drop, the uniform change none; findings.json's drift objects
# carry exactly the keys docs/spanfold.md lists; the verdict says it in words; and a
# database without the attributes (pcap2spans from before span_headers) still explains
# by what it has.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
data=$top/tests/data/drift
tap_tmpdir t_drift_explain

command -v python3 >/dev/null || tap_skip_all "python3 missing (Debian python3)"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell missing (Debian sqlite3)"

for sc in baggage header upstream uniform; do
    db=$tmp/$sc.db
    {
        "$sf" pcap2spans --quiet --db "$db" "$data/$sc/demo.pcap" &&
            "$sf" tracefs2spans --quiet --db "$db" "$data/$sc/markers.txt"
    } 2>"$tmp/$sc.ingest.err"
    check_eval "$sc: ingested (pcap2spans, tracefs2spans)" "[ -s '$db' ]"
    "$sf" report --quiet --db "$db" --out "$tmp/$sc" 2>"$tmp/$sc.err"
    check_eval "$sc: report exit 0" "[ $? -eq 0 ] && [ -s '$tmp/$sc/findings.json' ]"
    python3 - "$sc" "$tmp/$sc/findings.json" "$data/$sc/MANIFEST.json.gz" \
        "$top/docs/spanfold.md" >"$tmp/$sc.check" 2>&1 <<'PY'
import gzip, json, re, sys
sc, fpath, mpath, docs = sys.argv[1:5]
f = json.load(open(fpath))
m = json.load(gzip.open(mpath, "rt"))
want = {"baggage": ("baggage.env", "prod-legacy"),
        "header": ("header.x-envoy-downstream-service-cluster", None),
        "upstream": ("client", "127.0.0.2"), "uniform": None}[sc]
assert m["scenario"] == sc, m.get("scenario")
t0 = m["scenario_start_realtime_ns"]
http = [d for d in f["drift"] if d["endpoint"].startswith("GET /api/") or
        d["endpoint"].startswith("/api/")]
print("drift findings on HTTP endpoints:", len(http))
ok_find = len(http) >= 1 and all(d["direction"] == "down" for d in http)
ok_time = all(abs(d["time_ns"] - t0) < 5e9 for d in http)
named = []
for d in http:
    items = [e for e in d["explained_by"] if e["attribute"] != "decision"]
    first = items[0] if items else None
    print("  %s: %s" % (d["endpoint"], d["explanation"]))
    named.append(first and (first["attribute"], first["value"], first["explained"]))
if want:
    ok_named = all(n and (n[0], n[1]) == want and n[2] >= 0.8 for n in named)
    words = want[0] + (" = " + want[1] if want[1] else "")
    ok_words = all(words in d["explanation"] for d in http) and words in f["verdict"]
else:
    ok_named = all(n is None for n in named)
    ok_words = all("no single attribute explains" in d["explanation"] for d in http)
# the keys docs/spanfold.md lists for drift[] and drift[].explained_by[]
doc = open(docs).read()
def listed(row):
    line = [l for l in doc.splitlines() if l.startswith("| `%s` |" % row)][0]
    return set(re.findall(r"`([a-z_]+)(?:\[\])?`", line.split("|")[2]))
keys_ok = all(set(d) == listed("drift[]") for d in f["drift"]) and all(
    set(e) == listed("drift[].explained_by[]") for d in f["drift"] for e in d["explained_by"])
parts_ok = all(abs(e["mix"] + e["rate"] - (e["share_after"] * (e["kept_after"] or 0) -
                                            e["share_before"] * (e["kept_before"] or 0))) < 1e-6
               for d in f["drift"] for e in d["explained_by"]
               if e["kept_before"] is not None and e["kept_after"] is not None)
print("RESULT", int(ok_find), int(ok_time), int(ok_named), int(ok_words), int(keys_ok),
      int(parts_ok))
PY
    sed 's/^/# /' "$tmp/$sc.check"
    read -r _ f1 f2 f3 f4 f5 f6 < <(grep '^RESULT' "$tmp/$sc.check" || echo "RESULT 0 0 0 0 0 0")
    check "$sc: a downward drift finding on the HTTP endpoints" [ "$f1" = 1 ]
    check "$sc: each within 5 s of the true switch" [ "$f2" = 1 ]
    if [ "$sc" = uniform ]; then
        check "$sc: no attribute is named for a uniform rate change" [ "$f3" = 1 ]
        check "$sc: the words say the rate fell uniformly" [ "$f4" = 1 ]
    else
        check "$sc: the injected attribute is named first, with >= 80 % of the drop" [ "$f3" = 1 ]
        check "$sc: the explanation and the verdict name it" [ "$f4" = 1 ]
    fi
    check "$sc: drift[] and explained_by[] carry exactly the documented keys" [ "$f5" = 1 ]
    check "$sc: each value's mix and rate parts add up to its change" [ "$f6" = 1 ]
done

# the page says it too, escaped
check_eval "the page shows the explanation of the baggage drift" \
    "grep -q 'baggage.env = prod-legacy' '$tmp/baggage/report.html'"

# inflect --explain-drift: the same explanation beside inflect's own drift alarm
"${SF_BIN:-$top/bin}/inflect" --db "$tmp/baggage.db" --by endpoint --expect-rate 0.5 \
    --explain-drift --quiet --json "$tmp/inflect.json" 2>/dev/null
check_eval "inflect --explain-drift: each alarm of an HTTP endpoint names baggage.env = prod-legacy" \
    "python3 -c \"
import json, sys
d = [g for g in json.load(open('$tmp/inflect.json'))['drift'] if g['alarm']]
sys.exit(0 if d and all(g['explained_by'][0]['attribute'] in ('baggage.env', 'decision') and
    'baggage.env = prod-legacy' in g['explanation'] for g in d) else 1)\""

# the gate scoped to an attribute, in the one gate language (inflect and spanfold gate)
gate() { # EXPECTED-EXIT NAME GATE...
    local want=$1 name=$2 got
    shift 2
    "${SF_BIN:-$top/bin}/inflect" --db "$tmp/baggage.db" --by endpoint --quiet --json /dev/null \
        "${@/#/--gate=}" 2>"$tmp/gate.err"
    got=$?
    check "$name (exit $got)" [ "$got" = "$want" ]
}
gate 1 "kept share where baggage.env = prod-legacy < 20pt fails (it is 13 %)" \
    'sampled_share where baggage.env = "prod-legacy" < 20pt'
check_eval "and says of how many traces" "grep -q 'of the traces with baggage.env = \"prod-legacy\" is 13' '$tmp/gate.err'"
gate 0 "< 10pt holds" 'kept_share where baggage.env = prod-legacy < 10pt'
gate 1 "GROUP/ in front: /api/checkout's env=prod traces (kept about half) < 60pt fails" \
    '/api/checkout/sampled_share where baggage.env = prod < 60pt'
gate 2 "an attribute no trace has cannot be judged (never a pass)" \
    'sampled_share where baggage.nope = "x" < 10pt'
check_eval "and says too few" "grep -q 'too few to judge' '$tmp/gate.err'"
gate 2 "'where' on p99 is a usage error" 'p99 where client = 127.0.0.2 > 5ms'
gate 2 "a bare number for a share is refused (pt or %)" 'sampled_share where client = 127.0.0.2 < 0.1'
"$sf" gate --db "$tmp/baggage.db" --by endpoint --gate 'sampled_share where baggage.env = "prod-legacy" < 20pt' \
    >/dev/null 2>&1
check "spanfold gate --db gives the same verdict (exit 1)" [ $? -eq 1 ]

# the kept headers: what pcap2spans stored, and --keep-header
q() { sqlite3 "$tmp/header.db" "$1"; }
check_eval "span_headers holds user-agent and the x-envoy header, names lowercase" \
    '[ "$(q "SELECT count(DISTINCT name) FROM span_headers WHERE name IN ('"'user-agent'"', '"'x-envoy-downstream-service-cluster'"')")" = 2 ]'
check_eval "no header outside the kept list (accept is not kept)" \
    '[ "$(q "SELECT count(*) FROM span_headers WHERE name = '"'accept'"'")" = 0 ]'
"$sf" pcap2spans --quiet --keep-header accept --db "$tmp/keep.db" "$data/header/demo.pcap" 2>/dev/null
check_eval "--keep-header accept keeps it as well" \
    '[ "$(sqlite3 "$tmp/keep.db" "SELECT count(*) > 0 FROM span_headers WHERE name = '"'accept'"'")" = 1 ]'
"$sf" pcap2spans --quiet --keep-header "bad name" --db "$tmp/bad.db" "$data/header/demo.pcap" \
    2>"$tmp/bad.err"
check_eval "--keep-header with a space: exit 2 and why" \
    "[ $? -eq 2 ] && grep -q 'not a header name' '$tmp/bad.err'"

# a database without span_headers rows (as pcap2spans wrote before): baggage and the client
# still explain, from the contexts and connections tables
cp "$tmp/baggage.db" "$tmp/old.db"
sqlite3 "$tmp/old.db" "DELETE FROM span_headers"
"$sf" report --quiet --db "$tmp/old.db" --out "$tmp/old" 2>/dev/null
check_eval "without kept headers the baggage drift is still explained by baggage.env" \
    "grep -q 'baggage.env = prod-legacy' '$tmp/old/findings.json'"

tap_plan

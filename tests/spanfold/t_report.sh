#!/usr/bin/env bash
# spanfold report on recordings it was not tuned on (tests/data/demo2 and demo3: phases of
# 9 s and 11 s, where samples/demo has 15 s): findings.json against each MANIFEST.json,
# with no manifest given to the tools: the slow endpoint's p50 inflection within 1.5 s
# of the true start, the slow function first among the slowest spans' CPU, a downward
# sampling drift near the true rate change.  Then the page is self-contained, --tz,
# hostile strings escaped, and the errors exit 2 with a reason.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
tap_tmpdir t_report

command -v python3 >/dev/null || tap_skip_all "python3 missing (Debian python3)"
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 shell missing (Debian sqlite3)"

# the database of a recording, from the single tools linked into spanfold (what spanfold
# ingest runs): ingest NAME DIR -> $tmp/NAME.db
ingest() {
    local db=$tmp/$1.db
    {
        "$sf" pcap2spans --quiet --db "$db" "$2/demo.pcap" &&
            "$sf" perf-fold --quiet --db "$db" "$2/perf.txt" >/dev/null &&
            "$sf" tracefs2spans --quiet --db "$db" "$2/markers.txt"
    } 2>"$tmp/$1.ingest.err"
    check_eval "$1 ingested (pcap2spans, perf-fold, tracefs2spans)" "[ -s '$db' ]"
}

# findings.json of recording NAME against its manifest (read only here, never by the tools)
against_manifest() {
    local name=$1 out=$tmp/$1 rc
    "$sf" report --db "$tmp/$name.db" --out "$out" 2>"$tmp/$name.err"
    rc=$?
    check_eval "$name: exit 0, report.html and findings.json written" \
        "[ $rc -eq 0 ] && [ -s '$out/report.html' ] && [ -s '$out/findings.json' ]"
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/$name.err"
    check_eval "$name: stderr gives the verdict in words" "grep -q 'p50 rose' '$tmp/$name.err'"
    python3 - "$out/findings.json" "$2/MANIFEST.json" >"$tmp/$name.check" 2>&1 <<'PY2'
import json, sys
f = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
ep, fn = m["service"]["slow_endpoint"], m["service"]["slow_function"]
t_slow, t_rate = m["slow_start_realtime_ns"], m["rate_change_realtime_ns"]
def mine(e): return e["endpoint"].endswith(ep)
ups = [i for i in f["inflections"] if mine(i) and i["metric"] == "p50" and
       i["kind"] != "spike" and i["after"] > i["before"]]
if ups:
    first = min(ups, key=lambda i: i["time_ns"])
    d = (first["time_ns"] - t_slow) / 1e9
    print("inflection %s %s at %+.2f s of the true start, %.0f -> %.0f ms" %
          (first["metric"], first["kind"], d, first["before"], first["after"]))
    print("INFLECTION_OK" if abs(d) <= 1.5 else "INFLECTION_FAR")
else:
    print("no rising p50 inflection on %s: %s" % (ep, f["inflections"]))
slow = [s for s in f["slow"] if mine(s)]
if slow and slow[0]["top_functions"]:
    top = slow[0]["top_functions"][0]
    print("slowest spans' top function %s (%.0f %%)" % (top["name"], 100 * top["share"]))
    print("SLOWFN_OK" if top["name"] == fn else "SLOWFN_WRONG")
downs = [d for d in f["drift"] if d["direction"] == "down" and d["to_rate"] < d["from_rate"]]
if downs:
    best = min(downs, key=lambda d: abs(d["time_ns"] - t_rate))
    dt = (best["time_ns"] - t_rate) / 1e9
    print("drift on %s %.2f -> %.2f at %+.1f s of the true change" %
          (best["endpoint"], best["from_rate"], best["to_rate"], dt))
    print("DRIFT_OK" if abs(dt) <= 5 else "DRIFT_FAR")
else:
    print("no downward drift: %s" % f["drift"])
ok = all(i["time_utc"].endswith("Z") and isinstance(i["time_ns"], int) for i in f["inflections"])
ok = ok and f["clock_fits"] and f["clock_fits"][0]["from"] == "monotonic"
print("SHAPE_OK" if ok else "SHAPE_BAD")
PY2
    sed 's/^/# /' "$tmp/$name.check"
    check_eval "$name: the slow endpoint's p50 inflection is within 1.5 s of the true start" \
        "grep -q INFLECTION_OK '$tmp/$name.check'"
    check_eval "$name: the slow function is the top function of the slow endpoint's slowest spans" \
        "grep -q SLOWFN_OK '$tmp/$name.check'"
    check_eval "$name: a downward sampling drift within 5 s of the true rate change" \
        "grep -q DRIFT_OK '$tmp/$name.check'"
    check_eval "$name: times are CLOCK_REALTIME ns with ISO 8601 UTC text; clock_fits listed" \
        "grep -q SHAPE_OK '$tmp/$name.check'"
}

# demo2 (9 s phases) showed the windowed p50 detector's weakness and was used to fix it;
# demo3 (11 s phases) was recorded after that fix and checked once: the held-out case
# samples/demo (15 s phases) is the recording the defaults were set on: make demo's case
ingest demo "$top/samples/demo"
against_manifest demo "$top/samples/demo"
for rec in demo2 demo3; do
    ingest "$rec" "$top/tests/data/$rec"
    against_manifest "$rec" "$top/tests/data/$rec"
done

# why it was slow: every latency inflection's time taken apart, the parts adding up to the
# mean duration; on the demo's CPU-bound slow phase the cause is the CPU
# why_check FINDINGS ENDPOINT CAUSE [CAUSE_ENDPOINT] [offcpu]: the largest latency rise of
# ENDPOINT (- any) has cause CAUSE (and that downstream endpoint); "offcpu": the database has
# off-CPU intervals, so blocked_ns is measured, where it is null otherwise
why_check() {
    python3 - "$@" <<'PY7'
import json, sys
f = json.load(open(sys.argv[1]))
lat = [i for i in f["inflections"] if i["metric"] in ("p50", "p95", "p99")]
bad = []
off = "offcpu" in sys.argv[4:]  # the recording has off-CPU intervals: blocked_ns is measured
want_ep = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "offcpu" else None
for i in lat:
    for side in ("slow", "normal"):
        b = i["breakdown"][side]
        parts = b["cpu_ns"] + b["downstream_ns"] + b["network_ns"] + b["unaccounted_ns"] + \
            (b["blocked_ns"] or 0)
        if b["spans"] and abs(parts - b["duration_ns"]) > 4:
            bad.append((i["endpoint"], side, parts, b["duration_ns"]))
        if (b["blocked_ns"] is not None) != off:
            bad.append("blocked_ns %s" % b["blocked_ns"])
mine = [i for i in lat if sys.argv[2] in ("-", i["endpoint"])]
head = max(mine, key=lambda i: i["after"] / max(i["before"], 1e-9)) if mine else None
ok = head and not bad and head["cause"] == sys.argv[3] and head["cause_share"] > 0.25 and \
    (want_ep is None or head.get("cause_endpoint") == want_ep) and \
    f["verdict"].count("of the added time is") == 1
print("WHY_OK" if ok else "WHY_BAD", head and head["cause"], head and head["cause_share"],
      head and (head.get("cause_endpoint") or head.get("cause_reason")), bad[:3])
PY7
}
for rec in demo2 demo3; do
    why_check "$tmp/$rec/findings.json" - cpu >"$tmp/$rec.why"
    sed 's/^/# /' "$tmp/$rec.why"
    check_eval "$rec: the slow phase's added time is named CPU, the parts add up to each span set's mean" \
        "grep -q WHY_OK '$tmp/$rec.why'"
done

# off CPU (issue #30.1): demo-blocked's slow phase waits, for a pool of one backend connection
# and its 15 ms answer, recorded with every sched_switch; spanfold ingest takes perf script's
# text of it as it is (the tracepoints' fields included)
blk=$top/tests/data/demo-blocked
"$sf" ingest --quiet --db "$tmp/blk.db" "$blk/demo.pcap" "$blk/perf.txt.gz" "$blk/markers.txt" \
    2>"$tmp/blk.ingest.err"
check_eval "demo-blocked: off-CPU intervals stored, most of the search spans' attributed" \
    '[ "$(sqlite3 "$tmp/blk.db" "SELECT count(*) > 1000 FROM offcpu")" = 1 ] &&
     [ "$(sqlite3 "$tmp/blk.db" "SELECT count(DISTINCT span_id) > 100 FROM offcpu")" = 1 ]'
check_eval "... not one of them counted as a CPU sample" \
    '[ "$(sqlite3 "$tmp/blk.db" "SELECT group_concat(DISTINCT event) FROM samples")" = cpu-clock ]'
"$sf" report --db "$tmp/blk.db" --out "$tmp/blk" 2>"$tmp/blk.err"
why_check "$tmp/blk/findings.json" /api/search blocked offcpu >"$tmp/blk.why"
sed 's/^/# /' "$tmp/blk.why"
check_eval "demo-blocked: /api/search's added time is named blocked, the parts (blocked too) add up" \
    "grep -q WHY_OK '$tmp/blk.why'"
python3 - "$tmp/blk/findings.json" "$blk/MANIFEST.json" >"$tmp/blk.check" 2>&1 <<'PY8'
import json, sys
f = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
lat = [i for i in f["inflections"] if i["endpoint"] == "/api/search" and i.get("cause") == "blocked"]
i = lat[0] if lat else None
ok = i is not None
if ok:
    s, n = i["breakdown"]["slow"], i["breakdown"]["normal"]
    reasons = {r["reason"]: r["ns"] for r in s["blocked_by_reason"]}
    top = max(reasons, key=reasons.get) if reasons else ""
    ok = (i["cause_reason"] == top and top.startswith("do_nanosleep")
          and s["blocked_ns"] - n["blocked_ns"] > 10e6            # the 15 ms answer, per request
          and abs(s["cpu_ns"] - n["cpu_ns"]) < 0.5 * (s["blocked_ns"] - n["blocked_ns"])
          and abs(i["time_ns"] - m["slow_start_realtime_ns"]) < 1.5e9
          and "blocked off CPU in do_nanosleep" in f["verdict"])
print("BLK_OK" if ok else "BLK_BAD", i and i.get("cause_reason"), i and i["breakdown"]["slow"]["blocked_ns"])
PY8
sed 's/^/# /' "$tmp/blk.check"
check_eval "... in do_nanosleep, +10 ms a request, CPU per request unchanged, at the true start, in words" \
    "grep -q BLK_OK '$tmp/blk.check'"
# the handshakes a request waited for before its first byte (issue #30.3): every curl
# request of the demo opened its own connection on lo, so each waited a few tens of us
check_eval "demo2: the slow set's breakdown has the handshakes of the connections its requests opened" \
    "python3 -c \"
import json, sys
b = [i['breakdown'] for i in json.load(open('$tmp/demo2/findings.json'))['inflections'] if 'breakdown' in i]
sys.exit(0 if b and all(1e3 < x[s]['handshake_ns'] < 5e6 for x in b for s in ('slow', 'normal')) else 1)\""
# the slowest requests, with their phases from the capture: sorted, their phases adding up
# to their duration, and on demo2 most of them searches of the slow phase
check_eval "demo2: the slowest requests listed, slowest first, phases adding up, most slow searches" \
    "python3 -c \"
import json, sys
f = json.load(open('$tmp/demo2/findings.json'))
m = json.load(open('$top/tests/data/demo2/MANIFEST.json'))
s = f['slowest']
ok = 0 < len(s) <= 10 and all(a['duration_ms'] >= b['duration_ms'] for a, b in zip(s, s[1:]))
ok = ok and all(abs(x['request_ms'] + x['server_ms'] + x['response_ms'] - x['duration_ms']) < 0.01
                for x in s if None not in (x['request_ms'], x['server_ms'], x['response_ms']))
ok = ok and sum(x['endpoint'] == '/api/search' and x['time_ns'] >= m['slow_start_realtime_ns'] - 1e9
                for x in s) >= 6
sys.exit(0 if ok and 'id=\\\"slowest\\\"' in open('$tmp/demo2/report.html').read() else 1)\""
# the CPU-per-request rule (issue #31.4): the CPU-bound slow phase raises the search's CPU
# per request while its request rate does not rise, within 6 s of the true start (a ramp's
# first window may lead it); the waiting slow phase of demo-blocked raises none there
cpuq() { # FINDINGS MANIFEST WANT(1: a finding on /api/search, 0: none)
    python3 - "$@" <<'PY9'
import json, sys
f = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
q = [x for x in f["cpu_per_request"] if x["endpoint"] == "/api/search"]
if sys.argv[3] == "1":
    ok = len(q) >= 1 and all(x["after_ms"] >= 1.2 * x["before_ms"] and
                             x["qps_after"] <= 1.1 * x["qps_before"] for x in q) and \
        min(abs(x["time_ns"] - m["slow_start_realtime_ns"]) for x in q) < 6e9 and \
        "CPU per request of /api/search rose" in f["verdict"]
else:
    ok = not q
print("CPUQ_OK" if ok else "CPUQ_BAD", [(x["kind"], x["before_ms"], x["after_ms"], x["qps_before"],
                                        x["qps_after"]) for x in q])
PY9
}
for rec in demo2 demo3; do
    cpuq "$tmp/$rec/findings.json" "$top/tests/data/$rec/MANIFEST.json" 1 >"$tmp/$rec.cpuq"
    sed 's/^/# /' "$tmp/$rec.cpuq"
    check_eval "$rec: CPU per request of /api/search rose at the slow phase, its rate did not" \
        "grep -q CPUQ_OK '$tmp/$rec.cpuq'"
done
cpuq "$tmp/blk/findings.json" "$blk/MANIFEST.json" 0 >"$tmp/blk.cpuq"
sed 's/^/# /' "$tmp/blk.cpuq"
check_eval "demo-blocked: no CPU-per-request finding for the search that waits" \
    "grep -q CPUQ_OK '$tmp/blk.cpuq'"
# the off-CPU flame graph of the slow searches, and wall-clock time
"$sf" stacks --db "$tmp/blk.db" --where 'endpoint = "/api/search" and duration > p95' --offcpu \
    --folded >"$tmp/blk.off" 2>"$tmp/blk.off.err"
check_eval "stacks --offcpu: ns, the heaviest stack is the backend's sleep under search_backend" \
    '[ "$(head -1 "$tmp/blk.off")" = "# weight: ns" ] &&
     tail -n +2 "$tmp/blk.off" | sort -k2 -n -r | head -1 | grep -q ";search_backend;.*;do_nanosleep;schedule"'
check_eval "... no tracepoint frame left in a stack" '! grep -q __traceiter_ "$tmp/blk.off"'
"$sf" stacks --db "$tmp/blk.db" --where 'endpoint = "/api/search"' --wall --folded >"$tmp/blk.wall"
check_eval "stacks --wall: CPU stacks and off-CPU ones marked [off-CPU: REASON]" \
    'grep -q ";score_doc [0-9]*$" "$tmp/blk.wall" && grep -q ";\[off-CPU: do_nanosleep\] [0-9]*$" "$tmp/blk.wall"'
"$sf" stacks --db "$tmp/demo2.db" --offcpu >/dev/null 2>"$tmp/nooff.err"
check_eval "stacks --offcpu without scheduler records: exit 2 and the recipe" \
    '[ $? = 2 ] && grep -q "no off-CPU intervals in the database: record them with spantrace --offcpu -p PID, or sched:sched_switch" "$tmp/nooff.err"'
"$sf" stacks --db "$tmp/blk.db" --offcpu --weight samples >/dev/null 2>"$tmp/offw.err"
check_eval "stacks --offcpu --weight samples: exit 2, time is not a sample count" \
    '[ $? = 2 ] && grep -q "weighs time" "$tmp/offw.err"'

db=$tmp/demo2.db
out=$tmp/demo2

# the clock fit's residual as the database holds it, not the drift fit's 0 through one row
own=$(sqlite3 "$db" "SELECT sqrt(avg(residual_ns * residual_ns)) FROM clock_fits WHERE from_clock = 'monotonic'" 2>/dev/null)
said=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clock_fits"][0]["residual_rms_ns"])' "$out/findings.json" 2>/dev/null)
check_eval "findings.json's residual_rms_ns ($said) is at least the clock_fits rows' own ($own), and not 0" \
    "python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (b > 0 and a >= b * (1 - 1e-9)))' '$said' '$own'"

# the clock offset in a unit a reader takes in, every digit kept (the fit's ns, in s)
got=$(python3 - "$out/findings.json" "$out/report.html" <<'PY9'
import json, re, sys
off = json.load(open(sys.argv[1]))["clock_fits"][0]["offset_ns"]
cells = re.findall(r'<td class="n">(-?\d+)\.(\d{9}) s</td>', open(sys.argv[2]).read())
raw = re.findall(r'<td class="n">-?\d{7,} ns</td>', open(sys.argv[2]).read())
ok = cells and not raw and abs(int(cells[0][0] + cells[0][1]) - off) <= abs(off) * 1e-12 + 1
print("OFF_OK" if ok else "OFF_BAD", cells[:1], off)
PY9
)
check_eval "the clock table gives the offset in s to the ns, not raw ns ($got)" '[ "${got%% *}" = OFF_OK ]'

# one self-contained page: nothing fetched, the graphs inline
html=$out/report.html
check_eval "report.html fetches nothing (no http(s) src/href, no <link>, no script src)" \
    "! grep -Eiq '(src|href)=\"(https?:)?//|<link |<script[^>]* src=' '$html'"
# the latency legend names only the lines drawn (a one-point polyline draws nothing), and
# says why a percentile is left out
python3 - "$html" >"$tmp/legend.check" 2>&1 <<'PY3'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
bad, said = [], 0
for svg in re.findall(r'<svg class="timeline".*?</svg>', page, re.S):
    drawn = {m.group(1) for m in re.finditer(r'<g class="series" data-name="(\w+)">(.*?)</g>', svg, re.S)
             if "<polyline" in m.group(2) or "<circle" in m.group(2)}
    named = set(re.findall(r'class="tl">(p50|p95|p99|max)</text>', svg))
    if named - drawn:
        bad.append(sorted(named - drawn))
    if not {"p95", "p99"} <= drawn:
        said += "not drawn: no window has" in svg
        bad += [] if "not drawn: no window has" in svg else [["no reason"]]
print("LEGEND_OK" if not bad else "LEGEND_BAD %s" % bad, "reasons", said)
PY3
sed 's/^/# /' "$tmp/legend.check"
check_eval "every timeline's legend names only lines it draws, and says why p95/p99 are missing" \
    "grep -q LEGEND_OK '$tmp/legend.check'"
# the tail visible: a heatmap per timeline whose cells count every request with a latency
python3 - "$html" "$db" >"$tmp/heat.check" 2>&1 <<'PY4'
import re, sqlite3, sys
page = open(sys.argv[1], encoding="utf-8").read()
want = sqlite3.connect(sys.argv[2]).execute(
    "SELECT count(*) FROM spans WHERE req_start_ns IS NOT NULL AND "
    "COALESCE(resp_end_ns, resp_start_ns) > req_start_ns").fetchone()[0]
svgs = re.findall(r'<svg class="timeline".*?</svg>', page, re.S)
got, bad = 0, []
for svg in svgs:
    heat = re.search(r'<g class="heat">(.*?)</g>', svg, re.S)
    cols = re.search(r'<g class="heat-cols">(.*?)</g>', svg, re.S)
    if not heat or "<path fill=" not in heat.group(1) or not cols:
        bad.append("no heatmap")
        continue
    counts = re.findall(r'<title>\d\d:\d\d:\d\d: (\d+) requests?, median [0-9.e+-]+-[0-9.e+-]+ ms, slowest [0-9.e+-]+-[0-9.e+-]+ ms</title>', cols.group(1))
    if not counts or len(counts) != cols.group(1).count("<rect "):
        bad.append("columns without their count")
    got += sum(int(n) for n in counts)
print("HEAT_OK" if svgs and not bad and got == want else "HEAT_BAD", len(svgs), got, want, bad[:3])
PY4
sed 's/^/# /' "$tmp/heat.check"
check_eval "a latency heatmap on every timeline, its columns counting every request with a latency once" \
    "grep -q HEAT_OK '$tmp/heat.check'"
check_eval "three inline flame graphs as data: URLs, timelines as inline SVG" \
    "[ \$(grep -o 'src=\"data:image/svg+xml;base64,' '$html' | wc -l) -eq 3 ] && grep -q '<svg class=\"timeline\"' '$html'"
check_eval "the verdict names the slow endpoint" \
    "grep -A1 'class=\"verdict' '$html' | grep -q '/api/search p50 rose'"

# --tz: the page and "time" in the zone, time_utc unchanged
"$sf" report --db "$db" --out "$tmp/tz" --tz Europe/Berlin --quiet 2>/dev/null
check_eval "--tz Europe/Berlin: time has +01:00, time_utc still Z" \
    "grep -q '\"time\": \"[0-9T:.-]*+01:00\"' '$tmp/tz/findings.json' && grep -q '\"time_utc\": \"[0-9T:.-]*Z\"' '$tmp/tz/findings.json' && grep -q 'wall-clock time (CET)' '$tmp/tz/report.html'"

# synth DB N PATH START END: a database of N spans (i = 0..N-1) of one complete pcap source,
# GET on host h, each path, start and end an SQL expression of i (ns), sampled when i is odd
synth() {
    sqlite3 "$1" <"$top/lib/schema.sql"
    sqlite3 "$1" <<SQL
INSERT INTO sources(id, kind, path, clock, tool, tool_version, status)
    VALUES (1, 'pcap', 'x.pcap', 'realtime', 'test', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $2 - 1)
INSERT INTO spans(source_id, method, authority, path, status, req_start_ns, resp_end_ns,
                  trace_id, span_id, sampled)
SELECT 1, 'GET', 'h', $3, 200, $4, $5, printf('%032x', i + 1), printf('%016x', i + 1), i % 2 FROM n;
SQL
}

# hostile strings from a capture are escaped, never markup
hdb=$tmp/hostile.db
synth "$hdb" 400 "'/<script>alert(1)</script>\"''&'" "1700000000000000000 + i * 50000000" \
    "1700000000000000000 + i * 50000000 + (CASE WHEN i >= 200 THEN 90 ELSE 10 END) * 1000000"
"$sf" report --db "$hdb" --out "$tmp/hostile" --quiet 2>"$tmp/herr"
rc=$?
check_eval "hostile path: exit 0, escaped in the page, no raw <script>alert" \
    "[ $rc -eq 0 ] && grep -q '/&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;' '$tmp/hostile/report.html' && ! grep -q '<script>alert' '$tmp/hostile/report.html'"
check_eval "hostile path: findings.json is valid JSON with the path as text" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"endpoints\"][0][\"endpoint\"].endswith(\"</script>\\\"\\x27&\")' '$tmp/hostile/findings.json'"
check_eval "no CPU samples: said so, with the way to record them" \
    "grep -q 'no CPU samples' '$tmp/hostile/findings.json'"

# 20,000 requests in 1,250 windows: the heatmap merges windows into at most 240 columns and
# still counts every request once; the slow second half sits in higher rows
bdb=$tmp/many.db
synth "$bdb" 20000 "'/many'" "1700000000000000000 + i * 10000000" \
    "1700000000000000000 + i * 10000000 + (CASE WHEN i >= 10000 THEN 80 ELSE 5 END) * 1000000 + (i * 7919 % 1000) * 1000"
"$sf" report --db "$bdb" --out "$tmp/many" --quiet 2>/dev/null
python3 - "$tmp/many/report.html" >"$tmp/many.check" 2>&1 <<'PY5'
import re, sys
svg = re.findall(r'<svg class="timeline".*?</svg>', open(sys.argv[1]).read(), re.S)[0]
cols = [(float(x), int(n), float(m)) for x, n, m in re.findall(
    r'<rect x="([0-9.]+)" [^>]*><title>[0-9:]+: (\d+) requests?, median ([0-9.e+-]+)-', svg)]
half = len(cols) // 2
early = sorted(m for _, _, m in cols[:half])[half // 2]
late = sorted(m for _, _, m in cols[half:])[(len(cols) - half) // 2]
ok = sum(n for _, n, _ in cols) == 20000 and len(cols) <= 240 and late > 5 * early
print("MANY_OK" if ok else "MANY_BAD", sum(n for _, n, _ in cols), len(cols), early, late)
PY5
sed 's/^/# /' "$tmp/many.check"
check_eval "20,000 requests: at most 240 heatmap columns, every request counted, the slow half's median higher" \
    "grep -q MANY_OK '$tmp/many.check'"

# endpoints with findings first, the worst first, each finding in words beside its chart;
# the healthy ones folded under one line
odb=$tmp/order.db
synth "$odb" 3000 "CASE i % 3 WHEN 0 THEN '/calm-a' WHEN 1 THEN '/slow' ELSE '/calm-b' END" \
    "1700000000000000000 + i * 20000000" \
    "1700000000000000000 + i * 20000000 + (i * 7919 % 1000) * 1000 + (CASE WHEN i % 3 = 1 AND i >= 1500 THEN 90 ELSE 10 END) * 1000000"
"$sf" report --db "$odb" --out "$tmp/order" --quiet 2>/dev/null
python3 - "$tmp/order/report.html" >"$tmp/order.check" 2>&1 <<'PY6'
import re, sys
sec = re.search(r'<section id="timeline">.*?</section>', open(sys.argv[1]).read(), re.S).group(0)
heads = re.findall(r'<h3 class="ep" data-ep="[^"]*">(.*?)</h3>', sec)
first = re.search(r'<h3 class="ep" data-ep="/slow">/slow</h3>\n<ul class="findings"><li>p50 step 10 \S+ 90 ms at', sec)
fold = re.search(r'<details class="healthy"><summary>2 endpoints without a finding.*?</details>', sec, re.S)
ok = heads[:1] == ["/slow"] and first and fold and sorted(re.findall(r'<h3 class="ep" data-ep="[^"]*">(.*?)</h3>', fold.group(0))) == ["/calm-a", "/calm-b"]
print("ORDER_OK" if ok else "ORDER_BAD", heads, bool(first), bool(fold))
PY6
sed 's/^/# /' "$tmp/order.check"
check_eval "the slow endpoint first with its p50 step in words, the two calm ones folded" \
    "grep -q ORDER_OK '$tmp/order.check'"

# the cause named on constructed recordings: a downstream call that got slow (child spans
# by parent id), and a response that takes longer on the wire
ddb=$tmp/downstream.db
synth "$ddb" 2000 "'/api'" "1700000000000000000 + i * 20000000" \
    "1700000000000000000 + i * 20000000 + 4000000 + (CASE WHEN i >= 1000 THEN 60 ELSE 2 END) * 1000000 + (i * 7919 % 500) * 1000"
sqlite3 "$ddb" "INSERT INTO spans(source_id, method, authority, path, status, req_start_ns,
    resp_end_ns, trace_id, span_id, parent_span_id)
  SELECT 1, 'GET', 'db', '/query', 200, req_start_ns + 1000000, resp_end_ns - 2000000,
         trace_id, printf('%016x', id + 100000), span_id FROM spans WHERE path = '/api'"
"$sf" report --db "$ddb" --out "$tmp/downstream" --quiet 2>/dev/null
why_check "$tmp/downstream/findings.json" /api downstream /query >"$tmp/ds.why"
sed 's/^/# /' "$tmp/ds.why"
check_eval "a slow downstream call: /api's cause is downstream, to /query" "grep -q WHY_OK '$tmp/ds.why'"
check_eval "... and the headline is the caller's, naming the slow call (not /query's own rise)" \
    "python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[\"verdict\"]; sys.exit(not (v.startswith(\"/api p50 rose\") and \"downstream call to /query\" in v))' '$tmp/downstream/findings.json'"
# a mixed slowdown: the same call +35 ms, and +20 ms of CPU (two 10 ms cpu-clock samples a slow
# request): both are named, the larger first
mdb=$tmp/mixed.db
synth "$mdb" 2000 "'/api'" "1700000000000000000 + i * 100000000" \
    "1700000000000000000 + i * 100000000 + 4000000 + (CASE WHEN i >= 1000 THEN 60 ELSE 2 END) * 1000000 + (i * 7919 % 500) * 1000"
sqlite3 "$mdb" "INSERT INTO spans(source_id, method, authority, path, status, req_start_ns,
    resp_end_ns, trace_id, span_id, parent_span_id)
  SELECT 1, 'GET', 'db', '/query', 200, req_start_ns + 1000000,
         req_start_ns + 2000000 + (CASE WHEN id > 1000 THEN 35 ELSE 0 END) * 1000000,
         trace_id, printf('%016x', id + 100000), span_id FROM spans WHERE path = '/api';
  INSERT INTO sources(id, kind, path, clock, tool, tool_version, status)
    VALUES (2, 'perf', 'p.txt', 'realtime', 'test', '0', 'complete');
  INSERT INTO stacks(id, frames) VALUES (1, 'svc;main;handle;render');
  INSERT INTO samples(source_id, ts_ns, pid, tid, comm, event, period, stack_id, span_id)
  SELECT 2, s.req_start_ns + 40000000 + k.v * 1000000, 7, 7, 'svc', 'cpu-clock', 10000000, 1, s.span_id
    FROM spans s, (SELECT 0 AS v UNION ALL SELECT 1) k WHERE s.path = '/api' AND s.id > 1000"
"$sf" report --db "$mdb" --out "$tmp/mixed" --quiet 2>/dev/null
python3 - "$tmp/mixed/findings.json" >"$tmp/mixed.why" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
i = max((i for i in f["inflections"] if i["endpoint"] == "/api" and i["metric"] == "p50"),
        key=lambda i: i["after"] - i["before"], default=None)
ok = i is not None and i["cause"] == "downstream" and i["cause_endpoint"] == "/query" and \
    i["cause_second"] == "cpu" and 0.2 <= i["cause_second_share"] < i["cause_share"] and \
    "waiting on a downstream call to /query" in f["verdict"] and ", and " in f["verdict"] and \
    "on CPU (" in f["verdict"].split(", and ", 1)[1]
print("MIXED_OK" if ok else "MIXED_BAD", i and (i["cause"], i["cause_share"], i.get("cause_second"),
      i.get("cause_second_share")), f["verdict"][:200])
PY
sed 's/^/# /' "$tmp/mixed.why"
check_eval "a mixed slowdown names both: downstream to /query first, then the CPU, each with its share" \
    "grep -q MIXED_OK '$tmp/mixed.why'"
ndb=$tmp/network.db
synth "$ndb" 2000 "'/big'" "1700000000000000000 + i * 20000000" \
    "1700000000000000000 + i * 20000000 + 3000000 + (CASE WHEN i >= 1000 THEN 60 ELSE 1 END) * 1000000 + (i * 7919 % 500) * 1000"
sqlite3 "$ndb" "UPDATE spans SET req_end_ns = req_start_ns + 500000, resp_start_ns = req_start_ns + 3000000"
# ... each on a connection of its own, where each slow response had a retransmission that
# stalled it 50 ms (the connection_events pcap2spans writes), and the normal ones none
sqlite3 "$ndb" "INSERT INTO connections(id, source_id) SELECT id, 1 FROM spans;
    UPDATE spans SET connection_id = id;
    INSERT INTO connection_events(connection_id, ts_ns, kind, detail)
    SELECT id, req_start_ns + 5000000, 'retransmit', 'stall_ns=50000000 bytes=1448 response filled-hole'
    FROM spans WHERE resp_end_ns - req_start_ns > 40000000"
"$sf" report --db "$ndb" --out "$tmp/network" --quiet 2>/dev/null
why_check "$tmp/network/findings.json" - network >"$tmp/net.why"
sed 's/^/# /' "$tmp/net.why"
check_eval "a response slow on the wire: the cause is network" "grep -q WHY_OK '$tmp/net.why'"
check_eval "... and its evidence: a retransmission a slow request, none before, 50 ms stalled, in words" \
    "python3 -c 'import json,sys; f = json.load(open(sys.argv[1])); i = [x for x in f[\"inflections\"] if x.get(\"cause\") == \"network\"][0]; s, n = i[\"breakdown\"][\"slow\"], i[\"breakdown\"][\"normal\"]; sys.exit(not (0.9 < s[\"retransmits\"] <= 1 and n[\"retransmits\"] < 0.05 and 45e6 < s[\"retransmit_stall_ns\"] <= 50e6 and \"TCP retransmissions a request\" in f[\"verdict\"]))' '$tmp/network/findings.json'"
# a request that waited for its own retransmission: the server answered 60 ms after the
# first copy of the request's only segment (the capture saw it before it was lost), 55 ms
# of it waiting for the second copy: server time on the wire, network by its stall
rdb=$tmp/reqloss.db
synth "$rdb" 2000 "'/lossy'" "1700000000000000000 + i * 20000000" \
    "1700000000000000000 + i * 20000000 + (CASE WHEN i >= 1000 THEN 61 ELSE 4 END) * 1000000 + (i * 7919 % 500) * 1000"
sqlite3 "$rdb" "UPDATE spans SET req_end_ns = req_start_ns, resp_start_ns = resp_end_ns - 1000000;
    INSERT INTO connections(id, source_id) SELECT id, 1 FROM spans;
    UPDATE spans SET connection_id = id;
    INSERT INTO connection_events(connection_id, ts_ns, kind, detail)
    SELECT id, req_start_ns + 55000000, 'retransmit', 'stall_ns=55000000 bytes=170 request repeated'
    FROM spans WHERE resp_end_ns - req_start_ns > 40000000"
"$sf" report --db "$rdb" --out "$tmp/reqloss" --quiet 2>/dev/null
why_check "$tmp/reqloss/findings.json" - network >"$tmp/reqloss.why"
sed 's/^/# /' "$tmp/reqloss.why"
check_eval "a request that waited for its retransmission: the server time it stalled is network, 55 ms of it" \
    "grep -q WHY_OK '$tmp/reqloss.why' && python3 -c 'import json,sys; f = json.load(open(sys.argv[1])); i = [x for x in f[\"inflections\"] if x.get(\"cause\") == \"network\"][0]; s, n = i[\"breakdown\"][\"slow\"], i[\"breakdown\"][\"normal\"]; sys.exit(not (54e6 < s[\"network_ns\"] - n[\"network_ns\"] < 56e6 and \"in the network (transfer, retransmissions)\" in f[\"verdict\"]))' '$tmp/reqloss/findings.json'"

# what attributed the samples, per process: a span marker interval, socket events, time
# several spans share, nothing
cdb=$tmp/coverage.db
synth "$cdb" 100 "'/c'" "1700000000000000000 + i * 50000000" "1700000000000000000 + i * 50000000 + 1000000"
sqlite3 "$cdb" "INSERT INTO span_intervals(source_id, span_id, tid, start_ns, end_ns, source) VALUES
    (1, 'a', 10, 100, 200, 'marker'), (1, 'b', 11, 100, 200, 'socket');
  INSERT INTO span_intervals(source_id, span_id, tid, start_ns, end_ns, end_rule, source) VALUES
    (1, 'g', 14, 100, 200, 'loop', 'socket'), (1, 'h', 15, 100, 200, 'goroutine', 'socket');
  INSERT INTO shared_intervals(source_id, tid, start_ns, end_ns, spans, span_ids) VALUES
    (1, 12, 100, 200, 2, 'c,d'), (1, 12, 50, 60, 2, 'e,f');
  INSERT INTO samples(source_id, ts_ns, pid, tid, comm, event, period, span_id) VALUES
    (1, 150, 7, 10, 'svc', 'cpu-clock', 1, 'a'), (1, 150, 7, 11, 'svc', 'cpu-clock', 1, 'b'),
    (1, 150, 7, 12, 'svc', 'cpu-clock', 1, NULL), (1, 300, 7, 12, 'svc', 'cpu-clock', 1, NULL),
    (1, 1, 7, 13, 'svc', 'cpu-clock', 1, NULL), (1, 5, 8, 20, 'other', 'cpu-clock', 1, NULL),
    (1, 160, 7, 14, 'svc', 'cpu-clock', 1, 'g'), (1, 170, 7, 15, 'svc', 'cpu-clock', 1, 'h')"
"$sf" report --db "$cdb" --out "$tmp/coverage" --quiet 2>/dev/null
check_eval "coverage per process: 1 by markers, 1 by sockets, 1 by an event loop, 1 by a goroutine, 1 shared, 2 outside (findings.json, page)" \
    "python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[\"coverage\"]; sys.exit(not (c[0] == {\"pid\": 7, \"comm\": \"svc\", \"samples\": 7, \"by_markers\": 1, \"by_sockets\": 1, \"by_event_loop\": 1, \"by_goroutine\": 1, \"shared\": 1, \"unattributed\": 2} and c[1][\"samples\"] == 1 and c[1][\"unattributed\"] == 1))' '$tmp/coverage/findings.json' && grep -q 'What attributed the samples' '$tmp/coverage/report.html' && grep -q 'by an event loop' '$tmp/coverage/report.html' && grep -q 'by goroutines' '$tmp/coverage/report.html'"

# the explorer's data, read with no browser (explore_data.py, a second reader of the format):
# consistent, and its folds are the CLI's, for every span and for a range
xd=$top/tests/spanfold/explore_data.py
read -r xok _ xsamples _ xof _ < <(python3 "$xd" "$html" check)
check_eval "the explorer's data: every span ($xof), sizes consistent, samples in start order" \
    "[ '$xok' = OK ] && [ '$xof' = \$(sqlite3 '$db' 'SELECT count(*) FROM spans') ]"
"$sf" stacks --db "$db" | tail -n +2 >"$tmp/x.all"
check_eval "... folded over every span: 'spanfold stacks' byte for byte ($xsamples samples)" \
    "[ -s '$tmp/x.all' ] && python3 '$xd' '$html' fold | cmp -s - '$tmp/x.all'"
xr=$(sqlite3 "$db" "SELECT strftime('%Y-%m-%dT%H:%M:%f', (min(req_start_ns) + 3000000000) / 1e9, 'unixepoch') || 'Z',
    strftime('%Y-%m-%dT%H:%M:%f', (min(req_start_ns) + 9500000000) / 1e9, 'unixepoch') || 'Z' FROM spans")
"$sf" stacks --db "$db" --during "${xr%|*}..${xr#*|}" | tail -n +2 >"$tmp/x.range"
check_eval "... over the spans that started in [${xr%|*}, ${xr#*|}): 'stacks --during' byte for byte" \
    "[ -s '$tmp/x.range' ] && python3 '$xd' '$html' fold '${xr%|*}' '${xr#*|}' | cmp -s - '$tmp/x.range'"
"$sf" report --db "$db" --out "$tmp/sampled" --quiet --page-samples 200
read -r xok xspans xsamples _ xof xfrac < <(python3 "$xd" "$tmp/sampled/report.html" check)
python3 "$xd" "$tmp/sampled/report.html" ids >"$tmp/x.ids"
xwant=$(python3 -c 'import sqlite3, sys
ids = set(open(sys.argv[2]).read().split())
print(sum(r[0] in ids for r in sqlite3.connect(sys.argv[1]).execute("SELECT span_id FROM samples")))' "$db" "$tmp/x.ids")
check_eval "--page-samples 200: a uniform sample of the spans ($xspans of $xof, fraction $xfrac), every sample of those ($xsamples)" \
    "[ '$xok' = OK ] && [ '$xspans' -lt '$xof' ] && [ '$xspans' -gt 0 ] && [ '$xsamples' = '$xwant' ] && [ '$xsamples' -lt 400 ]"
"$sf" report --db "$db" --out "$tmp/sampled" --quiet --page-samples -1 2>"$tmp/e5"
check_eval "--page-samples -1: exit 2" "[ $? -eq 2 ] && grep -q 'page-samples' '$tmp/e5'"

# past --spans-max the requests analysed one by one are a uniform sample (lib/sf_thin.h),
# drawn here again in Python from the database: by the first 53 bits of the SHA-256 of the
# span id (else trace id, else start); what is counted (windows, the slowest 5 %'s cuts and
# sizes) stays over every request
"$sf" report --db "$db" --out "$tmp/thin" --quiet --spans-max 300 2>/dev/null
"$sf" report --db "$db" --out "$tmp/thin-all" --quiet --spans-max all 2>/dev/null
python3 "$xd" "$tmp/thin/report.html" ids >"$tmp/thin.ids"
python3 - "$db" "$tmp/thin/findings.json" "$tmp/thin.ids" "$tmp/thin-all/findings.json" \
    >"$tmp/thin.check" 2>&1 <<'PY'
import hashlib, json, math, sqlite3, sys
db, fj, ids, allj = sys.argv[1:]
f, a = json.load(open(fj)), json.load(open(allj))
n, k, share = f["spans"], f["analysed"]["requests"], f["analysed"]["share"]
bound = math.ceil(300 / n * 2**53)  # the C's double, not the JSON's 10 digits
h = lambda s: int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "big") >> 11
def key(trace, span, start):
    return span[:16] if span else trace if trace else str(start)
rows = sqlite3.connect(db).execute(
    "SELECT trace_id, span_id, req_start_ns FROM spans WHERE req_start_ns IS NOT NULL").fetchall()
kept = [r for r in rows if h(key(*r)) < bound]
bad = []
if abs(share - 300 / n) > 1e-9: bad.append(f"share {share} is not 300/{n}")
if len(kept) != k: bad.append(f"{k} analysed, the rule keeps {len(kept)}")
if sorted(open(ids).read().split()) != sorted((r[1] or "")[:16] for r in kept):
    bad.append("the explorer's requests are not the rule's")
if not 0 < k < n: bad.append(f"{k} of {n}: no sample")
cut = lambda d: {e["endpoint"]: (e["spans"], e["latency_from_ms"]) for e in d["slow"]}
cf, ca = cut(f), cut(a)
if not cf or any(cf[e] != ca.get(e) for e in cf) or f["spans"] != a["spans"] or \
        f["analysed"]["share"] >= a["analysed"]["share"]:
    bad.append("the slowest 5 %'s cuts and sizes moved with the sample")
if not any("requests analysed one by one" in x for x in f["notes"]): bad.append("no note")
if any("one by one" in x for x in a["notes"]): bad.append("a note without a sample")
print("THIN_OK %d of %d" % (k, n) if not bad else "\n".join(bad))
PY
sed 's/^/# /' "$tmp/thin.check"
check_eval "--spans-max 300: $(head -1 "$tmp/thin.check") analysed, those the rule keeps; windows and slow cuts over all" \
    "grep -q THIN_OK '$tmp/thin.check' && cmp -s '$tmp/thin/windows.csv' '$tmp/thin-all/windows.csv'"
"$sf" report --db "$db" --out "$tmp/thin0" --quiet --spans-max 0 2>"$tmp/e6"
check_eval "--spans-max 0: exit 2" "[ $? -eq 2 ] && grep -q 'spans-max' '$tmp/e6'"
check_eval "hostile path: the explorer carries it as data, inert in the page" \
    "python3 '$xd' '$tmp/hostile/report.html' eps | grep -qF '<script>alert(1)</script>'"

# a dependency that got slow, recorded (tests/data/demo-downstream): the backend's calls are
# children of the searches (B3), spantrace --offcpu's lines are off-CPU rows, and the report
# leads with the search, its cause downstream to /api/backend
dsd=$top/tests/data/demo-downstream
"$sf" ingest --quiet --db "$tmp/ds2.db" "$dsd/demo.pcap" "$dsd/perf.txt.gz" "$dsd/markers.txt" \
    "$dsd/offcpu.txt.gz" 2>"$tmp/ds2.err"
dsl=$(zcat "$dsd/offcpu.txt.gz" | grep -c 'spantrace_offcpu: end=')
check_eval "demo-downstream: every spantrace_offcpu line an offcpu row of a tracefs source ($dsl)" \
    "[ '$(sqlite3 "$tmp/ds2.db" "SELECT count(*) FROM offcpu o JOIN sources s ON s.id = o.source_id WHERE s.kind = 'tracefs'")' = '$dsl' ] && [ $dsl -gt 500 ]"
check_eval "demo-downstream: every backend call a child of a search, within it" \
    "[ '$(sqlite3 "$tmp/ds2.db" "SELECT count(*) FROM spans b JOIN spans s ON s.span_id = b.parent_span_id AND s.path = '/api/search' AND b.req_start_ns BETWEEN s.req_start_ns AND s.resp_end_ns WHERE b.path = '/api/backend'")' = \
       '$(sqlite3 "$tmp/ds2.db" "SELECT count(*) FROM spans WHERE path = '/api/backend'")' ]"
"$sf" report --quiet --db "$tmp/ds2.db" --out "$tmp/ds2" 2>/dev/null
why_check "$tmp/ds2/findings.json" /api/search downstream /api/backend offcpu >"$tmp/ds2.why"
sed 's/^/# /' "$tmp/ds2.why"
"$sf" stacks --db "$tmp/ds2.db" --offcpu | tail -n +2 >"$tmp/ds2.off"
check_eval "demo-downstream: the page's off-CPU data folds to 'spanfold stacks --offcpu' byte for byte" \
    "[ -s '$tmp/ds2.off' ] && python3 '$xd' '$tmp/ds2/report.html' fold-off | cmp -s - '$tmp/ds2.off'"
check_eval "demo-downstream: /api/search's cause is downstream, to /api/backend, the parts adding up; the headline is the search's" \
    "grep -q WHY_OK '$tmp/ds2.why' && python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))[\"verdict\"].startswith(\"/api/search p50 rose\"))' '$tmp/ds2/findings.json'"

# a network that lost request segments (tests/data/demo-network): each dropped segment a
# request-direction retransmission, the report leads with the search, its cause network
nwd=$top/tests/data/demo-network
"$sf" ingest --quiet --db "$tmp/nw.db" "$nwd/demo.pcap" "$nwd/perf.txt.gz" "$nwd/markers.txt" 2>"$tmp/nw.err"
nwdrop=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["service"]["slow_network"]["dropped_segments"])' "$nwd/MANIFEST.json")
check_eval "demo-network: every segment dropped ($nwdrop) a request-direction retransmission in the capture" \
    "[ $nwdrop -ge 20 ] && [ '$(sqlite3 "$tmp/nw.db" "SELECT count(*) FROM connection_events WHERE kind = 'retransmit' AND detail LIKE '% request %'")' -ge $nwdrop ]"
"$sf" report --quiet --db "$tmp/nw.db" --out "$tmp/nw" 2>/dev/null
why_check "$tmp/nw/findings.json" /api/search network >"$tmp/nw.why"
sed 's/^/# /' "$tmp/nw.why"
check_eval "demo-network: /api/search's cause is the network, the parts adding up, the retransmissions said; the headline is the search's" \
    "grep -q WHY_OK '$tmp/nw.why' && python3 -c 'import json,sys; v = json.load(open(sys.argv[1]))[\"verdict\"]; sys.exit(not (v.startswith(\"/api/search p50 rose\") and \"in the network (transfer, retransmissions)\" in v and \"TCP retransmissions a request\" in v))' '$tmp/nw/findings.json'"

# samples but no span markers: the page and findings.json say what is missing, and how
ndb=$tmp/nomarkers.db
"$sf" pcap2spans --quiet --db "$ndb" "$top/tests/data/demo2/demo.pcap" 2>/dev/null
"$sf" perf-fold --quiet --db "$ndb" "$top/tests/data/demo2/perf.txt" >/dev/null 2>&1
"$sf" report --db "$ndb" --out "$tmp/nomarkers" 2>"$tmp/nerr"
check_eval "no span markers: exit 0, said on stderr, in findings.json and on the page" \
    "[ $? -eq 0 ] && grep -q 'note: no span markers' '$tmp/nerr' && grep -q 'no span markers: CPU samples cannot be attributed' '$tmp/nomarkers/findings.json' && grep -q 'record them with spantrace' '$tmp/nomarkers/report.html'"

# errors: exit 2 with the reason
"$sf" report --out "$tmp/x" 2>"$tmp/e1"
check_eval "no --db: exit 2, usage" "[ $? -eq 2 ] && grep -q 'required' '$tmp/e1'"
"$sf" report --db "$tmp/missing.db" --out "$tmp/x" 2>"$tmp/e2"
check_eval "missing database: exit 2, named" "[ $? -eq 2 ] && grep -q 'missing.db: no such database' '$tmp/e2'"
"$sf" report --db "$db" --out "$tmp/x" --tz Mars/Olympus 2>"$tmp/e3"
check_eval "unknown --tz: exit 2" "[ $? -eq 2 ] && grep -q 'unknown --tz' '$tmp/e3'"
printf 'not sqlite' >"$tmp/junk.db"
"$sf" report --db "$tmp/junk.db" --out "$tmp/x" 2>"$tmp/e4"
check_eval "a file that is not a database: exit 2" "[ $? -eq 2 ] && grep -q 'junk.db' '$tmp/e4'"
"$sf" help report >"$tmp/help"
check_eval "spanfold help report prints the usage" "grep -q 'usage: spanfold report' '$tmp/help'"
tap_plan

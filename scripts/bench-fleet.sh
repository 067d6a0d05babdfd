#!/usr/bin/env bash
# The report's windows at fleet scale (#37, docs/scale.md "The windows pushed down"): a
# synthetic fleet generated inside two local ClickHouse shards (started here on loopback
# ports as plain processes, scripts/clickhouse/server.sh), then the windows per endpoint
# that spanfold report, inflect and gate read, computed by the cluster:
#
#   spanfold inflect --clickhouse URL --cluster sf --by endpoint --json OUT
#
# For each size in BENCH_FLEET_SPANS (default "1000000 10000000"; add 100000000 for the
# issue's figure: about 4 GB of disk and 20 min of generation on 2 cores):
#   - windows: the wall time of the windows' queries (the cluster's work and the
#     transfer; spanfold's own count on stderr), median of RUNS (default 3) runs (one
#     run from 50 million spans on)
#   - cpu (srv): the two servers' CPU over one run (their /proc stat ticks), median
#   - the bytes of the answers the client read (spanfold's count) against the bytes of the
#     spans' rows the read-back (ch_pull) would move: the same SELECT of every column of
#     spans_d in RowBinary, counted with curl; and their ratio
#   - inflect: the client's CPU (user + sys) of a whole run, median: the windows' answers read,
#     and the change-point and drift analysis of every series, which is the same as on a
#     file of the same spans (it grows with endpoints x windows, at most 2,000 windows)
#   - the change points found in p50: the incident the generator put in (below) is one
#
# The fleet (deterministic: every value a cityHash64 of the span's global number g, so a
# size's data is the same on every run and machine):
#   BENCH_FLEET_HOSTS hosts (default 200), host h a source of its own (skey 1000 + h, one
#   `sources` row, complete) on shard h % 2, as `spanfold push` from each host would leave
#   it; spans over one hour, evenly spaced with up to 1 us of jitter; 40 endpoints
#   /api/e0../api/e39 (uniform); latency (5 + e) ms x U[0.5, 1.5); 0.5 % answered 503;
#   30 % sampled.  The incident: from 2/3 of the hour on, /api/e7 is four times slower on
#   the first 40 hosts (a fifth of its requests), and from 4/5 on /api/e3
#   keeps 10 % of its traces instead of 30 % (a sampling drift).
# BENCH_FLEET_SAMPLES samples per span (default 5: the issue's 500 million at 100 million
# spans), each a cpu-clock sample of 1 ms attributed to its span, evenly over the span's
# time, on one of 401 stacks (main;serve;handle_eE;work_M, M of 10; the incident's slow
# requests spend every other sample in main;serve;handle_e7;regex_backtrack).
#
# Then, for each size up to BENCH_FLEET_REPORT_MAX spans (default 10000000), the whole report:
#
#   spanfold report --clickhouse URL --cluster sf --out DIR
#
#   - report: its wall time and the client's CPU (one run), the bytes it received from the
#     cluster in all (spanfold's count), against what reading every span and sample back
#     would move (the same SELECTs of spans_d and samples_d in RowBinary, counted with
#     curl), the requests it analysed one by one (--spans-max, default 500,000: past it a
#     sample, and only it is read back), and what the report found (its verdict's first
#     clause)
#   - for each size up to BENCH_FLEET_FULL_MAX (default 1000000), the same report with every
#     request analysed one by one (--spans-max all: every span and sample read back, the
#     report computed on one machine from the full data), against the bounded one: the
#     change points and drift found (the same, or the differences), and how far each
#     endpoint's p50/p95/p99 and its slow set's top function moved with the sample
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
sfb=$top/bin/spanfold
sizes=${BENCH_FLEET_SPANS:-1000000 10000000}
hosts=${BENCH_FLEET_HOSTS:-200}
per=${BENCH_FLEET_SAMPLES:-5}
report_max=${BENCH_FLEET_REPORT_MAX:-10000000}
full_max=${BENCH_FLEET_FULL_MAX:-1000000}
runs=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-fleet: needs /usr/bin/time (Debian time)"; exit 2; }
command -v clickhouse-server >/dev/null ||
    { echo "bench-fleet: needs clickhouse-server (scripts/deps.sh heavy)"; exit 0; }
[ -x "$sfb" ] || { echo "bench-fleet: $sfb not built (make)"; exit 2; }
[ $((hosts % 2)) -eq 0 ] || { echo "bench-fleet: BENCH_FLEET_HOSTS must be even"; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
cp "$sfb" "$tmp/spanfold" && sfb=$tmp/spanfold # a rebuild must not swap it mid-run
. "$top/scripts/clickhouse/server.sh"
trap 'ch_stop; rm -rf "$tmp"' EXIT
. "$top/scripts/bench/measure.sh"
ch_two_shards "$tmp" || { echo "bench-fleet: clickhouse-server did not start"; exit 2; }
url=(http://127.0.0.1:$ch_http1/ http://127.0.0.1:$ch_http2/)
chq() { curl -sS --fail-with-body "$1" --data-binary @- ; } # chq URL <SQL
ticks() { local p t=0; for p in "${ch_pids[@]}"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
echo "ClickHouse $(chq "${url[0]}" <<<'SELECT version()'), 2 shards, $hosts hosts, $(nproc) cores"

# The spans of shard s (hosts h % 2 = s) of a fleet of n spans: g, host, ep, t, lat.
span_rows() { # span_rows SHARD N
    local s=$1 n=$2 dt=$((3600000000000 / $2)) t0=1796126400000000000
    cat <<SQL
SELECT g, host, ep, t,
        toInt64((5 + ep) * 1000000 * (0.5 + (cityHash64(g, 2) % 1000) / 1000)
                * if(ep = 7 AND host < 40 AND g * 3 > $n * 2, 4, 1)) AS lat
      FROM (SELECT number * 2 + $s AS g, g % $hosts AS host, cityHash64(g, 1) % 40 AS ep,
                   $t0 + g * $dt + toInt64(cityHash64(g) % 1000) AS t
            FROM numbers(intDiv($n, 2)))
SQL
}

# One shard's part of the fleet: the sources, spans, samples and stacks of hosts h % 2 = s.
generate() { # generate SHARD N
    local s=$1 n=$2
    chq "${url[$s]}" <<SQL
INSERT INTO spanfold.sources (skey, id, sha256, kind, path, clock, tool, tool_version,
  started_at, status, push_state)
SELECT 1000 + number, 1, lower(hex(SHA256(toString(number)))), 'pcap',
  concat('host', toString(number), '.pcap'), 'realtime', 'bench-fleet', '0',
  '2026-12-05T00:00:00Z', 'complete', 'complete' FROM numbers($hosts) WHERE number % 2 = $s
SQL
    chq "${url[$s]}" <<SQL
INSERT INTO spanfold.spans (skey, id, proto, method, authority, path, status, req_start_ns,
  resp_start_ns, resp_end_ns, early_data, partial, trace_id, span_id, sampled, ctx_format,
  ctx_valid)
SELECT 1000 + host, intDiv(g, $hosts) + 1, 'h2', 'GET', concat('shop-', toString(host)),
  concat('/api/e', toString(ep)), if(cityHash64(g, 3) % 200 = 0, 503, 200), t,
  t + intDiv(lat, 2), t + lat, 0, 0, lower(hex(cityHash64(g, 4))), lower(hex(cityHash64(g, 5))),
  if(cityHash64(g, 6) % 100 < if(ep = 3 AND g * 5 > $n * 4, 10, 30), 1, 0), 'traceparent', 1
FROM ($(span_rows "$s" "$n"))
SQL
    [ "$per" -gt 0 ] || return 0
    chq "${url[$s]}" <<SQL
INSERT INTO spanfold.stacks (stack_key, frames)
SELECT cityHash64(f), f FROM (SELECT arrayJoin(arrayConcat(['main;serve;handle_e7;regex_backtrack'],
  arrayMap(i -> concat('main;serve;handle_e', toString(intDiv(i, 10)), ';work_',
                       toString(i % 10)), range(400)))) AS f)
SQL
    chq "${url[$s]}" <<SQL
INSERT INTO spanfold.samples (skey, id, ts_ns, pid, tid, cpu, comm, event, period, stack_key,
  span_id)
SELECT 1000 + host, intDiv(g, $hosts) * $per + j + 1, t + intDiv(lat * j, $per), 100 + host,
  1000 + g % 16, 0, 'shop', 'cpu-clock', 1000000,
  cityHash64(if(ep = 7 AND host < 40 AND g * 3 > $n * 2 AND j % 2 = 1,
                'main;serve;handle_e7;regex_backtrack',
                concat('main;serve;handle_e', toString(ep), ';work_',
                       toString(cityHash64(g, j) % 10)))),
  lower(hex(cityHash64(g, 5)))
FROM ($(span_rows "$s" "$n")) ARRAY JOIN range($per) AS j
SQL
}

printf '\n%-11s %8s %9s %10s %12s %14s %8s %10s  %s\n' spans generate "windows" \
    "cpu (srv)" "answers B" "read-back B" "bytes %" "inflect" "change points (p50)"
for n in $sizes; do
    for s in 0 1; do
        chq "${url[$s]}" <<<"DROP DATABASE IF EXISTS spanfold" >/dev/null || exit 2
    done
    # each statement of the DDL on its own (the HTTP interface takes one)
    for s in 0 1; do
        "$sfb" push --print-schema --cluster sf | sed 's/;$//' | while IFS= read -r st; do
            [ -n "$st" ] && { chq "${url[$s]}" <<<"$st" >/dev/null || exit 2; }
        done
    done
    g0=$(date +%s.%N)
    generate 0 "$n" >/dev/null && generate 1 "$n" >/dev/null || { echo "bench-fleet: generation failed"; exit 2; }
    gen=$(echo "$(date +%s.%N) - $g0" | bc)
    fetch=() srv=() cpus=()
    nruns=$runs
    [ "$n" -ge 50000000 ] && nruns=1 # a run of the largest takes minutes
    for r in $(seq "$nruns"); do
        k0=$(ticks)
        /usr/bin/time -f '%U %S' -o "$tmp/time" "$sfb" inflect --clickhouse "${url[0]}" \
            --cluster sf --by endpoint --json "$tmp/fleet.json" 2>"$tmp/err" ||
            { cat "$tmp/err"; exit 2; }
        k1=$(ticks)
        srv+=("$(echo "scale=2; ($k1 - $k0) / $hz" | bc)")
        cpus+=("$(awk '{print $1 + $2}' "$tmp/time")")
        fetch+=("$(sed -n 's/.*the windows gathered by the cluster: .* bytes, \([0-9.]*\) s$/\1/p' "$tmp/err")")
    done
    bytes=$(sed -n 's/.*the windows gathered by the cluster: [0-9]* queries, \([0-9]*\) bytes.*/\1/p' "$tmp/err")
    cpu=$(printf '%s\n' "${cpus[@]}" | bench_median)
    cols=$("$sfb" push --print-schema | sed -n 's/^CREATE TABLE IF NOT EXISTS spanfold.spans (\(.*\)) ENGINE.*/\1/p' |
        tr ',' '\n' | awk '{print $1}' | paste -sd,)
    back=$(chq "${url[0]}" <<<"SELECT $cols FROM spanfold.spans_d FORMAT RowBinary" | wc -c)
    cps=$(python3 - "$tmp/fleet.json" <<'PY'
import json, sys
# every endpoint's first p50 change point: where, and by how much
d = json.load(open(sys.argv[1]))
out = []
for s in d["series"]:
    if s["name"].endswith("/p50") and s["change_points"]:
        c = s["change_points"][0]
        out.append("%s %s x%.2f at %.0f%%" % (s["group"], c["kind"], c["after"] / c["before"],
                                             100.0 * c["index"] / d["windows"]))
print("; ".join(out) or "none")
PY
)
    printf '%-11s %7.0fs %8.2fs %9.2fs %12s %14s %8s %9.2fs  %s\n' "$n" "$gen" \
        "$(printf '%s\n' "${fetch[@]}" | bench_median)" "$(printf '%s\n' "${srv[@]}" | bench_median)" \
        "${bytes:-?}" "$back" "$(echo "scale=4; 100 * ${bytes:-0} / $back" | bc)" "$cpu" "$cps"
    [ "$n" -le "$report_max" ] || continue
    # the whole report: what it received in all against every span and sample read back
    scols=$("$sfb" push --print-schema | sed -n 's/^CREATE TABLE IF NOT EXISTS spanfold.samples (\(.*\)) ENGINE.*/\1/p' |
        tr ',' '\n' | awk '{print $1}' | paste -sd,)
    sback=$(chq "${url[0]}" <<<"SELECT $scols FROM spanfold.samples_d FORMAT RowBinary" | wc -c)
    r0=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$sfb" report --clickhouse "${url[0]}" --cluster sf \
        --out "$tmp/report" 2>"$tmp/rerr" || { cat "$tmp/rerr"; exit 2; }
    rwall=$(echo "$(date +%s.%N) - $r0" | bc)
    rin=$(sed -n 's/.*from the cluster in all: [0-9]* queries, \([0-9]*\) bytes.*/\1/p' "$tmp/rerr")
    found=$(sed -n 's/^spanfold report: \([^;]*\);.*/\1/p' "$tmp/rerr" | head -n 1)
    kept=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["analysed"]["requests"])' \
        "$tmp/report/findings.json")
    printf '  report (%s samples): %.1f s, client CPU %.1f s; from the cluster %s B, every span and sample read back %s B (%s %%); %s requests analysed one by one; found: %s\n' \
        "$((n * per))" "$rwall" "$(awk '{print $1 + $2}' "$tmp/time")" "${rin:-?}" \
        "$((back + sback))" "$(echo "scale=2; 100 * ${rin:-0} / ($back + $sback)" | bc)" \
        "${kept:-?}" "${found:-?}"
    [ "$n" -le "$full_max" ] || continue
    r0=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$sfb" report --clickhouse "${url[0]}" --cluster sf \
        --spans-max all --out "$tmp/full" 2>"$tmp/ferr" || { cat "$tmp/ferr"; exit 2; }
    fwall=$(echo "$(date +%s.%N) - $r0" | bc)
    fin=$(sed -n 's/.*from the cluster in all: [0-9]* queries, \([0-9]*\) bytes.*/\1/p' "$tmp/ferr")
    printf '  every request analysed (--spans-max all): %.1f s, client CPU %.1f s, from the cluster %s B; against the bounded report: %s\n' \
        "$fwall" "$(awk '{print $1 + $2}' "$tmp/time")" "${fin:-?}" \
        "$(python3 - "$tmp/report/findings.json" "$tmp/full/findings.json" <<'PY'
import json, sys
# what the bounded report found against the full one: the change points and drift
# (windows, exact in both), and the per-request figures the sample moved
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def key(d, k, f):
    return sorted(tuple(x.get(c) for c in f) for x in d.get(k, []))
out = []
for k, f in (("inflections", ("endpoint", "metric", "kind", "window")),
             ("drift", ("endpoint", "direction", "time_ns"))):
    ka, kb = key(a, k, f), key(b, k, f)
    out.append("%s: %d of the full report's %d found, %d others" % (
        k, len(set(ka) & set(kb)), len(kb), len(set(ka) - set(kb))))
ea = {e["endpoint"]: e for e in a["endpoints"]}
for m in ("p50_ms", "p95_ms", "p99_ms"):
    d = [abs(ea[e["endpoint"]][m] - e[m]) / e[m] for e in b["endpoints"]
         if e["endpoint"] in ea and e[m] and ea[e["endpoint"]][m] is not None]
    out.append("%s within %.2f %%" % (m[:3], 100 * max(d or [0])))
sa = {s["endpoint"]: s["top_functions"][0]["name"] for s in a["slow"] if s["top_functions"]}
sb = {s["endpoint"]: s["top_functions"][0]["name"] for s in b["slow"] if s["top_functions"]}
out.append("slow sets' top function the same for %d of %d endpoints"
           % (sum(sa.get(e) == f for e, f in sb.items()), len(sb)))
out.append("verdict %s" % ("the same" if a["verdict"] == b["verdict"] else
                           "full: " + b["verdict"][:80]))
print("; ".join(out))
PY
)"
done

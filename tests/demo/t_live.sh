#!/usr/bin/env bash
# Live: record a short run of the demo service on this machine (scripts/record-demo.sh:
# tcpdump, perf record, spantrace on its USDT probes, real curl/grpcio clients, about
# 10 s) and check that every request the clients sent has a begin and an end marker
# from spantrace, with the decision the service had to take where the caller decided,
# that the packets hold every request, and that the main pipeline joins it (each
# request an interval, samples in spans).  Needs root, BPF, perf, tcpdump; skips with
# the reason otherwise.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording"
. "$top/tests/demo/live_need.sh"
tap_tmpdir t_demo_live

live_record 3.4
ok "scripts/record-demo.sh recorded a 10 s run"

out=$(python3 - "$tmp/rec" "$((n + 1))" <<'PY'
import json, re, sys
d, n = sys.argv[1], int(sys.argv[2]) - 1
man = json.load(open(d + "/MANIFEST.json"))
def ok(c, name, diag=None):
    global n
    n += 1
    print(("ok" if c else "not ok"), n, "-", name)
    if not c and diag:
        print("#  ", diag)
mk = re.compile(r"spantrace: span:([0-9a-f]{16}) (begin|end) decision:([01])$")
seen = {}
for line in open(d + "/markers.txt"):
    m = mk.search(line.rstrip("\n"))
    if m:
        seen.setdefault(m[1], []).append((m[2], int(m[3])))
reqs = man["requests"]
ok(len(reqs) >= 100, f"{len(reqs)} requests sent by curl (HTTP/1.1, h2c) and python3-grpcio")
miss = [r["id"] for r in reqs if sorted(k for k, _ in seen.get(r["id"], [])) != ["begin", "end"]]
ok(not miss, f"every request sent has exactly one begin and one end marker ({len(seen)} spans marked)",
   f"{len(miss)} without: {miss[:5]}")
extra = [s for s in seen if s not in {r['id'] for r in reqs}]
ok(not extra, "no marker for a span nobody sent", extra[:5])
same = [r["id"] for r in reqs if len({x for _, x in seen.get(r["id"], [])}) != 1]
ok(not same, "begin and end of each span carry the same decision", same[:5])
wrong = [r["id"] for r in reqs if r["sampled_sent"] is not None and
         any(x != r["sampled_sent"] for _, x in seen.get(r["id"], []))]
ok(not wrong, "where the caller decided, the marked decision is the caller's", wrong[:5])
print("# next", n + 1)
PY
)
printf '%s\n' "$out" | grep -v '^# next'
next=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
if [ -n "$next" ]; then n=$((next - 1)); else notok "marker check crashed"; fi

# the main pipeline on the fresh recording: packets, markers and samples join
if SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out" "$tmp/rec" >"$tmp/demo.log" 2>&1; then
    got=$(sqlite3 "$tmp/out/spans.db" "SELECT (SELECT count(*) FROM spans) || ' ' ||
          (SELECT count(DISTINCT span_id) FROM span_intervals) || ' ' ||
          (SELECT count(span_id) FROM samples)")
    want=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['requests']))" "$tmp/rec/MANIFEST.json")
    set -- $got
    [ "$1" = "$want" ] && [ "$2" = "$want" ] && [ "$3" -gt 0 ] &&
        ok "pipeline on the live run: $want spans, $want intervals, $3 samples in spans" ||
        notok "pipeline on the live run: spans $1, intervals $2, samples in spans $3; want $want"
else
    notok "scripts/demo.sh on the live run: $(tail -n 3 "$tmp/demo.log" | tr '\n' ' ')"
fi

# the service's optional trace_marker output, in a tracefs instance of our own (clock mono)
T=/sys/kernel/tracing
inst=$T/instances/spanfold-demo-$$
if [ ! -d "$T/instances" ]; then
    skip "trace_marker markers" "no tracefs instances at $T"
elif mkdir "$inst" 2>/dev/null; then
    echo mono >"$inst/trace_clock"
    clang -std=c11 -D_GNU_SOURCE -O1 -I"$top/lib" -o "$tmp/svc" "$top"/samples/demo-service/*.c \
        "$top/build/libspanfold.a" $(pkg-config --libs libnghttp2) -pthread
    "$tmp/svc" --port 0 --trace-marker "$inst/trace_marker" >"$tmp/svc.out" 2>&1 &
    svc=$!
    for _ in $(seq 50); do grep -qs listening "$tmp/svc.out" && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/svc.out")
    curl -s -o /dev/null -H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" \
        "http://127.0.0.1:$port/api/checkout"
    curl -s -o /dev/null -H "X-B3-TraceId: 463ac35c9f6413ad48485a3953bb6124" \
        -H "X-B3-SpanId: a2fb4a1d1a96d312" -H "X-B3-Sampled: 0" "http://127.0.0.1:$port/api/search"
    kill -TERM $svc; wait $svc 2>/dev/null
    cp "$inst/trace" "$tmp/marker-trace.txt"
    rmdir "$inst"
    if grep -q 'tracing_mark_write: span:00f067aa0ba902b7 begin decision:1 trace:4bf92f3577b34da6a3ce929d0e0e4736$' "$tmp/marker-trace.txt" &&
        grep -q 'tracing_mark_write: span:00f067aa0ba902b7 end decision:1$' "$tmp/marker-trace.txt" &&
        grep -q 'tracing_mark_write: span:a2fb4a1d1a96d312 begin decision:0 trace:463ac35c9f6413ad48485a3953bb6124$' "$tmp/marker-trace.txt"; then
        ok "--trace-marker writes span:<id> begin decision:N trace:<id> / end markers to tracefs"
    else
        notok "--trace-marker lines: $(grep -c tracing_mark_write "$tmp/marker-trace.txt") in the trace"
    fi
    got=$("$bin/tracefs2spans" --quiet --clock mono --ndjson "$tmp/marker-trace.txt" 2>/dev/null | grep -c '"span_id":"00f067aa0ba902b7"')
    [ "${got:-0}" -ge 2 ] && ok "tracefs2spans reads the service's trace_marker lines" ||
        notok "tracefs2spans read $got records of span 00f067aa0ba902b7"
else
    skip "trace_marker markers" "cannot create a tracefs instance"
fi
tap_plan

#!/usr/bin/env bash
# Live: record a short run of the demo service on this machine (scripts/record-demo.sh:
# tcpdump, perf record, spantrace on its USDT probes, real curl/grpcio clients, about
# 10 s) and check that every request the clients sent has a begin and an end marker
# from spantrace, with the decision the service had to take where the caller decided,
# that the packets hold every request, and that the main pipeline joins it (each
# request an interval, samples in spans).  Needs root, BPF, perf, tcpdump; skips with
# the reason otherwise.
set -u
top=${SF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${SF_BIN:-$top/bin}
n=1
skip_all() { echo "ok 1 - demo live recording # SKIP $1"; echo "1..1"; exit 0; }
ok() { echo "ok $n - $1"; n=$((n + 1)); }
fail() { echo "not ok $n - $1"; n=$((n + 1)); }
[ "$(id -u)" = 0 ] || skip_all "needs root (perf, tcpdump, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "kernel has no BTF (spantrace)"
[ -x "$bin/spantrace" ] || [ -x "$top/bin/spantrace" ] || skip_all "spantrace not built (needs clang, bpftool, libbpf-dev)"
for t in perf tcpdump curl clang python3; do command -v $t >/dev/null || skip_all "$t not installed"; done
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip_all "python3-grpcio not installed"
tmp=$(mktemp -d /tmp/t_demo_live.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

rc=0
SF_BIN=$bin "$top/scripts/record-demo.sh" "$tmp/rec" 3.4 2>"$tmp/rec.err" || rc=$?
if [ $rc = 2 ]; then
    skip_all "recorder cannot run here: $(tail -n 1 "$tmp/rec.err")"
elif [ $rc != 0 ]; then
    fail "record-demo.sh: exit $rc: $(tail -n 2 "$tmp/rec.err" | tr '\n' ' ')"
    echo "1..$((n - 1))"
    exit 0
fi
ok "scripts/record-demo.sh recorded a 10 s run"

out=$(python3 - "$tmp/rec" "$n" <<'PY'
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
n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
[ -n "$n" ] || { n=99; fail "marker check crashed"; }

# the main pipeline on the fresh recording: packets, markers and samples join
if SPANFOLD_BIN=$bin "$top/scripts/demo.sh" "$tmp/out" "$tmp/rec" >"$tmp/demo.log" 2>&1; then
    got=$(sqlite3 "$tmp/out/spans.db" "SELECT (SELECT count(*) FROM spans) || ' ' ||
          (SELECT count(DISTINCT span_id) FROM span_intervals) || ' ' ||
          (SELECT count(span_id) FROM samples)")
    want=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['requests']))" "$tmp/rec/MANIFEST.json")
    set -- $got
    [ "$1" = "$want" ] && [ "$2" = "$want" ] && [ "$3" -gt 0 ] &&
        ok "pipeline on the live run: $want spans, $want intervals, $3 samples in spans" ||
        fail "pipeline on the live run: spans $1, intervals $2, samples in spans $3; want $want"
else
    fail "scripts/demo.sh on the live run: $(tail -n 3 "$tmp/demo.log" | tr '\n' ' ')"
fi
echo "1..$((n - 1))"

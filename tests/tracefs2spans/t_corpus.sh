#!/usr/bin/env bash
# Every line of the shared tracefs corpus (tests/data/corpus/tracefs/tracefs_lines.json)
# parses into the fields the corpus expects: comm, pid, tgid, cpu, flags, timestamp,
# event, message; the non-event lines into their kinds (lost, annotate, header, frame).
# Runs `tracefs2spans --fields` (the parser's columns as NDJSON) on each line. TAP.
set -u
. "$(dirname "$0")/../tap.sh"
corpus=$top/tests/data/corpus/tracefs/tracefs_lines.json
if [ ! -f "$corpus" ]; then
    echo "not ok 1 - tracefs corpus: $corpus not found"; echo "1..1"; exit 0
fi
if ! command -v python3 >/dev/null; then
    tap_name="tracefs corpus"; tap_skip_all "python3 missing"
fi
exec python3 - "$corpus" "${SF_BIN:-$top/bin}/tracefs2spans" <<'PY'
import json, subprocess, sys
corpus, tool = sys.argv[1], sys.argv[2]
d = json.load(open(corpus))
n = 0
fails = 0
def ok(cond, name, diag=""):
    global n, fails
    n += 1
    print(("ok" if cond else "not ok"), n, "-", name)
    if not cond:
        fails += 1
        print("#  ", diag)
def parse(line):
    r = subprocess.run([tool, "--fields", "-"], input=line + "\n", capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout.splitlines()[0]) if r.stdout else {}
for e in d["lines"]:
    rc, got = parse(e["line"])
    want = {"kind": "event", "comm": e["comm"], "pid": e["pid"], "tgid": e["tgid"], "cpu": e["cpu"],
            "flags": e["flags"], "ts": e["ts"], "event": e["event"], "msg": e["msg"]}
    have = {k: got.get(k) for k in want}
    ok(rc == 0 and have == want, "corpus: " + e["line"].strip()[:60], f"got {have}, want {want}")
    # the timestamp in ns: secs.usecs exactly, or the raw counter as it is
    ts = e["ts"]
    if "." in ts:
        s, f = ts.split(".")
        ns = int(s) * 10**9 + int(f.ljust(9, "0"))
    else:
        ns = int(ts)
    ok(got.get("ts_ns") == ns and got.get("ts_raw") == (0 if "." in ts else 1),
       f"corpus ts {ts} -> {ns} ns", f"got {got.get('ts_ns')}")
kinds = {"lost": "lost", "annotate": "annotate", "header": "entries"}
for e in d["non_event_lines"]:
    rc, got = parse(e["line"])
    want_kind = kinds.get(e["kind"], "frame" if e["kind"].startswith("stacktrace") else None)
    cond = rc == 0 and got.get("kind") == want_kind
    if e["kind"] == "lost":
        cond = cond and got.get("cpu") == e["cpu"] and got.get("lost") == e["lost"]
    if e["kind"] == "annotate":
        cond = cond and got.get("cpu") == e["cpu"]
    if e["kind"] == "header":
        cond = cond and got.get("entries") == 140080 and got.get("written") == 250280 and got.get("ncpu") == 4
    ok(cond, "corpus non-event: " + e["line"].strip(), f"got {got}")
print(f"1..{n}")
sys.exit(1 if fails else 0)
PY

#!/usr/bin/env bash
# --format json (d3-flame-graph) and --format speedscope checked against the folded input,
# folded independently here in Python: per call path, the d3 "value"s must add up to the
# samples under that path and speedscope's weights to the samples ending there; the
# speedscope file must satisfy its schema's invariants.  Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../tap.sh"
fgbin=${SF_BIN:-$top/bin}/flamegraph
corpus=$top/tests/data/corpus/flamegraph/test/results-head
inputs=("$top/samples/folded/file-io.folded" "$here/data/edge.folded" "$here/data/diff.folded")
for f in perf-java-stacks-01 perf-vertx-stacks-01 perf-numa-stacks-01; do
    [ -f "$corpus/$f-collapsed-all.txt" ] && inputs+=("$corpus/$f-collapsed-all.txt")
done
tap_tmpdir
for in in "${inputs[@]}"; do
    "$fgbin" --quiet --format json "$in" >"$tmp/d3.json" 2>/dev/null
    "$fgbin" --quiet --format speedscope "$in" >"$tmp/ss.json" 2>/dev/null
    for kind in d3 speedscope; do
        n=$((n + 1))
        if why=$(python3 - "$kind" "$in" "$tmp/d3.json" "$tmp/ss.json" <<'PY'
import collections, json, re, sys
kind, src, d3p, ssp = sys.argv[1:5]
num = r"(\d+(?:\.\d*)?)"
under, ending, total = collections.Counter(), collections.Counter(), 0.0
for line in open(src, encoding="utf-8", errors="surrogateescape"):
    line = line.rstrip("\n")
    m = re.match(r"^(.*)\s+?" + num + "$", line, re.S)
    if not m:
        continue
    stack, c = m.group(1), float(m.group(2))
    m2 = re.match(r"^(.*)\s+?" + num + "$", stack, re.S)
    if m2:
        stack = m2.group(1)      # differential: the second column is the width
    frames = stack.split(";")
    while frames and frames[-1] == "":
        frames.pop()
    total += c
    for i in range(len(frames) + 1):
        under[tuple(frames[:i])] += c
    ending[tuple(frames)] += c
def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))
if kind == "d3":
    root = json.load(open(d3p))
    got = collections.Counter()
    def walk(node, path):
        got[path] += node["value"]
        for ch in node["children"]:
            walk(ch, path + (ch["name"],))
    walk(root, ())
    bad = [p for p in set(under) | set(got) if not close(got[p], under[p])]
    if root["name"] != "all" or bad:
        sys.exit("paths with wrong values: %d, e.g. %r got %s want %s" % (
            len(bad), bad[0][-2:], got[bad[0]], under[bad[0]]) if bad else "root not named all")
    print("%d paths, root %g" % (len(got), root["value"]))
else:
    ss = json.load(open(ssp))
    assert ss["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    prof, frames = ss["profiles"][0], ss["shared"]["frames"]
    assert prof["type"] == "sampled" and len(prof["samples"]) == len(prof["weights"])
    got = collections.Counter()
    for st, w in zip(prof["samples"], prof["weights"]):
        assert all(0 <= i < len(frames) for i in st)
        got[tuple(frames[i]["name"] for i in st)] += w
    want = {p: v for p, v in ending.items() if v > 0 and p}
    bad = [p for p in set(want) | set(got) if not close(got[p], want.get(p, 0))]
    if bad or not close(prof["endValue"], total):
        sys.exit("stacks with wrong weights: %d, e.g. %r" % (len(bad), bad[:1]))
    print("%d stacks, %d frames, end %g" % (len(got), len(frames), prof["endValue"]))
PY
        ); then
            echo "ok $n - $kind of $(basename "$in"): $why"
        else
            echo "not ok $n - $kind of $(basename "$in"): $why"
        fi
    done
done
tap_plan

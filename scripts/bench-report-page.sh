#!/usr/bin/env bash
# The report page's budget (issue 34): a synthetic recording of SPANS requests over 20
# endpoints (one of which gets 20x slower 60 % of the way in) and SAMPLES CPU samples on
# 2,000 distinct stacks, every sample attributed to a span; `spanfold report` on it (CPU time,
# peak RSS: median of 3), the size of report.html, and the page in headless Chromium (first
# contentful paint, DOMContentLoaded, load: median of 3, the browser's own timings).
#
#   scripts/bench-report-page.sh [SPANS [SAMPLES]]     defaults 100000 1000000
#
# Needs sqlite3, python3, node and Debian's chromium with tests/browser's npm ci done;
# prints what it could not measure and why.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
spans=${1:-100000}
samples=${2:-1000000}
sf=${SF_BIN:-$top/bin}/spanfold
. "$top/scripts/bench/measure.sh"
[ -x "$sf" ] || { echo "bench-report-page: $sf not built (make)"; exit 2; }
command -v sqlite3 >/dev/null || { echo "bench-report-page: sqlite3 missing"; exit 2; }
work=$(mktemp -d /tmp/bench-report-page.XXXXXX)
trap 'rm -rf "$work"' EXIT
db=$work/b.db
sqlite3 "$db" <"$top/lib/schema.sql"
sqlite3 "$db" <<SQL
INSERT INTO sources(id, kind, path, clock, tool, tool_version, status)
    VALUES (1, 'pcap', 'x.pcap', 'realtime', 'bench', '0', 'complete'),
           (2, 'perf', 'p.txt', 'realtime', 'bench', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $spans - 1)
INSERT INTO spans(source_id, method, authority, path, status, req_start_ns, req_end_ns,
                  resp_start_ns, resp_end_ns, trace_id, span_id, sampled)
SELECT 1, 'GET', 'h', '/ep' || (i % 20), CASE WHEN i % 97 = 0 THEN 500 ELSE 200 END,
       1700000000000000000 + i * 6000000, 1700000000000000000 + i * 6000000 + 100000,
       1700000000000000000 + i * 6000000 + (i * 7919 % 20000) * 1000
           + (CASE WHEN i >= $spans * 6 / 10 AND i % 20 = 3 THEN 40000000 ELSE 2000000 END),
       1700000000000000000 + i * 6000000 + (i * 7919 % 20000) * 1000
           + (CASE WHEN i >= $spans * 6 / 10 AND i % 20 = 3 THEN 40000000 ELSE 2000000 END) + 200000,
       printf('%032x', i + 1), printf('%016x', i + 1), i % 2 FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1999)
INSERT INTO stacks(id, frames)
SELECT i + 1, 'main;serve;handler_' || (i % 40) || ';work_' || (i % 200) || ';leaf_' || i FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $samples - 1)
INSERT INTO samples(source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id)
SELECT 2, 1700000000000000000 + (i * $spans / $samples) * 6000000, 100, 100 + i % 8, i % 2,
       'svc', 'cpu-clock', 1000000, 1 + (i * 7919) % 2000, printf('%016x', i * $spans / $samples + 1)
FROM n;
SQL
echo "synthetic recording: $spans spans, $samples samples ($(du -m "$db" | cut -f1) MB database)"
read -r cpu rss < <(bench_runs 3 "$sf" report --quiet --db "$db" --out "$work/out")
echo "spanfold report: $cpu s CPU (user+sys), $((rss / 1024)) MB peak RSS (CPU: median of 3; RSS: largest)"
echo "report.html: $(wc -c <"$work/out/report.html") bytes, findings.json: $(wc -c <"$work/out/findings.json") bytes"
if ! command -v node >/dev/null || [ ! -d "$top/tests/browser/node_modules/playwright-core" ] ||
    ! command -v "${CHROMIUM:-chromium}" >/dev/null; then
    echo "page timings: not measured (needs node, chromium and cd tests/browser && npm ci)"
    exit 0
fi
node "$top/scripts/bench/page-timing.mjs" "$work/out/report.html" 3 | python3 -c '
import json, statistics, sys
r = [json.loads(l) for l in sys.stdin]
m = lambda k: statistics.median(x[k] for x in r if x[k] is not None)
print("Chromium: first contentful paint %.0f ms, DOMContentLoaded %.0f ms, load %.0f ms (median of %d)"
      % (m("fcp"), m("dcl"), m("load"), len(r)))
if all("explore" in x for x in r):
    print("explorer: ready at %.0f ms; a selection re-rendered in %.0f ms (a tenth of the range), "
          "%.0f ms (all of it)" % (m("explore"), m("tenth"), m("all")))'

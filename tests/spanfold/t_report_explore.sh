#!/usr/bin/env bash
# The explorer of spanfold report's page (section#explore) in headless Chromium
# (tests/browser/explore.test.mjs, playwright-core as t_report_browser.sh uses it): a real
# mouse brush on a timeline selects the requests that started in the range, and the
# explorer's folded stacks, flame graph, span count, differential and sandwich weights
# equal what `spanfold stacks --during` prints and what the database holds (computed here
# by expect.py below, never read from the page); a request's own timeline shows one mark
# per sample; the URL fragment restores the view; Escape clears it; arrow keys move the
# range; the page without JavaScript still shows the static report.  Screenshots go to
# tests/artifacts/explore-*.png.  Prints TAP.
set -u
. "$(dirname "$0")/../tap.sh"
sf=${SF_BIN:-$top/bin}/spanfold
data=$top/tests/data/demo2

. "$top/tests/browser/need.sh"
tap_tmpdir t_report_explore
db=$tmp/spans.db
{
    "$sf" pcap2spans --quiet --db "$db" "$data/demo.pcap" &&
        "$sf" perf-fold --quiet --db "$db" "$data/perf.txt" >/dev/null &&
        "$sf" tracefs2spans --quiet --db "$db" "$data/markers.txt" &&
        "$sf" report --quiet --db "$db" --out "$tmp/report"
} 2>"$tmp/err" || {
    echo "not ok 1 - ingest and report of tests/data/demo2"
    sed 's/^/# /' "$tmp/err"
    echo "1..1"
    exit 1
}

# expect.py DB QUERY-JSON: what the database says about a selection, for the browser test
# to compare with the page.  QUERY: {"from": ISO, "to": ISO, "fn": NAME, "span": ID}, each
# optional.  Spans are selected by their request start in [from, to) on the realtime
# clock (the spans' source clock, or converted by clock_fits); samples count when they
# are attributed (samples.span_id) to a selected span; "rest" folds those attributed to
# every other span.
cat >"$tmp/expect.py" <<'PY'
import calendar, datetime, json, sqlite3, sys
db, q = sys.argv[1], json.loads(sys.argv[2])
c = sqlite3.connect(db)

def fit(clock):
    """ns on CLOCK -> ns on the realtime clock, by the database's clock fit"""
    if clock == "realtime":
        return lambda t: t
    row = c.execute("SELECT offset_ns, skew_ppm, ref_ns FROM clock_fits "
                    "WHERE from_clock = ? AND to_clock = 'realtime' ORDER BY points DESC LIMIT 1",
                    (clock,)).fetchone()
    if row is None:
        sys.exit("no clock fit %s -> realtime" % clock)
    off, skew, ref = row
    return lambda t: t + off + round(skew * 1e-6 * (t - ref))

def iso_ns(s):
    for f in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            d = datetime.datetime.strptime(s, f)
        except ValueError:
            continue
        return calendar.timegm(d.utctimetuple()) * 10**9 + d.microsecond * 1000
    sys.exit("not an ISO time: %r" % s)

clock = dict(c.execute("SELECT id, clock FROM sources"))
spans = []  # (span_id, req_start realtime ns, duration ns)
for sid, src, a, z in c.execute("SELECT span_id, source_id, req_start_ns, resp_end_ns FROM spans"):
    spans.append((sid, None if a is None else fit(clock[src])(a), None if a is None or z is None else z - a))
out = {"spans_total": len(spans),
       "span_clocks": sorted({clock[r[0]] for r in c.execute("SELECT DISTINCT source_id FROM spans")})}
lo = iso_ns(q["from"]) if q.get("from") else None
hi = iso_ns(q["to"]) if q.get("to") else None
sel = [s for s in spans if s[1] is not None and (lo is None or s[1] >= lo) and (hi is None or s[1] < hi)]
ids = {s[0] for s in sel}
longest = max((s[2] for s in sel if s[2] is not None), default=None)
out["range"] = {"count": len(sel), "ids": sorted(ids),
                "slowest": sorted(s[0] for s in sel if s[2] is not None and s[2] == longest)}
weight, total, self_, rest = 0, 0, 0, {}
fn = q.get("fn")
for sid, frames, period in c.execute(
        "SELECT s.span_id, st.frames, s.period FROM samples s JOIN stacks st ON st.id = s.stack_id "
        "WHERE s.span_id IS NOT NULL"):
    if sid not in ids:
        rest[frames] = rest.get(frames, 0) + period
        continue
    weight += period
    if fn is not None:
        fr = frames.split(";")
        total += period if fn in fr else 0
        self_ += period if fr[-1] == fn else 0
out["range"]["weight"] = weight
out["rest"] = rest  # frames -> weight of the attributed samples of every other span
out["fn"] = {"total": total, "self": self_}
if q.get("span"):
    sp = q["span"]
    row = c.execute("SELECT req_start_ns, source_id FROM spans WHERE span_id = ?", (sp,)).fetchone()
    start = fit(clock[row[1]])(row[0])
    ts = [fit(clock[src])(t) for t, src in c.execute(
        "SELECT ts_ns, source_id FROM samples WHERE span_id = ? ORDER BY ts_ns", (sp,))]
    # the handshakes it waited for: the TCP and TLS ones of its connection, when it is the
    # connection's first request
    hs = c.execute("SELECT sum(CAST(substr(e.detail, 4) AS INTEGER)) FROM spans s "
                   "JOIN connection_events e ON e.connection_id = s.connection_id AND "
                   "e.kind IN ('tcp_handshake_done', 'tls_handshake_done') WHERE s.span_id = ? AND "
                   "s.id = (SELECT x.id FROM spans x WHERE x.connection_id = s.connection_id "
                   "ORDER BY x.req_start_ns, x.id LIMIT 1)", (sp,)).fetchone()[0]
    out["span"] = {"samples": len(ts), "t_ms": [(t - start) / 1e6 for t in ts],
                   "markers": c.execute("SELECT count(*) FROM span_events WHERE span_id = ?",
                                        (sp,)).fetchone()[0],
                   "handshake_ms": None if hs is None else hs / 1e6,
                   "in_range": sp in ids}
print(json.dumps(out))
PY
python3 - "$db" "$sf" "$tmp/expect.py" "$data/MANIFEST.json" "$tmp/report/report.html" "$art" \
    >"$tmp/config.json" <<'PY'
import json, sys
db, sf, expect, man, html, art = sys.argv[1:7]
fn = json.load(open(man))["service"]["slow_function"]
print(json.dumps({"html": html, "db": db, "spanfold": sf, "expect": expect, "fn": fn,
                  "artifacts": art}))
PY
cd "$browser" && node explore.test.mjs "$tmp/config.json"
exit $?

#!/usr/bin/env python3
"""Validate spanfold-export's JSON formats by the rules of their consumers; TAP.

  validate.py otlp|zipkin|chrome FILE WANT_SPANS [WANT_SAMPLES] --start N

otlp:   the OTLP protobuf JSON mapping (opentelemetry-proto docs/specification.md):
        hex ids of 32/16 lowercase digits, 64-bit integers as decimal strings, enums
        as integers, lowerCamelCase keys known to the Span message, one
        resourceSpans object per line.
zipkin: zipkin2-api.yaml: traceId [a-f0-9]{16,32}, id 16 hex, timestamp/duration
        integer microseconds (duration >= 1), kind enum, tags string to string.
chrome: Trace Event Format as Perfetto reads it: ph/pid/tid/ts types, b/e pairs
        balanced per (cat, id), instant events thread-scoped, M events named.
"""
import json
import re
import sys

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
DEC = re.compile(r"^-?[0-9]+$")
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
SPAN_KEYS = {"traceId", "spanId", "parentSpanId", "traceState", "name", "kind", "startTimeUnixNano",
             "endTimeUnixNano", "attributes", "droppedAttributesCount", "events",
             "droppedEventsCount", "links", "droppedLinksCount", "status", "flags"}
ANY_VALUE = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue",
             "bytesValue"}


class Tap:
    def __init__(self, start):
        self.n, self.failed = start, 0

    def __call__(self, ok, name, detail=""):
        print("%sok %d - %s" % ("" if ok else "not ", self.n, name))
        if not ok:
            self.failed += 1
            if detail:
                print("#   " + str(detail)[:300])
        self.n += 1


def otlp_attr_problems(attrs):
    for a in attrs:
        v = a.get("value", {})
        if set(a) != {"key", "value"} or len(v) != 1 or not set(v) <= ANY_VALUE:
            return "bad attribute %r" % a
        if "intValue" in v and not (isinstance(v["intValue"], str) and DEC.match(v["intValue"])):
            return "intValue not a decimal string: %r" % a
    return None


def check_otlp(path, want, tap):
    spans, problems, lines = 0, [], 0
    for line in open(path):
        lines += 1
        doc = json.loads(line)
        if set(doc) != {"resourceSpans"}:
            problems.append("line %d: top-level keys %s" % (lines, sorted(doc)))
        for rs in doc["resourceSpans"]:
            p = otlp_attr_problems(rs["resource"]["attributes"])
            if p:
                problems.append(p)
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    spans += 1
                    bad = [k for k in s if k not in SPAN_KEYS or not CAMEL.match(k)]
                    if bad:
                        problems.append("unknown keys %s" % bad)
                    if not HEX32.match(s["traceId"]) or s["traceId"] == "0" * 32:
                        problems.append("traceId %r" % s["traceId"])
                    if not HEX16.match(s["spanId"]) or ("parentSpanId" in s and not HEX16.match(s["parentSpanId"])):
                        problems.append("span ids %r" % s)
                    if not isinstance(s["kind"], int) or not isinstance(s["status"].get("code", 0), int):
                        problems.append("enums must be integers: %r" % s["kind"])
                    for k in ("startTimeUnixNano", "endTimeUnixNano"):
                        if not (isinstance(s[k], str) and DEC.match(s[k])):
                            problems.append("%s must be a decimal string: %r" % (k, s[k]))
                    if int(s["endTimeUnixNano"]) < int(s["startTimeUnixNano"]):
                        problems.append("span ends before it starts")
                    p = otlp_attr_problems(s["attributes"])
                    if p:
                        problems.append(p)
                    for e in s.get("events", []):
                        if not DEC.match(e["timeUnixNano"]):
                            problems.append("event time %r" % e)
    tap(not problems, "otlp: %d lines follow the OTLP protobuf JSON mapping" % lines, problems[:3])
    tap(spans == want, "otlp: %d spans, as in the database" % spans, "want %d" % want)


def check_zipkin(path, want, tap):
    spans = json.load(open(path))
    problems = []
    for s in spans:
        if not re.match(r"^[a-f0-9]{16,32}$", s["traceId"]) or not HEX16.match(s["id"]):
            problems.append("ids %r" % s)
        if "parentId" in s and not HEX16.match(s["parentId"]):
            problems.append("parentId %r" % s["parentId"])
        if not isinstance(s["timestamp"], int) or not isinstance(s["duration"], int) or s["duration"] < 1:
            problems.append("timestamp/duration %r" % s)
        if s.get("kind") not in ("CLIENT", "SERVER", "PRODUCER", "CONSUMER"):
            problems.append("kind %r" % s.get("kind"))
        if s["name"] != s["name"].lower():
            problems.append("name not lowercase %r" % s["name"])
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in s.get("tags", {}).items()):
            problems.append("tags must map strings to strings %r" % s.get("tags"))
    tap(isinstance(spans, list) and not problems, "zipkin: every span follows zipkin2-api", problems[:3])
    tap(len(spans) == want, "zipkin: %d spans, as in the database" % len(spans), "want %d" % want)


def check_chrome(path, want_spans, want_samples, tap):
    doc = json.load(open(path))
    ev = doc["traceEvents"]
    problems, open_ids, spans, samples = [], {}, 0, 0
    for e in ev:
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int) or ("tid" in e and not isinstance(e["tid"], int)):
            problems.append("pid/tid must be integers: %r" % e)
        if ph in ("b", "e", "i") and not isinstance(e.get("ts"), (int, float)):
            problems.append("ts must be a number: %r" % e)
        if ph == "b":
            open_ids[(e["cat"], e["id"])] = e["ts"]
            spans += 1
        elif ph == "e":
            t0 = open_ids.pop((e["cat"], e["id"]), None)
            if t0 is None or e["ts"] < t0:
                problems.append("unbalanced or reversed async pair %r" % e)
        elif ph == "i":
            samples += 1
            if e.get("s") != "t":
                problems.append("instant events must be thread-scoped: %r" % e)
        elif ph == "M":
            if e.get("name") not in ("process_name", "thread_name") or "name" not in e.get("args", {}):
                problems.append("metadata %r" % e)
        else:
            problems.append("unexpected ph %r" % ph)
    if open_ids:
        problems.append("%d spans never end" % len(open_ids))
    tap(not problems, "chrome: %d events follow the Trace Event Format as Perfetto reads it" % len(ev), problems[:3])
    tap(spans == want_spans, "chrome: %d spans, as in the database" % spans, "want %d" % want_spans)
    tap(samples == want_samples, "chrome: %d samples on the span timeline, as in the database" % samples,
        "want %d" % want_samples)
    # samples and spans share one clock: attributed samples fall inside the capture's span range
    sp = [e["ts"] for e in ev if e.get("ph") in ("b", "e")]
    sa = [e["ts"] for e in ev if e.get("ph") == "i" and e["args"].get("span_id")]
    ok = not sa or (min(sa) >= min(sp) - 1e6 and max(sa) <= max(sp) + 1e6)
    tap(ok, "chrome: attributed samples lie on the spans' clock (within 1 s of the span range)")


def main():
    kind, path, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = int(sys.argv[sys.argv.index("--start") + 1]) if "--start" in sys.argv else 1
    tap = Tap(start)
    if kind == "otlp":
        check_otlp(path, want, tap)
    elif kind == "zipkin":
        check_zipkin(path, want, tap)
    else:
        check_chrome(path, want, int(sys.argv[4]), tap)
    print("# next %d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

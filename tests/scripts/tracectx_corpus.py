#!/usr/bin/env python3
"""Conformance of lib/sf_tracectx against the shared corpus (TAP on stdout).

Feeds every case of
  w3c/w3c_trace_context_cases.json        traceparent values, header-name/duplication sets,
                                          tracestate cases (W3C test-suite verdicts)
  propagation/propagation_cases.json      B3 single/multi, Jaeger, X-Ray, Datadog, sw8
  propagation/grpc_trace_bin.txt          grpc-trace-bin bytes, base64 forms, error cases
through the compiled driver (`test_tracectx --stdin`: header sets as "name<TAB>value" lines,
blank line between sets; one JSON line per context back) and compares verdicts and
normalised ids.  A mismatch is a `not ok` line with the case and both answers.

Usage: tracectx_corpus.py DRIVER CORPUS_DIR
"""
import base64
import json
import re
import subprocess
import sys


def esc(b):
    """Driver escaping: printable ASCII as is (backslash doubled), anything else \\xHH."""
    if isinstance(b, str):
        b = b.encode("utf-8")
    out = []
    for x in b:
        if x == 0x5C:
            out.append("\\\\")
        elif 0x20 <= x < 0x7F:
            out.append(chr(x))
        else:
            out.append("\\x%02x" % x)
    return "".join(out)


class Cases:
    def __init__(self):
        self.sets = []  # (name, headers [(name, bytes|str)], check(ctxs, end) -> error or None)

    def add(self, name, headers, check):
        self.sets.append((name, headers, check))


def ctx_of(ctxs, fmt):
    return [c for c in ctxs if c["format"] == fmt]


def expect_ids(c, want):
    """Compare a context with {trace_id, span_id, parent_id, sampled, debug} (None = absent)."""
    m = {"trace_id": "", "span_id": "", "parent_id": ""}
    diffs = []
    for k in ("trace_id", "span_id", "parent_id"):
        if k in want:
            w = want[k] if want[k] is not None else m[k]
            if c[k] != w:
                diffs.append("%s %r, want %r" % (k, c[k], w))
    if "sampled" in want:
        w = {True: 1, False: 0, None: -1}[want["sampled"]]
        if c["sampled"] != w:
            diffs.append("sampled %r, want %r" % (c["sampled"], w))
    if "debug" in want and c["debug"] != int(bool(want["debug"])):
        diffs.append("debug %r, want %r" % (c["debug"], want["debug"]))
    return "; ".join(diffs) or None


def one_ctx(fmt, valid, want=None):
    """Check: exactly one context of fmt, with that validity and (when valid) those ids."""
    def check(ctxs, end):
        cs = ctx_of(ctxs, fmt)
        if len(cs) != 1:
            return "%d %s contexts, want 1 (got %s)" % (len(cs), fmt, json.dumps(ctxs))
        c = cs[0]
        if c["valid"] != int(valid):
            return "valid=%d (%s), want %d" % (c["valid"], c["error"], int(valid))
        if not valid:
            if not c["error"]:
                return "invalid without a reason"
            if c["trace_id"] or c["span_id"]:
                return "invalid context keeps ids %r/%r" % (c["trace_id"], c["span_id"])
            return None
        return expect_ids(c, want or {})
    return check


def w3c_cases(cases, d):
    for i, t in enumerate(d["traceparent_values"]):
        want = {}
        if t["valid"]:
            want = {"trace_id": t["trace_id"]}
        chk = one_ctx("traceparent", t["valid"], want)

        def check(ctxs, end, chk=chk, t=t):
            r = chk(ctxs, end)
            if r is None and t["valid"] and ctxs[0]["flags"] != int(t["flags"], 16):
                r = "flags %d, want %s" % (ctxs[0]["flags"], t["flags"])
            return r
        cases.add("w3c traceparent %d %r (%s)" % (i, t["traceparent"], t["source_test"]),
                  [("traceparent", t["traceparent"])], check)
    for i, t in enumerate(d["traceparent_header_sets"]):
        def check(ctxs, end, t=t):
            valid = [c for c in ctx_of(ctxs, "traceparent") if c["valid"]]
            if t["valid"]:
                if len(valid) != 1 or valid[0]["trace_id"] != t["trace_id"]:
                    return "want one valid traceparent %s, got %s" % (t["trace_id"], json.dumps(ctxs))
            elif valid:
                return "want no valid traceparent, got %s" % json.dumps(valid)
            return None
        cases.add("w3c header set %d %s (%s)" % (i, [h[0] for h in t["headers"]], t["source_test"]),
                  [tuple(h) for h in t["headers"]], check)
    for i, t in enumerate(d["tracestate"]):
        hdrs = []
        if t["traceparent"] is not None:
            hdrs.append(("traceparent", t["traceparent"]))
        hdrs += [("tracestate", f) for f in t["tracestate_fields"]]
        exp = t["expected"]

        def check(ctxs, end, t=t, exp=exp):
            tp = ctx_of(ctxs, "traceparent")
            if t["traceparent"] is None:
                return None if not ctxs else "want no context, got %s" % json.dumps(ctxs)
            if len(tp) != 1 or not tp[0]["valid"]:
                return "traceparent not valid: %s" % json.dumps(ctxs)
            c = tp[0]
            got = [tuple(m) for m in c["tracestate_members"]]
            if exp == "DISCARD_ALL":
                if c["tracestate"] != "" or not c["error"].startswith("tracestate discarded"):
                    return "want tracestate discarded, got %r (%r)" % (c["tracestate"], c["error"])
                return None
            if exp == "DUPLICATE_KEEP_OR_DROP":
                src = [tuple(m.split("=", 1)) for f in t["tracestate_fields"] for m in f.split(",")]
                if not got or any(g not in src for g in got):
                    return "want a subset of %r, got %r" % (src, got)
                return None
            if c["error"]:
                return "unexpected note %r" % c["error"]
            return None if got == [tuple(m) for m in exp] else "members %r, want %r" % (got, exp)
        cases.add("w3c tracestate %d (%s)" % (i, t["source_test"]), hdrs, check)


PROP_FORMAT = {"b3": ("b3-single", "b3"), "jaeger": ("uber-trace-id", "uber-trace-id"),
               "xray": ("x-amzn-trace-id", "X-Amzn-Trace-Id"), "sw8": ("sw8", "sw8"),
               "b3multi": ("b3-multi", None), "datadog": ("datadog", None)}


def propagation_cases(cases, d):
    for i, t in enumerate(d["cases"]):
        fmt, hname = PROP_FORMAT[t["format"]]
        hdrs = [tuple(h) for h in t["input"]] if hname is None else [(hname, t["input"])]
        want = t["expected"]
        if want is not None and fmt == "sw8":
            # sw8 ids are opaque base64 strings, not hex: spanfold keeps raw + validity only
            want = {"trace_id": None, "span_id": None, "parent_id": None,
                    "sampled": want["sampled"], "debug": want["debug"]}
        cases.add("propagation %d %s %s" % (i, t["format"], json.dumps(t["input"])[:70]), hdrs,
                  one_ctx(fmt, want is not None, want))


def grpc_cases(cases, text):
    fields = {}
    examples = []  # (label, hex, valid)
    for line in text.splitlines():
        m = re.match(r"\s*bytes\[(\d+)\.\.(\d+)\]\s+(.*?)\s+([0-9a-f]+)$", line)
        if m:
            fields[m.group(3)] = m.group(4)
        m = re.match(r"raw \(29 bytes\): ([0-9a-f]+)", line)
        if m:
            examples.append(("raw", m.group(1), True))
        m = re.match(r"# (.*?)(?:->.*)?: ([0-9a-f]{20,})$", line)
        if m:
            bad = re.search(r"error|reject|unsupported", line, re.I) is not None
            examples.append((m.group(1).strip(), m.group(2), not bad))
        m = re.match(r"metadata value, (padded|unpadded) base64\s*: (\S+)", line)
        if m:
            examples.append((m.group(1) + " base64 text", m.group(2), True))
        m = re.match(r"equivalent traceparent: (\S+)", line)
        if m:
            examples.append(("equivalent traceparent", m.group(1), True))
    trace, span = fields["trace_id"], fields["span_id"]
    opts = next(v for k, v in fields.items() if k.startswith("trace_options"))
    for label, val, valid in examples:
        if label == "equivalent traceparent":
            cases.add("grpc-trace-bin: %s" % label, [("traceparent", val)],
                      one_ctx("traceparent", True, {"trace_id": trace, "span_id": span,
                                                    "sampled": bool(int(opts, 16) & 1)}))
            continue
        if label.endswith("base64 text"):
            cases.add("grpc-trace-bin: %s" % label, [("grpc-trace-bin", val)],
                      one_ctx("grpc-trace-bin", True, {"trace_id": trace, "span_id": span,
                                                       "sampled": bool(int(opts, 16) & 1)}))
            continue
        b = bytes.fromhex(val)
        want = None
        if valid:
            # options only when field 2 follows the span id, else OpenCensus' default 0
            sampled = len(b) >= 29 and b[27] == 2 and (b[28] & 1) == 1
            want = {"trace_id": trace, "span_id": span, "sampled": sampled}
        forms = [("true binary", b"\x00" + b),
                 ("padded base64", base64.b64encode(b).decode()),
                 ("unpadded base64", base64.b64encode(b).decode().rstrip("="))]
        for form, wire in forms:
            cases.add("grpc-trace-bin: %s as %s" % (label, form), [("grpc-trace-bin", wire)],
                      one_ctx("grpc-trace-bin", valid, want))
    # several values joined with ',' (duplicate -bin headers), one context each
    b64 = next(v for lbl, v, ok in examples if lbl == "unpadded base64 text")

    def joined(ctxs, end):
        cs = ctx_of(ctxs, "grpc-trace-bin")
        if len(cs) != 2 or not all(c["valid"] and c["trace_id"] == trace for c in cs):
            return "want 2 valid contexts, got %s" % json.dumps(ctxs)
        return None
    cases.add("grpc-trace-bin: two values joined with ','", [("grpc-trace-bin", b64 + ", " + b64)],
              joined)


def main():
    driver, corpus = sys.argv[1], sys.argv[2]
    cases = Cases()
    with open(corpus + "/w3c/w3c_trace_context_cases.json") as f:
        w3c_cases(cases, json.load(f))
    with open(corpus + "/propagation/propagation_cases.json") as f:
        propagation_cases(cases, json.load(f))
    with open(corpus + "/propagation/grpc_trace_bin.txt") as f:
        grpc_cases(cases, f.read())

    lines = []
    for _, hdrs, _ in cases.sets:
        for n, v in hdrs:
            lines.append(esc(n) + "\t" + esc(v))
        lines.append("")
    p = subprocess.run([driver, "--stdin"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True)
    if p.returncode != 0:
        print("not ok 1 - driver %s exited %d: %s" % (driver, p.returncode, p.stderr.strip()))
        return 1
    ctxs, ends = {}, {}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        if o.get("end"):
            ends[o["set"]] = o
        else:
            ctxs.setdefault(o["set"], []).append(o)
    failed = 0
    for i, (name, hdrs, check) in enumerate(cases.sets):
        # every set prints an end line, even with no context
        err = "driver printed no end line" if i not in ends else check(ctxs.get(i, []), ends[i])
        if err:
            failed += 1
            print("not ok %d - %s" % (i + 1, name))
            print("#   input: %s" % "; ".join("%s: %s" % (esc(n), esc(v)) for n, v in hdrs))
            print("#   %s" % err)
        else:
            print("ok %d - %s" % (i + 1, name))
    print("1..%d" % len(cases.sets))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Trace-context cases sent by scripts/record-samples.sh, with the parse their specifications imply.

Each case: headers exactly as sent (name, value) and the contexts a correct parser must
report for them, in the manifest's vocabulary (docs/database.md column names):
  format          b3-multi, b3-single, traceparent, grpc-trace-bin, uber-trace-id,
                  x-amzn-trace-id, datadog, baggage
  trace_id        32 lowercase hex, or None (format carried none)
  span_id         16 lowercase hex, or None
  parent_span_id  16 lowercase hex, or None (absent, or Jaeger's deprecated "0")
  sampled         1, 0, or None (deferred / format says nothing)
  debug           1 or 0 (only checked when given)
  trace_id_64     1 when a 64-bit trace id was left-padded (only checked when given)
  valid           True / False
  reason          why it is invalid (or the warning), in words
  reason_match    regex (case-insensitive) the parser's error text must match
  tracestate      the combined tracestate a correct parser keeps ("" = discarded)

The values are written out by hand from the formats' specifications, not
computed by any parser, so they can disagree with pcap2spans.
"""

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TP_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TP_SPAN = "00f067aa0ba902b7"
B3_TRACE = "80f198ee56343ba864fe8b2a57d3eff7"
B3_SPAN = "e457b5a2e4d86bd1"
B3_PARENT = "05e3ac9a4f6e3b90"

# The 29-byte OpenCensus grpc-trace-bin of the OpenCensus BinaryEncoding spec.
GTB_HEX = "00004bf92f3577b34da6a3ce929d000e47360134f067aa0ba902b70201"
GTB_TRACE = "4bf92f3577b34da6a3ce929d000e4736"
GTB_SPAN = "34f067aa0ba902b7"


def ctx(fmt, trace=None, span=None, parent=None, sampled=None, valid=True, **kw):
    c = {"format": fmt, "trace_id": trace, "span_id": span, "parent_span_id": parent,
         "sampled": sampled, "valid": valid}
    c.update(kw)
    return c


# ---- valid contexts, one case per format (and its variants) ------------------------------
VALID = [
    ("tp-tracestate",
     [("traceparent", TP), ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")],
     [ctx("traceparent", TP_TRACE, TP_SPAN, None, 1, flags=1,
          tracestate="congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")]),
    ("tp-unsampled",
     [("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")],
     [ctx("traceparent", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", None, 0,
          flags=0)]),
    ("tp-future-version",
     [("traceparent", "cc-" + TP_TRACE + "-" + TP_SPAN + "-01-what-the-future-will-be-like")],
     [ctx("traceparent", TP_TRACE, TP_SPAN, None, 1)]),
    ("tp-random-flag",
     [("traceparent", "00-" + TP_TRACE + "-" + TP_SPAN + "-03")],
     [ctx("traceparent", TP_TRACE, TP_SPAN, None, 1, flags=3)]),
    ("b3-single-128",
     [("b3", B3_TRACE + "-" + B3_SPAN + "-1-" + B3_PARENT)],
     [ctx("b3-single", B3_TRACE, B3_SPAN, B3_PARENT, 1, debug=0)]),
    ("b3-single-64-debug",
     [("b3", "a3ce929d0e0e4736-00f067aa0ba902b7-d")],
     [ctx("b3-single", "0000000000000000a3ce929d0e0e4736", "00f067aa0ba902b7", None, 1,
          debug=1, trace_id_64=1)]),
    ("b3-single-defer",
     [("b3", B3_TRACE + "-" + B3_SPAN)],
     [ctx("b3-single", B3_TRACE, B3_SPAN, None, None)]),
    ("b3-multi-128",
     [("X-B3-TraceId", "463ac35c9f6413ad48485a3953bb6124"), ("X-B3-SpanId", "a2fb4a1d1a96d312"),
      ("X-B3-ParentSpanId", "0020000000000001"), ("X-B3-Sampled", "1")],
     [ctx("b3-multi", "463ac35c9f6413ad48485a3953bb6124", "a2fb4a1d1a96d312",
          "0020000000000001", 1)]),
    ("b3-multi-64",
     [("x-b3-traceid", "463ac35c9f6413ad"), ("x-b3-spanid", "a2fb4a1d1a96d312"),
      ("x-b3-sampled", "0")],
     [ctx("b3-multi", "0000000000000000463ac35c9f6413ad", "a2fb4a1d1a96d312", None, 0,
          trace_id_64=1)]),
    ("uber-128",
     [("uber-trace-id", B3_TRACE + ":" + B3_SPAN + ":0:3")],
     [ctx("uber-trace-id", B3_TRACE, B3_SPAN, None, 1, debug=1)]),
    ("uber-64-parent",
     [("uber-trace-id", "51729f13a64c2ef3:258169797d519815:51729f13a64c2ef3:1")],
     [ctx("uber-trace-id", "000000000000000051729f13a64c2ef3", "258169797d519815",
          "51729f13a64c2ef3", 1, trace_id_64=1)]),
    ("uber-short-pad",
     [("uber-trace-id", "abc:1:0:1")],
     [ctx("uber-trace-id", "00000000000000000000000000000abc", "0000000000000001", None, 1)]),
    ("xray",
     [("X-Amzn-Trace-Id",
       "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")],
     [ctx("x-amzn-trace-id", "5759e988bd862e3fe1be46a994272793", "53995c3f42cd8ad8", None, 1)]),
    ("datadog-128",
     [("x-datadog-trace-id", "9532127138774266268"), ("x-datadog-parent-id", "1234567890123456789"),
      ("x-datadog-sampling-priority", "1"), ("x-datadog-tags", "_dd.p.tid=640cfd8d00000000")],
     [ctx("datadog", "640cfd8d000000008448eb211c80319c", "112210f47de98115", None, 1)]),
    ("datadog-64-reject",
     [("x-datadog-trace-id", "9532127138774266268"), ("x-datadog-parent-id", "1234567890123456789"),
      ("x-datadog-sampling-priority", "-1")],
     [ctx("datadog", "00000000000000008448eb211c80319c", "112210f47de98115", None, 0,
          trace_id_64=1)]),
    ("baggage",
     [("baggage", "userId=Am%C3%A9lie,serverNode=DF%2028,isProduction=false")],
     [ctx("baggage")]),
    ("many-formats",
     [("traceparent", TP), ("b3", B3_TRACE + "-" + B3_SPAN + "-1"),
      ("x-datadog-trace-id", "9532127138774266268"),
      ("x-datadog-parent-id", "1234567890123456789")],
     [ctx("traceparent", TP_TRACE, TP_SPAN, None, 1),
      ctx("b3-single", B3_TRACE, B3_SPAN, None, 1),
      ctx("datadog", "00000000000000008448eb211c80319c", "112210f47de98115", None, None)]),
]

# ---- malformed contexts: each kept, flagged invalid, with the reason ------------------------
Z32 = "0" * 32
Z16 = "0" * 16
MALFORMED = [
    ("tp-uppercase",
     [("traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01")],
     [ctx("traceparent", valid=False,
          reason="trace-id is not lowercase hex (HEXDIGLC; uppercase is invalid)",
          reason_match=r"upper|lower|hex|charact")]),
    ("tp-zero-trace",
     [("traceparent", "00-" + Z32 + "-" + TP_SPAN + "-01")],
     [ctx("traceparent", valid=False, reason="all-zero trace-id", reason_match=r"zero")]),
    ("tp-zero-parent",
     [("traceparent", "00-" + TP_TRACE + "-" + Z16 + "-01")],
     [ctx("traceparent", valid=False, reason="all-zero parent-id", reason_match=r"zero")]),
    ("tp-short-trace",
     [("traceparent", "00-" + TP_TRACE[:31] + "-" + TP_SPAN + "-01")],
     [ctx("traceparent", valid=False, reason="trace-id of 31 hex digits (value shorter than 55)",
          reason_match=r"length|short|long|size|55|32|char")]),
    ("tp-long-parent",
     [("traceparent", "00-" + TP_TRACE + "-" + TP_SPAN + "0-01")],
     [ctx("traceparent", valid=False, reason="parent-id of 17 hex digits (value longer than 55)",
          reason_match=r"length|short|long|size|55|16|char|-")]),
    ("tp-version-ff",
     [("traceparent", "ff-" + TP_TRACE + "-" + TP_SPAN + "-01")],
     [ctx("traceparent", valid=False, reason="version ff is forbidden",
          reason_match=r"version|ff")]),
    ("tp-v00-trailing",
     [("traceparent", TP + "-extra")],
     [ctx("traceparent", valid=False,
          reason="version 00 must be exactly 55 characters (trailing data)",
          reason_match=r"length|long|55|trailing|extra|version")]),
    ("tp-two-headers",
     [("traceparent", TP),
      ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")],
     [ctx("traceparent", valid=False, reason="two traceparent headers (W3C: restart the trace)",
          reason_match=r"two|2 traceparent|duplicate|multiple|repeat|more than one|twice"
                       r"|exactly (1|one)")]),
    ("tp-bad-tracestate",
     [("traceparent", TP), ("tracestate", "FOO=1,bar=2")],
     [ctx("traceparent", TP_TRACE, TP_SPAN, None, 1, tracestate="",
          reason="tracestate discarded: key FOO is not lowercase (traceparent stays valid)",
          reason_match=r"tracestate")]),
    ("tp-invalid-with-tracestate",
     [("traceparent", "00-" + Z32 + "-" + TP_SPAN + "-01"), ("tracestate", "congo=t61rcWkgMzE")],
     [ctx("traceparent", valid=False, tracestate="",
          reason="all-zero trace-id; tracestate must then not be parsed", reason_match=r"zero")]),
    ("b3-single-empty-parent",
     [("b3", B3_TRACE + "-" + B3_SPAN + "-1-")],
     [ctx("b3-single", valid=False, reason="empty parent span id after the last '-'",
          reason_match=r"parent|empty|malformed|trailing|length")]),
    ("b3-single-short-span",
     [("b3", B3_TRACE + "-" + B3_SPAN[:15] + "-1")],
     [ctx("b3-single", valid=False, reason="span id of 15 hex digits (must be 16)",
          reason_match=r"span|length|16")]),
    ("b3-single-zero-span",
     [("b3", B3_TRACE + "-" + Z16 + "-1")],
     [ctx("b3-single", valid=False, reason="all-zero span id", reason_match=r"zero")]),
    ("b3-multi-no-span",
     [("X-B3-TraceId", "463ac35c9f6413ad48485a3953bb6124"), ("X-B3-Sampled", "1")],
     [ctx("b3-multi", valid=False, reason="X-B3-SpanId is required with X-B3-TraceId",
          reason_match=r"span")]),
    ("uber-zero-trace",
     [("uber-trace-id", "0:" + B3_SPAN + ":0:1")],
     [ctx("uber-trace-id", valid=False, reason="trace id 0 is invalid",
          reason_match=r"zero|trace")]),
    ("uber-three-fields",
     [("uber-trace-id", B3_TRACE + ":" + B3_SPAN + ":1")],
     [ctx("uber-trace-id", valid=False, reason="3 fields instead of 4",
          reason_match=r"field|part|colon|format|malformed|expect")]),
    ("xray-short-root",
     [("X-Amzn-Trace-Id",
       "Root=1-5759e988-bd862e3fe1be46a99427279;Parent=53995c3f42cd8ad8;Sampled=1")],
     [ctx("x-amzn-trace-id", valid=False,
          reason="Root with 23 hex digits after the epoch (must be 24)",
          reason_match=r"root|length|24|35")]),
    ("datadog-hex-id",
     [("x-datadog-trace-id", "8448eb211c80319c"), ("x-datadog-parent-id", "1234567890123456789")],
     [ctx("datadog", valid=False, reason="x-datadog-trace-id is not a decimal uint64",
          reason_match=r"decimal|digit|number|integer|trace")]),
]

# ---- grpc-trace-bin cases for the gRPC captures ------------------------------------------
GRPC_VALID = ctx("grpc-trace-bin", GTB_TRACE, GTB_SPAN, None, 1, flags=1)
GRPC_TRUNCATED_HEX = GTB_HEX[:40]  # 20 bytes: field 1 (span id) cut
GRPC_TRUNCATED = ctx("grpc-trace-bin", valid=False,
                     reason="20 bytes: shorter than the 27 a trace id and span id need",
                     reason_match=r"trunc|short|length|27|29")
GRPC_BADVERSION_HEX = "01" + GTB_HEX[2:]
GRPC_BADVERSION = ctx("grpc-trace-bin", valid=False, reason="version byte 1 is unsupported",
                      reason_match=r"version")


def all_cases():
    """(name, headers, contexts) of every valid and malformed HTTP case."""
    return [c for c in VALID] + [c for c in MALFORMED]

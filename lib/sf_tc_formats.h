/* sf_tc_formats.h - the one list of trace-context formats and the headers they read.
 *
 * Everything that names the formats comes from here: enum sf_ctx_format and
 * sf_tracectx_format_name (the names stored in contexts.format), the preference order of
 * sf_tracectx_set_preferred, the header table of lib/sf_tracectx.c, the Wireshark
 * plugin's field description, and `test_tracectx --list-formats`, which
 * tests/scripts/t_tracectx_formats.sh compares with the tables in docs/.  A new format is
 * one SF_CTX_FORMATS line, its SF_CTX_HEADERS lines and its lib/sf_tc_<family>.c file;
 * the database takes any name from this list without a migration (lib/schema.sql).
 *
 * SF_CTX_FORMATS(X): X(ID, name, rank, parse) in enum order; rank orders the formats that
 * carry a span id for sf_tracectx_set_preferred (1 first), 0 never preferred; parse is the
 * format's parser of one text value (sf_tracectx.h), NULL for the multi-header and binary
 * ones.
 *
 * SF_CTX_HEADERS(X): X(ID, name in lowercase, name as shown, format ID, add) in header-id order;
 * the name is matched ASCII-case-insensitively, add (lib/sf_tc_int.h) takes its values.  The
 * headers of one multi-header format stay together, in the order their raw text lists them.
 */
#ifndef SF_TC_FORMATS_H
#define SF_TC_FORMATS_H

#define SF_CTX_FORMATS(X)                                                                          \
    X(B3_MULTI, "b3-multi", 3, NULL)                                                               \
    X(B3_SINGLE, "b3-single", 2, sf_tracectx_parse_b3_single)                                      \
    X(TRACEPARENT, "traceparent", 1, sf_tracectx_parse_traceparent)                                \
    X(GRPC_TRACE_BIN, "grpc-trace-bin", 4, NULL)                                                   \
    X(UBER, "uber-trace-id", 5, sf_tracectx_parse_uber)                                            \
    X(XRAY, "x-amzn-trace-id", 6, sf_tracectx_parse_xray)                                          \
    X(DATADOG, "datadog", 7, NULL)                                                                 \
    X(BAGGAGE, "baggage", 0, sf_tracectx_parse_baggage)                                            \
    X(SW8, "sw8", 0, sf_tracectx_parse_sw8)

#define SF_CTX_HEADERS(X)                                                                          \
    X(TRACEPARENT, "traceparent", "traceparent", TRACEPARENT, sf_tc_add_traceparent)               \
    X(TRACESTATE, "tracestate", "tracestate", TRACEPARENT, sf_tc_add_tracestate)                   \
    X(B3, "b3", "b3", B3_SINGLE, sf_tc_add_single)                                                 \
    X(B3_TRACEID, "x-b3-traceid", "X-B3-TraceId", B3_MULTI, sf_tc_add_b3_multi)                    \
    X(B3_SPANID, "x-b3-spanid", "X-B3-SpanId", B3_MULTI, sf_tc_add_b3_multi)                       \
    X(B3_PARENT, "x-b3-parentspanid", "X-B3-ParentSpanId", B3_MULTI, sf_tc_add_b3_multi)           \
    X(B3_SAMPLED, "x-b3-sampled", "X-B3-Sampled", B3_MULTI, sf_tc_add_b3_multi)                    \
    X(B3_FLAGS, "x-b3-flags", "X-B3-Flags", B3_MULTI, sf_tc_add_b3_multi)                          \
    X(GRPC, "grpc-trace-bin", "grpc-trace-bin", GRPC_TRACE_BIN, sf_tc_add_grpc)                    \
    X(UBER, "uber-trace-id", "uber-trace-id", UBER, sf_tc_add_single)                              \
    X(XRAY, "x-amzn-trace-id", "X-Amzn-Trace-Id", XRAY, sf_tc_add_single)                          \
    X(DD_TRACE, "x-datadog-trace-id", "x-datadog-trace-id", DATADOG, sf_tc_add_datadog)            \
    X(DD_PARENT, "x-datadog-parent-id", "x-datadog-parent-id", DATADOG, sf_tc_add_datadog)         \
    X(DD_PRIO, "x-datadog-sampling-priority", "x-datadog-sampling-priority", DATADOG,              \
      sf_tc_add_datadog)                                                                           \
    X(DD_TAGS, "x-datadog-tags", "x-datadog-tags", DATADOG, sf_tc_add_datadog)                     \
    X(BAGGAGE, "baggage", "baggage", BAGGAGE, sf_tc_add_baggage)                                   \
    X(SW8, "sw8", "sw8", SW8, sf_tc_add_single)

/* ", b3-multi, b3-single, ..." (skip the first two bytes): the names as one string. */
#define SF_CTX_FORMAT_NAME_(id, name, rank, parse) ", " name
#define SF_CTX_FORMAT_LIST                         (SF_CTX_FORMATS(SF_CTX_FORMAT_NAME_) + 2)

#endif

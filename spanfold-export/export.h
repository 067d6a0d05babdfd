/* export.h - spanfold-export: spanfold's joins in the formats other tools open.
 *
 *   spans.db --query.c--> struct ex_span / struct ex_sample (filtered, ordered)
 *              --> otlp.c (OTLP/JSON lines) | zipkin.c (Zipkin v2) | chrome.c (Chrome/Perfetto
 *                  JSON) | speedscope.c (one profile per span group) | pprof.c (gzip protobuf)
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sf_db.h"

/* Filters shared by every format (NULL / INT64_MIN = not set). */
struct ex_filter {
    const char *trace_id, *span_id, *service, *grpc_method;
    int64_t from_ns, to_ns; /* on the span's request start (capture clock) */
    int sampled;            /* -1 any, 0, 1 */
    int all;                /* include spans without trace context (synthetic ids) */
};

struct ex_ctx {
    struct sf_db *db;
    const char *db_path;
    struct ex_filter flt;
    const char *service_map; /* "host:port=name,..." */
    int complete_only;       /* --complete-only */
    FILE *out;
    int samples_by_span;              /* order samples by span (speedscope), else by time */
    uint64_t spans, skipped, samples; /* written / skipped for want of ids / samples */
};

/* One span, joined with its connection.  Strings live until the next ex_span_next. */
struct ex_span {
    int64_t row, conn_id, stream_id;
    char trace_id[33], span_id[17], parent_id[17];
    int synthetic;   /* ids made up (--all) */
    int sampled;     /* -1 unknown */
    int trace_flags; /* W3C trace-flags of the key context, -1 unknown */
    const char *ctx_format, *proto, *method, *authority, *path, *grpc_service, *grpc_method,
        *grpc_message, *partial_reason, *client_addr, *server_addr, *tls_version, *tls_cipher, *sni,
        *alpn, *early_state;
    char service[128];
    int status, grpc_status, client_port, server_port, early_data, partial, decrypted;
    int64_t start_ns, end_ns, req_bytes, resp_bytes, reset_code;
    /* a JSON-RPC call (proto "jsonrpc"; pcap2spans/rpc.h): NULL, INT64_MIN, -1, NaN absent */
    const char *rpc_id, *rpc_direction, *rpc_session, *rpc_name, *rpc_error, *model_hint;
    int64_t rpc_error_code, max_tokens;
    int rpc_tool_error;
    double temperature, top_p;
    /* the trace context of the HTTP exchange that carried a JSON-RPC call, or NULL */
    const char *carrier_trace, *carrier_span;
    int synthetic_span; /* the span id was made (a call under its carrier), the trace is real */
};

struct ex_span_iter;

/* Start iterating the spans that pass the filters, in request-start order.
 * Returns NULL with an error printed. */
struct ex_span_iter *ex_span_iter_new(struct ex_ctx *c);
/* Next span: 1, 0 at the end, -1 on a database error (printed). */
int ex_span_next(struct ex_span_iter *it, struct ex_span *s);
/* 1 for a connection that never completed its handshake (pcap2spans' failed spans
 * tcp:ADDR:PORT and tls:SNI, partial_reason "handshake failed: ..."): an error. */
int ex_span_handshake_failed(const struct ex_span *s);
void ex_span_iter_free(struct ex_span_iter *it);

/* 1 for a JSON-RPC call's span. */
int ex_span_is_rpc(const struct ex_span *s);
/* 1 for a span exports mark as an error: HTTP 5xx, gRPC status, a reset stream, a failed
 * handshake, a JSON-RPC error or a tool result with isError. */
int ex_span_error(const struct ex_span *s);
/* A span's name as tracing UIs show it: "pkg.Service/Method", "GET /path", or for a
 * JSON-RPC call its method and target (OpenTelemetry's MCP convention: "tools/call
 * search_docs"). */
void ex_span_name(const struct ex_span *s, char *out, size_t n);

/* One perf sample with its stack (frames root first, ';'-separated). */
struct ex_sample {
    int64_t ts_ns;    /* in the sample source's clock */
    int64_t ts_rt_ns; /* mapped to the capture (realtime) clock, INT64_MIN if no fit */
    int64_t pid, tid, cpu, period;
    const char *comm, *event, *frames, *span_id, *clock;
};

struct ex_sample_iter;
/* Samples whose span (samples.span_id) passes the span filters; with no span
 * filter set, every sample (unattributed ones with span_id NULL). */
struct ex_sample_iter *ex_sample_iter_new(struct ex_ctx *c);
int ex_sample_next(struct ex_sample_iter *it, struct ex_sample *s);
void ex_sample_iter_free(struct ex_sample_iter *it);

/* Writers: return 0, or 2 after printing an error. */
int otlp_write(struct ex_ctx *c);
int zipkin_write(struct ex_ctx *c);
int chrome_write(struct ex_ctx *c);
int speedscope_write(struct ex_ctx *c);
int pprof_write(struct ex_ctx *c);

/* Print "spanfold-export: msg" to stderr; returns 2. */
int ex_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int spanfold_export_main(int argc, char **argv);

#endif

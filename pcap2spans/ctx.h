/* ctx.h - the run context: configuration (limits, flags), where we are (file, packet),
 * counters and notes for the summary, error reports, the trace-context set pool, and
 * the writer (out.h) that records go to.  Every layer gets it; nothing in it calls
 * up into a layer.
 *
 * All state travels in struct p2s_ctx (no globals), so that parallel ingest (-j) runs
 * one context per worker thread.
 */
#ifndef P2S_CTX_H
#define P2S_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "out.h"
#include "sf_arena.h"
#include "sf_attrs.h"
#include "sf_err.h"
#include "sf_tracectx.h"

struct p2s_conn;     /* conn.h */
struct p2s_app_ops;  /* conn.h */
struct p2s_tcp;      /* flow table (tcp.c) */
struct p2s_tls_keys; /* tls.h */

/* Limits: every growable thing has a cap that is part of the configuration. */
struct p2s_limits {
    size_t max_flows;          /* open TCP connections */
    size_t max_ooo_bytes;      /* out-of-order bytes per direction: sequence space after a hole */
    size_t max_ooo_segments;   /* out-of-order segments (pieces) held per direction */
    size_t max_header_bytes;   /* one HTTP/1 header section or one HTTP/2 header block */
    size_t max_streams;        /* open HTTP/2 streams per connection */
    size_t max_field_bytes;    /* one decoded header field (name + value) */
    size_t max_hpack_table;    /* largest HPACK dynamic table accepted */
    size_t max_rpc_bytes;      /* one JSON-RPC body or SSE event (rpc.h) */
    int64_t idle_timeout_ns;   /* flows idle this long (capture time) are flushed */
    struct sf_attrs_keep keep; /* request headers kept for the attributes (--keep-header) */
};

/* Counters for the end-of-run summary. */
struct p2s_stats {
    uint64_t packets, bytes; /* capture records and their captured bytes */
    uint64_t tcp_segments, tcp_payload;
    uint64_t unsupported_link; /* packets of a link type we do not decode */
    uint64_t unsupported_net;  /* non-IP ethertypes, non-TCP protocols */
    uint64_t ip_fragments;     /* IPv4/IPv6 fragments (not reassembled) */
    uint64_t truncated;        /* packets cut short by the snap length */
    uint64_t malformed;        /* bad link/IP/TCP headers */
    uint64_t connections, spans, partial_spans;
    uint64_t gaps, gap_bytes;
    uint64_t flows_evicted; /* closed early by the max_flows cap */
    uint64_t errors;        /* errors reported (all layers) */
    uint64_t ctx_by_format[SF_CTX_NFORMATS];
    uint64_t ctx_invalid;
};

/* A named counter from p2s_note, for the summary (small fixed table). */
#define P2S_NOTE_KINDS 32
struct p2s_note_count {
    const char *kind; /* static string given to p2s_note */
    uint64_t n;
};

/* Trace-context sets are ~23 KB: the parsers take them from a pool shared by all
 * connections instead of a malloc/free per request.  p2s_set_get returns an initialised
 * set or NULL (out of memory); p2s_set_put (NULL is a no-op) keeps up to P2S_SET_POOL of
 * them and frees the rest, so the pool never holds more than P2S_SET_POOL x 23 KB.  Sets
 * in the pool were all in use at once before (one per open request), and glibc keeps
 * freed blocks of this size in the heap anyway, so the pool adds no peak memory; 64 was
 * too few for 20 HTTP/2 connections of 10 streams each (a malloc for 38 % of requests). */
#define P2S_SET_POOL 256

/* At most this many error lines are printed per run; the rest are counted. */
#define P2S_MAX_PRINTED_ERRORS 100

struct p2s_rpc; /* rpc.c */

struct p2s_ctx {
    const char *tool; /* "pcap2spans" */
    struct p2s_limits lim;
    int strict, quiet;
    struct p2s_tcp *tcp;
    struct p2s_out *out; /* NULL: spans only go to span_hook (tests) */
    /* Where we are, for error messages: file, 1-based packet number, byte offset of
     * that packet's record in the file, and its capture time. */
    const char *file;
    uint64_t pkt_no, pkt_off;
    int64_t pkt_ts;
    int stop; /* --strict or a database failure: stop reading */
    uint64_t errors_printed;
    struct sf_arena pkt; /* per-packet arena, reset after every packet */
    struct p2s_stats st;
    struct p2s_note_count notes[P2S_NOTE_KINDS];
    /* Test hook: when set, new connections get this parser without content detection. */
    const struct p2s_app_ops *force_ops;
    /* Test hook: when set, every span is passed here (and to the writer if there is one). */
    int (*span_hook)(void *arg, struct p2s_conn *conn, const struct p2s_span *span);
    void *span_hook_arg;
    /* TLS secrets (tls_keys.c): --keylog files and pcapng Decryption Secrets Blocks. */
    struct p2s_tls_keys *tls_keys;
    /* Freed trace-context sets kept for reuse (p2s_set_get/p2s_set_put). */
    struct sf_tracectx_set *set_pool[P2S_SET_POOL];
    int set_pool_n;
    /* JSON-RPC requests waiting for their responses (rpc.c), NULL when none */
    struct p2s_rpc *rpc;
};

/* Default caps (see --help). */
void p2s_limits_default(struct p2s_limits *lim);
const struct p2s_limits *p2s_limits(const struct p2s_ctx *ctx);

/* The context without its flow table (p2s.h's p2s_ctx_init adds that): default limits,
 * no writer.  p2s_ctx_base_free frees the arena and the set pool. */
void p2s_ctx_base_init(struct p2s_ctx *ctx);
void p2s_ctx_base_free(struct p2s_ctx *ctx);

struct sf_tracectx_set *p2s_set_get(struct p2s_ctx *ctx);
void p2s_set_put(struct p2s_ctx *ctx, struct sf_tracectx_set *set);

/* Report an error on the current packet: the packet's number and file offset go beside
 * the parser's own offset (err->off, the byte where it failed), it is printed once via
 * sf_err_format (unless ctx->quiet, and at most P2S_MAX_PRINTED_ERRORS per run),
 * counted, and sets ctx->stop under --strict. */
void p2s_report(struct p2s_ctx *ctx, struct sf_err *err);
/* Print one formatted error line (the cap above applies), or any other line of the
 * input being read (p2s_say); a -j worker puts them on its tape instead (out.h). */
void p2s_print_error(struct p2s_ctx *ctx, const char *line);
void p2s_say(struct p2s_ctx *ctx, const char *line);

/* Count an event for the end-of-run summary and for connection_events where it
 * names a connection (conn may be NULL): e.g. "hpack_error", "h2_rst", "gap". */
void p2s_note(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *kind, const char *detail,
              int64_t ts_ns);
/* How many times p2s_note was called with kind (0 if never). */
uint64_t p2s_note_count(const struct p2s_ctx *ctx, const char *kind);

/* Hand a finished span to the writer (database rows or one NDJSON line).  Returns 0
 * or a negative SF_E_* (database failure: fatal for the run). */
int p2s_emit_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *span);
/* The same for a span of the connection ci whose parser may be gone (a JSON-RPC call
 * answered on another connection, rpc.c): conn is ci's connection, or NULL. */
int p2s_emit_span_on(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_conn_info *ci,
                     const struct p2s_span *span);

/* A connection that carried no request and never completed its handshake, as a failed
 * span of its own (tcp.c, tls.c): endpoint (path) "PROTO:WHERE" ("tcp:10.0.0.7:443",
 * "tls:api.example.com"), from the connection's first packet to end_ns, partial with
 * why ("handshake failed: ...": the report counts it as an error).  authority may be
 * NULL. */
void p2s_emit_failed_handshake(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *proto,
                               const char *where, const char *authority, int64_t end_ns,
                               const char *why);

/* A connection was seen first (gets its id) / closed / has its TLS facts (tls.c). */
void p2s_conn_opened(struct p2s_ctx *ctx, struct p2s_conn *conn);
void p2s_conn_closed(struct p2s_ctx *ctx, struct p2s_conn *conn);
void p2s_conn_tls_done(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct sf_net_tls *tls);

/* Add a -j worker's counters and notes (in their order) to the run's. */
void p2s_ctx_merge(struct p2s_ctx *into, const struct p2s_stats *st,
                   const struct p2s_note_count *notes);

/* The end-of-run summary (counters and notes). */
void p2s_summary(const struct p2s_ctx *ctx, FILE *f);

#endif

/* p2s.h - what the layers of pcap2spans share.
 *
 * Data flow (one file per layer):
 *
 *   pcap.c (libpcap offline) -> link.c (Ethernet/802.1Q/SLL/SLL2/NULL/raw) -> ip.c (v4/v6)
 *     -> tcp.c (per-connection, per-direction reassembly)
 *       -> detect (by content: "PRI * HTTP/2.0" preface, HTTP/1 request line, TLS record)
 *         -> app parser (h1.c, h2.c + hpack.c + grpc.c; tls.c later) via struct p2s_app_ops
 *           -> p2s_emit_span() -> sink.c (SQLite via lib/sf_db_net.c, or NDJSON)
 *
 * All state travels in struct p2s_ctx (no globals).  Application parsers never see
 * packets: tcp.c hands them the new in-order bytes of each segment with that
 * segment's timestamp, reports holes as gaps, and calls close once.
 */
#ifndef P2S_H
#define P2S_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"
#include "sf_tracectx.h"

struct p2s_ctx;  /* the tool's run context (main.c) */
struct p2s_conn; /* one TCP connection (tcp.c) */

enum p2s_dir {
    P2S_C2S = 0, /* client to server (the side that sent SYN, or the first data when the
                    capture started mid-connection: see tcp.c) */
    P2S_S2C = 1,
};

/* Limits: every growable thing has a cap that is part of the configuration. */
struct p2s_limits {
    size_t max_flows;          /* open TCP connections */
    size_t max_ooo_bytes;      /* buffered out-of-order bytes per direction */
    size_t max_header_bytes;   /* one HTTP/1 header section or one HTTP/2 header block */
    size_t max_streams;        /* open HTTP/2 streams per connection */
    size_t max_field_bytes;    /* one decoded header field (name + value) */
    size_t max_hpack_table;    /* largest HPACK dynamic table accepted */
    int64_t idle_timeout_ns;   /* flows idle this long (capture time) are flushed */
};

/* Application-layer parser attached to one connection. */
struct p2s_app_ops {
    const char *name; /* "http/1.1", "h2", "tls" */
    /* Create the parser state; NULL on allocation failure. */
    void *(*open)(struct p2s_ctx *ctx, struct p2s_conn *conn);
    /* New in-order bytes of one direction, all carried by one segment captured at
     * ts_ns.  Returns 0, or a negative SF_E_* with err filled; the caller reports
     * it (with packet number and offset) and the parser must stay usable: it
     * resynchronises on its own (e.g. at the next HTTP/1 message start). */
    int (*data)(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts_ns,
                struct sf_err *err);
    /* `len` bytes of this direction were lost (capture gap). */
    void (*gap)(void *st, enum p2s_dir dir, uint64_t len, int64_t ts_ns);
    /* End of connection (FIN/RST both ways, idle flush, or end of input): emit
     * what is pending (as partial spans where incomplete) and free the state. */
    void (*close)(void *st, int64_t ts_ns);
};

extern const struct p2s_app_ops p2s_h1_ops;
extern const struct p2s_app_ops p2s_h2_ops;

/* Replace the connection's application parser (HTTP/1.1 "Upgrade: h2c" accepted
 * with 101).  The old parser's close is NOT called: it hands over its state
 * itself.  Returns the new state or NULL. */
void *p2s_conn_switch(struct p2s_conn *conn, const struct p2s_app_ops *ops);

/* Facts about a connection, for parsers and the sink. */
int64_t p2s_conn_id(const struct p2s_conn *conn);  /* database row id (or sequence in NDJSON) */
struct p2s_ctx *p2s_conn_ctx(const struct p2s_conn *conn);
const struct p2s_limits *p2s_limits(const struct p2s_ctx *ctx);
/* Set the connection's app_proto ("http/1.1", "h2"); a static string. */
void p2s_conn_set_proto(struct p2s_conn *conn, const char *proto);

/* One HTTP exchange or gRPC call, as a parser hands it to the sink.  Strings are
 * owned by the parser and only need to live until p2s_emit_span returns; a NULL
 * string is unknown.  Timestamps are capture time (CLOCK_REALTIME ns), 0 unknown. */
struct p2s_span {
    int64_t stream_id;      /* HTTP/2 stream id; HTTP/1 exchange number (1, 2, ...) */
    const char *proto;      /* "http/1.1", "h2", "grpc" */
    const char *method, *authority, *path;
    int status;             /* HTTP status, 0 unknown */
    const char *grpc_service, *grpc_method, *grpc_message;
    int grpc_status;        /* -1 unknown */
    int64_t grpc_timeout_ns; /* -1 none */
    int64_t req_start_ns, req_end_ns, resp_start_ns, resp_end_ns;
    int64_t req_bytes, resp_bytes; /* body bytes, -1 unknown */
    int early_data;         /* the request travelled as TLS 0-RTT data */
    int partial;            /* something is missing; partial_reason says what */
    const char *partial_reason;
    int64_t reset_code;     /* RST_STREAM error code, -1 none */
    struct sf_tracectx_set *req_ctx;  /* contexts on the request (finished), or NULL */
    struct sf_tracectx_set *resp_ctx; /* contexts on the response (finished), or NULL */
};

/* After p2s_conn_switch(conn, &p2s_h2_ops) for an accepted "Upgrade: h2c" (101),
 * h1.c hands the upgraded request to the HTTP/2 parser: it becomes stream 1
 * (half-closed from the client), keeping req's method, authority, path, request
 * times, req_bytes and req_ctx (copied; req only needs to live during the call).
 * The response arrives as HTTP/2 frames after the server's SETTINGS, and the
 * client's connection preface follows on its side. */
void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req);

/* Hand a finished span to the sink (database rows or one NDJSON line).  Returns 0
 * or a negative SF_E_* (database failure: fatal for the run). */
int p2s_emit_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *span);

/* Count an event for the end-of-run summary and for connection_events where it
 * names a connection (conn may be NULL): e.g. "hpack_error", "h2_rst", "gap". */
void p2s_note(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *kind, const char *detail,
              int64_t ts_ns);

#endif

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
#include <stdio.h>

#include "sf_arena.h"
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
    size_t max_flows;        /* open TCP connections */
    size_t max_ooo_bytes;    /* out-of-order bytes per direction: sequence space after a hole */
    size_t max_ooo_segments; /* out-of-order segments (pieces) held per direction */
    size_t max_header_bytes; /* one HTTP/1 header section or one HTTP/2 header block */
    size_t max_streams;      /* open HTTP/2 streams per connection */
    size_t max_field_bytes;  /* one decoded header field (name + value) */
    size_t max_hpack_table;  /* largest HPACK dynamic table accepted */
    int64_t idle_timeout_ns; /* flows idle this long (capture time) are flushed */
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
int64_t p2s_conn_id(const struct p2s_conn *conn); /* database row id (or sequence in NDJSON) */
struct p2s_ctx *p2s_conn_ctx(const struct p2s_conn *conn);
/* The TCP sequence number of p[0] of the data call in progress on conn (what the
 * parser's offset into p is added to).  Returns 0, or -1 when the bytes are not TCP's
 * (TLS plaintext) or no data call is in progress. */
int p2s_conn_data_seq(const struct p2s_conn *conn, uint32_t *seq);
const struct p2s_limits *p2s_limits(const struct p2s_ctx *ctx);
/* Set the connection's app_proto ("http/1.1", "h2"); a static string. */
void p2s_conn_set_proto(struct p2s_conn *conn, const char *proto);

/* The TCP sequence numbers of a message's first byte and one past its last (mod
 * 2^32), for joining socket events (spantrace --sockets) to spans. */
struct p2s_seq_range {
    uint32_t start, end;
    int known; /* 0: unknown (TLS, a gap, the capture began inside the message) */
};

/* One HTTP exchange or gRPC call, as a parser hands it to the sink.  Strings are
 * owned by the parser and only need to live until p2s_emit_span returns; a NULL
 * string is unknown.  Timestamps are capture time (CLOCK_REALTIME ns), 0 unknown. */
struct p2s_span {
    int64_t stream_id; /* HTTP/2 stream id; HTTP/1 exchange number (1, 2, ...) */
    const char *proto; /* "http/1.1", "h2", "grpc" */
    const char *method, *authority, *path;
    int status; /* HTTP status, 0 unknown */
    const char *grpc_service, *grpc_method, *grpc_message;
    int grpc_status;         /* -1 unknown */
    int64_t grpc_timeout_ns; /* -1 none */
    int64_t req_start_ns, req_end_ns, resp_start_ns, resp_end_ns;
    int64_t req_bytes, resp_bytes; /* body bytes, -1 unknown */
    int early_data;                /* the request travelled as TLS 0-RTT data */
    int undelivered;               /* never reached the server (set by p2s_emit_span) */
    int partial;                   /* something is missing; partial_reason says what */
    const char *partial_reason;
    int64_t reset_code;                     /* RST_STREAM error code, -1 none */
    struct p2s_seq_range req_seq, resp_seq; /* TCP bytes of each message (known 0: not) */
    struct sf_tracectx_set *req_ctx;        /* contexts on the request (finished), or NULL */
    struct sf_tracectx_set *resp_ctx;       /* contexts on the response (finished), or NULL */
};

/* The HTTP2-Settings header fields of an h2c upgrade request (RFC 7540 3.2.1), as
 * h1.c saw them: the client's SETTINGS payload, base64url without padding. */
#define P2S_H2C_SETTINGS_MAX 1024 /* longer values are malformed (and not kept) */
struct p2s_h2c_settings {
    const char *value; /* the first field's value (not NUL-terminated); NULL when
                          absent or longer than P2S_H2C_SETTINGS_MAX */
    size_t len;        /* its length, also when it was too long to keep */
    unsigned count;    /* HTTP2-Settings fields in the request (0: absent) */
    int64_t ack_ns;    /* capture time of the 101 that acknowledges them */
};

/* After p2s_conn_switch(conn, &p2s_h2_ops) for an accepted "Upgrade: h2c" (101),
 * h1.c hands the upgraded request to the HTTP/2 parser: it becomes stream 1
 * (half-closed from the client), keeping req's method, authority, path, request
 * times, req_bytes and req_ctx (copied; req only needs to live during the call).
 * The response arrives as HTTP/2 frames after the server's SETTINGS, and the
 * client's connection preface follows on its side.  hs (NULL: none) carries the
 * request's HTTP2-Settings: the 101 acknowledges them, so they bound what the
 * server sends from then on, as an ACKed SETTINGS frame would; a malformed value
 * (more than one field, too long, not base64url, not a whole number of settings)
 * is an "h2c_settings" event and the defaults stay. */
void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req,
                          const struct p2s_h2c_settings *hs);

/* Hand a finished span to the sink (database rows or one NDJSON line).  Returns 0
 * or a negative SF_E_* (database failure: fatal for the run). */
int p2s_emit_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *span);

/* Count an event for the end-of-run summary and for connection_events where it
 * names a connection (conn may be NULL): e.g. "hpack_error", "h2_rst", "gap". */
void p2s_note(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *kind, const char *detail,
              int64_t ts_ns);
/* How many times p2s_note was called with kind (0 if never). */
uint64_t p2s_note_count(const struct p2s_ctx *ctx, const char *kind);

/* ======================================================================================
 * Everything below was added by the core (pcap/link/ip/tcp/h1/sink) after the contract
 * above was agreed.  Nothing above changed.  Parsers may use it; tests use it to build a
 * context without main.c and to collect spans in memory.
 * ====================================================================================== */

/* h2c upgrades use p2s_h2_adopt_upgrade above (h2.c): h1.c, on the server's 101,
 * calls st = p2s_conn_switch(conn, &p2s_h2_ops), p2s_h2_adopt_upgrade(st, &req_span,
 * &settings), then hands the bytes after the 101 to p2s_h2_ops.data. */

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

/* Trace-context sets are ~23 KB: the parsers take them from a pool shared by all
 * connections instead of a malloc/free per request.  p2s_set_get returns an initialised
 * set or NULL (out of memory); p2s_set_put (NULL is a no-op) keeps up to P2S_SET_POOL of
 * them and frees the rest, so the pool never holds more than P2S_SET_POOL x 23 KB.  Sets
 * in the pool were all in use at once before (one per open request), and glibc keeps
 * freed blocks of this size in the heap anyway, so the pool adds no peak memory; 64 was
 * too few for 20 HTTP/2 connections of 10 streams each (a malloc for 38 % of requests). */
#define P2S_SET_POOL 256
struct sf_tracectx_set *p2s_set_get(struct p2s_ctx *ctx);
void p2s_set_put(struct p2s_ctx *ctx, struct sf_tracectx_set *set);

struct p2s_tcp;  /* flow table (tcp.c) */
struct p2s_sink; /* database / NDJSON output (sink.c) */

/* A named counter from p2s_note, for the summary (small fixed table). */
#define P2S_NOTE_KINDS 32
struct p2s_note_count {
    const char *kind; /* static string given to p2s_note */
    uint64_t n;
};

struct p2s_ctx {
    const char *tool; /* "pcap2spans" */
    struct p2s_limits lim;
    int ndjson, strict, quiet;
    const char *const *keylogs; /* --keylog files, kept for the TLS layer (later) */
    int nkeylogs;
    struct p2s_tcp *tcp;
    struct p2s_sink *sink; /* NULL: spans only go to span_hook (tests) */
    /* Where we are, for error messages: file, 1-based packet number, byte offset of
     * that packet's record in the file, and its capture time. */
    const char *file;
    uint64_t pkt_no, pkt_off;
    int64_t pkt_ts;
    int64_t source_id;
    int stop; /* --strict: an error was reported, stop reading */
    uint64_t errors_printed;
    struct sf_arena pkt; /* per-packet arena, reset after every packet */
    struct p2s_stats st;
    struct p2s_note_count notes[P2S_NOTE_KINDS];
    /* Test hook: when set, new connections get this parser without content detection. */
    const struct p2s_app_ops *force_ops;
    /* Test hook: when set, every span is passed here (and to the sink if there is one). */
    int (*span_hook)(void *arg, struct p2s_conn *conn, const struct p2s_span *span);
    void *span_hook_arg;
    /* TLS secrets (tls_keys.c): --keylog files and pcapng Decryption Secrets Blocks. */
    struct p2s_tls_keys *tls_keys;
    /* Freed trace-context sets kept for reuse (p2s_set_get/p2s_set_put, sink.c). */
    struct sf_tracectx_set *set_pool[P2S_SET_POOL];
    int set_pool_n;
};

/* Default caps (see --help). */
void p2s_limits_default(struct p2s_limits *lim);

/* Build a context with default limits, an empty flow table, no sink and no output.
 * Returns 0 or SF_E_NOMEM.  p2s_ctx_free closes every open connection (as "eof") and
 * frees everything. */
int p2s_ctx_init(struct p2s_ctx *ctx);
void p2s_ctx_free(struct p2s_ctx *ctx);

/* Report an error on the current packet: fills unit/packet/offset, prints it once via
 * sf_err_format (unless ctx->quiet, and at most 100 per run), counts it, and sets
 * ctx->stop under --strict. */
void p2s_report(struct p2s_ctx *ctx, struct sf_err *err);

/* ---- layers (one file each) ------------------------------------------------------- */

/* pcap.c: read one capture file ("-" = stdin) through libpcap into the layers below,
 * with its own sources row.  Returns 0, or SF_E_TRUNC / SF_E_MALFORMED (damaged capture:
 * what came before is kept), SF_E_IO (unreadable), SF_E_DB, SF_E_DUP (already ingested);
 * errors are reported before returning. */
int p2s_pcap_read(struct p2s_ctx *ctx, const char *path);

/* link.c: one captured frame of link type `dlt` (DLT_* / LINKTYPE_* value). */
void link_decode(struct p2s_ctx *ctx, int dlt, const uint8_t *p, size_t caplen, size_t len);
/* 1 if link_decode understands this link type. */
int link_supported(int dlt);

/* ip.c: one IPv4 or IPv6 packet (version from its first nibble); caplen may be less
 * than the IP length (snap length), which is counted as truncated. */
void ip_decode(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen);

/* tcp.c: one TCP segment. */
#define P2S_TH_FIN 0x01
#define P2S_TH_SYN 0x02
#define P2S_TH_RST 0x04
#define P2S_TH_ACK 0x10
struct p2s_seg {
    int64_t ts_ns;
    int family;               /* 4 or 6 */
    uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes */
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags; /* P2S_TH_* */
    const uint8_t *payload;
    size_t len;
};
void tcp_segment(struct p2s_ctx *ctx, const struct p2s_seg *seg);
/* 1 when direction dir of the connection holds bytes behind a hole (its parser waits
 * for them: a gap or the missing bytes come next). */
int p2s_conn_stalled(const struct p2s_conn *conn, enum p2s_dir dir);
/* Close one connection: give up remaining holes (gaps), close its parser, update its
 * row, free it.  why: "fin", "rst", "idle", "evicted", "eof", "new-syn". */
void tcp_close_conn(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *why);
/* Close every open connection ("eof" at the end of an input). */
void tcp_flush_all(struct p2s_ctx *ctx, const char *why);
/* Create / destroy the flow table. */
struct p2s_tcp *tcp_new(void);
void tcp_free(struct p2s_ctx *ctx, struct p2s_tcp *t);

/* A connection outside the flow table, for parser unit tests: a 127.0.0.1:40000 ->
 * 127.0.0.1:80 connection with no application parser (attach one with p2s_conn_switch).
 * tcp_conn_free_detached closes the parser attached at that time, then frees it. */
struct p2s_conn *tcp_conn_new_detached(struct p2s_ctx *ctx);
void tcp_conn_free_detached(struct p2s_conn *conn);

/* What the sink knows of a connection. */
struct p2s_conn_info {
    int64_t id; /* row id / sequence */
    int family;
    char client_addr[46], server_addr[46];
    uint16_t client_port, server_port;
    const char *app_proto; /* static: "http/1.1", "h2", "tls", "unknown" */
    int64_t first_ns, last_ns;
    uint64_t bytes[2]; /* TCP payload bytes per direction */
    uint64_t gaps, gap_bytes;
    const char *close;            /* "fin", "rst", "idle", "evicted", "eof", "new-syn" */
    const struct sf_net_tls *tls; /* TLS facts (tls.c owns them), NULL when not TLS */
};
const struct p2s_conn_info *p2s_conn_info(const struct p2s_conn *conn);
/* The open connection a segment belongs to (either direction), or NULL (tests). */
const struct p2s_conn_info *tcp_find(struct p2s_ctx *ctx, const struct p2s_seg *seg);

/* sink.c: output (database and/or NDJSON). */
struct p2s_sink_opts {
    const char *db_path; /* NULL: no database */
    int ndjson;          /* NDJSON spans to stdout */
    int wait;            /* --wait: wait for another process ingesting the same input */
};
int sink_open(struct p2s_ctx *ctx, const struct p2s_sink_opts *o, struct sf_err *err);
/* Start / end one input: sources row (sha256 may be NULL for stdin, then set at end). */
int sink_source_begin(struct p2s_ctx *ctx, const char *path, const char *sha256, uint64_t bytes,
                      struct sf_err *err);
int sink_source_end(struct p2s_ctx *ctx, const char *sha256, uint64_t bytes, const char *error,
                    struct sf_err *err);
/* 1 when a database is open (inputs then need their sha256). */
int sink_has_db(const struct p2s_ctx *ctx);
/* A connection was seen first / closed. */
void sink_conn_open(struct p2s_ctx *ctx, struct p2s_conn *conn);
void sink_conn_close(struct p2s_ctx *ctx, struct p2s_conn *conn);
/* Summary on stderr; close the database.  Returns 0 or SF_E_DB. */
void sink_summary(struct p2s_ctx *ctx, FILE *f);
int sink_close(struct p2s_ctx *ctx, struct sf_err *err);

/* ---- TLS layer (tls.c, tls_keys.c, tls_crypto.c) ---------------------------------- */

struct sf_net_tls;   /* lib/sf_db_net.h */
struct p2s_tls_keys; /* tls.h */
extern const struct p2s_app_ops p2s_tls_ops;
/* The connection's early-data flag: set by tls.c while it hands accepted 0-RTT
 * plaintext to the inner parser; h1.c and h2.c copy it into span.early_data when a
 * request starts. */
int p2s_conn_early_data(const struct p2s_conn *conn);
void p2s_conn_set_early_data(struct p2s_conn *conn, int on);
/* The connection's not-delivered flag: set by tls.c while a parser of its own reads the
 * 0-RTT plaintext the server rejected; every span emitted meanwhile gets delivered = 0
 * (and partial, with P2S_REJECTED_0RTT as the reason). */
#define P2S_REJECTED_0RTT "TLS 0-RTT data rejected by the server: never processed"
int p2s_conn_undelivered(const struct p2s_conn *conn);
void p2s_conn_set_undelivered(struct p2s_conn *conn, int on);
/* Attach the connection's TLS facts (owned by tls.c, NULL to detach) so that the
 * sink can add them to NDJSON spans; tls.c's close writes them to the database with
 * sink_conn_tls before it frees them. */
void p2s_conn_set_tls(struct p2s_conn *conn, const struct sf_net_tls *tls);
/* sink.c: write the TLS columns of a connection's row (database only). */
void sink_conn_tls(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct sf_net_tls *tls);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int pcap2spans_main(int argc, char **argv);

#endif

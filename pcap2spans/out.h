/* out.h - the writers: where spans go (the database through lib/sf_db_net.c, NDJSON on
 * stdout), and the records they write.  The bottom layer of pcap2spans: it knows
 * neither the run context nor the connections, only the facts handed to it.
 *
 * out.c opens both writers and dispatches; out_db.c writes rows, out_ndjson.c writes
 * one JSON object per span through lib/sf_json's fast path (sf_jb).
 */
#ifndef P2S_OUT_H
#define P2S_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_err.h"
#include "sf_tracectx.h"

struct sf_net_tls; /* lib/sf_db_net.h */
struct sf_net_rpc; /* lib/sf_db_net.h */
struct sf_db;

/* The TCP sequence numbers of a message's first byte and one past its last (mod
 * 2^32), for joining socket events (spantrace --sockets) to spans. */
struct p2s_seq_range {
    uint32_t start, end;
    int known; /* 0: unknown (TLS, a gap, the capture began inside the message) */
};

/* One HTTP exchange or gRPC call, as a parser hands it to the run context (ctx.h).
 * Strings are owned by the parser and only need to live until p2s_emit_span returns; a
 * NULL string is unknown.  Timestamps are capture time (CLOCK_REALTIME ns), 0 unknown. */
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
    int64_t rpc_messages;                   /* JSON-RPC messages its bodies carried (rpc.h) */
    const struct sf_net_rpc *rpc;           /* a JSON-RPC call's facts, else NULL */
};

/* What the writers know of a connection (tcp.c keeps it up to date). */
struct p2s_conn_info {
    int64_t id; /* row id / sequence */
    int family;
    char client_addr[46], server_addr[46];
    uint16_t client_port, server_port;
    const char *app_proto; /* static: "http/1.1", "h2", "tls", "unknown" */
    int64_t first_ns, last_ns;
    uint64_t bytes[2]; /* TCP payload bytes per direction */
    uint64_t gaps, gap_bytes;
    uint64_t spans;               /* spans emitted on it so far (p2s_emit_span) */
    const char *close;            /* "fin", "rst", "idle", "evicted", "eof", "new-syn" */
    const struct sf_net_tls *tls; /* TLS facts (tls.c owns them), NULL when not TLS */
};

struct p2s_out_opts {
    const char *db_path; /* NULL: no database */
    int ndjson;          /* NDJSON spans to stdout */
    int wait;            /* --wait: wait for another process ingesting the same input */
};

struct p2s_out; /* out.c */

/* Open the writers; returns 0 or a negative SF_E_* with err filled. */
int p2s_out_open(struct p2s_out **out, const struct p2s_out_opts *o, struct sf_err *err);
/* Flush NDJSON, close the database; returns 0 or SF_E_DB.  NULL is a no-op. */
int p2s_out_close(struct p2s_out *out, struct sf_err *err);
/* 1 when a database is open (inputs then need their sha256). */
int p2s_out_has_db(const struct p2s_out *out);
/* 1 after a database write failed (nothing more is written to it). */
int p2s_out_failed(const struct p2s_out *out);
/* Start one input (out NULL: nothing to write): its sources row (sha256 NULL for stdin, then given
 * at the end); returns 0, SF_E_DUP (already ingested: err says as which source) or SF_E_DB. */
int p2s_out_source_begin(struct p2s_out *out, const char *path, const char *sha256, uint64_t bytes,
                         struct sf_err *err);
/* End the input: NDJSON flushed, the sources row completed (error NULL: complete).  A
 * stdin copy of an input already ingested is dropped with a message naming `file`. */
int p2s_out_source_end(struct p2s_out *out, const char *tool, const char *file, const char *sha256,
                       uint64_t bytes, const char *error, uint64_t packets, struct sf_err *err);

/* The records.  Each returns 0 or SF_E_DB with err filled (the database failed: the
 * run stops); after a failure the database is not written again. */
int p2s_out_conn_open(struct p2s_out *out, struct p2s_conn_info *i, struct sf_err *err);
int p2s_out_conn_close(struct p2s_out *out, const struct p2s_conn_info *i, struct sf_err *err);
int p2s_out_conn_tls(struct p2s_out *out, int64_t conn_id, const struct sf_net_tls *tls,
                     struct sf_err *err);
int p2s_out_event(struct p2s_out *out, int64_t conn_id, int64_t ts_ns, const char *kind,
                  const char *detail, struct sf_err *err);
/* pref: the request's preferred context (sf_tracectx_set_preferred) or NULL. */
int p2s_out_span(struct p2s_out *out, const struct p2s_conn_info *i, const struct p2s_span *s,
                 const struct sf_tracectx *pref, struct sf_err *err);

/* ---- the two writers behind out.c ------------------------------------------------- */

/* out_ndjson.c: NDJSON on f (docs/pcap2spans.md). */
struct p2s_ndjson;
struct p2s_ndjson *p2s_ndjson_new(FILE *f);
void p2s_ndjson_flush(struct p2s_ndjson *nj);
void p2s_ndjson_free(struct p2s_ndjson *nj);
/* One span's line; returns the offset in the line of source_id's value. */
size_t p2s_ndjson_span(struct p2s_ndjson *nj, const struct p2s_conn_info *i,
                       const struct p2s_span *s, const struct sf_tracectx *pref, int64_t source_id);
/* -j workers format lines themselves, with their connection numbers and source 0, when the line
 * surely fits the buffer (p2s_ndjson_fits: nothing is flushed mid-line), take them out
 * of it (p2s_ndjson_take), and the writer copies them with the real ids
 * (p2s_ndjson_line; src_at as p2s_ndjson_span returned it). */
int p2s_ndjson_fits(const struct p2s_ndjson *nj, const struct p2s_conn_info *i,
                    const struct p2s_span *s);
void p2s_ndjson_take(struct p2s_ndjson *nj, const char **line, size_t *n);
void p2s_ndjson_line(struct p2s_ndjson *nj, int64_t conn_id, int64_t source_id, const char *line,
                     size_t n, size_t src_at);

/* out_db.c: rows of lib/schema.sql.  Each returns 0 or SF_E_DB. */
int p2s_db_conn(struct sf_db *db, int64_t source_id, const struct p2s_conn_info *i, int insert,
                int64_t *id, struct sf_err *err);
int p2s_db_span(struct sf_db *db, int64_t source_id, int64_t conn_id, const struct p2s_span *s,
                const struct sf_tracectx *pref, struct sf_err *err);

/* ---- parallel ingest (-j, par.c): a worker's records on a tape (out_tape.c) -------
 *
 * A worker thread reads one input with a writer made by p2s_out_tape: every record
 * (sources, connections, events, spans, and the input's stderr lines) is appended to
 * the tape, with strings copied and connections named by their number in the input.
 * Full chunks go to t->ship; the writer thread replays them in input order into the
 * real writer (p2s_replay_chunk), which gives the ids, so -j N writes what -j 1 does. */

struct p2s_chunk {
    struct p2s_chunk *next;
    size_t len, cap;
    unsigned char *b;
};

struct p2s_tape {
    int has_db; /* the real writer has a database: inputs are hashed */
    int lines;  /* NDJSON only: spans go as formatted lines (p2s_ndjson_line) */
    /* Takes a chunk of whole records (it frees it: p2s_chunk_free); may block. */
    void (*ship)(void *arg, struct p2s_chunk *c);
    void *arg;
    struct p2s_chunk *cur;
    int64_t conn_seq;
    int nomem; /* a chunk could not grow: the input fails (SF_E_NOMEM) */
};

/* A worker's line (p2s_ndjson_line) with the connection's id and the current source's. */
void p2s_out_line(struct p2s_out *out, int64_t conn_id, const char *line, size_t n, size_t src_at);
/* 1 when the writer writes NDJSON only (a tape for it may then take lines: t->lines). */
int p2s_out_lines(const struct p2s_out *out);
/* A writer that records onto t; p2s_out_close frees it (not t). */
int p2s_out_tape(struct p2s_out **out, struct p2s_tape *t);
/* Ship what is left; returns 0, or SF_E_NOMEM when records were lost. */
int p2s_tape_end(struct p2s_tape *t);
void p2s_chunk_free(struct p2s_chunk *c);

/* A stderr line of the input being read (capped: an error line, which the run prints
 * at most P2S_MAX_PRINTED_ERRORS of): returns 1 when it went onto the tape, 0 when the
 * caller prints it (a writer that is not a tape). */
int p2s_out_say(struct p2s_out *out, int capped, const char *line);

/* The records onto a tape (out.c calls them for a tape writer); 0 or SF_E_NOMEM. */
int p2s_tape_source_begin(struct p2s_tape *t, const char *path, const char *sha256, uint64_t bytes);
int p2s_tape_source_end(struct p2s_tape *t, const char *tool, const char *file, const char *sha256,
                        uint64_t bytes, const char *error, uint64_t packets);
int p2s_tape_conn(struct p2s_tape *t, int open, struct p2s_conn_info *i);
int p2s_tape_conn_tls(struct p2s_tape *t, int64_t conn_id, const struct sf_net_tls *tls);
int p2s_tape_event(struct p2s_tape *t, int64_t conn_id, int64_t ts_ns, const char *kind,
                   const char *detail);
int p2s_tape_span(struct p2s_tape *t, const struct p2s_conn_info *i, const struct p2s_span *s,
                  const struct sf_tracectx *pref);
int p2s_tape_say(struct p2s_tape *t, int capped, const char *line);
int p2s_tape_line(struct p2s_tape *t, int64_t conn_id, const char *line, size_t n, size_t src_at);

/* Replays one input's chunks into the real writer. */
struct p2s_replay {
    struct p2s_out *out; /* the real writer */
    const char *tool;
    int quiet;
    int rc;   /* 0, SF_E_DUP (already ingested: the rest is dropped), SF_E_DB */
    int skip; /* records are dropped (duplicate, database failure) */
    /* stderr lines, in input order */
    void (*say)(void *arg, int capped, const char *line);
    void *arg;
    int64_t *ids; /* connection number in the input -> id */
    size_t nids;
    struct sf_tracectx_set *sets[2]; /* a span's request and response contexts */
};
/* r zeroed but for out, tool, quiet, say, arg.  Returns 0 or SF_E_NOMEM. */
int p2s_replay_chunk(struct p2s_replay *r, const struct p2s_chunk *c);
void p2s_replay_free(struct p2s_replay *r);

#endif

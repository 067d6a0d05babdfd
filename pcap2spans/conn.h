/* conn.h - a TCP connection as the application parsers see it: the parser interface
 * (struct p2s_app_ops, which tcp.c drives) and the connection's facts.  tcp.c
 * implements it; parsers include this, never tcp.h, so that they sit below tcp.c.
 */
#ifndef P2S_CONN_H
#define P2S_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"
#include "sf_err.h"

struct p2s_ctx;  /* the run context (ctx.h) */
struct p2s_conn; /* one TCP connection (tcp.c) */

enum p2s_dir {
    P2S_C2S = 0, /* client to server (the side that sent SYN, or the first data when the
                    capture started mid-connection: see tcp.c) */
    P2S_S2C = 1,
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

/* Replace the connection's application parser (HTTP/1.1 "Upgrade: h2c" accepted
 * with 101).  The old parser's close is NOT called: it hands over its state
 * itself.  Returns the new state or NULL. */
void *p2s_conn_switch(struct p2s_conn *conn, const struct p2s_app_ops *ops);

/* Facts about a connection, for parsers and the run context. */
int64_t p2s_conn_id(const struct p2s_conn *conn); /* database row id (or sequence in NDJSON) */
struct p2s_ctx *p2s_conn_ctx(const struct p2s_conn *conn);
const struct p2s_conn_info *p2s_conn_info(const struct p2s_conn *conn);
void p2s_conn_count_span(struct p2s_conn *conn); /* p2s_emit_span: info.spans++ */
/* The TCP sequence number of p[0] of the data call in progress on conn (what the
 * parser's offset into p is added to).  Returns 0, or -1 when the bytes are not TCP's
 * (TLS plaintext) or no data call is in progress. */
int p2s_conn_data_seq(const struct p2s_conn *conn, uint32_t *seq);
/* Set the connection's app_proto ("http/1.1", "h2"); a static string. */
void p2s_conn_set_proto(struct p2s_conn *conn, const char *proto);
/* 1 when direction dir of the connection holds bytes behind a hole (its parser waits
 * for them: a gap or the missing bytes come next). */
int p2s_conn_stalled(const struct p2s_conn *conn, enum p2s_dir dir);

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
/* Attach the connection's TLS facts (owned by tls.c, NULL to detach) so that NDJSON
 * spans carry them; tls.c's close writes them to the database (p2s_conn_tls_done,
 * ctx.h) before it frees them. */
void p2s_conn_set_tls(struct p2s_conn *conn, const struct sf_net_tls *tls);

#endif

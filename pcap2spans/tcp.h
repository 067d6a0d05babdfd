/* tcp.h - TCP (tcp.c): the flow table, per-direction reassembly and content detection,
 * above the application parsers it drives through conn.h. */
#ifndef P2S_TCP_H
#define P2S_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "ctx.h"

#define P2S_TH_FIN 0x01
#define P2S_TH_SYN 0x02
#define P2S_TH_RST 0x04
#define P2S_TH_ACK 0x10

/* One TCP segment, as ip.c hands it over. */
struct p2s_seg {
    int64_t ts_ns;
    int family;               /* 4 or 6 */
    uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes */
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;   /* P2S_TH_* */
    uint16_t window; /* the advertised receive window, unscaled (0: zero window) */
    const uint8_t *payload;
    size_t len;
};
void tcp_segment(struct p2s_ctx *ctx, const struct p2s_seg *seg);
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

/* The open connection a segment belongs to (either direction), or NULL (tests). */
const struct p2s_conn_info *tcp_find(struct p2s_ctx *ctx, const struct p2s_seg *seg);

#endif

/* tcp.c - TCP connections: flow table, per-direction reassembly, protocol detection.
 *
 * Reference: RFC 9293 (TCP).  Header (after IP), as ip.c hands it over:
 *
 *    0                   1                   2                   3
 *   +-------------------------------+-------------------------------+
 *   |          Source Port          |       Destination Port        |
 *   +-------------------------------+-------------------------------+
 *   |                        Sequence Number                        |
 *   |                     Acknowledgment Number                     |
 *   | Off.  |  Rsrvd  |C|E|U|A|P|R|S|F|            Window           |
 *   |           Checksum            |         Urgent Pointer        |
 *   +-------------------------------+-------------------------------+
 *
 * One struct p2s_conn per connection, found by its 4-tuple in a hash table that
 * grows with the number of open flows (capped by p2s_limits.max_flows: the flow idle
 * longest is evicted).  Each direction keeps the next expected sequence number and the
 * out-of-order bytes after it (tcp_ooo.c; capped by max_ooo_bytes of sequence space
 * after the hole and max_ooo_segments pieces).  Sequence numbers are compared modulo
 * 2^32 ((int32_t)(a - b)), so wrap-around needs nothing special.
 *
 * Rules, as most stacks and Wireshark behave:
 *   - overlaps and retransmissions: the first copy of a byte wins (pieces are cut
 *     against what is already buffered or delivered);
 *   - a hole is given up ("gap": ops->gap, counted on the connection) as soon as it is
 *     proven lost to the capture: the peer acknowledged bytes past its start (they were
 *     delivered, so no retransmission will fill it), or the connection closes (FIN, RST,
 *     idle timeout, eviction) with the hole still open; and when an out-of-order cap
 *     is hit;
 *   - a SYN on a known 4-tuple whose connection saw FIN/RST, or with another ISN,
 *     closes the old connection and starts a new one (port reuse after TIME_WAIT);
 *   - a bare ACK/FIN/RST never creates a connection (late segments of a closed one);
 *   - captures that start mid-connection: the client is the side whose first bytes
 *     look like a request (HTTP/2 preface, HTTP/1 request line, TLS ClientHello) or
 *     the peer of a side whose first bytes look like an HTTP/1 status line; failing
 *     that, the side with the higher (ephemeral) port; failing that, the first sender;
 *   - a sequence jump of more than 256 MiB (a capture that lost the SYN of a reused
 *     tuple) restarts the direction there, counted as a gap of unknown size (0).
 *
 * Protocol detection is by content on the first bytes, never by port (the probes are
 * detect.c's table): up to 64 bytes per direction are held until the C2S side decides
 * (or the S2C side shows an HTTP/1 status line), then replayed into the parser.
 * Without a preface, C2S bytes that parse as a chain of plausible client HTTP/2
 * frames also select HTTP/2: a capture that started mid-connection.
 */
#include "tcp.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "ctx.h"
#include "detect.h"
#include "h1.h"
#include "h2.h"
#include "sf_map.h"
#include "sf_rd.h"
#include "tcp_ooo.h"
#include "tls.h"

#define DET_MAX      64
#define SEQ_JUMP     (1u << 28)
#define OOO_SPAN_MAX (64u << 20) /* sequence space after a hole, whatever --max-ooo-bytes */

struct tcp_half {
    uint32_t next_seq; /* next byte expected (valid once started) */
    uint32_t isn;
    uint32_t fin_seq; /* sequence number of the FIN (end of data) */
    uint8_t started, syn, fin, done;
    /* A direction seen from its middle starts at its first data, but a 1-byte segment
     * first may be a keep-alive probe (a byte at SND.NXT - 1, already acknowledged): it
     * is held until the next data shows whether it follows it (probe) or repeats it. */
    uint8_t probe, probe_byte;
    uint32_t probe_seq;
    int64_t probe_ts;
    int64_t data_ts;      /* the latest data segment of this direction (0: none yet) */
    int64_t zw_since;     /* this side advertised a zero window then (0: it does not) */
    uint8_t win_open;     /* it advertised a non-zero window before (a stall can start) */
    struct tcp_ooo ooo;   /* bytes after a hole */
    uint8_t det[DET_MAX]; /* bytes held until the protocol is known */
    size_t det_len;
    int64_t det_ts;
};

struct p2s_conn {
    struct p2s_ctx *ctx;
    struct p2s_conn *lru_prev, *lru_next; /* oldest activity first */
    uint64_t hash;
    uint8_t caddr[16], saddr[16];
    uint16_t cport, sport;
    struct tcp_half h[2];
    const struct p2s_app_ops *ops;
    void *st;
    int decided;       /* protocol detection finished (ops may still be NULL) */
    int early;         /* tls.c is handing accepted 0-RTT plaintext to the inner parser */
    int undelivered;   /* tls.c is parsing 0-RTT plaintext the server rejected */
    uint32_t data_seq; /* TCP sequence number of the first byte of the current data call */
    int64_t last_ts;
    unsigned syns;  /* SYNs from the client (retransmissions included) */
    int64_t syn_ts; /* the client's first SYN (0: not seen) */
    int hs_noted;   /* the three-way handshake's time was noted */
    int rst_server; /* the connection ended with a RST from the server */
    struct p2s_conn_info info;
};

struct p2s_tcp {
    struct sf_map map; /* seg_hash -> struct p2s_conn */
    struct p2s_conn *lru_head, *lru_tail;
};

/* ---- flow table -------------------------------------------------------------------- */

static uint64_t ep_hash(const uint8_t *a, uint16_t port)
{
    uint64_t x, y;

    memcpy(&x, a, 8);
    memcpy(&y, a + 8, 8);
    x ^= y * 0x9e3779b97f4a7c15ULL ^ port;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return x;
}

/* Symmetric: both directions of a connection hash alike. */
static uint64_t seg_hash(const struct p2s_seg *s)
{
    return ep_hash(s->src, s->sport) + ep_hash(s->dst, s->dport);
}

struct p2s_tcp *tcp_new(void)
{
    struct p2s_tcp *t = calloc(1, sizeof(*t));

    if (t == NULL || sf_map_reserve(&t->map, 1) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

/* The direction segment s goes in connection c, or -1 when it is not c's. */
static inline int conn_dir(const struct p2s_conn *c, const struct p2s_seg *s)
{
    if (c->cport == s->sport && c->sport == s->dport && !memcmp(c->caddr, s->src, 16) &&
        !memcmp(c->saddr, s->dst, 16))
        return P2S_C2S;
    if (c->cport == s->dport && c->sport == s->sport && !memcmp(c->caddr, s->dst, 16) &&
        !memcmp(c->saddr, s->src, 16))
        return P2S_S2C;
    return -1;
}

static int same_conn(const void *val, const void *key)
{
    return val == key;
}

static struct p2s_conn *lookup(struct p2s_tcp *t, const struct p2s_seg *s, uint64_t h,
                               enum p2s_dir *dir)
{
    struct sf_map_slot *slot;
    int d;

    SF_MAP_RUN(&t->map, h, slot)
    {
        if (slot->hash == h && (d = conn_dir(slot->val, s)) >= 0) {
            *dir = (enum p2s_dir)d;
            return slot->val;
        }
    }
    return NULL;
}

static void lru_unlink(struct p2s_tcp *t, struct p2s_conn *c)
{
    if (c->lru_prev)
        c->lru_prev->lru_next = c->lru_next;
    else
        t->lru_head = c->lru_next;
    if (c->lru_next)
        c->lru_next->lru_prev = c->lru_prev;
    else
        t->lru_tail = c->lru_prev;
    c->lru_prev = c->lru_next = NULL;
}

static void lru_append(struct p2s_tcp *t, struct p2s_conn *c)
{
    c->lru_prev = t->lru_tail;
    c->lru_next = NULL;
    if (t->lru_tail)
        t->lru_tail->lru_next = c;
    else
        t->lru_head = c;
    t->lru_tail = c;
}

static void table_unlink(struct p2s_tcp *t, struct p2s_conn *c)
{
    struct sf_map_slot *slot = sf_map_probe(&t->map, c->hash, same_conn, c);

    if (slot->val == c)
        sf_map_remove(&t->map, slot);
    lru_unlink(t, c);
}

/* ---- accessors (conn.h) ------------------------------------------------------------ */

int64_t p2s_conn_id(const struct p2s_conn *conn)
{
    return conn->info.id;
}

int p2s_conn_data_seq(const struct p2s_conn *conn, uint32_t *seq)
{
    /* inside TLS the parser sees plaintext, whose offsets are not TCP's */
    if (conn->ops == NULL || conn->ops == &p2s_tls_ops || conn->info.tls != NULL)
        return -1;
    *seq = conn->data_seq;
    return 0;
}

struct p2s_ctx *p2s_conn_ctx(const struct p2s_conn *conn)
{
    return conn->ctx;
}

const struct p2s_conn_info *p2s_conn_info(const struct p2s_conn *conn)
{
    return &conn->info;
}

void p2s_conn_count_span(struct p2s_conn *conn)
{
    conn->info.spans++;
}

void p2s_conn_set_proto(struct p2s_conn *conn, const char *proto)
{
    conn->info.app_proto = proto;
}

int p2s_conn_early_data(const struct p2s_conn *conn)
{
    return conn->early;
}

void p2s_conn_set_early_data(struct p2s_conn *conn, int on)
{
    conn->early = on;
}

int p2s_conn_undelivered(const struct p2s_conn *conn)
{
    return conn->undelivered;
}

void p2s_conn_set_undelivered(struct p2s_conn *conn, int on)
{
    conn->undelivered = on;
}

void p2s_conn_set_tls(struct p2s_conn *conn, const struct sf_net_tls *tls)
{
    conn->info.tls = tls;
}

void *p2s_conn_switch(struct p2s_conn *conn, const struct p2s_app_ops *ops)
{
    conn->ops = ops;
    conn->st = ops->open(conn->ctx, conn);
    if (conn->st == NULL)
        conn->ops = NULL;
    else
        p2s_conn_set_proto(conn, ops->name);
    conn->decided = 1;
    return conn->st;
}

/* ---- delivery to the application parser -------------------------------------------- */

/* p[0..n) are the in-order bytes of dir that start at sequence number seq. */
static void call_data(struct p2s_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n,
                      uint32_t seq, int64_t ts)
{
    struct sf_err err;
    int rc;

    if (n == 0 || c->ops == NULL)
        return;
    c->data_seq = seq;
    sf_err_clear(&err);
    rc = c->ops->data(c->st, dir, p, n, ts, &err);
    if (rc < 0) {
        if (err.code == SF_OK)
            err.code = rc;
        if (err.proto == NULL)
            err.proto = c->ops ? c->ops->name : "tcp";
        p2s_report(c->ctx, &err);
    }
}

/* Decide from the held bytes: an ops table, or NULL with *proto set ("tls",
 * "unknown"), or NULL with *proto NULL while more bytes are needed.  A pending
 * preface blocks the request-line test ("PRI " looks like a method). */
static const struct p2s_app_ops *const app_ops[] = {
    [DET_APP_H1] = &p2s_h1_ops, [DET_APP_H2] = &p2s_h2_ops, [DET_APP_TLS] = &p2s_tls_ops};

static const struct p2s_app_ops *detect(struct p2s_conn *c, const char **proto)
{
    const struct tcp_half *q = &c->h[P2S_C2S], *r = &c->h[P2S_S2C];
    const struct det_probe *hit;
    int v;

    *proto = NULL;
    if (q->det_len) {
        v = det_first(DET_CLIENT, q->det, q->det_len, q->det_len == DET_MAX, &hit);
        if (v != DET_NO)
            return v == DET_YES ? app_ops[hit->app] : NULL;
    }
    if (r->det_len) {
        v = det_first(DET_BIT(DET_H1_STATUS), r->det, r->det_len, r->det_len == DET_MAX, &hit);
        if (v != DET_NO)
            return v == DET_YES ? app_ops[hit->app] : NULL;
    }
    if (q->det_len == DET_MAX || r->det_len == DET_MAX || (q->det_len && r->det_len))
        *proto = "unknown";
    return NULL;
}

static void deliver(struct p2s_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts)
{
    struct tcp_half *h = &c->h[dir];
    const struct p2s_app_ops *ops;
    const char *proto;
    size_t old, take;
    int d;

    /* next_seq has already moved past these n bytes */
    uint32_t seq = h->next_seq - (uint32_t)n;

    c->info.bytes[dir] += n;
    if (c->decided) {
        call_data(c, dir, p, n, seq, ts);
        return;
    }
    old = h->det_len;
    take = n < DET_MAX - old ? n : DET_MAX - old;
    if (old == 0)
        h->det_ts = ts;
    memcpy(h->det + old, p, take);
    h->det_len += take;
    ops = detect(c, &proto);
    if (ops == NULL && proto == NULL)
        return; /* undecided: everything so far is held (take == n) */
    c->decided = 1;
    if (ops == NULL) {
        p2s_conn_set_proto(c, proto);
        c->h[0].det_len = c->h[1].det_len = 0;
        return;
    }
    p2s_conn_switch(c, ops);
    h->det_len = old; /* the current segment is replayed whole below */
    for (d = 0; d < 2; d++) {
        struct tcp_half *x = &c->h[d];
        /* the held bytes end where this segment starts (dir) or at next_seq (the other) */
        uint32_t end = (enum p2s_dir)d == dir ? seq : x->next_seq;
        if (x->det_len)
            call_data(c, (enum p2s_dir)d, x->det, x->det_len, end - (uint32_t)x->det_len,
                      x->det_ts);
        x->det_len = 0;
    }
    call_data(c, dir, p, n, seq, ts);
}

static void gap(struct p2s_conn *c, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct p2s_ctx *ctx = c->ctx;
    char detail[64];

    c->info.gaps++;
    c->info.gap_bytes += len;
    ctx->st.gaps++;
    ctx->st.gap_bytes += len;
    snprintf(detail, sizeof(detail), "%s %llu bytes", dir == P2S_C2S ? "c2s" : "s2c",
             (unsigned long long)len);
    p2s_note(ctx, c, "gap", detail, ts);
    if (!c->decided)
        c->h[dir].det_len = 0; /* detection starts again after the hole */
    else if (c->ops)
        c->ops->gap(c->st, dir, len, ts);
}

/* ---- reassembly ------------------------------------------------------------------- */

static void check_fin(struct tcp_half *h)
{
    if (h->fin && !h->done && h->next_seq == h->fin_seq) {
        h->done = 1;
        h->next_seq++;
    }
}

/* Deliver held bytes that have become in order. */
static void drain(struct p2s_conn *c, enum p2s_dir dir)
{
    struct tcp_half *h = &c->h[dir];
    const uint8_t *p;
    size_t n;
    int64_t ts;

    while ((p = tcp_ooo_take(&h->ooo, h->next_seq, &n, &ts)) != NULL) {
        h->next_seq += (uint32_t)n;
        deliver(c, dir, p, n, ts);
    }
}

/* Give up the hole before the first held byte. */
static void skip_hole(struct p2s_conn *c, enum p2s_dir dir)
{
    struct tcp_half *h = &c->h[dir];
    int64_t ts = c->last_ts;
    uint32_t first = tcp_ooo_first(&h->ooo, h->next_seq, &ts);

    if (first != h->next_seq)
        gap(c, dir, first - h->next_seq, ts);
    h->next_seq = first;
    drain(c, dir);
}

/* The peer acknowledged this direction up to ack: bytes before it reached the peer, so
 * a hole there is never filled by a retransmission.  It becomes a gap now, up to ack
 * or the first held byte, instead of when the out-of-order cap fills (a lost first
 * response otherwise stalls every later one behind it).  A hole the capture may still
 * fill (after ack) waits; the FIN's sequence number is not data. */
static void ack_proves(struct p2s_conn *c, enum p2s_dir dir, uint32_t ack, int64_t ts)
{
    struct tcp_half *h = &c->h[dir];
    uint32_t to = ack;
    int32_t rel = (int32_t)(ack - h->next_seq);

    if (!h->started || h->done || rel <= 0 || rel > (int32_t)SEQ_JUMP)
        return;
    if (h->fin && (int32_t)(to - h->fin_seq) > 0)
        to = h->fin_seq;
    if (h->ooo.bytes) {
        int64_t fts;
        uint32_t first = tcp_ooo_first(&h->ooo, h->next_seq, &fts);
        if ((int32_t)(first - to) < 0)
            to = first;
    }
    if ((int32_t)(to - h->next_seq) <= 0)
        return;
    gap(c, dir, to - h->next_seq, ts);
    h->next_seq = to;
    drain(c, dir);
    check_fin(h);
}

/* A segment that repeats bytes already seen, or that fills a hole the bytes after it
 * waited behind: a retransmission (or, for a hole, a late segment).  Its stall is what
 * the stream waited for it: since the first byte held behind the hole, or since the
 * previous data segment of the direction.  connection_events: kind "retransmit", detail
 * "stall_ns=S bytes=N request|response repeated|filled-hole" (spanfold report reads the
 * stall). */
static void retransmit(struct p2s_conn *c, enum p2s_dir dir, size_t n, int64_t ts, int64_t since,
                       int hole)
{
    char detail[96];
    int64_t stall = since > 0 && ts > since ? ts - since : 0;

    snprintf(detail, sizeof(detail), "stall_ns=%lld bytes=%zu %s %s", (long long)stall, n,
             dir == P2S_C2S ? "request" : "response", hole ? "filled-hole" : "repeated");
    p2s_note(c->ctx, c, "retransmit", detail, ts);
}

/* The three-way handshake's time: from the client's first SYN to its ACK of the server's
 * SYN-ACK.  connection_events: kind "tcp_handshake_done", detail "ns=N". */
static void handshake_done(struct p2s_conn *c, int64_t ts)
{
    char detail[48];

    c->hs_noted = 1;
    snprintf(detail, sizeof(detail), "ns=%lld", (long long)(ts > c->syn_ts ? ts - c->syn_ts : 0));
    p2s_note(c->ctx, c, "tcp_handshake_done", detail, ts);
}

/* The receive window this side advertises: a zero window after an open one is a stall
 * of the other side's sending until it opens again.  connection_events: kind
 * "zero_window", detail "stall_ns=S request|response" (the direction that waited; spanfold
 * report reads the stall).  A side never seen with an open window (a capture from the
 * middle, a test's zeroed header) starts nothing. */
static void window(struct p2s_conn *c, enum p2s_dir dir, const struct p2s_seg *s)
{
    struct tcp_half *h = &c->h[dir];
    char detail[64];

    if (s->flags & (P2S_TH_SYN | P2S_TH_RST))
        return;
    if (s->window == 0) {
        if (h->win_open && h->zw_since == 0)
            h->zw_since = s->ts_ns;
        return;
    }
    if (h->zw_since) {
        snprintf(detail, sizeof(detail), "stall_ns=%lld %s",
                 (long long)(s->ts_ns > h->zw_since ? s->ts_ns - h->zw_since : 0),
                 dir == P2S_C2S ? "response" : "request");
        p2s_note(c->ctx, c, "zero_window", detail, s->ts_ns);
        h->zw_since = 0;
    }
    h->win_open = 1;
}

static void tcp_data(struct p2s_conn *c, enum p2s_dir dir, uint32_t seq, const uint8_t *p, size_t n,
                     int64_t ts)
{
    struct tcp_half *h = &c->h[dir];
    const struct p2s_limits *lim = &c->ctx->lim;
    size_t span = lim->max_ooo_bytes < OOO_SPAN_MAX ? lim->max_ooo_bytes : OOO_SPAN_MAX;
    int64_t prev = h->data_ts;

    h->data_ts = ts;

    for (;;) {
        int32_t rel = (int32_t)(seq - h->next_seq);
        if (rel > (int32_t)SEQ_JUMP || rel < -(int32_t)SEQ_JUMP) {
            /* Not this byte stream any more (lost SYN of a reused tuple, or garbage):
             * drop what is buffered and restart here. */
            while (h->ooo.bytes)
                skip_hole(c, dir);
            gap(c, dir, 0, ts);
            h->next_seq = seq;
            continue;
        }
        if (rel <= 0) {
            size_t skip = (size_t)(-(int64_t)rel);
            if (skip >= n) { /* retransmission of delivered bytes (not a keep-alive probe) */
                if (!(n == 1 && rel == -1))
                    retransmit(c, dir, n, ts, prev, 0);
                return;
            }
            if (h->ooo.bytes) { /* it fills the hole the held bytes wait behind */
                int64_t held = ts;
                tcp_ooo_first(&h->ooo, h->next_seq, &held);
                retransmit(c, dir, n - skip, ts, held, 1);
            } else if (skip) {
                retransmit(c, dir, n, ts, prev, 0);
            }
            h->next_seq += (uint32_t)(n - skip);
            deliver(c, dir, p + skip, n - skip, ts);
            drain(c, dir);
            return;
        }
        if ((uint64_t)rel + n <= span && h->ooo.pieces < lim->max_ooo_segments) {
            tcp_ooo_add(&h->ooo, h->next_seq, seq, p, n, ts, span); /* no memory: a gap later */
            return;
        }
        if (h->ooo.bytes) {
            skip_hole(c, dir);
            continue;
        }
        gap(c, dir, (uint32_t)rel, ts); /* a single segment beyond the window */
        h->next_seq = seq;
    }
}

int p2s_conn_stalled(const struct p2s_conn *conn, enum p2s_dir dir)
{
    return conn->h[dir].ooo.bytes > 0;
}

/* ---- connections -------------------------------------------------------------------- */

static void addr_text(char *out, size_t outsz, int family, const uint8_t *a)
{
    if (inet_ntop(family == 6 ? AF_INET6 : AF_INET, a, out, (socklen_t)outsz) == NULL)
        snprintf(out, outsz, "?");
}

/* Which side of a first segment carrying data is the client (see the file comment). */
static int src_is_client(const struct p2s_seg *s)
{
    const struct det_probe *hit;

    if (s->flags & P2S_TH_SYN)
        return !(s->flags & P2S_TH_ACK);
    if (s->len) {
        if (det_first(DET_BIT(DET_H2_PREFACE) | DET_BIT(DET_H1_REQUEST) | DET_BIT(DET_TLS_HELLO),
                      s->payload, s->len, 1, &hit) == DET_YES)
            return 1;
        if (det_look(DET_H1_STATUS, s->payload, s->len, 1) == DET_YES)
            return 0;
    }
    if (s->sport != s->dport)
        return s->sport > s->dport;
    return 1;
}

static struct p2s_conn *conn_new(struct p2s_ctx *ctx, const struct p2s_seg *s, uint64_t hash)
{
    struct p2s_tcp *t = ctx->tcp;
    struct p2s_conn *c;
    int cl = src_is_client(s);

    while (t->map.n >= ctx->lim.max_flows && t->lru_head) {
        ctx->st.flows_evicted++;
        tcp_close_conn(ctx, t->lru_head, "evicted");
    }
    if (sf_map_reserve(&t->map, 1) < 0 || (c = calloc(1, sizeof(*c))) == NULL)
        return NULL;
    c->ctx = ctx;
    c->hash = hash;
    memcpy(c->caddr, cl ? s->src : s->dst, 16);
    memcpy(c->saddr, cl ? s->dst : s->src, 16);
    c->cport = cl ? s->sport : s->dport;
    c->sport = cl ? s->dport : s->sport;
    c->info.family = s->family;
    addr_text(c->info.client_addr, sizeof(c->info.client_addr), s->family, c->caddr);
    addr_text(c->info.server_addr, sizeof(c->info.server_addr), s->family, c->saddr);
    c->info.client_port = c->cport;
    c->info.server_port = c->sport;
    c->info.app_proto = "unknown";
    c->info.first_ns = c->info.last_ns = s->ts_ns;
    c->last_ts = s->ts_ns;
    sf_map_fill(&t->map, sf_map_probe(&t->map, hash, same_conn, c), hash, c);
    lru_append(t, c);
    ctx->st.connections++;
    p2s_conn_opened(ctx, c);
    if (ctx->force_ops)
        p2s_conn_switch(c, ctx->force_ops);
    return c;
}

/* A connection the server refused (RST to the SYN) or never answered (the client sent its
 * SYN again and no SYN-ACK came) is a failed span of its own, endpoint "tcp:ADDR:PORT",
 * as tls.c does for a failed handshake.  One SYN and the capture's end is no claim. */
static void handshake_failed(struct p2s_ctx *ctx, struct p2s_conn *c, int64_t ts)
{
    const struct p2s_conn_info *i = &c->info;
    char where[64];

    if (!c->h[P2S_C2S].syn || c->h[P2S_S2C].syn || i->bytes[0] || i->bytes[1] || i->spans ||
        !(c->rst_server || c->syns >= 2))
        return;
    snprintf(where, sizeof(where), i->family == 6 ? "[%s]:%u" : "%s:%u", i->server_addr,
             (unsigned)i->server_port);
    p2s_emit_failed_handshake(ctx, c, "tcp", where, NULL, ts,
                              c->rst_server
                                  ? "handshake failed: connection refused (RST from the server)"
                                  : "handshake failed: no SYN-ACK (the server never answered)");
}

void tcp_close_conn(struct p2s_ctx *ctx, struct p2s_conn *c, const char *why)
{
    int d;

    for (d = 0; d < 2; d++) {
        struct tcp_half *h = &c->h[d];
        while (h->ooo.bytes)
            skip_hole(c, (enum p2s_dir)d);
        tcp_ooo_free(&h->ooo);
        if (h->fin && !h->done && (int32_t)(h->fin_seq - h->next_seq) > 0)
            gap(c, (enum p2s_dir)d, h->fin_seq - h->next_seq, c->last_ts);
    }
    if (c->ops)
        c->ops->close(c->st, c->last_ts);
    c->ops = NULL;
    c->st = NULL;
    handshake_failed(ctx, c, c->last_ts);
    c->info.close = why;
    p2s_conn_closed(ctx, c);
    table_unlink(ctx->tcp, c);
    free(c);
}

static void expire_idle(struct p2s_ctx *ctx, int64_t now)
{
    struct p2s_tcp *t = ctx->tcp;

    while (t->lru_head && now - t->lru_head->last_ts > ctx->lim.idle_timeout_ns)
        tcp_close_conn(ctx, t->lru_head, "idle");
}

/* A direction whose SYN the capture missed starts at its first data or FIN (a bare ACK
 * may be a zero-length keep-alive or zero-window probe at SND.NXT - 1).  A first segment
 * of one byte may be a keep-alive probe (RFC 9293 3.8.4: SND.NXT - 1, one garbage
 * byte): it is held; data at its sequence + 1 proves it a probe and it is dropped, data
 * at its own sequence makes it stream data.  Returns 1 when the direction has started
 * and the segment is to be processed, 0 when it was held or carries nothing. */
static int start_mid(struct p2s_conn *c, enum p2s_dir dir, const struct p2s_seg *s, uint32_t dseq)
{
    struct tcp_half *h = &c->h[dir];

    if (!(s->flags & P2S_TH_FIN) &&
        (s->len == 0 || (s->len == 1 && !h->probe) || (s->len == 1 && dseq == h->probe_seq))) {
        if (s->len == 1) {
            struct sf_rd rd;

            sf_rd_init(&rd, s->payload, s->len, 0);
            h->probe = 1;
            h->probe_seq = dseq;
            h->probe_byte = sf_rd_u8(&rd);
            h->probe_ts = s->ts_ns;
        }
        return 0;
    }
    h->started = 1;
    h->next_seq = dseq;
    if (h->probe) {
        h->probe = 0;
        if (dseq == h->probe_seq + 1) {
            p2s_note(c->ctx, c, "tcp_keepalive",
                     dir == P2S_C2S ? "1-byte probe from the client dropped"
                                    : "1-byte probe from the server dropped",
                     h->probe_ts);
        } else {
            h->next_seq = h->probe_seq;
            tcp_data(c, dir, h->probe_seq, &h->probe_byte, 1, h->probe_ts);
        }
    }
    return 1;
}

/* A SYN from the client on a known tuple: the same connection (retransmitted SYN) or
 * a new one (port reuse). */
static int is_new_syn(const struct p2s_conn *c, enum p2s_dir dir, const struct p2s_seg *s)
{
    const struct tcp_half *h = &c->h[dir];

    if (!(s->flags & P2S_TH_SYN) || (s->flags & P2S_TH_ACK))
        return 0;
    if (c->h[0].fin || c->h[1].fin || dir != P2S_C2S)
        return 1;
    return !h->syn || h->isn != s->seq;
}

void tcp_segment(struct p2s_ctx *ctx, const struct p2s_seg *s)
{
    uint64_t hash = seg_hash(s);
    enum p2s_dir dir = P2S_C2S;
    struct p2s_conn *c;
    struct tcp_half *h;
    uint32_t dseq;

    ctx->st.tcp_segments++;
    ctx->st.tcp_payload += s->len;
    expire_idle(ctx, s->ts_ns);
    c = lookup(ctx->tcp, s, hash, &dir);
    if (c && is_new_syn(c, dir, s)) {
        tcp_close_conn(ctx, c, c->h[0].fin || c->h[1].fin ? "fin" : "new-syn");
        c = NULL;
    }
    if (c == NULL) {
        if (!(s->flags & P2S_TH_SYN) && s->len == 0)
            return;
        if (s->flags & P2S_TH_RST)
            return;
        if ((c = conn_new(ctx, s, hash)) == NULL)
            return;
        dir = (enum p2s_dir)conn_dir(c, s);
    }
    if (s->ts_ns > c->last_ts) {
        c->last_ts = s->ts_ns;
        c->info.last_ns = s->ts_ns;
    }
    if (ctx->tcp->lru_tail != c) { /* most segments follow one of the same connection */
        lru_unlink(ctx->tcp, c);
        lru_append(ctx->tcp, c);
    }
    h = &c->h[dir];
    dseq = s->seq;
    if (s->flags & P2S_TH_SYN) {
        dseq = s->seq + 1;
        c->syns += dir == P2S_C2S && !(s->flags & P2S_TH_ACK);
        if (dir == P2S_C2S && !(s->flags & P2S_TH_ACK) && c->syn_ts == 0)
            c->syn_ts = s->ts_ns;
        if (!h->syn || !h->started) {
            h->syn = 1;
            h->isn = s->seq;
            h->next_seq = dseq;
            h->started = 1;
        }
    }
    if (s->flags & P2S_TH_RST) {
        p2s_note(ctx, c, "rst", dir == P2S_C2S ? "from client" : "from server", s->ts_ns);
        c->rst_server = dir == P2S_S2C;
        tcp_close_conn(ctx, c, "rst");
        return;
    }
    if (s->flags & P2S_TH_ACK) /* before this segment's data: a gap it proves comes first */
        ack_proves(c, (enum p2s_dir) !dir, s->ack, s->ts_ns);
    window(c, dir, s);
    if (dir == P2S_C2S && !c->hs_noted && c->syn_ts && c->h[P2S_S2C].syn &&
        !(s->flags & P2S_TH_SYN) && (s->flags & P2S_TH_ACK))
        handshake_done(c, s->ts_ns);
    if (!h->started && !start_mid(c, dir, s, dseq))
        return;
    if (s->len)
        tcp_data(c, dir, dseq, s->payload, s->len, s->ts_ns);
    if ((s->flags & P2S_TH_FIN) && !h->fin) {
        h->fin = 1;
        h->fin_seq = dseq + (uint32_t)s->len;
    }
    check_fin(h);
    if (c->h[0].done && c->h[1].done)
        tcp_close_conn(ctx, c, "fin");
}

const struct p2s_conn_info *tcp_find(struct p2s_ctx *ctx, const struct p2s_seg *seg)
{
    enum p2s_dir dir;
    struct p2s_conn *c = lookup(ctx->tcp, seg, seg_hash(seg), &dir);

    return c ? &c->info : NULL;
}

void tcp_flush_all(struct p2s_ctx *ctx, const char *why)
{
    struct p2s_tcp *t = ctx->tcp;

    while (t && t->lru_head)
        tcp_close_conn(ctx, t->lru_head, why);
}

void tcp_free(struct p2s_ctx *ctx, struct p2s_tcp *t)
{
    if (t == NULL)
        return;
    if (ctx->tcp == t)
        tcp_flush_all(ctx, "eof");
    sf_map_free(&t->map);
    free(t);
}

struct p2s_conn *tcp_conn_new_detached(struct p2s_ctx *ctx)
{
    struct p2s_conn *c = calloc(1, sizeof(*c));
    static const uint8_t lo[4] = {127, 0, 0, 1};

    if (c == NULL)
        return NULL;
    c->ctx = ctx;
    memcpy(c->caddr, lo, 4);
    memcpy(c->saddr, lo, 4);
    c->cport = 40000;
    c->sport = 80;
    c->info.family = 4;
    snprintf(c->info.client_addr, sizeof(c->info.client_addr), "127.0.0.1");
    snprintf(c->info.server_addr, sizeof(c->info.server_addr), "127.0.0.1");
    c->info.client_port = 40000;
    c->info.server_port = 80;
    c->info.app_proto = "unknown";
    c->decided = 1;
    return c;
}

void tcp_conn_free_detached(struct p2s_conn *conn)
{
    if (conn->ops)
        conn->ops->close(conn->st, conn->last_ts);
    free(conn);
}

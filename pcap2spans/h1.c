/* h1.c - HTTP/1.1 exchanges (RFC 9112 message syntax, RFC 9110 semantics).
 *
 *   request   = method SP request-target SP "HTTP/1." DIGIT CRLF
 *               *( field-name ":" OWS field-value OWS CRLF ) CRLF [ body ]
 *   response  = "HTTP/1." DIGIT SP 3DIGIT SP [ reason ] CRLF *( field CRLF ) CRLF [ body ]
 *   body      = Content-Length bytes | chunked: *( hex-size [;ext] CRLF data CRLF )
 *               "0" CRLF *( trailer CRLF ) CRLF | (responses only) until the connection closes
 *
 * Requests are queued in order (keep-alive and pipelining) and each response answers the
 * oldest request that has none yet; after a gap in the responses, the newest request sent
 * before it unless the connection pipelines (answered_after_gap).  A span is emitted
 * when both the request and its response are complete, in request order.  No body: HEAD
 * responses, 1xx, 204, 304.
 * 1xx other than 101 are interim and skipped.  101 to a request with "Upgrade: h2c" hands
 * the connection to the HTTP/2 parser (request = stream 1); other 101s and 2xx to CONNECT
 * turn the connection into an opaque tunnel.
 *
 * Recovery: after a gap or garbage the direction resynchronises at the next line that
 * starts like a request line (C2S) or a status line (S2C); one error is reported per
 * episode.  A header section over max_header_bytes is reported and skipped the same way.
 * Every header is offered to an sf_tracectx_set (allocated on the first context header).
 * A header section itself (where it ends, its start line, its fields' facts) is read by
 * h1_head.c.
 */
#include "h1.h"

#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "ctx.h"
#include "detect.h"
#include "h1_head.h"
#include "h2.h"
#include "rpc.h"
#include "sf_buf.h"
#include "sf_hex.h"
#include "ws.h"

#define MAX_PENDING    64
#define MAX_STALLED    1024 /* requests kept while the responses wait behind a hole */
#define MAX_CHUNK_LINE 1024

enum h1_state {
    S_START,   /* between messages (skips blank lines) */
    S_HEAD,    /* start line and fields */
    S_BODY_CL, /* Content-Length bytes */
    S_CHUNK_SIZE,
    S_CHUNK_DATA,
    S_CHUNK_CRLF,
    S_TRAILERS,
    S_BODY_CLOSE, /* response body until the connection closes */
    S_RESYNC,     /* looking for the next message start */
    S_TUNNEL,     /* opaque bytes (CONNECT, WebSocket) */
};

/* One exchange: the request, then what is known of its response. */
struct h1_req {
    struct h1_req *next;
    int64_t no;
    char *method, *authority, *path; /* in the same allocation */
    int64_t req_start, req_end, req_body;
    struct p2s_seq_range req_seq, resp_seq; /* TCP bytes of the request and the response */
    int req_done, head, connect, h2c, ws;
    struct sf_tracectx_set *req_ctx;
    int status;
    int64_t resp_start, resp_end, resp_body;
    int resp_done;
    struct sf_tracectx_set *resp_ctx;
    int partial;
    const char *why;
    int early; /* the request started in TLS 0-RTT data (p2s_conn_early_data) */
    /* HTTP2-Settings of an h2c upgrade request: the first value (own allocation,
     * NULL when absent or over P2S_H2C_SETTINGS_MAX), its length, how many fields */
    char *h2s;
    size_t h2s_len;
    unsigned h2s_count;
    /* JSON-RPC (rpc.h): the bodies being read, the MCP session named by the request
     * (own allocation, NULL none), the messages its bodies carried */
    struct p2s_rpc_body *rb[2];
    char *session;
    int64_t rpc_messages;
};

struct h1_dir {
    enum h1_state s;
    struct sf_buf hdr;   /* a header section split across segments */
    uint64_t remain;     /* body or chunk bytes left */
    size_t line_len;     /* chunk-size or trailer line bytes so far */
    uint64_t chunk_size; /* being parsed */
    int chunk_digits, chunk_ext;
    int64_t start_ts, last_ts;    /* first byte of the current message, latest segment */
    uint32_t start_seq, next_seq; /* TCP sequence of that first byte, of the next byte */
    int start_seq_known, next_seq_known;
    int lost;           /* a gap hit: the next message here is partial */
    int resyncing;      /* an error was reported for this resync episode */
    struct h1_req *msg; /* the exchange whose message is being read */
};

struct h1 {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
    struct h1_dir d[2];
    struct h1_req *head, *tail; /* exchanges in request order */
    int nq;
    int64_t seq;
    const size_t *pos; /* parse position in the data call in progress, NULL between calls */
    uint32_t pos_seq;  /* TCP sequence number of that call's p[0] */
    int pos_seq_known;
    enum p2s_dir cur_dir;
    int s2c_gap;       /* a gap was met in the responses */
    int pipelined;     /* a request was sent while an earlier one still waited (before any
                          response gap, which would make waiting requests look pipelined) */
    struct p2s_ws *ws; /* after a 101 to "Upgrade: websocket": its messages (ws.h) */
};

/* ---- exchanges ---------------------------------------------------------------------- */

static void req_free(struct h1 *h, struct h1_req *r)
{
    p2s_rpc_body_end(r->rb[0], r->req_end);
    p2s_rpc_body_end(r->rb[1], r->resp_end);
    free(r->session);
    p2s_set_put(h->ctx, r->req_ctx);
    p2s_set_put(h->ctx, r->resp_ctx);
    free(r->h2s);
    free(r);
}

/* The request half of the span of r (the response half is the caller's). */
static void req_span(const struct h1_req *r, struct p2s_span *s)
{
    memset(s, 0, sizeof(*s));
    s->method = r->method;
    s->authority = r->authority;
    s->path = r->path;
    s->grpc_status = -1;
    s->grpc_timeout_ns = -1;
    s->req_start_ns = r->req_start;
    s->early_data = r->early;
    s->req_end_ns = r->req_end;
    s->req_bytes = r->method ? r->req_body : -1;
    s->partial = r->partial;
    s->partial_reason = r->why;
    s->reset_code = -1;
    s->req_seq = r->req_seq;
    s->req_ctx = r->req_ctx;
}

/* The TCP sequence number of the parse position of dir: inside a data call the byte
 * at *pos, between calls the byte after the last one seen.  0 or -1 (unknown). */
static int seq_now(const struct h1 *h, enum p2s_dir dir, uint32_t *seq)
{
    const struct h1_dir *d = &h->d[dir];

    if (h->pos && h->cur_dir == dir) {
        *seq = h->pos_seq + (uint32_t)*h->pos;
        return h->pos_seq_known ? 0 : -1;
    }
    *seq = d->next_seq;
    return d->next_seq_known ? 0 : -1;
}

/* A message of dir starts at the parse position. */
static void seq_start(struct h1 *h, enum p2s_dir dir)
{
    struct h1_dir *d = &h->d[dir];

    d->start_seq_known = seq_now(h, dir, &d->start_seq) == 0;
}

/* The message of dir in r ends at the parse position. */
static void seq_end(const struct h1 *h, enum p2s_dir dir, struct h1_req *r)
{
    struct p2s_seq_range *q = dir == P2S_C2S ? &r->req_seq : &r->resp_seq;

    if (q->known && seq_now(h, dir, &q->end) < 0)
        q->known = 0;
}

static void emit(struct h1 *h, struct h1_req *r)
{
    struct p2s_span s;

    req_span(r, &s);
    s.stream_id = r->no;
    s.proto = "http/1.1";
    s.status = r->status;
    s.resp_start_ns = r->resp_start;
    s.resp_end_ns = r->resp_end;
    s.resp_bytes = r->status ? r->resp_body : -1;
    s.resp_seq = r->resp_seq;
    s.resp_ctx = r->resp_ctx;
    s.rpc_messages = r->rpc_messages;
    p2s_emit_span(h->ctx, h->conn, &s);
}

static void mark_partial(struct h1_req *r, const char *why)
{
    if (!r->partial) {
        r->partial = 1;
        r->why = why;
    }
}

/* Emit finished exchanges from the front of the queue. */
static void flush_done(struct h1 *h)
{
    struct h1_req *r;

    while ((r = h->head) != NULL && r->req_done && r->resp_done) {
        h->head = r->next;
        if (h->head == NULL)
            h->tail = NULL;
        h->nq--;
        emit(h, r);
        req_free(h, r);
    }
}

static void unlink_req(struct h1 *h, struct h1_req *r)
{
    struct h1_req **pp = &h->head, *prev = NULL;

    while (*pp && *pp != r) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp == NULL)
        return;
    *pp = r->next;
    if (h->tail == r)
        h->tail = prev;
    h->nq--;
}

/* The oldest exchange still waiting for its response, or NULL. */
static struct h1_req *awaiting_response(struct h1 *h)
{
    struct h1_req *r;

    for (r = h->head; r; r = r->next)
        if (!r->resp_done)
            return r;
    return NULL;
}

/* The request a response found after a gap answers; r is the oldest waiting one.  The
 * gap may have swallowed whole responses.  A response that starts at ts answers a
 * request sent before ts, and a client that does not pipeline sends its next request
 * only once the previous response is in: so it answers the newest request sent before
 * ts, and the older ones waiting lost their responses in the gap (they are closed as
 * partial, without a status).  On a connection seen pipelining that reasoning does not
 * hold, and the oldest waiting request is kept. */
static struct h1_req *answered_after_gap(struct h1 *h, struct h1_req *r, int64_t ts)
{
    struct h1_req *q, *best = r;

    if (h->pipelined)
        return r;
    for (q = r->next; q; q = q->next)
        if (!q->resp_done && q->req_start <= ts)
            best = q;
    for (q = r; q != best; q = q->next) {
        if (q->resp_done)
            continue;
        mark_partial(q, "response lost in a capture gap");
        q->resp_done = 1;
    }
    return best;
}

static struct h1_req *req_new(struct h1 *h, const char *m, size_t ml, const char *a, size_t al,
                              const char *p, size_t pl)
{
    struct h1_req *r = calloc(1, sizeof(*r) + ml + al + pl + 3);
    char *s;

    if (r == NULL)
        return NULL;
    s = (char *)(r + 1);
    if (m) {
        r->method = s;
        memcpy(s, m, ml);
        s += ml;
        *s++ = 0;
    }
    if (a) {
        r->authority = s;
        memcpy(s, a, al);
        s += al;
        *s++ = 0;
    }
    if (p) {
        r->path = s;
        memcpy(s, p, pl);
        s[pl] = 0;
    }
    r->no = ++h->seq;
    return r;
}

/* A client that never gets answers: past MAX_PENDING waiting requests the oldest is
 * given up.  Not while the responses wait behind a hole in the capture (tcp.c gives it
 * up as a gap once the client's ACK proves it lost, or fills it): they are coming, and an
 * evicted request would leave its response without a request, shifting every later
 * pairing.  MAX_STALLED still bounds the queue. */
static void enqueue(struct h1 *h, struct h1_req *r)
{
    int stalled = p2s_conn_stalled(h->conn, P2S_S2C);

    if (h->nq >= (stalled ? MAX_STALLED : MAX_PENDING)) {
        struct h1_req *old = h->head;
        if (h->d[0].msg == old)
            h->d[0].msg = NULL;
        if (h->d[1].msg == old)
            h->d[1].msg = NULL;
        mark_partial(old, "no response (pipeline limit)");
        old->req_done = old->resp_done = 1;
        flush_done(h);
    }
    if (h->tail)
        h->tail->next = r;
    else
        h->head = r;
    h->tail = r;
    h->nq++;
}

/* ---- messages: heads, bodies, chunks, resynchronisation ----------------------------- */

static void msg_end(struct h1 *h, enum p2s_dir dir, int64_t ts);

/* The JSON-RPC body of r's message going dir ends at ts. */
static void rpc_end(struct h1_req *r, enum p2s_dir dir, int64_t ts)
{
    r->rpc_messages += p2s_rpc_body_end(r->rb[dir], ts);
    r->rb[dir] = NULL;
}

/* Open a JSON-RPC reader for the body of r's message going dir, if its type is one. */
static void rpc_open(struct h1 *h, struct h1_req *r, enum p2s_dir dir,
                     const struct h1_head_facts *f, const char *session)
{
    struct p2s_rpc_carrier x = {h->conn, r->no, session, dir == P2S_S2C ? r->status : 0};

    if (f->rpc_kind == 0)
        return;
    r->rb[dir] = p2s_rpc_body_open(h->ctx, &x, dir, f->rpc_kind, f->encoding, f->encoding_len);
}

/* The MCP session a request names: its Mcp-Session-Id, else a sessionId= of its target. */
static int keep_session(struct h1_req *r, const struct h1_head_facts *f)
{
    char q[160];
    size_t l;

    if (f->session) {
        l = f->session_len < sizeof(q) - 1 ? f->session_len : sizeof(q) - 1;
        memcpy(q, f->session, l);
        q[l] = 0;
    } else if (p2s_rpc_query_session(r->path, q, sizeof(q)) < 0) {
        return 0;
    }
    return (r->session = strdup(q)) == NULL ? -1 : 0;
}

/* Lost framing: end the message being read (partial), look for the next message start,
 * and report once per episode. */
static int resync_error(struct h1 *h, struct h1_dir *d, struct sf_err *err, int code,
                        const char *msg)
{
    enum p2s_dir dir = d == &h->d[P2S_C2S] ? P2S_C2S : P2S_S2C;

    if (d->msg) {
        mark_partial(d->msg, dir == P2S_C2S ? "malformed request" : "malformed response");
        p2s_rpc_body_gap(d->msg->rb[dir]); /* its framing is lost */
        msg_end(h, dir, d->last_ts);
    }
    d->s = S_RESYNC;
    d->line_len = 0; /* we are at a line start */
    if (d->resyncing)
        return 0;
    d->resyncing = 1;
    return sf_err_set(err, code, UINT64_MAX, "%s; resynchronising at the next message", msg);
}

/* Enter the body state from the facts of a header section; `bodyless` for responses
 * that have none.  Returns 1 if a body follows, 0 if the message is complete. */
static int body_state(struct h1_dir *d, const struct h1_head_facts *f, int bodyless, int response)
{
    if (bodyless)
        return 0;
    if (f->chunked) {
        d->s = S_CHUNK_SIZE;
        d->line_len = 0;
        d->chunk_size = 0;
        d->chunk_digits = d->chunk_ext = 0;
        return 1;
    }
    if (f->clen > 0) {
        d->s = S_BODY_CL;
        d->remain = (uint64_t)f->clen;
        return 1;
    }
    if (f->clen == 0 || !response)
        return 0;
    d->s = S_BODY_CLOSE;
    return 1;
}

/* Bytes that start a request (C2S) or status line (S2C): 1 yes, 0 no, -1 too short to
 * say (detect.c). */
__attribute__((cold)) static int looks_start(enum p2s_dir dir, const uint8_t *p, size_t n)
{
    return det_look(dir == P2S_C2S ? DET_H1_REQUEST : DET_H1_STATUS, p, n, 0);
}

static void msg_end(struct h1 *h, enum p2s_dir dir, int64_t ts)
{
    struct h1_dir *d = &h->d[dir];
    struct h1_req *r = d->msg;

    d->msg = NULL;
    d->s = S_START;
    if (r == NULL)
        return;
    rpc_end(r, dir, ts);
    if (dir == P2S_C2S) {
        r->req_end = ts;
        seq_end(h, P2S_C2S, r);
        r->req_done = 1;
    } else {
        r->resp_end = ts;
        seq_end(h, P2S_S2C, r);
        r->resp_done = 1;
    }
    flush_done(h);
}

/* n body bytes of the message of dir, at p (NULL: lost in a gap). */
static void body_bytes(struct h1_dir *d, enum p2s_dir dir, const uint8_t *p, uint64_t n, int64_t ts)
{
    if (d->msg == NULL)
        return;
    if (p)
        p2s_rpc_body_data(d->msg->rb[dir], p, (size_t)n, ts);
    else
        p2s_rpc_body_gap(d->msg->rb[dir]);
    if (dir == P2S_C2S)
        d->msg->req_body += (int64_t)n;
    else
        d->msg->resp_body += (int64_t)n;
}

static void start_tunnel(struct h1 *h, struct h1_req *r, int64_t ts)
{
    r->resp_end = ts;
    seq_end(h, P2S_S2C, r);
    r->resp_done = 1;
    if (!r->req_done) {
        r->req_done = 1;
        r->req_end = ts;
        seq_end(h, P2S_C2S, r);
    }
    h->d[0].msg = h->d[1].msg = NULL;
    h->d[0].s = h->d[1].s = S_TUNNEL;
    p2s_note(h->ctx, h->conn, "http_tunnel", r->status == 101 ? "101 upgrade" : "CONNECT", ts);
    flush_done(h);
}

#define H1_SWITCH 1 /* on_response_head: 101 to an h2c upgrade, switch parsers */

/* An h2c upgrade request keeps its HTTP2-Settings until the 101 (h2.c reads them
 * then); a value over P2S_H2C_SETTINGS_MAX is not kept, only its length.  Returns 0
 * or -1 (no memory). */
static int keep_h2_settings(struct h1_req *r, const struct h1_head_facts *f)
{
    r->h2s_count = f->h2s_count;
    r->h2s_len = f->h2s_len;
    if (f->h2s_count == 0 || f->h2s_len > P2S_H2C_SETTINGS_MAX)
        return 0;
    if ((r->h2s = malloc(f->h2s_len + 1)) == NULL)
        return -1;
    memcpy(r->h2s, f->h2s, f->h2s_len);
    r->h2s[f->h2s_len] = 0;
    return 0;
}

static int on_request_head(struct h1 *h, const char *p, size_t n, int64_t ts, struct sf_err *err)
{
    struct h1_dir *d = &h->d[P2S_C2S];
    const char *eol = memchr(p, '\n', n), *t;
    size_t l1, ml, tl;
    struct h1_head_facts f;
    struct h1_req *r;

    l1 = (size_t)(eol - p);
    if (l1 && p[l1 - 1] == '\r')
        l1--;
    if (h1_head_request_line(p, l1, &ml, &t, &tl) < 0)
        return resync_error(h, d, err, SF_E_MALFORMED, "not an HTTP/1 request line");
    h1_head_fields(&f, h->ctx, 1, eol + 1, p + n);
    if (f.ctx)
        sf_tracectx_set_finish(f.ctx);
    r = req_new(h, p, ml, f.host, f.host ? f.host_len : 0, t, tl);
    if (r == NULL) {
        p2s_set_put(h->ctx, f.ctx);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    r->req_start = d->start_ts;
    r->req_seq.start = d->start_seq;
    r->req_seq.known = d->start_seq_known;
    r->early = p2s_conn_early_data(h->conn);
    r->req_ctx = f.ctx;
    r->head = ml == 4 && memcmp(p, "HEAD", 4) == 0;
    r->connect = ml == 7 && memcmp(p, "CONNECT", 7) == 0;
    /* h2c exists only in cleartext (RFC 9113 3.1); inside TLS the parser belongs to tls.c */
    r->h2c = f.upgrade_h2c && p2s_conn_info(h->conn)->tls == NULL;
    r->ws = f.upgrade_ws;
    if (r->h2c && keep_h2_settings(r, &f) < 0) {
        req_free(h, r);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    if (d->lost)
        mark_partial(r, "gap before the request");
    d->lost = 0;
    d->resyncing = 0;
    if (!h->s2c_gap && awaiting_response(h) != NULL)
        h->pipelined = 1;
    enqueue(h, r);
    if (f.clen == -2) {
        mark_partial(r, "invalid Content-Length");
        r->req_done = 1;
        r->req_end = ts;
        seq_end(h, P2S_C2S, r);
        return resync_error(h, d, err, SF_E_MALFORMED, "invalid Content-Length in request");
    }
    if (body_state(d, &f, 0, 0)) {
        d->msg = r;
        if (keep_session(r, &f) < 0)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        rpc_open(h, r, P2S_C2S, &f, r->session);
        return 0;
    }
    r->req_done = 1;
    r->req_end = ts;
    seq_end(h, P2S_C2S, r);
    d->s = S_START;
    flush_done(h);
    return 0;
}

static int on_response_head(struct h1 *h, const char *p, size_t n, int64_t ts, struct sf_err *err)
{
    struct h1_dir *d = &h->d[P2S_S2C];
    const char *eol = memchr(p, '\n', n);
    size_t l1 = (size_t)(eol - p);
    struct h1_head_facts f;
    struct h1_req *r;
    int status;

    if (l1 && p[l1 - 1] == '\r')
        l1--;
    if (h1_head_status_line(p, l1, &status) < 0)
        return resync_error(h, d, err, SF_E_MALFORMED, "not an HTTP/1 status line");
    h1_head_fields(&f, h->ctx, 0, eol + 1, p + n);
    d->resyncing = 0;
    d->s = S_START;
    if (status < 200 && status != 101) { /* interim (100 Continue, 103 Early Hints) */
        p2s_set_put(h->ctx, f.ctx);
        return 0;
    }
    if (f.ctx)
        sf_tracectx_set_finish(f.ctx);
    if ((r = awaiting_response(h)) != NULL && d->lost)
        r = answered_after_gap(h, r, d->start_ts);
    if (r == NULL) {
        if ((r = req_new(h, NULL, 0, NULL, 0, NULL, 0)) == NULL) {
            p2s_set_put(h->ctx, f.ctx);
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        }
        mark_partial(r, "request not seen");
        r->req_done = 1;
        enqueue(h, r);
    }
    r->status = status;
    r->resp_start = d->start_ts;
    r->resp_seq.start = d->start_seq;
    r->resp_seq.known = d->start_seq_known;
    r->resp_ctx = f.ctx;
    if (d->lost)
        mark_partial(r, "gap before the response");
    d->lost = 0;
    if (status == 101 && r->h2c) {
        d->msg = r;
        return H1_SWITCH;
    }
    if (status == 101 || (r->connect && status / 100 == 2)) {
        if (status == 101 && r->ws && h->ws == NULL)
            h->ws = p2s_ws_new(h->ctx, h->conn, r->no, f.ws_ext, f.ws_ext_len);
        start_tunnel(h, r, ts);
        return 0;
    }
    if (f.clen == -2) {
        mark_partial(r, "invalid Content-Length");
        r->resp_end = ts;
        seq_end(h, P2S_S2C, r);
        r->resp_done = 1;
        flush_done(h);
        return resync_error(h, d, err, SF_E_MALFORMED, "invalid Content-Length in response");
    }
    if (body_state(d, &f, r->head || status == 204 || status == 304, 1)) {
        char sid[160];
        size_t l = f.session_len < sizeof(sid) - 1 ? f.session_len : sizeof(sid) - 1;
        d->msg = r;
        if (f.session) {
            memcpy(sid, f.session, l);
            sid[l] = 0;
        }
        rpc_open(h, r, P2S_S2C, &f, f.session ? sid : r->session);
        return 0;
    }
    r->resp_end = ts;
    seq_end(h, P2S_S2C, r);
    r->resp_done = 1;
    flush_done(h);
    return 0;
}

static int parse_head(struct h1 *h, enum p2s_dir dir, const char *blk, size_t blen, int64_t ts,
                      struct sf_err *err)
{
    return dir == P2S_C2S ? on_request_head(h, blk, blen, ts, err)
                          : on_response_head(h, blk, blen, ts, err);
}

/* A header section was parsed or given up: a buffer grown past 64 KiB for a large one
 * is freed, so that idle connections do not each keep up to --max-header-bytes. */
static void hdr_release(struct h1_dir *d)
{
    if (d->hdr.cap > (64u << 10))
        sf_buf_free(&d->hdr);
    else
        sf_buf_reset(&d->hdr);
}

/* S_HEAD: find the end of the header section, in place when it is all in this segment
 * (the common case), else accumulated in d->hdr up to max_header_bytes. */
static int head(struct h1 *h, enum p2s_dir dir, const uint8_t *p, size_t n, size_t *ip, int64_t ts,
                struct sf_err *err)
{
    struct h1_dir *d = &h->d[dir];
    size_t i = *ip, cap = h->ctx->lim.max_header_bytes, old = d->hdr.len, take, from, e;
    int rc;

    if (old == 0) {
        e = h1_head_end(p + i, n - i);
        if (e && e <= cap) {
            *ip = i + e;
            return parse_head(h, dir, (const char *)p + i, e, ts, err);
        }
        if (looks_start(dir, p + i, n - i) == 0) {
            rc = resync_error(h, d, err, SF_E_MALFORMED,
                              dir == P2S_C2S ? "not an HTTP/1 request" : "not an HTTP/1 response");
            d->line_len = 1; /* not at a line start: skip to the next one */
            return rc;
        }
    }
    take = n - i < cap - old ? n - i : cap - old;
    if (sf_buf_append(&d->hdr, p + i, take) < 0) {
        *ip = n;
        sf_buf_reset(&d->hdr);
        return resync_error(h, d, err, SF_E_NOMEM, "out of memory for a header section");
    }
    from = old > 3 ? old - 3 : 0;
    e = h1_head_end(d->hdr.data + from, d->hdr.len - from);
    if (e) {
        e += from;
        *ip = i + (e - old);
        rc = parse_head(h, dir, (const char *)d->hdr.data, e, ts, err);
        if (rc != H1_SWITCH)
            hdr_release(d);
        return rc;
    }
    *ip = i + take;
    if (d->hdr.len >= cap) {
        char msg[96];
        hdr_release(d);
        snprintf(msg, sizeof(msg), "header section over %zu bytes (--max-header-bytes)", cap);
        rc = resync_error(h, d, err, SF_E_LIMIT, msg);
        d->line_len = 1;
        return rc;
    }
    return 0;
}

/* S_CHUNK_SIZE: "hex[;ext]\r\n". */
static int chunk_size(struct h1 *h, struct h1_dir *d, const uint8_t *p, size_t n, size_t *ip,
                      struct sf_err *err)
{
    size_t i = *ip;
    int v;

    while (i < n) {
        uint8_t c = p[i++];
        if (c == '\n') {
            *ip = i;
            if (!d->chunk_digits)
                return resync_error(h, d, err, SF_E_MALFORMED, "chunk size missing");
            d->line_len = 0;
            if (d->chunk_size == 0) {
                d->s = S_TRAILERS;
                return 0;
            }
            d->remain = d->chunk_size;
            d->s = S_CHUNK_DATA;
            return 0;
        }
        if (++d->line_len > MAX_CHUNK_LINE) {
            *ip = i;
            return resync_error(h, d, err, SF_E_LIMIT, "chunk size line too long");
        }
        if (d->chunk_ext || c == '\r')
            continue;
        if ((v = sf_hex_digit(c)) >= 0) {
            if (d->chunk_digits >= 15) {
                *ip = i;
                return resync_error(h, d, err, SF_E_LIMIT, "chunk size too large");
            }
            d->chunk_size = d->chunk_size * 16 + (uint64_t)v;
            d->chunk_digits++;
        } else if (c == ';' || c == ' ' || c == '\t') {
            d->chunk_ext = 1;
        } else {
            *ip = i;
            d->line_len = 1;
            return resync_error(h, d, err, SF_E_MALFORMED, "bad chunk size");
        }
    }
    *ip = i;
    return 0;
}

/* S_CHUNK_CRLF: the CRLF after chunk data. */
static int chunk_crlf(struct h1 *h, struct h1_dir *d, const uint8_t *p, size_t n, size_t *ip,
                      struct sf_err *err)
{
    size_t i = *ip;

    while (i < n) {
        uint8_t c = p[i++];
        if (c == '\r')
            continue;
        *ip = i;
        if (c != '\n') {
            d->line_len = 1;
            return resync_error(h, d, err, SF_E_MALFORMED, "chunk data not followed by CRLF");
        }
        d->s = S_CHUNK_SIZE;
        d->line_len = 0;
        d->chunk_size = 0;
        d->chunk_digits = d->chunk_ext = 0;
        return 0;
    }
    *ip = i;
    return 0;
}

/* S_TRAILERS: fields after the last chunk, up to an empty line (skipped). */
static void trailers(struct h1 *h, enum p2s_dir dir, const uint8_t *p, size_t n, size_t *ip,
                     int64_t ts)
{
    struct h1_dir *d = &h->d[dir];
    size_t i = *ip;

    while (i < n) {
        uint8_t c = p[i++];
        if (c == '\n') {
            if (d->line_len == 0) {
                *ip = i;
                msg_end(h, dir, ts);
                return;
            }
            d->line_len = 0;
        } else if (c != '\r') {
            d->line_len++;
        }
    }
    *ip = i;
}

/* S_RESYNC: skip to a line that starts like a message.  d->line_len is 0 at a line
 * start, 1 inside a line. */
static void resync(struct h1_dir *d, enum p2s_dir dir, const uint8_t *p, size_t n, size_t *ip,
                   int64_t ts)
{
    size_t i = *ip;
    const uint8_t *nl;

    for (;;) {
        if (d->line_len == 0 && i < n && p[i] != '\r' && p[i] != '\n') {
            if (looks_start(dir, p + i, n - i) != 0) {
                d->s = S_HEAD;
                d->start_ts = ts;
                sf_buf_reset(&d->hdr);
                *ip = i;
                return;
            }
            d->line_len = 1;
        }
        if (i >= n || (nl = memchr(p + i, '\n', n - i)) == NULL) {
            *ip = n;
            return;
        }
        i = (size_t)(nl - p) + 1;
        d->line_len = 0;
    }
}

static void h1_free(struct h1 *h)
{
    struct h1_req *r, *next;

    for (r = h->head; r; r = next) {
        next = r->next;
        req_free(h, r);
    }
    sf_buf_free(&h->d[0].hdr);
    sf_buf_free(&h->d[1].hdr);
    p2s_ws_free(h->ws);
    free(h);
}

/* 101 Switching Protocols to "Upgrade: h2c": the request becomes HTTP/2 stream 1 and
 * everything after the 101 is HTTP/2.  This parser's state is freed here. */
static int upgrade_h2c(struct h1 *h, const uint8_t *rest, size_t n, int64_t ts, struct sf_err *err)
{
    struct h1_req *r = h->d[P2S_S2C].msg;
    struct p2s_conn *conn = h->conn;
    struct p2s_h2c_settings hs = {r->h2s, r->h2s_len, r->h2s_count, ts};
    struct p2s_span s;
    void *st;

    req_span(r, &s);
    s.stream_id = 1;
    s.proto = "h2";
    p2s_note(h->ctx, conn, "h2c_upgrade", r->path, ts);
    st = p2s_conn_switch(conn, &p2s_h2_ops);
    if (st)
        p2s_h2_adopt_upgrade(st, &s, &hs);
    /* Exchanges queued before the upgrade are answered already; emit what is left. */
    unlink_req(h, r); /* r itself now belongs to HTTP/2 */
    req_free(h, r);
    h->d[P2S_S2C].msg = h->d[P2S_C2S].msg = NULL;
    flush_done(h);
    h1_free(h);
    if (st && n)
        return p2s_h2_ops.data(st, P2S_S2C, rest, n, ts, err);
    return 0;
}

static int h1_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                   struct sf_err *err)
{
    struct h1 *h = st;
    struct h1_dir *d = &h->d[dir];
    struct sf_err scratch;
    size_t i = 0, k;
    int rc = 0, r;

    sf_err_clear(&scratch);
    d->last_ts = ts;
    h->pos = &i;
    h->cur_dir = dir;
    h->pos_seq_known = p2s_conn_data_seq(h->conn, &h->pos_seq) == 0;
    while (i < n) {
        struct sf_err *e = rc ? &scratch : err; /* report the first error of a segment */
        r = 0;
        switch (d->s) {
        case S_START:
            while (i < n && (p[i] == '\r' || p[i] == '\n'))
                i++;
            if (i < n) {
                d->s = S_HEAD;
                d->start_ts = ts;
                seq_start(h, dir);
            }
            break;
        case S_HEAD:
            r = head(h, dir, p, n, &i, ts, e);
            if (r == H1_SWITCH) {
                h->pos = NULL;
                return upgrade_h2c(h, p + i, n - i, ts, err);
            }
            break;
        case S_BODY_CL:
        case S_CHUNK_DATA:
            k = n - i < d->remain ? n - i : (size_t)d->remain;
            body_bytes(d, dir, p + i, k, ts);
            i += k;
            d->remain -= k;
            if (d->remain == 0) {
                if (d->s == S_BODY_CL)
                    msg_end(h, dir, ts);
                else
                    d->s = S_CHUNK_CRLF;
            }
            break;
        case S_CHUNK_SIZE:
            r = chunk_size(h, d, p, n, &i, e);
            break;
        case S_CHUNK_CRLF:
            r = chunk_crlf(h, d, p, n, &i, e);
            break;
        case S_TRAILERS:
            trailers(h, dir, p, n, &i, ts);
            break;
        case S_BODY_CLOSE:
            body_bytes(d, dir, p + i, n - i, ts);
            i = n;
            break;
        case S_RESYNC:
            resync(d, dir, p, n, &i, ts);
            if (d->s == S_HEAD)
                seq_start(h, dir);
            break;
        case S_TUNNEL:
            p2s_ws_data(h->ws, dir, p + i, n - i, ts);
            i = n;
            break;
        }
        if (r < 0 && rc == 0)
            rc = r;
    }
    h->pos = NULL;
    d->next_seq = h->pos_seq + (uint32_t)n;
    d->next_seq_known = h->pos_seq_known;
    return rc;
}

static void h1_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct h1 *h = st;
    struct h1_dir *d = &h->d[dir];
    const char *why = dir == P2S_C2S ? "gap in the request" : "gap in the response";

    d->next_seq += (uint32_t)len;
    if (d->s == S_TUNNEL) {
        p2s_ws_gap(h->ws, dir);
        return;
    }
    if ((d->s == S_BODY_CL && len < d->remain) || d->s == S_BODY_CLOSE) {
        /* the framing survives: only body bytes were lost */
        if (d->s == S_BODY_CL)
            d->remain -= len;
        if (d->msg)
            mark_partial(d->msg, why);
        body_bytes(d, dir, NULL, len, ts);
        return;
    }
    if (d->msg) {
        mark_partial(d->msg, why);
        p2s_rpc_body_gap(d->msg->rb[dir]);
        msg_end(h, dir, ts);
    }
    sf_buf_reset(&d->hdr);
    d->lost = 1;
    if (dir == P2S_S2C)
        h->s2c_gap = 1;
    d->s = S_RESYNC;
    d->line_len = 0;
    d->resyncing = 1; /* the gap is the event; garbage after it is expected */
}

static void h1_close(void *st, int64_t ts)
{
    struct h1 *h = st;
    struct h1_dir *q = &h->d[P2S_C2S], *s = &h->d[P2S_S2C];
    struct h1_req *r;

    (void)ts;
    if ((r = q->msg) != NULL) {
        mark_partial(r, "connection closed in the request body");
        p2s_rpc_body_gap(r->rb[P2S_C2S]);
        rpc_end(r, P2S_C2S, q->last_ts);
        r->req_end = q->last_ts;
        seq_end(h, P2S_C2S, r);
        r->req_done = 1;
    }
    if ((r = s->msg) != NULL) {
        if (s->s != S_BODY_CLOSE) {
            mark_partial(r, "connection closed in the response");
            p2s_rpc_body_gap(r->rb[P2S_S2C]);
        }
        rpc_end(r, P2S_S2C, s->last_ts);
        r->resp_end = s->last_ts;
        seq_end(h, P2S_S2C, r);
        r->resp_done = 1;
    }
    for (r = h->head; r; r = r->next) {
        if (!r->req_done) {
            r->req_done = 1;
            mark_partial(r, "request incomplete");
        }
        if (!r->resp_done) {
            r->resp_done = 1;
            mark_partial(r, "no response");
        }
    }
    flush_done(h);
    h1_free(h);
}

static void *h1_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct h1 *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return NULL;
    h->ctx = ctx;
    h->conn = conn;
    sf_buf_init(&h->d[0].hdr, ctx->lim.max_header_bytes);
    sf_buf_init(&h->d[1].hdr, ctx->lim.max_header_bytes);
    p2s_conn_set_proto(conn, "http/1.1");
    return h;
}

const struct p2s_app_ops p2s_h1_ops = {
    .name = "http/1.1",
    .open = h1_open,
    .data = h1_data,
    .gap = h1_gap,
    .close = h1_close,
};

/* h2.c - HTTP/2 connections (RFC 9113) to spans: framing, streams, header blocks.
 *
 *   client preface: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (24 bytes), then frames both ways
 *
 *   frame:  +-----------------------------------------------+
 *           |                 Length (24)                   |
 *           +---------------+---------------+---------------+
 *           |   Type (8)    |   Flags (8)   |
 *           +-+-------------+---------------+-------------------------------+
 *           |R|                 Stream Identifier (31)                      |
 *           +=+=============================================================+
 *           |                   Frame Payload (Length)                      |
 *           +---------------------------------------------------------------+
 *   HEADERS: [Pad Length(8) if PADDED] [E(1) Dep(31) Weight(8) if PRIORITY]
 *            Field Block Fragment [Padding]; then CONTINUATION frames of the same
 *            stream, with no other frame in between, until END_HEADERS (6.10).
 *   DATA:    [Pad Length(8) if PADDED] Data [Padding]
 *
 * A stream is a span: from the first byte of the request HEADERS to the last byte of
 * the frame that ends the response (END_STREAM), both directions ended; RST_STREAM
 * ends it early (reset_code, partial).  Trailers (a later HEADERS block) give
 * grpc-status / grpc-message.  A PUSH_PROMISE opens a span of its own for the
 * promised stream: its request is the promise, and partial_reason says
 * "server push (promised on stream N)" although the span is not partial.
 *
 * Per direction: DATA payloads are never buffered (only counted); other frames are
 * buffered up to a cap when split across segments.  A frame longer than the
 * receiver's SETTINGS_MAX_FRAME_SIZE (or the header cap), a capture gap that cuts
 * a frame, or bytes that are not a preface make the direction look for the next
 * plausible pair of frame headers (resync); after 1 MiB without one it is abandoned.
 * Header blocks are decoded in frame order with hpack.c (one decoder per direction,
 * bounded by the peer's SETTINGS_HEADER_TABLE_SIZE once ACKed), even for streams not
 * tracked, so that the dynamic table stays in step.  Every header field is offered
 * to the stream's trace-context sets.  gRPC "true binary" -bin values (0x00 prefix,
 * SETTINGS 0xFE03 = 1) are passed through as bytes; sf_tracectx reads both forms.
 */
#include "h2.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "hpack.h"
#include "p2s.h"
#include "sf_buf.h"
#include "sf_rd.h"

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define H2_HDR 9

enum h2_type {
    T_DATA = 0,
    T_HEADERS = 1,
    T_PRIORITY = 2,
    T_RST_STREAM = 3,
    T_SETTINGS = 4,
    T_PUSH_PROMISE = 5,
    T_PING = 6,
    T_GOAWAY = 7,
    T_WINDOW_UPDATE = 8,
    T_CONTINUATION = 9,
};

#define F_END_STREAM 0x01
#define F_ACK 0x01
#define F_END_HEADERS 0x04
#define F_PADDED 0x08
#define F_PRIORITY 0x20

#define H2_DEFAULT_MAX_FRAME 16384u
#define H2_ABS_MAX_FRAME 16777215u
#define H2_CTRL_MAX 65536u     /* buffered payload of control frames */
#define H2_SYNC_WINDOW 65536u  /* bytes held while looking for frame boundaries */
#define H2_SYNC_GIVE_UP (1u << 20)
#define H2_PENDING 8           /* SETTINGS awaiting ACK, per direction */
#define H2_BUCKETS 64
#define H2_REASON_MAX 200

enum h2_dstate {
    D_PREFACE, /* C2S: matching the connection preface */
    D_FRAMES,  /* aligned on frames */
    D_SYNC,    /* looking for the next frame boundary */
    D_DEAD,    /* abandoned: bytes are ignored */
};

struct h2_stream {
    struct h2_stream *hnext;        /* hash chain */
    struct h2_stream *prev, *next;  /* creation order */
    uint32_t id, promised_on;
    char *method, *authority, *path, *grpc_message;
    int status, grpc, grpc_status;
    int64_t grpc_timeout;
    int64_t req_start, req_end, resp_start, resp_end;
    int64_t req_bytes, resp_bytes;
    int req_seen, req_done, resp_done, final_seen, upgraded;
    int64_t reset_code;
    int partial;
    char reason[H2_REASON_MAX];
    struct sf_tracectx_set *req_ctx, *resp_ctx;
    int req_ctx_done;
    struct grpc_msgs msgs[2];
};

struct h2_settings {
    int64_t table; /* SETTINGS_HEADER_TABLE_SIZE, -1 absent */
    int64_t frame; /* SETTINGS_MAX_FRAME_SIZE, -1 absent */
};

struct h2_dir {
    enum h2_dstate state;
    size_t preface_got;
    uint64_t off;        /* bytes of this direction consumed */
    struct sf_buf fb;    /* an incomplete frame (header, or header + payload) */
    int64_t fts;         /* capture time of the current frame's first byte */
    /* frame whose payload streams through (DATA, oversized or unknown frames) */
    uint32_t skip_left;  /* payload bytes still to come */
    uint32_t skip_sid;
    uint8_t skip_type, skip_flags;
    int pad_pending;     /* PADDED DATA: the pad length byte is next */
    uint32_t body_left;  /* DATA bytes before the padding */
    /* header block being assembled (HEADERS/PUSH_PROMISE + CONTINUATION) */
    int in_block, block_over;
    struct sf_buf block;
    uint32_t block_sid, promised;
    uint8_t block_type, block_end_stream;
    int64_t block_ts;
    /* HPACK decoder for blocks sent in this direction */
    struct hpack_dec *hd;
    int64_t bound;       /* table bound ACKed before the decoder existed, -1 none */
    int lost;            /* bytes were lost before the decoder existed */
    uint32_t max_frame;  /* limit on frames sent in this direction */
    int max_frame_known;
    struct h2_settings pend[H2_PENDING]; /* SETTINGS this direction sent, not ACKed */
    int npend;
    uint64_t sync_scanned;
};

struct h2_conn {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
    const struct p2s_limits *lim;
    struct h2_dir d[2];
    struct h2_stream *bucket[H2_BUCKETS];
    struct h2_stream *first, *last;
    size_t nstreams;
    int from_start;            /* preface (or h2c upgrade) seen: tables known */
    uint32_t first_req, max_req; /* client stream ids whose request HEADERS we saw */
    uint32_t max_push;
    /* the data call in progress: first error goes to err, later ones are notes */
    struct sf_err *err;
    int rc, emit_rc;
    int64_t ts;
};

/* ---- helpers ------------------------------------------------------------------------ */

const char *h2_error_name(uint32_t code)
{
    static const char *const names[] = {
        "NO_ERROR",       "PROTOCOL_ERROR",     "INTERNAL_ERROR",      "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT", "STREAM_CLOSED",    "FRAME_SIZE_ERROR",    "REFUSED_STREAM",
        "CANCEL",         "COMPRESSION_ERROR",  "CONNECT_ERROR",       "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    };

    return code < sizeof(names) / sizeof(names[0]) ? names[code] : "UNKNOWN";
}

/* Report an error of this connection: the first of a data call is returned through
 * err (the caller prints it with packet and offset), later ones are counted. */
static void h2_fail(struct h2_conn *c, enum p2s_dir dir, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void h2_fail(struct h2_conn *c, enum p2s_dir dir, int code, const char *fmt, ...)
{
    char msg[SF_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->rc == 0 && c->err) {
        c->rc = sf_err_set(c->err, code, UINT64_MAX, "h2 %s @%llu: %s",
                           dir == P2S_C2S ? "c2s" : "s2c",
                           (unsigned long long)c->d[dir].off, msg);
        if (c->err)
            c->err->proto = "h2";
    } else {
        p2s_note(c->ctx, c->conn, "h2_error", msg, c->ts);
    }
}

static char *dup_capped(const void *p, size_t n, size_t cap)
{
    char *s;

    if (n > cap)
        n = cap;
    s = malloc(n + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static void add_reason(struct h2_stream *s, const char *why)
{
    size_t l = strlen(s->reason);

    s->partial = 1;
    if (strstr(s->reason, why) != NULL)
        return;
    snprintf(s->reason + l, sizeof(s->reason) - l, "%s%s", l ? "; " : "", why);
}

/* ---- streams ------------------------------------------------------------------------ */

static struct h2_stream *stream_find(struct h2_conn *c, uint32_t id)
{
    struct h2_stream *s;

    for (s = c->bucket[id % H2_BUCKETS]; s; s = s->hnext)
        if (s->id == id)
            return s;
    return NULL;
}

static struct h2_stream *stream_new(struct h2_conn *c, uint32_t id)
{
    struct h2_stream *s;

    if (c->nstreams >= c->lim->max_streams) {
        char d[64];

        snprintf(d, sizeof(d), "stream %u not tracked (%zu open)", id, c->nstreams);
        p2s_note(c->ctx, c->conn, "h2_stream_cap", d, c->ts);
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->id = id;
    s->status = 0;
    s->grpc_status = -1;
    s->grpc_timeout = -1;
    s->reset_code = -1;
    s->hnext = c->bucket[id % H2_BUCKETS];
    c->bucket[id % H2_BUCKETS] = s;
    s->prev = c->last;
    if (c->last)
        c->last->next = s;
    else
        c->first = s;
    c->last = s;
    c->nstreams++;
    return s;
}

static void stream_free(struct h2_conn *c, struct h2_stream *s)
{
    struct h2_stream **pp = &c->bucket[s->id % H2_BUCKETS];

    while (*pp != s)
        pp = &(*pp)->hnext;
    *pp = s->hnext;
    if (s->prev)
        s->prev->next = s->next;
    else
        c->first = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        c->last = s->prev;
    c->nstreams--;
    free(s->method);
    free(s->authority);
    free(s->path);
    free(s->grpc_message);
    free(s->req_ctx);
    free(s->resp_ctx);
    free(s);
}

/* Hand the stream to the sink and free it. */
static void stream_emit(struct h2_conn *c, struct h2_stream *s)
{
    struct p2s_span sp;
    char *svc = NULL, *meth = NULL;
    int rc;

    memset(&sp, 0, sizeof(sp));
    sp.stream_id = s->id;
    sp.proto = s->grpc ? "grpc" : "h2";
    sp.method = s->method;
    sp.authority = s->authority;
    sp.path = s->path;
    sp.status = s->status;
    if (s->grpc && s->path) {
        const char *a, *b;
        size_t al, bl;

        if (grpc_split_path(s->path, strlen(s->path), &a, &al, &b, &bl) == 0) {
            svc = dup_capped(a, al, al);
            meth = dup_capped(b, bl, bl);
        }
    }
    sp.grpc_service = svc;
    sp.grpc_method = meth;
    sp.grpc_message = s->grpc_message;
    sp.grpc_status = s->grpc_status;
    sp.grpc_timeout_ns = s->grpc_timeout;
    sp.req_start_ns = s->req_start;
    sp.req_end_ns = s->req_done ? s->req_end : 0;
    sp.resp_start_ns = s->resp_start;
    sp.resp_end_ns = s->resp_done ? s->resp_end : 0;
    sp.req_bytes = s->req_seen ? s->req_bytes : -1;
    sp.resp_bytes = s->resp_start ? s->resp_bytes : -1;
    sp.partial = s->partial;
    if (s->partial || s->promised_on)
        sp.partial_reason = s->reason[0] ? s->reason : NULL;
    sp.reset_code = s->reset_code;
    if (s->req_ctx && !s->req_ctx_done)
        sf_tracectx_set_finish(s->req_ctx);
    if (s->resp_ctx)
        sf_tracectx_set_finish(s->resp_ctx);
    sp.req_ctx = s->req_ctx;
    sp.resp_ctx = s->resp_ctx;
    rc = p2s_emit_span(c->ctx, c->conn, &sp);
    if (rc < 0 && c->emit_rc == 0)
        c->emit_rc = rc;
    free(svc);
    free(meth);
    stream_free(c, s);
}

static void stream_maybe_done(struct h2_conn *c, struct h2_stream *s)
{
    if (s->req_done && s->resp_done)
        stream_emit(c, s);
}

/* Every open stream becomes partial with this reason (capture gap and the like). */
static void streams_mark(struct h2_conn *c, const char *why)
{
    for (struct h2_stream *s = c->first; s; s = s->next)
        add_reason(s, why);
}

/* ---- header blocks ------------------------------------------------------------------- */

enum block_role {
    R_REQUEST,     /* request headers (HEADERS C2S, or a PUSH_PROMISE's block) */
    R_REQ_TRAILER, /* a later C2S HEADERS block */
    R_RESPONSE,    /* response headers (possibly 1xx, or trailers-only) */
    R_TRAILER,     /* S2C HEADERS after the final response headers */
    R_NONE,        /* not tracked: decoded only to keep the table in step */
};

struct block_ctx {
    struct h2_conn *c;
    struct h2_stream *s;
    enum block_role role;
    int status;
};

static int name_is(const struct hpack_field *f, const char *want)
{
    size_t n = strlen(want);

    return f->nlen == n && memcmp(f->name, want, n) == 0;
}

static void ctx_feed(struct sf_tracectx_set **set, const struct hpack_field *f)
{
    if (!sf_tracectx_is_ctx_header(f->name, f->nlen))
        return;
    if (*set == NULL) {
        *set = malloc(sizeof(**set));
        if (*set == NULL)
            return;
        sf_tracectx_set_init(*set);
    }
    sf_tracectx_set_add(*set, f->name, f->nlen, f->value, f->vlen);
}

static void set_str(char **dst, const struct hpack_field *f, size_t cap)
{
    if (*dst == NULL)
        *dst = dup_capped(f->value, f->vlen, cap);
}

static void on_request_field(struct block_ctx *b, const struct hpack_field *f)
{
    struct h2_stream *s = b->s;
    size_t cap = b->c->lim->max_field_bytes;

    if (name_is(f, ":method"))
        set_str(&s->method, f, cap);
    else if (name_is(f, ":authority"))
        set_str(&s->authority, f, cap);
    else if (name_is(f, "host"))
        set_str(&s->authority, f, cap); /* :authority wins: it comes first */
    else if (name_is(f, ":path"))
        set_str(&s->path, f, cap);
    else if (name_is(f, "content-type") && grpc_is_content_type(f->value, f->vlen))
        s->grpc = 1;
    else if (name_is(f, "grpc-timeout"))
        s->grpc_timeout = grpc_parse_timeout(f->value, f->vlen);
    ctx_feed(&s->req_ctx, f);
}

static void on_response_field(struct block_ctx *b, const struct hpack_field *f)
{
    struct h2_stream *s = b->s;

    if (name_is(f, ":status")) {
        int v = 0;

        for (size_t i = 0; i < f->vlen && i < 3; i++)
            v = f->value[i] >= '0' && f->value[i] <= '9' ? v * 10 + (f->value[i] - '0') : -1000;
        b->status = f->vlen == 3 && v >= 100 ? v : 0;
    } else if (name_is(f, "content-type") && grpc_is_content_type(f->value, f->vlen)) {
        s->grpc = 1;
    } else if (name_is(f, "grpc-status")) {
        s->grpc_status = grpc_parse_status(f->value, f->vlen);
    } else if (name_is(f, "grpc-message")) {
        char *m = malloc(f->vlen + 1);

        if (m) {
            grpc_percent_decode(m, f->vlen + 1, f->value, f->vlen);
            free(s->grpc_message);
            s->grpc_message = m;
        }
    }
    ctx_feed(&s->resp_ctx, f);
}

static void on_field(void *arg, const struct hpack_field *f)
{
    struct block_ctx *b = arg;

    if (b->s == NULL || (f->flags & (HPACK_F_NAME_UNKNOWN | HPACK_F_VALUE_UNKNOWN)))
        return;
    switch (b->role) {
    case R_REQUEST:
        on_request_field(b, f);
        break;
    case R_REQ_TRAILER:
        ctx_feed(&b->s->req_ctx, f);
        break;
    case R_RESPONSE:
    case R_TRAILER:
        on_response_field(b, f);
        break;
    case R_NONE:
        break;
    }
}

static struct hpack_dec *dir_decoder(struct h2_conn *c, enum p2s_dir dir)
{
    struct h2_dir *d = &c->d[dir];

    if (d->hd == NULL) {
        struct hpack_limits hl = {c->lim->max_field_bytes, c->lim->max_header_bytes,
                                  c->lim->max_hpack_table};

        d->hd = hpack_dec_new(&hl, c->from_start && !d->lost, 1);
        if (d->hd && d->bound >= 0)
            hpack_dec_set_bound(d->hd, (uint32_t)d->bound);
    }
    return d->hd;
}

/* Which stream and role a complete block is for; may create the stream. */
static struct h2_stream *block_target(struct h2_conn *c, enum p2s_dir dir, enum block_role *role)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s;

    *role = R_NONE;
    if (d->block_type == T_PUSH_PROMISE) {
        if (stream_find(c, d->promised) != NULL || d->promised == 0)
            return NULL; /* a promise must name a new stream */
        if ((s = stream_new(c, d->promised)) == NULL)
            return NULL;
        s->promised_on = d->block_sid;
        snprintf(s->reason, sizeof(s->reason), "server push (promised on stream %u)",
                 d->block_sid);
        if (d->promised > c->max_push)
            c->max_push = d->promised;
        *role = R_REQUEST;
        return s;
    }
    s = stream_find(c, d->block_sid);
    if (dir == P2S_C2S) {
        if (s != NULL) {
            *role = s->req_seen ? R_REQ_TRAILER : R_REQUEST;
            return s;
        }
        if (d->block_sid <= c->max_req && d->block_sid >= c->first_req)
            return NULL; /* finished, reset or refused by the cap: not reopened */
        if ((s = stream_new(c, d->block_sid)) == NULL)
            return NULL;
        if (c->first_req == 0 || d->block_sid < c->first_req)
            c->first_req = d->block_sid;
        if (d->block_sid > c->max_req)
            c->max_req = d->block_sid;
        *role = R_REQUEST;
        return s;
    }
    if (s != NULL) {
        *role = s->final_seen ? R_TRAILER : R_RESPONSE;
        return s;
    }
    /* A response to a request the capture did not see: only when the capture can
     * have missed it (it started mid-connection or lost bytes). */
    if (c->from_start && !c->d[P2S_C2S].lost)
        return NULL;
    if ((d->block_sid & 1) && d->block_sid >= c->first_req && c->first_req != 0)
        return NULL;
    if (!(d->block_sid & 1) && d->block_sid <= c->max_push)
        return NULL;
    if ((s = stream_new(c, d->block_sid)) == NULL)
        return NULL;
    add_reason(s, "request not captured");
    *role = R_RESPONSE;
    return s;
}

/* The facts of a decoded block: times, status, end of stream. */
static void block_apply(struct h2_conn *c, enum p2s_dir dir, struct h2_stream *s,
                        enum block_role role, int status, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];

    switch (role) {
    case R_REQUEST:
        s->req_seen = 1;
        s->req_start = d->block_ts;
        if (d->block_type == T_PUSH_PROMISE) {
            s->req_done = 1; /* a promised request has no body */
            s->req_end = ts;
            return;
        }
        break;
    case R_RESPONSE:
        if (s->resp_start == 0)
            s->resp_start = d->block_ts;
        if (status >= 200 || status == 101 || status == 0) {
            s->final_seen = 1;
            s->status = status;
        }
        break;
    default:
        break;
    }
    if (d->block_end_stream) {
        if (dir == P2S_C2S) {
            s->req_done = 1;
            s->req_end = ts;
        } else {
            s->resp_done = 1;
            s->resp_end = ts;
        }
        stream_maybe_done(c, s);
    }
}

/* A complete header block blk[0..n) of direction dir (END_HEADERS seen), whose last
 * byte arrived at ts. */
static void block_done(struct h2_conn *c, enum p2s_dir dir, const uint8_t *blk, size_t n,
                       int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    struct hpack_dec *hd = dir_decoder(c, dir);
    struct block_ctx b = {c, NULL, R_NONE, 0};
    struct hpack_result res;
    struct sf_err e;
    int rc;

    d->in_block = 0;
    b.s = block_target(c, dir, &b.role);
    if (d->block_over || hd == NULL) {
        /* Not decoded (over the cap, or no memory): the table is lost with it. */
        if (hd)
            hpack_dec_lost(hd);
        else
            d->lost = 1;
        if (b.s)
            add_reason(b.s, "header block over the cap (not decoded)");
    } else {
        sf_err_clear(&e);
        rc = hpack_dec_block(hd, blk, n, on_field, &b, &res, &e);
        if (rc < 0) {
            h2_fail(c, dir, rc, "stream %u: %s", d->block_sid, e.msg);
            p2s_note(c->ctx, c->conn, "hpack_error", e.msg, ts);
        }
        if (b.s && (rc < 0 || res.unknown || res.capped)) {
            char why[96];

            snprintf(why, sizeof(why), "HPACK: %u of %u fields unresolved", res.unknown,
                     res.fields);
            add_reason(b.s, res.unknown  ? why
                            : res.capped ? "header list over the cap"
                                         : "HPACK decoding error");
        }
    }
    d->block_over = 0;
    sf_buf_reset(&d->block);
    if (b.s)
        block_apply(c, dir, b.s, b.role, b.status, ts);
}

/* Give up the header block being assembled (interrupted, or bytes lost). */
static void block_abandon(struct h2_conn *c, enum p2s_dir dir, const char *why)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s = stream_find(c, d->block_sid);

    d->in_block = 0;
    d->block_over = 0;
    sf_buf_reset(&d->block);
    if (d->hd)
        hpack_dec_lost(d->hd);
    else
        d->lost = 1;
    if (s)
        add_reason(s, why);
}

/* Add a fragment to the block; decode it at END_HEADERS. */
static void block_add(struct h2_conn *c, enum p2s_dir dir, const uint8_t *frag, size_t n,
                      int end_headers, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];

    if (end_headers && d->block.len == 0 && !d->block_over) {
        block_done(c, dir, frag, n, ts); /* one frame: decode in place */
        return;
    }
    if (!d->block_over && sf_buf_append(&d->block, frag, n) < 0) {
        h2_fail(c, dir, SF_E_LIMIT, "stream %u: header block over %zu bytes (not followed)",
                d->block_sid, c->lim->max_header_bytes);
        d->block_over = 1;
        sf_buf_reset(&d->block);
    }
    if (end_headers)
        block_done(c, dir, d->block.data, d->block.len, ts);
}

static void block_start(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint32_t sid,
                        uint32_t promised, int end_stream)
{
    struct h2_dir *d = &c->d[dir];

    d->in_block = 1;
    d->block_over = 0;
    d->block_type = type;
    d->block_sid = sid;
    d->promised = promised;
    d->block_end_stream = (uint8_t)end_stream;
    d->block_ts = d->fts;
    sf_buf_reset(&d->block);
}

/* ---- frames -------------------------------------------------------------------------- */

static void frame_headers(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                          const uint8_t *p, size_t len, int64_t ts)
{
    struct sf_rd rd;
    size_t pad = 0;

    sf_rd_init(&rd, p, len, 0);
    if (flags & F_PADDED)
        pad = sf_rd_u8(&rd);
    if (flags & F_PRIORITY)
        sf_rd_skip(&rd, 5);
    if (rd.err || pad > sf_rd_left(&rd)) {
        h2_fail(c, dir, SF_E_MALFORMED, "HEADERS on stream %u: padding and priority (%zu) "
                "longer than the frame (%zu)", sid, pad, len);
        block_start(c, dir, T_HEADERS, sid, 0, 0);
        block_abandon(c, dir, "malformed HEADERS frame");
        return;
    }
    block_start(c, dir, T_HEADERS, sid, 0, flags & F_END_STREAM);
    block_add(c, dir, rd.p, sf_rd_left(&rd) - pad, flags & F_END_HEADERS, ts);
}

static void frame_push_promise(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                               const uint8_t *p, size_t len, int64_t ts)
{
    struct sf_rd rd;
    size_t pad = 0;
    uint32_t promised;

    sf_rd_init(&rd, p, len, 0);
    if (flags & F_PADDED)
        pad = sf_rd_u8(&rd);
    promised = sf_rd_u32be(&rd) & 0x7fffffffu;
    if (rd.err || pad > sf_rd_left(&rd)) {
        h2_fail(c, dir, SF_E_MALFORMED, "PUSH_PROMISE on stream %u shorter than its fields",
                sid);
        block_start(c, dir, T_PUSH_PROMISE, sid, 0, 0);
        block_abandon(c, dir, "malformed PUSH_PROMISE frame");
        return;
    }
    if (dir == P2S_C2S)
        h2_fail(c, dir, SF_E_MALFORMED, "PUSH_PROMISE sent by the client (stream %u)", sid);
    block_start(c, dir, T_PUSH_PROMISE, sid, dir == P2S_S2C ? promised : 0, 0);
    block_add(c, dir, rd.p, sf_rd_left(&rd) - pad, flags & F_END_HEADERS, ts);
}

static void frame_rst(struct h2_conn *c, enum p2s_dir dir, uint32_t sid, const uint8_t *p,
                      size_t len, int64_t ts)
{
    struct h2_stream *s;
    uint32_t code;
    char why[96];

    if (len != 4) {
        h2_fail(c, dir, SF_E_MALFORMED, "RST_STREAM of %zu bytes (want 4)", len);
        return;
    }
    code = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    snprintf(why, sizeof(why), "stream %u %s (0x%x) from the %s", sid, h2_error_name(code), code,
             dir == P2S_C2S ? "client" : "server");
    p2s_note(c->ctx, c->conn, "h2_rst", why, ts);
    if ((s = stream_find(c, sid)) == NULL)
        return;
    s->reset_code = code;
    snprintf(why, sizeof(why), "RST_STREAM %s from the %s", h2_error_name(code),
             dir == P2S_C2S ? "client" : "server");
    add_reason(s, why);
    /* A reset ends both directions at the RST frame. */
    if (!s->req_done)
        s->req_end = ts;
    if (!s->resp_done && s->resp_start)
        s->resp_end = ts;
    s->req_done = s->resp_done = 1;
    stream_emit(c, s);
}

static void settings_ack(struct h2_conn *c, enum p2s_dir dir)
{
    struct h2_dir *d = &c->d[dir], *o = &c->d[!dir];
    struct h2_settings st;

    if (o->npend == 0)
        return; /* the SETTINGS were sent before the capture started */
    st = o->pend[0];
    memmove(o->pend, o->pend + 1, (size_t)(o->npend - 1) * sizeof(o->pend[0]));
    o->npend--;
    /* SETTINGS of the peer bound what this direction sends from the ACK on. */
    if (st.table >= 0) {
        if (d->hd)
            hpack_dec_set_bound(d->hd, (uint32_t)st.table);
        else
            d->bound = st.table;
    }
    if (st.frame >= 0) {
        d->max_frame = (uint32_t)st.frame;
        d->max_frame_known = 1;
    }
}

static void frame_settings(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                           const uint8_t *p, size_t len)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_settings st = {-1, -1};

    if (sid != 0 || ((flags & F_ACK) && len != 0) || len % 6 != 0) {
        h2_fail(c, dir, SF_E_MALFORMED, "SETTINGS on stream %u with %zu bytes%s", sid, len,
                (flags & F_ACK) ? " (ACK)" : "");
        return;
    }
    if (flags & F_ACK) {
        settings_ack(c, dir);
        return;
    }
    for (size_t i = 0; i < len; i += 6) {
        uint16_t id = (uint16_t)(p[i] << 8 | p[i + 1]);
        uint32_t v = (uint32_t)p[i + 2] << 24 | (uint32_t)p[i + 3] << 16 |
                     (uint32_t)p[i + 4] << 8 | p[i + 5];

        if (id == 1)
            st.table = v;
        else if (id == 5 && v >= H2_DEFAULT_MAX_FRAME && v <= H2_ABS_MAX_FRAME)
            st.frame = v;
        else if (id == 5)
            h2_fail(c, dir, SF_E_MALFORMED, "SETTINGS_MAX_FRAME_SIZE %u out of range", v);
        else if (id == 0xfe03 && v == 1)
            p2s_note(c->ctx, c->conn, "grpc_true_binary", dir == P2S_C2S ? "client" : "server",
                     c->ts);
    }
    if (d->npend == H2_PENDING) { /* never ACKed: forget the oldest */
        memmove(d->pend, d->pend + 1, (H2_PENDING - 1) * sizeof(d->pend[0]));
        d->npend--;
    }
    d->pend[d->npend++] = st;
}

static void frame_goaway(struct h2_conn *c, enum p2s_dir dir, uint32_t sid, const uint8_t *p,
                         size_t len, int64_t ts)
{
    uint32_t last, code;
    char d[96];
    struct h2_stream *s, *nx;

    if (sid != 0 || len < 8) {
        h2_fail(c, dir, SF_E_MALFORMED, "GOAWAY on stream %u with %zu bytes", sid, len);
        return;
    }
    last = ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) &
           0x7fffffffu;
    code = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    snprintf(d, sizeof(d), "%s: last stream %u, %s (0x%x)", dir == P2S_C2S ? "client" : "server",
             last, h2_error_name(code), code);
    p2s_note(c->ctx, c->conn, "h2_goaway", d, ts);
    /* Streams the sender's peer opened above `last` were not processed. */
    for (s = c->first; s; s = nx) {
        nx = s->next;
        if (s->id > last && (s->id & 1) == (dir == P2S_S2C) && !s->resp_done) {
            add_reason(s, "not processed (GOAWAY)");
            s->req_done = s->resp_done = 1;
            stream_emit(c, s);
        }
    }
}

/* A complete buffered (non-DATA) frame. */
static void frame(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint8_t flags, uint32_t sid,
                  const uint8_t *p, size_t len, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];

    switch (type) {
    case T_HEADERS:
        if (sid == 0)
            h2_fail(c, dir, SF_E_MALFORMED, "HEADERS on stream 0");
        else
            frame_headers(c, dir, flags, sid, p, len, ts);
        break;
    case T_CONTINUATION:
        if (!d->in_block)
            h2_fail(c, dir, SF_E_MALFORMED, "CONTINUATION on stream %u without HEADERS", sid);
        else
            block_add(c, dir, p, len, flags & F_END_HEADERS, ts);
        break;
    case T_PUSH_PROMISE:
        frame_push_promise(c, dir, flags, sid, p, len, ts);
        break;
    case T_RST_STREAM:
        frame_rst(c, dir, sid, p, len, ts);
        break;
    case T_SETTINGS:
        frame_settings(c, dir, flags, sid, p, len);
        break;
    case T_GOAWAY:
        frame_goaway(c, dir, sid, p, len, ts);
        break;
    case T_PRIORITY:
        if (len != 5 || sid == 0)
            h2_fail(c, dir, SF_E_MALFORMED, "PRIORITY on stream %u with %zu bytes", sid, len);
        break;
    case T_PING:
        if (len != 8 || sid != 0)
            h2_fail(c, dir, SF_E_MALFORMED, "PING on stream %u with %zu bytes", sid, len);
        break;
    case T_WINDOW_UPDATE:
        if (len != 4)
            h2_fail(c, dir, SF_E_MALFORMED, "WINDOW_UPDATE with %zu bytes", len);
        break;
    default:
        break; /* unknown types are skipped (RFC 9113 section 5.5) */
    }
}

/* ---- the byte engine ----------------------------------------------------------------- */

static uint32_t dir_max_frame(const struct h2_dir *d)
{
    return d->max_frame_known ? d->max_frame : H2_ABS_MAX_FRAME;
}

/* A frame header that fits its type: known type, valid stream id and length. */
static int header_plausible(const uint8_t *h, uint32_t max_frame, uint32_t max_sid)
{
    uint32_t len = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2];
    uint8_t type = h[3], flags = h[4];
    uint32_t sid = ((uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 8 | h[8]);

    if (len > max_frame || sid > max_sid || type > T_CONTINUATION)
        return 0;
    switch (type) {
    case T_DATA:
        return sid != 0 && !(flags & ~(F_END_STREAM | F_PADDED));
    case T_HEADERS:
        return sid != 0 && !(flags & ~(F_END_STREAM | F_END_HEADERS | F_PADDED | F_PRIORITY));
    case T_PRIORITY:
        return sid != 0 && len == 5 && flags == 0;
    case T_RST_STREAM:
        return sid != 0 && len == 4 && flags == 0;
    case T_SETTINGS:
        return sid == 0 && len % 6 == 0 && len <= 6 * 16 && !(flags & ~F_ACK) &&
               (!(flags & F_ACK) || len == 0);
    case T_PUSH_PROMISE:
        return sid != 0 && len >= 4 && !(flags & ~(F_END_HEADERS | F_PADDED));
    case T_PING:
        return sid == 0 && len == 8 && !(flags & ~F_ACK);
    case T_GOAWAY:
        return sid == 0 && len >= 8 && flags == 0;
    case T_WINDOW_UPDATE:
        return len == 4 && flags == 0;
    default: /* T_CONTINUATION */
        return sid != 0 && !(flags & ~F_END_HEADERS);
    }
}

static int plausible_pair(const uint8_t *p, size_t n, uint32_t max_frame, uint32_t max_sid)
{
    uint32_t len;

    if (n < H2_HDR)
        return -1;
    if (!header_plausible(p, max_frame, max_sid))
        return 0;
    len = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    /* The next header must be plausible too, unless it is beyond any window, or the
     * frame ends exactly where the bytes do (segments usually end with a frame). */
    if ((uint64_t)len + 2 * H2_HDR > H2_SYNC_WINDOW || n == (size_t)len + H2_HDR)
        return 1;
    if (n < (size_t)len + 2 * H2_HDR)
        return -1;
    return header_plausible(p + H2_HDR + len, max_frame, max_sid);
}

int h2_plausible_frames(const uint8_t *p, size_t n, uint32_t max_frame)
{
    return plausible_pair(p, n, max_frame, 0x7fffffffu);
}

/* DATA payload bytes p[0..n) of the current frame (pad length, data, padding). */
static void data_bytes(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s = stream_find(c, d->skip_sid);
    size_t body;

    if (d->pad_pending && n > 0) {
        uint32_t rest = d->skip_left - 1; /* payload after the pad length byte */

        d->pad_pending = 0;
        if (p[0] > rest) {
            h2_fail(c, dir, SF_E_MALFORMED, "DATA on stream %u: padding %u > payload %u",
                    d->skip_sid, p[0], rest);
            d->body_left = 0;
        } else {
            d->body_left = rest - p[0];
        }
        p++;
        n--;
    }
    body = n < d->body_left ? n : d->body_left;
    d->body_left -= (uint32_t)body;
    if (s == NULL || body == 0)
        return;
    if (dir == P2S_C2S)
        s->req_bytes += (int64_t)body;
    else
        s->resp_bytes += (int64_t)body;
    if (s->grpc)
        grpc_msgs_feed(&s->msgs[dir], p, body);
}

/* The last payload byte of a streamed frame arrived at ts. */
static void skip_end(struct h2_conn *c, enum p2s_dir dir, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s;

    if (d->skip_type == T_DATA && (d->skip_flags & F_END_STREAM) &&
        (s = stream_find(c, d->skip_sid)) != NULL) {
        if (dir == P2S_C2S) {
            s->req_done = 1;
            s->req_end = ts;
        } else {
            if (s->resp_start == 0)
                add_reason(s, "response headers not captured");
            s->resp_done = 1;
            s->resp_end = ts;
        }
        stream_maybe_done(c, s);
    } else if ((d->skip_type == T_HEADERS || d->skip_type == T_CONTINUATION ||
                d->skip_type == T_PUSH_PROMISE) &&
               d->in_block && (d->skip_flags & F_END_HEADERS)) {
        block_done(c, dir, NULL, 0, ts);
    }
}

/* A frame header passed the length checks: interleaving rule, then set up a
 * streamed payload when the frame is not buffered. */
static void frame_begin(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint8_t flags,
                        uint32_t sid, uint32_t len, int streamed)
{
    struct h2_dir *d = &c->d[dir];

    if (d->in_block && (type != T_CONTINUATION || sid != d->block_sid)) {
        h2_fail(c, dir, SF_E_MALFORMED,
                "frame type %u on stream %u inside the header block of stream %u "
                "(RFC 9113 6.10)",
                type, sid, d->block_sid);
        block_abandon(c, dir, "header block interrupted");
    }
    if (!streamed)
        return;
    d->skip_type = type;
    d->skip_flags = flags;
    d->skip_sid = sid;
    d->skip_left = len;
    d->pad_pending = 0;
    d->body_left = 0;
    if (type == T_DATA) {
        if (sid == 0 || ((flags & F_PADDED) && len == 0)) {
            h2_fail(c, dir, SF_E_MALFORMED, "DATA on stream %u with %u bytes", sid, len);
            d->skip_sid = 0;
        }
        d->pad_pending = (flags & F_PADDED) != 0;
        d->body_left = d->pad_pending ? 0 : len;
    } else if (type == T_HEADERS || type == T_PUSH_PROMISE || type == T_CONTINUATION) {
        h2_fail(c, dir, SF_E_LIMIT, "%s frame of %u bytes on stream %u over the %zu-byte "
                "header cap (not followed)", type == T_CONTINUATION ? "CONTINUATION" : "HEADERS",
                len, sid, c->lim->max_header_bytes);
        if (type == T_CONTINUATION && !d->in_block)
            return; /* an orphan: nothing to give up */
        if (type != T_CONTINUATION)
            block_start(c, dir, type, sid, 0, type == T_HEADERS && (flags & F_END_STREAM));
        d->block_over = 1;
        sf_buf_reset(&d->block);
    } else if (type == T_GOAWAY) {
        p2s_note(c->ctx, c->conn, "h2_goaway", "oversized GOAWAY skipped", c->ts);
    }
}

/* Why a frame header cannot be followed, or 0 (buffered) / 1 (streamed). */
static int frame_class(struct h2_conn *c, enum p2s_dir dir, uint32_t len, uint8_t type,
                       uint32_t sid)
{
    struct h2_dir *d = &c->d[dir];
    uint32_t maxf = dir_max_frame(d);

    if (len > maxf) {
        h2_fail(c, dir, SF_E_LIMIT,
                "frame of %u bytes (type %u, stream %u) exceeds SETTINGS_MAX_FRAME_SIZE %u; "
                "resynchronising", len, type, sid, maxf);
        return -1;
    }
    if (type == T_DATA || type > T_CONTINUATION)
        return 1;
    if (type == T_HEADERS || type == T_CONTINUATION || type == T_PUSH_PROMISE)
        return len > c->lim->max_header_bytes;
    if (type == T_GOAWAY && len > H2_CTRL_MAX)
        return 1;
    if (len > H2_CTRL_MAX) {
        h2_fail(c, dir, SF_E_MALFORMED, "control frame type %u of %u bytes; resynchronising",
                type, len);
        return -1;
    }
    return 0;
}

static void enter_sync(struct h2_conn *c, enum p2s_dir dir)
{
    struct h2_dir *d = &c->d[dir];

    d->state = D_SYNC;
    d->skip_left = 0;
    d->lost = 1;
    streams_mark(c, "frames lost (resynchronised)");
    if (d->in_block)
        block_abandon(c, dir, "frames lost");
    else if (d->hd)
        hpack_dec_lost(d->hd);
    else
        d->lost = 1;
}

/* Bytes in D_FRAMES; returns how many were consumed (fewer than n only when the
 * direction left D_FRAMES). */
static size_t feed_frames(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n,
                          int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    size_t i = 0;

    while (i < n && d->state == D_FRAMES) {
        const uint8_t *h;
        uint32_t len, sid;
        uint8_t type, flags;
        int cls, direct = d->fb.len == 0 && n - i >= H2_HDR;

        if (d->skip_left > 0) {
            size_t k = n - i < d->skip_left ? n - i : d->skip_left;

            if (d->skip_type == T_DATA)
                data_bytes(c, dir, p + i, k);
            d->skip_left -= (uint32_t)k;
            i += k;
            if (d->skip_left == 0)
                skip_end(c, dir, ts);
            continue;
        }
        if (d->fb.len == 0)
            d->fts = ts;
        if (!direct && d->fb.len < H2_HDR) {
            size_t k = H2_HDR - d->fb.len < n - i ? H2_HDR - d->fb.len : n - i;

            sf_buf_append(&d->fb, p + i, k); /* within fb's max */
            i += k;
            if (d->fb.len < H2_HDR)
                break;
        }
        h = direct ? p + i : d->fb.data;
        len = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2];
        type = h[3];
        flags = h[4];
        sid = ((uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 8 | h[8]) &
              0x7fffffffu;
        cls = d->fb.len <= H2_HDR ? frame_class(c, dir, len, type, sid) : 0;
        if (cls < 0) {
            /* Never follow an absurd length: look for the next boundary from the
             * byte after this header's first. */
            if (direct)
                i++;
            else
                sf_buf_consume(&d->fb, 1);
            enter_sync(c, dir);
            break;
        }
        if (cls == 1 || len == 0 || (direct && n - i - H2_HDR >= len)) {
            const uint8_t *pl = direct ? p + i + H2_HDR : NULL;

            if (direct)
                i += H2_HDR;
            sf_buf_reset(&d->fb);
            frame_begin(c, dir, type, flags, sid, len, cls == 1 || type == T_DATA);
            if (cls == 1 || type == T_DATA) {
                if (len == 0)
                    skip_end(c, dir, ts);
                continue;
            }
            frame(c, dir, type, flags, sid, pl ? pl : (const uint8_t *)"", len, ts);
            i += pl ? len : 0;
            continue;
        }
        if (direct) {
            sf_buf_append(&d->fb, p + i, H2_HDR);
            i += H2_HDR;
        }
        {
            size_t need = H2_HDR + (size_t)len - d->fb.len;
            size_t k = need < n - i ? need : n - i;

            if (sf_buf_append(&d->fb, p + i, k) < 0) {
                h2_fail(c, dir, SF_E_NOMEM, "out of memory buffering a frame");
                enter_sync(c, dir);
                sf_buf_reset(&d->fb);
                break;
            }
            i += k;
        }
        if (d->fb.len == H2_HDR + (size_t)len) {
            frame_begin(c, dir, type, flags, sid, len, 0);
            frame(c, dir, type, flags, sid, d->fb.data + H2_HDR, len, ts);
            sf_buf_reset(&d->fb);
        }
    }
    return i;
}

/* Bytes in D_SYNC: hold up to a window and look for two plausible frame headers in
 * a row.  Returns bytes of p consumed; on success the direction is in D_FRAMES and
 * d->fb holds the bytes to replay from the found boundary. */
static size_t feed_sync(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    size_t room = H2_SYNC_WINDOW - d->fb.len, k = n < room ? n : room, i, wait = SIZE_MAX;
    uint32_t maxf = d->max_frame_known ? d->max_frame : H2_SYNC_WINDOW;
    uint32_t top = c->max_req > c->max_push ? c->max_req : c->max_push;
    /* Stream ids grow slowly: one far above every id seen is payload, not a header. */
    uint32_t max_sid = top < 0x7fffffffu - 65536 ? top + 65536 : 0x7fffffffu;

    sf_buf_append(&d->fb, p, k);
    for (i = 0; i < d->fb.len; i++) {
        int r = plausible_pair(d->fb.data + i, d->fb.len - i, maxf, max_sid);

        if (r < 0 && wait == SIZE_MAX && d->fb.len < H2_SYNC_WINDOW)
            wait = i; /* undecided here; a confirmed pair further on wins */
        if (r == 1) {
            char det[64];

            snprintf(det, sizeof(det), "%s: %llu bytes skipped", dir == P2S_C2S ? "c2s" : "s2c",
                     (unsigned long long)(d->sync_scanned + i));
            p2s_note(c->ctx, c->conn, "h2_resync", det, c->ts);
            sf_buf_consume(&d->fb, i);
            d->state = D_FRAMES;
            d->sync_scanned = 0;
            return k;
        }
    }
    if (wait != SIZE_MAX)
        i = wait; /* keep the bytes from the first undecided position */
    sf_buf_consume(&d->fb, i);
    d->sync_scanned += i;
    if (d->sync_scanned > H2_SYNC_GIVE_UP) {
        h2_fail(c, dir, SF_E_MALFORMED, "no HTTP/2 frame boundary in %u bytes; direction "
                "abandoned", H2_SYNC_GIVE_UP);
        d->state = D_DEAD;
        sf_buf_free(&d->fb);
        streams_mark(c, "direction abandoned");
    }
    return k;
}

static size_t feed_preface(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    size_t k = H2_PREFACE_LEN - d->preface_got;

    if (k > n)
        k = n;
    if (memcmp(p, H2_PREFACE + d->preface_got, k) != 0) {
        h2_fail(c, dir, SF_E_MALFORMED, "no connection preface; looking for frames");
        d->state = D_SYNC;
        d->lost = 1;
        if (d->preface_got) /* replay what matched as candidate frame bytes */
            sf_buf_append(&d->fb, H2_PREFACE, d->preface_got);
        return 0;
    }
    d->preface_got += k;
    if (d->preface_got == H2_PREFACE_LEN) {
        d->state = D_FRAMES;
        c->from_start = 1;
        /* From the start, SETTINGS_MAX_FRAME_SIZE is the default until ACKed. */
        c->d[P2S_C2S].max_frame_known = c->d[P2S_S2C].max_frame_known = 1;
    }
    return k;
}

/* Run bytes through the direction's state machine.  Replays of held bytes after a
 * resync are iterative (a private copy), never recursive. */
static void feed(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    uint8_t *tmp = NULL;
    size_t i = 0;

    while (i < n) {
        switch (d->state) {
        case D_PREFACE:
            i += feed_preface(c, dir, p + i, n - i);
            break;
        case D_FRAMES:
            i += feed_frames(c, dir, p + i, n - i, ts);
            break;
        case D_SYNC: {
            uint8_t *t2;
            size_t m;

            i += feed_sync(c, dir, p + i, n - i);
            if (d->state != D_FRAMES)
                break;
            m = d->fb.len + (n - i);
            t2 = malloc(m ? m : 1);
            if (t2 == NULL) {
                d->state = D_DEAD;
                i = n;
                break;
            }
            memcpy(t2, d->fb.data, d->fb.len);
            memcpy(t2 + d->fb.len, p + i, n - i);
            sf_buf_reset(&d->fb);
            free(tmp);
            p = tmp = t2;
            n = m;
            i = 0;
            break;
        }
        case D_DEAD:
            i = n;
            break;
        }
    }
    free(tmp);
}

/* ---- p2s_app_ops ---------------------------------------------------------------------- */

static void *h2_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct h2_conn *c = calloc(1, sizeof(*c));
    size_t fbmax;

    if (c == NULL)
        return NULL;
    c->ctx = ctx;
    c->conn = conn;
    c->lim = p2s_limits(ctx);
    fbmax = c->lim->max_header_bytes > H2_SYNC_WINDOW ? c->lim->max_header_bytes : H2_SYNC_WINDOW;
    for (int i = 0; i < 2; i++) {
        struct h2_dir *d = &c->d[i];

        sf_buf_init(&d->fb, H2_HDR + fbmax);
        sf_buf_init(&d->block, c->lim->max_header_bytes);
        d->bound = -1;
        d->max_frame = H2_DEFAULT_MAX_FRAME;
        d->state = i == P2S_C2S ? D_PREFACE : D_FRAMES;
    }
    p2s_conn_set_proto(conn, "h2");
    return c;
}

static int h2_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                   struct sf_err *err)
{
    struct h2_conn *c = st;
    int rc;

    c->err = err;
    c->rc = 0;
    c->ts = ts;
    feed(c, dir, p, n, ts);
    c->d[dir].off += n;
    rc = c->emit_rc ? c->emit_rc : c->rc;
    c->emit_rc = 0;
    c->err = NULL;
    return rc;
}

static void h2_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct h2_conn *c = st;
    struct h2_dir *d = &c->d[dir];

    c->ts = ts;
    d->off += len;
    if (d->state == D_DEAD)
        return;
    if (d->state == D_FRAMES && d->fb.len == 0 && d->skip_left >= len && !d->pad_pending) {
        /* Inside a streamed payload: frame alignment survives. */
        struct h2_stream *s = stream_find(c, d->skip_sid);
        uint32_t body = len < d->body_left ? (uint32_t)len : d->body_left;

        if (s && d->skip_type == T_DATA) {
            add_reason(s, "capture gap in DATA");
            if (dir == P2S_C2S)
                s->req_bytes += body;
            else
                s->resp_bytes += body;
        }
        d->body_left -= body;
        d->skip_left -= (uint32_t)len;
        if (d->skip_left == 0)
            skip_end(c, dir, ts);
        return;
    }
    sf_buf_reset(&d->fb);
    streams_mark(c, "capture gap");
    enter_sync(c, dir);
}

static void h2_close(void *st, int64_t ts)
{
    struct h2_conn *c = st;

    c->ts = ts;
    c->err = NULL;
    while (c->first) {
        struct h2_stream *s = c->first;

        if (!s->req_done || !s->resp_done)
            add_reason(s, "connection closed before the stream ended");
        stream_emit(c, s);
    }
    for (int i = 0; i < 2; i++) {
        hpack_dec_free(c->d[i].hd);
        sf_buf_free(&c->d[i].fb);
        sf_buf_free(&c->d[i].block);
    }
    free(c);
}

void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req)
{
    struct h2_conn *c = h2_state;
    struct h2_stream *s;
    size_t cap;

    if (c == NULL || req == NULL || (s = stream_new(c, 1)) == NULL)
        return;
    cap = c->lim->max_field_bytes;
    if (req->method)
        s->method = dup_capped(req->method, strlen(req->method), cap);
    if (req->authority)
        s->authority = dup_capped(req->authority, strlen(req->authority), cap);
    if (req->path)
        s->path = dup_capped(req->path, strlen(req->path), cap);
    s->req_seen = s->req_done = s->upgraded = 1;
    s->req_start = req->req_start_ns;
    s->req_end = req->req_end_ns;
    s->req_bytes = req->req_bytes > 0 ? req->req_bytes : 0;
    if (req->partial)
        add_reason(s, req->partial_reason ? req->partial_reason : "HTTP/1.1 request partial");
    if (req->req_ctx && (s->req_ctx = malloc(sizeof(*s->req_ctx))) != NULL) {
        *s->req_ctx = *req->req_ctx;
        s->req_ctx_done = 1;
    }
    c->from_start = 1;
    c->d[P2S_C2S].max_frame_known = c->d[P2S_S2C].max_frame_known = 1;
    c->first_req = c->max_req = 1;
    /* HTTP2-Settings may have raised the table the server encodes with. */
    c->d[P2S_S2C].bound = (int64_t)c->lim->max_hpack_table;
}

const struct p2s_app_ops p2s_h2_ops = {
    .name = "h2",
    .open = h2_open,
    .data = h2_data,
    .gap = h2_gap,
    .close = h2_close,
};

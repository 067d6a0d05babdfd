/* h2_stream.c - HTTP/2 streams as spans: header blocks (HPACK via hpack.c) give a
 * stream its request, response and trailers; gRPC facts via grpc.c.  See h2.c for
 * the framing and the span rules (RFC 9113 section 8, grpc/grpc PROTOCOL-HTTP2.md).
 *
 *   block role   C2S HEADERS: request (first), request trailers (later)
 *                S2C HEADERS: response (1xx interim, then final), trailers (after final)
 *                PUSH_PROMISE: request of the promised stream
 */
#include "h2_stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "rpc.h"
#include "sf_jsonrpc.h"

/* Report an error of this connection: the first of a data call is returned through
 * err (the caller prints it with packet and offset), later ones are counted. */
void h2_fail(struct h2_conn *c, enum p2s_dir dir, int code, const char *fmt, ...)
{
    char msg[SF_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->rc == 0 && c->err) {
        c->rc = sf_err_set(c->err, code, UINT64_MAX, "h2 %s @%llu: %s",
                           dir == P2S_C2S ? "c2s" : "s2c", (unsigned long long)c->d[dir].off, msg);
        if (c->err)
            c->err->proto = "h2";
    } else {
        p2s_note(c->ctx, c->conn, "h2_error", msg, c->ts);
    }
}

char *h2_dup(const void *p, size_t n, size_t cap)
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

/* A copy of p[0..min(n, cap)) for the stream: in its text buffer when it fits (no
 * malloc for the usual method, authority and path), else h2_dup.  NULL: no memory. */
static char *stream_str(struct h2_stream *s, const void *p, size_t n, size_t cap)
{
    char *t;

    if (n > cap)
        n = cap;
    if (n >= sizeof(s->text) - s->text_used)
        return h2_dup(p, n, n);
    t = s->text + s->text_used;
    memcpy(t, p, n);
    t[n] = 0;
    s->text_used += n + 1;
    return t;
}

static void stream_str_free(struct h2_stream *s, char *t)
{
    if (t < s->text || t >= s->text + sizeof(s->text))
        free(t);
}

void h2_stream_partial(struct h2_stream *s, const char *why)
{
    size_t l = strlen(s->reason);

    s->partial = 1;
    if (strstr(s->reason, why) != NULL)
        return;
    snprintf(s->reason + l, sizeof(s->reason) - l, "%s%s", l ? "; " : "", why);
}

/* ---- streams ------------------------------------------------------------------------ */

/* The slot of stream id, or the empty slot where it would go (the map has room). */
static struct sf_map_slot *stream_slot(const struct h2_conn *c, uint32_t id)
{
    uint64_t h = sf_hash_u64(id);
    struct sf_map_slot *s;

    SF_MAP_RUN(&c->streams, h, s)
    {
        if (s->hash == h) /* sf_hash_u64 is one-to-one: the same hash is the same id */
            break;
    }
    return s;
}

struct h2_stream *h2_stream_find(struct h2_conn *c, uint32_t id)
{
    return c->streams.n ? stream_slot(c, id)->val : NULL;
}

struct h2_stream *h2_stream_new(struct h2_conn *c, uint32_t id)
{
    struct h2_stream *s;

    if (c->nstreams >= c->lim->max_streams && c->first) {
        /* Make room: the oldest open stream is most likely one whose end a capture gap
         * took.  It is emitted now, partial; its later frames are ignored. */
        struct h2_stream *o = c->first;
        char d[96];

        snprintf(d, sizeof(d), "stream %u emitted early to track stream %u (%zu open)", o->id, id,
                 c->nstreams);
        p2s_note(c->ctx, c->conn, "h2_stream_cap", d, c->ts);
        if (o->lingering) {
            h2_stream_reset_end(c, o);
        } else {
            h2_stream_partial(o, "evicted: more open streams than --max-streams");
            h2_stream_emit(c, o);
        }
    }
    if (sf_map_reserve(&c->streams, 1) < 0 || (s = calloc(1, sizeof(*s))) == NULL)
        return NULL;
    s->id = id;
    s->status = 0;
    s->grpc_status = -1;
    s->grpc_timeout = -1;
    s->reset_code = -1;
    sf_map_fill(&c->streams, stream_slot(c, id), sf_hash_u64(id), s);
    s->prev = c->last;
    if (c->last)
        c->last->next = s;
    else
        c->first = s;
    c->last = s;
    c->nstreams++;
    return s;
}

/* Context sets go back to the run's pool (p2s_set_put): a set is ~23 KB, and a
 * malloc/free pair per request showed up in profiles. */
static void set_release(struct h2_conn *c, struct sf_tracectx_set *set)
{
    p2s_set_put(c->ctx, set);
}

static void stream_free(struct h2_conn *c, struct h2_stream *s)
{
    sf_map_remove(&c->streams, stream_slot(c, s->id));
    if (s->prev)
        s->prev->next = s->next;
    else
        c->first = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        c->last = s->prev;
    c->nstreams--;
    if (s->lingering)
        c->nlinger--;
    stream_str_free(s, s->method);
    stream_str_free(s, s->authority);
    stream_str_free(s, s->path);
    free(s->grpc_message);
    for (int dir = 0; dir < 2; dir++) {
        p2s_rpc_body_end(s->rb[dir], 0); /* emit ended them; this is a stream given up */
        free(s->rpc_enc[dir]);
        free(s->rpc_session[dir]);
    }
    set_release(c, s->req_ctx);
    set_release(c, s->resp_ctx);
    free(s);
}

/* ---- JSON-RPC bodies (rpc.h) ---------------------------------------------------------- */

static int name_is(const struct hpack_field *f, const char *want);

/* A header of a request (dir C2S) or response that the JSON-RPC reader needs. */
static void rpc_field(struct h2_stream *s, enum p2s_dir dir, const struct hpack_field *f)
{
    char **dst = NULL;

    if (name_is(f, "content-type"))
        s->rpc_kind[dir] = sf_jrpc_content_kind((const char *)f->value, f->vlen);
    else if (name_is(f, "content-encoding"))
        dst = &s->rpc_enc[dir];
    else if (name_is(f, "mcp-session-id"))
        dst = &s->rpc_session[dir];
    if (dst && *dst == NULL && f->vlen < 160 && (*dst = malloc(f->vlen + 1)) != NULL) {
        memcpy(*dst, f->value, f->vlen);
        (*dst)[f->vlen] = 0;
    }
}

/* The headers of s going dir are done: a reader for its body, if its type is one. */
static void rpc_open(struct h2_conn *c, struct h2_stream *s, enum p2s_dir dir)
{
    const char *session = s->rpc_session[dir] ? s->rpc_session[dir] : s->rpc_session[P2S_C2S];
    char q[160];
    struct p2s_rpc_carrier x;

    if (s->rb[dir] || s->rpc_kind[dir] == 0)
        return;
    if (session == NULL && p2s_rpc_query_session(s->path, q, sizeof(q)) == 0)
        session = q;
    x.conn = c->conn;
    x.stream_id = s->id;
    x.session = session;
    x.status = dir == P2S_S2C ? s->status : 0;
    s->rb[dir] = p2s_rpc_body_open(c->ctx, &x, dir, s->rpc_kind[dir], s->rpc_enc[dir],
                                   s->rpc_enc[dir] ? strlen(s->rpc_enc[dir]) : 0);
}

void h2_stream_rpc_data(struct h2_conn *c, struct h2_stream *s, enum p2s_dir dir, const uint8_t *p,
                        size_t n)
{
    if (p)
        p2s_rpc_body_data(s->rb[dir], p, n, c->ts);
    else
        p2s_rpc_body_gap(s->rb[dir]);
}

void h2_stream_rpc_end(struct h2_stream *s, enum p2s_dir dir, int64_t ts)
{
    s->rpc_messages += p2s_rpc_body_end(s->rb[dir], ts);
    s->rb[dir] = NULL;
}

/* Hand the stream to the run context as a span (p2s_emit_span) and free it. */
void h2_stream_emit(struct h2_conn *c, struct h2_stream *s)
{
    struct p2s_span sp;
    char *svc = NULL, *meth = NULL;
    int rc;

    if (s->partial) { /* a body cut short is not read to its end */
        p2s_rpc_body_gap(s->rb[P2S_C2S]);
        p2s_rpc_body_gap(s->rb[P2S_S2C]);
    }
    h2_stream_rpc_end(s, P2S_C2S, s->req_end);
    h2_stream_rpc_end(s, P2S_S2C, s->resp_end);

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
            svc = h2_dup(a, al, al);
            meth = h2_dup(b, bl, bl);
        }
    }
    sp.grpc_service = svc;
    sp.grpc_method = meth;
    sp.grpc_message = s->grpc_message;
    sp.grpc_status = s->grpc_status;
    sp.grpc_timeout_ns = s->grpc_timeout;
    sp.req_start_ns = s->req_start;
    sp.early_data = s->early;
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
    sp.rpc_messages = s->rpc_messages;
    /* a range is known only when its end is */
    if (s->seq_ended[P2S_C2S])
        sp.req_seq = s->req_seq;
    if (s->seq_ended[P2S_S2C] && s->resp_start)
        sp.resp_seq = s->resp_seq;
    rc = p2s_emit_span(c->ctx, c->conn, &sp);
    if (rc < 0 && c->emit_rc == 0)
        c->emit_rc = rc;
    free(svc);
    free(meth);
    stream_free(c, s);
}

void h2_stream_reset_end(struct h2_conn *c, struct h2_stream *s)
{
    if (!s->req_done) {
        s->req_done = 1;
        s->req_end = s->reset_ts;
    }
    if (!s->resp_done) {
        s->resp_done = 1;
        s->resp_end = s->resp_start ? s->reset_ts : 0;
    }
    h2_stream_emit(c, s);
}

void h2_stream_seq_end(struct h2_conn *c, enum p2s_dir dir, struct h2_stream *s)
{
    const struct h2_dir *d = &c->d[dir];
    struct p2s_seq_range *r = dir == P2S_C2S ? &s->req_seq : &s->resp_seq;

    r->end = d->fend;
    s->seq_ended[dir] = 1;
    if (!d->fseq_ok)
        r->known = 0;
}

void h2_stream_check_done(struct h2_conn *c, struct h2_stream *s)
{
    if (s->req_done && s->resp_done)
        h2_stream_emit(c, s);
}

/* Every open stream becomes partial with this reason (capture gap and the like). */
void h2_stream_mark_all(struct h2_conn *c, const char *why)
{
    for (struct h2_stream *s = c->first; s; s = s->next)
        h2_stream_partial(s, why);
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

/* keep: the block is a request's (responses' headers are not attributes) */
static void ctx_feed(struct h2_conn *c, struct sf_tracectx_set **set, const struct hpack_field *f,
                     int keep)
{
    int id = sf_tracectx_header_id(f->name, f->nlen);

    keep = keep && sf_attrs_keep_match(&c->ctx->lim.keep, f->name, f->nlen);
    if (id < 0 && !keep)
        return;
    if (*set == NULL && (*set = p2s_set_get(c->ctx)) == NULL)
        return;
    if (id >= 0)
        sf_tracectx_set_add_id(*set, id, f->value, f->vlen);
    if (keep)
        sf_tracectx_set_keep(*set, f->name, f->nlen, f->value, f->vlen);
}

static void set_str(struct h2_stream *s, char **dst, const struct hpack_field *f, size_t cap)
{
    if (*dst == NULL)
        *dst = stream_str(s, f->value, f->vlen, cap);
}

static void on_request_field(struct block_ctx *b, const struct hpack_field *f)
{
    struct h2_stream *s = b->s;
    size_t cap = b->c->lim->max_field_bytes;

    if (name_is(f, ":method"))
        set_str(s, &s->method, f, cap);
    else if (name_is(f, ":authority"))
        set_str(s, &s->authority, f, cap);
    else if (name_is(f, "host"))
        set_str(s, &s->authority, f, cap); /* :authority wins: it comes first */
    else if (name_is(f, ":path"))
        set_str(s, &s->path, f, cap);
    else if (name_is(f, "content-type") && grpc_is_content_type(f->value, f->vlen))
        s->grpc = 1;
    else if (name_is(f, "grpc-timeout"))
        s->grpc_timeout = grpc_parse_timeout(f->value, f->vlen);
    rpc_field(s, P2S_C2S, f);
    ctx_feed(b->c, &s->req_ctx, f, 1);
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
    rpc_field(s, P2S_S2C, f);
    ctx_feed(b->c, &s->resp_ctx, f, 0);
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
        ctx_feed(b->c, &b->s->req_ctx, f, 0);
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
        if (h2_stream_find(c, d->promised) != NULL || d->promised == 0)
            return NULL; /* a promise must name a new stream */
        if ((s = h2_stream_new(c, d->promised)) == NULL)
            return NULL;
        s->promised_on = d->block_sid;
        snprintf(s->reason, sizeof(s->reason), "server push (promised on stream %u)", d->block_sid);
        if (d->promised > c->max_push)
            c->max_push = d->promised;
        *role = R_REQUEST;
        return s;
    }
    s = h2_stream_find(c, d->block_sid);
    if (dir == P2S_C2S) {
        if (s != NULL) {
            *role = s->req_seen ? R_REQ_TRAILER : R_REQUEST;
            return s;
        }
        if (d->block_sid <= c->max_req && d->block_sid >= c->first_req)
            return NULL; /* finished, reset or refused by the cap: not reopened */
        if ((s = h2_stream_new(c, d->block_sid)) == NULL)
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
    if ((s = h2_stream_new(c, d->block_sid)) == NULL)
        return NULL;
    h2_stream_partial(s, "request not captured");
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
        rpc_open(c, s, P2S_C2S);
        s->req_start = d->block_ts;
        s->req_seq.start = d->block_seq;
        s->req_seq.known = d->block_seq_ok;
        s->early = p2s_conn_early_data(c->conn);
        if (d->block_type == T_PUSH_PROMISE) {
            s->req_done = 1; /* a promised request has no body */
            s->req_end = ts;
            return;
        }
        break;
    case R_RESPONSE:
        if (s->resp_start == 0) {
            s->resp_start = d->block_ts;
            s->resp_seq.start = d->block_seq;
            s->resp_seq.known = d->block_seq_ok;
        }
        if (status >= 200 || status == 101 || status == 0) {
            s->final_seen = 1;
            s->status = status;
            if (status >= 200)
                rpc_open(c, s, P2S_S2C);
        }
        break;
    default:
        break;
    }
    if (d->block_end_stream) {
        h2_stream_rpc_end(s, dir, ts);
        if (dir == P2S_C2S) {
            s->req_done = 1;
            s->req_end = ts;
        } else {
            s->resp_done = 1;
            s->resp_end = ts;
        }
        h2_stream_seq_end(c, dir, s);
        h2_stream_check_done(c, s);
    }
}

/* A complete header block blk[0..n) of direction dir (END_HEADERS seen), whose last
 * byte arrived at ts. */
void h2_stream_block_done(struct h2_conn *c, enum p2s_dir dir, const uint8_t *blk, size_t n,
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
            h2_stream_partial(b.s, "header block over the cap (not decoded)");
    } else {
        sf_err_clear(&e);
        rc = hpack_dec_block(hd, blk, n, on_field, &b, &res, &e);
        if (rc < 0) {
            h2_fail(c, dir, rc, "stream %u: %s", d->block_sid, e.msg);
            p2s_note(c->ctx, c->conn, "hpack_error", e.msg, ts);
        }
        if (b.s && (rc < 0 || res.unknown || res.capped)) {
            char why[96];

            static const char *const what[] = {"request", "request trailers", "response",
                                               "trailers", "block"};

            snprintf(why, sizeof(why), "%s HPACK: %u of %u fields unresolved", what[b.role],
                     res.unknown, res.fields);
            h2_stream_partial(b.s, res.unknown  ? why
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
void h2_stream_block_abandon(struct h2_conn *c, enum p2s_dir dir, const char *why)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s = h2_stream_find(c, d->block_sid);

    d->in_block = 0;
    d->block_over = 0;
    sf_buf_reset(&d->block);
    if (d->hd)
        hpack_dec_lost(d->hd);
    else
        d->lost = 1;
    if (s)
        h2_stream_partial(s, why);
}

/* Add a fragment to the block; decode it at END_HEADERS. */
void h2_stream_block_add(struct h2_conn *c, enum p2s_dir dir, const uint8_t *frag, size_t n,
                         int end_headers, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];

    if (end_headers && d->block.len == 0 && !d->block_over) {
        h2_stream_block_done(c, dir, frag, n, ts); /* one frame: decode in place */
        return;
    }
    if (!d->block_over && sf_buf_append(&d->block, frag, n) < 0) {
        h2_fail(c, dir, SF_E_LIMIT, "stream %u: header block over %zu bytes (not followed)",
                d->block_sid, c->lim->max_header_bytes);
        d->block_over = 1;
        sf_buf_reset(&d->block);
    }
    if (end_headers)
        h2_stream_block_done(c, dir, d->block.data, d->block.len, ts);
}

void h2_stream_block_start(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint32_t sid,
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
    d->block_seq = d->fseq;
    d->block_seq_ok = d->fseq_ok;
    sf_buf_reset(&d->block);
}

void h2_stream_adopt(struct h2_conn *c, const struct p2s_span *req)
{
    struct h2_stream *s;
    size_t cap;

    if (req == NULL || h2_stream_find(c, 1) != NULL || (s = h2_stream_new(c, 1)) == NULL)
        return; /* stream 1 already open: its frames came first and made it */
    cap = c->lim->max_field_bytes;
    if (req->method)
        s->method = stream_str(s, req->method, strlen(req->method), cap);
    if (req->authority)
        s->authority = stream_str(s, req->authority, strlen(req->authority), cap);
    if (req->path)
        s->path = stream_str(s, req->path, strlen(req->path), cap);
    s->req_seen = s->req_done = s->upgraded = 1;
    s->req_start = req->req_start_ns;
    s->req_end = req->req_end_ns;
    s->req_seq = req->req_seq;
    s->seq_ended[P2S_C2S] = req->req_seq.known;
    s->req_bytes = req->req_bytes > 0 ? req->req_bytes : 0;
    if (req->partial)
        h2_stream_partial(s,
                          req->partial_reason ? req->partial_reason : "HTTP/1.1 request partial");
    if (req->req_ctx && (s->req_ctx = malloc(sizeof(*s->req_ctx))) != NULL) {
        *s->req_ctx = *req->req_ctx;
        s->req_ctx_done = 1;
    }
    c->from_start = 1;
    c->d[P2S_C2S].max_frame_known = c->d[P2S_S2C].max_frame_known = 1;
    c->first_req = c->max_req = 1;
}

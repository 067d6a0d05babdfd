/* rpc.c - JSON-RPC 2.0 calls as spans (rpc.h).
 *
 * Requests waiting for their response are kept in one table per run context, keyed by
 * scope, direction and id: the scope is the HTTP exchange ("x CONN STREAM") or, when
 * the carrier names one, the MCP session on its server ("s ADDR PORT SESSION"); a
 * request is filed under its session when it has one, else under its exchange, and a
 * response looks in its exchange first, then in its session.  A list in arrival order
 * gives up the oldest past MAX_WAITING and ends the input's leftovers in order.
 */
#include "rpc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctx.h"
#include "sf_buf.h"
#include "sf_db_net.h"
#include "sf_http_coding.h"
#include "sf_jsonrpc.h"
#include "sf_map.h"
#include "sf_sse.h"
#include "sf_text.h"

#define MAX_WAITING 65536 /* requests waiting for their response, per input */
#define SESSION_MAX 160   /* bytes of a session id kept */

/* The request's strings a waiting call keeps (struct sf_jrpc_msg's, and the session). */
enum { S_METHOD, S_ID, S_NAME, S_TRACEPARENT, S_TRACESTATE, S_BAGGAGE, S_HINT, S_SESSION, NSTR };

/* A request waiting for its response: one allocation, its key and strings after it, so
 * that a call costs what its text is, not the reader's fixed-size fields (bounded by
 * MAX_WAITING of them). */
struct rpc_call {
    struct rpc_call *prev, *next; /* waiting, oldest first */
    uint64_t hash;
    char *key;
    size_t key_len;
    struct p2s_conn_info ci; /* the connection that carried the request (tls NULL) */
    int64_t stream_id;
    enum p2s_dir dir;
    int64_t start, end, bytes;
    double temperature, top_p;
    int64_t max_tokens, stop_sequences;
    const char *str[NSTR];
    char data[];
};

struct p2s_rpc {
    struct sf_map map;
    struct rpc_call *oldest, *newest;
    size_t n;
};

struct p2s_rpc_body {
    struct p2s_ctx *ctx;
    struct p2s_rpc_carrier x;
    char session[SESSION_MAX];
    enum p2s_dir dir;
    int kind;           /* 1 JSON, 2 SSE */
    struct sf_buf text; /* JSON: the body so far */
    struct sf_sse sse;
    int64_t first_ts;
    int lost;     /* JSON: bytes were lost; SSE: skipping to the next blank line */
    int blank;    /* SSE resync: line-end bytes seen in a row */
    int over;     /* JSON: past the limit */
    char enc[64]; /* JSON: the Content-Encoding to undo at the end, "" none */
    int mentions; /* JSON over the limit: its first part named "jsonrpc" */
    unsigned messages;
    /* the text being read: when it started and ended, its size */
    int64_t t0, t1;
    size_t bytes;
};

/* ---- content types and sessions ------------------------------------------------------ */

int p2s_rpc_query_session(const char *target, char *out, size_t cap)
{
    const char *q = target ? strchr(target, '?') : NULL;

    while (q && *q) {
        const char *k = q + 1, *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
        size_t kl = (size_t)(end - k), l;
        if (kl > 10 && (strncmp(k, "sessionId=", 10) == 0 || strncmp(k, "session_id=", 11) == 0)) {
            k = strchr(k, '=') + 1;
            l = (size_t)(end - k) < cap - 1 ? (size_t)(end - k) : cap - 1;
            sf_text_copy_plain(out, k, l, 0)[0] = 0;
            return 0;
        }
        q = amp;
    }
    return -1;
}

/* ---- the table of waiting requests ---------------------------------------------------- */

static struct p2s_rpc *table(struct p2s_ctx *ctx)
{
    if (ctx->rpc == NULL)
        ctx->rpc = calloc(1, sizeof(*ctx->rpc));
    return ctx->rpc;
}

struct lookup {
    const char *key;
    size_t len;
};

static int call_eq(const void *val, const void *arg)
{
    const struct rpc_call *c = val;
    const struct lookup *l = arg;

    return c->key_len == l->len && memcmp(c->key, l->key, l->len) == 0;
}

/* The key of (scope of x, direction, id) in buf: exchange scope when session is 0. */
static size_t key_of(char *buf, size_t cap, const struct p2s_rpc_carrier *x, const char *session,
                     enum p2s_dir dir, const char *id)
{
    const struct p2s_conn_info *ci = p2s_conn_info(x->conn);
    int l;

    if (session)
        l = snprintf(buf, cap, "s %s %u %s %d %s", ci->server_addr, ci->server_port, session,
                     (int)dir, id);
    else
        l = snprintf(buf, cap, "x %lld %lld %d %s", (long long)ci->id, (long long)x->stream_id,
                     (int)dir, id);
    return l < 0 ? 0 : (size_t)l < cap ? (size_t)l : cap - 1;
}

static void unlink_call(struct p2s_rpc *t, struct rpc_call *c)
{
    struct lookup l = {c->key, c->key_len};
    struct sf_map_slot *s = sf_map_probe(&t->map, c->hash, call_eq, &l);

    if (s->val)
        sf_map_remove(&t->map, s);
    if (c->prev)
        c->prev->next = c->next;
    else
        t->oldest = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        t->newest = c->prev;
    t->n--;
}

/* ---- spans ------------------------------------------------------------------------------ */

static void facts_of(struct sf_net_rpc *f, const struct sf_jrpc_msg *m, enum p2s_dir dir,
                     const char *session)
{
    memset(f, 0, sizeof(*f));
    f->id = m->id[0] ? m->id : NULL;
    f->direction = dir == P2S_C2S ? "c2s" : "s2c";
    f->session = session && session[0] ? session : NULL;
    f->name = m->name[0] ? m->name : NULL;
    f->temperature = m->temperature;
    f->top_p = m->top_p;
    f->max_tokens = m->max_tokens;
    f->stop_sequences = m->stop_sequences;
    f->model_hint = m->model_hint[0] ? m->model_hint : NULL;
}

/* The trace context a message carries in params._meta, as headers of the same names. */
static struct sf_tracectx_set *meta_ctx(struct p2s_ctx *ctx, const struct sf_jrpc_msg *m)
{
    static const char *const names[] = {"traceparent", "tracestate", "baggage"};
    const char *vals[] = {m->traceparent, m->tracestate, m->baggage};
    struct sf_tracectx_set *s = NULL;

    for (int i = 0; i < 3; i++) {
        if (!vals[i][0])
            continue;
        if (s == NULL && (s = p2s_set_get(ctx)) == NULL)
            return NULL;
        sf_tracectx_set_add(s, names[i], strlen(names[i]), (const uint8_t *)vals[i],
                            strlen(vals[i]));
    }
    if (s)
        sf_tracectx_set_finish(s);
    return s;
}

static void span_base(struct p2s_span *s, const struct sf_jrpc_msg *m, int64_t stream_id)
{
    memset(s, 0, sizeof(*s));
    s->stream_id = stream_id;
    s->proto = "jsonrpc";
    s->method = m && m->method[0] ? m->method : NULL;
    s->grpc_status = -1;
    s->grpc_timeout_ns = -1;
    s->req_bytes = s->resp_bytes = -1;
    s->reset_code = -1;
}

/* Emit on the connection ci; conn is the carrier being read (passed on when it is ci's). */
static void emit(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_conn_info *ci,
                 struct p2s_span *s, const struct sf_jrpc_msg *req)
{
    if (conn && p2s_conn_info(conn)->id != ci->id)
        conn = NULL;
    s->req_ctx = req ? meta_ctx(ctx, req) : NULL;
    (void)p2s_emit_span_on(ctx, conn, ci, s);
    p2s_set_put(ctx, s->req_ctx);
}

/* The request a waiting call kept, as the reader handed it on. */
static void unpack(const struct rpc_call *c, struct sf_jrpc_msg *m)
{
    char *const dst[] = {m->method,     m->id,      m->name,      m->traceparent,
                         m->tracestate, m->baggage, m->model_hint};

    memset(m, 0, sizeof(*m));
    m->kind = SF_JRPC_REQUEST;
    for (int i = 0; i < S_SESSION; i++)
        snprintf(dst[i], SF_JRPC_STR, "%s", c->str[i]);
    m->temperature = c->temperature;
    m->top_p = c->top_p;
    m->max_tokens = c->max_tokens;
    m->stop_sequences = c->stop_sequences;
}

/* What a response m, read from body rb, tells the span of its call. */
static void answer(struct sf_net_rpc *f, struct p2s_span *s, const struct sf_jrpc_msg *m,
                   const struct p2s_rpc_body *rb)
{
    f->answered = 1;
    f->has_error = m->has_error;
    f->error_code = m->error_code;
    f->error_msg = m->has_error ? m->error_msg : NULL;
    f->tool_error = m->tool_error;
    s->resp_start_ns = rb->t0;
    s->resp_end_ns = rb->t1;
    s->resp_bytes = (int64_t)rb->bytes;
    s->status = rb->dir == P2S_S2C ? rb->x.status : 0;
}

/* A request's span, answered by resp read from rb (both NULL: never; why says so). */
static void emit_call(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct rpc_call *c,
                      const struct sf_jrpc_msg *resp, const struct p2s_rpc_body *rb,
                      const char *why)
{
    struct sf_jrpc_msg req;
    struct sf_net_rpc f;
    struct p2s_span s;

    unpack(c, &req);
    span_base(&s, &req, c->stream_id);
    facts_of(&f, &req, c->dir, c->str[S_SESSION]);
    s.rpc = &f;
    s.req_start_ns = c->start;
    s.req_end_ns = c->end;
    s.req_bytes = c->bytes;
    if (resp && rb) {
        answer(&f, &s, resp, rb);
    } else {
        s.partial = 1;
        s.partial_reason = why;
    }
    emit(ctx, conn, &c->ci, &s, &req);
}

static void give_up(struct p2s_ctx *ctx, struct p2s_rpc *t, struct rpc_call *c, const char *why)
{
    unlink_call(t, c);
    emit_call(ctx, NULL, c, NULL, NULL, why);
    free(c);
}

/* ---- messages --------------------------------------------------------------------------- */

static const char *body_session(const struct p2s_rpc_body *b)
{
    return b->session[0] ? b->session : NULL;
}

static void on_request(struct p2s_rpc_body *b, const struct sf_jrpc_msg *m)
{
    struct p2s_rpc *t = table(b->ctx);
    struct rpc_call *c;
    struct sf_map_slot *slot;
    struct lookup l;
    char key[512];
    const char *src[NSTR] = {m->method,     m->id,      m->name,       m->traceparent,
                             m->tracestate, m->baggage, m->model_hint, b->session};
    size_t key_len = key_of(key, sizeof(key), &b->x, body_session(b), b->dir, m->id), need, at;

    need = key_len + 1;
    for (int i = 0; i < NSTR; i++)
        need += strlen(src[i]) + 1;
    if (t == NULL || (c = calloc(1, sizeof(*c) + need)) == NULL) {
        p2s_note(b->ctx, b->x.conn, "jsonrpc_no_memory", m->method, b->t1);
        return;
    }
    memcpy(c->data, key, key_len + 1);
    c->key = c->data;
    c->key_len = key_len;
    at = key_len + 1;
    for (int i = 0; i < NSTR; i++) {
        size_t sl = strlen(src[i]) + 1;
        memcpy(c->data + at, src[i], sl);
        c->str[i] = c->data + at;
        at += sl;
    }
    c->temperature = m->temperature;
    c->top_p = m->top_p;
    c->max_tokens = m->max_tokens;
    c->stop_sequences = m->stop_sequences;
    c->hash = sf_hash(c->key, c->key_len);
    c->ci = *p2s_conn_info(b->x.conn);
    c->ci.tls = NULL;
    c->stream_id = b->x.stream_id;
    c->dir = b->dir;
    c->start = b->t0;
    c->end = b->t1;
    c->bytes = (int64_t)b->bytes;
    l.key = c->key;
    l.len = c->key_len;
    if (sf_map_reserve(&t->map, 1) < 0) {
        free(c);
        p2s_note(b->ctx, b->x.conn, "jsonrpc_no_memory", m->method, b->t1);
        return;
    }
    slot = sf_map_probe(&t->map, c->hash, call_eq, &l);
    if (slot->val) /* the id is reused while its first request waits */
        give_up(b->ctx, t, slot->val, "no response (its id was reused)");
    if (t->n >= MAX_WAITING)
        give_up(b->ctx, t, t->oldest, "no response (too many requests waiting)");
    slot = sf_map_probe(&t->map, c->hash, call_eq, &l);
    sf_map_fill(&t->map, slot, c->hash, c);
    c->prev = t->newest;
    if (t->newest)
        t->newest->next = c;
    else
        t->oldest = c;
    t->newest = c;
    t->n++;
}

static struct rpc_call *find(struct p2s_rpc_body *b, const char *session, const char *id)
{
    struct p2s_rpc *t = b->ctx->rpc;
    enum p2s_dir req_dir = b->dir == P2S_C2S ? P2S_S2C : P2S_C2S;
    struct sf_map_slot *s;
    struct lookup l;
    char key[512];

    if (t == NULL)
        return NULL;
    l.key = key;
    l.len = key_of(key, sizeof(key), &b->x, session, req_dir, id);
    s = sf_map_probe(&t->map, sf_hash(key, l.len), call_eq, &l);
    return s->val;
}

static void on_response(struct p2s_rpc_body *b, const struct sf_jrpc_msg *m)
{
    struct rpc_call *c = find(b, NULL, m->id);
    struct sf_net_rpc f;
    struct p2s_span s;

    if (c == NULL && body_session(b))
        c = find(b, body_session(b), m->id);
    if (c) {
        unlink_call(b->ctx->rpc, c);
        emit_call(b->ctx, b->x.conn, c, m, b, NULL);
        free(c);
        return;
    }
    /* an answer to a request not seen: its direction is the request's */
    span_base(&s, NULL, b->x.stream_id);
    facts_of(&f, m, b->dir == P2S_C2S ? P2S_S2C : P2S_C2S, body_session(b));
    answer(&f, &s, m, b);
    s.rpc = &f;
    s.partial = 1;
    s.partial_reason = "request not seen";
    emit(b->ctx, b->x.conn, p2s_conn_info(b->x.conn), &s, NULL);
}

static void on_message(void *arg, const struct sf_jrpc_msg *m)
{
    struct p2s_rpc_body *b = arg;
    struct sf_net_rpc f;
    struct p2s_span s;

    b->messages++;
    switch (m->kind) {
    case SF_JRPC_REQUEST:
        on_request(b, m);
        break;
    case SF_JRPC_RESPONSE:
        on_response(b, m);
        break;
    case SF_JRPC_NOTIFICATION: /* a point in time: where its message ended */
        span_base(&s, m, b->x.stream_id);
        facts_of(&f, m, b->dir, body_session(b));
        s.rpc = &f;
        s.req_start_ns = s.req_end_ns = s.resp_start_ns = s.resp_end_ns = b->t1;
        s.req_bytes = (int64_t)b->bytes;
        emit(b->ctx, b->x.conn, p2s_conn_info(b->x.conn), &s, m);
        break;
    }
}

/* A malformed message: a span that says why and where, and an event. */
static void malformed(struct p2s_rpc_body *b, const char *what, const char *why, size_t off)
{
    struct sf_net_rpc f;
    struct p2s_span s;
    char reason[160];

    snprintf(reason, sizeof(reason), "malformed JSON-RPC: %s at byte %zu of the %s", why, off,
             what);
    p2s_note(b->ctx, b->x.conn, "jsonrpc_malformed", reason, b->t1);
    span_base(&s, NULL, b->x.stream_id);
    memset(&f, 0, sizeof(f));
    f.direction = b->dir == P2S_C2S ? "c2s" : "s2c";
    f.session = body_session(b);
    f.temperature = f.top_p = NAN;
    f.max_tokens = f.stop_sequences = -1;
    s.rpc = &f;
    s.req_start_ns = b->t0;
    s.req_end_ns = s.resp_start_ns = s.resp_end_ns = b->t1;
    s.req_bytes = (int64_t)b->bytes;
    s.partial = 1;
    s.partial_reason = reason;
    emit(b->ctx, b->x.conn, p2s_conn_info(b->x.conn), &s, NULL);
}

/* One JSON text (a body, an event's data) that ran from t0 to t1. */
static void read_text(struct p2s_rpc_body *b, const char *p, size_t n, int64_t t0, int64_t t1,
                      const char *what)
{
    struct sf_jrpc_err e;

    b->t0 = t0;
    b->t1 = t1;
    b->bytes = n;
    if (sf_jrpc_parse(p, n, on_message, b, &e) < 0 && sf_jrpc_mentioned(p, n))
        malformed(b, what, e.why, e.off);
}

/* ---- bodies ------------------------------------------------------------------------------ */

static void on_event(void *arg, const struct sf_sse_event *ev)
{
    struct p2s_rpc_body *b = arg;
    size_t i = 0;

    if (strcmp(ev->type, "endpoint") == 0) { /* the SSE transport's: POST here, ?sessionId= */
        char uri[512];
        size_t l = ev->len < sizeof(uri) - 1 ? ev->len : sizeof(uri) - 1;
        memcpy(uri, ev->data, l);
        uri[l] = 0;
        (void)p2s_rpc_query_session(uri, b->session, sizeof(b->session));
        return;
    }
    if (strcmp(ev->type, "message") != 0)
        return;
    while (i < ev->len && (ev->data[i] == ' ' || ev->data[i] == '\n' || ev->data[i] == '\t'))
        i++;
    if (i == ev->len) /* a priming event (an id with empty data) */
        return;
    if (ev->over) {
        if (sf_jrpc_mentioned(ev->data, ev->len))
            p2s_note(b->ctx, b->x.conn, "jsonrpc_over_limit", "an event", ev->last_ts);
        return;
    }
    read_text(b, ev->data, ev->len, ev->first_ts, ev->last_ts, "event");
}

/* A coding that is only identity needs no decoding. */
static int identity_only(const char *v, size_t n)
{
    size_t pos = 0, l;
    const char *t;

    while (sf_text_list_next(v, n, &pos, &t, &l))
        if (l != 8 || strncasecmp(t, "identity", 8) != 0)
            return 0;
    return 1;
}

struct p2s_rpc_body *p2s_rpc_body_open(struct p2s_ctx *ctx, const struct p2s_rpc_carrier *x,
                                       enum p2s_dir dir, int kind, const char *enc, size_t enc_len)
{
    struct p2s_rpc_body *b;

    if (kind == 0)
        return NULL;
    if (enc && identity_only(enc, enc_len))
        enc = NULL;
    if (enc && (kind == 2 || enc_len >= sizeof(b->enc) || !sf_http_coding_known(enc, enc_len))) {
        char what[96];
        snprintf(what, sizeof(what), "%s with Content-Encoding %.*s",
                 kind == 2 ? "an event stream" : "a body", (int)(enc_len < 48 ? enc_len : 48), enc);
        p2s_note(ctx, x->conn, "jsonrpc_encoded_body", what, ctx->pkt_ts);
        return NULL;
    }
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return NULL;
    if (enc)
        sf_text_copy_plain(b->enc, enc, enc_len, 0)[0] = 0;
    b->ctx = ctx;
    b->x = *x;
    b->x.session = NULL;
    if (x->session) {
        size_t l = strlen(x->session);
        if (l >= sizeof(b->session))
            l = sizeof(b->session) - 1;
        sf_text_copy_plain(b->session, x->session, l, 0)[0] = 0;
    }
    b->dir = dir;
    b->kind = kind;
    b->first_ts = -1;
    if (kind == 2)
        sf_sse_init(&b->sse, ctx->lim.max_rpc_bytes);
    else
        sf_buf_init(&b->text, ctx->lim.max_rpc_bytes);
    return b;
}

/* SSE after a gap: skip to the end of the next blank line, where an event starts. */
static size_t resync_sse(struct p2s_rpc_body *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            if (++b->blank == 2) {
                b->lost = 0;
                return i + 1;
            }
        } else if (p[i] != '\r') {
            b->blank = 0;
        }
    }
    return n;
}

void p2s_rpc_body_data(struct p2s_rpc_body *b, const uint8_t *p, size_t n, int64_t ts)
{
    if (b == NULL || n == 0)
        return;
    if (b->first_ts < 0)
        b->first_ts = ts;
    if (b->kind == 2) {
        size_t k = b->lost ? resync_sse(b, p, n) : 0;
        sf_sse_feed(&b->sse, p + k, n - k, ts, on_event, b);
        return;
    }
    if (b->lost || b->over)
        return;
    if (sf_buf_append(&b->text, p, n) < 0) {
        b->over = 1;
        b->mentions = sf_jrpc_mentioned((const char *)b->text.data, b->text.len);
        sf_buf_free(&b->text);
    }
}

void p2s_rpc_body_gap(struct p2s_rpc_body *b)
{
    if (b == NULL)
        return;
    b->lost = 1;
    if (b->kind == 2) { /* the event in progress is dropped */
        size_t max = b->sse.max;
        sf_sse_free(&b->sse);
        sf_sse_init(&b->sse, max);
        b->blank = 0;
    }
}

/* A JSON body with a Content-Encoding: undone, bounded by the same limit, then read; a
 * body that does not decode is said (an event). */
static void read_decoded(struct p2s_rpc_body *b, int64_t ts)
{
    struct sf_buf out;
    struct sf_err e;
    int rc;

    sf_buf_init(&out, b->ctx->lim.max_rpc_bytes);
    sf_err_clear(&e);
    rc = sf_http_decode(b->enc, strlen(b->enc), b->text.data, b->text.len, &out, &e);
    if (rc == 0)
        read_text(b, (const char *)out.data, out.len, b->first_ts, ts, "body");
    else
        p2s_note(b->ctx, b->x.conn, rc == SF_E_LIMIT ? "jsonrpc_over_limit" : "jsonrpc_bad_coding",
                 e.msg, ts);
    sf_buf_free(&out);
}

unsigned p2s_rpc_body_end(struct p2s_rpc_body *b, int64_t ts)
{
    unsigned n;

    if (b == NULL)
        return 0;
    if (b->kind == 2) {
        sf_sse_free(&b->sse);
    } else {
        const char *p = (const char *)b->text.data;
        if (b->over && b->mentions)
            p2s_note(b->ctx, b->x.conn, "jsonrpc_over_limit", "a body", ts);
        else if (b->lost && sf_jrpc_mentioned(p, b->text.len))
            p2s_note(b->ctx, b->x.conn, "jsonrpc_lost_in_gap", "a body", ts);
        else if (!b->lost && !b->over && b->text.len && b->enc[0])
            read_decoded(b, ts);
        else if (!b->lost && !b->over && b->text.len)
            read_text(b, p, b->text.len, b->first_ts, ts, "body");
        sf_buf_free(&b->text);
    }
    n = b->messages;
    free(b);
    return n;
}

void p2s_rpc_flush(struct p2s_ctx *ctx)
{
    struct p2s_rpc *t = ctx->rpc;

    if (t == NULL)
        return;
    while (t->oldest)
        give_up(ctx, t, t->oldest, "no response");
    sf_map_free(&t->map);
    free(t);
    ctx->rpc = NULL;
}

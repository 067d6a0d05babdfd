/* out_tape.c - parallel ingest's tape (out.h): a worker's records in chunks, replayed
 * in input order into the real writer.
 *
 * A record is a type byte and its fields: integers as 8 bytes, strings as a 4-byte
 * length (UINT32_MAX: NULL) and the bytes with their NUL, structs as their bytes with
 * the strings they point to after them.  Records never straddle two chunks, so the
 * replay hands out strings that point into the chunk.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "sf_db_net.h"

#define CHUNK (1u << 20) /* shipped once this full */

enum rec {
    R_SRC_BEGIN = 1,
    R_SRC_END,
    R_CONN_OPEN,
    R_CONN_CLOSE,
    R_CONN_TLS,
    R_EVENT,
    R_SPAN,
    R_SAY,
    R_LINE,
};

/* The string members of the structs on the tape, in tape order. */
static const size_t span_strs[] = {
    offsetof(struct p2s_span, proto),        offsetof(struct p2s_span, method),
    offsetof(struct p2s_span, authority),    offsetof(struct p2s_span, path),
    offsetof(struct p2s_span, grpc_service), offsetof(struct p2s_span, grpc_method),
    offsetof(struct p2s_span, grpc_message), offsetof(struct p2s_span, partial_reason),
};
static const size_t rpc_strs[] = {
    offsetof(struct sf_net_rpc, id),        offsetof(struct sf_net_rpc, direction),
    offsetof(struct sf_net_rpc, session),   offsetof(struct sf_net_rpc, name),
    offsetof(struct sf_net_rpc, error_msg), offsetof(struct sf_net_rpc, model_hint),
};
static const size_t tls_strs[] = {
    offsetof(struct sf_net_tls, version),    offsetof(struct sf_net_tls, cipher),
    offsetof(struct sf_net_tls, sni),        offsetof(struct sf_net_tls, alpn),
    offsetof(struct sf_net_tls, early_data), offsetof(struct sf_net_tls, decrypt_error),
    offsetof(struct sf_net_tls, ctx_hash),   offsetof(struct sf_net_tls, info),
};
#define NSTRS(a) (sizeof(a) / sizeof(a[0]))

/* ---- writing ------------------------------------------------------------------------ */

void p2s_chunk_free(struct p2s_chunk *c)
{
    if (c)
        free(c->b);
    free(c);
}

/* Room for n more bytes in the current chunk (a new one, or a bigger one); 0 or -1. */
static __attribute__((noinline)) int grow(struct p2s_tape *t, size_t n)
{
    struct p2s_chunk *c = t->cur;
    size_t cap;
    unsigned char *b;

    if (t->nomem)
        return -1;
    if (c == NULL && (c = t->cur = calloc(1, sizeof(*c))) == NULL) {
        t->nomem = 1;
        return -1;
    }
    cap = c->cap ? c->cap : CHUNK + CHUNK / 4;
    while (cap - c->len < n)
        cap *= 2;
    if ((b = realloc(c->b, cap)) == NULL) {
        t->nomem = 1;
        return -1;
    }
    c->b = b;
    c->cap = cap;
    return 0;
}

/* Inline: most fields are a few bytes of known size. */
static inline void put(struct p2s_tape *t, const void *p, size_t n)
{
    struct p2s_chunk *c = t->cur;

    if (__builtin_expect(c == NULL || c->cap - c->len < n, 0)) {
        if (grow(t, n) < 0)
            return;
        c = t->cur;
    }
    memcpy(c->b + c->len, p, n);
    c->len += n;
}

static void put_i64(struct p2s_tape *t, int64_t v)
{
    put(t, &v, sizeof(v));
}

static void put_str(struct p2s_tape *t, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;

    put(t, &n, sizeof(n));
    if (s)
        put(t, s, (size_t)n + 1);
}

static void put_strs(struct p2s_tape *t, const void *base, const size_t *offs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_str(t, *(const char *const *)(const void *)((const char *)base + offs[i]));
}

static void put_tls(struct p2s_tape *t, const struct sf_net_tls *tls)
{
    put_i64(t, tls != NULL);
    if (tls == NULL)
        return;
    put(t, tls, sizeof(*tls));
    put_strs(t, tls, tls_strs, NSTRS(tls_strs));
}

/* The connection's facts (app_proto and close are static strings: kept as pointers). */
static void put_info(struct p2s_tape *t, const struct p2s_conn_info *i)
{
    put(t, i, sizeof(*i));
    put_tls(t, i->tls);
}

static void put_set(struct p2s_tape *t, const struct sf_tracectx_set *s)
{
    put_i64(t, s ? s->n : -1);
    for (int k = 0; s && k < s->n; k++) {
        const struct sf_tracectx *c = &s->ctx[k];
        put(t, c, offsetof(struct sf_tracectx, error));
        put_str(t, c->error);
        put_str(t, c->raw);
        put_i64(t, c->raw_truncated);
        put_str(t, c->tracestate);
        put_i64(t, c->tracestate_truncated);
    }
}

/* End of a record: ship the chunk once it is full. */
static int end(struct p2s_tape *t)
{
    if (t->nomem)
        return SF_E_NOMEM;
    if (t->cur && t->cur->len >= CHUNK) {
        t->ship(t->arg, t->cur);
        t->cur = NULL;
    }
    return 0;
}

static void type(struct p2s_tape *t, enum rec r)
{
    unsigned char b = (unsigned char)r;

    put(t, &b, 1);
}

int p2s_tape_source_begin(struct p2s_tape *t, const char *path, const char *sha256, uint64_t bytes)
{
    type(t, R_SRC_BEGIN);
    put_str(t, path);
    put_str(t, sha256);
    put_i64(t, (int64_t)bytes);
    return end(t);
}

int p2s_tape_source_end(struct p2s_tape *t, const char *tool, const char *file, const char *sha256,
                        uint64_t bytes, const char *error, uint64_t packets)
{
    type(t, R_SRC_END);
    put_str(t, tool);
    put_str(t, file);
    put_str(t, sha256);
    put_i64(t, (int64_t)bytes);
    put_str(t, error);
    put_i64(t, (int64_t)packets);
    return end(t);
}

int p2s_tape_conn(struct p2s_tape *t, int open, struct p2s_conn_info *i)
{
    if (open)
        i->id = ++t->conn_seq;
    type(t, open ? R_CONN_OPEN : R_CONN_CLOSE);
    put_info(t, i);
    return end(t);
}

int p2s_tape_conn_tls(struct p2s_tape *t, int64_t conn_id, const struct sf_net_tls *tls)
{
    type(t, R_CONN_TLS);
    put_i64(t, conn_id);
    put_tls(t, tls);
    return end(t);
}

int p2s_tape_event(struct p2s_tape *t, int64_t conn_id, int64_t ts_ns, const char *kind,
                   const char *detail)
{
    type(t, R_EVENT);
    put_i64(t, conn_id);
    put_i64(t, ts_ns);
    put_str(t, kind);
    put_str(t, detail);
    return end(t);
}

int p2s_tape_span(struct p2s_tape *t, const struct p2s_conn_info *i, const struct p2s_span *s,
                  const struct sf_tracectx *pref)
{
    type(t, R_SPAN);
    put_info(t, i);
    put(t, s, sizeof(*s));
    put_strs(t, s, span_strs, NSTRS(span_strs));
    put_i64(t, s->rpc != NULL);
    if (s->rpc) {
        put(t, s->rpc, sizeof(*s->rpc));
        put_strs(t, s->rpc, rpc_strs, NSTRS(rpc_strs));
    }
    put_set(t, s->req_ctx);
    put_set(t, s->resp_ctx);
    put_i64(t, pref ? pref - s->req_ctx->ctx : -1);
    return end(t);
}

int p2s_tape_say(struct p2s_tape *t, int capped, const char *line)
{
    type(t, R_SAY);
    put_i64(t, capped);
    put_str(t, line);
    return end(t);
}

int p2s_tape_line(struct p2s_tape *t, int64_t conn_id, const char *line, size_t n, size_t src_at)
{
    type(t, R_LINE);
    put_i64(t, conn_id);
    put_i64(t, (int64_t)src_at);
    put_i64(t, (int64_t)n);
    put(t, line, n);
    return end(t);
}

int p2s_tape_end(struct p2s_tape *t)
{
    if (t->cur && !t->nomem)
        t->ship(t->arg, t->cur);
    else
        p2s_chunk_free(t->cur);
    t->cur = NULL;
    return t->nomem ? SF_E_NOMEM : 0;
}

/* ---- replay ------------------------------------------------------------------------- */

struct rd {
    const unsigned char *p, *end;
};

static inline void get(struct rd *d, void *out, size_t n)
{
    memcpy(out, d->p, n);
    d->p += n;
}

static int64_t get_i64(struct rd *d)
{
    int64_t v;

    get(d, &v, sizeof(v));
    return v;
}

static const char *get_str(struct rd *d)
{
    const char *s;
    uint32_t n;

    get(d, &n, sizeof(n));
    if (n == UINT32_MAX)
        return NULL;
    s = (const char *)d->p;
    d->p += (size_t)n + 1;
    return s;
}

static void get_strs(struct rd *d, void *base, const size_t *offs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *(const char **)(void *)((char *)base + offs[i]) = get_str(d);
}

static const struct sf_net_tls *get_tls(struct rd *d, struct sf_net_tls *tls)
{
    if (get_i64(d) == 0)
        return NULL;
    get(d, tls, sizeof(*tls));
    get_strs(d, tls, tls_strs, NSTRS(tls_strs));
    return tls;
}

static void get_info(struct rd *d, struct p2s_conn_info *i, struct sf_net_tls *tls)
{
    get(d, i, sizeof(*i));
    i->tls = get_tls(d, tls);
}

/* A string back into its char array (it came from one of the same size). */
static void get_into(struct rd *d, char *dst, size_t cap)
{
    const char *s = get_str(d);
    size_t n = s ? strnlen(s, cap - 1) : 0;

    memcpy(dst, s ? s : "", n);
    dst[n] = 0;
}

static struct sf_tracectx_set *get_set(struct rd *d, struct sf_tracectx_set *s)
{
    int64_t n = get_i64(d);

    if (n < 0)
        return NULL;
    s->n = (int)n;
    for (int k = 0; k < s->n; k++) {
        struct sf_tracectx *c = &s->ctx[k];
        get(d, c, offsetof(struct sf_tracectx, error));
        get_into(d, c->error, sizeof(c->error));
        get_into(d, c->raw, sizeof(c->raw));
        c->raw_truncated = (int)get_i64(d);
        get_into(d, c->tracestate, sizeof(c->tracestate));
        c->tracestate_truncated = (int)get_i64(d);
    }
    return s;
}

/* The id the real writer gave connection number `local` of this input. */
static int64_t id_of(const struct p2s_replay *r, int64_t local)
{
    return local >= 1 && (size_t)local <= r->nids ? r->ids[local - 1] : 0;
}

static int keep_id(struct p2s_replay *r, int64_t local, int64_t id)
{
    if ((size_t)local > r->nids) {
        int64_t *ids = realloc(r->ids, (size_t)local * 2 * sizeof(*ids));
        if (ids == NULL)
            return SF_E_NOMEM;
        memset(ids + r->nids, 0, ((size_t)local * 2 - r->nids) * sizeof(*ids));
        r->ids = ids;
        r->nids = (size_t)local * 2;
    }
    r->ids[local - 1] = id;
    return 0;
}

/* A writer call failed: the database.  Said once, then the input's records are dropped. */
static void failed(struct p2s_replay *r, const struct sf_err *err)
{
    char line[SF_ERR_MSG_MAX + 64];

    snprintf(line, sizeof(line), "%s: database: %s", r->tool, err->msg);
    r->say(r->arg, 0, line);
    r->rc = SF_E_DB;
    r->skip = 1;
}

static void replay_source(struct p2s_replay *r, struct rd *d, int begin)
{
    const char *tool, *file, *path, *sha, *error;
    char line[SF_ERR_MSG_MAX + 512];
    struct sf_err err;
    int64_t bytes, packets;
    int rc;

    sf_err_clear(&err);
    if (begin) {
        path = get_str(d);
        sha = get_str(d);
        bytes = get_i64(d);
        if (r->skip)
            return;
        rc = p2s_out_source_begin(r->out, path, sha, (uint64_t)bytes, &err);
        if (rc == SF_E_DUP && !r->quiet) {
            snprintf(line, sizeof(line), "%s: %s: %s", r->tool,
                     strcmp(path, "-") == 0 ? "<stdin>" : path, err.msg);
            r->say(r->arg, 0, line);
        }
        if (rc < 0) {
            r->rc = rc;
            r->skip = 1;
            if (rc != SF_E_DUP) {
                sf_err_format(&err, r->tool, path, line, sizeof(line));
                r->say(r->arg, 0, line);
            }
        }
        return;
    }
    tool = get_str(d);
    file = get_str(d);
    sha = get_str(d);
    bytes = get_i64(d);
    error = get_str(d);
    packets = get_i64(d);
    if (r->rc == SF_E_DUP)
        return;
    rc = p2s_out_source_end(r->out, tool, file, sha, (uint64_t)bytes, error, (uint64_t)packets,
                            &err);
    if (rc < 0) {
        err.code = SF_E_DB;
        sf_err_format(&err, tool, file, line, sizeof(line));
        r->say(r->arg, 0, line);
        r->rc = SF_E_DB;
    }
}

static int replay_conn(struct p2s_replay *r, struct rd *d, enum rec t)
{
    struct p2s_conn_info i;
    struct sf_net_tls tls;
    struct sf_err err;
    int64_t local;
    int rc;

    get_info(d, &i, &tls);
    if (r->skip)
        return 0;
    sf_err_clear(&err);
    local = i.id;
    if (t == R_CONN_OPEN) {
        rc = p2s_out_conn_open(r->out, &i, &err);
        if (keep_id(r, local, i.id) < 0)
            return SF_E_NOMEM;
    } else {
        i.id = id_of(r, local);
        rc = p2s_out_conn_close(r->out, &i, &err);
    }
    if (rc < 0)
        failed(r, &err);
    return 0;
}

static void replay_span(struct p2s_replay *r, struct rd *d)
{
    struct p2s_conn_info i;
    struct sf_net_tls tls;
    struct sf_net_rpc rpc;
    struct p2s_span s;
    struct sf_err err;
    int64_t pref;

    get_info(d, &i, &tls);
    get(d, &s, sizeof(s));
    get_strs(d, &s, span_strs, NSTRS(span_strs));
    s.rpc = NULL;
    if (get_i64(d)) {
        get(d, &rpc, sizeof(rpc));
        get_strs(d, &rpc, rpc_strs, NSTRS(rpc_strs));
        s.rpc = &rpc;
    }
    s.req_ctx = get_set(d, r->sets[0]);
    s.resp_ctx = get_set(d, r->sets[1]);
    pref = get_i64(d);
    if (r->skip)
        return;
    i.id = id_of(r, i.id);
    sf_err_clear(&err);
    if (p2s_out_span(r->out, &i, &s, pref >= 0 && s.req_ctx ? &s.req_ctx->ctx[pref] : NULL, &err) <
        0)
        failed(r, &err);
}

static void replay_line(struct p2s_replay *r, struct rd *d)
{
    int64_t id = get_i64(d), at = get_i64(d), n = get_i64(d);
    const char *line = (const char *)d->p;

    d->p += n;
    if (!r->skip)
        p2s_out_line(r->out, id_of(r, id), line, (size_t)n, (size_t)at);
}

static void replay_small(struct p2s_replay *r, struct rd *d, enum rec t)
{
    struct sf_net_tls tls;
    const struct sf_net_tls *tp;
    const char *kind, *detail;
    struct sf_err err;
    int64_t id, ts, capped;
    int rc = 0;

    sf_err_clear(&err);
    if (t == R_SAY) {
        capped = get_i64(d);
        detail = get_str(d);
        if (r->rc != SF_E_DUP)
            r->say(r->arg, (int)capped, detail);
        return;
    }
    id = get_i64(d);
    if (t == R_CONN_TLS) {
        tp = get_tls(d, &tls);
        if (!r->skip && tp)
            rc = p2s_out_conn_tls(r->out, id_of(r, id), tp, &err);
    } else {
        ts = get_i64(d);
        kind = get_str(d);
        detail = get_str(d);
        if (!r->skip)
            rc = p2s_out_event(r->out, id_of(r, id), ts, kind, detail, &err);
    }
    if (rc < 0)
        failed(r, &err);
}

int p2s_replay_chunk(struct p2s_replay *r, const struct p2s_chunk *c)
{
    struct rd d = {c->b, c->b + c->len};

    for (int k = 0; k < 2; k++)
        if (r->sets[k] == NULL && (r->sets[k] = malloc(sizeof(*r->sets[k]))) == NULL)
            return SF_E_NOMEM;
    while (d.p < d.end) {
        enum rec t = (enum rec) * d.p++;
        switch (t) {
        case R_SRC_BEGIN:
        case R_SRC_END:
            replay_source(r, &d, t == R_SRC_BEGIN);
            break;
        case R_CONN_OPEN:
        case R_CONN_CLOSE:
            if (replay_conn(r, &d, t) < 0)
                return SF_E_NOMEM;
            break;
        case R_SPAN:
            replay_span(r, &d);
            break;
        case R_LINE:
            replay_line(r, &d);
            break;
        default:
            replay_small(r, &d, t);
            break;
        }
    }
    return 0;
}

void p2s_replay_free(struct p2s_replay *r)
{
    free(r->ids);
    free(r->sets[0]);
    free(r->sets[1]);
    r->ids = NULL;
    r->sets[0] = r->sets[1] = NULL;
    r->nids = 0;
}

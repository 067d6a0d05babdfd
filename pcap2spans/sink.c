/* sink.c - where spans go: the database (lib/sf_db_net.c) and/or NDJSON on stdout,
 * plus the run context's helpers (limits, error reports, notes, the summary).
 *
 * NDJSON: one object per span, keys named as the spans columns (DESIGN.md), then the
 * connection's columns known at that time and source_id (the database row, or the
 * input's 1-based position without a database), then "contexts": [...] with the
 * contexts columns.  Unknown values are null.  Non-ASCII bytes in strings are written as
 * \u00XX (each byte as a Latin-1 code point), so every line is valid JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "p2s.h"
#include "sf_db.h"
#include "sf_db_net.h"

#define MAX_PRINTED_ERRORS 100

/* Output is built in the sink's buffer (1 MiB) and written with fwrite when it fills,
 * so that a span costs a few memcpy calls and no printf. */
#define JW_CAP (1u << 20)

struct jw {
    char *buf;
    size_t len, cap;
};

struct p2s_sink {
    struct sf_db *db;
    int ndjson;
    struct jw out;
    int64_t conn_seq;
    const char *fmt[SF_CTX_NFORMATS]; /* format names as JSON strings, with their lengths */
    size_t fmt_len[SF_CTX_NFORMATS];
    char fmt_buf[SF_CTX_NFORMATS][32];
    int failed; /* a database write failed: the run stops */
    struct sf_err db_err;
};

/* ---- context ---------------------------------------------------------------------- */

void p2s_limits_default(struct p2s_limits *l)
{
    l->max_flows = 100000;
    l->max_ooo_bytes = 1u << 20;
    l->max_header_bytes = 64u << 10;
    l->max_streams = 1000;
    l->max_field_bytes = 64u << 10;
    l->max_hpack_table = 64u << 10;
    l->idle_timeout_ns = 300 * INT64_C(1000000000);
}

const struct p2s_limits *p2s_limits(const struct p2s_ctx *ctx)
{
    return &ctx->lim;
}

int p2s_ctx_init(struct p2s_ctx *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->tool = "pcap2spans";
    p2s_limits_default(&ctx->lim);
    sf_arena_init(&ctx->pkt, 64u << 10, 64u << 20);
    if ((ctx->tcp = tcp_new()) == NULL)
        return SF_E_NOMEM;
    return 0;
}

void p2s_ctx_free(struct p2s_ctx *ctx)
{
    tcp_free(ctx, ctx->tcp);
    ctx->tcp = NULL;
    sf_arena_free(&ctx->pkt);
    while (ctx->set_pool_n > 0)
        free(ctx->set_pool[--ctx->set_pool_n]);
}

struct sf_tracectx_set *p2s_set_get(struct p2s_ctx *ctx)
{
    struct sf_tracectx_set *s =
        ctx->set_pool_n > 0 ? ctx->set_pool[--ctx->set_pool_n] : malloc(sizeof(*s));

    if (s)
        sf_tracectx_set_init(s);
    return s;
}

void p2s_set_put(struct p2s_ctx *ctx, struct sf_tracectx_set *set)
{
    if (set == NULL)
        return;
    if (ctx->set_pool_n < P2S_SET_POOL)
        ctx->set_pool[ctx->set_pool_n++] = set;
    else
        free(set);
}

void p2s_report(struct p2s_ctx *ctx, struct sf_err *err)
{
    char line[SF_ERR_MSG_MAX + 256];

    err->unit = "packet";
    err->unit_no = ctx->pkt_no;
    err->off = ctx->pkt_off;
    ctx->st.errors++;
    if (ctx->strict)
        ctx->stop = 1;
    if (ctx->errors_printed >= MAX_PRINTED_ERRORS)
        return;
    sf_err_format(err, ctx->tool, ctx->file, line, sizeof(line));
    fprintf(stderr, "%s\n", line);
    if (++ctx->errors_printed == MAX_PRINTED_ERRORS)
        fprintf(stderr, "%s: further errors are only counted\n", ctx->tool);
}

/* ---- notes and connections -------------------------------------------------------- */

static void db_failed(struct p2s_ctx *ctx, struct sf_err *err)
{
    struct p2s_sink *k = ctx->sink;

    if (!k->failed) {
        k->failed = 1;
        k->db_err = *err;
        fprintf(stderr, "%s: database: %s\n", ctx->tool, err->msg);
    }
    ctx->st.errors++;
    ctx->stop = 1;
}

void p2s_note(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *kind, const char *detail,
              int64_t ts_ns)
{
    struct sf_err err;
    int i;

    for (i = 0; i < P2S_NOTE_KINDS && ctx->notes[i].kind; i++)
        if (ctx->notes[i].kind == kind || strcmp(ctx->notes[i].kind, kind) == 0)
            break;
    if (i < P2S_NOTE_KINDS) {
        ctx->notes[i].kind = kind;
        ctx->notes[i].n++;
    }
    if (conn && ctx->sink && ctx->sink->db && !ctx->sink->failed) {
        sf_err_clear(&err);
        if (sf_db_net_event(ctx->sink->db, p2s_conn_id(conn), ts_ns, kind, detail, &err) < 0)
            db_failed(ctx, &err);
    }
}

static void net_conn(struct p2s_ctx *ctx, const struct p2s_conn_info *i, struct sf_net_conn *c)
{
    c->source_id = ctx->source_id;
    c->client_addr = i->client_addr;
    c->server_addr = i->server_addr;
    c->client_port = i->client_port;
    c->server_port = i->server_port;
    c->app_proto = i->app_proto;
    c->first_ns = i->first_ns;
    c->last_ns = i->last_ns;
    c->bytes_c2s = (int64_t)i->bytes[0];
    c->bytes_s2c = (int64_t)i->bytes[1];
    c->gaps = (int64_t)i->gaps;
    c->gap_bytes = (int64_t)i->gap_bytes;
    c->close = i->close;
}

void sink_conn_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct p2s_conn_info *i = (struct p2s_conn_info *)p2s_conn_info(conn);
    struct p2s_sink *k = ctx->sink;
    struct sf_net_conn c;
    struct sf_err err;

    if (k == NULL) {
        i->id = (int64_t)ctx->st.connections;
        return;
    }
    i->id = ++k->conn_seq;
    if (k->db && !k->failed) {
        net_conn(ctx, i, &c);
        sf_err_clear(&err);
        if (sf_db_net_conn_insert(k->db, &c, &i->id, &err) < 0)
            db_failed(ctx, &err);
    }
}

void sink_conn_tls(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct sf_net_tls *tls)
{
    struct p2s_sink *k = ctx->sink;
    struct sf_err err;

    if (k == NULL || k->db == NULL || k->failed)
        return;
    sf_err_clear(&err);
    if (sf_db_net_conn_tls(k->db, p2s_conn_id(conn), tls, &err) < 0)
        db_failed(ctx, &err);
}

void sink_conn_close(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct p2s_sink *k = ctx->sink;
    struct sf_net_conn c;
    struct sf_err err;

    if (k == NULL || k->db == NULL || k->failed)
        return;
    net_conn(ctx, p2s_conn_info(conn), &c);
    sf_err_clear(&err);
    if (sf_db_net_conn_update(k->db, p2s_conn_id(conn), &c, &err) < 0)
        db_failed(ctx, &err);
}

/* ---- NDJSON ----------------------------------------------------------------------- */

static void jw_flush(struct jw *w)
{
    if (w->len)
        fwrite(w->buf, 1, w->len, stdout);
    w->len = 0;
}

static void jw_put_slow(struct jw *w, const char *s, size_t n)
{
    jw_flush(w);
    if (n > w->cap)
        fwrite(s, 1, n, stdout);
    else {
        memcpy(w->buf, s, n);
        w->len = n;
    }
}

static inline void jw_put(struct jw *w, const char *s, size_t n)
{
    if (__builtin_expect(w->cap - w->len < n, 0)) {
        jw_put_slow(w, s, n);
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

#define JW_LIT(w, lit) jw_put((w), (lit), sizeof(lit) - 1)

/* 1 for bytes that need escaping in a JSON string (and non-ASCII, see the file comment). */
static inline int j_escape(unsigned char c)
{
    return (unsigned char)(c - 0x20) >= 0x5f || c == '"' || c == '\\';
}

#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Nonzero when one of the 8 bytes of x is zero (exact as a yes/no answer). */
static inline uint64_t has_zero(uint64_t x)
{
    return (x - ONES) & ~x & HIGHS;
}

/* Nonzero when one of the 8 bytes of x needs escaping (see j_escape). */
static inline uint64_t needs_escape8(uint64_t x)
{
    return ((x - ONES * 0x20) & ~x & HIGHS) | (x & HIGHS) | has_zero(x ^ (ONES * 0x7f)) |
           has_zero(x ^ (ONES * '"')) | has_zero(x ^ (ONES * '\\'));
}

/* 1 when s[0..n) needs no escaping (8 bytes per step). */
static int j_clean(const char *s, size_t n)
{
    uint64_t x, acc = 0;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        acc |= needs_escape8(x);
    }
    if (acc)
        return 0;
    for (; i < n; i++)
        if (j_escape((unsigned char)s[i]))
            return 0;
    return 1;
}

/* A string known to need no escaping (static names), or null. */
static void j_plain(struct jw *w, const char *s)
{
    if (s == NULL) {
        jw_put(w, "null", 4);
        return;
    }
    jw_put(w, "\"", 1);
    jw_put(w, s, strlen(s));
    jw_put(w, "\"", 1);
}

/* A hex id held in a char[width + 1] (width a multiple of 8): the full width in one
 * copy when it has no NUL before s[width], else as j_plain.  "" is null. */
static inline void j_id(struct jw *w, const char *s, size_t width)
{
    uint64_t x, acc = 0;

    if (s[0] == 0) {
        JW_LIT(w, "null");
        return;
    }
    for (size_t i = 0; i < width; i += 8) {
        memcpy(&x, s + i, 8);
        acc |= has_zero(x);
    }
    if (acc || s[width] != 0 || w->cap - w->len < width + 2) {
        j_plain(w, s);
        return;
    }
    w->buf[w->len] = '"';
    memcpy(w->buf + w->len + 1, s, width);
    w->buf[w->len + 1 + width] = '"';
    w->len += width + 2;
}

static void j_str_esc(struct jw *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run;

    for (;;) {
        run = s;
        while (!j_escape((unsigned char)*s))
            s++;
        jw_put(w, run, (size_t)(s - run));
        if (*s == 0)
            break;
        if (*s == '"' || *s == '\\') {
            char e[2] = {'\\', *s};
            jw_put(w, e, 2);
        } else {
            unsigned char c = (unsigned char)*s;
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            jw_put(w, e, 6);
        }
        s++;
    }
}

static void j_str(struct jw *w, const char *s)
{
    size_t n;

    if (s == NULL) {
        JW_LIT(w, "null");
        return;
    }
    n = strlen(s);
    if (__builtin_expect(w->cap - w->len < n + 2, 0) || !j_clean(s, n)) {
        JW_LIT(w, "\"");
        j_str_esc(w, s);
        JW_LIT(w, "\"");
        return;
    }
    w->buf[w->len] = '"';
    memcpy(w->buf + w->len + 1, s, n);
    w->buf[w->len + 1 + n] = '"';
    w->len += n + 2;
}

static void j_int(struct jw *w, int64_t v)
{
    static const char d2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    static const uint64_t p10[20] = {1,
                                     10,
                                     100,
                                     1000,
                                     10000,
                                     100000,
                                     1000000,
                                     10000000,
                                     100000000,
                                     1000000000,
                                     10000000000,
                                     100000000000,
                                     1000000000000,
                                     10000000000000,
                                     100000000000000,
                                     1000000000000000,
                                     10000000000000000,
                                     100000000000000000,
                                     1000000000000000000,
                                     UINT64_C(10000000000000000000)};
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t nd = 1;
    char *p;

    if (w->cap - w->len < 24)
        jw_flush(w);
    p = w->buf + w->len;
    if (v < 0)
        *p++ = '-';
    if (u < 10) {
        *p++ = (char)('0' + u);
        w->len = (size_t)(p - w->buf);
        return;
    }
    while (nd < 20 && u >= p10[nd])
        nd++;
    p += nd;
    w->len = (size_t)(p - w->buf);
    while (u >= 100) {
        p -= 2;
        memcpy(p, d2 + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, d2 + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
}

/* key: a literal like ",\"status\":" */
#define J_STR(w, key, v)                                                                           \
    do {                                                                                           \
        JW_LIT(w, key);                                                                            \
        j_str(w, v);                                                                               \
    } while (0)
#define J_PLAIN(w, key, v)                                                                         \
    do {                                                                                           \
        JW_LIT(w, key);                                                                            \
        j_plain(w, v);                                                                             \
    } while (0)
/* an integer, or null when v == nul */
#define J_INT(w, key, v, nul)                                                                      \
    do {                                                                                           \
        int64_t v_ = (v);                                                                          \
        JW_LIT(w, key);                                                                            \
        if (v_ == (nul))                                                                           \
            JW_LIT(w, "null");                                                                     \
        else                                                                                       \
            j_int(w, v_);                                                                          \
    } while (0)

static const char *nz(const char *s)
{
    return s && s[0] ? s : NULL;
}

static void j_context(struct p2s_sink *k, const struct sf_tracectx *c, int resp)
{
    struct jw *w = &k->out;

    if (resp)
        JW_LIT(w, "{\"direction\":\"response\",\"format\":");
    else
        JW_LIT(w, "{\"direction\":\"request\",\"format\":");
    if ((unsigned)c->format < SF_CTX_NFORMATS)
        jw_put(w, k->fmt[c->format], k->fmt_len[c->format]);
    else
        j_plain(w, sf_tracectx_format_name(c->format));
    J_STR(w, ",\"raw\":", c->raw);
    JW_LIT(w, ",\"trace_id\":");
    j_id(w, c->trace_id, 32);
    JW_LIT(w, ",\"span_id\":");
    j_id(w, c->span_id, 16);
    JW_LIT(w, ",\"parent_span_id\":");
    j_id(w, c->parent_id, 16);
    J_INT(w, ",\"sampled\":", c->sampled, -1);
    J_INT(w, ",\"debug\":", c->debug, -1);
    J_INT(w, ",\"flags\":", c->flags, -1);
    J_INT(w, ",\"trace_id_64\":", c->trace_id_64, -1);
    J_STR(w, ",\"tracestate\":", nz(c->tracestate));
    J_INT(w, ",\"valid\":", c->valid, -1);
    J_STR(w, ",\"error\":", nz(c->error));
    JW_LIT(w, "}");
}

static void j_contexts(struct p2s_sink *k, const struct sf_tracectx_set *s, int resp, int *first)
{
    for (int i = 0; s && i < s->n; i++) {
        if (!*first)
            JW_LIT(&k->out, ",");
        *first = 0;
        j_context(k, &s->ctx[i], resp);
    }
}

static void ndjson_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *s,
                        const struct sf_tracectx *pref)
{
    struct p2s_sink *k = ctx->sink;
    struct jw *w = &k->out;
    const struct p2s_conn_info *i = p2s_conn_info(conn);
    int first = 1;

    J_INT(w, "{\"connection_id\":", i->id, INT64_MIN);
    J_INT(w, ",\"stream_id\":", s->stream_id, INT64_MIN);
    J_PLAIN(w, ",\"proto\":", s->proto);
    J_STR(w, ",\"method\":", s->method);
    J_STR(w, ",\"authority\":", s->authority);
    J_STR(w, ",\"path\":", s->path);
    J_INT(w, ",\"status\":", s->status, 0);
    if (s->grpc_service == NULL && s->grpc_method == NULL && s->grpc_status == -1 &&
        s->grpc_message == NULL && s->grpc_timeout_ns == -1) { /* not gRPC: one copy */
        JW_LIT(w, ",\"grpc_service\":null,\"grpc_method\":null,\"grpc_status\":null,"
                  "\"grpc_message\":null,\"grpc_timeout_ns\":null");
    } else {
        J_STR(w, ",\"grpc_service\":", s->grpc_service);
        J_STR(w, ",\"grpc_method\":", s->grpc_method);
        J_INT(w, ",\"grpc_status\":", s->grpc_status, -1);
        J_STR(w, ",\"grpc_message\":", s->grpc_message);
        J_INT(w, ",\"grpc_timeout_ns\":", s->grpc_timeout_ns, -1);
    }
    J_INT(w, ",\"req_start_ns\":", s->req_start_ns, 0);
    J_INT(w, ",\"req_end_ns\":", s->req_end_ns, 0);
    J_INT(w, ",\"resp_start_ns\":", s->resp_start_ns, 0);
    J_INT(w, ",\"resp_end_ns\":", s->resp_end_ns, 0);
    J_INT(w, ",\"req_bytes\":", s->req_bytes, -1);
    J_INT(w, ",\"resp_bytes\":", s->resp_bytes, -1);
    J_INT(w, ",\"early_data\":", s->early_data, -1);
    J_INT(w, ",\"partial\":", s->partial, -1);
    J_STR(w, ",\"partial_reason\":", s->partial_reason);
    J_INT(w, ",\"reset_code\":", s->reset_code, -1);
    if (pref) {
        JW_LIT(w, ",\"trace_id\":");
        j_id(w, pref->trace_id, 32);
        JW_LIT(w, ",\"span_id\":");
        j_id(w, pref->span_id, 16);
        JW_LIT(w, ",\"parent_span_id\":");
        j_id(w, pref->parent_id, 16);
        J_INT(w, ",\"sampled\":", pref->sampled, -1);
        JW_LIT(w, ",\"ctx_format\":");
        if ((unsigned)pref->format < SF_CTX_NFORMATS)
            jw_put(w, k->fmt[pref->format], k->fmt_len[pref->format]);
        else
            j_plain(w, sf_tracectx_format_name(pref->format));
        J_INT(w, ",\"ctx_valid\":", pref->valid, -1);
    } else {
        JW_LIT(w, ",\"trace_id\":null,\"span_id\":null,\"parent_span_id\":null,\"sampled\":null,"
                  "\"ctx_format\":null,\"ctx_valid\":null");
    }
    J_PLAIN(w, ",\"client_addr\":", i->client_addr);
    J_INT(w, ",\"client_port\":", i->client_port, -1);
    J_PLAIN(w, ",\"server_addr\":", i->server_addr);
    J_INT(w, ",\"server_port\":", i->server_port, -1);
    J_PLAIN(w, ",\"app_proto\":", i->app_proto);
    J_INT(w, ",\"source_id\":", ctx->source_id, INT64_MIN);
    if (i->tls) { /* TLS connections only: the connection's TLS columns known so far */
        J_PLAIN(w, ",\"tls\":{\"version\":", i->tls->version);
        J_PLAIN(w, ",\"cipher\":", i->tls->cipher);
        J_STR(w, ",\"sni\":", i->tls->sni);
        J_STR(w, ",\"alpn\":", i->tls->alpn);
        J_PLAIN(w, ",\"early_data\":", i->tls->early_data);
        J_INT(w, ",\"decrypted\":", i->tls->decrypted, -1);
        JW_LIT(w, "}");
    }
    JW_LIT(w, ",\"contexts\":[");
    j_contexts(k, s->req_ctx, 0, &first);
    j_contexts(k, s->resp_ctx, 1, &first);
    JW_LIT(w, "]}\n");
}

/* ---- spans ------------------------------------------------------------------------- */

static void db_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *s,
                    const struct sf_tracectx *pref)
{
    struct sf_db *db = ctx->sink->db;
    struct sf_net_span r;
    struct sf_err err;
    int64_t row = 0;
    int rc;

    r.source_id = ctx->source_id;
    r.connection_id = p2s_conn_id(conn);
    r.stream_id = s->stream_id;
    r.proto = s->proto;
    r.method = s->method;
    r.authority = s->authority;
    r.path = s->path;
    r.status = s->status ? s->status : SF_DB_NULL;
    r.grpc_service = s->grpc_service;
    r.grpc_method = s->grpc_method;
    r.grpc_message = s->grpc_message;
    r.grpc_status = s->grpc_status < 0 ? SF_DB_NULL : s->grpc_status;
    r.grpc_timeout_ns = s->grpc_timeout_ns < 0 ? SF_DB_NULL : s->grpc_timeout_ns;
    r.req_start_ns = s->req_start_ns ? s->req_start_ns : SF_DB_NULL;
    r.req_end_ns = s->req_end_ns ? s->req_end_ns : SF_DB_NULL;
    r.resp_start_ns = s->resp_start_ns ? s->resp_start_ns : SF_DB_NULL;
    r.resp_end_ns = s->resp_end_ns ? s->resp_end_ns : SF_DB_NULL;
    r.req_bytes = s->req_bytes < 0 ? SF_DB_NULL : s->req_bytes;
    r.resp_bytes = s->resp_bytes < 0 ? SF_DB_NULL : s->resp_bytes;
    r.early_data = s->early_data;
    r.partial = s->partial;
    r.partial_reason = s->partial_reason;
    r.reset_code = s->reset_code < 0 ? SF_DB_NULL : s->reset_code;
    r.pref = pref;
    sf_err_clear(&err);
    rc = sf_db_net_span(db, &r, &row, &err);
    for (int i = 0; rc == 0 && s->req_ctx && i < s->req_ctx->n; i++)
        rc = sf_db_net_context(db, row, "request", &s->req_ctx->ctx[i], &err);
    for (int i = 0; rc == 0 && s->resp_ctx && i < s->resp_ctx->n; i++)
        rc = sf_db_net_context(db, row, "response", &s->resp_ctx->ctx[i], &err);
    if (rc < 0)
        db_failed(ctx, &err);
}

static void count_contexts(struct p2s_ctx *ctx, const struct sf_tracectx_set *s)
{
    for (int i = 0; s && i < s->n; i++) {
        if ((unsigned)s->ctx[i].format < SF_CTX_NFORMATS)
            ctx->st.ctx_by_format[s->ctx[i].format]++;
        if (!s->ctx[i].valid)
            ctx->st.ctx_invalid++;
    }
}

int p2s_emit_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *span)
{
    struct p2s_sink *k = ctx->sink;
    const struct sf_tracectx *pref = NULL;
    int best;

    ctx->st.spans++;
    ctx->st.partial_spans += span->partial != 0;
    count_contexts(ctx, span->req_ctx);
    count_contexts(ctx, span->resp_ctx);
    if (span->req_ctx && (best = sf_tracectx_set_preferred(span->req_ctx)) >= 0)
        pref = &span->req_ctx->ctx[best];
    if (ctx->span_hook && ctx->span_hook(ctx->span_hook_arg, conn, span) < 0)
        return SF_E_USAGE;
    if (k == NULL)
        return 0;
    if (k->ndjson)
        ndjson_span(ctx, conn, span, pref);
    if (k->db && !k->failed)
        db_span(ctx, conn, span, pref);
    return k->failed ? SF_E_DB : 0;
}

/* ---- sink lifetime ---------------------------------------------------------------- */

int sink_open(struct p2s_ctx *ctx, const struct p2s_sink_opts *o, struct sf_err *err)
{
    struct p2s_sink *k = calloc(1, sizeof(*k));

    if (k == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    k->ndjson = o->ndjson;
    for (int f = 0; f < SF_CTX_NFORMATS; f++) {
        int n = snprintf(k->fmt_buf[f], sizeof(k->fmt_buf[f]), "\"%s\"",
                         sf_tracectx_format_name((enum sf_ctx_format)f));
        k->fmt[f] = k->fmt_buf[f];
        k->fmt_len[f] = n > 0 && (size_t)n < sizeof(k->fmt_buf[f]) ? (size_t)n : 0;
    }
    if (k->ndjson) {
        k->out.cap = JW_CAP;
        if ((k->out.buf = malloc(JW_CAP)) == NULL) {
            free(k);
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        }
    }
    if (o->db_path) {
        int rc;
        /* One thread uses SQLite here: no mutexes, no allocation statistics (a mutex
         * per malloc).  Only takes effect before SQLite initialises (the first open). */
        sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
        rc = sf_db_open(&k->db, o->db_path, err);
        if (rc < 0) {
            free(k);
            return rc;
        }
    }
    ctx->sink = k;
    return 0;
}

int sink_has_db(const struct p2s_ctx *ctx)
{
    return ctx->sink && ctx->sink->db;
}

int sink_source_begin(struct p2s_ctx *ctx, const char *path, const char *sha256, uint64_t bytes,
                      struct sf_err *err)
{
    struct sf_source_info in = {"pcap", path, sha256, bytes, "realtime", "pcap2spans"};
    int64_t dup = 0;
    int rc;

    ctx->source_id++;
    if (!sink_has_db(ctx))
        return 0;
    rc = sf_db_source_begin(ctx->sink->db, &in, &ctx->source_id, &dup, err);
    if (rc == SF_E_DUP)
        sf_err_set(err, SF_E_DUP, UINT64_MAX, "already ingested as source %" PRId64 "; skipped",
                   dup);
    return rc;
}

int sink_source_end(struct p2s_ctx *ctx, const char *sha256, uint64_t bytes, const char *error,
                    struct sf_err *err)
{
    struct p2s_sink *k = ctx->sink;
    int64_t dup = 0;
    int rc;

    if (k)
        jw_flush(&k->out);
    if (!sink_has_db(ctx))
        return 0;
    if (k->failed)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "%s", k->db_err.msg);
    if (sha256 && bytes && !error) {
        rc = sf_db_source_set_hash(k->db, ctx->source_id, sha256, bytes, &dup, err);
        if (rc == SF_E_DUP) {
            fprintf(stderr, "%s: %s: already ingested as source %" PRId64 "; this copy dropped\n",
                    ctx->tool, ctx->file, dup);
            return 0;
        }
        if (rc < 0)
            return rc;
    }
    return sf_db_source_end(k->db, ctx->source_id, error, ctx->pkt_no, 0, err);
}

void sink_summary(struct p2s_ctx *ctx, FILE *f)
{
    const struct p2s_stats *s = &ctx->st;
    int i, any = 0;

    fprintf(f,
            "%s: %" PRIu64 " packets, %" PRIu64 " bytes, %" PRIu64 " TCP segments; %" PRIu64
            " connections, %" PRIu64 " spans (%" PRIu64 " partial)\n",
            ctx->tool, s->packets, s->bytes, s->tcp_segments, s->connections, s->spans,
            s->partial_spans);
    fprintf(f, "%s: contexts:", ctx->tool);
    for (i = 0; i < SF_CTX_NFORMATS; i++) {
        if (s->ctx_by_format[i]) {
            fprintf(f, "%s %s %" PRIu64, any ? "," : "",
                    sf_tracectx_format_name((enum sf_ctx_format)i), s->ctx_by_format[i]);
            any = 1;
        }
    }
    fprintf(f, "%s; %" PRIu64 " invalid\n", any ? "" : " none", s->ctx_invalid);
    fprintf(f,
            "%s: gaps %" PRIu64 " (%" PRIu64 " bytes); unsupported: link %" PRIu64
            ", network %" PRIu64 ", fragments %" PRIu64 "; truncated %" PRIu64
            ", malformed %" PRIu64 ", evicted flows %" PRIu64 "; errors %" PRIu64 "\n",
            ctx->tool, s->gaps, s->gap_bytes, s->unsupported_link, s->unsupported_net,
            s->ip_fragments, s->truncated, s->malformed, s->flows_evicted, s->errors);
    for (i = 0; i < P2S_NOTE_KINDS && ctx->notes[i].kind; i++)
        fprintf(f, "%s%s%s %" PRIu64, i ? "" : ctx->tool,
                i ? ", " : ": events: ", ctx->notes[i].kind, ctx->notes[i].n);
    if (i)
        fputc('\n', f);
}

int sink_close(struct p2s_ctx *ctx, struct sf_err *err)
{
    struct p2s_sink *k = ctx->sink;
    int rc = 0;

    if (k == NULL)
        return 0;
    if (k->db)
        rc = sf_db_close(k->db, err);
    jw_flush(&k->out);
    free(k->out.buf);
    free(k);
    ctx->sink = NULL;
    return rc;
}

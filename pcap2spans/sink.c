/* sink.c - where spans go: the database (lib/sf_db_net.c) and/or NDJSON on stdout,
 * plus the run context's helpers (limits, error reports, notes, the summary).
 *
 * NDJSON: one object per span, keys named as the spans columns (docs/database.md), then the
 * connection's columns known at that time and source_id (the database row, or the
 * input's 1-based position without a database), then "contexts": [...] with the
 * contexts columns.  Unknown values are null.  Valid UTF-8 is written as it is (as the
 * database stores it); any other byte >= 0x80 and control bytes as \u00XX, so every
 * line is valid JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "p2s.h"
#include "sf_db.h"
#include "sf_db_net.h"
#include "sf_json.h"
#include "sf_vec.h"

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
    l->max_ooo_segments = 1u << 17;
    /* nginx with large_client_header_buffers raised takes header sections of hundreds of
     * KB: the default keeps what servers can be set to accept.  Buffers grow on demand. */
    l->max_header_bytes = 1u << 20;
    l->max_streams = 1000;
    l->max_field_bytes = 1u << 20;
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

uint64_t p2s_note_count(const struct p2s_ctx *ctx, const char *kind)
{
    for (int i = 0; i < P2S_NOTE_KINDS && ctx->notes[i].kind; i++)
        if (strcmp(ctx->notes[i].kind, kind) == 0)
            return ctx->notes[i].n;
    return 0;
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

/* Nonzero when one of the 8 bytes of x needs escaping (see j_escape). */
static inline uint64_t needs_escape8(uint64_t x)
{
    return ((x - SF_ONES * 0x20) & ~x & SF_HIGHS) | (x & SF_HIGHS) |
           sf_word_has_zero(x ^ (SF_ONES * 0x7f)) | sf_word_has_zero(x ^ (SF_ONES * '"')) |
           sf_word_has_zero(x ^ (SF_ONES * '\\'));
}

/* The bytes of v that need escaping (see j_escape): as signed bytes, control bytes and
 * non-ASCII are both below 0x20, so one signed compare covers them. */
#define J_BAD16(v) (((v16s)(v) < 0x20) | ((v) == 0x7f) | ((v) == '"') | ((v) == '\\'))

/* 1 when s[0..n) needs no escaping: 16 bytes per step, the last step overlapping the
 * one before it (no byte loop for the tail); short strings in one or two 8-byte words,
 * padded with a letter below 8 bytes. */
static int j_clean(const char *s, size_t n)
{
    uint64_t x, y;

    if (n >= 16) {
        v16s bad = {0};
        v16u v;

        for (size_t i = 0; i + 16 < n; i += 16) {
            memcpy(&v, s + i, 16);
            bad |= J_BAD16(v);
        }
        memcpy(&v, s + n - 16, 16);
        bad |= J_BAD16(v);
        return !sf_vec_any(bad);
    }
    if (n >= 8) {
        memcpy(&x, s, 8);
        memcpy(&y, s + n - 8, 8);
        return !(needs_escape8(x) | needs_escape8(y));
    }
    x = SF_ONES * 'a';
    memcpy(&x, s, n);
    return !needs_escape8(x);
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

static void j_str_esc(struct jw *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run;
    size_t u;

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
        } else if ((unsigned char)*s >= 0x80 &&
                   (u = sf_json_utf8_len((const unsigned char *)s, strnlen(s, 4))) > 0) {
            jw_put(w, s, u);
            s += u;
            continue;
        } else {
            unsigned char c = (unsigned char)*s;
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            jw_put(w, e, 6);
        }
        s++;
    }
}

static const char d2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const char *nz(const char *s)
{
    return s && s[0] ? s : NULL;
}

/* ---- cursor writes ------------------------------------------------------------------
 * ndjson_span writes through a cursor `o` into the buffer.  Every variable-length write
 * (c_str, c_plain) ensures its own room and leaves at least JW_SLACK bytes free after it;
 * the fixed-size writes between two of them (keys, integers, ids, format names: well
 * under 1 KB in a row) need no check. */
#define JW_SLACK 4096

/* Sync the length, flush when fewer than need + JW_SLACK bytes are free. */
static inline char *c_room(struct jw *w, char *o, size_t need)
{
    w->len = (size_t)(o - w->buf);
    if (__builtin_expect(w->cap - w->len < need + JW_SLACK, 0))
        jw_flush(w);
    return w->buf + w->len;
}

#define C_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) += sizeof(lit) - 1)

/* Exactly 8 digits of v < 10^8, with 32-bit arithmetic. */
static inline void put8(char *p, uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;

    memcpy(p, d2 + 2 * (a / 100), 2);
    memcpy(p + 2, d2 + 2 * (a % 100), 2);
    memcpy(p + 4, d2 + 2 * (b / 100), 2);
    memcpy(p + 6, d2 + 2 * (b % 100), 2);
}

/* v < 10^8 without leading zeros. */
static inline char *put_small(char *o, uint32_t v)
{
    size_t nd;
    char *p;

    if (v < 10) {
        *o++ = (char)('0' + v);
        return o;
    }
    nd = v < 10000     ? (v < 100    ? 2
                          : v < 1000 ? 3
                                     : 4)
         : v < 1000000 ? (v < 100000 ? 5 : 6)
                       : (v < 10000000 ? 7 : 8);
    o += nd;
    p = o;
    while (v >= 100) {
        p -= 2;
        memcpy(p, d2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, d2 + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    return o;
}

/* Decimal in 8-digit groups (timestamps have 19 digits). */
static inline char *c_int(char *o, int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    if (v < 0)
        *o++ = '-';
    if (u < 100000000)
        return put_small(o, (uint32_t)u);
    if (u < UINT64_C(10000000000000000)) {
        o = put_small(o, (uint32_t)(u / 100000000));
    } else {
        o = put_small(o, (uint32_t)(u / UINT64_C(10000000000000000)));
        put8(o, (uint32_t)(u / 100000000 % 100000000));
        o += 8;
    }
    put8(o, (uint32_t)(u % 100000000));
    return o + 8;
}

/* key, then the integer or null when v == nul */
#define C_INT(o, key, v, nul)                                                                      \
    do {                                                                                           \
        int64_t v_ = (v);                                                                          \
        C_LIT(o, key);                                                                             \
        if (v_ == (nul))                                                                           \
            C_LIT(o, "null");                                                                      \
        else if ((uint64_t)v_ < 10) /* flags and counts: most values */                            \
            *o++ = (char)('0' + v_);                                                               \
        else                                                                                       \
            o = c_int(o, v_);                                                                      \
    } while (0)

/* A hex id held in a char[width + 1] (see j_id); "" is null.  At most width + 2 bytes. */
static inline char *c_id(char *o, const char *s, size_t width)
{
    uint64_t x, acc = 0;
    size_t n = width;

    if (s[0] == 0) {
        C_LIT(o, "null");
        return o;
    }
    for (size_t i = 0; i < width; i += 8) {
        memcpy(&x, s + i, 8);
        acc |= sf_word_has_zero(x);
    }
    *o++ = '"';
    if (acc || s[width] != 0) {
        n = strnlen(s, width);
        memcpy(o, s, n);
    } else {
        memcpy(o, s, width); /* the usual full-width id: a fixed-size copy */
    }
    o += n;
    *o++ = '"';
    return o;
}

/* A format name, as a JSON string, from the sink's table. */
static inline char *c_fmt(const struct p2s_sink *k, char *o, enum sf_ctx_format f)
{
    const char *s;
    size_t n;

    if ((unsigned)f < SF_CTX_NFORMATS) {
        s = k->fmt[f];
        n = k->fmt_len[f];
    } else { /* "unknown" */
        s = "\"unknown\"";
        n = 9;
    }
    memcpy(o, s, n);
    return o + n;
}

/* A string known to need no escaping (static names, addresses), or null. */
static char *c_plain(struct jw *w, char *o, const char *s)
{
    size_t n;

    if (s == NULL) {
        C_LIT(o, "null");
        return o;
    }
    n = strlen(s);
    if (n > w->cap / 2) { /* cannot happen for these strings; the checked writer */
        w->len = (size_t)(o - w->buf);
        j_plain(w, s);
        return c_room(w, w->buf + w->len, 0);
    }
    o = c_room(w, o, n + 2);
    *o++ = '"';
    memcpy(o, s, n);
    o += n;
    *o++ = '"';
    return o;
}

/* c_str for a huge value or one that needs escaping (s[0..n), n = strlen(s)). */
static __attribute__((noinline)) char *c_str_slow(struct jw *w, char *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    if (n > w->cap / 8) { /* a huge value: the checked writer */
        w->len = (size_t)(o - w->buf);
        JW_LIT(w, "\"");
        j_str_esc(w, s);
        JW_LIT(w, "\"");
        return c_room(w, w->buf + w->len, 0);
    }
    o = c_room(w, o, 6 * n + 2);
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t u;
        if (!j_escape(c)) {
            *o++ = (char)c;
        } else if (c >= 0x80 && (u = sf_json_utf8_len((const unsigned char *)s + i, n - i)) > 0) {
            memcpy(o, s + i, u);
            o += u;
            i += u - 1;
        } else if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else {
            memcpy(o, "\\u00", 4);
            o[4] = hex[c >> 4];
            o[5] = hex[c & 15];
            o += 6;
        }
    }
    *o++ = '"';
    return o;
}

/* A JSON string (see j_str), or null.  Inline: most strings need no escaping. */
static inline char *c_str(struct jw *w, char *o, const char *s)
{
    size_t n;

    if (s == NULL) {
        C_LIT(o, "null");
        return o;
    }
    n = strlen(s);
    if (n > w->cap / 8 || !j_clean(s, n))
        return c_str_slow(w, o, s, n);
    o = c_room(w, o, n + 2);
    *o++ = '"';
    memcpy(o, s, n);
    o += n;
    *o++ = '"';
    return o;
}

/* The three ids of a context, as in a span and in each of its contexts. */
static inline char *c_ids(char *o, const struct sf_tracectx *c)
{
    C_LIT(o, ",\"trace_id\":");
    o = c_id(o, c->trace_id, 32);
    C_LIT(o, ",\"span_id\":");
    o = c_id(o, c->span_id, 16);
    C_LIT(o, ",\"parent_span_id\":");
    return c_id(o, c->parent_id, 16);
}

static char *c_context(struct p2s_sink *k, char *o, const struct sf_tracectx *c, int resp)
{
    struct jw *w = &k->out;

    o = c_room(w, o, 0);
    if (resp)
        C_LIT(o, "{\"direction\":\"response\",\"format\":");
    else
        C_LIT(o, "{\"direction\":\"request\",\"format\":");
    o = c_fmt(k, o, c->format);
    C_LIT(o, ",\"raw\":");
    o = c_str(w, o, c->raw);
    o = c_ids(o, c);
    C_INT(o, ",\"sampled\":", c->sampled, -1);
    C_INT(o, ",\"debug\":", c->debug, -1);
    C_INT(o, ",\"flags\":", c->flags, -1);
    C_INT(o, ",\"trace_id_64\":", c->trace_id_64, -1);
    C_LIT(o, ",\"tracestate\":");
    o = c_str(w, o, nz(c->tracestate));
    C_INT(o, ",\"valid\":", c->valid, -1);
    C_LIT(o, ",\"error\":");
    o = c_str(w, o, nz(c->error));
    C_LIT(o, "}");
    return o;
}

static char *c_contexts(struct p2s_sink *k, char *o, const struct sf_tracectx_set *s, int resp,
                        int *first)
{
    for (int i = 0; s && i < s->n; i++) {
        if (!*first)
            C_LIT(o, ",");
        *first = 0;
        o = c_context(k, o, &s->ctx[i], resp);
    }
    return o;
}

static void ndjson_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *s,
                        const struct sf_tracectx *pref)
{
    struct p2s_sink *k = ctx->sink;
    struct jw *w = &k->out;
    const struct p2s_conn_info *i = p2s_conn_info(conn);
    char *o = c_room(w, w->buf + w->len, 0);
    int first = 1;

    C_INT(o, "{\"connection_id\":", i->id, INT64_MIN);
    C_INT(o, ",\"stream_id\":", s->stream_id, INT64_MIN);
    C_LIT(o, ",\"proto\":");
    o = c_plain(w, o, s->proto);
    C_LIT(o, ",\"method\":");
    o = c_str(w, o, s->method);
    C_LIT(o, ",\"authority\":");
    o = c_str(w, o, s->authority);
    C_LIT(o, ",\"path\":");
    o = c_str(w, o, s->path);
    C_INT(o, ",\"status\":", s->status, 0);
    if (s->grpc_service == NULL && s->grpc_method == NULL && s->grpc_status == -1 &&
        s->grpc_message == NULL && s->grpc_timeout_ns == -1) { /* not gRPC: one copy */
        C_LIT(o, ",\"grpc_service\":null,\"grpc_method\":null,\"grpc_status\":null,"
                 "\"grpc_message\":null,\"grpc_timeout_ns\":null");
    } else {
        C_LIT(o, ",\"grpc_service\":");
        o = c_str(w, o, s->grpc_service);
        C_LIT(o, ",\"grpc_method\":");
        o = c_str(w, o, s->grpc_method);
        C_INT(o, ",\"grpc_status\":", s->grpc_status, -1);
        C_LIT(o, ",\"grpc_message\":");
        o = c_str(w, o, s->grpc_message);
        C_INT(o, ",\"grpc_timeout_ns\":", s->grpc_timeout_ns, -1);
    }
    C_INT(o, ",\"req_start_ns\":", s->req_start_ns, 0);
    C_INT(o, ",\"req_end_ns\":", s->req_end_ns, 0);
    C_INT(o, ",\"resp_start_ns\":", s->resp_start_ns, 0);
    C_INT(o, ",\"resp_end_ns\":", s->resp_end_ns, 0);
    C_INT(o, ",\"req_bytes\":", s->req_bytes, -1);
    C_INT(o, ",\"resp_bytes\":", s->resp_bytes, -1);
    C_INT(o, ",\"early_data\":", s->early_data, -1);
    C_INT(o, ",\"delivered\":", !s->undelivered, -1);
    C_INT(o, ",\"partial\":", s->partial, -1);
    C_LIT(o, ",\"partial_reason\":");
    o = c_str(w, o, s->partial_reason);
    C_INT(o, ",\"reset_code\":", s->reset_code, -1);
    if (pref) {
        o = c_ids(o, pref);
        C_INT(o, ",\"sampled\":", pref->sampled, -1);
        C_LIT(o, ",\"ctx_format\":");
        o = c_fmt(k, o, pref->format);
        C_INT(o, ",\"ctx_valid\":", pref->valid, -1);
    } else {
        C_LIT(o, ",\"trace_id\":null,\"span_id\":null,\"parent_span_id\":null,\"sampled\":null,"
                 "\"ctx_format\":null,\"ctx_valid\":null");
    }
    C_LIT(o, ",\"client_addr\":");
    o = c_plain(w, o, i->client_addr);
    C_INT(o, ",\"client_port\":", i->client_port, -1);
    C_LIT(o, ",\"server_addr\":");
    o = c_plain(w, o, i->server_addr);
    C_INT(o, ",\"server_port\":", i->server_port, -1);
    C_LIT(o, ",\"app_proto\":");
    o = c_plain(w, o, i->app_proto);
    C_INT(o, ",\"source_id\":", ctx->source_id, INT64_MIN);
    if (i->tls) { /* TLS connections only: the connection's TLS columns known so far */
        C_LIT(o, ",\"tls\":{\"version\":");
        o = c_plain(w, o, i->tls->version);
        C_LIT(o, ",\"cipher\":");
        o = c_plain(w, o, i->tls->cipher);
        C_LIT(o, ",\"sni\":");
        o = c_str(w, o, i->tls->sni);
        C_LIT(o, ",\"alpn\":");
        o = c_str(w, o, i->tls->alpn);
        C_LIT(o, ",\"early_data\":");
        o = c_plain(w, o, i->tls->early_data);
        C_INT(o, ",\"decrypted\":", i->tls->decrypted, -1);
        C_LIT(o, "}");
    }
    C_LIT(o, ",\"contexts\":[");
    o = c_contexts(k, o, s->req_ctx, 0, &first);
    o = c_contexts(k, o, s->resp_ctx, 1, &first);
    C_LIT(o, "]}\n");
    w->len = (size_t)(o - w->buf);
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
    r.delivered = !s->undelivered;
    r.partial = s->partial;
    r.partial_reason = s->partial_reason;
    r.reset_code = s->reset_code < 0 ? SF_DB_NULL : s->reset_code;
    r.req_seq_start = s->req_seq.known ? (int64_t)s->req_seq.start : SF_DB_NULL;
    r.req_seq_end = s->req_seq.known ? (int64_t)s->req_seq.end : SF_DB_NULL;
    r.resp_seq_start = s->resp_seq.known ? (int64_t)s->resp_seq.start : SF_DB_NULL;
    r.resp_seq_end = s->resp_seq.known ? (int64_t)s->resp_seq.end : SF_DB_NULL;
    r.pref = pref;
    sf_err_clear(&err);
    rc = sf_db_net_span(db, &r, &row, &err);
    if (rc == 0 && s->req_ctx)
        rc = sf_db_net_contexts(db, row, "request", s->req_ctx->ctx, s->req_ctx->n, &err);
    if (rc == 0 && s->resp_ctx)
        rc = sf_db_net_contexts(db, row, "response", s->resp_ctx->ctx, s->resp_ctx->n, &err);
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
    struct p2s_span rejected;
    int best;

    if (conn && p2s_conn_undelivered(conn)) { /* rejected 0-RTT data (tls.c) */
        rejected = *span;
        rejected.undelivered = 1;
        rejected.partial = 1;
        rejected.partial_reason = P2S_REJECTED_0RTT;
        span = &rejected;
    }
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
        sf_db_set_wait(k->db, o->wait);
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

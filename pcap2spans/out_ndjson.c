/* out_ndjson.c - the NDJSON writer: one object per span, keys named as the spans columns
 * (docs/database.md) and the two the selection language computes from them (endpoint,
 * duration_ns: --where's endpoint and duration), then the connection's columns known at that time
 * and source_id (the database row, or the input's 1-based position without a database), then
 * "contexts": [...] with the contexts columns.  Unknown values are null.  Valid UTF-8 is
 * written as it is (as the database stores it); any other byte >= 0x80 and control
 * bytes as \u00XX, so every line is valid JSON.
 *
 * Lines are built with lib/sf_json's fast path (sf_jb) in a 1 MiB buffer, written with
 * fwrite when it fills, so that a span costs a few memcpy calls and no printf.
 */
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "sf_db_net.h"
#include "sf_json.h"
#include "sf_jsonrpc.h"
#include "sf_select.h"

#define NJ_BUF (1u << 20)

struct p2s_ndjson {
    struct sf_jb b;
    struct sf_buf ep;                 /* the endpoint, when it is not the path itself */
    const char *fmt[SF_CTX_NFORMATS]; /* format names as JSON strings, with their lengths */
    size_t fmt_len[SF_CTX_NFORMATS];
    char fmt_buf[SF_CTX_NFORMATS][32];
};

struct p2s_ndjson *p2s_ndjson_new(FILE *f)
{
    struct p2s_ndjson *nj = calloc(1, sizeof(*nj));

    if (nj == NULL || sf_jb_init(&nj->b, f, NJ_BUF) < 0) {
        free(nj);
        return NULL;
    }
    sf_buf_init(&nj->ep, NJ_BUF);
    for (int i = 0; i < SF_CTX_NFORMATS; i++) {
        int n = snprintf(nj->fmt_buf[i], sizeof(nj->fmt_buf[i]), "\"%s\"",
                         sf_tracectx_format_name((enum sf_ctx_format)i));
        nj->fmt[i] = nj->fmt_buf[i];
        nj->fmt_len[i] = n > 0 && (size_t)n < sizeof(nj->fmt_buf[i]) ? (size_t)n : 0;
    }
    return nj;
}

void p2s_ndjson_flush(struct p2s_ndjson *nj)
{
    sf_jb_flush(&nj->b);
}

void p2s_ndjson_free(struct p2s_ndjson *nj)
{
    if (nj == NULL)
        return;
    sf_jb_free(&nj->b);
    sf_buf_free(&nj->ep);
    free(nj);
}

static const char *nz(const char *s)
{
    return s && s[0] ? s : NULL;
}

/* A format name, as a JSON string, from the table. */
static inline char *c_fmt(const struct p2s_ndjson *nj, char *o, enum sf_ctx_format f)
{
    const char *s;
    size_t n;

    if ((unsigned)f < SF_CTX_NFORMATS) {
        s = nj->fmt[f];
        n = nj->fmt_len[f];
    } else { /* "unknown" */
        s = "\"unknown\"";
        n = 9;
    }
    memcpy(o, s, n);
    return o + n;
}

/* The three ids of a context, as in a span and in each of its contexts. */
static inline char *c_ids(char *o, const struct sf_tracectx *c)
{
    SF_JB_LIT(o, ",\"trace_id\":");
    o = sf_jb_id(o, c->trace_id, 32);
    SF_JB_LIT(o, ",\"span_id\":");
    o = sf_jb_id(o, c->span_id, 16);
    SF_JB_LIT(o, ",\"parent_span_id\":");
    return sf_jb_id(o, c->parent_id, 16);
}

static char *c_context(struct p2s_ndjson *nj, char *o, const struct sf_tracectx *c, int resp)
{
    struct sf_jb *w = &nj->b;

    o = sf_jb_room(w, o, 0);
    if (resp)
        SF_JB_LIT(o, "{\"direction\":\"response\",\"format\":");
    else
        SF_JB_LIT(o, "{\"direction\":\"request\",\"format\":");
    o = c_fmt(nj, o, c->format);
    SF_JB_LIT(o, ",\"raw\":");
    o = sf_jb_str(w, o, c->raw);
    o = c_ids(o, c);
    SF_JB_INT(o, ",\"sampled\":", c->sampled, -1);
    SF_JB_INT(o, ",\"debug\":", c->debug, -1);
    SF_JB_INT(o, ",\"flags\":", c->flags, -1);
    SF_JB_INT(o, ",\"trace_id_64\":", c->trace_id_64, -1);
    SF_JB_LIT(o, ",\"tracestate\":");
    o = sf_jb_str(w, o, nz(c->tracestate));
    SF_JB_INT(o, ",\"valid\":", c->valid, -1);
    SF_JB_LIT(o, ",\"error\":");
    o = sf_jb_str(w, o, nz(c->error));
    SF_JB_LIT(o, "}");
    return o;
}

static char *c_contexts(struct p2s_ndjson *nj, char *o, const struct sf_tracectx_set *s, int resp,
                        int *first)
{
    for (int i = 0; s && i < s->n; i++) {
        if (!*first)
            SF_JB_LIT(o, ",");
        *first = 0;
        o = c_context(nj, o, &s->ctx[i], resp);
    }
    return o;
}

/* The gRPC columns (all null for plain HTTP: one copy). */
static char *c_grpc(struct sf_jb *w, char *o, const struct p2s_span *s)
{
    if (s->grpc_service == NULL && s->grpc_method == NULL && s->grpc_status == -1 &&
        s->grpc_message == NULL && s->grpc_timeout_ns == -1) {
        SF_JB_LIT(o, ",\"grpc_service\":null,\"grpc_method\":null,\"grpc_status\":null,"
                     "\"grpc_message\":null,\"grpc_timeout_ns\":null");
        return o;
    }
    SF_JB_LIT(o, ",\"grpc_service\":");
    o = sf_jb_str(w, o, s->grpc_service);
    SF_JB_LIT(o, ",\"grpc_method\":");
    o = sf_jb_str(w, o, s->grpc_method);
    SF_JB_INT(o, ",\"grpc_status\":", s->grpc_status, -1);
    SF_JB_LIT(o, ",\"grpc_message\":");
    o = sf_jb_str(w, o, s->grpc_message);
    SF_JB_INT(o, ",\"grpc_timeout_ns\":", s->grpc_timeout_ns, -1);
    return o;
}

static char *c_real(char *o, const char *key, size_t kl, double v)
{
    memcpy(o, key, kl);
    o += kl;
    if (v != v) {
        SF_JB_LIT(o, "null");
        return o;
    }
    return o + snprintf(o, 32, "%.17g", v);
}

/* The JSON-RPC columns (all null for other spans: one copy). */
static char *c_rpc(struct sf_jb *w, char *o, const struct p2s_span *s)
{
    const struct sf_net_rpc *q = s->rpc;

    SF_JB_INT(o, ",\"rpc_messages\":", s->rpc_messages, 0);
    if (q == NULL) {
        SF_JB_LIT(o, ",\"rpc_id\":null,\"rpc_direction\":null,\"rpc_session\":null,"
                     "\"rpc_name\":null,\"rpc_error_code\":null,\"rpc_error\":null,"
                     "\"rpc_tool_error\":null,\"temperature\":null,\"top_p\":null,"
                     "\"max_tokens\":null,\"stop_sequences\":null,\"model_hint\":null");
        return o;
    }
    SF_JB_LIT(o, ",\"rpc_id\":");
    o = sf_jb_str(w, o, q->id);
    SF_JB_LIT(o, ",\"rpc_direction\":");
    o = sf_jb_plain(w, o, q->direction);
    SF_JB_LIT(o, ",\"rpc_session\":");
    o = sf_jb_str(w, o, q->session);
    SF_JB_LIT(o, ",\"rpc_name\":");
    o = sf_jb_str(w, o, q->name);
    SF_JB_INT(o, ",\"rpc_error_code\":", q->has_error ? q->error_code : INT64_MIN, INT64_MIN);
    SF_JB_LIT(o, ",\"rpc_error\":");
    o = sf_jb_str(w, o, q->error_msg);
    SF_JB_INT(o, ",\"rpc_tool_error\":", q->answered ? q->tool_error : -1, -1);
    o = c_real(o, ",\"temperature\":", 15, q->temperature);
    o = c_real(o, ",\"top_p\":", 9, q->top_p);
    SF_JB_INT(o, ",\"max_tokens\":", q->max_tokens, -1);
    SF_JB_INT(o, ",\"stop_sequences\":", q->stop_sequences, -1);
    SF_JB_LIT(o, ",\"model_hint\":");
    o = sf_jb_str(w, o, q->model_hint);
    return o;
}

/* The connection's columns known now, its TLS facts (TLS connections only); *src_at
 * gets the buffer offset of source_id's value. */
static char *c_conn(struct sf_jb *w, char *o, const struct p2s_conn_info *i, int64_t source_id,
                    size_t *src_at)
{
    SF_JB_LIT(o, ",\"client_addr\":");
    o = sf_jb_plain(w, o, i->client_addr);
    SF_JB_INT(o, ",\"client_port\":", i->client_port, -1);
    SF_JB_LIT(o, ",\"server_addr\":");
    o = sf_jb_plain(w, o, i->server_addr);
    SF_JB_INT(o, ",\"server_port\":", i->server_port, -1);
    SF_JB_LIT(o, ",\"app_proto\":");
    o = sf_jb_plain(w, o, i->app_proto);
    SF_JB_LIT(o, ",\"source_id\":");
    *src_at = (size_t)(o - w->buf);
    SF_JB_INT(o, "", source_id, INT64_MIN);
    if (i->tls == NULL)
        return o;
    SF_JB_LIT(o, ",\"tls\":{\"version\":");
    o = sf_jb_plain(w, o, i->tls->version);
    SF_JB_LIT(o, ",\"cipher\":");
    o = sf_jb_plain(w, o, i->tls->cipher);
    SF_JB_LIT(o, ",\"sni\":");
    o = sf_jb_str(w, o, i->tls->sni);
    SF_JB_LIT(o, ",\"alpn\":");
    o = sf_jb_str(w, o, i->tls->alpn);
    SF_JB_LIT(o, ",\"early_data\":");
    o = sf_jb_plain(w, o, i->tls->early_data);
    SF_JB_INT(o, ",\"decrypted\":", i->tls->decrypted, -1);
    SF_JB_LIT(o, "}");
    return o;
}

static const char *endpoint(struct p2s_ndjson *nj, const struct p2s_span *s)
{
    struct sf_endpoint_of e = {s->proto,        s->method,      s->rpc ? s->rpc->name : NULL,
                               s->grpc_service, s->grpc_method, s->path};

    return sf_select_endpoint(&e, &nj->ep);
}

size_t p2s_ndjson_span(struct p2s_ndjson *nj, const struct p2s_conn_info *i,
                       const struct p2s_span *s, const struct sf_tracectx *pref, int64_t source_id)
{
    struct sf_jb *w = &nj->b;
    char *o = sf_jb_room(w, w->buf + w->len, 0);
    size_t start = w->len, src_at = 0;
    int first = 1;

    SF_JB_INT(o, "{\"connection_id\":", i->id, INT64_MIN);
    SF_JB_INT(o, ",\"stream_id\":", s->stream_id, INT64_MIN);
    SF_JB_LIT(o, ",\"proto\":");
    o = sf_jb_plain(w, o, s->proto);
    SF_JB_LIT(o, ",\"method\":");
    o = sf_jb_str(w, o, s->method);
    SF_JB_LIT(o, ",\"authority\":");
    o = sf_jb_str(w, o, s->authority);
    SF_JB_LIT(o, ",\"path\":");
    o = sf_jb_str(w, o, s->path);
    SF_JB_INT(o, ",\"status\":", s->status, 0);
    o = c_grpc(w, o, s);
    SF_JB_INT(o, ",\"req_start_ns\":", s->req_start_ns, 0);
    SF_JB_INT(o, ",\"req_end_ns\":", s->req_end_ns, 0);
    SF_JB_INT(o, ",\"resp_start_ns\":", s->resp_start_ns, 0);
    SF_JB_INT(o, ",\"resp_end_ns\":", s->resp_end_ns, 0);
    SF_JB_INT(o, ",\"req_bytes\":", s->req_bytes, -1);
    SF_JB_INT(o, ",\"resp_bytes\":", s->resp_bytes, -1);
    SF_JB_INT(o, ",\"early_data\":", s->early_data, -1);
    SF_JB_INT(o, ",\"delivered\":", !s->undelivered, -1);
    SF_JB_INT(o, ",\"partial\":", s->partial, -1);
    SF_JB_LIT(o, ",\"partial_reason\":");
    o = sf_jb_str(w, o, s->partial_reason);
    SF_JB_INT(o, ",\"reset_code\":", s->reset_code, -1);
    o = c_rpc(w, o, s);
    SF_JB_LIT(o, ",\"endpoint\":");
    o = sf_jb_str(w, o, endpoint(nj, s));
    SF_JB_INT(o, ",\"duration_ns\":",
              s->req_start_ns && s->resp_end_ns ? s->resp_end_ns - s->req_start_ns : INT64_MIN,
              INT64_MIN);
    if (pref) {
        o = c_ids(o, pref);
        SF_JB_INT(o, ",\"sampled\":", pref->sampled, -1);
        SF_JB_LIT(o, ",\"ctx_format\":");
        o = c_fmt(nj, o, pref->format);
        SF_JB_INT(o, ",\"ctx_valid\":", pref->valid, -1);
    } else {
        SF_JB_LIT(o, ",\"trace_id\":null,\"span_id\":null,\"parent_span_id\":null,"
                     "\"sampled\":null,\"ctx_format\":null,\"ctx_valid\":null");
    }
    o = c_conn(w, o, i, source_id, &src_at);
    SF_JB_LIT(o, ",\"contexts\":[");
    o = c_contexts(nj, o, s->req_ctx, 0, &first);
    o = c_contexts(nj, o, s->resp_ctx, 1, &first);
    SF_JB_LIT(o, "]}\n");
    sf_jb_done(w, o);
    return src_at - start;
}

/* Bytes a string takes at most in a line (every byte escaped as \u00XX), and a context. */
#define STR_MAX(s) (6 * ((s) ? strlen(s) : 0) + 8)
#define CTX_MAX    (6 * (SF_CTX_RAW_MAX + SF_CTX_STATE_MAX + SF_CTX_ERR_MAX) + 512)
#define FIXED_MAX  4096 /* keys, numbers, ids, names */

int p2s_ndjson_fits(const struct p2s_ndjson *nj, const struct p2s_conn_info *i,
                    const struct p2s_span *s)
{
    size_t n =
        FIXED_MAX + STR_MAX(s->proto) + STR_MAX(s->method) + STR_MAX(s->authority) +
        /* path, grpc service and method, and the endpoint made of them */
        2 * (STR_MAX(s->path) + STR_MAX(s->grpc_service) + STR_MAX(s->grpc_method)) +
        STR_MAX(s->grpc_message) + STR_MAX(s->partial_reason) +
        /* a JSON-RPC call's strings, its name twice (the endpoint) */
        (s->rpc ? 7 * (6 * SF_JRPC_STR + 8) : 0) +
        CTX_MAX * (size_t)((s->req_ctx ? s->req_ctx->n : 0) + (s->resp_ctx ? s->resp_ctx->n : 0));

    if (i->tls)
        n += STR_MAX(i->tls->version) + STR_MAX(i->tls->cipher) + STR_MAX(i->tls->sni) +
             STR_MAX(i->tls->alpn) + STR_MAX(i->tls->early_data);
    return n < nj->b.cap - 2 * SF_JB_SLACK;
}

#define LINE_HEAD "{\"connection_id\":"

void p2s_ndjson_take(struct p2s_ndjson *nj, const char **line, size_t *n)
{
    *line = nj->b.buf;
    *n = nj->b.len;
    nj->b.len = 0;
}

void p2s_ndjson_line(struct p2s_ndjson *nj, int64_t conn_id, int64_t source_id, const char *line,
                     size_t n, size_t src_at)
{
    struct sf_jb *w = &nj->b;
    size_t head = sizeof(LINE_HEAD) - 1;
    char *o = sf_jb_room(w, w->buf + w->len, n + 64);

    while (head < src_at && line[head] >= '0' && line[head] <= '9') /* the worker's id */
        head++;
    SF_JB_INT(o, LINE_HEAD, conn_id, INT64_MIN);
    memcpy(o, line + head, src_at - head);
    o += src_at - head;
    SF_JB_INT(o, "", source_id, INT64_MIN);
    memcpy(o, line + src_at + 1, n - src_at - 1);
    o += n - src_at - 1;
    sf_jb_done(w, o);
}

/* ctx.c - the run context (ctx.h): limits, error reports, notes, the trace-context set
 * pool, the summary; spans and connection records pass through here to the writer. */
#include "ctx.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"

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
    l->max_rpc_bytes = 16u << 20;
    l->idle_timeout_ns = 300 * INT64_C(1000000000);
    sf_attrs_keep_default(&l->keep);
}

const struct p2s_limits *p2s_limits(const struct p2s_ctx *ctx)
{
    return &ctx->lim;
}

void p2s_ctx_base_init(struct p2s_ctx *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->tool = "pcap2spans";
    p2s_limits_default(&ctx->lim);
    sf_arena_init(&ctx->pkt, 64u << 10, 64u << 20);
}

void p2s_ctx_base_free(struct p2s_ctx *ctx)
{
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

/* ---- errors ----------------------------------------------------------------------- */

void p2s_say(struct p2s_ctx *ctx, const char *line)
{
    if (!p2s_out_say(ctx->out, 0, line))
        fprintf(stderr, "%s\n", line);
}

void p2s_print_error(struct p2s_ctx *ctx, const char *line)
{
    if (ctx->errors_printed >= P2S_MAX_PRINTED_ERRORS)
        return;
    if (p2s_out_say(ctx->out, 1, line)) { /* a -j worker: the run's cap applies at replay */
        ctx->errors_printed++;
        return;
    }
    fprintf(stderr, "%s\n", line);
    if (++ctx->errors_printed == P2S_MAX_PRINTED_ERRORS)
        fprintf(stderr, "%s: further errors are only counted\n", ctx->tool);
}

void p2s_report(struct p2s_ctx *ctx, struct sf_err *err)
{
    char line[SF_ERR_MSG_MAX + 256];

    err->unit = "packet";
    err->unit_no = ctx->pkt_no;
    err->unit_off = ctx->pkt_off;
    ctx->st.errors++;
    if (ctx->strict)
        ctx->stop = 1;
    if (ctx->errors_printed >= P2S_MAX_PRINTED_ERRORS)
        return;
    sf_err_format(err, ctx->tool, ctx->file, line, sizeof(line));
    p2s_print_error(ctx, line);
}

/* A writer call failed (the database): said once, and the run stops. */
static void out_failed(struct p2s_ctx *ctx, int rc, const struct sf_err *err)
{
    if (rc == 0)
        return;
    fprintf(stderr, "%s: database: %s\n", ctx->tool, err->msg);
    ctx->st.errors++;
    ctx->stop = 1;
}

/* ---- notes, connections, spans ------------------------------------------------------ */

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
    if (conn && ctx->out) {
        sf_err_clear(&err);
        out_failed(ctx, p2s_out_event(ctx->out, p2s_conn_id(conn), ts_ns, kind, detail, &err),
                   &err);
    }
}

uint64_t p2s_note_count(const struct p2s_ctx *ctx, const char *kind)
{
    for (int i = 0; i < P2S_NOTE_KINDS && ctx->notes[i].kind; i++)
        if (strcmp(ctx->notes[i].kind, kind) == 0)
            return ctx->notes[i].n;
    return 0;
}

void p2s_conn_opened(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct p2s_conn_info *i = (struct p2s_conn_info *)p2s_conn_info(conn);
    struct sf_err err;

    if (ctx->out == NULL) {
        i->id = (int64_t)ctx->st.connections;
        return;
    }
    sf_err_clear(&err);
    out_failed(ctx, p2s_out_conn_open(ctx->out, i, &err), &err);
}

void p2s_conn_closed(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct sf_err err;

    if (ctx->out == NULL)
        return;
    sf_err_clear(&err);
    out_failed(ctx, p2s_out_conn_close(ctx->out, p2s_conn_info(conn), &err), &err);
}

void p2s_conn_tls_done(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct sf_net_tls *tls)
{
    struct sf_err err;

    if (ctx->out == NULL)
        return;
    sf_err_clear(&err);
    out_failed(ctx, p2s_out_conn_tls(ctx->out, p2s_conn_id(conn), tls, &err), &err);
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

void p2s_emit_failed_handshake(struct p2s_ctx *ctx, struct p2s_conn *conn, const char *proto,
                               const char *where, const char *authority, int64_t end_ns,
                               const char *why)
{
    struct p2s_span s;
    char path[320];

    assert(strncmp(why, "handshake failed: ", 18) == 0); /* what the readers look for */
    memset(&s, 0, sizeof(s));
    snprintf(path, sizeof(path), "%s:%s", proto, where);
    s.proto = proto;
    s.path = path;
    s.authority = authority;
    s.grpc_status = -1;
    s.grpc_timeout_ns = -1;
    s.req_start_ns = p2s_conn_info(conn)->first_ns;
    s.resp_end_ns = end_ns;
    s.req_bytes = s.resp_bytes = -1;
    s.partial = 1;
    s.partial_reason = why;
    s.reset_code = -1;
    (void)p2s_emit_span(ctx, conn, &s);
}

int p2s_emit_span(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_span *span)
{
    return p2s_emit_span_on(ctx, conn, p2s_conn_info(conn), span);
}

int p2s_emit_span_on(struct p2s_ctx *ctx, struct p2s_conn *conn, const struct p2s_conn_info *ci,
                     const struct p2s_span *span)
{
    const struct sf_tracectx *pref = NULL;
    struct p2s_span rejected;
    struct sf_err err;
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
    if (conn)
        p2s_conn_count_span(conn);
    count_contexts(ctx, span->req_ctx);
    count_contexts(ctx, span->resp_ctx);
    if (span->req_ctx && (best = sf_tracectx_set_preferred(span->req_ctx)) >= 0)
        pref = &span->req_ctx->ctx[best];
    if (ctx->span_hook && ctx->span_hook(ctx->span_hook_arg, conn, span) < 0)
        return SF_E_USAGE;
    if (ctx->out == NULL)
        return 0;
    sf_err_clear(&err);
    out_failed(ctx, p2s_out_span(ctx->out, ci, span, pref, &err), &err);
    return p2s_out_failed(ctx->out) ? SF_E_DB : 0;
}

void p2s_ctx_merge(struct p2s_ctx *into, const struct p2s_stats *st,
                   const struct p2s_note_count *notes)
{
    /* struct p2s_stats is counters only */
    _Static_assert(sizeof(struct p2s_stats) % sizeof(uint64_t) == 0, "p2s_stats: counters");
    uint64_t *a = (uint64_t *)(void *)&into->st;
    const uint64_t *b = (const uint64_t *)(const void *)st;

    for (size_t k = 0; k < sizeof(*st) / sizeof(uint64_t); k++)
        a[k] += b[k];
    for (int k = 0; k < P2S_NOTE_KINDS && notes[k].kind; k++) {
        int i;
        for (i = 0; i < P2S_NOTE_KINDS && into->notes[i].kind; i++)
            if (strcmp(into->notes[i].kind, notes[k].kind) == 0)
                break;
        if (i < P2S_NOTE_KINDS) {
            into->notes[i].kind = notes[k].kind;
            into->notes[i].n += notes[k].n;
        }
    }
}

/* ---- summary ------------------------------------------------------------------------ */

void p2s_summary(const struct p2s_ctx *ctx, FILE *f)
{
    const struct p2s_stats *s = &ctx->st;
    int i, any = 0, shown = 0;

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
    /* handshake times ("..._done") are measurements, not events worth a line */
    for (i = 0; i < P2S_NOTE_KINDS && ctx->notes[i].kind; i++) {
        size_t kl = strlen(ctx->notes[i].kind);
        if (kl > 5 && strcmp(ctx->notes[i].kind + kl - 5, "_done") == 0)
            continue;
        fprintf(f, "%s%s%s %" PRIu64, shown ? "" : ctx->tool,
                shown ? ", " : ": events: ", ctx->notes[i].kind, ctx->notes[i].n);
        shown++;
    }
    if (shown)
        fputc('\n', f);
}

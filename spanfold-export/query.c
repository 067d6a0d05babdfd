/* query.c - the spans and samples every export format reads, filtered once here.
 *
 * Spans come from `spans` joined with `connections` (and the key context's
 * W3C trace-flags from `contexts`), in request-start order.  Samples come from
 * `samples` joined with `stacks` and `sources`; their timestamps are mapped to the
 * capture clock with the newest `clock_fits` row from their clock to "realtime"
 * (t_rt = t + offset + skew_ppm * 1e-6 * (t - ref)).  With a span filter set, the
 * samples are those attributed to a span that passes it (temp table ex_spans).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sf_hex.h"
#include "sf_sha256.h"

#define TOOL "spanfold-export"

int ex_fail(const char *fmt, ...)
{
    va_list ap;

    fputs(TOOL ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

struct ex_span_iter {
    struct ex_ctx *c;
    sqlite3_stmt *st;
};

static const char span_sql[] =
    "SELECT s.id, s.connection_id, s.stream_id, s.trace_id, s.span_id, s.parent_span_id, "
    "s.sampled, s.ctx_format, s.proto, s.method, s.authority, s.path, s.status, s.grpc_service, "
    "s.grpc_method, s.grpc_status, s.grpc_message, s.req_start_ns, s.req_end_ns, s.resp_start_ns, "
    "s.resp_end_ns, s.req_bytes, s.resp_bytes, s.early_data, s.partial, s.partial_reason, "
    "s.reset_code, c.client_addr, c.client_port, c.server_addr, c.server_port, c.tls_version, "
    "c.tls_cipher, c.sni, c.alpn, c.decrypted, c.early_data, "
    "(SELECT x.flags FROM contexts x WHERE x.span_row = s.id AND x.format = s.ctx_format "
    "   AND x.valid = 1 LIMIT 1), "
    "s.rpc_id, s.rpc_direction, s.rpc_session, s.rpc_name, s.rpc_error_code, s.rpc_error, "
    "s.rpc_tool_error, s.temperature, s.top_p, s.max_tokens, s.model_hint, "
    "cr.trace_id, cr.span_id "
    "FROM spans s LEFT JOIN connections c ON c.id = s.connection_id "
    "LEFT JOIN temp.ex_carriers cr ON s.proto = 'jsonrpc' AND s.trace_id IS NULL AND "
    "cr.connection_id = s.connection_id AND cr.stream_id = s.stream_id "
    "WHERE (?1 IS NULL OR s.trace_id = ?1 OR s.trace_id_lo = ?1) AND (?2 IS NULL OR s.span_id = "
    "?2) "
    "AND (?3 IS NULL OR s.req_start_ns >= ?3) AND (?4 IS NULL OR s.req_start_ns < ?4) "
    "AND (?5 IS NULL OR s.grpc_method = ?5 OR s.grpc_service || '/' || s.grpc_method = ?5) "
    "AND (?6 IS NULL OR s.sampled = ?6) "
    "ORDER BY s.req_start_ns, s.id";

struct ex_span_iter *ex_span_iter_new(struct ex_ctx *c)
{
    struct ex_span_iter *it = calloc(1, sizeof(*it));
    const struct ex_filter *f = &c->flt;
    sqlite3 *h = sf_db_handle(c->db);

    if (it == NULL)
        return NULL;
    it->c = c;
    /* the HTTP exchanges that carried JSON-RPC calls, with their trace context: a call
     * without its own is exported as their child (indexed: one lookup a call) */
    if (sqlite3_exec(h,
                     "CREATE TEMP TABLE IF NOT EXISTS ex_carriers (connection_id INTEGER, "
                     "stream_id INTEGER, trace_id TEXT, span_id TEXT, "
                     "PRIMARY KEY (connection_id, stream_id)); DELETE FROM temp.ex_carriers; "
                     "INSERT OR IGNORE INTO temp.ex_carriers SELECT connection_id, stream_id, "
                     "trace_id, span_id FROM spans WHERE rpc_messages IS NOT NULL AND "
                     "trace_id IS NOT NULL AND span_id IS NOT NULL",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, span_sql, -1, &it->st, NULL) != SQLITE_OK) {
        ex_fail("%s: reading spans: %s", c->db_path, sqlite3_errmsg(h));
        free(it);
        return NULL;
    }
    sf_db_bind_text(it->st, 1, f->trace_id);
    sf_db_bind_text(it->st, 2, f->span_id);
    sf_db_bind_int(it->st, 3, f->from_ns);
    sf_db_bind_int(it->st, 4, f->to_ns);
    sf_db_bind_text(it->st, 5, f->grpc_method);
    sf_db_bind_int(it->st, 6, f->sampled < 0 ? SF_DB_NULL : f->sampled);
    return it;
}

void ex_span_iter_free(struct ex_span_iter *it)
{
    if (it) {
        sqlite3_finalize(it->st);
        free(it);
    }
}

static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static int64_t col_int(sqlite3_stmt *st, int i, int64_t null_value)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? null_value : sqlite3_column_int64(st, i);
}

/* Service name: --service-map "authority=name,..." first, else the authority's host. */
static void derive_service(const struct ex_ctx *c, struct ex_span *s)
{
    const char *a = s->authority ? s->authority : (s->server_addr ? s->server_addr : "unknown");
    size_t alen = strlen(a), hl;
    const char *m = c->service_map;

    while (m && *m) {
        const char *eq = strchr(m, '='), *comma = strchr(m, ',');
        size_t vlen;
        if (eq == NULL || (comma && comma < eq))
            break;
        vlen = comma ? (size_t)(comma - eq - 1) : strlen(eq + 1);
        if ((size_t)(eq - m) == alen && strncmp(m, a, alen) == 0) {
            snprintf(s->service, sizeof(s->service), "%.*s", (int)vlen, eq + 1);
            return;
        }
        m = comma ? comma + 1 : NULL;
    }
    /* host part: "[::1]:8443" -> "::1", "api:80" -> "api" */
    if (a[0] == '[' && strchr(a, ']'))
        snprintf(s->service, sizeof(s->service), "%.*s", (int)(strchr(a, ']') - a - 1), a + 1);
    else {
        hl = strchr(a, ':') && strchr(a, ':') == strrchr(a, ':') ? (size_t)(strchr(a, ':') - a)
                                                                 : alen;
        snprintf(s->service, sizeof(s->service), "%.*s", (int)hl, a);
    }
}

/* Deterministic ids for spans without a trace context (--all): sha256 of the
 * database row, so a re-export names them the same. */
static void synthesize_ids(struct ex_span *s)
{
    struct sf_sha256 h;
    uint8_t d[32];
    char key[64];
    int n = snprintf(key, sizeof(key), "spanfold-span-%lld", (long long)s->row);

    if (sf_sha256_init(&h) < 0) { /* libcrypto missing: no id is better than a wrong one */
        fprintf(stderr, "spanfold-export: cannot hash (no libcrypto here)\n");
        exit(2);
    }
    sf_sha256_update(&h, key, (size_t)n);
    sf_sha256_final(&h, d);
    sf_hex_encode(s->trace_id, d, 16);
    sf_hex_encode(s->span_id, d + 16, 8);
    s->parent_id[0] = 0;
    s->synthetic = 1;
}

static void copy_id(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

static void fill_span(struct ex_span *s, sqlite3_stmt *st)
{
    int64_t req_end, resp_end;

    memset(s, 0, sizeof(*s));
    s->row = sqlite3_column_int64(st, 0);
    s->conn_id = col_int(st, 1, 0);
    s->stream_id = col_int(st, 2, 0);
    copy_id(s->trace_id, sizeof(s->trace_id), col_text(st, 3));
    copy_id(s->span_id, sizeof(s->span_id), col_text(st, 4));
    copy_id(s->parent_id, sizeof(s->parent_id), col_text(st, 5));
    s->sampled = (int)col_int(st, 6, -1);
    s->ctx_format = col_text(st, 7);
    s->proto = col_text(st, 8);
    s->method = col_text(st, 9);
    s->authority = col_text(st, 10);
    s->path = col_text(st, 11);
    s->status = (int)col_int(st, 12, 0);
    s->grpc_service = col_text(st, 13);
    s->grpc_method = col_text(st, 14);
    s->grpc_status = (int)col_int(st, 15, -1);
    s->grpc_message = col_text(st, 16);
    s->start_ns = col_int(st, 17, 0);
    req_end = col_int(st, 18, 0);
    resp_end = col_int(st, 20, 0);
    if (s->start_ns == 0)
        s->start_ns = col_int(st, 19, 0);
    s->end_ns = resp_end > req_end ? resp_end : req_end;
    if (s->end_ns < s->start_ns)
        s->end_ns = s->start_ns;
    s->req_bytes = col_int(st, 21, -1);
    s->resp_bytes = col_int(st, 22, -1);
    s->early_data = (int)col_int(st, 23, 0);
    s->partial = (int)col_int(st, 24, 0);
    s->partial_reason = col_text(st, 25);
    s->reset_code = col_int(st, 26, -1);
    s->client_addr = col_text(st, 27);
    s->client_port = (int)col_int(st, 28, 0);
    s->server_addr = col_text(st, 29);
    s->server_port = (int)col_int(st, 30, 0);
    s->tls_version = col_text(st, 31);
    s->tls_cipher = col_text(st, 32);
    s->sni = col_text(st, 33);
    s->alpn = col_text(st, 34);
    s->decrypted = (int)col_int(st, 35, 0);
    s->early_state = col_text(st, 36);
    s->trace_flags = (int)col_int(st, 37, -1);
    s->rpc_id = col_text(st, 38);
    s->rpc_direction = col_text(st, 39);
    s->rpc_session = col_text(st, 40);
    s->rpc_name = col_text(st, 41);
    s->rpc_error_code = col_int(st, 42, INT64_MIN);
    s->rpc_error = col_text(st, 43);
    s->rpc_tool_error = (int)col_int(st, 44, 0);
    s->temperature = col_real(st, 45);
    s->top_p = col_real(st, 46);
    s->max_tokens = col_int(st, 47, -1);
    s->model_hint = col_text(st, 48);
    s->carrier_trace = col_text(st, 49);
    s->carrier_span = col_text(st, 50);
}

/* A JSON-RPC call without a trace context of its own, in an HTTP exchange with one: the
 * exchange's trace, the exchange as its parent, a span id of its own made from its row
 * (the same at every export). */
static void carrier_child(struct ex_span *s)
{
    char trace[33], parent[17];

    copy_id(trace, sizeof(trace), s->carrier_trace);
    copy_id(parent, sizeof(parent), s->carrier_span);
    synthesize_ids(s);
    memcpy(s->trace_id, trace, sizeof(trace));
    memcpy(s->parent_id, parent, sizeof(parent));
    s->synthetic = 0;
    s->synthetic_span = 1;
}

int ex_span_next(struct ex_span_iter *it, struct ex_span *s)
{
    int rc;

    for (;;) {
        rc = sqlite3_step(it->st);
        if (rc == SQLITE_DONE)
            return 0;
        if (rc != SQLITE_ROW) {
            ex_fail("%s: reading spans: %s", it->c->db_path,
                    sqlite3_errmsg(sf_db_handle(it->c->db)));
            return -1;
        }
        fill_span(s, it->st);
        derive_service(it->c, s);
        if (it->c->flt.service && strcmp(it->c->flt.service, s->service) != 0)
            continue;
        if ((s->span_id[0] == 0 || s->trace_id[0] == 0) && s->carrier_trace && s->carrier_span) {
            carrier_child(s); /* a JSON-RPC call in a traced HTTP exchange */
        } else if (s->span_id[0] == 0 || s->trace_id[0] == 0) {
            if (!it->c->flt.all) {
                it->c->skipped++;
                continue;
            }
            synthesize_ids(s);
        }
        return 1;
    }
}

int ex_span_handshake_failed(const struct ex_span *s)
{
    return s->partial_reason && strncmp(s->partial_reason, "handshake failed:", 17) == 0;
}

int ex_span_is_rpc(const struct ex_span *s)
{
    return s->proto && strcmp(s->proto, "jsonrpc") == 0;
}

int ex_span_error(const struct ex_span *s)
{
    return s->status >= 500 || s->grpc_status > 0 || s->reset_code >= 0 ||
           ex_span_handshake_failed(s) || s->rpc_error_code != INT64_MIN || s->rpc_tool_error;
}

void ex_span_name(const struct ex_span *s, char *out, size_t n)
{
    if (ex_span_is_rpc(s))
        snprintf(out, n, "%s%s%s", s->method ? s->method : "?", s->rpc_name ? " " : "",
                 s->rpc_name ? s->rpc_name : "");
    else if (s->grpc_service && s->grpc_method)
        snprintf(out, n, "%s/%s", s->grpc_service, s->grpc_method);
    else if (ex_span_handshake_failed(s) && s->path) /* "tls:api.example.com" */
        snprintf(out, n, "%s", s->path);
    else
        snprintf(out, n, "%s %s", s->method ? s->method : "?", s->path ? s->path : "/");
}

/* ---- samples ------------------------------------------------------------------------ */

struct fit {
    char from[32];
    int64_t offset, ref;
    double skew_ppm;
};

struct ex_sample_iter {
    struct ex_ctx *c;
    sqlite3_stmt *st;
    struct fit *fits;
    int nfits;
};

static int span_filter_set(const struct ex_filter *f)
{
    return f->trace_id || f->span_id || f->service || f->grpc_method || f->sampled >= 0 ||
           f->from_ns != SF_DB_NULL || f->to_ns != SF_DB_NULL;
}

/* The span ids that pass the filters, for the sample query. */
static int fill_span_table(struct ex_ctx *c)
{
    sqlite3 *h = sf_db_handle(c->db);
    struct ex_span_iter *it;
    struct ex_span s;
    sqlite3_stmt *ins;
    int rc, all = c->flt.all;
    uint64_t skipped = c->skipped;

    if (sqlite3_exec(h,
                     "CREATE TEMP TABLE IF NOT EXISTS ex_spans (span_id TEXT PRIMARY KEY); "
                     "DELETE FROM temp.ex_spans",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, "INSERT OR IGNORE INTO temp.ex_spans VALUES (?1)", -1, &ins, NULL) !=
            SQLITE_OK)
        return ex_fail("%s: %s", c->db_path, sqlite3_errmsg(h));
    c->flt.all = 0; /* samples carry real span ids only */
    it = ex_span_iter_new(c);
    while (it && (rc = ex_span_next(it, &s)) == 1) {
        sqlite3_bind_text(ins, 1, s.span_id, -1, SQLITE_TRANSIENT);
        sqlite3_step(ins);
        sqlite3_reset(ins);
    }
    ex_span_iter_free(it);
    sqlite3_finalize(ins);
    c->flt.all = all;
    c->skipped = skipped;
    return it ? 0 : 2;
}

static void load_fits(struct ex_sample_iter *it)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(sf_db_handle(it->c->db),
                           "SELECT from_clock, offset_ns, skew_ppm, ref_ns FROM clock_fits "
                           "WHERE to_clock = 'realtime' ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct fit *f = realloc(it->fits, (size_t)(it->nfits + 1) * sizeof(*f));
        if (f == NULL)
            break;
        it->fits = f;
        f += it->nfits++;
        copy_id(f->from, sizeof(f->from), col_text(st, 0));
        f->offset = sqlite3_column_int64(st, 1);
        f->skew_ppm = sqlite3_column_double(st, 2);
        f->ref = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
}

struct ex_sample_iter *ex_sample_iter_new(struct ex_ctx *c)
{
    static const char sql[] =
        "SELECT sa.ts_ns, sa.pid, sa.tid, sa.cpu, sa.period, sa.comm, sa.event, st.frames, "
        "sa.span_id, src.clock FROM samples sa JOIN stacks st ON st.id = sa.stack_id "
        "JOIN sources src ON src.id = sa.source_id "
        "WHERE ?1 = 0 OR sa.span_id IN (SELECT span_id FROM temp.ex_spans) "
        "ORDER BY CASE WHEN ?2 THEN sa.span_id IS NULL END, CASE WHEN ?2 THEN sa.span_id END, "
        "sa.ts_ns, sa.id";
    struct ex_sample_iter *it = calloc(1, sizeof(*it));
    int filtered = span_filter_set(&c->flt);
    sqlite3 *h = sf_db_handle(c->db);

    if (it == NULL)
        return NULL;
    it->c = c;
    /* the table must exist for the statement to compile, filtered or not */
    if (sqlite3_exec(h, "CREATE TEMP TABLE IF NOT EXISTS ex_spans (span_id TEXT PRIMARY KEY)", NULL,
                     NULL, NULL) != SQLITE_OK ||
        (filtered && fill_span_table(c))) {
        free(it);
        return NULL;
    }
    if (sqlite3_prepare_v2(h, sql, -1, &it->st, NULL) != SQLITE_OK) {
        ex_fail("%s: reading samples: %s", c->db_path, sqlite3_errmsg(h));
        free(it);
        return NULL;
    }
    sqlite3_bind_int(it->st, 1, filtered);
    sqlite3_bind_int(it->st, 2, c->samples_by_span);
    load_fits(it);
    return it;
}

int ex_sample_next(struct ex_sample_iter *it, struct ex_sample *s)
{
    int rc = sqlite3_step(it->st);

    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW) {
        ex_fail("%s: reading samples: %s", it->c->db_path, sqlite3_errmsg(sf_db_handle(it->c->db)));
        return -1;
    }
    s->ts_ns = col_int(it->st, 0, 0);
    s->pid = col_int(it->st, 1, -1);
    s->tid = col_int(it->st, 2, -1);
    s->cpu = col_int(it->st, 3, -1);
    s->period = col_int(it->st, 4, 1);
    s->comm = col_text(it->st, 5);
    s->event = col_text(it->st, 6);
    s->frames = col_text(it->st, 7);
    s->span_id = col_text(it->st, 8);
    s->clock = col_text(it->st, 9);
    s->ts_rt_ns = INT64_MIN;
    if (s->clock && strcmp(s->clock, "realtime") == 0)
        s->ts_rt_ns = s->ts_ns;
    /* the newest fit from this sample's clock wins */
    for (int i = it->nfits - 1; i >= 0 && s->ts_rt_ns == INT64_MIN; i--)
        if (s->clock && strcmp(it->fits[i].from, s->clock) == 0)
            s->ts_rt_ns =
                s->ts_ns + it->fits[i].offset +
                (int64_t)(it->fits[i].skew_ppm * 1e-6 * (double)(s->ts_ns - it->fits[i].ref));
    return 1;
}

void ex_sample_iter_free(struct ex_sample_iter *it)
{
    if (it) {
        sqlite3_finalize(it->st);
        free(it->fits);
        free(it);
    }
}

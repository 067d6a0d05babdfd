/* attribute.c - clock alignment against the pcap spans, then sample attribution.
 *
 * Pairs: a span id seen in a tracefs source (x = its earliest begin/decision/mark
 * marker, in the source's clock) and in the spans table of a pcap source (y = the
 * span's --pair-with time, req_start_ns by default; the earliest when a span id
 * appears more than once, as with B3 shared span ids).  clockfit.c finds the
 * offset and skew; each segment between clock steps becomes one clock_fits row
 * from the tracefs clock to the pcap clock.  Then sf_db_attribute_samples() sets
 * samples.span_id (lib/sf_db_trace.c), the rule perf-fold --db applies too.
 */
#include <stdlib.h>
#include <string.h>

#include "sf_clock.h"
#include "sf_db.h"
#include "sf_db_trace.h"
#include "t2s.h"

#define MAX_PAIRS 2000000

static int db_fail(struct t2s_ctx *c, struct sf_err *err)
{
    char msg[600];

    (void)c;
    sf_err_format(err, "tracefs2spans", c->db_path, msg, sizeof(msg));
    fprintf(stderr, "%s\n", msg);
    return SF_EXIT_USAGE;
}

/* The matched pairs of tracefs source src against pcap spans of clock to_clock. */
static int load_pairs(struct t2s_ctx *c, int64_t src, const char *to_clock, struct cf_pair **out,
                      size_t *n, struct sf_err *err)
{
    char sql[900];
    sqlite3_stmt *st;
    size_t cap = 0;
    struct cf_pair *p = NULL;

    snprintf(sql, sizeof(sql),
             "SELECT e.x, s.y FROM (SELECT span_id, MIN(ts_ns) AS x FROM span_events WHERE "
             "source_id = ?1 AND span_id IS NOT NULL AND kind IN ('begin', 'decision', 'mark') "
             "GROUP BY span_id) e JOIN (SELECT sp.span_id, MIN(sp.%s) AS y FROM spans sp JOIN "
             "sources so ON so.id = sp.source_id WHERE so.kind = 'pcap' AND so.clock = ?2 AND "
             "sp.span_id IS NOT NULL AND sp.%s IS NOT NULL GROUP BY sp.span_id) s "
             "ON s.span_id = e.span_id",
             c->pair_with, c->pair_with);
    *n = 0;
    if (sqlite3_prepare_v2(sf_db_handle(c->db), sql, -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "reading pairs: %s",
                          sqlite3_errmsg(sf_db_handle(c->db)));
    sqlite3_bind_int64(st, 1, src);
    sqlite3_bind_text(st, 2, to_clock, -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW && *n < MAX_PAIRS) {
        if (*n == cap) {
            struct cf_pair *q = realloc(p, (cap = cap ? 2 * cap : 1024) * sizeof(*p));
            if (q == NULL) {
                free(p);
                sqlite3_finalize(st);
                return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory reading pairs");
            }
            p = q;
        }
        p[*n].x = sqlite3_column_int64(st, 0);
        p[*n].y = sqlite3_column_int64(st, 1);
        (*n)++;
    }
    sqlite3_finalize(st);
    *out = p;
    return 0;
}

static const char *method_name(const struct cf_segment *s)
{
    if (s->count == 1)
        return "single-pair";
    if (s->skew_fitted)
        return s->upper ? "theil-sen+trim+upper-envelope" : "theil-sen+trim+lower-envelope";
    return s->upper ? "fixed-skew+trim+upper-envelope" : "fixed-skew+trim+lower-envelope";
}

static void report_fit(struct t2s_ctx *c, int64_t src, const char *from, const char *to,
                       const struct cf_result *r)
{
    char t[40];

    for (int k = 1; k < r->nseg; k++) {
        const struct cf_segment *a = &r->seg[k - 1], *b = &r->seg[k];
        int64_t x = b->x_from;
        double oa = (double)a->offset_ns + a->skew_ppm * 1e-6 * (double)(x - a->ref_ns);
        double ob = (double)b->offset_ns + b->skew_ppm * 1e-6 * (double)(x - b->ref_ns);
        fprintf(stderr,
                "tracefs2spans: source %lld: clock step of %+.3f ms between %s and %s at "
                "%s s (%s)\n",
                (long long)src, (ob - oa) / 1e6, from, to, sf_clock_format_ts(t, sizeof(t), x),
                from);
    }
    if (c->quiet)
        return;
    for (int k = 0; k < r->nseg; k++) {
        const struct cf_segment *s = &r->seg[k];
        fprintf(stderr,
                "tracefs2spans: source %lld: %s -> %s: offset %s s, skew %+.3f ppm, %zu "
                "pairs (%zu kept), residual median %lld ns, max %lld ns, %s\n",
                (long long)src, from, to, sf_clock_format_ts(t, sizeof(t), s->offset_ns),
                s->skew_ppm, s->count, s->inliers, (long long)s->residual_ns,
                (long long)s->residual_max_ns, method_name(s));
    }
}

static int store_fit(struct t2s_ctx *c, int64_t src, const char *from, const char *to,
                     const struct cf_result *r, struct sf_err *err)
{
    int rc;

    for (int k = 0; k < r->nseg; k++) {
        const struct cf_segment *s = &r->seg[k];
        struct sf_clock_fit_row f = {from,
                                     to,
                                     src,
                                     SF_DB_NULL,
                                     s->offset_ns,
                                     s->skew_ppm,
                                     s->ref_ns,
                                     k == 0 ? SF_DB_NULL : s->x_from,
                                     k + 1 == r->nseg ? SF_DB_NULL : r->seg[k + 1].x_from - 1,
                                     (int64_t)s->count,
                                     s->residual_ns,
                                     s->residual_max_ns,
                                     method_name(s)};
        if ((rc = sf_db_trace_clock_fit(c->db, &f, NULL, err)))
            return rc;
    }
    return 0;
}

/* Fit (or set by hand) the clocks of one tracefs source against each pcap clock; with
 * socket events, from their own pairs (sp, nsp) against the capture clock sp_clock. */
static int align_source(struct t2s_ctx *c, int64_t src, const char *from, struct cf_pair *sp,
                        size_t nsp, const char *sp_clock, struct sf_err *err)
{
    sqlite3_stmt *q;
    int rc = 0;

    if ((rc = sf_db_trace_clear_fits(c->db, src, err)))
        return rc;
    if (sqlite3_prepare_v2(sf_db_handle(c->db),
                           "SELECT DISTINCT clock FROM sources WHERE "
                           "kind = 'pcap' AND id IN (SELECT source_id FROM spans)",
                           -1, &q, NULL) != SQLITE_OK)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "reading pcap sources");
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        char to[64];
        struct cf_pair *p = NULL;
        struct cf_result r;
        size_t n;
        snprintf(to, sizeof(to), "%s", (const char *)sqlite3_column_text(q, 0));
        if (strcmp(to, from) == 0 || c->have_offset)
            continue;
        if (sp && strcmp(to, sp_clock) != 0)
            continue; /* socket events pair with one capture clock */
        if (sp) {
            n = nsp;
        } else if ((rc = load_pairs(c, src, to, &p, &n, err))) {
            break;
        }
        if (n == 0) {
            if (!c->quiet)
                fprintf(stderr,
                        "tracefs2spans: source %lld: no span id shared with the %s "
                        "spans, no clock fit\n",
                        (long long)src, to);
        } else if ((rc = clockfit_fit(sp ? sp : p, n, &c->fit, &r, err)) == 0) {
            report_fit(c, src, from, to, &r);
            rc = store_fit(c, src, from, to, &r, err);
        }
        free(p);
        p = NULL;
    }
    sqlite3_finalize(q);
    if (rc == 0 && c->have_offset) {
        struct sf_clock_fit_row f = {from,       SF_CLOCK_REALTIME, src,
                                     SF_DB_NULL, c->offset_ns,      c->have_skew ? c->skew_ppm : 0,
                                     0,          SF_DB_NULL,        SF_DB_NULL,
                                     0,          SF_DB_NULL,        SF_DB_NULL,
                                     "manual"};
        rc = sf_db_trace_clock_fit(c->db, &f, NULL, err);
    }
    return rc;
}

/* 1 when tracefs source src holds socket events (spantrace --sockets). */
static int has_socket_events(struct t2s_ctx *c, int64_t src)
{
    sqlite3_stmt *q;
    int yes = 0;

    if (sqlite3_prepare_v2(sf_db_handle(c->db),
                           "SELECT 1 FROM span_events WHERE source_id = ?1 AND kind = 'sock' "
                           "LIMIT 1",
                           -1, &q, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(q, 1, src);
    yes = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return yes;
}

int attribute_run(struct t2s_ctx *c)
{
    struct sf_attr_stats st;
    struct sf_err err;
    sqlite3_stmt *q;
    int rc = 0, socket_sources = 0;

    sf_err_clear(&err);
    if (sqlite3_prepare_v2(sf_db_handle(c->db),
                           "SELECT id, clock FROM sources WHERE kind = "
                           "'tracefs' AND status = 'complete' AND id IN (SELECT source_id FROM "
                           "span_events WHERE span_id IS NOT NULL OR kind = 'sock')",
                           -1, &q, NULL) != SQLITE_OK) {
        sf_err_set(&err, SF_E_DB, UINT64_MAX, "reading sources");
        return db_fail(c, &err);
    }
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        char from[64], to[64] = "";
        int64_t src = sqlite3_column_int64(q, 0);
        struct cf_pair *sp = NULL;
        size_t nsp = 0;
        int sock = has_socket_events(c, src);
        snprintf(from, sizeof(from), "%s", (const char *)sqlite3_column_text(q, 1));
        socket_sources += sock;
        if (sock)
            rc = sockets_run(c, src, &sp, &nsp, to, sizeof(to), &err);
        if (rc == 0)
            rc = align_source(c, src, from, sock ? sp : NULL, nsp, to, &err);
        free(sp);
    }
    sqlite3_finalize(q);
    if (rc == 0)
        rc = sf_db_commit(c->db, &err);
    if (rc == 0 && c->attribute)
        rc = sf_db_attribute_samples_stats(c->db, &st, &err);
    if (rc == 0 && c->attribute && socket_sources)
        rc = sockets_report_cpu(c, &err);
    if (rc)
        return db_fail(c, &err);
    if (c->attribute && !c->quiet)
        fprintf(stderr,
                "tracefs2spans: %llu of %llu samples inside span intervals (%llu "
                "updated)%s\n",
                (unsigned long long)st.attributed, (unsigned long long)st.samples,
                (unsigned long long)st.changed,
                st.unmapped ? "; some sources have no clock relation" : "");
    return 0;
}

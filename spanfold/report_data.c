/* report_data.c - spanfold report's analysis, from inflect's and perf-fold's code.
 *
 *   sf_window_auto()      the window, adapted to span density (unless --window)
 *   sf_spans_window()     per endpoint and window: latency percentiles, error rate, kept
 *                      share; p95/p99 masked where a window is too small for them
 *   run_db_series()    inflect's change points on every series, classified
 *   rp_refine()        a p50 step moved from its window to the first span of the
 *                      new regime
 *   drift_analyse()    per endpoint against the configured rate, or against the rate
 *                      of the first regime of its kept share when none is configured
 *   spans_fold_sets()  the CPU samples with their spans (perf-fold's attribution), in
 *                      one pass, in sets: all; the slowest 5 % and the rest (sf_select_slowest, as
 *                      `spanfold stacks --slowest 5%` takes it); per endpoint its own
 *                      slowest 5 % (ranked on the span list the detector reads)
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../inflect/run.h"
#include "../perf-fold/perf_fold.h"
#include "ch_sets.h"
#include "report.h"
#include "sf_db.h"
#include "sf_quantile.h"
#include "sf_select.h"
#include "sf_text.h"
#include "sf_thin.h"
#include "sf_window.h"

/* ---- a small string -> counts table: function names, stacks ---------------------- */

struct tally_ent {
    char *key;
    double n[2]; /* [0] the set, [1] the set it is compared with */
};

struct tally {
    struct tally_ent *e; /* in insertion order */
    size_t n, cap;
    struct sf_map map; /* sf_hash(key) -> index + 1 */
    double tot[2];
};

struct tally_key {
    const struct tally *t;
    const char *key;
    size_t len;
};

static int tally_eq(const void *val, const void *key)
{
    const struct tally_key *k = key;
    const char *e = k->t->e[(uintptr_t)val - 1].key;

    return strlen(e) == k->len && memcmp(e, k->key, k->len) == 0;
}

/* Add v to column which (0/1) of key[0..len).  Returns 0 or -1 (out of memory). */
static int tally_add(struct tally *t, const char *key, size_t len, int which, double v)
{
    struct tally_key k = {t, key, len};
    uint64_t h = sf_hash(key, len);
    struct sf_map_slot *slot;
    struct tally_ent *e;

    if (sf_map_reserve(&t->map, 1) < 0)
        return -1;
    slot = sf_map_probe(&t->map, h, tally_eq, &k);
    t->tot[which] += v;
    if (slot->val != NULL) {
        t->e[(uintptr_t)slot->val - 1].n[which] += v;
        return 0;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        struct tally_ent *ne = realloc(t->e, nc * sizeof(*ne));
        if (ne == NULL)
            return -1;
        t->e = ne;
        t->cap = nc;
    }
    e = &t->e[t->n];
    if ((e->key = malloc(len + 1)) == NULL)
        return -1;
    memcpy(e->key, key, len);
    e->key[len] = 0;
    e->n[0] = e->n[1] = 0;
    e->n[which] = v;
    sf_map_fill(&t->map, slot, h, (void *)(uintptr_t)++t->n);
    return 0;
}

static void tally_free(struct tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].key);
    free(t->e);
    sf_map_free(&t->map);
    memset(t, 0, sizeof(*t));
}

/* Shares of t in column 0 (and 1) into out[], best first: by share (by_delta 0) or by
 * share minus the other column's share (by_delta 1, rises only). */
static size_t tally_top(const struct tally *t, int by_delta, struct rp_func *out, size_t max)
{
    size_t k = 0;

    for (size_t i = 0; i < t->n; i++) {
        double s = t->tot[0] > 0 ? t->e[i].n[0] / t->tot[0] : 0;
        double r = t->tot[1] > 0 ? t->e[i].n[1] / t->tot[1] : 0;
        double score = by_delta ? s - r : s, at;
        size_t j;
        if (score <= 0)
            continue;
        /* insertion into the sorted top list */
        for (j = k; j > 0; j--) {
            at = by_delta ? out[j - 1].share - out[j - 1].rest : out[j - 1].share;
            if (at >= score)
                break;
            if (j < max)
                out[j] = out[j - 1];
        }
        if (j < max) {
            snprintf(out[j].name, sizeof(out[j].name), "%s", t->e[i].key);
            out[j].share = s;
            out[j].rest = r;
            if (k < max)
                k++;
        }
    }
    return k;
}

/* ---- clocks ----------------------------------------------------------------------- */

int rp_fit_read(sqlite3 *h, const char *clock, struct rp_fit *f)
{
    sqlite3_stmt *st;

    memset(f, 0, sizeof(*f));
    if (strcmp(clock, "realtime") == 0) {
        f->have = 1;
        return 0;
    }
    if (sqlite3_prepare_v2(h,
                           "SELECT offset_ns, skew_ppm, ref_ns FROM clock_fits WHERE from_clock = "
                           "?1 AND to_clock = 'realtime' ORDER BY points DESC, id LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, clock, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) {
        f->have = 1;
        f->off = sqlite3_column_int64(st, 0);
        f->skew_ppm = sqlite3_column_double(st, 1);
        f->ref = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return 0;
}

int64_t rp_fit_apply(const struct rp_fit *f, int64_t t)
{
    if (!f->have)
        return t;
    return t + f->off + (int64_t)llround(f->skew_ppm * 1e-6 * (double)(t - f->ref));
}

int64_t rp_realtime(const struct rp_ctx *c, int64_t t)
{
    return rp_fit_apply(&c->fit, t);
}

int64_t rp_win_time(const struct rp_ctx *c, size_t w)
{
    size_t n = c->sw.nwin;

    /* windows are sparse (inflect/spans.h): a stored window's start, or past the last */
    if (n == 0)
        return rp_realtime(c, c->sw.t0_ns);
    if (w < n)
        return rp_realtime(c, sf_spans_window_start(&c->sw, w));
    return rp_realtime(c, sf_spans_window_start(&c->sw, n - 1) +
                              (int64_t)(w - n + 1) * c->sw.window_ns);
}

size_t rp_win_of(const struct rp_ctx *c, int64_t t)
{
    int64_t num = (t - c->sw.t0_ns) / c->sw.window_ns;
    size_t lo = 0, hi = c->sw.nwin;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;

        if (c->sw.win[mid] <= num)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double rp_span_seconds(const struct rp_ctx *c)
{
    return c->sw.nwin ? (double)(rp_win_time(c, c->sw.nwin) - rp_win_time(c, 0)) / 1e9 : 0;
}

static void note(struct rp_ctx *c, const char *text)
{
    if (c->nnotes < (int)(sizeof(c->notes) / sizeof(c->notes[0])))
        snprintf(c->notes[c->nnotes++], sizeof(c->notes[0]), "%s", text);
}

/* The spans' clock, and the clock_fits row that maps it to CLOCK_REALTIME. */
/* SQL sf_kept(trace_id, span_id, req_start_ns): 1 when the request is analysed one by
 * one (sf_thin_request at the report's share), so that a query over the spans table
 * counts on a file what it counts on a cluster's read-back (which holds the sample and
 * their downstream calls, not every span). */
static void sql_kept(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    const double *thin = sqlite3_user_data(cx);

    assert(argc == 3);
    sqlite3_result_int(cx, sf_thin_request((const char *)sqlite3_value_text(v[0]),
                                           (const char *)sqlite3_value_text(v[1]),
                                           sqlite3_value_int64(v[2]), *thin));
}

static int read_clock(struct rp_ctx *c, sqlite3 *h)
{
    sqlite3_stmt *st;

    snprintf(c->span_clock, sizeof(c->span_clock), "realtime");
    if (sqlite3_prepare_v2(h,
                           "SELECT so.clock FROM spans s JOIN sources so ON so.id = s.source_id "
                           "WHERE sf_kept(s.trace_id, s.span_id, s.req_start_ns) "
                           "GROUP BY so.clock ORDER BY count(*) DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(c->span_clock, sizeof(c->span_clock), "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (strcmp(c->span_clock, "realtime") == 0)
        return 0;
    if (rp_fit_read(h, c->span_clock, &c->fit) < 0)
        return -1;
    if (!c->fit.have) {
        char b[256];
        snprintf(b, sizeof(b),
                 "the spans' clock (%s) has no clock_fits row to realtime: times are shown "
                 "as recorded",
                 c->span_clock);
        note(c, b);
    }
    return 0;
}

/* ---- spans ------------------------------------------------------------------------ */

/* The group of a span named name: its window group, the name cut as sf_spans cuts it
 * (a long name's spans are that group's), else "(other)", else SIZE_MAX. */
static size_t group_index(const struct rp_ctx *c, const char *name)
{
    size_t other = SIZE_MAX, n = sf_text_utf8_cut(name, strlen(name), sizeof(c->sw.g->name) - 1);
    for (size_t g = 0; g < c->sw.ng; g++) {
        if (strncmp(c->sw.g[g].name, name, n) == 0 && c->sw.g[g].name[n] == 0)
            return g;
        if (strcmp(c->sw.g[g].name, "(other)") == 0)
            other = g;
    }
    return other;
}

static int read_spans(struct rp_ctx *c, sqlite3 *h)
{
    char sql[1024];
    const char *ge = sf_spans_group_expr("endpoint");
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    snprintf(sql, sizeof(sql),
             "SELECT s.span_id, %s, s.req_start_ns, COALESCE(s.resp_end_ns, s.resp_start_ns), "
             "s.req_end_ns, s.resp_start_ns, s.connection_id, s.trace_id FROM spans s WHERE "
             "s.req_start_ns IS "
             "NOT NULL AND (%s) "
             "IS NOT NULL "
             "ORDER BY s.req_start_ns, s.id",
             ge, ge);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct rp_span *sp;
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *gname = (const char *)sqlite3_column_text(st, 1);
        size_t g = group_index(c, gname ? gname : "");
        if (g == SIZE_MAX)
            continue;
        if (c->nspans == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            struct rp_span *ns = realloc(c->spans, nc * sizeof(*ns));
            if (ns == NULL)
                break;
            c->spans = ns;
            cap = nc;
        }
        sp = &c->spans[c->nspans++];
        memset(sp, 0, sizeof(*sp));
        snprintf(sp->id, sizeof(sp->id), "%s", id ? id : "");
        sp->group = g;
        sp->start_ns = sqlite3_column_int64(st, 2);
        sp->lat_ms = sqlite3_column_type(st, 3) == SQLITE_NULL
                         ? NAN
                         : (double)(sqlite3_column_int64(st, 3) - sp->start_ns) / 1e6;
        if (sp->lat_ms < 0)
            sp->lat_ms = NAN;
        sp->req_end_ns =
            sqlite3_column_type(st, 4) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 4);
        sp->resp_start_ns =
            sqlite3_column_type(st, 5) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 5);
        sp->conn = sqlite3_column_int64(st, 6);
        sp->kept = sf_thin_request((const char *)sqlite3_column_text(st, 7), sp->id, sp->start_ns,
                                   c->thin);
        c->nkept += (size_t)sp->kept;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* by_group and group_at: a counting sort of the spans by group, stable, so each
 * group's spans stay in start order.  Returns 0 or -1 (out of memory). */
static int group_spans(struct rp_ctx *c)
{
    size_t ng = c->sw.ng;

    c->by_group = malloc((c->nspans ? c->nspans : 1) * sizeof(*c->by_group));
    c->group_at = calloc(ng + 2, sizeof(*c->group_at));
    if (c->by_group == NULL || c->group_at == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        c->group_at[c->spans[i].group + 2]++;
    for (size_t g = 0; g < ng; g++)
        c->group_at[g + 2] += c->group_at[g + 1];
    /* group_at[g + 1] is now where group g starts; filling moves it to its end */
    for (size_t i = 0; i < c->nspans; i++)
        c->by_group[c->group_at[c->spans[i].group + 1]++] = i;
    assert(c->group_at[ng] == c->nspans);
    return 0;
}

int rp_heat_bin(const struct rp_heat *h, double ms)
{
    double x = log(fmax(ms, h->lo_ms) / h->lo_ms) / log(h->hi_ms / h->lo_ms);
    int b = (int)(x * RP_HEAT_BINS);

    return b < 0 ? 0 : b >= RP_HEAT_BINS ? RP_HEAT_BINS - 1 : b;
}

int rp_heatmap(const struct rp_ctx *c, size_t g, struct rp_heat *h)
{
    const size_t *ix = c->by_group + c->group_at[g];
    size_t n = c->group_at[g + 1] - c->group_at[g], w = 0;
    double lo = INFINITY, hi = 0;

    memset(h, 0, sizeof(*h));
    assert(g < c->sw.ng);
    for (size_t k = 0; k < n; k++) {
        double ms = c->spans[ix[k]].lat_ms;
        if (c->spans[ix[k]].kept && isfinite(ms) && ms > 0) {
            lo = fmin(lo, ms);
            hi = fmax(hi, ms);
        }
    }
    if (!(hi > 0) || c->sw.nwin == 0)
        return 0;
    /* a range of at least 10 % either side, so that one latency is one row */
    h->lo_ms = lo / 1.1;
    h->hi_ms = hi * 1.1;
    h->per_col = (c->sw.nwin + RP_HEAT_COLS - 1) / RP_HEAT_COLS;
    h->ncol = (c->sw.nwin + h->per_col - 1) / h->per_col;
    if ((h->n = calloc(h->ncol * RP_HEAT_BINS, sizeof(*h->n))) == NULL)
        return -1;
    for (size_t k = 0; k < n; k++) {
        const struct rp_span *sp = &c->spans[ix[k]];
        int64_t num;
        uint32_t *cell;
        if (!sp->kept || !(isfinite(sp->lat_ms) && sp->lat_ms > 0) || sp->start_ns < c->sw.t0_ns)
            continue;
        /* the group's spans come in start order: the window only moves forward */
        num = (sp->start_ns - c->sw.t0_ns) / c->sw.window_ns;
        while (w < c->sw.nwin && c->sw.win[w] < num)
            w++;
        if (w == c->sw.nwin)
            break;
        if (c->sw.win[w] != num)
            continue; /* an outlier left out of the windows */
        cell = &h->n[w / h->per_col * RP_HEAT_BINS + (size_t)rp_heat_bin(h, sp->lat_ms)];
        if (++*cell > h->max)
            h->max = *cell;
        h->total++;
    }
    return 0;
}

void rp_heat_free(struct rp_heat *h)
{
    free(h->n);
    h->n = NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The latency at or above which a span is among the slowest RP_SLOW_SHARE of those
 * of group g (all of them, kept or not); +inf when there are none. */
static double slow_cut(const struct rp_ctx *c, size_t g)
{
    const size_t *ix = c->by_group + c->group_at[g];
    size_t m = c->group_at[g + 1] - c->group_at[g], n = 0, k;
    double *v = malloc((m ? m : 1) * sizeof(*v)), cut = INFINITY;

    if (v == NULL)
        return INFINITY;
    for (size_t i = 0; i < m; i++)
        if (isfinite(c->spans[ix[i]].lat_ms))
            v[n++] = c->spans[ix[i]].lat_ms;
    if (n) {
        qsort(v, n, sizeof(*v), cmp_d);
        /* k = ceil(share * n), ties kept: --slowest 5% of the selection language */
        k = (size_t)ceil((double)n * RP_SLOW_SHARE);
        cut = v[n - (k ? k : 1)];
    }
    free(v);
    return cut;
}

/* What a question to the cluster cost (unless --quiet), or why it failed; returns rc. */
static int cluster_said(const struct rp_ctx *c, int rc, const char *what,
                        const struct ch_series_cost *cost, const struct sf_err *err)
{
    if (rc != 0)
        fprintf(stderr, "spanfold report: %s: %s: %s\n", c->o.name, what, err->msg);
    else if (!c->o.quiet)
        fprintf(stderr, "spanfold report: %s: %s: %u queries, %llu bytes, %.2f s\n", c->o.name,
                what, cost->queries, (unsigned long long)cost->bytes, cost->seconds);
    return rc;
}

/* The cuts and sizes of the groups' slowest 5 % from the cluster (ch_sets.c), which
 * counts every span, not only those it sent.  Returns 0 or -1 (said). */
static int cluster_cuts(struct rp_ctx *c)
{
    struct ch_series_cost cost = {0};
    int ng = ch_spanq_groups(c->chq);
    double *cut = calloc((size_t)ng + 1, sizeof(*cut));
    uint64_t *nslow = calloc((size_t)ng + 1, sizeof(*nslow));
    struct sf_err err;
    int rc = -1;

    sf_err_clear(&err);
    if (cut == NULL || nslow == NULL)
        sf_err_set(&err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    else if (ch_sets_cuts(c->chq, RP_SLOW_SHARE, cut, nslow, &cost, &err) == 0)
        rc = 0;
    for (int r = 0; rc == 0 && r < ng; r++) {
        size_t g = group_index(c, ch_spanq_group(c->chq, r));
        if (g != SIZE_MAX) {
            c->cut[g] = cut[r];
            c->nslow[g] = nslow[r];
        }
    }
    free(cut);
    free(nslow);
    return cluster_said(c, rc, "the slowest 5 %'s cuts from the cluster", &cost, &err);
}

/* Per group the cut of its slowest 5 % and their number, over every span: the file's
 * list holds them all (kept or not), the cluster counts them itself; then each span's
 * slow_group.  Returns 0 or -1. */
static int slow_cuts(struct rp_ctx *c)
{
    c->cut = calloc(c->sw.ng + 1, sizeof(*c->cut));
    c->nslow = calloc(c->sw.ng + 1, sizeof(*c->nslow));
    if (c->cut == NULL || c->nslow == NULL)
        return -1;
    for (size_t g = 0; g < c->sw.ng; g++)
        c->cut[g] = INFINITY;
    if (c->chq && cluster_cuts(c) < 0)
        return -1;
    for (size_t g = 0; !c->chq && g < c->sw.ng; g++)
        c->cut[g] = slow_cut(c, g);
    for (size_t i = 0; i < c->nspans; i++) {
        struct rp_span *sp = &c->spans[i];
        sp->slow_group = sp->lat_ms >= c->cut[sp->group];
        if (!c->chq)
            c->nslow[sp->group] += (uint64_t)sp->slow_group;
    }
    return 0;
}

/* ---- change points ---------------------------------------------------------------- */

/* p95 and p99 of a window too small for them are its max: leave them out. */
static void mask_tails(struct rp_ctx *c)
{
    uint64_t n95 = sf_window_pct_min_spans(0.95), n99 = sf_window_pct_min_spans(0.99);
    for (size_t g = 0; g < c->sw.ng; g++)
        for (size_t w = 0; w < c->sw.nwin; w++) {
            if (c->sw.g[g].spans[w] < n95)
                c->sw.g[g].m[SF_M_P95][w] = NAN;
            if (c->sw.g[g].spans[w] < n99)
                c->sw.g[g].m[SF_M_P99][w] = NAN;
        }
}

/* Latency change points on the spans themselves, not on windows: every span of the
 * endpoint is one observation, so no window has to hold enough spans for a stable
 * median, and a change point's time is the start of the first span of the new regime.
 * The detector sees each span's rank score ((rank - 1/2) / n, ties averaged) rather than
 * its latency: a latency mix of fast and slow paths (e.g. 4 ms and 45 ms) or a few
 * outliers would otherwise dominate the squared error.  Levels are the medians (ms) of
 * the segments on either side. */
struct rank_ent {
    double lat;
    size_t at;
};

static int cmp_rank(const void *a, const void *b)
{
    const struct rank_ent *x = a, *y = b;
    return x->lat < y->lat ? -1 : x->lat > y->lat ? 1 : (x->at > y->at) - (x->at < y->at);
}

static double median_of(const struct rp_ctx *c, const size_t *idx, size_t from, size_t to)
{
    static const double half = 0.5;
    double *v = malloc((to > from ? to - from : 1) * sizeof(*v)), q = NAN;
    if (v == NULL || to <= from) {
        free(v);
        return NAN;
    }
    for (size_t i = from; i < to; i++)
        v[i - from] = c->spans[idx[i]].lat_ms;
    sf_quantile_exact(v, to - from, &half, 1, &q);
    free(v);
    return q;
}

static void push_cp(struct rp_ctx *c, size_t g, enum sf_span_metric m, const struct cp_point *q,
                    size_t win, int64_t t, double before, double after, int from_spans)
{
    struct rp_cp *p;
    if (c->ncps >= RP_MAX_CPS)
        return;
    p = &c->cps[c->ncps++];
    memset(p, 0, sizeof(*p));
    p->group = g;
    p->metric = m;
    p->kind = q->kind;
    p->win = win;
    p->time_ns = t;
    p->before = before;
    p->after = after;
    p->refined = from_spans;
}

static int span_cps(struct rp_ctx *c, size_t g)
{
    size_t n = 0, *idx = malloc((c->nspans ? c->nspans : 1) * sizeof(*idx));
    struct rank_ent *r = malloc((c->nspans ? c->nspans : 1) * sizeof(*r));
    struct inflect_series s;
    struct inflect_result res;
    int rc = -1;

    memset(&s, 0, sizeof(s));
    memset(&res, 0, sizeof(res));
    if (idx == NULL || r == NULL)
        goto out;
    for (size_t i = 0; i < c->nspans; i++)
        if (c->spans[i].group == g && c->spans[i].kept && isfinite(c->spans[i].lat_ms))
            idx[n++] = i;
    for (size_t i = 0; i < n; i++)
        r[i] = (struct rank_ent){c->spans[idx[i]].lat_ms, i};
    qsort(r, n, sizeof(*r), cmp_rank);
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && r[j + 1].lat == r[i].lat)
            j++;
        for (size_t k = i; k <= j; k++)
            r[k].lat = ((double)(i + j) / 2 + 0.5) / (double)n; /* tied ranks averaged */
        i = j;
    }
    snprintf(s.name, sizeof(s.name), "%.100s/latency", c->sw.g[g].name);
    {
        double *score = malloc((n ? n : 1) * sizeof(*score));
        if (score == NULL)
            goto out;
        for (size_t k = 0; k < n; k++) /* back to start order: r[k].at is the position */
            score[r[k].at] = r[k].lat;
        for (size_t k = 0; k < n; k++)
            if (series_push(&s, (double)c->spans[idx[k]].start_ns / 1e9, score[k], k, NULL) < 0) {
                free(score);
                goto out;
            }
        free(score);
    }
    res.s = &s;
    if (n >= 8) {
        /* the default detector only: inflect's others are for comparison, and cost time on
           a series as long as the endpoint's requests */
        enum cp_detector d = (enum cp_detector)c->ictx.detector;
        size_t cap = n < INFLECT_MAX_CPS ? n + 1 : INFLECT_MAX_CPS;
        long m;
        if ((res.by[d] = malloc(cap * sizeof(size_t))) == NULL ||
            (m = cp_detect(d, s.v, NULL, s.n, &c->ictx.cp, res.by[d], cap, &res.info)) < 0)
            goto out;
        res.nby[d] = res.npts = (size_t)m;
        if ((res.pts = calloc(res.npts ? res.npts : 1, sizeof(*res.pts))) == NULL ||
            classify_points(s.v, s.n, res.by[d], res.npts, res.pts) < 0)
            goto out;
    }
    for (size_t i = 0; i < res.npts; i++) {
        const struct cp_point *q = &res.pts[i];
        size_t lo = i ? res.pts[i - 1].index : 0, hi = i + 1 < res.npts ? res.pts[i + 1].index : n;
        const struct rp_span *sp = &c->spans[idx[q->index]];
        size_t win = rp_win_of(c, sp->start_ns);
        push_cp(c, g, SF_M_P50, q, win, rp_realtime(c, sp->start_ns),
                median_of(c, idx, lo, q->index), median_of(c, idx, q->index, hi), 1);
    }
    rc = 0;
out:
    inflect_result_free(&res);
    series_free(&s);
    free(idx);
    free(r);
    return rc;
}

static int collect_cps(struct rp_ctx *c)
{
    static const enum sf_span_metric ms[] = {SF_M_P95, SF_M_P99, SF_M_ERROR_RATE, SF_M_THROUGHPUT,
                                             SF_M_SAMPLED_SHARE};

    for (size_t g = 0; g < c->sw.ng; g++) {
        if (span_cps(c, g) < 0)
            return -1;
        for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
            const struct inflect_result *r = rp_result(c, g, ms[k]);
            for (size_t i = 0; i < r->npts; i++) {
                const struct cp_point *q = &r->pts[i];
                size_t win;
                if (q->index >= r->s->n)
                    continue;
                win = r->s->row[q->index];
                push_cp(c, g, ms[k], q, win, rp_win_time(c, win), q->before, q->after, 0);
            }
        }
    }
    return 0;
}

/* ---- sampling drift --------------------------------------------------------------- */

/* Explain drift d of group g: the regime of the kept share before its onset against
 * the one after (bounded by the kept share's other change points), sf_explain.h. */
static int explain_drift(struct rp_ctx *c, struct rp_drift *d, size_t onset)
{
    const struct inflect_result *ks = rp_result(c, d->group, SF_M_SAMPLED_SHARE);
    size_t nw = c->sw.nwin, from = 0, to = nw;
    struct sf_err err;

    if (onset == 0 || onset >= nw)
        return 0;
    for (size_t i = 0; i < ks->npts; i++) {
        size_t w = ks->pts[i].index < ks->s->n ? ks->s->row[ks->pts[i].index] : 0;
        if (w + 1 < onset && w > from)
            from = w;
        if (w > onset + 1 && w < to)
            to = w;
    }
    if (sf_explain_drift(
            c->o.db, c->o.complete_only, sf_spans_group_expr("endpoint"), c->sw.g[d->group].name,
            sf_spans_window_start(&c->sw, from), sf_spans_window_start(&c->sw, onset),
            to < nw ? sf_spans_window_start(&c->sw, to) : INT64_MAX, c->thin, &d->ex, &err) < 0) {
        fprintf(stderr, "spanfold report: explaining the drift of %s: %s\n", c->sw.g[d->group].name,
                err.msg);
        return err.code == SF_E_NOMEM ? -1 : 0;
    }
    d->explained = 1;
    return 0;
}

static int run_drift(struct rp_ctx *c)
{
    struct drift_opts o;

    drift_defaults(&o);
    c->dres = calloc(c->sw.ng ? c->sw.ng : 1, sizeof(*c->dres));
    c->pi = calloc(c->sw.ng ? c->sw.ng : 1, sizeof(*c->pi));
    c->drifts = calloc(c->sw.ng ? c->sw.ng : 1, sizeof(*c->drifts));
    if (c->dres == NULL || c->pi == NULL || c->drifts == NULL)
        return -1;
    for (size_t g = 0; g < c->sw.ng; g++) {
        const struct sf_win_group *wg = &c->sw.g[g];
        const struct inflect_result *ks = rp_result(c, g, SF_M_SAMPLED_SHARE);
        size_t nw = c->sw.nwin, split = nw;
        uint64_t t = 0, k = 0;
        int configured = c->o.expect_rate > 0, any_cfg = 0;
        double est;
        for (size_t w = 0; w < nw; w++)
            any_cfg |= isfinite(wg->cfg[w]);
        /* no configured rate: the first regime of the kept share is the reference, the
         * first that holds RP_DRIFT_REF_MIN traces (a few traces at the start of a capture
         * are no reference: 25 of them at 0.27 once raised a false alarm "up") */
        for (size_t i = 0; i < ks->npts; i++) {
            size_t w = ks->pts[i].index < ks->s->n ? ks->s->row[ks->pts[i].index] : nw;
            uint64_t tt = 0;
            for (size_t x = 0; x < w && x < nw; x++)
                tt += wg->trials[x];
            if (tt >= RP_DRIFT_REF_MIN) {
                split = w;
                break;
            }
        }
        for (size_t w = 0; w < split && w < nw; w++) {
            t += wg->trials[w];
            k += wg->kept[w];
        }
        est = t ? (double)k / (double)t : NAN;
        if ((c->pi[g] = malloc((nw ? nw : 1) * sizeof(double))) == NULL)
            return -1;
        for (size_t w = 0; w < nw; w++)
            c->pi[g][w] = configured ? c->o.expect_rate : any_cfg ? wg->cfg[w] : est;
        if (drift_analyse(wg->trials, wg->kept, c->pi[g], wg->spans, wg->traces, nw, &o,
                          &c->dres[g]) < 0)
            return -1;
        if (c->dres[g].alarm) {
            struct rp_drift *d = &c->drifts[c->ndrifts++];
            d->group = g;
            d->configured = configured || any_cfg;
            d->expect = configured ? c->o.expect_rate : any_cfg ? NAN : est;
            d->from_rate = c->dres[g].rate_before;
            d->to_rate = c->dres[g].rate_after;
            d->time_ns = rp_win_time(c, c->dres[g].onset_win);
            d->direction = c->dres[g].direction;
            if (explain_drift(c, d, c->dres[g].onset_win) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- CPU of the span sets --------------------------------------------------------- */

/* By id, equal ids in start order (the spans' own): "the first of equal ids" is the
 * first to start, on every run and on the cluster (ch_sets.c's argMin). */
static int cmp_span_id(const void *a, const void *b)
{
    const struct rp_span *const *x = a, *const *y = b;
    int d = strcmp((*x)->id, (*y)->id);
    return d ? d : (*x > *y) - (*x < *y);
}

const struct rp_span **rp_spans_by_id(const struct rp_ctx *c)
{
    const struct rp_span **idx = malloc((c->nspans ? c->nspans : 1) * sizeof(*idx));

    if (idx == NULL)
        return NULL;
    for (size_t k = 0; k < c->nspans; k++)
        idx[k] = &c->spans[k];
    qsort(idx, c->nspans, sizeof(*idx), cmp_span_id);
    return idx;
}

const struct rp_span *rp_span_find(const struct rp_span *const *idx, size_t n, const char *id)
{
    size_t lo = 0, hi = n;

    if (id == NULL)
        return NULL;
    while (lo < hi) { /* the first of equal ids */
        size_t mid = (lo + hi) / 2;
        if (strcmp(idx[mid]->id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(idx[lo]->id, id) == 0 ? idx[lo] : NULL;
}

/* Fold the samples that pass f (perf-fold's span attribution, spans_fold_table) into t;
 * t is set up here and freed by the caller (fold_table_free).  Returns 0 or -1. */
/* t as folded text ("frames count\n", sorted) into set. */
static int to_set(struct pf_table *t, struct rp_set *set)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int rc;

    if (m == NULL)
        return -1;
    rc = fold_table_print(t, m);
    rc |= fclose(m) != 0;
    if (rc == 0 && len)
        rc = sf_buf_append(&set->folded, text, len);
    free(text);
    set->samples += fold_table_total(t);
    return rc ? -1 : 0;
}

/* The leaf (last frame) of "a;b;c". */
static const char *leaf_of(const char *frames, size_t len, size_t *n)
{
    const char *l = frames + len;
    while (l > frames && l[-1] != ';')
        l--;
    *n = (size_t)(frames + len - l);
    return l;
}

/* Every stack of t into column which of the tallies of leaves and of whole stacks, in
 * the stacks' order (so that ties rank the same on every run and from the cluster). */
static int tally_table(const struct pf_table *t, int which, struct tally *leaves,
                       struct tally *stacks)
{
    struct pf_entry **v;
    size_t n = t->map.n;
    int rc = 0;

    if (fold_table_sorted(t, &v))
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *l;
        size_t ln;
        l = leaf_of(v[i]->key, v[i]->len, &ln);
        if (tally_add(leaves, l, ln, which, (double)v[i]->count) < 0 ||
            tally_add(stacks, v[i]->key, v[i]->len, which, (double)v[i]->count) < 0)
            rc = -1;
    }
    free(v);
    return rc;
}

/* Per endpoint, its attributed CPU by leaf frame, in its slowest 5 % or not: rows from
 * the file's per-span fold or from the cluster, tallied in one order (endpoint, leaf,
 * slow), whatever order they came in. */
struct leaf_row {
    size_t g;
    int slow;
    char *leaf;
    size_t len;
    double n;
};

struct leaf_rows {
    struct leaf_row *v;
    size_t n, cap;
    const struct rp_ctx *c;
    const struct ch_spanq *chq; /* the cluster's: its group ranks' names */
};

static int leaf_push(struct leaf_rows *r, size_t g, int slow, const char *leaf, size_t len,
                     double n)
{
    struct leaf_row *e;

    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 256;
        struct leaf_row *nv = realloc(r->v, nc * sizeof(*nv));
        if (nv == NULL)
            return -1;
        r->v = nv;
        r->cap = nc;
    }
    e = &r->v[r->n];
    if ((e->leaf = malloc(len + 1)) == NULL)
        return -1;
    memcpy(e->leaf, leaf, len);
    e->leaf[len] = 0;
    e->len = len;
    e->g = g;
    e->slow = slow;
    e->n = n;
    r->n++;
    return 0;
}

static int cmp_leaf_row(const void *a, const void *b)
{
    const struct leaf_row *x = a, *y = b;
    size_t m = x->len < y->len ? x->len : y->len;
    int d;

    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    if ((d = memcmp(x->leaf, y->leaf, m)) != 0)
        return d;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return y->slow - x->slow;
}

static void leaf_rows_free(struct leaf_rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].leaf);
    free(r->v);
}

/* The file's per-span fold ("[span ID ...];frames"), each span found in the span list. */
static int leaves_of_spans(struct rp_ctx *c, const struct pf_table *t, struct leaf_rows *rows)
{
    const struct pf_entry *e;
    const struct rp_span **idx = rp_spans_by_id(c);
    int rc = 0;

    if (idx == NULL)
        return -1;
    for (size_t i = 0; rc == 0 && (e = fold_table_next(t, &i)) != NULL;) {
        const char *semi, *l;
        const struct rp_span *sp;
        char id[17];
        size_t k = 0, ln;
        if (e->len < 7 || strncmp(e->key, "[span ", 6) != 0 ||
            (semi = memchr(e->key, ';', e->len)) == NULL)
            continue;
        for (const char *p = e->key + 6; p < semi && *p != ' ' && *p != ']' && k < 16; p++)
            id[k++] = *p;
        id[k] = 0;
        if ((sp = rp_span_find(idx, c->nspans, id)) == NULL || !sp->kept)
            continue; /* past --spans-max, the sample's (as ch_sets_only asks the cluster) */
        l = leaf_of(semi + 1, e->len - (size_t)(semi + 1 - e->key), &ln);
        rc = leaf_push(rows, sp->group, sp->slow_group, l, ln, (double)e->count);
    }
    free(idx);
    return rc;
}

/* ch_sets_leaves' rows: a group rank is the group of its name. */
static int leaf_of_cluster(void *arg, int rank, int slow, const char *leaf, size_t len, uint64_t n)
{
    struct leaf_rows *r = arg;
    size_t g = group_index(r->c, ch_spanq_group(r->chq, rank));

    return g == SIZE_MAX ? 0 : leaf_push(r, g, slow, leaf, len, (double)n);
}

/* The differential graph's input: every stack with the rest's count scaled to the slow
 * set's total, then the slow set's ("before after", as difffolded.pl -n writes). */
static int diff_folded(const struct tally *stacks, struct sf_buf *out)
{
    double scale = stacks->tot[1] > 0 ? stacks->tot[0] / stacks->tot[1] : 0;
    for (size_t i = 0; i < stacks->n; i++)
        if (sf_buf_printf(out, "%s %.0f %.0f\n", stacks->e[i].key, stacks->e[i].n[1] * scale,
                          stacks->e[i].n[0]) < 0)
            return -1;
    return 0;
}

/* The folds of the sets and the per-endpoint leaf rows from the file: perf-fold's
 * attribution in one pass (spans_fold_sets). */
static int sets_of_file(struct rp_ctx *c, sqlite3 *h, struct pf_table *t, struct leaf_rows *rows)
{
    struct sf_select sel;
    struct pf_table per_span;
    struct sf_err err;
    int rc = -1;

    memset(&per_span, 0, sizeof(per_span));
    sf_arena_init(&per_span.keys, 1 << 20, PF_TABLE_MAX);
    sf_select_init(&sel);
    sf_err_clear(&err);
    if (sf_select_slowest(&sel, "5%", &err) == 0 &&
        spans_fold_sets(h, &sel, &t[0], &t[1], &t[2], &per_span, &err) == 0)
        rc = leaves_of_spans(c, &per_span, rows);
    fold_table_free(&per_span);
    sf_select_free(&sel);
    return rc;
}

/* The same from the cluster (ch_sets.c): only stacks and sums travel; the leaves are
 * split at the cluster's cuts (cluster_cuts), per group rank. */
static int sets_of_cluster(struct rp_ctx *c, struct pf_table *t, struct leaf_rows *rows)
{
    struct ch_series_cost cost = {0};
    int ng = ch_spanq_groups(c->chq);
    double *cut = calloc((size_t)ng + 1, sizeof(*cut));
    struct sf_err err;
    int rc = -1;

    sf_err_clear(&err);
    rows->chq = c->chq;
    for (int r = 0; cut && r < ng; r++) {
        size_t g = group_index(c, ch_spanq_group(c->chq, r));
        cut[r] = g != SIZE_MAX ? c->cut[g] : INFINITY;
    }
    if (cut == NULL)
        sf_err_set(&err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    else if (ch_sets_folds(c->chq, "5%", &t[0], &t[1], &t[2], &cost, &err) == 0 &&
             ch_sets_leaves(c->chq, cut, leaf_of_cluster, rows, &cost, &err) == 0)
        rc = 0;
    free(cut);
    return cluster_said(c, rc, "the CPU sets folded by the cluster", &cost, &err);
}

/* The sets: every sample; the slowest 5 % of spans and the others (the selection
 * language's --slowest 5%, as spanfold stacks takes it); per endpoint its own slowest
 * 5 % against its other spans. */
static int cpu_sets(struct rp_ctx *c, sqlite3 *h)
{
    struct pf_table t[3]; /* all, slow, rest */
    struct tally leaves, stacks, *pergroup = calloc(c->sw.ng ? c->sw.ng : 1, sizeof(*pergroup));
    struct leaf_rows rows = {.c = c};
    int rc = -1;

    memset(t, 0, sizeof(t));
    memset(&leaves, 0, sizeof(leaves));
    memset(&stacks, 0, sizeof(stacks));
    for (int i = 0; i < 3; i++)
        sf_arena_init(&t[i].keys, 1 << 20, PF_TABLE_MAX);
    if (pergroup == NULL ||
        (c->chq ? sets_of_cluster(c, t, &rows) : sets_of_file(c, h, t, &rows)) < 0)
        goto out;
    qsort(rows.v, rows.n, sizeof(*rows.v), cmp_leaf_row);
    for (size_t i = 0; i < rows.n; i++) {
        const struct leaf_row *r = &rows.v[i];
        assert(r->g < c->sw.ng);
        if (tally_add(&pergroup[r->g], r->leaf, r->len, r->slow ? 0 : 1, r->n) < 0)
            goto out;
    }
    if (to_set(&t[0], &c->all) < 0 || to_set(&t[1], &c->slow) < 0 || to_set(&t[2], &c->rest) < 0 ||
        tally_table(&t[1], 0, &leaves, &stacks) < 0 ||
        tally_table(&t[2], 1, &leaves, &stacks) < 0 || diff_folded(&stacks, &c->diff) < 0)
        goto out;
    /* every attributed sample is in the slowest 5 % or the rest */
    c->unattributed = c->all.samples > c->slow.samples + c->rest.samples
                          ? c->all.samples - c->slow.samples - c->rest.samples
                          : 0;
    c->nregress = tally_top(&leaves, 1, c->regress, RP_TOP_FUNCS);
    if ((c->slows = calloc(c->sw.ng ? c->sw.ng : 1, sizeof(*c->slows))) == NULL)
        goto out;
    for (size_t g = 0; g < c->sw.ng; g++) {
        struct rp_slow *s = &c->slows[c->nslows];
        if (pergroup[g].tot[0] <= 0)
            continue;
        s->group = g;
        s->samples = (uint64_t)pergroup[g].tot[0];
        s->cut_ms = c->cut[g];
        s->spans = c->nslow[g];
        s->ntop = tally_top(&pergroup[g], 0, s->top, RP_TOP_FUNCS);
        c->nslows++;
    }
    rc = 0;
out:
    for (size_t g = 0; pergroup && g < c->sw.ng; g++)
        tally_free(&pergroup[g]);
    free(pergroup);
    for (int i = 0; i < 3; i++)
        fold_table_free(&t[i]);
    leaf_rows_free(&rows);
    tally_free(&leaves);
    tally_free(&stacks);
    return rc;
}

/* ---- TLS -------------------------------------------------------------------------- */

static void read_tls(struct rp_ctx *c, sqlite3 *h)
{
    sqlite3_stmt *st;
    const char *sql =
        "SELECT count(*), count(tls_version), sum(decrypted), sum(early_data = 'offered'),"
        " sum(early_data = 'accepted'), sum(early_data = 'rejected'),"
        " sum(early_data_bytes), group_concat(DISTINCT tls_version),"
        " group_concat(DISTINCT tls_cipher), group_concat(DISTINCT alpn),"
        " group_concat(DISTINCT sni) FROM connections";

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW) {
        struct rp_tls *t = &c->tls;
        t->conns = (uint64_t)sqlite3_column_int64(st, 0);
        t->tls = (uint64_t)sqlite3_column_int64(st, 1);
        t->decrypted = (uint64_t)sqlite3_column_int64(st, 2);
        t->early_offered = (uint64_t)sqlite3_column_int64(st, 3);
        t->early_accepted = (uint64_t)sqlite3_column_int64(st, 4);
        t->early_rejected = (uint64_t)sqlite3_column_int64(st, 5);
        t->early_bytes = (uint64_t)sqlite3_column_int64(st, 6);
#define TXT(i, dst)                                                                                \
    snprintf(dst, sizeof(dst), "%s",                                                               \
             sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "")
        TXT(7, t->versions);
        TXT(8, t->ciphers);
        TXT(9, t->alpn);
        TXT(10, t->sni);
#undef TXT
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(h,
                           "SELECT count(*) FROM spans WHERE early_data = 1 AND "
                           "sf_kept(trace_id, span_id, req_start_ns)",
                           -1, &st, NULL) == SQLITE_OK) { /* sf_kept: read_clock */
        if (sqlite3_step(st) == SQLITE_ROW)
            c->tls.early_spans = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
}

/* ---- the run ---------------------------------------------------------------------- */

const struct inflect_result *rp_result(const struct rp_ctx *c, size_t g, enum sf_span_metric m)
{
    return &c->res[g * SF_M_NMETRICS + (size_t)m];
}

const struct rp_slow *rp_slow_of(const struct rp_ctx *c, size_t g)
{
    for (size_t i = 0; i < c->nslows; i++)
        if (c->slows[i].group == g)
            return &c->slows[i];
    return NULL;
}

void rp_group_stats(const struct rp_ctx *c, size_t g, struct rp_gstat *st)
{
    static const double ps[4] = {0.50, 0.95, 0.99, 1.0};
    double *v = malloc((c->nspans ? c->nspans : 1) * sizeof(*v)), q[4], err = 0;
    const struct sf_win_group *wg = &c->sw.g[g];
    uint64_t trials = 0, kept = 0;
    size_t n = 0;

    memset(st, 0, sizeof(*st));
    for (size_t w = 0; w < c->sw.nwin; w++) {
        st->spans += wg->spans[w];
        trials += wg->trials[w];
        kept += wg->kept[w];
        if (wg->spans[w])
            err += wg->m[SF_M_ERROR_RATE][w] * (double)wg->spans[w];
    }
    st->rps = c->sw.nwin ? (double)st->spans / rp_span_seconds(c) : NAN;
    st->err = st->spans ? err / (double)st->spans : NAN;
    st->kept = trials ? (double)kept / (double)trials : NAN;
    st->p50 = st->p95 = st->p99 = st->max = NAN;
    if (v == NULL)
        return;
    for (size_t i = 0; i < c->nspans; i++)
        if (c->spans[i].group == g && c->spans[i].kept && isfinite(c->spans[i].lat_ms))
            v[n++] = c->spans[i].lat_ms;
    if (n) {
        sf_quantile_exact(v, n, ps, 4, q);
        st->p50 = q[0];
        st->p95 = n >= sf_window_pct_min_spans(0.95) ? q[1] : NAN;
        st->p99 = n >= sf_window_pct_min_spans(0.99) ? q[2] : NAN;
        st->max = q[3];
    }
    free(v);
}

void rp_cp_label(const struct rp_cp *p, char *buf, size_t n)
{
    if (p->metric == SF_M_ERROR_RATE || p->metric == SF_M_SAMPLED_SHARE)
        snprintf(buf, n, "%s %s %.1f %% \xe2\x86\x92 %.1f %%",
                 p->metric == SF_M_ERROR_RATE ? "errors" : "kept", cp_kind_name(p->kind),
                 100 * p->before, 100 * p->after);
    else if (p->metric == SF_M_THROUGHPUT)
        snprintf(buf, n, "throughput %s %.1f \xe2\x86\x92 %.1f /s", cp_kind_name(p->kind),
                 p->before, p->after);
    else
        snprintf(buf, n, "%s %s %.0f \xe2\x86\x92 %.0f ms", sf_spans_metric_name(p->metric),
                 cp_kind_name(p->kind), p->before, p->after);
}

void rp_drift_label(const struct rp_drift *d, char *buf, size_t n)
{
    snprintf(buf, n, "drift alarm: kept %.2f \xe2\x86\x92 %.2f", d->from_rate, d->to_rate);
}

void rp_cpuq_label(const struct rp_cpuq *q, char *buf, size_t n)
{
    snprintf(buf, n,
             "CPU per request %s %.3g \xe2\x86\x92 %.3g ms while requests/s %s %.3g \xe2\x86\x92 "
             "%.3g",
             cp_kind_name(q->kind), q->before_ms, q->after_ms,
             q->qps_after < q->qps_before * 0.95 ? "fell" : "stayed", q->qps_before, q->qps_after);
}

/* How much group g's findings matter, for rp_group_order: 0 none; else a class
 * (4 the headline, 3 a latency rise, 2 errors or drift, 1 anything else) and within
 * it a size. */
struct severity {
    int cls;
    double size;
    uint64_t spans;
    size_t g;
};

static int cmp_severity(const void *a, const void *b)
{
    const struct severity *x = a, *y = b;

    if (x->cls != y->cls)
        return x->cls > y->cls ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->spans != y->spans)
        return x->spans > y->spans ? -1 : 1;
    return x->g < y->g ? -1 : x->g > y->g;
}

size_t rp_group_order(const struct rp_ctx *c, size_t *order)
{
    size_t ng = c->sw.ng, with = 0;
    long head = rp_headline(c);
    struct severity *sv = calloc(ng ? ng : 1, sizeof(*sv));

    if (sv == NULL) { /* the order they have */
        for (size_t g = 0; g < ng; g++)
            order[g] = g;
        return 0;
    }
    for (size_t g = 0; g < ng; g++) {
        sv[g].g = g;
        for (size_t w = 0; w < c->sw.nwin; w++)
            sv[g].spans += c->sw.g[g].spans[w];
    }
    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        struct severity *s = &sv[p->group];
        int lat = p->metric == SF_M_P50 || p->metric == SF_M_P95 || p->metric == SF_M_P99;
        int cls = (long)i == head                ? 4
                  : lat && p->after > p->before  ? 3
                  : p->metric == SF_M_ERROR_RATE ? 2
                                                 : 1;
        double size = p->before > 0 ? fabs(p->after / p->before - 1) : fabs(p->after - p->before);
        if (cls > s->cls || (cls == s->cls && size > s->size)) {
            s->cls = cls;
            s->size = size;
        }
    }
    for (size_t i = 0; i < c->ndrifts; i++) {
        struct severity *s = &sv[c->drifts[i].group];
        double size = fabs(c->drifts[i].to_rate - c->drifts[i].from_rate);
        if (s->cls < 2 || (s->cls == 2 && size > s->size)) {
            s->cls = 2;
            s->size = size;
        }
    }
    qsort(sv, ng, sizeof(*sv), cmp_severity);
    for (size_t g = 0; g < ng; g++) {
        order[g] = sv[g].g;
        with += sv[g].cls > 0;
    }
    free(sv);
    return with;
}

/* Whether group g is the downstream endpoint another endpoint's latency inflection
 * waited on: its own slowdown is told there, as that one's cause. */
static int a_cause_of_another(const struct rp_ctx *c, size_t g)
{
    for (size_t j = 0; j < c->nwhys; j++) {
        const struct rp_why *y = &c->whys[j];
        if (y->cause == RP_CAUSE_DOWNSTREAM && y->ep != SIZE_MAX && y->ep < c->ncause_eps &&
            c->cps[y->cp].group != g && strcmp(c->cause_eps[y->ep], c->sw.g[g].name) == 0)
            return 1;
    }
    return 0;
}

long rp_headline(const struct rp_ctx *c)
{
    long best = -1;
    double bv = 0;

    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        double rise;
        if ((p->metric != SF_M_P50 && p->metric != SF_M_P95 && p->metric != SF_M_P99) ||
            p->kind == CP_SPIKE || !(p->before > 0))
            continue;
        /* the caller's slowdown is the headline, and names this one as its cause */
        if (a_cause_of_another(c, p->group))
            continue;
        rise = p->after / p->before;
        /* p50 first: it moves with most requests; a tail change must be larger */
        if (p->metric != SF_M_P50)
            rise /= 2;
        if (rise > bv) {
            bv = rise;
            best = (long)i;
        }
    }
    return bv > 1.2 ? best : -1;
}

static int fail(const struct rp_ctx *c, const char *what, const struct sf_err *err)
{
    char msg[512];
    if (err && err->code) {
        sf_err_format(err, "spanfold report", c->o.name, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
    } else {
        fprintf(stderr, "spanfold report: %s: %s\n", c->o.name, what);
    }
    return SF_EXIT_USAGE;
}

/* What a sample's weight counts: ns of CPU for the clock events, else the event (ev, the
 * least of the distinct events, when there is one). */
static void name_unit(struct rp_ctx *c, const char *ev, uint64_t distinct)
{
    snprintf(c->count_unit, sizeof(c->count_unit), "samples");
    if (distinct == 1 && (strncmp(ev, "cpu-clock", 9) == 0 || strncmp(ev, "task-clock", 10) == 0))
        snprintf(c->count_unit, sizeof(c->count_unit), "ns");
    else if (distinct == 1)
        snprintf(c->count_unit, sizeof(c->count_unit), "%.30s periods", ev);
}

/* The unit, from the file or, where the samples stay, from the cluster.  Returns 0, or
 * the cluster's error in err (a unit it could not tell is not guessed). */
static int read_unit(struct rp_ctx *c, sqlite3 *h, struct sf_err *err)
{
    sqlite3_stmt *st;

    name_unit(c, "", 0);
    if (c->chq) { /* the samples stay on the cluster */
        uint64_t distinct = 0;
        char ev[64];
        int rc = ch_sets_events(c->chq, ev, sizeof(ev), &distinct, NULL, err);
        if (rc == 0)
            name_unit(c, ev, distinct);
        return rc;
    }
    if (sqlite3_prepare_v2(h, "SELECT min(event), count(DISTINCT event) FROM samples", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        name_unit(c, (const char *)sqlite3_column_text(st, 0),
                  (uint64_t)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return 0;
}

/* Past --spans-max, what is over the sample and what over every request. */
static void thin_note(struct rp_ctx *c)
{
    char text[600];

    if (c->thin >= 1.0)
        return;
    snprintf(text, sizeof(text),
             "%zu of %llu requests analysed one by one (a uniform sample by span id, %.2f %%, "
             "--spans-max %lld): the slow functions, heat maps, whole-run percentiles, change "
             "points on single requests, causes, slowest requests, CPU per request, the explorer, "
             "the drift's explanation, the spans' clock and the 0-RTT requests are over them; "
             "the windows, the slowest 5 %%'s cuts and the flame graphs over every request",
             c->nkept, (unsigned long long)c->sw.nspans, 100.0 * c->thin,
             (long long)c->o.spans_max);
    note(c, text);
}

static void sample_notes(struct rp_ctx *c)
{
    if (c->all.samples == 0)
        note(c, "no CPU samples: no flame graphs; record them with perf record -k mono -g "
                "and ingest perf script's text, see docs/recording.md");
    else if (c->slow.samples + c->rest.samples == 0)
        note(c, "no span markers: CPU samples cannot be attributed to spans, so the slow "
                "requests' stacks are unknown; record them with spantrace, see "
                "docs/recording.md");
}

int rp_analyse(struct rp_ctx *c)
{
    struct sf_err err;
    struct sf_db *db = NULL;
    struct stat stb;
    int rc;

    sf_err_clear(&err);
    memset(&c->ictx, 0, sizeof(c->ictx));
    c->ictx.tool = "spanfold report";
    c->ictx.by = "endpoint";
    c->ictx.tiers = 1;
    c->ictx.detector = CP_PELT;
    c->ictx.quiet = 1;
    cp_defaults(&c->ictx.cp);
    if (stat(c->o.db, &stb) < 0)
        return fail(c, "no such database", NULL);
    /* --clickhouse: the windows came from the cluster (report.c's pull) */
    if (!c->o.cho.url && c->o.window_ns == 0 &&
        sf_window_auto(c->o.db, "endpoint", &c->o.window_ns, &err) < 0)
        return fail(c, "", &err);
    c->ictx.window_ns = c->o.window_ns;
    if ((!c->o.cho.url && sf_spans_window(&c->sw, c->o.db, "endpoint", c->o.window_ns,
                                          c->o.complete_only, NULL, &err) < 0) ||
        clock_read(&c->clk, c->o.db, c->o.complete_only, &err) < 0)
        return fail(c, "", &err);
    mask_tails(c);
    if (run_db_series(&c->ictx, &c->sw, &c->ser, &c->res) < 0)
        return fail(c, "out of memory", NULL);
    if ((rc = sf_db_open_mode(&db, c->o.db, SF_DB_READ, &err)) < 0)
        return fail(c, "", &err);
    {
        char partial[700];

        /* a source that is not complete is said on the page and on stderr */
        if (sf_db_partial_note(db, c->o.complete_only, partial, sizeof(partial), &err) < 0) {
            sf_db_close(db, NULL);
            return fail(c, "", &err);
        }
        if (partial[0])
            note(c, partial);
    }
    if (c->o.shards.missing[0]) /* a partial answer is said on the page and in findings.json */
        note(c, c->o.shards.missing);
    c->thin = sf_thin_share(c->sw.nspans, c->o.spans_max); /* as report.c's pull drew it */
    if (sqlite3_create_function(sf_db_handle(db), "sf_kept", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                &c->thin, sql_kept, NULL, NULL) != SQLITE_OK ||
        read_clock(c, sf_db_handle(db)) < 0 || read_spans(c, sf_db_handle(db)) < 0) {
        fprintf(stderr, "spanfold report: %s: query failed: %s\n", c->o.name,
                sqlite3_errmsg(sf_db_handle(db)));
        sf_db_close(db, NULL);
        return SF_EXIT_USAGE;
    }
    if ((c->chq ? ch_sets_coverage(c->chq, c->cov, RP_COV_MAX, &c->ncov, NULL, &err)
                : sf_db_coverage(db, c->cov, RP_COV_MAX, &c->ncov, &err)) != 0) {
        sf_db_close(db, NULL);
        return fail(c, "", &err);
    }
    if (group_spans(c) < 0) {
        sf_db_close(db, NULL);
        return fail(c, "out of memory", NULL);
    }
    read_tls(c, sf_db_handle(db));
    if (read_unit(c, sf_db_handle(db), &err) != 0) {
        sf_db_close(db, NULL);
        return fail(c, "", &err);
    }
    if (c->sw.nspans == 0)
        note(c, "no spans: ingest a packet capture (pcap2spans) to get requests and their "
                "latency");
    thin_note(c);
    if (slow_cuts(c) < 0) {
        sf_db_close(db, NULL);
        return fail(c, "the slowest 5 %'s cuts failed", NULL);
    }
    if (collect_cps(c) < 0 || run_drift(c) < 0) {
        sf_db_close(db, NULL);
        return fail(c, "out of memory", NULL);
    }
    if (rp_causes(c, sf_db_handle(db)) < 0) {
        sf_db_close(db, NULL);
        return fail(c, "reading where the slow requests' time went failed", NULL);
    }
    if (rp_cpu_rule(c) < 0) {
        sf_db_close(db, NULL);
        return fail(c, "out of memory", NULL);
    }
    sf_buf_init(&c->all.folded, 1u << 30);
    sf_buf_init(&c->slow.folded, 1u << 30);
    sf_buf_init(&c->rest.folded, 1u << 30);
    sf_buf_init(&c->diff, 1u << 30);
    rc = cpu_sets(c, sf_db_handle(db));
    if (rc == 0 && rp_explore(c, sf_db_handle(db)) < 0)
        rc = -1;
    sf_db_close(db, NULL);
    if (rc < 0)
        return fail(c, "reading the CPU samples failed", NULL);
    sample_notes(c);
    return 0;
}

void rp_free(struct rp_ctx *c)
{
    size_t ns = c->sw.ng * SF_M_NMETRICS;
    for (size_t i = 0; c->res && i < ns; i++) {
        inflect_result_free(&c->res[i]);
        series_free(&c->ser[i]);
    }
    for (size_t g = 0; c->dres && g < c->sw.ng; g++) {
        drift_result_free(&c->dres[g]);
        free(c->pi[g]);
    }
    free(c->res);
    free(c->ser);
    free(c->dres);
    free(c->pi);
    free(c->drifts);
    free(c->cpuqs);
    free(c->slows);
    free(c->spans);
    free(c->cut);
    free(c->nslow);
    free(c->by_group);
    free(c->group_at);
    free(c->whys);
    free(c->cause_eps);
    free(c->cause_reasons);
    sf_buf_free(&c->all.folded);
    sf_buf_free(&c->slow.folded);
    sf_buf_free(&c->rest.folded);
    sf_buf_free(&c->diff);
    sf_buf_free(&c->explore);
    clock_free(&c->clk);
    sf_spans_free(&c->sw);
}

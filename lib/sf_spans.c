/* sf_spans.c - windowing of the spans table (lib/schema.sql) into metric series.
 *
 *   spans (ORDER BY req_start_ns)
 *      |  window w = (req_start_ns - t0) / window_ns, group by --by
 *      v
 *   open window per group: latencies[], counts, trace-id set  --(w advances)-->
 *   closed window: count, throughput, P50/P95/P99/max (quantile.c), error rate,
 *                  traces, kept traces, configured rate (sf_tracectx_ot_rate: ot=th)
 *
 * Memory: the open window's latencies and trace set per group, plus one number per
 * stored window and metric (the output).  The query streams; nothing holds all
 * spans.  Windows are sparse (spans.h): a gap keeps at most SF_SPANS_MAX_GAP empty
 * windows, and sf_spans_finish() drops the windows of spans far from the bulk.
 */
#include "sf_spans.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sf_db.h"
#include "sf_progress.h"
#include "sf_quantile.h"
#include "sf_select.h"
#include "sf_text.h"
#include "sf_tracectx.h"

static const char *const metric_names[SF_M_NMETRICS] = {
    "count", "throughput", "p50",           "p95",          "p99",
    "max",   "error_rate", "sampled_share", "amplification"};

const char *sf_spans_metric_name(enum sf_span_metric m)
{
    return (unsigned)m < SF_M_NMETRICS ? metric_names[m] : "?";
}

const uint64_t *sf_spans_trials(const struct sf_win_group *g, enum sf_span_metric m)
{
    /* the divisors of group_close() */
    return m == SF_M_ERROR_RATE ? g->known : m == SF_M_SAMPLED_SHARE ? g->trials : NULL;
}

void sf_spans_init(struct sf_span_windows *sw, int64_t window_ns)
{
    memset(sw, 0, sizeof(*sw));
    sw->window_ns = window_ns;
}

static void group_free(struct sf_win_group *g)
{
    for (int m = 0; m < SF_M_NMETRICS; m++)
        free(g->m[m]);
    free(g->spans);
    free(g->known);
    free(g->traces);
    free(g->trials);
    free(g->kept);
    free(g->cfg);
    free(g->lat);
    sf_map_free(&g->seen);
}

void sf_spans_free(struct sf_span_windows *sw)
{
    for (size_t i = 0; i < sw->ng; i++)
        group_free(&sw->g[i]);
    free(sw->g);
    free(sw->win);
    memset(sw, 0, sizeof(*sw));
}

/* t0 + k windows, in unsigned arithmetic: the result is a window start at or before
 * a span's time, so it fits, but k * window_ns alone may not. */
static int64_t after_windows(int64_t t0, int64_t k, int64_t window_ns)
{
    return (int64_t)((uint64_t)t0 + (uint64_t)k * (uint64_t)window_ns);
}

int64_t sf_spans_window_start(const struct sf_span_windows *sw, size_t w)
{
    return after_windows(sw->t0_ns, w < sw->nwin ? sw->win[w] : 0, sw->window_ns);
}

#define SEEN_FIRST_CAP 128 /* slots of a group's first trace set: 2 KiB */

#define GROW(p, n)                                                                                 \
    do {                                                                                           \
        void *np_ = realloc((p), (n) * sizeof(*(p)));                                              \
        if (np_ == NULL)                                                                           \
            return SF_E_NOMEM;                                                                     \
        (p) = np_;                                                                                 \
    } while (0)

/* Make room for windows [0, need) in g, initialising new ones as "no data". */
static int group_reserve(struct sf_win_group *g, size_t need)
{
    size_t cap = g->cap ? g->cap : 64;

    if (need <= g->cap)
        return 0;
    if (need > SF_SPANS_MAX_CELLS)
        return SF_E_LIMIT;
    while (cap < need)
        cap *= 2;
    for (int m = 0; m < SF_M_NMETRICS; m++)
        GROW(g->m[m], cap);
    GROW(g->spans, cap);
    GROW(g->known, cap);
    GROW(g->traces, cap);
    GROW(g->trials, cap);
    GROW(g->kept, cap);
    GROW(g->cfg, cap);
    for (size_t w = g->cap; w < cap; w++) {
        for (int m = 0; m < SF_M_NMETRICS; m++)
            g->m[m][w] = m == SF_M_COUNT || m == SF_M_THROUGHPUT ? 0 : NAN;
        g->spans[w] = g->known[w] = g->traces[w] = g->trials[w] = g->kept[w] = 0;
        g->cfg[w] = NAN;
    }
    g->cap = cap;
    return 0;
}

static struct sf_win_group *group_get(struct sf_span_windows *sw, const char *name)
{
    /* a long name is kept cut between two characters; it is looked up cut the same way */
    size_t n = sf_text_utf8_cut(name, strlen(name), sizeof(sw->g->name) - 1);
    struct sf_win_group *ng;

    for (size_t i = 0; i < sw->ng; i++)
        if (strncmp(sw->g[i].name, name, n) == 0 && sw->g[i].name[n] == 0)
            return &sw->g[i];
    /* the last slot is kept for "(other)", so the group count stays bounded */
    if (sw->ng >= SF_SPANS_MAX_GROUPS - 1 && strcmp(name, "(other)") != 0)
        return group_get(sw, "(other)");
    if (sw->ng >= SF_SPANS_MAX_GROUPS)
        return NULL;
    ng = realloc(sw->g, (sw->ng + 1) * sizeof(*ng));
    if (ng == NULL)
        return NULL;
    sw->g = ng;
    memset(&ng[sw->ng], 0, sizeof(*ng));
    sf_map_init_cap(&ng[sw->ng].seen, SEEN_FIRST_CAP);
    memcpy(ng[sw->ng].name, name, n);
    ng[sw->ng].name[n] = 0;
    return &sw->g[sw->ng++];
}

/* Add the trace id to g's open window: 1 if new, 0 if seen, negative on error.  The
 * set holds hashes only (64 bits: a collision of two trace ids is not expected). */
static int seen_insert(struct sf_win_group *g, const char *trace)
{
    uint64_t h = sf_hash(trace, strlen(trace));
    struct sf_map_slot *s;

    if (sf_map_reserve(&g->seen, 1) < 0)
        return SF_E_NOMEM;
    SF_MAP_RUN(&g->seen, h, s)
    {
        if (s->hash == h)
            return 0;
    }
    sf_map_fill(&g->seen, s, h, g);
    return 1;
}

/* Close group g's open window as window w. */
static int group_close(struct sf_span_windows *sw, struct sf_win_group *g, size_t w)
{
    static const double ps[4] = {0.50, 0.95, 0.99, 1.0};
    double q[4], secs = (double)sw->window_ns / 1e9;
    int rc;

    if ((rc = group_reserve(g, w + 1)) < 0)
        return rc;
    if (g->c_spans) {
        g->m[SF_M_COUNT][w] = (double)g->c_spans;
        g->m[SF_M_THROUGHPUT][w] = (double)g->c_spans / secs;
        if (g->c_put)
            memcpy(q, g->c_q, sizeof(q));
        else
            sf_quantile_exact(g->lat, g->nlat, ps, 4, q);
        g->m[SF_M_P50][w] = q[0];
        g->m[SF_M_P95][w] = q[1];
        g->m[SF_M_P99][w] = q[2];
        g->m[SF_M_MAX][w] = q[3];
        /* over the spans whose outcome is known (a response, or an error such as a
         * reset): a request still open when the capture ended is neither */
        g->m[SF_M_ERROR_RATE][w] = g->c_known ? (double)g->c_err / (double)g->c_known : NAN;
        g->m[SF_M_SAMPLED_SHARE][w] = g->c_trials ? (double)g->c_kept / (double)g->c_trials : NAN;
        g->m[SF_M_AMPLIFICATION][w] = g->c_traces ? (double)g->c_spans / (double)g->c_traces : NAN;
        g->spans[w] = g->c_spans;
        g->known[w] = g->c_known;
        g->traces[w] = g->c_traces;
        g->trials[w] = g->c_trials;
        g->kept[w] = g->c_kept;
        g->cfg[w] = g->c_cfg_n ? g->c_cfg / (double)g->c_cfg_n : NAN;
    }
    g->nlat = 0;
    g->c_put = 0;
    g->c_spans = g->c_err = g->c_known = g->c_traces = g->c_trials = g->c_kept = g->c_cfg_n = 0;
    g->c_cfg = 0;
    sf_map_clear(&g->seen);
    return 0;
}

static int close_all(struct sf_span_windows *sw)
{
    int rc;

    if (sw->nwin == 0)
        return 0;
    for (size_t i = 0; i < sw->ng; i++)
        if ((rc = group_close(sw, &sw->g[i], sw->nwin - 1)) < 0)
            return rc;
    return 0;
}

/* Store window number num after the others. */
static int push_window(struct sf_span_windows *sw, int64_t num)
{
    if ((double)(sw->nwin + 1) * (double)(sw->ng ? sw->ng : 1) > SF_SPANS_MAX_CELLS)
        return SF_E_LIMIT;
    if (sw->nwin == sw->wincap) {
        size_t nc = sw->wincap ? sw->wincap * 2 : 64;
        int64_t *nw = realloc(sw->win, nc * sizeof(*nw));
        if (nw == NULL)
            return SF_E_NOMEM;
        sw->win = nw;
        sw->wincap = nc;
    }
    sw->win[sw->nwin++] = num;
    return 0;
}

/* The span at window number w opens a new window: close the open ones, keep up to
 * SF_SPANS_MAX_GAP empty windows of the gap, then window w. */
static int advance(struct sf_span_windows *sw, int64_t w)
{
    int64_t last = sw->win[sw->nwin - 1], gap = w - last - 1;
    int rc;

    if ((rc = close_all(sw)) < 0)
        return rc;
    for (int64_t k = 1; k <= gap && k <= SF_SPANS_MAX_GAP; k++)
        if ((rc = push_window(sw, last + k)) < 0)
            return rc;
    return push_window(sw, w);
}

/* Group `group`'s open window, window number w (>= the last stored): the windows before
 * it closed and stored, the group made, into *g. */
static int open_cell(struct sf_span_windows *sw, const char *group, int64_t w,
                     struct sf_win_group **g)
{
    int rc;

    if (sw->nwin == 0 && (rc = push_window(sw, w)) < 0)
        return rc;
    if (w > sw->win[sw->nwin - 1] && (rc = advance(sw, w)) < 0)
        return rc;
    if ((*g = group_get(sw, group)) == NULL)
        return SF_E_NOMEM;
    return group_reserve(*g, sw->nwin);
}

int sf_spans_add(struct sf_span_windows *sw, const char *group, int64_t start_ns, double latency_ms,
                 int error, int sampled, const char *trace, double cfg_rate)
{
    struct sf_win_group *g;
    int64_t w;
    int rc;

    if (sw->nspans == 0)
        sw->t0_ns = start_ns;
    if (start_ns < sw->t0_ns)
        start_ns = sw->t0_ns; /* out of order by a little: count it in the first window */
    /* unsigned: any two int64 times differ by less than 2^64 */
    w = (int64_t)(((uint64_t)start_ns - (uint64_t)sw->t0_ns) / (uint64_t)sw->window_ns);
    if ((rc = open_cell(sw, group, w, &g)) < 0)
        return rc;
    sw->nspans++;
    if (start_ns > sw->last_ns || sw->nspans == 1)
        sw->last_ns = start_ns;
    g->c_spans++;
    g->c_err += error != 0;
    g->c_known += error != 0 || isfinite(latency_ms);
    if (isfinite(latency_ms)) {
        if (g->nlat == g->latcap) {
            size_t nc = g->latcap ? g->latcap * 2 : 256;
            if (nc > 64u * 1024 * 1024)
                return SF_E_LIMIT;
            GROW(g->lat, nc);
            g->latcap = nc;
        }
        g->lat[g->nlat++] = latency_ms;
    }
    if (trace && *trace) {
        int isnew = seen_insert(g, trace);
        if (isnew < 0)
            return isnew;
        if (isnew) { /* one trial per trace: its root decision */
            g->c_traces++;
            if (sampled >= 0) {
                g->c_trials++;
                g->c_kept += sampled > 0;
            }
            if (isfinite(cfg_rate)) {
                g->c_cfg += cfg_rate;
                g->c_cfg_n++;
            }
        }
    }
    return 0;
}

int sf_spans_put(struct sf_span_windows *sw, const char *group, int64_t num,
                 const struct sf_spans_cell *cell)
{
    struct sf_win_group *g;
    int rc;

    assert(num >= 0 && (sw->nwin == 0 || num >= sw->win[sw->nwin - 1]));
    if (cell->spans == 0)
        return 0;
    if ((rc = open_cell(sw, group, num, &g)) < 0)
        return rc;
    assert(g->c_spans == 0); /* once per window: "(other)" too comes as one group */
    sw->nspans += cell->spans;
    g->c_spans = cell->spans;
    g->c_err = cell->err;
    g->c_known = cell->known;
    g->c_traces = cell->traces;
    g->c_trials = cell->trials;
    g->c_kept = cell->kept;
    g->c_cfg_n = cell->cfg_n;
    g->c_cfg = cell->cfg_sum;
    memcpy(g->c_q, cell->q, sizeof(g->c_q));
    g->c_put = 1;
    return 0;
}

/* Spans in stored window w, all groups. */
static uint64_t window_spans(const struct sf_span_windows *sw, size_t w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < sw->ng; i++)
        n += sw->g[i].spans[w];
    return n;
}

/* The first stored window where the running span count reaches `want`. */
static size_t window_at_count(const struct sf_span_windows *sw, uint64_t want)
{
    uint64_t run = 0;
    for (size_t w = 0; w < sw->nwin; w++)
        if ((run += window_spans(sw, w)) >= want)
            return w;
    return sw->nwin - 1;
}

/* Keep stored windows [a, b] only. */
static void keep_windows(struct sf_span_windows *sw, size_t a, size_t b)
{
    size_t n = b - a + 1;
    int64_t base = sw->win[a];

    for (size_t i = 0; i < sw->ng; i++) {
        struct sf_win_group *g = &sw->g[i];
        for (int m = 0; m < SF_M_NMETRICS; m++)
            memmove(g->m[m], g->m[m] + a, n * sizeof(double));
        memmove(g->spans, g->spans + a, n * sizeof(uint64_t));
        memmove(g->known, g->known + a, n * sizeof(uint64_t));
        memmove(g->traces, g->traces + a, n * sizeof(uint64_t));
        memmove(g->trials, g->trials + a, n * sizeof(uint64_t));
        memmove(g->kept, g->kept + a, n * sizeof(uint64_t));
        memmove(g->cfg, g->cfg + a, n * sizeof(double));
    }
    for (size_t w = 0; w < n; w++)
        sw->win[w] = sw->win[a + w] - base;
    sw->t0_ns = after_windows(sw->t0_ns, base, sw->window_ns);
    sw->nwin = n;
}

/* Leave out the windows of spans far from the bulk (spans.h), counting them. */
static void drop_outliers(struct sf_span_windows *sw)
{
    size_t lo, hi, a, b;
    int64_t fence;

    if (sw->nspans < SF_SPANS_FENCE_MIN || sw->nwin == 0)
        return;
    lo = window_at_count(sw, (sw->nspans + 99) / 100);
    hi = window_at_count(sw, sw->nspans - sw->nspans / 100);
    fence = (sw->win[hi] - sw->win[lo]) * SF_SPANS_FENCE_SPAN;
    if (fence < SF_SPANS_MAX_GAP)
        fence = SF_SPANS_MAX_GAP;
    for (a = lo; a > 0 && sw->win[a - 1] >= sw->win[lo] - fence;)
        a--;
    for (b = hi; b + 1 < sw->nwin && sw->win[b + 1] <= sw->win[hi] + fence;)
        b++;
    while (a < b && window_spans(sw, a) == 0) /* no empty windows at the ends */
        a++;
    while (b > a && window_spans(sw, b) == 0)
        b--;
    if (a == 0 && b + 1 == sw->nwin)
        return;
    for (size_t w = 0; w < sw->nwin; w++) {
        uint64_t n = window_spans(sw, w);
        if (n == 0 || (w >= a && w <= b))
            continue;
        if (w < a)
            sw->outliers.before += n;
        else
            sw->outliers.after += n;
        if (sw->outliers.before + sw->outliers.after == n)
            sw->outliers.first_ns = sf_spans_window_start(sw, w);
        sw->outliers.last_ns = sf_spans_window_start(sw, w);
    }
    sw->nspans -= sw->outliers.before + sw->outliers.after;
    keep_windows(sw, a, b);
    sw->outliers.bulk_from_ns = sf_spans_window_start(sw, 0);
    sw->outliers.bulk_to_ns = sf_spans_window_start(sw, sw->nwin - 1) + sw->window_ns;
}

int sf_spans_finish(struct sf_span_windows *sw)
{
    int64_t covered;
    int rc = close_all(sw);

    if (rc < 0)
        return rc;
    /* The capture ends inside the last window: when the spans cover less than half of
     * it, its throughput is unknown (a short tail is no drop in traffic).  Only the last:
     * a window in the middle whose spans came early is a quiet stretch, not an end. */
    covered = sw->nwin ? sw->last_ns - sf_spans_window_start(sw, sw->nwin - 1) : 0;
    if (sw->nwin > 1 && 2 * covered < sw->window_ns)
        for (size_t i = 0; i < sw->ng; i++)
            sw->g[i].m[SF_M_THROUGHPUT][sw->nwin - 1] = NAN;
    for (size_t i = 0; i < sw->ng; i++)
        if ((rc = group_reserve(&sw->g[i], sw->nwin)) < 0)
            return rc;
    drop_outliers(sw);
    /* a cut gap is a jump between stored windows, after its SF_SPANS_MAX_GAP empty ones */
    for (size_t w = 1; w < sw->nwin; w++) {
        int64_t jump = sw->win[w] - sw->win[w - 1] - 1;
        if (jump > 0) {
            sw->gaps_cut++;
            if (jump + SF_SPANS_MAX_GAP > sw->longest_gap)
                sw->longest_gap = jump + SF_SPANS_MAX_GAP;
        }
    }
    return 0;
}

void sf_spans_outlier_note(const struct sf_span_windows *sw, char *buf, size_t n)
{
    uint64_t out = sw->outliers.before + sw->outliers.after;
    size_t len = 0;

    buf[0] = 0;
    if (out) {
        double early = (double)sw->outliers.bulk_from_ns - (double)sw->outliers.first_ns;
        double late = (double)sw->outliers.last_ns - (double)sw->outliers.bulk_to_ns;
        double far = sw->outliers.after && late > early ? late : early;
        if (!sw->outliers.before)
            far = late;
        int k = snprintf(
            buf, n,
            "%llu span%s far from the bulk left out of the windows (%llu before it, "
            "%llu after; the farthest %.0f s away; the windows cover %.0f s)",
            (unsigned long long)out, out == 1 ? "" : "s", (unsigned long long)sw->outliers.before,
            (unsigned long long)sw->outliers.after, far / 1e9,
            ((double)sw->outliers.bulk_to_ns - (double)sw->outliers.bulk_from_ns) / 1e9);
        len = k > 0 && (size_t)k < n ? (size_t)k : strlen(buf);
    }
    if (sw->gaps_cut && len + 2 < n)
        snprintf(buf + len, n - len,
                 "%s%llu gap%s of more than %d empty windows shortened to %d (longest %lld "
                 "windows)",
                 len ? "; " : "", (unsigned long long)sw->gaps_cut, sw->gaps_cut == 1 ? "" : "s",
                 SF_SPANS_MAX_GAP, SF_SPANS_MAX_GAP, (long long)sw->longest_gap);
}

const char *sf_spans_decision_sql(void)
{
    return "COALESCE(s.sampled, (SELECT i.decision FROM span_intervals i WHERE i.span_id = "
           "s.span_id AND i.decision IS NOT NULL LIMIT 1))";
}

/* An HTTP exchange that carried JSON-RPC messages is counted through its calls (spans of
 * their own, pcap2spans/rpc.h): it is in no group, or every call would count twice and
 * the long-lived event streams of MCP would pose as slow requests. */
#define COUNTED(expr) "(CASE WHEN rpc_messages IS NULL THEN " expr " END)"

const char *sf_spans_group_expr(const char *by)
{
    if (strcmp(by, "service") == 0)
        return COUNTED("COALESCE(s.grpc_service, s.authority, '(none)')");
    if (strcmp(by, "endpoint") == 0) /* the selection language's, so names can be selected */
        return COUNTED(SF_ENDPOINT_SQL);
    if (strcmp(by, "grpc_method") == 0)
        return COUNTED("s.grpc_service || '/' || COALESCE(s.grpc_method, '')");
    return COUNTED("'all'");
}

const char *sf_spans_group_expr_ch(const char *by)
{
    /* the same in ClickHouse's dialect, over spans' unqualified columns */
    if (strcmp(by, "service") == 0)
        return COUNTED("coalesce(grpc_service, authority, '(none)')");
    if (strcmp(by, "endpoint") == 0)
        return COUNTED(SF_ENDPOINT_CH);
    if (strcmp(by, "grpc_method") == 0)
        return COUNTED("grpc_service || '/' || coalesce(grpc_method, '')");
    return COUNTED("'all'");
}

static int read_rows(struct sf_span_windows *sw, sqlite3_stmt *st, struct sf_progress *pg,
                     struct sf_err *err)
{
    int r, rc;

    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t t0 = sqlite3_column_int64(st, 0);
        int status = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 2);
        int gst = sqlite3_column_type(st, 3) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 3);
        int rst = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 4);
        int sampled = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 5);
        const char *trace = (const char *)sqlite3_column_text(st, 6);
        const char *group = (const char *)sqlite3_column_text(st, 7);
        const char *ts = (const char *)sqlite3_column_text(st, 8);
        double lat = NAN;
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            lat = (double)(sqlite3_column_int64(st, 1) - t0) / 1e6;
        if (lat < 0)
            lat = NAN;
        int failed = sqlite3_column_int(st, 9);
        rc = sf_spans_add(sw, group ? group : "(none)", t0, lat,
                          status >= 500 || gst != 0 || rst != 0 || failed, sampled, trace,
                          ts ? sf_tracectx_ot_rate(ts) : NAN);
        if (rc < 0)
            return sf_err_set(
                err, rc, UINT64_MAX, "span %llu: %s", (unsigned long long)sw->nspans + 1,
                rc == SF_E_LIMIT ? "over the limits (4,000,000 windows x groups, 64 Mi spans "
                                   "in one window): choose another --window"
                                 : "out of memory");
        if ((sw->nspans & 0xffff) == 0)
            sf_progress_update(pg, sw->nspans);
    }
    if (r != SQLITE_DONE)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "reading spans: %s",
                          sqlite3_errmsg(sqlite3_db_handle(st)));
    return 0;
}

int sf_spans_window(struct sf_span_windows *sw, const char *path, const char *by, int64_t window_ns,
                    int complete_only, FILE *progress, struct sf_err *err)
{
    struct sf_progress pg;
    struct stat stb;
    struct sf_db *db = NULL;
    sqlite3_stmt *st = NULL;
    char sql[2048];
    const char *ge = sf_spans_group_expr(by);
    int rc;

    sf_spans_init(sw, window_ns);
    if (stat(path, &stb) < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "no such database");
    if ((rc = sf_db_open_mode(&db, path, SF_DB_READ, err)) < 0)
        return rc;
    if ((rc = sf_db_partial_note(db, complete_only, sw->note, sizeof(sw->note), err)) < 0) {
        sf_db_close(db, NULL);
        return rc;
    }
    snprintf(sql, sizeof(sql),
             "SELECT s.req_start_ns, COALESCE(s.resp_end_ns, s.resp_start_ns), s.status, "
             "s.grpc_status, s.reset_code, %s, s.trace_id, %s, "
             "(SELECT c.tracestate FROM contexts c WHERE c.span_row = s.id AND "
             "c.tracestate LIKE '%%ot=%%' LIMIT 1), "
             /* a connection that never completed its handshake (pcap2spans' tls.c), a
              * JSON-RPC error, a tool result with isError (pcap2spans/rpc.h) */
             "(s.partial_reason LIKE 'handshake failed:%%' OR s.rpc_error_code IS NOT NULL "
             "OR s.rpc_tool_error = 1) "
             "FROM spans s WHERE s.req_start_ns IS NOT NULL AND (%s) IS NOT NULL "
             "ORDER BY s.req_start_ns, s.id",
             sf_spans_decision_sql(), ge, ge);
    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK) {
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "query spans: %s",
                        sqlite3_errmsg(sf_db_handle(db)));
    } else {
        sf_progress_start(&pg, progress, path, "spans", 0);
        rc = read_rows(sw, st, &pg, err);
        sf_progress_end(&pg);
        sqlite3_finalize(st);
    }
    if (rc == 0 && (rc = sf_spans_finish(sw)) < 0)
        sf_err_set(err, rc, UINT64_MAX, "out of memory");
    sf_db_close(db, NULL);
    if (rc < 0)
        sf_spans_free(sw);
    return rc;
}

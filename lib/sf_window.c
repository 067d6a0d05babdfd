/* sf_window.c - the default window length from span density (see sf_window.h). */
#include "sf_window.h"

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "sf_db.h"
#include "sf_spans.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Largest 1, 2 or 5 x 10^k not above ns. */
static int64_t round_down_125(double ns)
{
    double p = pow(10, floor(log10(ns))), m = ns / p;
    double step = m >= 5 ? 5 : m >= 2 ? 2 : 1;
    return (int64_t)(step * p + 0.5);
}

/* Smallest 1, 2 or 5 x 10^k not below ns. */
static int64_t round_up_125(double ns)
{
    double p = pow(10, floor(log10(ns)));
    static const double steps[] = {1, 2, 5};

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (steps[i] * p >= ns * (1 - 1e-12))
            return (int64_t)(steps[i] * p + 0.5);
    return (int64_t)(10 * p + 0.5);
}

int64_t sf_window_choose(const uint64_t *counts, size_t ng, int64_t dur_ns)
{
    double rates[SF_SPANS_MAX_GROUPS], w;
    uint64_t total = 0;
    size_t nr = 0;

    for (size_t g = 0; g < ng; g++)
        total += counts[g];
    if (total < 2 || dur_ns <= 0)
        return SF_WINDOW_DEFAULT_NS;
    for (size_t g = 0; g < ng && nr < SF_SPANS_MAX_GROUPS; g++)
        if (counts[g] > 0 && (double)counts[g] >= 0.01 * (double)total)
            rates[nr++] = (double)counts[g] / ((double)dur_ns / 1e9);
    qsort(rates, nr, sizeof(rates[0]), cmp_d);
    /* the lower median: with two groups, the sparser one decides */
    w = SF_WINDOW_SPANS / rates[(nr - 1) / 2] * 1e9;
    if (w > (double)dur_ns / SF_WINDOW_MIN_COUNT)
        w = (double)dur_ns / SF_WINDOW_MIN_COUNT;
    if (w < 1e6)
        w = 1e6;
    /* at most SF_WINDOW_MAX_COUNT windows: the detectors' cost grows with the square of
     * a series' length, and the windows with the spans (16 each) */
    if (w < (double)dur_ns / SF_WINDOW_MAX_COUNT)
        return round_up_125((double)dur_ns / SF_WINDOW_MAX_COUNT);
    return round_down_125(w);
}

uint64_t sf_window_pct_min_spans(double p)
{
    if (p <= 0.5)
        return 1;
    return (uint64_t)floor(1 / (1 - p) + 1e-9) + 1;
}

/* The k-th smallest request start (0-based), or 0 without one. */
static int64_t nth_start(sqlite3 *h, int64_t k)
{
    sqlite3_stmt *st;
    int64_t v = 0;

    if (sqlite3_prepare_v2(h,
                           "SELECT req_start_ns FROM spans WHERE req_start_ns IS NOT NULL"
                           " ORDER BY req_start_ns LIMIT 1 OFFSET ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, k);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int sf_window_auto(const char *path, const char *by, int64_t *window_ns, struct sf_err *err)
{
    struct sf_span_windows sw;
    struct stat stb;
    struct sf_db *db = NULL;
    sqlite3_stmt *st;
    int64_t lo = 0, hi = 0, n = 0, blo, bhi, cut;
    uint64_t counts[SF_SPANS_MAX_GROUPS];
    int rc;

    if (stat(path, &stb) < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "no such database");
    if ((rc = sf_db_open_mode(&db, path, SF_DB_READ, err)) < 0)
        return rc;
    if (sqlite3_prepare_v2(sf_db_handle(db),
                           "SELECT MIN(req_start_ns), MAX(req_start_ns), count(req_start_ns)"
                           " FROM spans",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "query spans: %s",
                        sqlite3_errmsg(sf_db_handle(db)));
        sf_db_close(db, NULL);
        return rc;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        lo = sqlite3_column_int64(st, 0);
        hi = sqlite3_column_int64(st, 1);
        n = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    /* the duration of the bulk, from its 1st to its 99th percentile scaled to the
     * whole: one span far from the rest must not make every window huge */
    cut = n / 100;
    blo = cut ? nth_start(sf_db_handle(db), cut) : lo;
    bhi = cut ? nth_start(sf_db_handle(db), n - 1 - cut) : hi;
    sf_db_close(db, NULL);
    if (hi <= lo || bhi <= blo) {
        *window_ns = SF_WINDOW_DEFAULT_NS;
        return 0;
    }
    /* one window over the whole run: the span count of every group, grouped exactly as
       the real run will group them */
    if ((rc = sf_spans_window(&sw, path, by, hi - lo + 1, 0, NULL, err)) < 0)
        return rc;
    for (size_t g = 0; g < sw.ng; g++)
        counts[g] = sw.nwin ? sw.g[g].spans[0] : 0;
    *window_ns = sf_window_of(lo, hi, n, blo, bhi, counts, sw.ng);
    sf_spans_free(&sw);
    return 0;
}

int64_t sf_window_of(int64_t lo, int64_t hi, int64_t n, int64_t blo, int64_t bhi,
                     const uint64_t *counts, size_t ng)
{
    int64_t cut = n / 100;

    if (hi <= lo || bhi <= blo)
        return SF_WINDOW_DEFAULT_NS;
    return sf_window_choose(counts, ng,
                            (int64_t)((double)(bhi - blo) * (double)n / (double)(n - 2 * cut)));
}

/* fuzz_series.c - the CSV/NDJSON series reader, then every detector and the
 * classifier on whatever series it accepted.
 *
 * Invariants checked (abort on violation): an accepted table has at least one
 * series; every series' rows ascend and are < the row count; times are finite;
 * change points ascend strictly inside (0, n); a rejected input carries an error
 * code and a line number.  The next column, when it has as many values, is also
 * given as the trials of a proportion (any numbers: the binomial cost takes them
 * only when they are valid). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../../inflect/changepoint.h"
#include "../../../inflect/classify.h"
#include "../../../inflect/series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void detect_all(const struct inflect_series *s, const double *w)
{
    struct cp_opts o;
    size_t cp[256];
    struct cp_point pts[256];
    struct cp_bounds bounds[256];
    struct cp_info info;

    cp_defaults(&o);
    for (int d = 0; d < CP_NDETECTORS; d++) {
        long m = cp_detect((enum cp_detector)d, s->v, w, s->n, &o, cp, 256, &info);
        if (m < 0)
            continue;
        for (long k = 0; k < m; k++)
            if (cp[k] == 0 || cp[k] >= s->n || (k && cp[k] <= cp[k - 1]))
                abort();
        if (d == CP_PELT && classify_points(s->v, s->n, cp, (size_t)m, pts) == 0)
            for (long k = 0; k < m; k++)
                if (pts[k].index >= s->n || pts[k].end > s->n)
                    abort();
        if (d == CP_PELT &&
            cp_assess(s->v, w, s->n, &o, (enum cp_cost)info.cost, cp, (size_t)m, bounds) == 0)
            for (long k = 0; k < m; k++)
                if (bounds[k].lo > cp[k] || bounds[k].hi < cp[k] || bounds[k].hi >= s->n ||
                    !(bounds[k].confidence >= 0 && bounds[k].confidence <= 1))
                    abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct inflect_table t;
    struct sf_err e;
    const char *col = size > 0 && data[0] == 'c' ? "c" : NULL;

    sf_err_clear(&e);
    if (series_parse(&t, (const char *)data, size, col, &e) < 0) {
        if (e.code >= 0)
            abort();
        return 0;
    }
    if (t.nseries == 0)
        abort();
    for (size_t i = 0; i < t.nseries; i++) {
        const struct inflect_series *s = &t.s[i];
        for (size_t j = 0; j < s->n; j++)
            if (s->row[j] >= t.rows || (j && s->row[j] <= s->row[j - 1]) || !isfinite(s->t[j]) ||
                !isfinite(s->v[j]))
                abort();
        if (s->n <= 4000) /* detectors are O(n) to O(n^2): keep each run fast */
            detect_all(s, i + 1 < t.nseries && t.s[i + 1].n == s->n ? t.s[i + 1].v : NULL);
    }
    series_table_free(&t);
    return 0;
}

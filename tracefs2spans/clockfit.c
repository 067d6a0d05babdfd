/* clockfit.c - robust offset and skew between two clocks from matched pairs.
 *
 * Model (Paxson 1998, Moon/Skelly/Towsley 1999, Zhang et al. 2002):
 *
 *   y = x + offset + skew * (x - ref) + d        x: tracefs time of a span marker
 *                                                y: pcap time of the same span
 *                                                d: one-sided latency (all >= 0, or all <= 0)
 *
 *   1. sort by x; work on dy = y - x - base (base = median of y - x), dx = x - ref;
 *   2. which side are the delays on?  the longer tail of the residuals of a Theil-Sen
 *      fit (q90 - q50 against q50 - q10); an upper envelope is a lower one of -dy;
 *   3. clock steps: binary segmentation on the 10th percentile of residuals per block
 *      of points (a level shift of the envelope), each candidate tested against the
 *      block noise (8 sigma) and the smallest step of interest, refitting the slope
 *      per range; the split is then placed at the point where fewest points sit below
 *      their side's level;
 *   4. per segment: Theil-Sen slope (median of pairwise slopes, a seeded sample of
 *      pairs for large n) -> intercept = median residual -> drop points below
 *      median - 5 * 1.4826 * MAD (pairs that cannot be, e.g. mismatched spans) ->
 *      lower envelope: the line under every kept point that maximises its height at
 *      the mean x (the LP of Moon et al.), i.e. the lower-convex-hull edge spanning
 *      the mean x.  With the skew fixed, the envelope is the smallest residual.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "t2s.h"

#define TS_EXACT_MAX 1500
#define TS_SAMPLES   200000
#define MAD_FLOOR_NS 1000.0 /* tracefs text has 1 us resolution */

struct fitctx {
    const struct cf_opts *o;
    const struct cf_pair *p;
    double *dx, *dy, *tmp, *tmp2;
    size_t *hull; /* lower-hull vertex indices */
    int64_t base;
    double sign; /* +1 lower envelope, -1 upper (dy negated) */
    size_t cuts[CF_MAX_SEGMENTS];
    int ncuts;
    struct cf_result *r;
};

void clockfit_defaults(struct cf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->fit_skew = -1;
    o->detect_steps = 1;
    o->min_step_ns = 200000;
    o->seed = 0x5eedc10cull;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const struct cf_pair *p = a, *q = b;
    if (p->x != q->x)
        return (p->x > q->x) - (p->x < q->x);
    return (p->y > q->y) - (p->y < q->y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Quantile q of v[0..n) (sorts v). */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof(*v), cmp_double);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

double clockfit_theil_sen(const double *x, const double *y, size_t n, uint64_t seed)
{
    size_t m = 0, cap = n <= TS_EXACT_MAX ? n * (n - 1) / 2 : TS_SAMPLES;
    double *s, med;
    uint64_t st = seed ? seed : 1;

    if (n < 2)
        return 0;
    s = malloc((cap ? cap : 1) * sizeof(*s));
    if (s == NULL)
        return NAN;
    if (n <= TS_EXACT_MAX) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (x[j] != x[i])
                    s[m++] = (y[j] - y[i]) / (x[j] - x[i]);
    } else {
        for (size_t k = 0; k < 4 * cap && m < cap; k++) {
            size_t i = rng_next(&st) % n, j = rng_next(&st) % n;
            if (x[j] != x[i])
                s[m++] = (y[j] - y[i]) / (x[j] - x[i]);
        }
    }
    med = m ? quantile(s, m, 0.5) : 0;
    free(s);
    return med;
}

/* Slope for points [a, a+n): Theil-Sen, or the fixed skew. */
static double slope(struct fitctx *c, size_t a, size_t n, int fit)
{
    if (!fit || n < 2)
        return c->sign * c->o->fixed_skew_ppm * 1e-6;
    return clockfit_theil_sen(c->dx + a, c->dy + a, n, c->o->seed);
}

/* Residuals r[i] = dy - b*dx - median, into c->tmp2[a..a+n); returns the median. */
static double residuals(struct fitctx *c, size_t a, size_t n, double b)
{
    for (size_t i = 0; i < n; i++)
        c->tmp[i] = c->dy[a + i] - b * c->dx[a + i];
    double med = quantile(c->tmp, n, 0.5);
    for (size_t i = 0; i < n; i++)
        c->tmp2[a + i] = c->dy[a + i] - b * c->dx[a + i] - med;
    return med;
}

/* Fit the skew of [a, a+n)?  Given by the options, or (auto) with at least 20 pairs
 * when they cover 60 s, or when the Theil-Sen drift over their range stands out of
 * the residual noise (3 MADs): a short run between clocks of different rates. */
static int want_skew(struct fitctx *c, size_t a, size_t n)
{
    double range, b, mad;

    if (c->o->fit_skew >= 0)
        return c->o->fit_skew;
    if (n < 20)
        return 0;
    range = (double)(c->p[a + n - 1].x - c->p[a].x);
    if (range >= 60e9)
        return 1;
    b = clockfit_theil_sen(c->dx + a, c->dy + a, n, c->o->seed);
    residuals(c, a, n, b);
    for (size_t i = 0; i < n; i++)
        c->tmp[i] = fabs(c->tmp2[a + i]);
    mad = quantile(c->tmp, n, 0.5);
    return fabs(b) * range > 3 * 1.4826 * (mad > MAD_FLOOR_NS ? mad : MAD_FLOOR_NS);
}

/* The lower-envelope line under the kept points (keep[i] != 0) of [a, a+n):
 * the lower-convex-hull edge spanning the mean x.  prior: slope used when the
 * mean falls on a hull vertex (clamped into the vertex's range). */
static void envelope(struct fitctx *c, size_t a, size_t n, const char *keep, double prior,
                     double *ia, double *ib)
{
    size_t *h = c->hull, nh = 0, nk = 0;
    double xbar = 0;

    *ib = prior;
    *ia = 0;
    for (size_t i = a; i < a + n; i++) {
        if (!keep[i - a])
            continue;
        xbar += c->dx[i];
        nk++;
        /* points arrive sorted by x (then y): monotone chain, lower hull */
        if (nh > 0 && c->dx[h[nh - 1]] == c->dx[i])
            continue; /* same x, higher y: never on the lower hull */
        while (nh >= 2) {
            size_t o = h[nh - 2], m = h[nh - 1];
            double cr = (c->dx[m] - c->dx[o]) * (c->dy[i] - c->dy[o]) -
                        (c->dy[m] - c->dy[o]) * (c->dx[i] - c->dx[o]);
            if (cr > 0)
                break;
            nh--;
        }
        h[nh++] = i;
    }
    xbar /= (double)(nk ? nk : 1);
    if (nh == 1) {
        *ib = prior;
        *ia = c->dy[h[0]] - prior * c->dx[h[0]];
        return;
    }
    for (size_t k = 0; k + 1 < nh; k++) {
        double x0 = c->dx[h[k]], x1 = c->dx[h[k + 1]];
        double e = (c->dy[h[k + 1]] - c->dy[h[k]]) / (x1 - x0);
        if (xbar > x1 && k + 2 < nh)
            continue;
        if (xbar == x1 && k + 2 < nh) {
            double e2 = (c->dy[h[k + 2]] - c->dy[h[k + 1]]) / (c->dx[h[k + 2]] - x1);
            e = prior < e ? e : prior > e2 ? e2 : prior;
            *ib = e;
            *ia = c->dy[h[k + 1]] - e * x1;
            return;
        }
        *ib = e;
        *ia = c->dy[h[k]] - e * x0;
        return;
    }
}

static int64_t sat_i64(double v)
{
    return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN + 1 : (int64_t)llround(v);
}

/* Fit one segment [a, a+n) into seg.  Returns 0, SF_E_NOMEM, or SF_E_LIMIT when the
 * fitted line is out of the int64 range. */
static int fit_segment(struct fitctx *c, size_t a, size_t n, struct cf_segment *seg)
{
    int fit = want_skew(c, a, n);
    double b = slope(c, a, n, fit), ia, ib, mad, cut;
    char *keep = calloc(n, 1);
    size_t kept = 0;

    if (keep == NULL || isnan(b)) {
        free(keep);
        return SF_E_NOMEM;
    }
    residuals(c, a, n, b);
    for (size_t i = 0; i < n; i++)
        c->tmp[i] = fabs(c->tmp2[a + i]);
    mad = n > 1 ? quantile(c->tmp, n, 0.5) : 0;
    cut = -5.0 * 1.4826 * (mad > MAD_FLOOR_NS ? mad : MAD_FLOOR_NS);
    for (size_t i = 0; i < n; i++)
        if ((keep[i] = c->tmp2[a + i] >= cut))
            kept++;
    if (kept == 0) {
        memset(keep, 1, n);
        kept = n;
    }
    if (fit) {
        envelope(c, a, n, keep, b, &ia, &ib);
    } else {
        ib = b;
        ia = INFINITY;
        for (size_t i = 0; i < n; i++)
            if (keep[i] && c->dy[a + i] - b * c->dx[a + i] < ia)
                ia = c->dy[a + i] - b * c->dx[a + i];
    }
    /* residual statistics against the final line: the median over the kept pairs;
     * the max over those also within 5 MADs above the median (beyond that, on the
     * delay side, are queueing outliers, not clock error) */
    size_t m = 0;
    double mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        double r = fabs(c->dy[a + i] - ia - ib * c->dx[a + i]);
        c->tmp[m++] = r;
        if (c->tmp2[a + i] <= -cut)
            mx = r > mx ? r : mx;
    }
    double rel = c->sign * ia;
    int64_t off;
    free(keep);
    /* exact integer offset (a double has 256 ns steps at realtime magnitudes); a line
     * this far off (only from nonsense input) has no int64 offset */
    if (!isfinite(rel) || !isfinite(ib) || fabs(rel) >= 9.2e18 ||
        __builtin_add_overflow(c->base, (int64_t)llround(rel), &off))
        return SF_E_LIMIT;
    seg->residual_ns = sat_i64(quantile(c->tmp, m, 0.5));
    seg->residual_max_ns = sat_i64(mx);
    seg->first = a;
    seg->count = n;
    seg->inliers = kept;
    seg->x_from = c->p[a].x;
    seg->x_to = c->p[a + n - 1].x;
    seg->ref_ns = c->p[0].x;
    seg->offset_ns = off;
    seg->skew_ppm = c->sign * ib * 1e6;
    seg->upper = c->sign < 0;
    seg->skew_fitted = fit;
    c->r->dropped += n - kept;
    return 0;
}

/* Block size for step detection and side choice: about 64 blocks, at least 16 points. */
static size_t block_size(size_t n)
{
    return n / 64 > 16 ? n / 64 : 16;
}

/* Which side are the delays on?  Residuals minus their block's median (so that a
 * clock step does not look like a tail), then compare the two tails. */
static void choose_side(struct fitctx *c, size_t n)
{
    size_t bs = block_size(n);
    double q10, q50, q90;

    if (n < 3)
        return;
    residuals(c, 0, n, slope(c, 0, n, c->o->fit_skew != 0));
    for (size_t a = 0; a < n; a += bs) {
        size_t m = a + bs <= n ? bs : n - a;
        memcpy(c->tmp, c->tmp2 + a, m * sizeof(double));
        double med = quantile(c->tmp, m, 0.5);
        for (size_t i = a; i < a + m; i++)
            c->tmp2[i] -= med;
    }
    memcpy(c->tmp, c->tmp2, n * sizeof(double));
    q10 = quantile(c->tmp, n, 0.1);
    q50 = quantile(c->tmp, n, 0.5);
    q90 = quantile(c->tmp, n, 0.9);
    if (q50 - q10 > q90 - q50) {
        c->sign = -1;
        for (size_t i = 0; i < n; i++)
            c->dy[i] = -c->dy[i];
    }
}

/* The level of the envelope in one block of residuals [s, s+m): the 10th percentile
 * of the points not far below the block's median (median - 5 * 1.4826 * MAD, the
 * same trimming as the fit, but local, so a clock step elsewhere does not count). */
static double block_level(struct fitctx *c, size_t s, size_t m)
{
    double med, mad, lo;
    size_t w = 0;

    memcpy(c->tmp, c->tmp2 + s, m * sizeof(double));
    med = quantile(c->tmp, m, 0.5);
    for (size_t i = 0; i < m; i++)
        c->tmp[i] = fabs(c->tmp2[s + i] - med);
    mad = quantile(c->tmp, m, 0.5);
    lo = med - 5.0 * 1.4826 * (mad > MAD_FLOOR_NS ? mad : MAD_FLOOR_NS);
    for (size_t i = s; i < s + m; i++)
        if (c->tmp2[i] >= lo)
            c->tmp[w++] = c->tmp2[i];
    return quantile(c->tmp, w, 0.1);
}

/* Place a split between blocks: the point index in [lo, hi) where fewest points sit
 * more than half a step below their side's level (outliers count on both sides). */
static size_t place_split(const struct fitctx *c, size_t lo, size_t hi, double L, double R)
{
    double tol = fabs(R - L) / 2;
    long cost = 0, best;
    size_t at = lo;

    for (size_t i = lo; i < hi; i++)
        cost += c->tmp2[i] < R - tol;
    best = cost;
    for (size_t k = lo; k < hi; k++) {
        cost += (c->tmp2[k] < L - tol) - (c->tmp2[k] < R - tol);
        /* step up: the earliest best place; step down: the latest */
        if (cost < best || (cost == best && R < L)) {
            best = cost;
            at = k + 1;
        }
    }
    return at;
}

/* A point of the upper level left in the lower level's segment is harmless (it
 * sits above that envelope); one of the lower level in the upper's segment pulls
 * the envelope down.  So move the split over nearby points that sit clearly
 * below the upper level (but are no outliers far below both). */
static size_t guard_split(const struct fitctx *c, size_t cut, size_t lo, size_t hi, double L,
                          double R, double sigma, size_t w)
{
    double tol = fmax(3 * sigma, fabs(R - L) / 10), far = fmin(L, R) - fabs(R - L);
    size_t at = cut;

    if (R > L) {
        for (size_t i = cut; i < hi && i < cut + w; i++)
            if (c->tmp2[i] < R - tol && c->tmp2[i] > far)
                at = i + 1;
    } else {
        for (size_t i = cut; i-- > lo && i + w >= cut;)
            if (c->tmp2[i] < L - tol && c->tmp2[i] > far)
                at = i;
    }
    return at;
}

/* Binary segmentation of [a, a+n) on the 10th percentile of residuals per block. */
static int split(struct fitctx *c, size_t a, size_t n, int depth)
{
    size_t bs = block_size(n), nb = n / bs, best_k = 0, cut;
    double *q, sum = 0, pre = 0, best = 0, sigma, L = 0, R = 0;

    if (nb < 4 || c->ncuts >= CF_MAX_SEGMENTS - 1 || depth > 8)
        return 0;
    if ((q = malloc(2 * nb * sizeof(*q))) == NULL)
        return SF_E_NOMEM;
    /* detrend with the local slope unless the skew is given: a ramp is no step */
    residuals(c, a, n, slope(c, a, n, c->o->fit_skew != 0));
    for (size_t k = 0; k < nb; k++) {
        size_t s = a + k * bs, m = k + 1 < nb ? bs : a + n - s;
        q[k] = block_level(c, s, m);
        sum += q[k];
    }
    for (size_t k = 0; k + 1 < nb; k++)
        q[nb + k] = q[k + 1] - q[k];
    double dmed = quantile(memcpy(c->tmp, q + nb, (nb - 1) * sizeof(double)), nb - 1, 0.5);
    for (size_t k = 0; k + 1 < nb; k++)
        c->tmp[k] = fabs(q[nb + k] - dmed);
    sigma = 1.4826 * quantile(c->tmp, nb - 1, 0.5) / sqrt(2.0);
    sigma = sigma > MAD_FLOOR_NS / 2 ? sigma : MAD_FLOOR_NS / 2;
    for (size_t k = 1; k < nb; k++) {
        pre += q[k - 1];
        double ml = pre / (double)k, mr = (sum - pre) / (double)(nb - k);
        double st = fabs(ml - mr) * sqrt((double)k * (double)(nb - k) / (double)nb) / sigma;
        if (k >= 2 && nb - k >= 2 && st > best) {
            best = st;
            best_k = k;
            L = ml;
            R = mr;
        }
    }
    if (best_k == 0 || best < 8 || fabs(R - L) < (double)c->o->min_step_ns) {
        free(q);
        return 0;
    }
    /* the levels next to the split, one block away on each side (those two blocks
     * may hold the step): the mean levels carry the slope error of a fit across it */
    L = q[best_k - 2];
    R = q[best_k + 1 < nb ? best_k + 1 : nb - 1];
    free(q);
    cut = place_split(c, a + (best_k - 1) * bs, a + (best_k + 1) * bs, L, R);
    cut = guard_split(c, cut, a + (best_k - 1) * bs, a + (best_k + 1) * bs, L, R, sigma, bs / 2);
    if (cut < a + 5 || cut > a + n - 5)
        return 0;
    c->cuts[c->ncuts++] = cut;
    int rc = split(c, a, cut - a, depth + 1);
    return rc ? rc : split(c, cut, a + n - cut, depth + 1);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int fit_all(struct fitctx *c, size_t n)
{
    size_t from = 0;
    int rc;

    qsort(c->cuts, c->ncuts, sizeof(c->cuts[0]), cmp_size);
    c->cuts[c->ncuts] = n;
    for (int k = 0; k <= c->ncuts; k++) {
        if ((rc = fit_segment(c, from, c->cuts[k] - from, &c->r->seg[c->r->nseg++])))
            return rc;
        from = c->cuts[k];
    }
    return 0;
}

int clockfit_fit(struct cf_pair *p, size_t n, const struct cf_opts *o, struct cf_result *r,
                 struct sf_err *err)
{
    struct fitctx c = {.o = o, .p = p, .r = r, .sign = 1};
    int64_t *d;
    int rc = 0;

    memset(r, 0, sizeof(*r));
    if (n == 0)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "no matched pairs to fit");
    qsort(p, n, sizeof(*p), cmp_pair);
    /* times come from files: refuse ranges whose differences do not fit in 63 bits */
    for (size_t i = 0; i < n; i++) {
        int64_t t;
        if (__builtin_sub_overflow(p[i].y, p[i].x, &t) ||
            __builtin_sub_overflow(p[i].x, p[0].x, &t))
            return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                              "pair %zu: times too far apart to fit (%lld, %lld)", i,
                              (long long)p[i].x, (long long)p[i].y);
    }
    d = malloc(n * sizeof(*d));
    c.dx = malloc(n * sizeof(double));
    c.dy = malloc(n * sizeof(double));
    c.tmp = malloc(n * sizeof(double));
    c.hull = malloc(n * sizeof(size_t));
    c.tmp2 = malloc(n * sizeof(double));
    if (!d || !c.dx || !c.dy || !c.tmp || !c.tmp2 || !c.hull) {
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory fitting %zu pairs", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = p[i].y - p[i].x;
    qsort(d, n, sizeof(*d), cmp_i64);
    c.base = d[n / 2];
    for (size_t i = 0; i < n; i++) {
        c.dx[i] = (double)(p[i].x - p[0].x);
        int64_t rel;
        /* exact in integers first: y - x is ~1.8e18 for realtime, where a double
         * steps by 256 ns */
        if (__builtin_sub_overflow(p[i].y - p[i].x, c.base, &rel)) {
            rc = sf_err_set(err, SF_E_USAGE, UINT64_MAX, "pair %zu: times too far apart", i);
            goto out;
        }
        c.dy[i] = (double)rel;
    }
    choose_side(&c, n);
    rc = o->detect_steps ? split(&c, 0, n, 0) : 0;
    if (rc == 0)
        rc = fit_all(&c, n);
    if (rc)
        sf_err_set(err, rc, UINT64_MAX, "%s fitting %zu pairs",
                   rc == SF_E_LIMIT ? "offset out of range" : "out of memory", n);
out:
    free(d);
    free(c.dx);
    free(c.dy);
    free(c.tmp);
    free(c.tmp2);
    free(c.hull);
    return rc;
}

/* classify.c - step / spike / ramp classification of change points.
 *
 *   step          spike (cold start)      ramp (sampler overload staircase)
 *        ____          _                            ___
 *   ____|         ____| |____               _______/
 *
 * Levels are segment means between consecutive change points; the relative
 * change is (after - before) / |before|.  See classify.h for the rules.
 */
#include "classify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inflect.h"

const char *cp_kind_name(enum cp_kind k)
{
    return k == CP_SPIKE ? "spike" : k == CP_RAMP ? "ramp" : "step";
}

static double seg_mean(const double *x, size_t a, size_t b)
{
    double s = 0;
    for (size_t i = a; i < b; i++)
        s += x[i];
    return b > a ? s / (double)(b - a) : 0;
}

/* Linear fit of x[a..b): returns R^2 and sets *rise to slope * length. */
static double seg_line(const double *x, size_t a, size_t b, double *rise)
{
    size_t k = b - a;
    double mt = (double)(k - 1) / 2, my = seg_mean(x, a, b), stt = 0, sty = 0, syy = 0;

    *rise = 0;
    if (k < 4)
        return 0;
    for (size_t i = 0; i < k; i++) {
        double dt = (double)i - mt, dy = x[a + i] - my;
        stt += dt * dt;
        sty += dt * dy;
        syy += dy * dy;
    }
    if (stt <= 0 || syy <= 0)
        return 0;
    *rise = sty / stt * (double)k;
    return sty * sty / (stt * syy);
}

static int sloped(const double *x, size_t a, size_t b, double jump)
{
    double rise, r2 = seg_line(x, a, b, &rise);
    return r2 >= 0.5 && fabs(rise) >= fabs(jump) && rise * jump > 0;
}

/* Squared error over [a, c) of the flat-ramp-flat model with the ramp on [s, e)
 * (s == e: a plain step at s).  g(t) = 0 before s, j/(L+1) at the j-th ramp point
 * (L = e - s), 1 from e; the two levels are fitted by least squares.  O(1) from
 * prefix sums of x, x^2 and t x, so the search below costs O(window^2). */
static double ramp_sse(const double *ps, const double *ps2, const double *pt, size_t a, size_t s,
                       size_t e, size_t c)
{
    double L = (double)(e - s), sv = L / 2, svv = L * (2 * L + 1) / (6 * (L + 1));
    double px = ps[e] - ps[s], svx = L > 0 ? (pt[e] - pt[s] - ((double)s - 1) * px) / (L + 1) : 0;
    double suu = (double)(s - a) + L - 2 * sv + svv, suv = sv - svv;
    double suy = ps[s] - ps[a] + px - svx, svy = ps[c] - ps[e] + svx;
    double syy = ps2[c] - ps2[a], det, l1, l2;

    svv += (double)(c - e);
    det = suu * svv - suv * suv;
    if (det <= 0)
        return INFINITY;
    l1 = (suy * svv - svy * suv) / det;
    l2 = (svy * suu - suy * suv) / det;
    return fmax(0, syy - l1 * suy - l2 * svy);
}

/* Best ramp around change point b within [a, c); returns 1 with *s, *e when it
 * explains the transition clearly better than the step. */
static int ramp_fit(const double *ps, const double *ps2, const double *pt, size_t a, size_t b,
                    size_t c, size_t *rs, size_t *re)
{
    const size_t w = 60;
    double step = ramp_sse(ps, ps2, pt, a, b, b, c), best = INFINITY;
    size_t s0 = b > a + w ? b - w : a + 1, e1 = b + w < c ? b + w : c - 1;
    /* a change point of the linear cost sits at the ramp's start, give or take a
     * few observations; one of a mean cost sits inside the ramp */
    size_t s1 = b + 8 < e1 ? b + 8 : e1;

    if (c - a < 6 || !(step > 0))
        return 0;
    for (size_t s = s0; s <= s1; s++)
        for (size_t e = b > s + 3 ? b : s + 3; e <= e1; e++) {
            double v = ramp_sse(ps, ps2, pt, a, s, e, c);
            if (v < best) {
                best = v;
                *rs = s;
                *re = e;
            }
        }
    return best <= 0.6 * step;
}

int classify_points(const double *x, size_t n, const size_t *cp, size_t m, struct cp_point *pts)
{
    size_t spike_max = n / 20 > 3 ? n / 20 : 3;
    double *ps = malloc((n + 1) * sizeof(double)), *ps2 = malloc((n + 1) * sizeof(double));
    double *pt = malloc((n + 1) * sizeof(double));

    if (ps == NULL || ps2 == NULL || pt == NULL) {
        free(ps);
        free(ps2);
        free(pt);
        return -1;
    }
    ps[0] = ps2[0] = pt[0] = 0;
    for (size_t i = 0; i < n; i++) {
        ps[i + 1] = ps[i] + x[i];
        ps2[i + 1] = ps2[i] + x[i] * x[i];
        pt[i + 1] = pt[i] + (double)i * x[i];
    }

    for (size_t k = 0; k < m; k++) {
        size_t a = k ? cp[k - 1] : 0, b = cp[k], c = k + 1 < m ? cp[k + 1] : n;
        struct cp_point *p = &pts[k];
        p->index = p->cp = p->end = b;
        p->before = seg_mean(x, a, b);
        p->after = seg_mean(x, b, c);
        p->change = p->before != 0 ? (p->after - p->before) / fabs(p->before) : NAN;
        p->kind = CP_STEP;
        p->role = "level";
    }
    for (size_t k = 0; k < m; k++) {
        size_t b = cp[k], c = k + 1 < m ? cp[k + 1] : n, e = k + 2 < m ? cp[k + 2] : n;
        size_t a = k ? cp[k - 1] : 0, rs = b, re = b;
        double jump = pts[k].after - pts[k].before;
        if (pts[k].kind != CP_STEP)
            continue;
        if (k + 1 < m && c - b <= spike_max &&
            fabs(seg_mean(x, c, e) - pts[k].before) <= 0.5 * fabs(jump)) {
            pts[k].kind = pts[k + 1].kind = CP_SPIKE;
            pts[k].role = "onset";
            pts[k + 1].role = "recovery";
            continue;
        }
        if (k == 0 && b <= spike_max && b < c - b) {
            /* the series starts high or low for a moment: a cold start (or warm-up)
             * whose onset is before the data, so only its recovery is seen */
            pts[k].kind = CP_SPIKE;
            pts[k].role = "recovery";
            continue;
        }
        if (k > 0 && pts[k - 1].kind == CP_RAMP && pts[k - 1].end > a && pts[k - 1].end + 8 >= b &&
            pts[k - 1].end <= b + 8) {
            /* where the ramp before this point stops (a linear cost's second
             * change point of a flat-ramp-flat transition) */
            pts[k].kind = CP_RAMP;
            pts[k].role = "end";
            continue;
        }
        if (ramp_fit(ps, ps2, pt, a, b, sloped(x, b, c, jump) ? e : c, &rs, &re)) {
            pts[k].kind = CP_RAMP;
            pts[k].role = "onset";
            pts[k].index = rs;
            pts[k].end = re;
        } else if (sloped(x, b, c, jump)) {
            pts[k].kind = CP_RAMP;
            pts[k].role = "onset";
        } else if (sloped(x, a, b, jump) || (k > 0 && pts[k - 1].kind == CP_RAMP && b - a <= 8 &&
                                             jump * (pts[k - 1].after - pts[k - 1].before) > 0)) {
            pts[k].kind = CP_RAMP;
            pts[k].role = c - b > 8 ? "end" : "level";
        } else if (k + 1 < m && c - b <= 8 && jump * (pts[k + 1].after - pts[k + 1].before) > 0) {
            pts[k].kind = CP_RAMP; /* first tread of a staircase */
            pts[k].role = "onset";
        }
    }
    free(ps);
    free(ps2);
    free(pt);
    return 0;
}

/* ---- one series, every detector ------------------------------------------------ */

/* Assess the default detector's points into b; with --min-confidence, drop those
 * below it and assess again (a neighbour's segments grow) until every point holds. */
static int assess(const struct inflect_ctx *ctx, struct inflect_result *r, size_t *m,
                  struct cp_bounds *b)
{
    const struct inflect_series *s = r->s;
    size_t *cp = r->by[ctx->detector];

    for (;;) {
        size_t k = 0;
        if (cp_assess(s->v, s->trials, s->n, &ctx->cp, (enum cp_cost)r->info.cost, cp, *m, b) < 0)
            return -1;
        for (size_t j = 0; j < *m; j++)
            if (!(b[j].confidence < ctx->min_confidence))
                cp[k++] = cp[j];
        if (k == *m)
            return 0;
        *m = k;
    }
}

int inflect_analyse(const struct inflect_ctx *ctx, struct inflect_result *r)
{
    const struct inflect_series *s = r->s;
    size_t cap = s->n < INFLECT_MAX_CPS ? s->n + 1 : INFLECT_MAX_CPS;
    int def = ctx->detector;
    struct cp_bounds *b = NULL;
    int rc = -1;

    for (int d = 0; d < CP_NDETECTORS; d++) {
        long m;
        r->by[d] = malloc(cap * sizeof(size_t));
        if (r->by[d] == NULL)
            return -1;
        m = cp_detect((enum cp_detector)d, s->v, s->trials, s->n, &ctx->cp, r->by[d], cap,
                      d == def ? &r->info : NULL);
        if (m < 0)
            return -1;
        r->nby[d] = (size_t)m;
    }
    b = malloc((r->nby[def] ? r->nby[def] : 1) * sizeof(*b));
    if (b == NULL || assess(ctx, r, &r->nby[def], b) < 0)
        goto out;
    r->npts = r->nby[def];
    r->pts = calloc(r->npts ? r->npts : 1, sizeof(*r->pts));
    if (r->pts == NULL || classify_points(s->v, s->n, r->by[def], r->npts, r->pts) < 0)
        goto out;
    for (size_t k = 0; k < r->npts; k++) {
        struct cp_point *p = &r->pts[k];
        p->confidence = b[k].confidence;
        /* a ramp's index moved to where it starts: the interval covers the ramp */
        p->lo = b[k].lo < p->index ? b[k].lo : p->index;
        p->hi = b[k].hi > p->index ? b[k].hi : p->index;
    }
    rc = 0;
out:
    free(b);
    return rc;
}

void inflect_result_free(struct inflect_result *r)
{
    for (int d = 0; d < CP_NDETECTORS; d++)
        free(r->by[d]);
    free(r->pts);
    memset(r, 0, sizeof(*r));
}

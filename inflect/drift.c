/* drift.c - sampling-rate drift: Wilson intervals, Bernoulli CUSUM, re-weighting.
 *
 * References: Wilson (1927) score interval; Reynolds & Stoumbos (1999), "A CUSUM
 * chart for monitoring a proportion when inspecting continuously" (Bernoulli
 * CUSUM, the repeated form of Wald's SPRT); Horvitz & Thompson (1952);
 * OpenTelemetry "TraceState: Probability Sampling" (ot=th: rejection threshold).
 *
 * Chart increment for one window with n trials, k kept, in-control rate r0 and
 * out-of-control rate r1:   k ln(r1/r0) + (n - k) ln((1 - r1)/(1 - r0))
 * S = max(0, S + increment); alarm when S > h.  h is the (1 - alpha) quantile of
 * max S over `sims` simulated in-control runs with the same n and r0 per window.
 */
#include "drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void drift_defaults(struct drift_opts *o)
{
    o->z = 1.96;
    o->shift = 2.0;
    o->sims = 1000;
    o->alpha = 0.001;
    o->seed = 0x5eed5eed5eedULL;
}

void drift_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
    double nn = (double)n, p, den, mid, half;

    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    p = (double)k / nn;
    den = 1 + z * z / nn;
    mid = (p + z * z / (2 * nn)) / den;
    half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
    *lo = fmax(0, mid - half);
    *hi = fmin(1, mid + half);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
}

uint64_t drift_binomial(uint64_t *rng, uint64_t n, double p)
{
    double q, f, u, mean;
    uint64_t k = 0;

    if (n == 0 || p <= 0)
        return 0;
    if (p >= 1)
        return n;
    if (p > 0.5)
        return n - drift_binomial(rng, n, 1 - p);
    mean = (double)n * p;
    if (mean > 40) {
        double g = sqrt(-2 * log(unif(rng))) * cos(6.283185307179586 * unif(rng));
        double x = floor(mean + sqrt(mean * (1 - p)) * g + 0.5);
        return x < 0 ? 0 : x > (double)n ? n : (uint64_t)x;
    }
    q = p / (1 - p);
    f = exp((double)n * log1p(-p));
    u = unif(rng);
    while (u > f && k < n) {
        u -= f;
        f *= q * (double)(n - k) / (double)(k + 1);
        k++;
    }
    return k;
}

/* Clamp a rate away from 0 and 1 so the log-likelihood ratios stay finite. */
static double clamp_rate(double r)
{
    return r < 1e-9 ? 1e-9 : r > 1 - 1e-9 ? 1 - 1e-9 : r;
}

static double llr(uint64_t k, uint64_t n, double r0, double r1)
{
    return (double)k * log(r1 / r0) + (double)(n - k) * log((1 - r1) / (1 - r0));
}

static double up_rate(double r0, double shift)
{
    return clamp_rate(fmin(r0 * shift, (1 + r0) / 2));
}

/* max S of both charts over one simulated in-control run. */
static void simulate(const uint64_t *trials, const double *pi, size_t nwin, double shift,
                     uint64_t *rng, double *mu, double *md)
{
    double su = 0, sd = 0;

    *mu = *md = 0;
    for (size_t w = 0; w < nwin; w++) {
        double r0;
        uint64_t k;
        if (trials[w] == 0 || !isfinite(pi[w]))
            continue;
        r0 = clamp_rate(pi[w]);
        k = drift_binomial(rng, trials[w], pi[w]);
        su = fmax(0, su + llr(k, trials[w], r0, up_rate(r0, shift)));
        sd = fmax(0, sd + llr(k, trials[w], r0, clamp_rate(r0 / shift)));
        *mu = fmax(*mu, su);
        *md = fmax(*md, sd);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int thresholds(const uint64_t *trials, const double *pi, size_t nwin,
                      const struct drift_opts *o, double *hu, double *hd)
{
    int m = o->sims > 0 ? o->sims : 1;
    double *u = malloc((size_t)m * sizeof(*u)), *d = malloc((size_t)m * sizeof(*d));
    uint64_t rng = o->seed;
    size_t q;

    if (u == NULL || d == NULL) {
        free(u);
        free(d);
        return -1;
    }
    for (int i = 0; i < m; i++)
        simulate(trials, pi, nwin, o->shift, &rng, &u[i], &d[i]);
    qsort(u, (size_t)m, sizeof(*u), cmp_d);
    qsort(d, (size_t)m, sizeof(*d), cmp_d);
    q = (size_t)ceil((1 - o->alpha) * m);
    q = q == 0 ? 0 : q > (size_t)m ? (size_t)m - 1 : q - 1;
    /* a floor of ln 20 keeps a chart from alarming on a single odd window */
    *hu = fmax(u[q], log(20.0));
    *hd = fmax(d[q], log(20.0));
    free(u);
    free(d);
    return 0;
}

/* Run both charts on the data; record the first alarm and its onset. */
static void charts(const uint64_t *trials, const uint64_t *kept, const double *pi, size_t nwin,
                   const struct drift_opts *o, struct drift_result *r)
{
    double su = 0, sd = 0;
    size_t zu = 0, zd = 0;

    for (size_t w = 0; w < nwin && !r->alarm; w++) {
        double r0;
        if (trials[w] == 0 || !isfinite(pi[w]))
            continue;
        r0 = clamp_rate(pi[w]);
        su = fmax(0, su + llr(kept[w], trials[w], r0, up_rate(r0, o->shift)));
        sd = fmax(0, sd + llr(kept[w], trials[w], r0, clamp_rate(r0 / o->shift)));
        if (su == 0)
            zu = w + 1;
        if (sd == 0)
            zd = w + 1;
        if (su > r->h_up || sd > r->h_dn) {
            r->alarm = 1;
            r->direction = su > r->h_up ? 1 : -1;
            r->alarm_win = w;
            r->onset_win = su > r->h_up ? zu : zd;
        }
    }
}

/* Mean of a/b over windows [from, to) with b > 0. */
static double ratio_mean(const uint64_t *a, const uint64_t *b, size_t from, size_t to)
{
    uint64_t sa = 0, sb = 0;
    for (size_t w = from; w < to; w++) {
        sa += a[w];
        sb += b[w];
    }
    return sb ? (double)sa / (double)sb : NAN;
}

int drift_analyse(const uint64_t *trials, const uint64_t *kept, const double *pi,
                  const uint64_t *spans, const uint64_t *traces, size_t nwin,
                  const struct drift_opts *o, struct drift_result *r)
{
    double pisum = 0;
    size_t npi = 0, split;

    memset(r, 0, sizeof(*r));
    r->nwin = nwin;
    r->share = malloc((nwin ? nwin : 1) * sizeof(double));
    r->lo = malloc((nwin ? nwin : 1) * sizeof(double));
    r->hi = malloc((nwin ? nwin : 1) * sizeof(double));
    r->expect = malloc((nwin ? nwin : 1) * sizeof(double));
    if (!r->share || !r->lo || !r->hi || !r->expect)
        return -1;
    for (size_t w = 0; w < nwin; w++) {
        r->share[w] = trials[w] ? (double)kept[w] / (double)trials[w] : NAN;
        drift_wilson(kept[w], trials[w], o->z, &r->lo[w], &r->hi[w]);
        r->expect[w] = pi[w];
        r->trials += trials[w];
        r->kept += kept[w];
        if (isfinite(pi[w]) && trials[w]) {
            r->tested = 1;
            r->outside += pi[w] < r->lo[w] || pi[w] > r->hi[w];
            r->est_traces += (double)kept[w] / clamp_rate(pi[w]);
            pisum += pi[w];
            npi++;
        }
    }
    r->h_up = r->h_dn = INFINITY;
    if (r->tested) {
        double pm = clamp_rate(pisum / (double)npi);
        if (thresholds(trials, pi, nwin, o, &r->h_up, &r->h_dn) < 0)
            return -1;
        charts(trials, kept, pi, nwin, o, r);
        r->rel_se = r->est_traces > 0 ? sqrt((1 - pm) / (r->est_traces * pm)) : NAN;
    }
    split = r->alarm ? r->onset_win : nwin;
    r->rate_before = ratio_mean(kept, trials, 0, split);
    r->rate_after = r->alarm ? ratio_mean(kept, trials, split, nwin) : NAN;
    r->amp_before = spans && traces ? ratio_mean(spans, traces, 0, split) : NAN;
    r->amp_after = spans && traces && r->alarm ? ratio_mean(spans, traces, split, nwin) : NAN;
    return 0;
}

void drift_result_free(struct drift_result *r)
{
    free(r->share);
    free(r->lo);
    free(r->hi);
    free(r->expect);
    memset(r, 0, sizeof(*r));
}

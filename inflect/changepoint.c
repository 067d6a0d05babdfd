/* changepoint.c - PELT, binary segmentation, CUSUM and the design notes' baseline;
 * the confidence and location interval of a change point.
 *
 * References: Killick, Fearnhead & Eckley, "Optimal detection of changepoints with
 * a linear computational cost" (JASA 2012) for PELT; Zhang & Siegmund (2007) for
 * the MBIC penalty 3 ln n; Page (1954) for CUSUM; Chakar, Lebarbier, Lévy-Leduc &
 * Robin, "A robust approach for estimating change-points in the mean of an AR(1)
 * process" (Bernoulli 2017) for why autocorrelated noise needs a larger penalty;
 * van den Burg & Williams (2020, TCPD) for the evaluation protocol.
 *
 * The default detector (CP_PELT), and why each setting is what it is:
 *
 *   costs     -2 log-likelihood of a segment (see "segment costs" below) under a
 *             normal mean, a normal mean+variance, a linear trend (normal residuals)
 *             and, when asked for, a Poisson model, each O(1) from prefix sums, so PELT
 *             runs in (near) linear time.  Every applicable cost is fitted and the
 *             one with the smallest penalised likelihood is kept (select_cost): a
 *             latency step picks the mean, a burst of jitter the mean+variance, a
 *             drifting series the line.  A rate given with its trials (an error
 *             rate of n spans a window) is a binomial count and gets the binomial
 *             cost alone: its variance follows p (1 - p) / n, so a lone error
 *             among ten spans is chance, and the confidence of a one-window
 *             segment is what its count can show.
 *   scale     the residual variance sigma^2 (binomial: the dispersion phi >= 1 of
 *             the Pearson residuals) and lag-1 autocorrelation rho of the
 *             current segmentation, re-estimated until the segmentation repeats
 *             (from the global variance: an upper bound, never too small).  Costs
 *             are divided by the long-run factor (1 + rho) / (1 - rho): real series
 *             have autocorrelated noise, and a mean estimated from AR(1) data varies
 *             that many times more than from independent data (Chakar et al. 2017).
 *             rho is clamped to [0, 0.99] so that a near-unit-root series still has
 *             a finite scale.
 *   penalty   BIC: ln n per parameter (pen_mult 2 / 2), 2 ln n for a change of the
 *             mean, 3 ln n for one of mean and variance or of a line.
 *   min_seg   1 (mean: the variance is the noise's, so one window is a segment and
 *             a one-window cold start is found where it ends), 3 (line), 4 (mean and
 *             variance: a variance from fewer points is mostly luck).
 *
 * The cost family, the penalty multiplier and the rho cap were chosen by
 * leave-one-out cross-validation over 13 TCPD series (scripts/bench-inflect.sh):
 * cross-validated F1 0.805, cover 0.774 (in-sample 0.817 / 0.777); 12 of the 13 folds
 * chose this setting.  The binomial cost has no setting of its own (the same penalty
 * and rho cap) and TCPD has no rates with trials, so it leaves that score as it was;
 * it is tested on sparse error rates in tests/inflect/test_scenarios.c.
 */
#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[CP_NDETECTORS] = {"pelt", "pelt_mbic", "binseg", "cusum",
                                                 "baseline"};
static const char *const cost_names[CP_NCOSTS] = {"auto",   "mean",    "meanvar",
                                                  "linear", "poisson", "binomial"};

#define CP_TWO_PI 6.283185307179586
#define CP_MBIC   3.0 /* pelt_mbic: the plain MBIC penalty 3 ln n (Zhang & Siegmund) */

const char *cp_detector_name(enum cp_detector d)
{
    return (unsigned)d < CP_NDETECTORS ? names[d] : "?";
}

int cp_detector_by_name(const char *name)
{
    for (int d = 0; d < CP_NDETECTORS; d++)
        if (strcmp(names[d], name) == 0)
            return d;
    return -1;
}

const char *cp_cost_name(enum cp_cost c)
{
    return (unsigned)c < CP_NCOSTS ? cost_names[c] : "?";
}

int cp_cost_by_name(const char *name)
{
    for (int c = 0; c < CP_NCOSTS; c++)
        if (strcmp(cost_names[c], name) == 0)
            return c;
    return -1;
}

void cp_defaults(struct cp_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->cost = CP_COST_AUTO;
    o->pen_mult = 2.0;
    o->min_seg = 1;
    o->rho_max = 0.99;
    o->max_iter = 8;
    o->cusum_k = 0.5;
    o->cusum_h = 5.0;
    o->base_window = 60;
    o->base_fit = 15;
    o->base_slope = 0.1;
    o->base_rise = 1.0;
    o->base_run = 3;
    o->base_z = 2.5;
    o->base_abs = 0;
}

void cp_standardise(const double *x, size_t n, double *z)
{
    double m = 0, v = 0, sd;

    for (size_t i = 0; i < n; i++)
        m += x[i];
    m = n ? m / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    sd = n ? sqrt(v / (double)n) : 0;
    for (size_t i = 0; i < n; i++)
        z[i] = sd > 0 ? (x[i] - m) / sd : 0;
}

/* ---- segment costs ---------------------------------------------------------------
 *
 * Every cost is -2 log-likelihood of one segment under its model, up to terms that
 * do not depend on the segmentation, divided by the long-run variance factor f (an
 * AR(1) series of n points carries the information of n (1 - rho) / (1 + rho)
 * independent ones), so a cost difference is a likelihood-ratio statistic and the
 * penalty is in the same units.  From prefix sums: each segment cost is O(1).
 *
 *   mean     sum (x - mean)^2 / (sigma^2 f)          (normal, known variance)
 *   meanvar  L ln max(var, floor) / f                 (normal, mean and variance)
 *   poisson  -2 (S ln(S / L) - S) / f                 (counts)
 *   binomial -2 (K ln p + (N - K) ln(1 - p)) / (phi f), p = K / N
 *                                  (proportions: K = sum x w successes of N = sum w
 *                                   trials; phi the dispersion, at least 1)
 *
 * A rate of k errors in n spans is a binomial count, not a normal value: its
 * variance p (1 - p) / n follows the level and the window's spans, so one error in
 * ten spans of a 0.3 % series is what chance gives (a gain of about 5 against a
 * penalty of 2 ln n per change), where a normal cost with the variance of zeros
 * would call it a certain jump.
 */
struct cost {
    enum cp_cost kind;
    double *s, *s2, *st; /* prefix sums of x, x^2 and i x (n + 1 each); binomial: of x w */
    double *sn;          /* binomial: prefix sums of the trials w, else NULL */
    const double *w;     /* binomial: the trials per observation */
    double scale;        /* mean, binomial: sigma^2 (phi) f; meanvar, poisson: f */
    double vfloor;       /* meanvar: smallest segment variance */
};

static void cost_free(struct cost *c)
{
    free(c->s);
    free(c->s2);
    free(c->st);
    free(c->sn);
}

/* The prefix sums of z[0..n) for cost kind; w (the trials) only for binomial. */
static int cost_make(struct cost *c, enum cp_cost kind, const double *z, const double *w, size_t n)
{
    c->kind = kind;
    c->scale = 1;
    c->vfloor = 0;
    c->w = kind == CP_COST_BINOMIAL ? w : NULL;
    c->sn = NULL;
    c->s = malloc((n + 1) * sizeof(double));
    c->s2 = malloc((n + 1) * sizeof(double));
    c->st = malloc((n + 1) * sizeof(double));
    if (c->w)
        c->sn = malloc((n + 1) * sizeof(double));
    if (c->s == NULL || c->s2 == NULL || c->st == NULL || (c->w && c->sn == NULL)) {
        cost_free(c);
        return -1;
    }
    c->s[0] = c->s2[0] = c->st[0] = 0;
    if (c->sn)
        c->sn[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double v = c->w ? z[i] * c->w[i] : z[i];
        c->s[i + 1] = c->s[i] + v;
        c->s2[i + 1] = c->s2[i] + v * v;
        c->st[i + 1] = c->st[i] + (double)i * v;
        if (c->sn)
            c->sn[i + 1] = c->sn[i] + c->w[i];
    }
    return 0;
}

/* -2 log-likelihood of K successes in N trials at p = K / N (0 ln 0 = 0). */
static double binom_nll(double K, double N)
{
    double v = 0;

    K = K < 0 ? 0 : K > N ? N : K; /* rounding of the prefix sums */
    if (K > 0)
        v -= K * log(K / N);
    if (N - K > 0)
        v -= (N - K) * log((N - K) / N);
    return 2 * v;
}

/* Squared error of z[a..b) about its mean. */
static double sse(const struct cost *c, size_t a, size_t b)
{
    double sx = c->s[b] - c->s[a], v = c->s2[b] - c->s2[a] - sx * sx / (double)(b - a);
    return v > 0 ? v : 0;
}

/* Squared error of z[a..b) about its least-squares line. */
static double sse_line(const struct cost *c, size_t a, size_t b)
{
    double L = (double)(b - a), sx = c->s[b] - c->s[a], tm = ((double)a + (double)b - 1) / 2;
    double ctt = L * (L * L - 1) / 12, ctx = c->st[b] - c->st[a] - tm * sx;
    double v = sse(c, a, b) - (ctt > 0 ? ctx * ctx / ctt : 0);
    return v > 0 ? v : 0;
}

static double seg_cost(const struct cost *c, size_t a, size_t b)
{
    double L = (double)(b - a), S;

    switch (c->kind) {
    case CP_COST_MEANVAR:
        return L * log(fmax(sse(c, a, b) / L, c->vfloor)) / c->scale;
    case CP_COST_LINEAR:
        return sse_line(c, a, b) / c->scale;
    case CP_COST_POISSON:
        S = c->s[b] - c->s[a];
        return S > 0 ? -2 * (S * log(S / L) - S) / c->scale : 0;
    case CP_COST_BINOMIAL:
        return binom_nll(c->s[b] - c->s[a], c->sn[b] - c->sn[a]) / c->scale;
    default:
        return sse(c, a, b) / c->scale;
    }
}

/* Parameters a change adds: its location and the new segment's mean (and variance). */
static double cost_params(enum cp_cost kind)
{
    return kind == CP_COST_MEANVAR || kind == CP_COST_LINEAR ? 3 : 2;
}

/* Walk back-pointers into ascending change points. */
static long backtrack(const size_t *last, size_t n, size_t *out, size_t cap)
{
    size_t m = 0, t = n;

    while (t > 0 && last[t] > 0) {
        t = last[t];
        m++;
    }
    if (m > cap)
        m = cap;
    t = n;
    for (size_t k = m; k > 0; k--) {
        t = last[t];
        out[k - 1] = t;
    }
    return (long)m;
}

/* PELT over any cost: F(t) = min_s F(s) + C(s, t) + pen, pruned (Killick et al.). */
static long pelt(const struct cost *c, size_t n, double pen, size_t min_seg, size_t *out,
                 size_t cap)
{
    double *f;
    size_t *last, *r, nr = 0;
    long m = 0;

    if (min_seg < 1)
        min_seg = 1;
    if (n < 2 * min_seg)
        return 0;
    f = malloc((n + 1) * sizeof(*f));
    last = calloc(n + 1, sizeof(*last));
    r = malloc((n + 1) * sizeof(*r));
    if (f == NULL || last == NULL || r == NULL) {
        m = -1;
        goto out;
    }
    f[0] = -pen;
    r[nr++] = 0;
    for (size_t t = min_seg; t <= n; t++) {
        double best = INFINITY;
        size_t bs = 0, k = 0;
        for (size_t j = 0; j < nr; j++) {
            size_t s = r[j];
            if (t - s >= min_seg) {
                double v = f[s] + seg_cost(c, s, t) + pen;
                if (v < best) {
                    best = v;
                    bs = s;
                }
            }
        }
        f[t] = best;
        last[t] = bs;
        /* prune: s can never be optimal again once F(s) + C(s,t) > F(t) */
        for (size_t j = 0; j < nr; j++) {
            size_t s = r[j];
            if (t - s < min_seg || f[s] + seg_cost(c, s, t) <= best)
                r[k++] = s;
        }
        nr = k;
        if (t + 1 >= 2 * min_seg && t + 1 - min_seg >= min_seg)
            r[nr++] = t + 1 - min_seg;
    }
    m = backtrack(last, n, out, cap);
out:
    free(f);
    free(last);
    free(r);
    return m;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Binary segmentation over any cost: split while the best gain exceeds pen. */
static long binseg(const struct cost *c, size_t n, double pen, size_t min_seg, size_t *out,
                   size_t cap)
{
    size_t(*stack)[2], sp = 0, m = 0;

    if (min_seg < 1)
        min_seg = 1;
    if (n < 2 * min_seg)
        return 0;
    stack = malloc((n + 1) * sizeof(*stack));
    if (stack == NULL)
        return -1;
    stack[sp][0] = 0;
    stack[sp++][1] = n;
    while (sp > 0 && m < cap) {
        size_t a = stack[--sp][0], b = stack[sp][1], bt = 0;
        double whole = seg_cost(c, a, b), best = 0;
        for (size_t t = a + min_seg; t + min_seg <= b; t++) {
            double gain = whole - seg_cost(c, a, t) - seg_cost(c, t, b);
            if (gain > best) {
                best = gain;
                bt = t;
            }
        }
        if (bt == 0 || best <= pen)
            continue;
        out[m++] = bt;
        stack[sp][0] = a;
        stack[sp++][1] = bt;
        stack[sp][0] = bt;
        stack[sp++][1] = b;
    }
    qsort(out, m, sizeof(*out), cmp_size);
    free(stack);
    return (long)m;
}

/* A search (pelt or binseg) with the normal-mean cost on z: the public entry points. */
static long on_mean(long (*search)(const struct cost *, size_t, double, size_t, size_t *, size_t),
                    const double *z, size_t n, double pen, size_t min_seg, size_t *out, size_t cap)
{
    struct cost c;
    long m;

    if (n < 2 * (min_seg ? min_seg : 1))
        return 0;
    if (cost_make(&c, CP_COST_MEAN, z, NULL, n) < 0)
        return -1;
    m = search(&c, n, pen, min_seg, out, cap);
    cost_free(&c);
    return m;
}

long cp_pelt(const double *z, size_t n, double pen, size_t min_seg, size_t *out, size_t cap)
{
    return on_mean(pelt, z, n, pen, min_seg, out, cap);
}

long cp_binseg(const double *z, size_t n, double pen, size_t min_seg, size_t *out, size_t cap)
{
    return on_mean(binseg, z, n, pen, min_seg, out, cap);
}

/* Residual variance and lag-1 autocorrelation within the segments, about each
 * segment's mean (line = 0) or least-squares line (line = 1). */
static void resid_stats(const double *z, size_t n, const size_t *cp, size_t m, int line, double *s2,
                        double *rho)
{
    double ss = 0, num = 0;
    size_t a = 0;

    for (size_t k = 0; k <= m; k++) {
        size_t b = k < m ? cp[k] : n;
        double L = (double)(b - a), mu = 0, tm = (L - 1) / 2, stx = 0, beta = 0, prev = 0;
        for (size_t i = a; i < b; i++)
            mu += z[i];
        mu /= L;
        if (line && L > 2) {
            for (size_t i = a; i < b; i++)
                stx += ((double)(i - a) - tm) * (z[i] - mu);
            beta = stx / (L * (L * L - 1) / 12);
        }
        for (size_t i = a; i < b; i++) {
            double r = z[i] - mu - beta * ((double)(i - a) - tm);
            ss += r * r;
            if (i > a)
                num += r * prev;
            prev = r;
        }
        a = b;
    }
    *s2 = n ? ss / (double)n : 0;
    *rho = ss > 0 ? num / ss : 0;
}

/* The binomial segmentation's Pearson residuals r = (x w - w p) / sqrt(w p (1 - p)),
 * p the segment's K / N: the dispersion phi = sum r^2 / (n - segments), at least 1
 * (independent trials vary at least as the binomial says; errors that come in
 * bursts vary more, and phi > 1 keeps each burst from being a change), and their
 * lag-1 autocorrelation within the segments.  A segment fitted exactly (a lone
 * window) has no residual and no degree of freedom, so it cannot shrink phi. */
static void binom_stats(const struct cost *c, const double *x, size_t n, const size_t *cp, size_t m,
                        double *phi, double *rho)
{
    double ss = 0, num = 0;
    size_t a = 0;

    for (size_t k = 0; k <= m; k++) {
        size_t b = k < m ? cp[k] : n;
        double N = c->sn[b] - c->sn[a], p = N > 0 ? (c->s[b] - c->s[a]) / N : 0, prev = 0;
        for (size_t i = a; i < b; i++) {
            double v = c->w[i] * p * (1 - p), r = v > 0 ? c->w[i] * (x[i] - p) / sqrt(v) : 0;
            ss += r * r;
            if (i > a)
                num += r * prev;
            prev = r;
        }
        a = b;
    }
    *phi = n > m + 1 ? ss / (double)(n - m - 1) : 1;
    if (!(*phi >= 1))
        *phi = 1;
    *rho = ss > 0 ? num / ss : 0;
}

/* Set the cost's scale from the residuals of segmentation cp[0..m) of z: sigma^2
 * (binomial: phi) and rho (clamped to [0, rho_max]); info gets them. */
static void cost_fit(struct cost *c, const double *z, size_t n, const size_t *cp, size_t m,
                     const struct cp_opts *o, struct cp_info *info)
{
    double s2, rho, f;

    if (c->kind == CP_COST_BINOMIAL)
        binom_stats(c, z, n, cp, m, &s2, &rho);
    else
        resid_stats(z, n, cp, m, c->kind == CP_COST_LINEAR, &s2, &rho);

    rho = rho < 0 ? 0 : rho > o->rho_max ? o->rho_max : rho;
    f = (1 + rho) / (1 - rho);
    c->scale = c->kind == CP_COST_MEAN || c->kind == CP_COST_LINEAR || c->kind == CP_COST_BINOMIAL
                   ? s2 * f
                   : f;
    if (!(c->scale > 1e-9))
        c->scale = 1e-9; /* a perfect fit: keep a finite cost */
    info->sigma2 = s2;
    info->rho = rho;
}

static size_t cost_min_seg(enum cp_cost kind, const struct cp_opts *o)
{
    /* a variance from fewer than 4 points is mostly luck; a line needs 3 */
    size_t least = kind == CP_COST_MEANVAR ? 4 : kind == CP_COST_LINEAR ? 3 : 1;
    return o->min_seg > least ? o->min_seg : least;
}

/* PELT or binary segmentation with one cost, its scale re-estimated from the
 * residuals until the segmentation repeats (see top), starting from the global
 * variance, or from the residuals of segmentation init[0..ninit) when init is not
 * NULL.  Returns count or -1. */
static long fit_cost(int use_binseg, enum cp_cost kind, const double *z, const double *w, size_t n,
                     const struct cp_opts *o, const size_t *init, long ninit, size_t *out,
                     size_t cap, struct cp_info *info)
{
    double pen = o->pen_mult * cost_params(kind) / 2 * log((double)n);
    size_t *prev = malloc((cap ? cap : 1) * sizeof(*prev)), ms = cost_min_seg(kind, o);
    struct cost c;
    long m = 0, pm = -1;
    double old;
    int it;

    if (prev == NULL || cost_make(&c, kind, z, w, n) < 0) {
        free(prev);
        return -1;
    }
    /* the floor keeps a constant run from having -inf cost: 1e-4 of the variance */
    c.vfloor = 1e-4 * fmax(sse(&c, 0, n) / (double)n, 1e-300);
    memset(info, 0, sizeof(*info));
    info->sigma2 = 1;
    if (init)
        cost_fit(&c, z, n, init, (size_t)ninit, o, info); /* warm start */
    else if (kind == CP_COST_BINOMIAL) {
        /* as the normal costs start from the global variance and rho 0: the dispersion
           about one level (never too small), no autocorrelation yet (a step would
           look like rho near 1 and hide itself) */
        cost_fit(&c, z, n, NULL, 0, o, info);
        c.scale = info->sigma2;
        info->rho = 0;
    }
    for (it = 0; it < (o->max_iter > 0 ? o->max_iter : 1); it++) {
        m = use_binseg ? binseg(&c, n, pen, ms, out, cap) : pelt(&c, n, pen, ms, out, cap);
        if (m < 0 || (m == pm && memcmp(out, prev, (size_t)m * sizeof(*out)) == 0))
            break;
        memcpy(prev, out, (size_t)m * sizeof(*out));
        pm = m;
        old = c.scale;
        cost_fit(&c, z, n, out, (size_t)m, o, info);
        /* the number of changes never grows with the penalty, and a larger scale
         * is a larger penalty: no change stays no change (saves a quadratic pass) */
        if (m == 0 && c.scale >= old)
            break;
    }
    info->cost = kind;
    info->penalty = pen;
    info->iterations = it + 1;
    cost_free(&c);
    free(prev);
    return m;
}

/* Two-sided self-starting CUSUM on the standardised series: the reference is the
 * running mean of the current regime; an alarm reports the onset (the point after
 * the alarming statistic last left zero) and restarts the regime there. */
static long cusum(const double *z, size_t n, const struct cp_opts *o, size_t *out, size_t cap)
{
    size_t m = 0, start = 0, up0 = 0, dn0 = 0;
    double sum = 0, up = 0, dn = 0;

    for (size_t i = 0; i < n && m < cap; i++) {
        size_t len = i - start;
        if (len >= 5) {
            double mu = sum / (double)len;
            up = fmax(0, up + z[i] - mu - o->cusum_k);
            dn = fmax(0, dn + mu - z[i] - o->cusum_k);
            if (up == 0)
                up0 = i + 1;
            if (dn == 0)
                dn0 = i + 1;
            if (up > o->cusum_h || dn > o->cusum_h) {
                size_t onset = up > o->cusum_h ? up0 : dn0;
                if (onset <= start)
                    onset = start + 1;
                if (onset > 0 && onset < n && (m == 0 || onset > out[m - 1]))
                    out[m++] = onset;
                start = onset;
                sum = 0;
                for (size_t j = onset; j <= i; j++)
                    sum += z[j];
                up = dn = 0;
                up0 = dn0 = i + 1;
                continue;
            }
        } else {
            up0 = dn0 = i + 1;
        }
        sum += z[i];
    }
    return (long)m;
}

/* OLS slope of y[0..k) against 0..k-1. */
static double slope(const double *y, size_t k)
{
    double mx = (double)(k - 1) / 2, my = 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < k; i++)
        my += y[i];
    my /= (double)k;
    for (size_t i = 0; i < k; i++) {
        sxy += ((double)i - mx) * (y[i] - my);
        sxx += ((double)i - mx) * ((double)i - mx);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

/* One window of the baseline: is any rule alerting at i?  The rules read z, the
 * series standardised as a whole, so that their thresholds are in standard
 * deviations and no rule depends on the series' unit (the design notes wrote them
 * in ms and per cent of the level, which a series in ns or with an offset turns
 * into "always" or "never"); the absolute ceiling alone reads the raw x. */
static int baseline_alert(const double *x, const double *z, size_t i, const struct cp_opts *o,
                          size_t *run)
{
    size_t w0 = i + 1 > o->base_window ? i + 1 - o->base_window : 0, w = i + 1 - w0;
    double mean = 0, var = 0;
    int alert = 0;

    if (w >= 2 * o->base_fit && o->base_fit >= 2 &&
        fabs(slope(z + i + 1 - o->base_fit, o->base_fit) - slope(z + w0, o->base_fit)) >
            o->base_slope)
        alert = 1;
    if (i >= 1) { /* history: the window before i */
        size_t h0 = i > o->base_window ? i - o->base_window : 0, h = i - h0;
        for (size_t j = h0; j < i; j++)
            mean += z[j];
        mean /= (double)h;
        for (size_t j = h0; j < i; j++)
            var += (z[j] - mean) * (z[j] - mean);
        var = h > 1 ? var / (double)(h - 1) : 0;
        *run = z[i] - mean > o->base_rise ? *run + 1 : 0;
        if (*run >= o->base_run)
            alert = 1;
        if (h >= 10 && var > 0 && (z[i] - mean) / sqrt(var) >= o->base_z)
            alert = 1;
    }
    if (o->base_abs > 0 && x[i] > o->base_abs)
        alert = 1;
    return alert;
}

/* The design notes' baseline: alert start times (not change locations). */
static long baseline(const double *x, const double *z, size_t n, const struct cp_opts *o,
                     size_t *out, size_t cap)
{
    size_t m = 0, run = 0;
    int prev = 0;

    for (size_t i = 0; i < n && m < cap; i++) {
        int a = baseline_alert(x, z, i, o, &run);
        if (a && !prev && i > 0)
            out[m++] = i;
        prev = a;
    }
    return (long)m;
}

/* -2 log-likelihood of the whole segmentation under its model, with every term
 * (so that the models can be compared): x is raw for poisson and binomial, else
 * standardised. */
static double model_nll(const struct cost *c, const double *x, size_t n, const size_t *cp, size_t m)
{
    double nll = 0, rss = 0;
    size_t a = 0;

    for (size_t k = 0; k <= m; k++) {
        size_t b = k < m ? cp[k] : n;
        double L = (double)(b - a), S = c->s[b] - c->s[a];
        if (c->kind == CP_COST_MEANVAR)
            nll += L * (log(CP_TWO_PI * fmax(sse(c, a, b) / L, c->vfloor)) + 1);
        else if (c->kind == CP_COST_POISSON)
            nll += S > 0 ? -2 * (S * log(S / L) - S) : 0;
        else if (c->kind == CP_COST_BINOMIAL)
            nll += binom_nll(S, c->sn[b] - c->sn[a]);
        else
            rss += c->kind == CP_COST_LINEAR ? sse_line(c, a, b) : sse(c, a, b);
        a = b;
    }
    if (c->kind == CP_COST_MEAN || c->kind == CP_COST_LINEAR)
        nll = (double)n * (log(CP_TWO_PI * fmax(rss / (double)n, c->vfloor)) + 1);
    if (c->kind == CP_COST_POISSON)
        for (size_t i = 0; i < n; i++)
            nll += 2 * lgamma(x[i] + 1);
    if (c->kind == CP_COST_BINOMIAL) /* the binomial coefficients */
        for (size_t i = 0; i < n; i++)
            nll -= 2 * (lgamma(c->w[i] + 1) - lgamma(x[i] * c->w[i] + 1) -
                        lgamma(c->w[i] - x[i] * c->w[i] + 1));
    return nll;
}

/* Counts: every value a non-negative integer, not all zero. */
static int is_counts(const double *x, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] >= 0) || x[i] != floor(x[i]) || x[i] > 1e15)
            return 0;
        sum += x[i];
    }
    return sum > 0;
}

/* Proportions: w given, every trial count w[i] positive and finite, every x[i] a
 * share in [0, 1]. */
static int is_proportions(const double *x, const double *w, size_t n)
{
    if (w == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(w[i] > 0 && w[i] <= 1e15) || !(x[i] >= 0 && x[i] <= 1))
            return 0;
    return 1;
}

/* Whether cost k is fitted when the caller asked for `only`: auto fits the normal
 * costs (mean, mean+variance, line) on plain values, the binomial alone on
 * proportions with their trials (a normal density on the lattice k / n is no rival
 * for its probability: on a run of zeros it grows without bound); poisson or
 * binomial asked of data they do not fit means mean.
 *
 * Poisson is fitted only when asked for: its variance is its mean, so whether an
 * integer series "is counts" decides nothing about its noise, and the answer would
 * hang on the unit: a GDP series in dollars (integers near 1.6e13) had a change at
 * every index, the same series in billions none.  The normal costs work on the
 * standardised series and their likelihoods differ by the same n ln var, so the
 * auto default gives the same change points for a x + b (a > 0) as for x. */
static int cost_applies(enum cp_cost only, int k, int counts, int props)
{
    if ((k == CP_COST_POISSON && !counts) || (k == CP_COST_BINOMIAL && !props))
        return 0;
    if (only == CP_COST_AUTO)
        return props ? k == CP_COST_BINOMIAL : k != CP_COST_POISSON;
    return k == (int)only || (k == CP_COST_MEAN && ((only == CP_COST_POISSON && !counts) ||
                                                    (only == CP_COST_BINOMIAL && !props)));
}

/* One cost's fit for the model selection below. */
struct fit {
    size_t *seg;
    long m; /* -1: not fitted */
    double nll, f;
    struct cp_info info;
};

static int fit_one(int use_binseg, enum cp_cost k, const double *x, const double *z,
                   const double *w, double var, size_t n, const struct cp_opts *o,
                   const struct fit *init, size_t cap, struct fit *fo)
{
    int raw = k == CP_COST_POISSON || k == CP_COST_BINOMIAL;
    const double *d = raw ? x : z;
    struct cost c;

    fo->m = fit_cost(use_binseg, k, d, w, n, o, init ? init->seg : NULL, init ? init->m : 0,
                     fo->seg, cap, &fo->info);
    if (fo->m < 0 || cost_make(&c, k, d, w, n) < 0)
        return -1;
    c.vfloor = 1e-4 * fmax(sse(&c, 0, n) / (double)n, 1e-300);
    /* the normal likelihoods are of z; x = mean + sd z adds n ln var */
    fo->nll = model_nll(&c, d, n, fo->seg, (size_t)fo->m) + (raw ? 0 : (double)n * log(var));
    fo->f = (1 + fo->info.rho) / (1 - fo->info.rho);
    cost_free(&c);
    return 0;
}

/* The default's model selection: fit every applicable cost (normal mean, normal
 * mean+variance, line, Poisson for counts; the binomial alone for proportions,
 * see cost_applies) and keep the one with the smallest
 * penalised -2 log-likelihood, all on the raw data's scale:
 *     nll / f + pen_mult / 2 * ln n * (parameters)
 * where a segmentation with m changes has 2m + 2 parameters (mean: m locations,
 * m + 1 means, one variance), 3m + 2 (mean+variance), 3m + 3 (line) or 2m + 1
 * (Poisson, binomial), and f is the smallest long-run factor of the fits: the residuals of
 * a fit that misses changes look autocorrelated, so the best fit's are the
 * honest estimate of the noise's.  For the same reason every cost is fitted a
 * second time starting from the residuals of that best fit, and the better of
 * its two fixpoints is kept: a fit started from the global variance can stop
 * early, its missed changes inflating the penalty that would find them. */
static long select_cost(int use_binseg, const double *x, const double *z, const double *w,
                        double var, size_t n, const struct cp_opts *o, size_t *out, size_t cap,
                        struct cp_info *info)
{
    static const double base[] = {0, 2, 2, 3, 1, 1}; /* parameters besides those per change */
    enum cp_cost only = (enum cp_cost)o->cost;
    int counts = is_counts(x, n), props = is_proportions(x, w, n);
    struct fit fits[CP_NCOSTS], warm;
    double best = INFINITY, f = INFINITY, lnn = o->pen_mult / 2 * log((double)n);
    long rc = -1;
    int k, kf = -1, kb = -1;

    memset(fits, 0, sizeof(fits));
    memset(&warm, 0, sizeof(warm));
    if ((warm.seg = malloc((cap ? cap : 1) * sizeof(size_t))) == NULL)
        return -1;
    for (k = CP_COST_MEAN; k < CP_NCOSTS; k++) {
        fits[k].m = -1;
        if (!cost_applies(only, k, counts, props))
            continue;
        if ((fits[k].seg = malloc((cap ? cap : 1) * sizeof(size_t))) == NULL ||
            fit_one(use_binseg, (enum cp_cost)k, x, z, w, var, n, o, NULL, cap, &fits[k]) < 0)
            goto out;
        if (fits[k].f < f) {
            f = fits[k].f;
            kf = k;
        }
    }
    for (k = CP_COST_MEAN; k < CP_NCOSTS && kf >= 0; k++) {
        double pk = cost_params((enum cp_cost)k);
        if (fits[k].m < 0)
            continue;
        /* a fit that already found the best fit's segmentation would repeat itself */
        if (k != kf && k != CP_COST_POISSON &&
            !(fits[k].m == fits[kf].m &&
              memcmp(fits[k].seg, fits[kf].seg, (size_t)fits[k].m * sizeof(size_t)) == 0)) {
            if (fit_one(use_binseg, (enum cp_cost)k, x, z, w, var, n, o, &fits[kf], cap, &warm) < 0)
                goto out;
            if (warm.nll / f + lnn * pk * (double)warm.m <
                fits[k].nll / f + lnn * pk * (double)fits[k].m) {
                size_t *t = fits[k].seg;
                fits[k] = warm;
                warm.seg = t;
            }
        }
    }
    for (k = CP_COST_MEAN; k < CP_NCOSTS; k++) {
        double crit;
        if (fits[k].m < 0)
            continue;
        crit = fits[k].nll / f + lnn * (cost_params((enum cp_cost)k) * (double)fits[k].m + base[k]);
        if (crit < best) {
            best = crit;
            kb = k;
        }
    }
    rc = 0;
    if (kb >= 0) {
        rc = fits[kb].m;
        memcpy(out, fits[kb].seg, (size_t)rc * sizeof(*out));
        *info = fits[kb].info;
    }
out:
    for (k = 0; k < CP_NCOSTS; k++)
        free(fits[k].seg);
    free(warm.seg);
    return rc;
}

/* PELT costs O(n^2) on a series without changes (nothing can be pruned), so a
 * series longer than CP_PELT_MAX is segmented on the means of ceil(n / CP_PELT_MAX)
 * consecutive points (proportions: on the pooled successes and trials of each
 * block, binomial counts again), and each change point is then placed exactly:
 * the best single split of its two neighbouring segments within one block either
 * side. */
#define CP_PELT_MAX 5000

static size_t refine(const struct cost *p, size_t a, size_t c, size_t lo, size_t hi)
{
    double whole = seg_cost(p, a, c), best = -1;
    size_t bt = lo;
    for (size_t t = lo; t <= hi; t++) {
        double g = whole - seg_cost(p, a, t) - seg_cost(p, t, c);
        if (t > a && t < c && g > best) {
            best = g;
            bt = t;
        }
    }
    return bt;
}

/* z is standardised, or (w not NULL: proportions, CP_PELT only) the raw shares. */
static long blocked(enum cp_detector d, const double *z, const double *w, size_t n,
                    const struct cp_opts *o, size_t *out, size_t cap, struct cp_info *info)
{
    size_t b = (n + CP_PELT_MAX - 1) / CP_PELT_MAX, nb = (n + b - 1) / b;
    double *zb = malloc(nb * sizeof(*zb)), *wb = w ? malloc(nb * sizeof(*wb)) : NULL;
    enum cp_cost kind = w ? CP_COST_BINOMIAL : CP_COST_MEAN;
    struct cp_info bi;
    struct cost p;
    long m;

    if (zb == NULL || (w && wb == NULL)) {
        free(zb);
        free(wb);
        return -1;
    }
    for (size_t k = 0; k < nb; k++) {
        size_t e = (k + 1) * b < n ? (k + 1) * b : n;
        double tw = 0;
        zb[k] = 0;
        for (size_t i = k * b; i < e; i++) {
            zb[k] += w ? z[i] * w[i] : z[i];
            tw += w ? w[i] : 1;
        }
        zb[k] /= tw;
        if (wb)
            wb[k] = tw;
    }
    if (!w)
        cp_standardise(zb, nb, zb);
    m = d == CP_PELT
            ? fit_cost(0, kind, zb, wb, nb, o, NULL, 0, out, cap, &bi)
            : cp_pelt(zb, nb, CP_MBIC * log((double)nb), o->min_seg > 2 ? o->min_seg : 2, out, cap);
    if (info && d == CP_PELT)
        *info = bi;
    free(zb);
    free(wb);
    if (m <= 0 || cost_make(&p, kind, z, w, n) < 0)
        return m <= 0 ? m : -1;
    for (long k = 0; k < m; k++) {
        size_t a = k ? out[k - 1] : 0, c = k + 1 < m ? out[k + 1] * b : n, t = out[k] * b;
        size_t lo = t > a + b ? t - b : a + 1, hi = t + b < c ? t + b : c - 1;
        out[k] = lo <= hi ? refine(&p, a, c, lo, hi) : t;
    }
    cost_free(&p);
    return m;
}

/* A result that marks three indices or more, and more than one in CP_DENSE_MAX, is a
 * failure of the model (a unit, a trend or a noise it does not describe), not a
 * finding: its mean segment would be shorter than CP_DENSE_MAX observations.  (Two
 * are a spike, which a short series may well have.) */
#define CP_DENSE_MAX 3

static long detect(enum cp_detector d, const double *x, const double *w, size_t n,
                   const struct cp_opts *o, size_t *out, size_t cap, struct cp_info *info)
{
    double *z, m0 = 0, var = 0;
    long m;

    if ((z = malloc(n * sizeof(*z))) == NULL)
        return -1;
    cp_standardise(x, n, z);
    if (d == CP_BASELINE) {
        m = baseline(x, z, n, o, out, cap);
        free(z);
        return m;
    }
    for (size_t i = 0; i < n; i++)
        m0 += x[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        var += (x[i] - m0) * (x[i] - m0) / (double)n;
    if ((d == CP_PELT || d == CP_PELT_MBIC) && n > CP_PELT_MAX) {
        /* proportions stay binomial when the cost is auto or binomial */
        int props = d == CP_PELT && (o->cost == CP_COST_AUTO || o->cost == CP_COST_BINOMIAL) &&
                    is_proportions(x, w, n);
        m = blocked(d, props ? x : z, props ? w : NULL, n, o, out, cap, info);
        free(z);
        return m;
    }
    switch (d) {
    case CP_PELT:
    case CP_BINSEG:
        m = var > 0 ? select_cost(d == CP_BINSEG, x, z, w, var, n, o, out, cap, info) : 0;
        break;
    case CP_PELT_MBIC:
        m = cp_pelt(z, n, CP_MBIC * log((double)n), o->min_seg > 2 ? o->min_seg : 2, out, cap);
        break;
    case CP_CUSUM:
        m = cusum(z, n, o, out, cap);
        break;
    default:
        m = 0;
    }
    free(z);
    return m;
}

long cp_detect(enum cp_detector d, const double *x, const double *w, size_t n,
               const struct cp_opts *o, size_t *out, size_t cap, struct cp_info *info)
{
    struct cp_info tmp;
    long m;

    if (info == NULL)
        info = &tmp;
    memset(info, 0, sizeof(*info));
    info->cost = CP_COST_MEAN; /* what a series too short or constant is assessed with */
    if (n < 2)
        return 0;
    m = detect(d, x, w, n, o, out, cap, info);
    if (m >= 3 && (size_t)m * CP_DENSE_MAX > n) {
        info->rejected = (size_t)m;
        m = 0;
    }
    return m;
}

/* ---- confidence and location interval ------------------------------------------- */

int cp_assess(const double *x, const double *w, size_t n, const struct cp_opts *o,
              enum cp_cost kind, const size_t *cp, size_t m, struct cp_bounds *out)
{
    const double kappa = 2 * log(20.0); /* relative likelihood 1/20 */
    double *z;
    struct cp_info ki;
    struct cost c;
    size_t ms;
    double pen;
    int raw;

    if (m == 0)
        return 0;
    if (kind == CP_COST_AUTO || (kind == CP_COST_BINOMIAL && !is_proportions(x, w, n)))
        kind = CP_COST_MEAN;
    if ((z = malloc(n * sizeof(*z))) == NULL)
        return -1;
    cp_standardise(x, n, z);
    raw = kind == CP_COST_POISSON || kind == CP_COST_BINOMIAL;
    if (cost_make(&c, kind, raw ? x : z, w, n) < 0) {
        free(z);
        return -1;
    }
    c.vfloor = 1e-4 * fmax(sse(&c, 0, n) / (double)n, 1e-300);
    cost_fit(&c, raw ? x : z, n, cp, m, o, &ki);
    pen = o->pen_mult * cost_params(kind) / 2 * log((double)n);
    ms = cost_min_seg(kind, o);
    for (size_t k = 0; k < m; k++) {
        size_t a = k ? cp[k - 1] : 0, b = cp[k], e = k + 1 < m ? cp[k + 1] : n;
        double here = seg_cost(&c, a, b) + seg_cost(&c, b, e);
        double gain = seg_cost(&c, a, e) - here;
        out[k].confidence = 1 / (1 + exp(-(gain - pen) / 2));
        out[k].lo = out[k].hi = b;
        for (size_t t = a + 1; t < e; t++) {
            if (t - a < ms && t < b)
                continue;
            if (e - t < ms && t > b)
                break;
            if (seg_cost(&c, a, t) + seg_cost(&c, t, e) - here <= kappa) {
                if (t < out[k].lo)
                    out[k].lo = t;
                if (t > out[k].hi)
                    out[k].hi = t;
            }
        }
    }
    cost_free(&c);
    free(z);
    return 0;
}

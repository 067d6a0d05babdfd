/* test_changepoint.c - planted steps, spikes and ramps are found at the right window
 * and classified right; detectors agree with hand-checked small cases; rates with
 * their trials are binomial counts. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../inflect/changepoint.h"
#include "../../inflect/classify.h"
#include "tap.h"

static uint64_t rng_state;

static double unif(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif());
}

/* Run the default detector and classify; returns the number of points. */
static size_t detect(const double *x, size_t n, size_t *cp, struct cp_point *pts)
{
    struct cp_opts o;
    long m;

    cp_defaults(&o);
    m = cp_detect(CP_PELT, x, NULL, n, &o, cp, 64, NULL);
    if (m < 0)
        return 0;
    classify_points(x, n, cp, (size_t)m, pts);
    for (long k = 0; k < m; k++)
        printf("#   cp %zu index %zu end %zu kind %s role %s before %.3g after %.3g\n", cp[k],
               pts[k].index, pts[k].end, cp_kind_name(pts[k].kind), pts[k].role, pts[k].before,
               pts[k].after);
    return (size_t)m;
}

static void test_step(uint64_t seed)
{
    double x[200];
    size_t cp[64];
    struct cp_point pts[64];
    size_t m;

    rng_state = seed;
    for (int i = 0; i < 200; i++)
        x[i] = (i < 120 ? 100 : 150) + 5 * gauss();
    m = detect(x, 200, cp, pts);
    TAP_EQ_INT(m, 1, "step (seed %llu): one change point", (unsigned long long)seed);
    TAP_OK(m >= 1 && cp[0] >= 119 && cp[0] <= 121, "step: found at window 120 (+-1)");
    TAP_OK(m >= 1 && pts[0].kind == CP_STEP, "step: classified step");
    TAP_OK(m >= 1 && fabs(pts[0].change - 0.5) < 0.05, "step: relative change +50%%");
}

static void test_spike(uint64_t seed)
{
    double x[200];
    size_t cp[64];
    struct cp_point pts[64];
    size_t m;

    rng_state = seed;
    for (int i = 0; i < 200; i++)
        x[i] = (i >= 80 && i < 82 ? 300 : 100) + 5 * gauss();
    m = detect(x, 200, cp, pts);
    TAP_EQ_INT(m, 2, "spike (seed %llu): onset and recovery", (unsigned long long)seed);
    TAP_OK(m == 2 && cp[0] == 80 && cp[1] == 82, "spike: at windows 80 and 82");
    TAP_OK(m == 2 && pts[0].kind == CP_SPIKE && pts[1].kind == CP_SPIKE,
           "spike: both classified spike");
}

static void test_ramp(uint64_t seed)
{
    double x[200];
    size_t cp[64];
    struct cp_point pts[64];
    size_t m;

    rng_state = seed;
    for (int i = 0; i < 200; i++) {
        double lvl = i < 100 ? 100 : i < 140 ? 100 + (i - 100) * 2.5 : 200;
        x[i] = lvl + 5 * gauss();
    }
    m = detect(x, 200, cp, pts);
    TAP_OK(m >= 1 && pts[0].index >= 98 && pts[0].index <= 103,
           "ramp (seed %llu): reported at the ramp's start (window 100, -2..+3)",
           (unsigned long long)seed);
    TAP_OK(m >= 1 && pts[0].end >= 136 && pts[0].end <= 144,
           "ramp: its end at the plateau (window 140, +-4)");
    TAP_OK(m >= 1 && pts[0].kind == CP_RAMP, "ramp: classified ramp");
    TAP_OK(m >= 1 && pts[m - 1].index <= 142, "ramp: no point after the plateau starts");
}

/* A cold start: the first three windows slow, then normal. */
static void test_cold_start(void)
{
    double x[150];
    size_t cp[64];
    struct cp_point pts[64];
    size_t m;

    rng_state = 21;
    for (int i = 0; i < 150; i++)
        x[i] = (i < 3 ? 400 : 100) + 5 * gauss();
    m = detect(x, 150, cp, pts);
    TAP_OK(m == 1 && cp[0] == 3, "cold start: one change point, at window 3");
    TAP_OK(m == 1 && pts[0].kind == CP_SPIKE, "cold start: classified spike (recovery)");
}

/* Staircase growth (sampler overload): +30 every 8 windows from window 100. */
static void test_staircase(void)
{
    double x[200];
    size_t cp[64];
    struct cp_point pts[64];
    size_t m, ramps = 0;

    rng_state = 11;
    for (int i = 0; i < 200; i++)
        x[i] = (i < 100 ? 100 : i < 132 ? 100 + 30 * ((i - 100) / 8 + 1) : 220) + 3 * gauss();
    m = detect(x, 200, cp, pts);
    for (size_t k = 0; k < m; k++)
        ramps += pts[k].kind == CP_RAMP;
    /* a staircase's first tread is a jump, so the fitted line starts a little early */
    TAP_OK(m >= 1 && pts[0].index >= 96 && pts[0].index <= 102,
           "staircase: first point where the growth starts (window 100, -4..+2)");
    TAP_OK(m >= 1 && ramps == m, "staircase: every point classified ramp (%zu of %zu)", ramps, m);
}

/* Longer than 5,000 points: PELT runs on block means, then places each change
 * exactly; a 50,000-point series stays fast and the step is found at its index. */
static void test_long(void)
{
    static double x[50000];
    size_t cp[64];
    struct cp_opts o;
    long m;

    rng_state = 5;
    for (int i = 0; i < 50000; i++)
        x[i] = (i < 31234 ? 10 : 11) + 0.5 * gauss();
    cp_defaults(&o);
    m = cp_detect(CP_PELT, x, NULL, 50000, &o, cp, 64, NULL);
    TAP_OK(m == 1 && cp[0] >= 31232 && cp[0] <= 31236, "50,000 points: step at 31234 (+-2)");
    m = cp_detect(CP_PELT_MBIC, x, NULL, 50000, &o, cp, 64, NULL);
    TAP_OK(m == 1 && cp[0] >= 31232 && cp[0] <= 31236, "50,000 points, pelt_mbic: step at 31234");
}

static void test_flat(void)
{
    double x[500];
    size_t cp[64];
    struct cp_opts o;

    rng_state = 7;
    for (int i = 0; i < 500; i++)
        x[i] = 50 + 3 * gauss();
    cp_defaults(&o);
    TAP_EQ_INT(cp_detect(CP_PELT, x, NULL, 500, &o, cp, 64, NULL), 0,
               "white noise: no change point");
    TAP_EQ_INT(cp_detect(CP_BINSEG, x, NULL, 500, &o, cp, 64, NULL), 0, "white noise: binseg none");
}

static void test_small(void)
{
    static const double two[] = {0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
                                 10, 10, 10, 10, 10, 10, 10, 10, 10, 10.5};
    double z[20];
    size_t cp[8];
    struct cp_opts o;

    cp_defaults(&o);
    TAP_EQ_INT(cp_pelt((cp_standardise(two, 20, z), z), 20, 3 * log(20.0), 2, cp, 8), 1,
               "pelt: one change in a clean step");
    TAP_EQ_INT(cp[0], 10, "pelt: index is the first observation of the new regime");
    TAP_EQ_INT(cp_binseg(z, 20, 3 * log(20.0), 2, cp, 8), 1, "binseg: one change");
    TAP_EQ_INT(cp[0], 10, "binseg: at 10");
    TAP_EQ_INT(cp_detect(CP_CUSUM, two, NULL, 20, &o, cp, 8, NULL), 1, "cusum: one alarm");
    TAP_EQ_INT(cp[0], 10, "cusum: onset 10");
    TAP_EQ_INT(cp_detect(CP_PELT, two, NULL, 1, &o, cp, 8, NULL), 0, "one observation: nothing");
    TAP_EQ_INT(cp_detect(CP_PELT, two, NULL, 0, &o, cp, 8, NULL), 0, "empty: nothing");
    TAP_EQ_STR(cp_detector_name(CP_PELT), "pelt", "default detector name");
    TAP_EQ_INT(cp_detector_by_name("binseg"), CP_BINSEG, "detector by name");
    TAP_EQ_INT(cp_detector_by_name("nope"), -1, "unknown detector");
}

static void test_baseline(void)
{
    double x[120];
    size_t cp[16];
    struct cp_opts o;
    long m;

    /* flat P99 at 100 ms, then +60 % from window 80: the +40 % for 3 windows rule and
     * z >= 2.5 fire at 80 (alert start) */
    for (int i = 0; i < 120; i++)
        x[i] = i < 80 ? 100 + (i % 3) : 160 + (i % 3);
    cp_defaults(&o);
    m = cp_detect(CP_BASELINE, x, NULL, 120, &o, cp, 16, NULL);
    TAP_OK(m >= 1 && cp[0] == 80, "baseline: alert starts at window 80");
}

/* Binomial(trials, p) by summing Bernoulli draws. */
static double binomial(int trials, double p)
{
    int k = 0;
    for (int i = 0; i < trials; i++)
        k += unif() < p;
    return k;
}

/* -2 log-likelihood of K of N at p = K / N, written out again for the hand checks. */
static double nll2(double K, double N)
{
    return -2 * ((K > 0 ? K * log(K / N) : 0) + (N - K > 0 ? (N - K) * log((N - K) / N) : 0));
}

/* Two lone errors in 180 windows of 10 spans: chance, not change; the confidence of a
 * one-window segment is its binomial evidence (phi 1, rho 0 here), worked out by hand. */
static void test_binomial_lone_error(void)
{
    double x[180], w[180], gain, pen = 2 * log(180.0), want;
    size_t cp[8], lone[2] = {50, 51};
    struct cp_bounds b[2];
    struct cp_info info;
    struct cp_opts o;

    for (int i = 0; i < 180; i++) {
        x[i] = i == 50 || i == 120 ? 0.1 : 0;
        w[i] = 10;
    }
    cp_defaults(&o);
    TAP_EQ_INT(cp_detect(CP_PELT, x, w, 180, &o, cp, 8, &info), 0,
               "binomial: one error in ten spans, twice in 180 windows: no change point");
    TAP_EQ_STR(cp_cost_name((enum cp_cost)info.cost), "binomial", "binomial: the cost on a rate");
    TAP_EQ_INT(cp_detect(CP_BINSEG, x, w, 180, &o, cp, 8, NULL), 0, "binomial: binseg none either");
    /* the split at 50 against merging [0, 51): 0 of 500 and 1 of 10 against 1 of 510 */
    gain = nll2(1, 510) - nll2(0, 500) - nll2(1, 10);
    want = 1 / (1 + exp(-(gain - pen) / 2));
    if (cp_assess(x, w, 180, &o, CP_COST_BINOMIAL, lone, 2, b) < 0)
        return;
    printf("#   lone error: gain %.3f, penalty %.3f, confidence %.4f (by hand %.4f)\n", gain, pen,
           b[0].confidence, want);
    TAP_OK(fabs(b[0].confidence - want) < 1e-9 && b[0].confidence < 0.5,
           "binomial: a one-window segment of one error has confidence %.3f < 0.5",
           b[0].confidence);
    if (cp_assess(x, NULL, 180, &o, CP_COST_MEAN, lone, 2, b) == 0)
        printf("#   the same split as a normal mean (no trials): confidence %.4f\n",
               b[0].confidence);
}

/* A clean jump, overdispersed noise, trials that are not trials, and the long path. */
static void test_binomial(void)
{
    static double x[6000], w[6000];
    size_t cp[64];
    struct cp_info info;
    struct cp_opts o;
    long m;
    int burst = 0;

    cp_defaults(&o);
    TAP_EQ_INT(cp_cost_by_name("binomial"), CP_COST_BINOMIAL, "cost by name: binomial");
    for (int i = 0; i < 120; i++) {
        x[i] = i < 60 ? 0 : 0.1;
        w[i] = 100;
    }
    m = cp_detect(CP_PELT, x, w, 120, &o, cp, 64, &info);
    TAP_OK(m == 1 && cp[0] == 60 && info.cost == CP_COST_BINOMIAL,
           "binomial: 0 -> 10 of 100 spans found at 60");
    /* errors in bursts: each window's rate drawn around 5 % (sd 3 %), no change; a
     * binomial variance alone would make every burst a change, the dispersion does not */
    rng_state = 11;
    for (int i = 0; i < 200; i++) {
        double p = 0.05 + 0.03 * gauss();
        x[i] = binomial(100, p < 0 ? 0 : p) / 100;
        w[i] = 100;
    }
    m = cp_detect(CP_PELT, x, w, 200, &o, cp, 64, &info);
    printf("#   bursts: %ld change points, phi %.2f\n", m, info.sigma2);
    TAP_OK(m == 0 && info.sigma2 > 2, "binomial: overdispersed errors, dispersion %.1f, no change",
           info.sigma2);
    o.cost = CP_COST_BINOMIAL;
    m = cp_detect(CP_PELT, x, NULL, 200, &o, cp, 64, &info);
    TAP_EQ_STR(cp_cost_name((enum cp_cost)info.cost), "mean",
               "--cost binomial without trials: mean");
    o.cost = CP_COST_AUTO;
    w[7] = 0; /* a window of no trials: not a proportion */
    cp_detect(CP_PELT, x, w, 200, &o, cp, 64, &info);
    burst |= info.cost == CP_COST_BINOMIAL;
    w[7] = NAN;
    cp_detect(CP_PELT, x, w, 200, &o, cp, 64, &info);
    burst |= info.cost == CP_COST_BINOMIAL;
    w[7] = 100;
    x[9] = 1.5; /* a share above 1 */
    cp_detect(CP_PELT, x, w, 200, &o, cp, 64, &info);
    burst |= info.cost == CP_COST_BINOMIAL;
    TAP_OK(!burst, "zero or NaN trials, a share above 1: not binomial");
    /* longer than the exact limit (5,000): blocks pool successes and trials */
    rng_state = 12;
    for (int i = 0; i < 6000; i++) {
        x[i] = binomial(10, i < 4000 ? 0.003 : 0.03) / 10;
        w[i] = 10;
    }
    m = cp_detect(CP_PELT, x, w, 6000, &o, cp, 64, &info);
    TAP_OK(m == 1 && cp[0] + 20 >= 4000 && cp[0] <= 4020 && info.cost == CP_COST_BINOMIAL,
           "6,000 windows of 10 spans: 0.3 %% -> 3 %% at 4000 (+-20), binomial (%ld, at %zu)", m,
           m > 0 ? cp[0] : 0);
    m = cp_detect(CP_PELT, x, w, 4000, &o, cp, 64, &info);
    TAP_EQ_INT(m, 0, "4,000 windows of a steady 0.3 %% of 10 spans: no change point");
}

int main(void)
{
    test_small();
    test_flat();
    for (uint64_t s = 1; s <= 3; s++) {
        test_step(s);
        test_spike(s);
        test_ramp(s);
    }
    test_staircase();
    test_cold_start();
    test_long();
    test_baseline();
    test_binomial_lone_error();
    test_binomial();
    return tap_done();
}

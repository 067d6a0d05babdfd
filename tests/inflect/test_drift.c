/* test_drift.c - sampling drift: Wilson intervals, ot=th rates, the Bernoulli
 * CUSUM alarm delay on a planted 1 % -> 0.5 % drift, and no false alarm on 1,000
 * in-control windows (seeded). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../inflect/drift.h"
#include "sf_tracectx.h"
#include "tap.h"

#define NW     1000
#define TRIALS 1000 /* traces per window */

/* Windows of TRIALS traces kept with rate r0, and r1 from window `at` on. */
static void make(uint64_t seed, double r0, double r1, size_t at, uint64_t *trials, uint64_t *kept,
                 double *pi, size_t nw)
{
    uint64_t rng = seed;
    for (size_t w = 0; w < nw; w++) {
        trials[w] = TRIALS;
        kept[w] = drift_binomial(&rng, TRIALS, w < at ? r0 : r1);
        pi[w] = r0;
    }
}

static void test_no_drift(void)
{
    static uint64_t trials[NW], kept[NW];
    static double pi[NW];
    struct drift_opts o;
    struct drift_result r;
    int alarms = 0;

    drift_defaults(&o);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        make(seed * 7919, 0.01, 0.01, NW, trials, kept, pi, NW);
        TAP_EQ_INT(drift_analyse(trials, kept, pi, NULL, NULL, NW, &o, &r), 0, "analyse");
        alarms += r.alarm;
        if (seed == 1)
            TAP_OK(r.h_dn > 3 && r.h_dn < 30 && r.h_up > 3 && r.h_up < 30,
                   "simulated thresholds are sane (up %.3g, down %.3g nats)", r.h_up, r.h_dn);
        drift_result_free(&r);
    }
    TAP_EQ_INT(alarms, 0, "no drift: no alarm on 1,000 windows (5 seeded runs)");
}

static void test_drift_down(void)
{
    static uint64_t trials[NW], kept[NW];
    static double pi[NW];
    struct drift_opts o;
    struct drift_result r;

    drift_defaults(&o);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        make(seed * 104729, 0.01, 0.005, 500, trials, kept, pi, NW);
        drift_analyse(trials, kept, pi, NULL, NULL, NW, &o, &r);
        printf("#   seed %llu: alarm %d at window %zu, onset %zu\n", (unsigned long long)seed,
               r.alarm, r.alarm_win, r.onset_win);
        /* 1,000 traces a window: the expected log-likelihood gain is ~1.5 nats a
         * window against an ~11-nat threshold: 7.4 windows on average over 40 seeds,
         * 19 at most; the stated bound is 25 windows */
        TAP_OK(r.alarm && r.direction < 0 && r.alarm_win >= 500 && r.alarm_win < 525,
               "1%% -> 0.5%% at window 500: alarm (down) within 25 windows (seed %llu)",
               (unsigned long long)seed);
        TAP_OK(r.onset_win >= 495 && r.onset_win <= 505, "onset estimated at 500 +-5");
        TAP_OK(fabs(r.rate_after - 0.005) < 0.001, "rate after the onset about 0.5%%");
        drift_result_free(&r);
    }
}

static void test_up_and_untested(void)
{
    uint64_t trials[200], kept[200];
    double pi[200];
    struct drift_opts o;
    struct drift_result r;

    drift_defaults(&o);
    make(99, 0.01, 0.03, 100, trials, kept, pi, 200);
    drift_analyse(trials, kept, pi, NULL, NULL, 200, &o, &r);
    TAP_OK(r.alarm && r.direction > 0 && r.alarm_win >= 100 && r.alarm_win < 105,
           "1%% -> 3%%: alarm up within 5 windows");
    drift_result_free(&r);
    for (int w = 0; w < 200; w++)
        pi[w] = NAN;
    drift_analyse(trials, kept, pi, NULL, NULL, 200, &o, &r);
    TAP_OK(!r.tested && !r.alarm, "no configured rate: not tested, no alarm");
    drift_result_free(&r);
}

static void test_weights(void)
{
    uint64_t trials[10], kept[10], spans[10], traces[10];
    double pi[10];
    struct drift_opts o;
    struct drift_result r;

    /* 3 tiers at 0.5: end-to-end 0.125; 125 kept of 1,000 a window -> 10,000 traces */
    for (int w = 0; w < 10; w++) {
        trials[w] = 1000;
        kept[w] = 125;
        pi[w] = pow(0.5, 3);
        traces[w] = 1000;
        spans[w] = 3000;
    }
    drift_defaults(&o);
    drift_analyse(trials, kept, pi, spans, traces, 10, &o, &r);
    TAP_OK(fabs(r.est_traces - 10000) < 1e-6, "1/r^k re-weighting: 10,000 traces estimated");
    TAP_OK(fabs(r.rel_se - sqrt((1 - 0.125) / (10000 * 0.125))) < 1e-12, "relative SE");
    TAP_OK(fabs(r.amp_before - 3) < 1e-12, "amplification: 3 spans per trace");
    TAP_EQ_INT(r.alarm, 0, "exactly on the configured rate: no alarm");
    drift_result_free(&r);
}

static void test_wilson_ot(void)
{
    double lo, hi;

    drift_wilson(10, 1000, 1.96, &lo, &hi);
    /* reference: statsmodels proportion_confint(10, 1000, method="wilson") */
    TAP_OK(fabs(lo - 0.005432) < 1e-5 && fabs(hi - 0.018300) < 1e-5, "Wilson 10/1000: [%.6f, %.6f]",
           lo, hi);
    drift_wilson(0, 50, 1.96, &lo, &hi);
    TAP_OK(lo == 0 && hi > 0.07 && hi < 0.072, "Wilson 0/50 upper %.4f", hi);
    drift_wilson(0, 0, 1.96, &lo, &hi);
    TAP_OK(isnan(lo) && isnan(hi), "Wilson with no trials: NaN");
    TAP_OK(sf_tracectx_ot_rate("ot=th:8") == 0.5, "ot=th:8 -> 0.5");
    TAP_OK(sf_tracectx_ot_rate("ot=th:0") == 1.0, "ot=th:0 -> 1");
    TAP_OK(sf_tracectx_ot_rate("vendor=x,ot=rv:abcdef01234567;th:c") == 0.25,
           "ot=...;th:c after another member -> 0.25");
    TAP_OK(fabs(sf_tracectx_ot_rate("ot=th:fd70a4") - (1 - (double)0xfd70a4 / (1 << 24))) < 1e-12,
           "ot=th:fd70a4 -> 1 %% sampling");
    TAP_OK(isnan(sf_tracectx_ot_rate("ot=th:zz")), "bad hex: NaN");
    TAP_OK(isnan(sf_tracectx_ot_rate("ot=th:123456789012345")), "15 digits: NaN");
    TAP_OK(isnan(sf_tracectx_ot_rate("dd=s:1")), "no ot member: NaN");
}

static void test_binomial(void)
{
    uint64_t rng = 42, sum = 0;
    for (int i = 0; i < 10000; i++)
        sum += drift_binomial(&rng, 1000, 0.01);
    TAP_OK(fabs((double)sum / 10000 - 10) < 0.2, "Binomial(1000, 0.01) mean %.3f",
           (double)sum / 10000);
    sum = 0;
    for (int i = 0; i < 10000; i++)
        sum += drift_binomial(&rng, 100000, 0.3);
    TAP_OK(fabs((double)sum / 10000 - 30000) < 10, "Binomial(1e5, 0.3) mean (normal branch)");
    TAP_EQ_INT(drift_binomial(&rng, 10, 1.0), 10, "p = 1");
    TAP_EQ_INT(drift_binomial(&rng, 10, 0.0), 0, "p = 0");
}

int main(void)
{
    test_wilson_ot();
    test_binomial();
    test_weights();
    test_up_and_untested();
    test_drift_down();
    test_no_drift();
    return tap_done();
}

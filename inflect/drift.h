/* drift.h - did the observed sampling rate leave its configuration?
 *
 * Per window: the observed kept share of traces (one trial per trace: spans of
 * one trace share the root's decision) with a Wilson score interval, against the
 * configured end-to-end keep probability pi (--expect-rate R over --tiers K:
 * pi = R^K; or the OpenTelemetry tracestate ot=th: rate when present).  Online:
 * two Bernoulli CUSUM charts (repeated SPRTs; up: pi -> 2 pi, down: pi -> pi / 2)
 * on the per-window log-likelihood ratios, with thresholds taken from simulated
 * in-control runs over the same windows (so the chance of any false alarm over
 * the whole run is alpha).  Counts are re-weighted by 1/pi (Horvitz-Thompson).
 */
#ifndef INFLECT_DRIFT_H
#define INFLECT_DRIFT_H

#include <stddef.h>
#include <stdint.h>

struct drift_opts {
    double z;      /* Wilson interval z (1.96: 95 %) */
    double shift;  /* rate ratio the charts look for (2) */
    int sims;      /* in-control simulations for the thresholds (1000) */
    double alpha;  /* false-alarm probability over the run, per chart (0.001) */
    uint64_t seed; /* PRNG seed of the simulations (fixed: reproducible reports) */
};

void drift_defaults(struct drift_opts *o);

struct drift_result {
    int tested; /* a configured rate was known for some window */
    size_t nwin;
    double *share, *lo, *hi, *expect; /* per window; NaN without trials / rate */
    size_t outside;                   /* windows whose Wilson interval excludes pi */
    int alarm;                        /* a chart crossed its threshold */
    int direction;                    /* +1 rate went up, -1 down */
    size_t alarm_win;                 /* first window over the threshold */
    size_t onset_win;               /* window after the chart last left zero: the estimated onset */
    double h_up, h_dn;              /* thresholds (nats) */
    double rate_before, rate_after; /* observed share before / from the onset */
    double amp_before, amp_after;   /* spans per trace before / from the onset */
    double est_traces;              /* sum of kept / pi: estimated traces in all */
    double rel_se;                  /* relative standard error of est_traces, sqrt((1-pi)/(N pi)) */
    uint64_t trials, kept;
};

/* Analyse nwin windows: trials/kept traces, configured pi per window (NaN =
 * unknown), spans and traces (for amplification; may be NULL).  Returns 0 or -1
 * (out of memory). */
int drift_analyse(const uint64_t *trials, const uint64_t *kept, const double *pi,
                  const uint64_t *spans, const uint64_t *traces, size_t nwin,
                  const struct drift_opts *o, struct drift_result *r);
void drift_result_free(struct drift_result *r);

/* Wilson score interval of k successes in n trials. */
void drift_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi);

/* A Binomial(n, p) draw from the splitmix64 state *rng (exact inversion for
 * small means, normal approximation for large). */
uint64_t drift_binomial(uint64_t *rng, uint64_t n, double p);

#endif

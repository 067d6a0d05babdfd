/* changepoint.h - offline change-point detectors over one series.
 *
 * Every detector returns change-point locations: the 0-based index of the FIRST
 * observation of the new regime (TCPD convention), ascending, without 0.
 */
#ifndef INFLECT_CHANGEPOINT_H
#define INFLECT_CHANGEPOINT_H

#include <stddef.h>

enum cp_detector {
    CP_PELT,      /* default: PELT, cost chosen by penalised likelihood, BIC penalty,
                     costs scaled by the AR(1) long-run factor */
    CP_PELT_MBIC, /* PELT, squared-error cost, plain MBIC penalty 3 ln n (one pass) */
    CP_BINSEG,    /* binary segmentation, same cost and penalty rule as CP_PELT */
    CP_CUSUM,     /* two-sided self-starting CUSUM (k = 0.5, h = 5 sd), alarm onsets */
    CP_BASELINE,  /* the design notes' rules in sd (slopes, a rise, z >= 2.5), alert starts */
    CP_NDETECTORS
};

/* Stable detector name used in JSON ("pelt", "pelt_mbic", "binseg", "cusum",
 * "baseline"). */
const char *cp_detector_name(enum cp_detector d);

/* Detector by name; -1 when unknown. */
int cp_detector_by_name(const char *name);

/* The segment cost of CP_PELT / CP_BINSEG: auto picks by penalised likelihood. */
enum cp_cost {
    CP_COST_AUTO,
    CP_COST_MEAN,
    CP_COST_MEANVAR,
    CP_COST_LINEAR,
    CP_COST_POISSON,
    CP_COST_BINOMIAL,
    CP_NCOSTS
};

/* "auto", "mean", "meanvar", "linear", "poisson", "binomial"; cp_cost_by_name gives
 * -1 when unknown.  poisson applies to counts only, binomial to proportions with
 * their trials (cp_detect's w): on other data either means mean.  auto on
 * proportions is binomial. */
const char *cp_cost_name(enum cp_cost c);
int cp_cost_by_name(const char *name);

/* Settings shared by the detectors (cp_defaults() fills the documented ones). */
struct cp_opts {
    int cost;           /* enum cp_cost (CP_COST_AUTO) */
    double pen_mult;    /* penalty per parameter = pen_mult / 2 * ln n (3) */
    size_t min_seg;     /* shortest segment (1; at least 3 for a line, 4 for meanvar) */
    double rho_max;     /* cap on the AR(1) coefficient (0.99) */
    int max_iter;       /* AR(1) re-estimation passes (8) */
    double cusum_k;     /* CUSUM reference value, in sd (0.5) */
    double cusum_h;     /* CUSUM decision interval, in sd (5) */
    size_t base_window; /* baseline: sliding window (60) */
    size_t base_fit;    /* baseline: points per slope fit (15) */
    double base_slope;  /* baseline: slope difference per window (0.1 sd) */
    double base_rise;   /* baseline: rise over the window's mean (1 sd) for base_run windows */
    size_t base_run;    /* baseline: consecutive windows (3) */
    double base_z;      /* baseline: z score (2.5) */
    double base_abs;    /* baseline: absolute ceiling (e.g. 0.008 error rate), 0 = off */
};

void cp_defaults(struct cp_opts *o);

/* What the AR(1)-aware passes estimated (for the report). */
struct cp_info {
    int cost;       /* enum cp_cost the default chose */
    double sigma2;  /* residual variance of the standardised series; binomial: the
                       dispersion phi (>= 1) that scales the binomial variance */
    double rho;     /* lag-1 autocorrelation of residuals (clamped) */
    double penalty; /* per change, in -2 log-likelihood units */
    int iterations;
    size_t rejected; /* > 0: the detector marked this many of the n points (3 or
                        more, and more than n / 3), a failure of the model, and none
                        is reported */
};

/* Run detector d on x[0..n) (raw values; detectors standardise as they need).
 * w is NULL, or the trials of each observation when x[i] is a proportion of w[i]
 * (an error rate of w[i] spans): CP_PELT and CP_BINSEG then model x[i] w[i] as a
 * binomial count (cost auto or binomial); w is ignored unless every w[i] > 0 and
 * every x[i] is in [0, 1].  info (CP_PELT, CP_BINSEG) gets the chosen cost and its
 * scale.  Writes at most cap indices to out and returns how many, or -1 when out
 * of memory.  info may be NULL.  Every detector gives the same result for a x + b
 * (a > 0) as for x (the poisson cost, only when asked for, and the baseline's
 * absolute ceiling aside).  A result of 3 or more points that marks more than a
 * third of the series is returned as none, its count in info->rejected. */
long cp_detect(enum cp_detector d, const double *x, const double *w, size_t n,
               const struct cp_opts *o, size_t *out, size_t cap, struct cp_info *info);

/* Globally standardise: z = (x - mean) / sd (population sd; sd 0 gives z = 0). */
void cp_standardise(const double *x, size_t n, double *z);

/* PELT with squared-error cost on z and a fixed penalty.  Returns count or -1. */
long cp_pelt(const double *z, size_t n, double pen, size_t min_seg, size_t *out, size_t cap);

/* Binary segmentation with the same cost; split while the gain exceeds pen. */
long cp_binseg(const double *z, size_t n, double pen, size_t min_seg, size_t *out, size_t cap);

/* How sure a change point is, and where it could be. */
struct cp_bounds {
    double confidence; /* 1 / (1 + exp(-(gain - penalty) / 2)), in (0, 1) */
    size_t lo, hi;     /* every location within relative likelihood 1/20: lo <= cp <= hi */
};

/* Assess change points cp[0..m) of x[0..n) (trials w as for cp_detect, or NULL)
 * under cost kind (the cp_info.cost of the detection): gain is the -2 log-likelihood the point
 * saves against merging its two segments, so confidence is the BIC-approximate posterior
 * probability that the change is real (0.5 when gain equals the penalty); [lo, hi] holds every
 * location t between the neighbouring change points whose split costs at most
 * 2 ln 20 more than cp's.  Writes out[0..m); returns 0 or -1 (out of memory). */
int cp_assess(const double *x, const double *w, size_t n, const struct cp_opts *o,
              enum cp_cost kind, const size_t *cp, size_t m, struct cp_bounds *out);

#endif

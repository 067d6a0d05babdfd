/* clockdrift.h - clock offset, skew and drift per clock pair from clock_fits. */
#ifndef INFLECT_CLOCKDRIFT_H
#define INFLECT_CLOCKDRIFT_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

#define CLOCK_MAX_PAIRS 64
#define CLOCK_MAX_ROWS  100000

struct clock_pair {
    char from[32], to[32];
    int64_t from_src, to_src; /* -1 when NULL */
    size_t n;                 /* clock_fits rows (segments) */
    int64_t t0_ns;            /* time of the first row (valid_from_ns or ref_ns) */
    int64_t off0_ns;          /* offset of the first row; off_ns[] are relative to it */
    double *t;                /* seconds since t0 of each row */
    double *off_ns, *skew_ppm, *resid_ns, *jump_ns;
    double *row_resid;   /* each row's own residual_ns (0 when NULL in the table) */
    int degree;          /* polynomial degree of the offset fit (0..3) */
    double c[4];         /* offset(t) = c0 + c1 t + c2 t^2 + c3 t^3, ns, t in s */
    double skew0_ppm;    /* c1 as ppm */
    double alpha_ppm_s;  /* f(t) = f0 (1 + alpha t + beta t^2), in ppm/s */
    double beta_ppm_s2;  /* and ppm/s^2 */
    double fit_rms_ns;   /* RMS of resid_ns: the rows' offsets around the drift fit */
    double resid_rms_ns; /* RMS error of the mapping: each row's own residual_ns and its
                          * distance from the drift fit, sqrt(mean(row^2 + fit^2)) */
    size_t nsteps;       /* rows whose offset jumps beyond the previous row's line */
};

struct clock_report {
    struct clock_pair *p;
    size_t n;
};

/* Read clock_fits from the database at path and fit each pair.  A missing table
 * or no rows give n = 0.  Returns 0 or SF_E_DB / SF_E_NOMEM / SF_E_LIMIT. */
int clock_read(struct clock_report *cr, const char *path, int complete_only, struct sf_err *err);

/* Fit one pair (the rows t/off_ns/skew_ppm are filled): degree min(3, n - 2) when
 * n >= 3 (n = 2: a line through both, n = 1: constant), residuals, steps (an
 * offset more than max(1 us, 10 x the row's residual) away from the previous
 * row's offset + skew line). row_resid holds each row's residual_ns (may be NULL). */
void clock_fit(struct clock_pair *p, const double *row_resid);

void clock_free(struct clock_report *cr);

#endif

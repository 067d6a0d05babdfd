/* test_clock.c - the clock drift model f(t) = f0 (1 + alpha t + beta t^2) is
 * recovered from clock_fits-like rows, and a clock step is found and kept out of
 * the fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../inflect/clockdrift.h"
#include "tap.h"

/* n rows every 10 s of offset(t) = 5000 + skew0 t + (1 + skew0)(alpha t^2/2 + beta t^3/3),
 * plus `step` ns from row `at` on. */
static void make(struct clock_pair *p, size_t n, double skew0, double alpha, double beta,
                 double step, size_t at)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->t = calloc(n, sizeof(double));
    p->off_ns = calloc(n, sizeof(double));
    p->skew_ppm = calloc(n, sizeof(double));
    p->resid_ns = calloc(n, sizeof(double));
    p->jump_ns = calloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double t = 10.0 * (double)i;
        p->t[i] = t;
        p->off_ns[i] =
            5000 + 1e9 * (skew0 * t + (1 + skew0) * (alpha * t * t / 2 + beta * t * t * t / 3)) +
            (i >= at ? step : 0);
        /* the row's own skew: the derivative at t */
        p->skew_ppm[i] = 1e6 * (skew0 + (1 + skew0) * (alpha * t + beta * t * t));
    }
}

static void unmake(struct clock_pair *p)
{
    free(p->t);
    free(p->off_ns);
    free(p->skew_ppm);
    free(p->resid_ns);
    free(p->jump_ns);
}

int main(void)
{
    struct clock_pair p;

    make(&p, 12, 37e-6, 2e-9, 0, 0, 99);
    clock_fit(&p, NULL);
    TAP_EQ_INT(p.degree, 3, "12 rows: cubic offset fit");
    TAP_OK(fabs(p.skew0_ppm - 37) < 1e-3, "skew 37 ppm recovered (%.6f)", p.skew0_ppm);
    TAP_OK(fabs(p.alpha_ppm_s - 2e-3) < 1e-6, "alpha 2e-3 ppm/s recovered (%.3g)", p.alpha_ppm_s);
    TAP_OK(fabs(p.beta_ppm_s2) < 1e-7, "beta 0 (%.3g)", p.beta_ppm_s2);
    TAP_OK(p.resid_rms_ns < 1, "residuals below 1 ns (%.3g)", p.resid_rms_ns);
    TAP_EQ_INT(p.nsteps, 0, "no step");
    unmake(&p);

    make(&p, 12, 37e-6, 0, 0, 250000, 6);
    clock_fit(&p, NULL);
    TAP_EQ_INT(p.nsteps, 1, "a 250 us clock step is found");
    TAP_OK(fabs(p.jump_ns[6] - 250000) < 1, "at row 6, 250 us (%.1f)", p.jump_ns[6]);
    TAP_OK(fabs(p.skew0_ppm - 37) < 1e-3, "the step does not bend the skew (%.6f)", p.skew0_ppm);
    unmake(&p);

    {
        /* rows with 50 us residuals: a 250 us jump is within 10 x 50 us, not a step */
        double rr[12];
        for (int i = 0; i < 12; i++)
            rr[i] = 50000;
        make(&p, 12, 37e-6, 0, 0, 250000, 6);
        clock_fit(&p, rr);
        TAP_EQ_INT(p.nsteps, 0, "tolerance scales with the rows' own residuals");
        TAP_OK(p.resid_rms_ns >= 50000 && p.resid_rms_ns >= p.fit_rms_ns,
               "the rows' own 50 us residuals count in the mapping's (%.0f ns)", p.resid_rms_ns);
        unmake(&p);
    }
    {
        /* one segment: the drift fit goes through it, its own fit's residual stays */
        double rr[1] = {62830};
        make(&p, 1, 10e-6, 0, 0, 0, 99);
        clock_fit(&p, rr);
        TAP_OK(p.fit_rms_ns == 0 && fabs(p.resid_rms_ns - 62830) < 1e-6,
               "one segment with a 62,830 ns residual: 62,830 ns, not 0 (%.1f)", p.resid_rms_ns);
        unmake(&p);
    }
    make(&p, 2, 10e-6, 0, 0, 0, 99);
    clock_fit(&p, NULL);
    TAP_OK(p.degree == 1 && fabs(p.skew0_ppm - 10) < 1e-6, "two rows: a line, 10 ppm");
    unmake(&p);
    make(&p, 1, 10e-6, 0, 0, 0, 99);
    clock_fit(&p, NULL);
    TAP_OK(p.degree == 0 && fabs(p.skew0_ppm - 10) < 1e-9, "one row: its own skew");
    unmake(&p);
    return tap_done();
}

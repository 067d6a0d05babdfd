/* test_scenarios.c - the design notes' latency scenarios, each a synthetic series of
 * 10 s windows with known truth, through the whole analysis of one series
 * (inflect_analyse: every detector, the default's cost choice, classification,
 * confidence and interval).  Each scenario lists the exact change points the
 * default must report (no more, no fewer), where, the error allowed in windows,
 * and the kind; it runs over several noise seeds.  An error-rate scenario with
 * spans per window is analysed as --db gives it: a proportion of that many trials. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../inflect/inflect.h"
#include "tap.h"

#define N     180 /* 30 minutes of 10 s windows */
#define MAXCP 8

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

/* Binomial(trials, p) by summing Bernoulli draws (small trials only). */
static double binomial(int trials, double p)
{
    int k = 0;
    for (int i = 0; i < trials; i++)
        k += unif() < p;
    return k;
}

/* P99 latency in ms, 100 ms with 4 ms of noise unless the scenario says more. */
static void cold_start(double *x)
{
    for (int i = 0; i < N; i++)
        x[i] = (i == 0 ? 650 : 100) + 4 * gauss();
}

static void staircase(double *x) /* overload: +80 ms every 2 min (12 windows) from 60 */
{
    for (int i = 0; i < N; i++)
        x[i] = 100 + 80 * (i < 60 ? 0 : i < 108 ? (i - 60) / 12 + 1 : 4) + 4 * gauss();
}

static void p99_burst(double *x) /* P99 +40 % for 3 windows from 90 */
{
    for (int i = 0; i < N; i++)
        x[i] = (i >= 90 && i < 93 ? 140 : 100) + 4 * gauss();
}

static void error_rate(double *x) /* 0.2 % of 2,000 requests, 1.2 % from window 70 */
{
    for (int i = 0; i < N; i++)
        x[i] = binomial(2000, i < 70 ? 0.002 : 0.012) / 2000;
}

static void sparse_errors(double *x) /* a steady 0.3 % of 10 spans a window */
{
    for (int i = 0; i < N; i++)
        x[i] = binomial(10, 0.003) / 10;
}

static void error_jump(double *x) /* 0.3 % of 100 spans a window, 3 % from window 90 */
{
    for (int i = 0; i < N; i++)
        x[i] = binomial(100, i < 90 ? 0.003 : 0.03) / 100;
}

static void sparse_jump(double *x) /* 0.3 % of 10 spans a window, 3 % from window 90 */
{
    for (int i = 0; i < N; i++)
        x[i] = binomial(10, i < 90 ? 0.003 : 0.03) / 10;
}

static void ramp(double *x) /* 100 ms to 200 ms over windows 60..100 */
{
    for (int i = 0; i < N; i++)
        x[i] = (i < 60 ? 100 : i < 100 ? 100 + 2.5 * (i - 60) : 200) + 4 * gauss();
}

static void variance(double *x) /* same mean, noise 3 ms -> 15 ms from window 100 */
{
    for (int i = 0; i < N; i++)
        x[i] = 100 + (i < 100 ? 3 : 15) * gauss();
}

static void flat(double *x)
{
    for (int i = 0; i < N; i++)
        x[i] = 100 + 4 * gauss();
}

struct scenario {
    const char *name;
    void (*gen)(double *x);
    size_t m;         /* exact number of change points */
    size_t at[MAXCP]; /* expected index of each (the reported one) */
    size_t tol;       /* allowed error in windows */
    enum cp_kind kind[MAXCP];
    const char *role[MAXCP];
    double spans; /* spans per window of an error rate (its trials), 0: a plain series */
};

/* A cold start's recovery is reported at 1 (or 2).  The error rate crossing 0.8 % runs
 * twice: as plain values (--series) and with its 2,000 spans a window (--db). */
static const struct scenario scenarios[] = {
    {"cold start: one window > 500 ms, then back",
     cold_start,
     1,
     {1},
     1,
     {CP_SPIKE},
     {"recovery"},
     0},
    {"overload staircase: +80 ms every 2 min",
     staircase,
     4,
     {60, 72, 84, 96},
     1,
     {CP_STEP, CP_STEP, CP_STEP, CP_STEP},
     {"level", "level", "level", "level"},
     0},
    {"P99 +40 % for 3 windows",
     p99_burst,
     2,
     {90, 93},
     1,
     {CP_SPIKE, CP_SPIKE},
     {"onset", "recovery"},
     0},
    {"error rate 0.2 % -> 1.2 % (crosses 0.8 %)", error_rate, 1, {70}, 1, {CP_STEP}, {"level"}, 0},
    {"error rate 0.2 % -> 1.2 % of 2,000 spans (binomial)",
     error_rate,
     1,
     {70},
     1,
     {CP_STEP},
     {"level"},
     2000},
    {"steady 0.3 % errors of 10 spans a window", sparse_errors, 0, {0}, 0, {CP_STEP}, {NULL}, 10},
    {"ramp 100 -> 200 ms over 40 windows",
     ramp,
     2,
     {60, 100},
     4,
     {CP_RAMP, CP_RAMP},
     {"onset", "end"},
     0},
    {"variance x5, same mean", variance, 1, {100}, 5, {CP_STEP}, {"level"}, 0},
    {"white noise", flat, 0, {0}, 0, {CP_STEP}, {NULL}, 0},
};

/* One series through inflect_analyse with the default settings; spans > 0 makes
 * it a proportion of that many trials per window (an error rate from --db). */
static int analyse(const double *x, double spans, double min_conf, struct inflect_series *s,
                   struct inflect_result *r)
{
    static double t[N], trials[N];
    static size_t row[N];
    struct inflect_ctx ctx;

    for (size_t i = 0; i < N; i++) {
        t[i] = 10.0 * (double)i;
        row[i] = i;
        trials[i] = spans;
    }
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "p99");
    s->n = N;
    s->v = (double *)x;
    s->t = t;
    s->row = row;
    s->trials = spans > 0 ? trials : NULL;
    memset(&ctx, 0, sizeof(ctx));
    ctx.detector = CP_PELT;
    ctx.min_confidence = min_conf;
    cp_defaults(&ctx.cp);
    memset(r, 0, sizeof(*r));
    r->s = s;
    return inflect_analyse(&ctx, r);
}

static void run(const struct scenario *sc, uint64_t seed)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;
    size_t ok_at = 0, ok_kind = 0, ok_bounds = 0;

    rng_state = seed;
    sc->gen(x);
    if (analyse(x, sc->spans, 0, &s, &r) < 0) {
        TAP_OK(0, "%s (seed %llu): analysed", sc->name, (unsigned long long)seed);
        return;
    }
    for (size_t k = 0; k < r.npts; k++)
        printf("#   %s: index %zu [%zu, %zu] %s %s confidence %.3f, cost %s\n", sc->name,
               r.pts[k].index, r.pts[k].lo, r.pts[k].hi, cp_kind_name(r.pts[k].kind), r.pts[k].role,
               r.pts[k].confidence, cp_cost_name((enum cp_cost)r.info.cost));
    TAP_EQ_INT(r.npts, sc->m, "%s (seed %llu): exactly %zu change point(s)", sc->name,
               (unsigned long long)seed, sc->m);
    for (size_t k = 0; k < r.npts && k < sc->m; k++) {
        const struct cp_point *p = &r.pts[k];
        size_t d = p->index > sc->at[k] ? p->index - sc->at[k] : sc->at[k] - p->index;
        ok_at += d <= sc->tol;
        ok_kind += p->kind == sc->kind[k] && strcmp(p->role, sc->role[k]) == 0;
        ok_bounds +=
            p->lo <= p->index && p->index <= p->hi && p->confidence > 0.5 && p->confidence <= 1;
    }
    if (sc->m > 0) {
        TAP_OK(r.npts == sc->m && ok_at == sc->m, "%s: each within %zu window(s) of the truth",
               sc->name, sc->tol);
        TAP_OK(r.npts == sc->m && ok_kind == sc->m, "%s: kinds and roles as expected", sc->name);
        TAP_OK(r.npts == sc->m && ok_bounds == sc->m,
               "%s: lo <= index <= hi, confidence in (0.5, 1]", sc->name);
    }
    inflect_result_free(&r);
}

/* The variance change is found by the mean+variance cost, the staircase by the mean
 * cost: the default's model selection picks them. */
static void test_cost_choice(void)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;

    rng_state = 1;
    variance(x);
    if (analyse(x, 0, 0, &s, &r) == 0)
        TAP_EQ_STR(cp_cost_name((enum cp_cost)r.info.cost), "meanvar",
                   "variance change: the mean+variance cost is chosen");
    inflect_result_free(&r);
    rng_state = 1;
    staircase(x);
    if (analyse(x, 0, 0, &s, &r) == 0)
        TAP_EQ_STR(cp_cost_name((enum cp_cost)r.info.cost), "mean",
                   "staircase: the normal mean cost is chosen");
    inflect_result_free(&r);
}

/* Confidence orders change points by evidence, and --min-confidence drops the weak
 * ones: a 3 ms step (0.75 sd) and a 60 ms step in the same series. */
static void test_min_confidence(void)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;
    size_t m_all = 0;
    double weak = 1, strong = 0;

    rng_state = 9;
    for (int i = 0; i < N; i++)
        x[i] = (i < 60 ? 100 : i < 120 ? 103 : 163) + 4 * gauss();
    if (analyse(x, 0, 0, &s, &r) < 0)
        return;
    m_all = r.npts;
    for (size_t k = 0; k < r.npts; k++) {
        if (r.pts[k].index >= 110)
            strong = r.pts[k].confidence;
        else
            weak = r.pts[k].confidence;
    }
    printf("#   weak %.4f strong %.4f (%zu points)\n", weak, strong, m_all);
    TAP_OK(m_all == 2 && weak < strong, "small step less confident than a large one");
    inflect_result_free(&r);
    if (analyse(x, 0, weak + (1 - weak) / 2, &s, &r) < 0)
        return;
    TAP_OK(r.npts == 1 && r.pts[0].index >= 119 && r.pts[0].index <= 121,
           "--min-confidence above the small step's keeps only the large step (%zu)", r.npts);
    inflect_result_free(&r);
    if (analyse(x, 0, 1, &s, &r) < 0)
        return;
    TAP_OK(r.npts <= 1, "--min-confidence 1 keeps at most a point of certainty");
    inflect_result_free(&r);
}

/* The interval narrows as the step grows: a 2 sd step is placed less exactly. */
static void test_interval(void)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;
    size_t wide = 0, narrow = 0;

    rng_state = 4;
    for (int i = 0; i < N; i++)
        x[i] = (i < 90 ? 100 : 108) + 4 * gauss();
    if (analyse(x, 0, 0, &s, &r) == 0 && r.npts == 1)
        wide = r.pts[0].hi - r.pts[0].lo;
    inflect_result_free(&r);
    rng_state = 4;
    for (int i = 0; i < N; i++)
        x[i] = (i < 90 ? 100 : 160) + 4 * gauss();
    if (analyse(x, 0, 0, &s, &r) == 0 && r.npts == 1)
        narrow = r.pts[0].hi - r.pts[0].lo + 1;
    inflect_result_free(&r);
    printf("#   interval widths: 2 sd step %zu, 15 sd step %zu\n", wide, narrow - 1);
    TAP_OK(narrow == 1, "a 15 sd step: interval is the point itself");
    TAP_OK(wide >= 2, "a 2 sd step: the interval spans several windows");
}

/* False alarms: 300 series of white noise (180 windows each).  The BIC penalty
 * lets a few through (13 of 300 here); a confidence of 0.95 or more is rarer. */
static void test_false_alarms(void)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;
    int any = 0, sure = 0;

    for (uint64_t seed = 1000; seed < 1300; seed++) {
        int hi = 0;
        rng_state = seed;
        flat(x);
        if (analyse(x, 0, 0, &s, &r) < 0)
            return;
        any += r.npts > 0;
        for (size_t k = 0; k < r.npts; k++)
            hi |= r.pts[k].confidence >= 0.95;
        sure += hi;
        inflect_result_free(&r);
    }
    printf("#   white noise: %d of 300 with a change point, %d with confidence >= 0.95\n", any,
           sure);
    TAP_OK(any <= 15, "white noise: at most 5 %% of series get a change point (%d of 300)", any);
    TAP_OK(sure <= 8 && sure <= any,
           "white noise: fewer reach confidence 0.95 (%d of 300, at most 8)", sure);
}

/* Error rates of few spans a window, as --db's default window gives them (about 16
 * spans): a proportion of that many trials, so one error among ten spans is chance,
 * not a change. */
static void test_sparse_rates(void)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;
    int any = 0, sure = 0, plain = 0;

    for (uint64_t seed = 2000; seed < 2300; seed++) {
        int hi = 0;
        rng_state = seed;
        sparse_errors(x);
        if (analyse(x, 10, 0, &s, &r) < 0)
            return;
        any += r.npts > 0;
        for (size_t k = 0; k < r.npts; k++)
            hi |= r.pts[k].confidence >= 0.95;
        sure += hi;
        inflect_result_free(&r);
        if (analyse(x, 0, 0, &s, &r) < 0) /* the same values without their trials */
            return;
        plain += r.npts > 0;
        inflect_result_free(&r);
    }
    printf("#   0.3 %% of 10 spans: %d of 300 with a change point, %d with confidence >= 0.95; "
           "as plain values (no trials) %d of 300\n",
           any, sure, plain);
    TAP_OK(any <= 15, "steady 0.3 %% of 10 spans: at most 5 %% of series get a change point (%d)",
           any); /* the bound of white noise, below */
    TAP_OK(sure <= 3, "steady 0.3 %% of 10 spans: at most 1 %% reach confidence 0.95 (%d)", sure);
}

/* A real jump, 0.3 % -> 3 % from window 90, over 100 seeds: how often exactly one change
 * point is found, within 2 windows, and inside its interval.  The location is a matter of
 * chance where errors are few: at 100 spans a window the likelihood of a split 3 windows
 * late can beat the true one (seed 4 of the scenarios: 3, 0, 1 errors in windows 90-92);
 * at 10 spans a window the first error after the jump comes 3.3 windows late on average,
 * so no detector places it within 2 windows there, but its interval can cover it. */
static void jump_rates(void (*gen)(double *), double spans, int *one, int *near, int *covered)
{
    double x[N];
    struct inflect_series s;
    struct inflect_result r;

    *one = *near = *covered = 0;
    for (uint64_t seed = 3000; seed < 3100; seed++) {
        rng_state = seed;
        gen(x);
        if (analyse(x, spans, 0, &s, &r) < 0)
            return;
        if (r.npts == 1 && r.pts[0].kind == CP_STEP) {
            (*one)++;
            *near += r.pts[0].index + 2 >= 90 && r.pts[0].index <= 92;
            *covered += r.pts[0].lo <= 90 && 90 <= r.pts[0].hi;
        }
        inflect_result_free(&r);
    }
}

static void test_error_jump(void)
{
    int one, near, covered;

    jump_rates(error_jump, 100, &one, &near, &covered);
    printf("#   0.3 %% -> 3 %% of 100 spans: %d of 100 with exactly one step, within 2 windows %d, "
           "its interval covers the jump %d\n",
           one, near, covered);
    TAP_OK(one >= 90, "0.3 %% -> 3 %% of 100 spans: exactly one step in >= 90 of 100 (%d)", one);
    TAP_OK(near >= 85, "0.3 %% -> 3 %% of 100 spans: within 2 windows in >= 85 of 100 (%d)", near);
    jump_rates(sparse_jump, 10, &one, &near, &covered);
    printf("#   0.3 %% -> 3 %% of 10 spans: %d of 100 with exactly one step, within 2 windows %d, "
           "its interval covers the jump %d\n",
           one, near, covered);
    TAP_OK(one >= 85, "0.3 %% -> 3 %% of 10 spans: exactly one step in >= 85 of 100 (%d)", one);
    TAP_OK(covered >= 75, "0.3 %% -> 3 %% of 10 spans: its interval covers the jump in >= 75 (%d)",
           covered);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        for (uint64_t seed = 1; seed <= 4; seed++)
            run(&scenarios[i], seed);
    test_cost_choice();
    test_min_confidence();
    test_interval();
    test_false_alarms();
    test_sparse_rates();
    test_error_jump();
    return tap_done();
}

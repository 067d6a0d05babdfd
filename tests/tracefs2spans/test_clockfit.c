/* Unit tests: tracefs2spans/clockfit.c on synthetic two-clock data (seeded PRNG).
 *
 * y = x + theta + skew*(x - x0) + d: 600 s of pairs every 100 ms, skew 37 ppm, d one-sided
 * lognormal (median 50 us), 1 % of the pairs mismatched (paired with another span's y),
 * x quantised to the microsecond as tracefs text is.  The fit must recover the skew
 * within 0.1 ppm and the offset within 10 us over the whole range; steps must be found
 * where they are and nowhere else.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../tracefs2spans/t2s.h"
#include "tap.h"

struct rng {
    uint64_t s;
};

static double uniform(struct rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static double normal(struct rng *r)
{
    double u = uniform(r), v = uniform(r);
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(2 * M_PI * v);
}

#define X0    1000000000000LL       /* 1000 s of uptime */
#define THETA 1764000000123456789LL /* realtime - monotonic */

struct scenario {
    double skew_ppm;
    double seconds, every_ms;
    double mismatch;  /* share of mismatched pairs */
    int sign;         /* +1 delays after (lower envelope), -1 before */
    double step_at_s; /* 0: no step */
    int64_t step_ns;
    uint64_t seed;
};

static double truth(const struct scenario *s, int64_t x)
{
    double off = (double)THETA + s->skew_ppm * 1e-6 * (double)(x - X0);
    if (s->step_at_s > 0 && x >= X0 + (int64_t)(s->step_at_s * 1e9))
        off += (double)s->step_ns;
    return off;
}

static size_t make_pairs(const struct scenario *s, struct cf_pair **out)
{
    size_t n = (size_t)(s->seconds * 1000 / s->every_ms);
    struct cf_pair *p = malloc(n * sizeof(*p));
    struct rng r = {s->seed * 0x9e3779b97f4a7c15ull ^ 0xd1b54a32d192ed03ull};

    for (size_t i = 0; i < n; i++) {
        int64_t x = X0 + (int64_t)((double)i * s->every_ms * 1e6 + uniform(&r) * 5e6);
        double d = exp(log(50e3) + normal(&r));
        p[i].x = x / 1000 * 1000; /* tracefs text: microseconds */
        p[i].y = x + (int64_t)llround(truth(s, x) + s->sign * d);
    }
    for (size_t i = 0; i < n; i++) {
        if (uniform(&r) < s->mismatch) {
            size_t j = (size_t)(uniform(&r) * (double)n);
            int64_t t = p[i].y;
            p[i].y = p[j].y;
            p[j].y = t;
        }
    }
    *out = p;
    return n;
}

/* Largest |fit - truth| over the segment's x range (sampled every second). */
static double max_err(const struct scenario *s, const struct cf_segment *g)
{
    double worst = 0;

    for (int64_t x = g->x_from; x <= g->x_to; x += 100000000) {
        /* a point right at a step may fall on either side: not a fit error */
        if (s->step_at_s > 0 && llabs(x - X0 - (int64_t)(s->step_at_s * 1e9)) < 500000000)
            continue;
        double fit = (double)g->offset_ns + g->skew_ppm * 1e-6 * (double)(x - g->ref_ns);
        double e = fabs(fit - truth(s, x));
        worst = e > worst ? e : worst;
    }
    return worst;
}

static void fit(const struct scenario *s, const struct cf_opts *o, struct cf_result *r)
{
    struct cf_pair *p;
    size_t n = make_pairs(s, &p);
    struct sf_err err;

    TAP_EQ_INT(clockfit_fit(p, n, o, r, &err), 0, "fit %zu pairs (seed %llu)", n,
               (unsigned long long)s->seed);
    free(p);
}

static void test_skew_600s(void)
{
    struct cf_opts o;
    struct cf_result r;

    clockfit_defaults(&o);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct scenario s = {37, 600, 100, 0.01, +1, 0, 0, seed * 7919};
        fit(&s, &o, &r);
        TAP_EQ_INT(r.nseg, 1, "no step found where there is none (seed %llu)",
                   (unsigned long long)seed);
        TAP_OK(fabs(r.seg[0].skew_ppm - 37) < 0.1, "skew %.4f ppm within 0.1 of 37",
               r.seg[0].skew_ppm);
        double e = max_err(&s, &r.seg[0]);
        TAP_OK(e < 10000, "offset within 10 us over 600 s (worst %.0f ns)", e);
        TAP_OK(r.dropped >= 30, "mismatched pairs trimmed (%zu)", r.dropped);
        TAP_OK(!r.seg[0].upper && r.seg[0].skew_fitted, "lower envelope, skew fitted");
    }
}

static void test_upper_envelope(void)
{
    struct cf_opts o;
    struct cf_result r;
    struct scenario s = {-12.5, 600, 100, 0.01, -1, 0, 0, 4242};

    clockfit_defaults(&o);
    fit(&s, &o, &r);
    TAP_OK(r.nseg == 1 && r.seg[0].upper, "delays before the marker: upper envelope");
    TAP_OK(fabs(r.seg[0].skew_ppm + 12.5) < 0.1, "skew %.4f ppm within 0.1 of -12.5",
           r.seg[0].skew_ppm);
    TAP_OK(max_err(&s, &r.seg[0]) < 10000, "offset within 10 us (worst %.0f ns)",
           max_err(&s, &r.seg[0]));
}

static void test_step(void)
{
    struct cf_opts o;
    struct cf_result r;

    clockfit_defaults(&o);
    for (int i = 0; i < 6; i++) {
        int sign = i & 1 ? 1 : -1;
        double when = 150 + 60 * i;
        struct scenario s = {
            37, 600, 100, 0.01, +1, when, sign * (i < 2 ? 3000000 : 1000000), 99 + (uint64_t)i};
        fit(&s, &o, &r);
        TAP_EQ_INT(r.nseg, 2, "a %+.0f ms step gives two segments", (double)s.step_ns / 1e6);
        if (r.nseg != 2)
            continue;
        double at = (double)(r.seg[1].x_from - X0) / 1e9;
        TAP_OK(fabs(at - when) < 0.5, "step placed at %.3f s (true %.0f s)", at, when);
        for (int k = 0; k < 2; k++)
            TAP_OK(max_err(&s, &r.seg[k]) < 10000 && fabs(r.seg[k].skew_ppm - 37) < 0.2,
                   "segment %d: offset within 10 us (worst %.0f ns), skew %.3f ppm", k,
                   max_err(&s, &r.seg[k]), r.seg[k].skew_ppm);
    }
    o.detect_steps = 0;
    struct scenario s = {37, 600, 100, 0.01, +1, 300, 3000000, 5};
    fit(&s, &o, &r);
    TAP_EQ_INT(r.nseg, 1, "--no-steps: one segment");
}

static void test_offset_only(void)
{
    struct cf_opts o;
    struct cf_result r;
    struct scenario s = {0, 5, 25, 0.01, -1, 0, 0, 77};

    clockfit_defaults(&o);
    fit(&s, &o, &r);
    TAP_OK(r.nseg == 1 && !r.seg[0].skew_fitted && r.seg[0].skew_ppm == 0,
           "5 s of pairs: skew not fitted (auto), fixed at 0");
    TAP_OK(max_err(&s, &r.seg[0]) < 10000, "offset-only fit within 10 us (worst %.0f ns)",
           max_err(&s, &r.seg[0]));
    /* a short run between clocks of different rates (tracefs local vs realtime) */
    struct scenario s3 = {-45, 10, 20, 0.01, +1, 0, 0, 79};
    fit(&s3, &o, &r);
    TAP_OK(r.nseg == 1 && r.seg[0].skew_fitted && fabs(r.seg[0].skew_ppm + 45) < 2 &&
               max_err(&s3, &r.seg[0]) < 10000,
           "10 s at -45 ppm: skew fitted (auto) %.2f ppm, no false steps, offset within 10 us "
           "(worst %.0f ns)",
           r.seg[0].skew_ppm, max_err(&s3, &r.seg[0]));
    o.fit_skew = 0;
    o.fixed_skew_ppm = 37;
    struct scenario s2 = {37, 600, 100, 0.01, +1, 0, 0, 78};
    fit(&s2, &o, &r);
    TAP_OK(r.seg[0].skew_ppm == 37 && max_err(&s2, &r.seg[0]) < 10000,
           "skew given by hand (37 ppm): offset within 10 us (worst %.0f ns)",
           max_err(&s2, &r.seg[0]));
}

static void test_small(void)
{
    struct cf_opts o;
    struct cf_result r;
    struct cf_pair one = {100, 1000100};
    struct cf_pair two[2] = {{2000, 1002100}, {1000, 1001000}};
    struct sf_err err;

    clockfit_defaults(&o);
    TAP_EQ_INT(clockfit_fit(&one, 0, &o, &r, &err), SF_E_USAGE, "no pairs: usage error");
    TAP_EQ_INT(clockfit_fit(&one, 1, &o, &r, &err), 0, "one pair fits");
    TAP_EQ_INT(r.seg[0].offset_ns, 1000000, "one pair: offset = y - x");
    TAP_EQ_INT(clockfit_fit(two, 2, &o, &r, &err), 0, "two pairs fit");
    TAP_OK(two[0].x == 1000, "pairs sorted by x");
    struct cf_pair same[40], far[2] = {{INT64_MIN + 5, 10}, {INT64_MAX - 5, 10}};
    for (int i = 0; i < 40; i++)
        same[i] = (struct cf_pair){5000, 5000 + 1000 + (i * 7919) % 300};
    TAP_EQ_INT(clockfit_fit(same, 40, &o, &r, &err), 0, "40 pairs at one x fit");
    TAP_OK(r.nseg == 1 && r.seg[0].skew_ppm == 0 && r.seg[0].offset_ns >= 1000 &&
               r.seg[0].offset_ns < 1300,
           "one x: no slope, offset on the envelope (%lld)", (long long)r.seg[0].offset_ns);
    TAP_EQ_INT(clockfit_fit(far, 2, &o, &r, &err), SF_E_USAGE, "times 2^64 apart refused");
    double xs[] = {0, 1, 2, 3, 4}, ys[] = {1, 3, 5, 100, 9};
    TAP_OK(fabs(clockfit_theil_sen(xs, ys, 5, 1) - 2) < 1e-9, "Theil-Sen ignores an outlier");
}

int main(void)
{
    test_skew_600s();
    test_upper_envelope();
    test_step();
    test_offset_only();
    test_small();
    return tap_done();
}

/* Unit tests: lib/sf_explain (the drift decomposition on constructed windows) and
 * lib/sf_attrs (which headers are kept, baggage and tracestate members, bounds). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sf_attrs.h"
#include "sf_explain.h"
#include "sf_tracectx.h"
#include "tap.h"

static struct sf_explain_cell cell(uint64_t n, uint64_t k)
{
    struct sf_explain_cell c = {n, k};
    return c;
}

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd(uint64_t m)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % m;
}

/* The mix and rate parts add up to each value's change and, over a partition, to the
 * change of the kept share, exactly (up to rounding), on random windows. */
static void shapley_adds_up(void)
{
    int worst_ok = 1, total_ok = 1;

    for (int trial = 0; trial < 2000; trial++) {
        int nv = 1 + (int)rnd(6);
        struct sf_explain_cell v0[6], v1[6], t0 = {0, 0}, t1 = {0, 0};
        double sum = 0;
        for (int i = 0; i < nv; i++) {
            uint64_t n0 = rnd(4) ? rnd(500) : 0, n1 = rnd(4) ? rnd(500) : 0;
            v0[i] = cell(n0, n0 ? rnd(n0 + 1) : 0);
            v1[i] = cell(n1, n1 ? rnd(n1 + 1) : 0);
            t0.n += v0[i].n, t0.k += v0[i].k, t1.n += v1[i].n, t1.k += v1[i].k;
        }
        if (t0.n == 0 || t1.n == 0)
            continue;
        for (int i = 0; i < nv; i++) {
            double mix, rate, s0 = (double)v0[i].n / t0.n, s1 = (double)v1[i].n / t1.n;
            double r0 = v0[i].n ? (double)v0[i].k / v0[i].n : 0;
            double r1 = v1[i].n ? (double)v1[i].k / v1[i].n : 0;
            sf_explain_shapley(v0[i], v1[i], t0, t1, &mix, &rate);
            if (fabs(mix + rate - (s1 * r1 - s0 * r0)) > 1e-12)
                worst_ok = 0;
            sum += mix + rate;
        }
        if (fabs(sum - ((double)t1.k / t1.n - (double)t0.k / t0.n)) > 1e-12)
            total_ok = 0;
    }
    TAP_OK(worst_ok, "mix + rate = s1 r1 - s0 r0 for every value of 2000 random windows");
    TAP_OK(total_ok, "the parts of all values add up to the change of the kept share exactly");
}

static void measure(void)
{
    double z, e;

    /* a value new since took 78 % of the traffic and is never kept; the rest keeps its rate */
    e = sf_explain_part(cell(0, 0), cell(780, 0), cell(1000, 500), cell(1000, 110), &z);
    TAP_OK(e > 0.99 && z > 10, "a new value kept at 0 explains the whole drop (%.3f, z %.1f)", e,
           z);
    /* a uniform change: both values fall 0.5 -> 0.1 */
    e = sf_explain_part(cell(500, 250), cell(500, 50), cell(1000, 500), cell(1000, 100), &z);
    TAP_OK(fabs(e - 0.5) < 1e-9 && fabs(z) < 1e-9,
           "a uniform change: its share of traffic (%.3f) but no contrast (z %.2f)", e, z);
    /* a rate change in one half only */
    e = sf_explain_part(cell(500, 250), cell(500, 25), cell(1000, 500), cell(1000, 275), &z);
    TAP_OK(fabs(e - 1) < 1e-9 && z > 10, "a rate drop in one value only: all of it (%.3f)", e);
    e = sf_explain_part(cell(500, 250), cell(500, 250), cell(1000, 500), cell(1000, 275), &z);
    TAP_OK(e == 0 && z < 0, "the unchanged half explains nothing (z %.1f)", z);
    /* the old value that shrank is the baseline, never the explanation */
    e = sf_explain_part(cell(1000, 500), cell(220, 110), cell(1000, 500), cell(1000, 110), &z);
    TAP_OK(e == 0 && z == 0, "a value that was all of the before side is not named");
    /* a header that disappeared from every request at once: new value takes all */
    e = sf_explain_part(cell(0, 0), cell(1000, 50), cell(1000, 500), cell(1000, 50), &z);
    TAP_OK(e > 0.99 && z > 10, "a value new since that took all traffic explains it (z %.1f)", z);
    /* a value that was there before, took all after and fell with it: no contrast */
    e = sf_explain_part(cell(900, 450), cell(1000, 100), cell(1000, 500), cell(1000, 100), &z);
    TAP_OK(z == 0, "a known value that took all of the after side has nothing to contrast");
    /* few requests do not make a finding: 4 of 4 dropped against 40 % noise */
    e = sf_explain_part(cell(0, 0), cell(4, 0), cell(20, 10), cell(20, 6), &z);
    TAP_OK(z < SF_EXPLAIN_Z, "4 requests are not significant (z %.2f < %.1f)", z, SF_EXPLAIN_Z);
    TAP_OK(sf_explain_part(cell(0, 0), cell(10, 0), cell(0, 0), cell(10, 0), &z) == 0 && z == 0,
           "an empty side explains nothing");
}

struct got {
    char buf[2048];
    size_t len;
};

static int collect(void *arg, const char *key, const char *value)
{
    struct got *g = arg;
    int k = snprintf(g->buf + g->len, sizeof(g->buf) - g->len, "%s=%s|", key, value);
    if (k > 0 && (size_t)k < sizeof(g->buf) - g->len)
        g->len += (size_t)k;
    return 0;
}

static void attrs(void)
{
    struct sf_attrs_keep k;
    struct got g = {"", 0};
    char longv[400];

    sf_attrs_keep_default(&k);
    TAP_OK(sf_attrs_keep_match(&k, "User-Agent", 10), "user-agent is kept (any case)");
    TAP_OK(sf_attrs_keep_match(&k, "X-Envoy-Downstream-Service-Cluster", 34),
           "x-envoy-* keeps a prefix");
    TAP_OK(!sf_attrs_keep_match(&k, "x-envoy-", 8), "a prefix alone is not a name");
    TAP_OK(!sf_attrs_keep_match(&k, "accept", 6), "accept is not kept by default");
    TAP_EQ_INT(sf_attrs_keep_add(&k, "X-Tenant"), 0, "--keep-header X-Tenant");
    TAP_OK(sf_attrs_keep_match(&k, "x-tenant", 8), "then x-tenant is kept");
    TAP_EQ_INT(sf_attrs_keep_add(&k, "bad name"), -1, "a name with a space is refused");
    TAP_EQ_INT(sf_attrs_keep_add(&k, "*"), -1, "a bare '*' is refused");

    sf_attrs_baggage(" env = prod-legacy ;ttl=1, tenant=t2,,bad, =x", collect, &g);
    TAP_EQ_STR(g.buf, "baggage.env=prod-legacy|baggage.tenant=t2|",
               "baggage members: OWS and properties dropped, keyless and valueless skipped");
    g.len = 0;
    g.buf[0] = 0;
    sf_attrs_tracestate("ot=th:8,vendor=a1", collect, &g);
    TAP_EQ_STR(g.buf, "tracestate.ot=th:8|tracestate.vendor=a1|", "tracestate members");
    g.len = 0;
    memset(longv, 'v', sizeof(longv));
    longv[3] = '\n';
    sf_attrs_one("header.", "x-long", 6, longv, sizeof(longv), collect, &g);
    TAP_OK(g.len == strlen("header.x-long=") + SF_ATTR_VALUE_MAX - 1 + 1 &&
               strncmp(g.buf, "header.x-long=vvv?", 18) == 0,
           "a value is cut at %d bytes and a control byte becomes '?'", SF_ATTR_VALUE_MAX - 1);
}

static void kept_headers(void)
{
    struct sf_tracectx_set s;
    const char *n, *v;
    size_t pos = 0, count = 0;
    char big[200];

    sf_tracectx_set_init(&s);
    sf_tracectx_set_keep(&s, "User-Agent", 10, (const uint8_t *)"curl/8", 6);
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 20; i++)
        sf_tracectx_set_keep(&s, "X-Envoy-Big", 11, (const uint8_t *)big, sizeof(big));
    TAP_OK(sf_tracectx_kept_next(&s, &pos, &n, &v) && strcmp(n, "user-agent") == 0 &&
               strcmp(v, "curl/8") == 0,
           "a kept header: name lowercased, value as sent");
    while (sf_tracectx_kept_next(&s, &pos, &n, &v))
        count += strlen(v) == 128;
    TAP_OK(count == 7 && s.kept_dropped == 13,
           "values cut at 128 bytes, 1 KiB a request: 7 kept, 13 counted as dropped (%zu, %d)",
           count, s.kept_dropped);
    sf_tracectx_set_init(&s);
    pos = 0;
    TAP_OK(!sf_tracectx_kept_next(&s, &pos, &n, &v), "init forgets the kept headers");
}

static struct sf_explain_item item(const char *attr, const char *value, double s0, double s1,
                                   double k0, double k1, double e)
{
    struct sf_explain_item it;

    memset(&it, 0, sizeof(it));
    snprintf(it.attribute, sizeof(it.attribute), "%s", attr);
    snprintf(it.value, sizeof(it.value), "%s", value);
    it.share_before = s0, it.share_after = s1, it.kept_before = k0, it.kept_after = k1;
    it.explained = e;
    it.z = 5;
    return it;
}

static void words(void)
{
    struct sf_explain ex;
    char w[600];

    memset(&ex, 0, sizeof(ex));
    ex.before.n = 3, ex.after.n = 400;
    sf_explain_words(&ex, 1, w, sizeof(w));
    TAP_EQ_STR(w, "too few traces to tell why (3 before the change, 400 after)",
               "too few traces: says so, claims nothing");
    ex.before.n = 400;
    sf_explain_words(&ex, 1, w, sizeof(w));
    TAP_OK(strstr(w, "no single attribute explains the drop; the rate fell uniformly") == w,
           "nothing named: a uniform change (%.300s)", w);
    ex.items[0] = item("decision", "service", 0.25, 0.8, 0.5, 0.1, 0.9);
    ex.n = 1;
    sf_explain_words(&ex, 1, w, sizeof(w));
    TAP_OK(strstr(w, "90 % of the drop is in the service's own sampling decisions") == w &&
               strstr(w, "share of traffic rose 25 % \xe2\x86\x92 80 %") && !strstr(w, "uniformly"),
           "who decides changed (a client stopped sending the flag): not called uniform (%.300s)",
           w);
    ex.items[0] = item("decision", "upstream:traceparent", 0.25, 0.26, 0.5, 0.1, 0.9);
    sf_explain_words(&ex, 1, w, sizeof(w));
    TAP_OK(strstr(w, "in the decisions made upstream (traceparent's sampled flag); no single") &&
               strstr(w, "uniformly"),
           "the upstream's own rate fell: named, then uniform within (%.300s)", w);
    ex.items[1] = item("baggage.env", "prod-legacy", 0, 0.78, NAN, 0, 0.94);
    ex.n = 2;
    sf_explain_words(&ex, 1, w, sizeof(w));
    TAP_OK(strstr(w,
                  "94 % of the drop is requests with baggage.env = prod-legacy, kept 0.00 "
                  "after (none before); their share of traffic rose 0 % \xe2\x86\x92 78 %") != NULL,
           "an attribute value named with its shares (%.300s)", w);
}

int main(void)
{
    shapley_adds_up();
    measure();
    attrs();
    kept_headers();
    words();
    return tap_done();
}

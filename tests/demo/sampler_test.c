/* sampler_test.c - the demo service's head sampler and circuit breaker
 * (samples/demo-service/sampler.c), built and run by t_sampler.sh.  TAP output. */
#include <math.h>

#include "demo.h"
#include "tap.h"

#define S 1000000000LL

static struct sf_tracectx_set none; /* a request without baggage or kept headers */

static double share_of(struct demo_sampler *s, const struct sf_tracectx_set *tc, int64_t now, int n)
{
    int kept = 0;
    for (int i = 0; i < n; i++)
        kept += demo_sampler_decide(s, tc, -1, now);
    return (double)kept / n;
}

static double share(struct demo_sampler *s, int64_t now, int n)
{
    return share_of(s, &none, now, n);
}

/* The failure-mode rules: a baggage member dropped, a header-keyed rate. */
static void rules(void)
{
    struct demo_sampler s;
    struct sf_tracectx_set legacy, prod, with_hdr;
    static const char bl[] = "env=prod-legacy,tenant=t1", bp[] = "env=prod, tenant=t1";

    sf_tracectx_set_init(&legacy);
    sf_tracectx_set_add(&legacy, "baggage", 7, (const uint8_t *)bl, sizeof(bl) - 1);
    sf_tracectx_set_finish(&legacy);
    sf_tracectx_set_init(&prod);
    sf_tracectx_set_add(&prod, "baggage", 7, (const uint8_t *)bp, sizeof(bp) - 1);
    sf_tracectx_set_finish(&prod);
    sf_tracectx_set_init(&with_hdr);
    sf_tracectx_set_keep(&with_hdr, "X-Envoy-Downstream-Service-Cluster", 34,
                         (const uint8_t *)"web", 3);
    sf_tracectx_set_finish(&with_hdr);

    demo_sampler_init(&s, 0.5);
    TAP_OK(demo_sampler_rule(&s, "drop-baggage", "env=prod-legacy") == 0, "--drop-baggage K=V");
    TAP_OK(share_of(&s, &legacy, 0, 10000) == 0, "a request with env=prod-legacy is dropped");
    TAP_OK(fabs(share_of(&s, &prod, 0, 100000) - 0.5) < 0.01, "env=prod keeps the rate (0.5)");
    TAP_OK(demo_sampler_decide(&s, &legacy, 1, 0) == 1, "a parent's flag still wins");

    demo_sampler_init(&s, 0.5);
    TAP_OK(demo_sampler_rule(&s, "rate-header", "x-envoy-downstream-service-cluster=0.05") == 0,
           "--rate-header H=R");
    TAP_OK(fabs(share_of(&s, &with_hdr, 0, 100000) - 0.5) < 0.01,
           "with the header: the rate (0.5)");
    TAP_OK(fabs(share(&s, 0, 100000) - 0.05) < 0.005, "without it: the fallback (0.05)");
    TAP_OK(demo_sampler_rule(&s, "rate-header", "x=2") < 0 &&
               demo_sampler_rule(&s, "drop-baggage", "novalue") < 0,
           "a rate over 1 or a rule without '=' is refused");
}

int main(void)
{
    struct demo_sampler s;
    double p;

    demo_sampler_init(&s, 0.5);
    sf_tracectx_set_init(&none);
    TAP_OK(demo_sampler_decide(&s, &none, 1, 0) == 1 && demo_sampler_decide(&s, &none, 0, 0) == 0,
           "a parent's sampled flag is honoured");
    p = share(&s, 0, 100000);
    TAP_OK(fabs(p - 0.5) < 0.01, "deferred decisions keep about the rate (0.5)");
    s.rate = 0.1;
    p = share(&s, 0, 100000);
    TAP_OK(fabs(p - 0.1) < 0.01, "a changed rate applies at once (0.1)");

    /* latency: 15 slow spans do not open it (fewer than 16), the 16th does */
    demo_sampler_init(&s, 0.5);
    for (int i = 0; i < 15; i++)
        demo_sampler_record(&s, 1000, 0, 10 * S);
    TAP_OK(s.open_until == 0, "the breaker needs 16 spans before it judges");
    demo_sampler_record(&s, 1000, 0, 10 * S);
    TAP_OK(s.open_until == 15 * S && s.opened == 1, "mean latency over 250 ms opens it for 5 s");
    TAP_OK(fabs(demo_sampler_effective(&s, 12 * S) - 0.05) < 1e-12,
           "while open the effective rate is rate x 0.1");
    p = share(&s, 12 * S, 100000);
    TAP_OK(fabs(p - 0.05) < 0.005, "and deferred decisions follow it");
    TAP_OK(demo_sampler_decide(&s, &none, 1, 12 * S) == 1, "a parent's flag still wins while open");
    TAP_OK(demo_sampler_effective(&s, 15 * S) == 0.5, "it closes when the 5 s are over");
    demo_sampler_record(&s, 1, 0, 16 * S);
    TAP_OK(s.open_until == 0 && s.ring_n == 1, "closing forgets the old spans");

    /* errors: 25 % is not over the threshold, 5 of 16 is */
    demo_sampler_init(&s, 0.5);
    for (int i = 0; i < 16; i++)
        demo_sampler_record(&s, 1, i % 4 == 0, 0);
    TAP_OK(s.open_until == 0, "an error share of exactly 25 %% keeps it closed");
    demo_sampler_init(&s, 0.5);
    for (int i = 0; i < 16; i++)
        demo_sampler_record(&s, 1, i % 3 == 0, S);
    TAP_OK(s.open_until == 6 * S, "an error share over 25 %% opens it");
    rules();
    return tap_done();
}

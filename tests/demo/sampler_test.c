/* sampler_test.c - the demo service's head sampler and circuit breaker
 * (samples/demo-service/sampler.c), built and run by t_sampler.sh.  TAP output. */
#include <math.h>

#include "demo.h"
#include "tap.h"

#define S 1000000000LL

static double share(struct demo_sampler *s, int64_t now, int n)
{
    int kept = 0;
    for (int i = 0; i < n; i++)
        kept += demo_sampler_decide(s, -1, now);
    return (double)kept / n;
}

int main(void)
{
    struct demo_sampler s;
    double p;

    demo_sampler_init(&s, 0.5);
    TAP_OK(demo_sampler_decide(&s, 1, 0) == 1 && demo_sampler_decide(&s, 0, 0) == 0,
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
    TAP_OK(demo_sampler_decide(&s, 1, 12 * S) == 1, "a parent's flag still wins while open");
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
    return tap_done();
}

/* sampler.c - the demo service's head sampler and its circuit breaker.
 *
 * Decision (per request, made where the span begins):
 *   - the request's preferred trace context carried a sampled flag (traceparent
 *     flags, X-B3-Sampled, b3 "-1"/"-0", grpc-trace-bin options): honour it;
 *   - else (B3 without a sampling state: the decision is deferred to us): keep when
 *     a uniform draw in [0, 1) is below the effective rate.
 * Rules (off by default; each a failure mode a drift explanation must find):
 *   --drop-baggage K=V   a deferred request whose baggage has member K=V is dropped
 *   --rate-header H=R    a deferred request without header H is kept at rate R (a
 *                        rate keyed on a header a proxy adds, falling back to R)
 * Effective rate = configured rate, or rate x open_factor while the breaker is open.
 * Breaker: over the last DEMO_RING finished spans (once at least 16 are in), when the
 * mean handling latency exceeds lat_ms or the error share exceeds err_share, it opens
 * for open_ns; when that time is over it closes and forgets the ring, so it judges
 * fresh spans only.  Defaults (main.c): rate 0.5, 250 ms, 25 %, x0.1, 5 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "demo.h"
#include "sf_attrs.h"

int64_t demo_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void demo_sampler_init(struct demo_sampler *s, double rate)
{
    memset(s, 0, sizeof(*s));
    s->rate = rate;
    s->lat_ms = 250;
    s->err_share = 0.25;
    s->open_factor = 0.1;
    s->open_ns = 5000000000LL;
    s->rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)demo_now_ns();
}

static double draw(struct demo_sampler *s)
{
    /* xorshift64*: good enough for a sampling coin, and no shared libc state */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return (double)((s->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

double demo_sampler_effective(const struct demo_sampler *s, int64_t now_ns)
{
    return s->open_until > now_ns ? s->rate * s->open_factor : s->rate;
}

int demo_sampler_rule(struct demo_sampler *s, const char *opt, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *end;

    if (eq == NULL || eq == arg || (size_t)(eq - arg) >= sizeof(s->drop_key))
        return -1;
    if (strcmp(opt, "drop-baggage") == 0) {
        snprintf(s->drop_key, sizeof(s->drop_key), "baggage.%.*s", (int)(eq - arg), arg);
        snprintf(s->drop_val, sizeof(s->drop_val), "%s", eq + 1);
        return 0;
    }
    snprintf(s->rate_hdr, sizeof(s->rate_hdr), "%.*s", (int)(eq - arg), arg);
    s->rate_absent = strtod(eq + 1, &end);
    return end != eq + 1 && *end == 0 && s->rate_absent >= 0 && s->rate_absent <= 1 ? 0 : -1;
}

static int is_drop_member(void *arg, const char *key, const char *value)
{
    const struct demo_sampler *s = arg;
    return strcmp(key, s->drop_key) == 0 && strcmp(value, s->drop_val) == 0;
}

/* The rate the rules give this request, or the effective rate. */
static double rule_rate(const struct demo_sampler *s, const struct sf_tracectx_set *tc,
                        int64_t now_ns)
{
    if (s->drop_key[0])
        for (int i = 0; i < tc->n; i++)
            if (tc->ctx[i].format == SF_CTX_BAGGAGE &&
                sf_attrs_baggage(tc->ctx[i].raw, is_drop_member, (void *)s))
                return 0;
    if (s->rate_hdr[0]) {
        size_t pos = 0;
        const char *n, *v;
        while (sf_tracectx_kept_next(tc, &pos, &n, &v))
            if (strcasecmp(n, s->rate_hdr) == 0)
                return demo_sampler_effective(s, now_ns);
        return s->rate_absent;
    }
    return demo_sampler_effective(s, now_ns);
}

int demo_sampler_decide(struct demo_sampler *s, const struct sf_tracectx_set *tc,
                        int parent_sampled, int64_t now_ns)
{
    if (parent_sampled >= 0)
        return parent_sampled > 0;
    return draw(s) < rule_rate(s, tc, now_ns);
}

void demo_sampler_record(struct demo_sampler *s, double lat_ms, int error, int64_t now_ns)
{
    double sum = 0;
    unsigned errs = 0;

    if (s->open_until && s->open_until <= now_ns) {
        s->open_until = 0; /* closed again: judge fresh spans only */
        s->ring_n = s->ring_pos = 0;
    }
    s->ring_lat[s->ring_pos] = lat_ms;
    s->ring_err[s->ring_pos] = error != 0;
    s->ring_pos = (s->ring_pos + 1) % DEMO_RING;
    if (s->ring_n < DEMO_RING)
        s->ring_n++;
    if (s->open_until || s->ring_n < 16)
        return;
    for (unsigned i = 0; i < s->ring_n; i++) {
        sum += s->ring_lat[i];
        errs += s->ring_err[i];
    }
    if (sum / s->ring_n > s->lat_ms || (double)errs / s->ring_n > s->err_share) {
        s->open_until = now_ns + s->open_ns;
        s->opened++;
    }
}

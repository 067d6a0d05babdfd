/* report_cpuq.c - the CPU-per-request rule: the work per request grew, not the load.
 *
 * Per endpoint and stored window: the attributed clock samples (ns) of the spans that
 * started in it, over their number, in ms, as a series, and the detector (inflect's
 * default, as for every other series of the report) on it.  A step or ramp up of at
 * least RP_CPUQ_RISE is a finding when the request rate of the same windows did not
 * rise by more than RP_CPUQ_FLAT: a sampler that starts keeping more, a cache that
 * stopped hitting, a regex that backtracks.  More load with the same CPU per request
 * is capacity, not this.  Endpoints without attributed samples have no series.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The stored window of a span that started at t (the spans' clock), or SIZE_MAX for one
 * outside every stored window (an outlier, a cut gap). */
static size_t window_of(const struct rp_ctx *c, int64_t t)
{
    size_t w = rp_win_of(c, t);
    int64_t start = sf_spans_window_start(&c->sw, w);

    return t >= start && t - start < c->sw.window_ns ? w : SIZE_MAX;
}

/* Mean requests per second of group g over the stored windows [a, b). */
static double qps(const struct rp_ctx *c, size_t g, size_t a, size_t b)
{
    double sum = 0;

    for (size_t w = a; w < b; w++)
        sum += (double)c->sw.g[g].spans[w];
    return b > a ? sum / (double)(b - a) / ((double)c->sw.window_ns / 1e9) : NAN;
}

static int push_finding(struct rp_ctx *c, const struct rp_cpuq *f)
{
    struct rp_cpuq *p = realloc(c->cpuqs, (c->ncpuqs + 1) * sizeof(*p));

    if (p == NULL)
        return -1;
    c->cpuqs = p;
    c->cpuqs[c->ncpuqs++] = *f;
    return 0;
}

/* Group g's series and its findings. */
static int one_group(struct rp_ctx *c, size_t g, double *cpu, uint64_t *n)
{
    const size_t *ix = c->by_group + c->group_at[g];
    size_t ns = c->group_at[g + 1] - c->group_at[g], nw = c->sw.nwin;
    struct inflect_series s;
    struct inflect_result r;
    double total = 0;
    int rc = 0;

    memset(cpu, 0, nw * sizeof(*cpu));
    memset(n, 0, nw * sizeof(*n));
    for (size_t k = 0; k < ns; k++) {
        const struct rp_span *sp = &c->spans[ix[k]];
        size_t w = sp->kept ? window_of(c, sp->start_ns) : SIZE_MAX;
        if (w == SIZE_MAX)
            continue;
        cpu[w] += sp->cpu_ns;
        n[w]++;
        total += sp->cpu_ns;
    }
    if (total <= 0)
        return 0;
    memset(&s, 0, sizeof(s));
    memset(&r, 0, sizeof(r));
    snprintf(s.name, sizeof(s.name), "%.80s/cpu_per_request", c->sw.g[g].name);
    for (size_t w = 0; w < nw && rc == 0; w++)
        if (n[w])
            rc = series_push(&s, (double)sf_spans_window_start(&c->sw, w) / 1e9,
                             cpu[w] / (double)n[w] / 1e6, w, NULL);
    r.s = &s;
    if (rc == 0 && s.n >= 4)
        rc = inflect_analyse(&c->ictx, &r);
    for (size_t i = 0; rc == 0 && i < r.npts; i++) {
        const struct cp_point *p = &r.pts[i];
        size_t w = s.row[p->index];
        size_t from = i ? s.row[r.pts[i - 1].index] : 0;
        size_t to = i + 1 < r.npts ? s.row[r.pts[i + 1].index] : nw;
        struct rp_cpuq f;
        if (p->kind == CP_SPIKE || !(p->after >= p->before * (1 + RP_CPUQ_RISE)) || p->after <= 0)
            continue;
        f.group = g;
        f.kind = p->kind;
        f.time_ns = rp_win_time(c, w);
        f.before_ms = p->before;
        f.after_ms = p->after;
        f.qps_before = qps(c, g, from, w);
        f.qps_after = qps(c, g, w, to);
        if (f.qps_after > f.qps_before * (1 + RP_CPUQ_FLAT))
            continue; /* the load grew too: not this rule's */
        rc = push_finding(c, &f);
    }
    inflect_result_free(&r);
    series_free(&s);
    return rc;
}

int rp_cpu_rule(struct rp_ctx *c)
{
    double *cpu;
    uint64_t *n;
    int rc = 0;

    if (!c->have_cpu || c->sw.nwin == 0)
        return 0;
    cpu = malloc(c->sw.nwin * sizeof(*cpu));
    n = malloc(c->sw.nwin * sizeof(*n));
    if (cpu == NULL || n == NULL)
        rc = -1;
    for (size_t g = 0; rc == 0 && g < c->sw.ng; g++)
        rc = one_group(c, g, cpu, n);
    free(cpu);
    free(n);
    return rc;
}

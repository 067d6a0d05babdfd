/* report_json.c - spanfold report's findings.json, its wall-clock times and the
 * verdict in words (the page shows the same sentences).
 *
 * Shape (docs/spanfold.md, "spanfold report"):
 *   { input, window_s, tz, start_ns, start_utc, spans, verdict, notes[],
 *     endpoints[] {endpoint, spans, throughput_per_s, p50_ms, p95_ms, p99_ms, max_ms,
 *                  error_rate, kept_share},
 *     inflections[] {endpoint, metric, unit, kind, time_ns, time_utc, time, window,
 *                    refined, before, after, and for latency: cause, cause_share,
 *                    [cause_endpoint], breakdown {slow, normal} {spans, duration_ns,
 *                    cpu_ns, blocked_ns, downstream_ns, network_ns, unaccounted_ns,
 *                    downstream_by_endpoint[] {endpoint, ns}}},
 *     slow[] {endpoint, spans, latency_from_ms, samples, top_functions[] {name, share}},
 *     regressions[] {name, slow_share, rest_share},
 *     slowest[] {endpoint, span_id, time_ns, time_utc, time, duration_ms, request_ms,
 *                server_ms, response_ms, cpu_ms},
 *     drift[] {endpoint, configured, expect_rate, from_rate, to_rate, direction,
 *              time_ns, time_utc, time, explanation, decided_by, trials_before,
 *              trials_after, values_pooled, explained_by[] {attribute, value, share_before,
 * share_after, kept_before, kept_after, explained, mix, rate, trials_before, trials_after, z}},
 *     cpu_per_request[] {endpoint, kind, time_ns, time_utc, time, before_ms, after_ms,
 *                        qps_before, qps_after},
 *     clock_fits[] {from, to, segments, offset_ns, skew_ppm, residual_rms_ns},
 *     tls {connections, tls, decrypted, versions, ciphers, alpn, sni, early_data_*},
 *     coverage[] {pid, comm, samples, by_markers, by_sockets, by_event_loop, by_goroutine, shared,
 *                 unattributed} }
 * time_ns is CLOCK_REALTIME ns; time_utc its ISO 8601 text in UTC, time in --tz.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "sf_json.h"

char *rp_time_text(char *buf, size_t n, int64_t ns, const char *tz)
{
    time_t s = (time_t)(ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000);
    int ms = (int)((ns - (int64_t)s * 1000000000) / 1000000);
    struct tm tm;
    char date[40], off[8];
    int utc = tz == NULL || strcmp(tz, "UTC") == 0;

    if (utc ? gmtime_r(&s, &tm) == NULL : localtime_r(&s, &tm) == NULL) {
        snprintf(buf, n, "?");
        return buf;
    }
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    if (utc) {
        snprintf(buf, n, "%s.%03dZ", date, ms);
    } else {
        strftime(off, sizeof(off), "%z", &tm); /* +0100 -> +01:00 */
        snprintf(buf, n, "%s.%03d%.3s:%.2s", date, ms, off, off + 3);
    }
    return buf;
}

/* "12:03:14 UTC" (or the zone's abbreviation): the short form the verdict uses. */
static char *clock_text(char *buf, size_t n, int64_t ns, const char *tz)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    char hms[16], zone[16];
    int utc = tz == NULL || strcmp(tz, "UTC") == 0;

    if (utc ? gmtime_r(&s, &tm) == NULL : localtime_r(&s, &tm) == NULL) {
        snprintf(buf, n, "?");
        return buf;
    }
    strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
    strftime(zone, sizeof(zone), "%Z", &tm);
    snprintf(buf, n, "%s %s", hms, utc ? "UTC" : zone);
    return buf;
}

static const char *metric_unit(enum sf_span_metric m)
{
    switch (m) {
    case SF_M_P50:
    case SF_M_P95:
    case SF_M_P99:
    case SF_M_MAX:
        return "ms";
    case SF_M_THROUGHPUT:
        return "1/s";
    case SF_M_ERROR_RATE:
    case SF_M_SAMPLED_SHARE:
        return "share";
    default:
        return "";
    }
}

/* "on CPU (14.2 -> 61.0 ms a request)": part `cause` of y in words, into buf at *at. */
static void part_words(const struct rp_ctx *c, const struct rp_why *y, enum rp_cause cause,
                       char *buf, size_t n, size_t *at)
{
    const struct rp_breakdown *a = &y->normal, *b = &y->slow;
    double from, to;
    int k;

    if (*at >= n)
        return;
    switch (cause) {
    case RP_CAUSE_CPU:
        from = a->cpu_ns, to = b->cpu_ns;
        break;
    case RP_CAUSE_BLOCKED:
        from = a->blocked_ns, to = b->blocked_ns;
        break;
    case RP_CAUSE_NETWORK:
        from = a->network_ns, to = b->network_ns;
        break;
    case RP_CAUSE_DOWNSTREAM:
        from = a->downstream_ns, to = b->downstream_ns;
        break;
    default:
        from = a->unaccounted_ns, to = b->unaccounted_ns;
        break;
    }
    k = snprintf(buf + *at, n - *at, "%s%s%s (%.1f \xe2\x86\x92 %.1f ms a request)",
                 cause == RP_CAUSE_CPU          ? "on CPU"
                 : cause == RP_CAUSE_BLOCKED    ? "blocked off CPU"
                 : cause == RP_CAUSE_NETWORK    ? "in the network (transfer, retransmissions)"
                 : cause == RP_CAUSE_DOWNSTREAM ? "waiting on a downstream call"
                 : y->offcpu                    ? "unaccounted (queued or unsampled)"
                                                : "unaccounted (off CPU, queued or unsampled)",
                 cause == RP_CAUSE_DOWNSTREAM && y->ep != SIZE_MAX    ? " to "
                 : cause == RP_CAUSE_BLOCKED && y->reason != SIZE_MAX ? " in "
                                                                      : "",
                 cause == RP_CAUSE_DOWNSTREAM && y->ep != SIZE_MAX    ? c->cause_eps[y->ep]
                 : cause == RP_CAUSE_BLOCKED && y->reason != SIZE_MAX ? c->cause_reasons[y->reason]
                                                                      : "",
                 from / 1e6, to / 1e6);
    if (k > 0)
        *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
}

/* "; 91 % of the added time is on CPU (14.2 -> 61.0 ms a request)[, and 30 % ...]" and
 * the network's evidence into buf at *at. */
static void why_words(const struct rp_ctx *c, const struct rp_why *y, char *buf, size_t n,
                      size_t *at)
{
    const struct rp_breakdown *a, *b;
    int k;

    if (y == NULL || y->cause == RP_CAUSE_NONE || *at >= n)
        return;
    a = &y->normal;
    b = &y->slow;
    k = snprintf(buf + *at, n - *at, "; %.0f %% of the added time is ", 100 * y->share);
    if (k > 0)
        *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
    part_words(c, y, y->cause, buf, n, at);
    if (y->cause2 != RP_CAUSE_NONE && *at < n) { /* a mixed slowdown: both named */
        k = snprintf(buf + *at, n - *at, ", and %.0f %% ", 100 * y->share2);
        if (k > 0)
            *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
        part_words(c, y, y->cause2, buf, n, at);
    }
    /* the network's evidence: the retransmissions that stalled the slow requests */
    if (y->cause == RP_CAUSE_NETWORK && b->retransmits > a->retransmits && *at < n) {
        k = snprintf(buf + *at, n - *at,
                     ", %.2f TCP retransmissions a request (%.2f before) stalling it %.1f ms",
                     b->retransmits, a->retransmits, b->retransmit_stall_ns / 1e6);
        if (k > 0)
            *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
    }
    if (y->cause == RP_CAUSE_NETWORK && b->handshake_ns > 1.5 * a->handshake_ns &&
        b->handshake_ns > 1e6 && *at < n) {
        k = snprintf(buf + *at, n - *at, ", TCP and TLS handshakes %.1f ms a request (%.1f before)",
                     b->handshake_ns / 1e6, a->handshake_ns / 1e6);
        if (k > 0)
            *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
    }
    if (y->cause == RP_CAUSE_NETWORK && b->zero_windows > a->zero_windows && *at < n) {
        k = snprintf(buf + *at, n - *at,
                     ", %.2f zero receive windows a request (%.2f before) stalling it %.1f ms",
                     b->zero_windows, a->zero_windows, b->zero_window_stall_ns / 1e6);
        if (k > 0)
            *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
    }
    if (y->cause != RP_CAUSE_UNACCOUNTED && y->unaccounted_share >= 0.2 && *at < n) {
        k = snprintf(buf + *at, n - *at, ", %.0f %% unaccounted (off CPU, queued or unsampled)",
                     100 * y->unaccounted_share);
        if (k > 0)
            *at = *at + (size_t)k < n ? *at + (size_t)k : n - 1;
    }
}

void rp_verdict(const struct rp_ctx *c, char *buf, size_t n)
{
    long h = rp_headline(c);
    size_t at = 0;
    char t[48];
    const struct rp_slow *sl = NULL;

#define ADD(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(buf + at, at < n ? n - at : 0, __VA_ARGS__);                             \
        if (k_ > 0)                                                                                \
            at = at + (size_t)k_ < n ? at + (size_t)k_ : n - 1;                                    \
    } while (0)
    buf[0] = 0;
    if (h >= 0) {
        const struct rp_cp *p = &c->cps[h];
        ADD("%s %s %s %.0f \xe2\x86\x92 %.0f ms at %s", c->sw.g[p->group].name,
            sf_spans_metric_name(p->metric), p->after > p->before ? "rose" : "fell", p->before,
            p->after, clock_text(t, sizeof(t), p->time_ns, c->o.tz));
        why_words(c, rp_why_of(c, (size_t)h), buf, n, &at);
        sl = rp_slow_of(c, p->group);
        if (sl && sl->ntop)
            ADD("; %.0f %% of the slow requests' CPU is %s", 100 * sl->top[0].share,
                sl->top[0].name);
    } else if (c->sw.nspans) {
        ADD("no latency inflection in %llu spans over %.0f s", (unsigned long long)c->sw.nspans,
            rp_span_seconds(c));
        if (c->nregress)
            ADD("; %.0f %% of the slowest 5 %% of requests' CPU is %s", 100 * c->regress[0].share,
                c->regress[0].name);
    } else {
        ADD("no spans in the database");
    }
    for (size_t i = 0; i < c->ndrifts && i < 3; i++) {
        const struct rp_drift *d = &c->drifts[i];
        ADD("; the kept share of %s traces %s %.2f \xe2\x86\x92 %.2f at %s", c->sw.g[d->group].name,
            d->direction < 0 ? "fell" : "rose", d->from_rate, d->to_rate,
            clock_text(t, sizeof(t), d->time_ns, c->o.tz));
        if (d->explained) {
            char why[600];
            sf_explain_words(&d->ex, d->direction < 0, why, sizeof(why));
            ADD("; %s", why);
        }
    }
    if (c->ndrifts == 0 && c->sw.nspans)
        ADD("; no sampling drift");
    for (size_t i = 0; i < c->ncpuqs && i < 3; i++) {
        const struct rp_cpuq *q = &c->cpuqs[i];
        ADD("; CPU per request of %s rose %.3g \xe2\x86\x92 %.3g ms at %s while requests per "
            "second %s %.3g \xe2\x86\x92 %.3g",
            c->sw.g[q->group].name, q->before_ms, q->after_ms,
            clock_text(t, sizeof(t), q->time_ns, c->o.tz),
            q->qps_after < q->qps_before * 0.95 ? "fell" : "stayed", q->qps_before, q->qps_after);
    }
#undef ADD
}

static void json_time(struct sf_jw *w, const struct rp_ctx *c, int64_t ns)
{
    char t[64];
    sf_jw_int(w, "time_ns", ns);
    sf_jw_str(w, "time_utc", rp_time_text(t, sizeof(t), ns, NULL));
    sf_jw_str(w, "time", rp_time_text(t, sizeof(t), ns, c->o.tz));
}

static void json_endpoints(struct sf_jw *w, const struct rp_ctx *c)
{
    sf_jw_arr(w, "endpoints");
    for (size_t g = 0; g < c->sw.ng; g++) {
        struct rp_gstat st;
        rp_group_stats(c, g, &st);
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[g].name);
        sf_jw_int(w, "spans", (int64_t)st.spans);
        sf_jw_num(w, "throughput_per_s", st.rps);
        sf_jw_num(w, "p50_ms", st.p50);
        sf_jw_num(w, "p95_ms", st.p95);
        sf_jw_num(w, "p99_ms", st.p99);
        sf_jw_num(w, "max_ms", st.max);
        sf_jw_num(w, "error_rate", st.err);
        sf_jw_num(w, "kept_share", st.kept);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

/* key: [{name_key: names[i], "ns": ns[i]}, ...] for the parts that are not 0. */
static void by_name(struct sf_jw *w, const char *key, const char *name_key,
                    char (*names)[RP_NAME_MAX], size_t n, const double *ns)
{
    sf_jw_arr(w, key);
    for (size_t i = 0; i < n; i++) {
        if (!(ns[i] > 0))
            continue;
        sf_jw_obj(w, NULL);
        sf_jw_str(w, name_key, names[i]);
        sf_jw_num(w, "ns", round(ns[i]));
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_breakdown(struct sf_jw *w, const struct rp_ctx *c, const char *key,
                           const struct rp_breakdown *b, int offcpu)
{
    sf_jw_obj(w, key);
    sf_jw_int(w, "spans", (int64_t)b->spans);
    sf_jw_num(w, "duration_ns", round(b->dur_ns));
    sf_jw_num(w, "cpu_ns", round(b->cpu_ns));
    if (offcpu)
        sf_jw_num(w, "blocked_ns", round(b->blocked_ns));
    else
        sf_jw_null(w, "blocked_ns"); /* not recorded: inside unaccounted_ns */
    sf_jw_num(w, "downstream_ns", round(b->downstream_ns));
    sf_jw_num(w, "network_ns", round(b->network_ns));
    sf_jw_num(w, "unaccounted_ns", round(b->unaccounted_ns));
    sf_jw_num(w, "retransmits", b->retransmits);
    sf_jw_num(w, "retransmit_stall_ns", round(b->retransmit_stall_ns));
    sf_jw_num(w, "zero_windows", b->zero_windows);
    sf_jw_num(w, "zero_window_stall_ns", round(b->zero_window_stall_ns));
    sf_jw_num(w, "handshake_ns", round(b->handshake_ns));
    by_name(w, "downstream_by_endpoint", "endpoint", c->cause_eps, c->ncause_eps, b->downstream_by);
    by_name(w, "blocked_by_reason", "reason", c->cause_reasons, c->ncause_reasons, b->blocked_by);
    sf_jw_end(w);
}

/* A latency inflection's cause and breakdown (report_cause.c); nothing for others. */
static void json_why(struct sf_jw *w, const struct rp_ctx *c, const struct rp_why *y)
{
    if (y == NULL)
        return;
    sf_jw_str(w, "cause", rp_cause_name(y->cause));
    sf_jw_num(w, "cause_share", y->cause == RP_CAUSE_NONE ? 0 : y->share);
    /* a mixed slowdown: the second measured part that explains a good share too, or null */
    if (y->cause2 != RP_CAUSE_NONE) {
        sf_jw_str(w, "cause_second", rp_cause_name(y->cause2));
        sf_jw_num(w, "cause_second_share", y->share2);
    } else {
        sf_jw_null(w, "cause_second");
        sf_jw_null(w, "cause_second_share");
    }
    sf_jw_num(w, "unaccounted_share", y->cause == RP_CAUSE_NONE ? 0 : y->unaccounted_share);
    if (y->ep != SIZE_MAX)
        sf_jw_str(w, "cause_endpoint", c->cause_eps[y->ep]);
    if (y->reason != SIZE_MAX)
        sf_jw_str(w, "cause_reason", c->cause_reasons[y->reason]);
    sf_jw_obj(w, "breakdown");
    json_breakdown(w, c, "slow", &y->slow, y->offcpu);
    json_breakdown(w, c, "normal", &y->normal, y->offcpu);
    sf_jw_end(w);
}

static void json_inflections(struct sf_jw *w, const struct rp_ctx *c)
{
    sf_jw_arr(w, "inflections");
    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[p->group].name);
        sf_jw_str(w, "metric", sf_spans_metric_name(p->metric));
        sf_jw_str(w, "unit", metric_unit(p->metric));
        sf_jw_str(w, "kind", cp_kind_name(p->kind));
        json_time(w, c, p->time_ns);
        sf_jw_int(w, "window", (int64_t)p->win);
        sf_jw_bool(w, "refined", p->refined);
        sf_jw_num(w, "before", p->before);
        sf_jw_num(w, "after", p->after);
        json_why(w, c, rp_why_of(c, i));
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_funcs(struct sf_jw *w, const char *key, const struct rp_func *f, size_t n,
                       int rest)
{
    sf_jw_arr(w, key);
    for (size_t i = 0; i < n; i++) {
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "name", f[i].name);
        sf_jw_num(w, rest ? "slow_share" : "share", f[i].share);
        if (rest)
            sf_jw_num(w, "rest_share", f[i].rest);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

/* The slowest requests with their phases from the capture. */
static void json_slowest(struct sf_jw *w, const struct rp_ctx *c)
{
    size_t idx[RP_SLOWEST], n = rp_slowest(c, idx);

    sf_jw_arr(w, "slowest");
    for (size_t i = 0; i < n; i++) {
        const struct rp_span *sp = &c->spans[idx[i]];
        double rq, sv, rs;
        rp_phases(sp, &rq, &sv, &rs);
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[sp->group].name);
        if (sp->id[0])
            sf_jw_str(w, "span_id", sp->id);
        else
            sf_jw_null(w, "span_id");
        json_time(w, c, rp_realtime(c, sp->start_ns));
        sf_jw_num(w, "duration_ms", sp->lat_ms);
        sf_jw_num(w, "request_ms", rq);
        sf_jw_num(w, "server_ms", sv);
        sf_jw_num(w, "response_ms", rs);
        if (c->have_cpu)
            sf_jw_num(w, "cpu_ms", sp->cpu_ns / 1e6);
        else
            sf_jw_null(w, "cpu_ms");
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_slow(struct sf_jw *w, const struct rp_ctx *c)
{
    sf_jw_arr(w, "slow");
    for (size_t i = 0; i < c->nslows; i++) {
        const struct rp_slow *s = &c->slows[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[s->group].name);
        sf_jw_int(w, "spans", (int64_t)s->spans);
        sf_jw_num(w, "latency_from_ms", s->cut_ms);
        sf_jw_int(w, "samples", (int64_t)s->samples);
        json_funcs(w, "top_functions", s->top, s->ntop, 0);
        sf_jw_end(w);
    }
    sf_jw_end(w);
    json_funcs(w, "regressions", c->regress, c->nregress, 1);
    json_slowest(w, c);
}

/* drift[]'s explanation (lib/sf_explain.h); nulls when it could not be computed. */
static void json_explained(struct sf_jw *w, const struct rp_drift *d)
{
    const struct sf_explain *ex = &d->ex;
    char why[600];

    if (!d->explained) {
        sf_jw_null(w, "explanation");
        sf_jw_null(w, "decided_by");
        sf_jw_null(w, "trials_before");
        sf_jw_null(w, "trials_after");
        sf_jw_null(w, "values_pooled");
        sf_jw_null(w, "explained_by");
        return;
    }
    sf_explain_words(ex, d->direction < 0, why, sizeof(why));
    sf_jw_str(w, "explanation", why);
    if (sf_explain_decided(ex))
        sf_jw_str(w, "decided_by", sf_explain_decided(ex)->value);
    else
        sf_jw_null(w, "decided_by");
    sf_jw_int(w, "trials_before", (int64_t)ex->before.n);
    sf_jw_int(w, "trials_after", (int64_t)ex->after.n);
    sf_jw_int(w, "values_pooled", (int64_t)(ex->values_over_cap + ex->keys_over_cap));
    sf_explain_json(w, ex);
}

static void json_drift(struct sf_jw *w, const struct rp_ctx *c)
{
    sf_jw_arr(w, "drift");
    for (size_t i = 0; i < c->ndrifts; i++) {
        const struct rp_drift *d = &c->drifts[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[d->group].name);
        sf_jw_bool(w, "configured", d->configured);
        sf_jw_num(w, "expect_rate", d->expect);
        sf_jw_num(w, "from_rate", d->from_rate);
        sf_jw_num(w, "to_rate", d->to_rate);
        sf_jw_str(w, "direction", d->direction < 0 ? "down" : "up");
        json_time(w, c, d->time_ns);
        json_explained(w, d);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_cpuq(struct sf_jw *w, const struct rp_ctx *c)
{
    sf_jw_arr(w, "cpu_per_request");
    for (size_t i = 0; i < c->ncpuqs; i++) {
        const struct rp_cpuq *q = &c->cpuqs[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "endpoint", c->sw.g[q->group].name);
        sf_jw_str(w, "kind", cp_kind_name(q->kind));
        json_time(w, c, q->time_ns);
        sf_jw_num(w, "before_ms", q->before_ms);
        sf_jw_num(w, "after_ms", q->after_ms);
        sf_jw_num(w, "qps_before", q->qps_before);
        sf_jw_num(w, "qps_after", q->qps_after);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_clock_tls(struct sf_jw *w, const struct rp_ctx *c)
{
    const struct rp_tls *t = &c->tls;

    sf_jw_arr(w, "clock_fits");
    for (size_t i = 0; i < c->clk.n; i++) {
        const struct clock_pair *p = &c->clk.p[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "from", p->from);
        sf_jw_str(w, "to", p->to);
        sf_jw_int(w, "segments", (int64_t)p->n);
        sf_jw_int(w, "offset_ns", p->off0_ns);
        sf_jw_num(w, "skew_ppm", p->skew0_ppm);
        sf_jw_num(w, "residual_rms_ns", p->resid_rms_ns);
        sf_jw_end(w);
    }
    sf_jw_end(w);
    sf_jw_obj(w, "tls");
    sf_jw_int(w, "connections", (int64_t)t->conns);
    sf_jw_int(w, "tls", (int64_t)t->tls);
    sf_jw_int(w, "decrypted", (int64_t)t->decrypted);
    sf_jw_str(w, "versions", t->versions);
    sf_jw_str(w, "ciphers", t->ciphers);
    sf_jw_str(w, "alpn", t->alpn);
    sf_jw_str(w, "sni", t->sni);
    sf_jw_int(w, "early_data_offered", (int64_t)t->early_offered);
    sf_jw_int(w, "early_data_accepted", (int64_t)t->early_accepted);
    sf_jw_int(w, "early_data_rejected", (int64_t)t->early_rejected);
    sf_jw_int(w, "early_data_bytes", (int64_t)t->early_bytes);
    sf_jw_int(w, "early_data_requests", (int64_t)t->early_spans);
    sf_jw_end(w);
}

int rp_write_json(const struct rp_ctx *c, const char *path)
{
    struct sf_jw w;
    char t[64], verdict[2048];
    FILE *f = fopen(path, "w");
    int bad;

    if (f == NULL) {
        fprintf(stderr, "spanfold report: %s: cannot create: %s\n", path, strerror(errno));
        return -1;
    }
    rp_verdict(c, verdict, sizeof(verdict));
    sf_jw_init_pretty(&w, f, 2, 10);
    sf_jw_obj(&w, NULL);
    sf_jw_str(&w, "input", c->o.name);
    sf_jw_num(&w, "window_s", (double)c->sw.window_ns / 1e9);
    sf_jw_str(&w, "tz", c->o.tz ? c->o.tz : "UTC");
    sf_jw_int(&w, "start_ns", rp_win_time(c, 0));
    sf_jw_str(&w, "start_utc", rp_time_text(t, sizeof(t), rp_win_time(c, 0), NULL));
    sf_jw_int(&w, "spans", (int64_t)c->sw.nspans);
    sf_jw_obj(&w, "analysed"); /* the requests analysed one by one (--spans-max) */
    sf_jw_int(&w, "requests", (int64_t)c->nkept);
    sf_jw_num(&w, "share", c->thin);
    sf_jw_end(&w);
    sf_jw_str(&w, "verdict", verdict);
    sf_jw_arr(&w, "notes");
    for (int i = 0; i < c->nnotes; i++)
        sf_jw_str(&w, NULL, c->notes[i]);
    sf_jw_end(&w);
    json_endpoints(&w, c);
    json_inflections(&w, c);
    json_slow(&w, c);
    json_drift(&w, c);
    json_cpuq(&w, c);
    json_clock_tls(&w, c);
    sf_jw_arr(&w, "coverage");
    for (size_t i = 0; i < c->ncov; i++) {
        const struct sf_db_coverage *r = &c->cov[i];
        sf_jw_obj(&w, NULL);
        sf_jw_int(&w, "pid", r->pid);
        sf_jw_str(&w, "comm", r->comm);
        sf_jw_int(&w, "samples", r->samples);
        sf_jw_int(&w, "by_markers", r->markers);
        sf_jw_int(&w, "by_sockets", r->sockets);
        sf_jw_int(&w, "by_event_loop", r->loop);
        sf_jw_int(&w, "by_goroutine", r->go);
        sf_jw_int(&w, "shared", r->shared);
        sf_jw_int(&w, "unattributed", r->none);
        sf_jw_end(&w);
    }
    sf_jw_end(&w);
    sf_jw_end(&w);
    sf_jw_finish(&w);
    bad = ferror(f) | (fclose(f) != 0);
    if (bad)
        fprintf(stderr, "spanfold report: %s: write error\n", path);
    return bad ? -1 : 0;
}

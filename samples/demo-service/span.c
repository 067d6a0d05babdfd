/* span.c - one request of the demo service: admin commands, or a span.
 *
 * A span is marked at begin and end, each time three ways, with the same
 * arguments (span id as uint64, decision 0/1):
 *   - USDT probes spanfold:span_begin / spanfold:span_end (<sys/sdt.h>), what
 *     `spantrace --usdt spanfold:span_begin:span_end --decision-arg 1` attaches to;
 *   - plain noinline functions sf_demo_span_begin / sf_demo_span_end (for
 *     `spantrace --func`, or any uprobe tool);
 *   - optionally a write to a tracefs trace_marker:
 *     "span:<16hex> begin decision:N trace:<32hex>" / "span:<16hex> end decision:N".
 *
 * The span id marked is the one the request carried on the wire (the client's span
 * id: traceparent's parent-id, X-B3-SpanId, grpc-trace-bin's span id).  The service
 * does not mint a child id of its own, as B3 (shared span ids) does: so the id in the
 * packets and in the markers is the same and tracefs2spans can pair them.  A request
 * without a valid context gets a fresh random id (marked, but not on the wire).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#include "demo.h"
#include "sf_hex.h"

__attribute__((noinline)) void sf_demo_span_begin(uint64_t span_id, int decision);
__attribute__((noinline)) void sf_demo_span_end(uint64_t span_id, int decision);

__attribute__((noinline)) void sf_demo_span_begin(uint64_t span_id, int decision)
{
    DTRACE_PROBE2(spanfold, span_begin, span_id, decision);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sf_demo_span_end(uint64_t span_id, int decision)
{
    DTRACE_PROBE2(spanfold, span_end, span_id, decision);
    __asm__ volatile("" ::: "memory");
}

static void marker(struct demo_ctx *c, uint64_t id, const char *what, int d, const char *trace)
{
    char buf[128];
    int n;

    if (c->marker_fd < 0)
        return;
    n = snprintf(buf, sizeof(buf), "span:%016llx %s decision:%d%s%s", (unsigned long long)id, what,
                 d, trace && *trace ? " trace:" : "", trace && *trace ? trace : "");
    if (write(c->marker_fd, buf, (size_t)n) != n)
        perror("demo-service: trace_marker");
}

static void reply(struct demo_resp *rs, int status, const char *fmt, const char *arg)
{
    int n;

    rs->status = status;
    n = snprintf(rs->body, sizeof(rs->body), fmt, arg);
    rs->len = n < 0 ? 0 : (size_t)n < sizeof(rs->body) ? (size_t)n : sizeof(rs->body) - 1;
}

/* POST /admin/slow?on=1|0, POST /admin/rate?r=0.1 */
static void admin(struct demo_ctx *c, struct demo_req *rq, struct demo_resp *rs)
{
    const char *q = strchr(rq->path, '?');
    char msg[64];

    if (strncmp(rq->path, "/admin/slow", 11) == 0) {
        int on = !(q && strstr(q, "on=0"));
        pthread_mutex_lock(&c->lock);
        c->slow = on;
        pthread_mutex_unlock(&c->lock);
        reply(rs, 200, "slow %s\n", on ? "on" : "off");
        return;
    }
    if (strncmp(rq->path, "/admin/rate", 11) == 0 && q && strncmp(q, "?r=", 3) == 0) {
        char *end;
        double r = strtod(q + 3, &end);
        if (end != q + 3 && r >= 0 && r <= 1) {
            pthread_mutex_lock(&c->lock);
            c->s.rate = r;
            pthread_mutex_unlock(&c->lock);
            snprintf(msg, sizeof(msg), "%g", r);
            reply(rs, 200, "rate %s\n", msg);
            return;
        }
    }
    reply(rs, 400, "bad admin request %s\n", rq->path);
}

/* The request's span id and parent decision (from its preferred context). */
static uint64_t span_of(struct demo_ctx *c, struct demo_req *rq, int *parent, const char **trace)
{
    int best = sf_tracectx_set_preferred(&rq->tc);
    uint64_t id = 0;

    *parent = -1;
    *trace = NULL;
    if (best >= 0 && sf_hex_u64(rq->tc.ctx[best].span_id, 16, &id) == 0 && id) {
        *parent = rq->tc.ctx[best].sampled;
        *trace = rq->tc.ctx[best].trace_id;
        return id;
    }
    pthread_mutex_lock(&c->lock);
    c->s.rng = c->s.rng * 6364136223846793005ULL + 1442695040888963407ULL;
    id = c->s.rng ^ (c->s.rng >> 29);
    pthread_mutex_unlock(&c->lock);
    return id ? id : 1;
}

static int run_endpoint(struct demo_ctx *c, struct demo_req *rq, uint64_t id, const char *trace,
                        int slow, struct demo_resp *rs)
{
    int err = 0;
    uint64_t h;
    char sum[24];
    const char *p = rq->path;

    if (strcmp(rq->proto, "grpc") == 0 && strcmp(p, "/demo.Catalog/Lookup") == 0) {
        h = work_lookup(c->scale, id, &err);
        rs->grpc_status = err ? 5 : 0;
    } else if (strncmp(p, "/api/checkout", 13) == 0 && (p[13] == 0 || p[13] == '?')) {
        h = work_checkout(c->scale, id, &err);
    } else if (strncmp(p, "/api/search", 11) == 0 && (p[11] == 0 || p[11] == '?')) {
        if (c->backend_port) { /* the backend first, then its work */
            int st = demo_backend_call(c->backend_port, trace, id, slow != 0);
            h = work_search(c->scale, id, slow == DEMO_SLOW_MIXED ? DEMO_SLOW_MIXED : 0, &err);
            err |= st != 200;
        } else
            h = work_search(c->scale, id, slow, &err);
    } else {
        reply(rs, 404, "no such endpoint %s\n", p);
        rs->grpc_status = 12; /* UNIMPLEMENTED */
        return 1;
    }
    snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)h);
    reply(rs, err && rs->grpc_status == 0 ? 500 : 200, "%s\n", sum);
    return err;
}

void demo_handle(struct demo_ctx *c, struct demo_req *rq, struct demo_resp *rs)
{
    int parent, decision, slow, err;
    const char *trace;
    uint64_t id;
    int64_t t0;

    memset(rs, 0, sizeof(*rs));
    if (strncmp(rq->path, "/admin/", 7) == 0) {
        admin(c, rq, rs);
        return;
    }
    id = span_of(c, rq, &parent, &trace);
    t0 = demo_now_ns();
    pthread_mutex_lock(&c->lock);
    decision = demo_sampler_decide(&c->s, &rq->tc, parent, t0);
    slow = c->slow ? c->slow_kind : 0;
    pthread_mutex_unlock(&c->lock);

    marker(c, id, "begin", decision, trace);
    sf_demo_span_begin(id, decision);
    err = run_endpoint(c, rq, id, trace, slow, rs);
    sf_demo_span_end(id, decision);
    marker(c, id, "end", decision, NULL);

    pthread_mutex_lock(&c->lock);
    demo_sampler_record(&c->s, (double)(demo_now_ns() - t0) / 1e6, err, demo_now_ns());
    pthread_mutex_unlock(&c->lock);
}

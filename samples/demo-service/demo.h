/* demo.h - the spanfold demo service: one struct shared by its files.
 *
 * An HTTP/1.1 and h2c (prior knowledge, libnghttp2) server on 127.0.0.1 with
 * gRPC-style calls, trace context read with lib/sf_tracectx, a head sampler with
 * a circuit breaker, real CPU work per endpoint and span markers (USDT probes
 * spanfold:span_begin/span_end, plain functions, optional trace_marker writes).
 * See README.md in this folder for the rules; scripts/record-demo.sh records it.
 */
#ifndef DEMO_H
#define DEMO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "sf_tracectx.h"

#define DEMO_RING 64 /* completed spans the breaker looks at */

/* Sampler state: configured rate, circuit breaker over the last DEMO_RING spans. */
struct demo_sampler {
    double rate;        /* configured keep probability for deferred requests */
    double lat_ms;      /* breaker: mean handling latency above this opens it */
    double err_share;   /* breaker: error share above this opens it */
    double open_factor; /* rate multiplier while open */
    int64_t open_ns;    /* how long it stays open */
    int64_t open_until; /* CLOCK_MONOTONIC ns; 0 = closed */
    unsigned opened;    /* times it opened */
    double ring_lat[DEMO_RING];
    unsigned char ring_err[DEMO_RING];
    unsigned ring_n, ring_pos;
    uint64_t rng;
    /* Rules on deferred requests (the failure modes of docs/spanfold.md's drift
     * explanation): drop every request whose baggage has drop_key=drop_val; keep a
     * request without the header rate_hdr at rate_absent instead of rate. */
    char drop_key[64], drop_val[128];
    char rate_hdr[64];
    double rate_absent;
};

struct demo_ctx {
    int listen_fd;
    int port;
    int admin_fd;         /* a second listening socket, or -1 */
    int admin_port;       /* -1: none */
    int marker_fd;        /* tracefs trace_marker, or -1 */
    double scale;         /* CPU work multiplier */
    pthread_mutex_t lock; /* guards sampler and slow */
    struct demo_sampler s;
    int threads;      /* worker threads */
    int slow;         /* slow mode on: /api/search is slow, as slow_kind says */
    int slow_kind;    /* DEMO_SLOW_CPU (slow_regex_backtrack), DEMO_SLOW_LOCK (a pool),
                         DEMO_SLOW_DOWNSTREAM (the search backend, a service of its own) or
                         DEMO_SLOW_MIXED (both the backend and slow_regex_backtrack) */
    int backend_port; /* DEMO_SLOW_DOWNSTREAM, _MIXED: the backend on 127.0.0.1, else 0 */
};

/* One request as the protocol layers hand it over. */
struct demo_req {
    const char *proto; /* "h1", "h2", "grpc" */
    char method[16];
    char path[256];
    struct sf_tracectx_set tc;
};

struct demo_resp {
    int status;      /* HTTP status */
    int grpc_status; /* for gRPC calls */
    char body[512];
    size_t len;
};

/* Handle one complete request (any protocol): admin commands, or a span with
 * markers around the endpoint's work.  Always fills *rs. */
void demo_handle(struct demo_ctx *c, struct demo_req *rq, struct demo_resp *rs);

/* Serve one accepted connection until it closes: HTTP/1.1, or HTTP/2 when the
 * first bytes are the connection preface (h2c prior knowledge).  Closes fd. */
void demo_serve_h1(struct demo_ctx *c, int fd, const char *pre, size_t npre);
void demo_serve_h2(struct demo_ctx *c, int fd, const char *pre, size_t npre);

/* Endpoint work (work.c): returns a checksum so the compiler keeps the work;
 * *error is set for the requests the endpoint fails. */
uint64_t work_checkout(double scale, uint64_t seed, int *error);
/* slow: 0, DEMO_SLOW_CPU, DEMO_SLOW_LOCK or DEMO_SLOW_MIXED (its CPU part; the backend's
 * wait is DEMO_SLOW_DOWNSTREAM's) */
enum { DEMO_SLOW_CPU = 1, DEMO_SLOW_LOCK, DEMO_SLOW_DOWNSTREAM, DEMO_SLOW_MIXED };
uint64_t work_search(double scale, uint64_t seed, int slow, int *error);
uint64_t work_lookup(double scale, uint64_t seed, int *error);

/* Sampler (sampler.c). demo_sampler_decide: the parent's flag when it carried
 * one (0/1), else a draw below the effective rate.  demo_sampler_record: feed
 * one finished span.  Both with c->lock held. */
void demo_sampler_init(struct demo_sampler *s, double rate);
int demo_sampler_decide(struct demo_sampler *s, const struct sf_tracectx_set *tc,
                        int parent_sampled, int64_t now_ns);
/* --drop-baggage KEY=VALUE, --rate-header NAME=R: 0 or -1 (bad spelling). */
int demo_sampler_rule(struct demo_sampler *s, const char *opt, const char *arg);
void demo_sampler_record(struct demo_sampler *s, double lat_ms, int error, int64_t now_ns);
double demo_sampler_effective(const struct demo_sampler *s, int64_t now_ns);

int64_t demo_now_ns(void);

/* The search backend (backend.c): GET /api/backend (X-Demo-Slow: 0|1) on 127.0.0.1:port, over a
 * connection of its own, with B3 headers naming the calling span as parent (a child
 * span id made from it, the caller's trace id when it has one).  Returns the HTTP
 * status, or -1 when the backend could not be reached or answered nothing. */
int demo_backend_call(int port, const char *trace_id, uint64_t parent_span, int slow);

#endif

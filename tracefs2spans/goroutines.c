/* goroutines.c - a Go program's goroutines as the socket join's threads.
 *
 * A Go server runs each request on a goroutine, and goroutines move between threads (an
 * M runs whichever is runnable), so a thread tells nothing of the request; the goroutine
 * does.  spantrace --sockets on a Go process adds one event per runtime.execute: thread
 * T began running goroutine g (the g's address) at t, until T's next such event.  Here:
 *
 *   - every socket call of such a thread is made by the goroutine it ran at the call,
 *     so the join (sockjoin.c) sees goroutines instead of threads: a request read and
 *     answered on one goroutine is claimed on that goroutine, whichever threads ran it;
 *   - a claimed piece of a goroutine's time goes back to the threads that ran it then
 *     (its runs cut to the piece), which is where the CPU samples are.
 *
 * A goroutine's id here is GO_VTID | (g's address), above every thread id.  Work the runtime
 * does on a thread's own stack (the scheduler, GC assists) counts as the goroutine's it
 * ran last.  A g's address is reused after its goroutine exits; a claim spans one
 * request, so a later goroutine at the same address is a later claim.
 */
#include <stdlib.h>
#include <string.h>

#include "t2s.h"

struct go_run {
    int64_t tid, start, end; /* [start, end): end INT64_MAX for a thread's last run */
    uint64_t g;
};

static int by_tid(const void *x, const void *y)
{
    const struct go_run *a = x, *b = y;

    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

static int by_g(const void *x, const void *y)
{
    const struct go_run *a = x, *b = y;

    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

#define GO_VTID (1ll << 62)

static int64_t vtid_of(uint64_t g)
{
    return GO_VTID | (int64_t)(g & (GO_VTID - 1));
}

int go_map_build(struct go_map *m, const struct sj_event *ev, size_t ne)
{
    size_t n = 0;

    memset(m, 0, sizeof(*m));
    for (size_t j = 0; j < ne; j++)
        n += ev[j].go;
    if (n == 0)
        return 0;
    if ((m->by_tid = malloc(n * sizeof(*m->by_tid))) == NULL ||
        (m->runs = malloc(n * sizeof(*m->runs))) == NULL) {
        go_map_free(m);
        return SF_E_NOMEM;
    }
    for (size_t j = 0; j < ne; j++)
        if (ev[j].go)
            m->by_tid[m->n++] = (struct go_run){ev[j].tid, ev[j].ts_ns, INT64_MAX, ev[j].g};
    qsort(m->by_tid, m->n, sizeof(*m->by_tid), by_tid);
    for (size_t i = 0; i + 1 < m->n; i++)
        if (m->by_tid[i + 1].tid == m->by_tid[i].tid)
            m->by_tid[i].end = m->by_tid[i + 1].start;
    memcpy(m->runs, m->by_tid, m->n * sizeof(*m->runs));
    qsort(m->runs, m->n, sizeof(*m->runs), by_g);
    return 0;
}

void go_map_free(struct go_map *m)
{
    free(m->runs);
    free(m->by_tid);
    memset(m, 0, sizeof(*m));
}

/* The run of thread tid at time t, or NULL. */
static const struct go_run *run_at(const struct go_map *m, int64_t tid, int64_t t)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) { /* the first run of tid starting after t */
        size_t mid = lo + (hi - lo) / 2;
        const struct go_run *r = &m->by_tid[mid];
        if (r->tid < tid || (r->tid == tid && r->start <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || m->by_tid[lo - 1].tid != tid)
        return NULL;
    return &m->by_tid[lo - 1];
}

void go_map_events(const struct go_map *m, struct sj_event *ev, size_t ne)
{
    for (size_t j = 0; m->n && j < ne; j++) {
        const struct go_run *r;
        if (ev[j].go || ev[j].wait || (r = run_at(m, ev[j].tid, ev[j].ts_ns)) == NULL)
            continue;
        ev[j].tid = vtid_of(r->g);
    }
}

/* The first run of goroutine vtid ending after t (m->runs by g, then start). */
static size_t first_run(const struct go_map *m, int64_t vtid, int64_t t)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct go_run *r = &m->runs[mid];
        int64_t v = vtid_of(r->g);
        if (v < vtid || (v == vtid && r->end <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t go_map_thread(const struct go_map *m, int64_t vtid, int64_t t)
{
    size_t k;

    if (vtid < GO_VTID)
        return vtid;
    k = first_run(m, vtid, t);
    return k < m->n && vtid_of(m->runs[k].g) == vtid && m->runs[k].start <= t ? m->runs[k].tid : -1;
}

int go_map_pieces(const struct go_map *m, int64_t pid, int64_t vtid, int64_t a, int64_t b,
                  const size_t *spans, size_t n, sj_piece_fn emit, void *ctx)
{
    int rc = 0;

    if (b <= a) /* an instant owns no time */
        return 0;
    if (vtid < GO_VTID)
        return emit(ctx, pid, vtid, a, b, spans, n);
    for (size_t k = first_run(m, vtid, a);
         rc == 0 && k < m->n && vtid_of(m->runs[k].g) == vtid && m->runs[k].start < b; k++) {
        const struct go_run *r = &m->runs[k];
        int64_t s = r->start > a ? r->start : a, e = r->end < b ? r->end : b;
        if (e > s)
            rc = emit(ctx, pid, r->tid, s, e, spans, n);
    }
    return rc;
}

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
 *
 * Servers of HTTP/2 (grpc-go, Go's net/http) read a connection's frames on one goroutine
 * and run each stream's handler on a goroutine started for it, which touches no socket;
 * the answers go out from a third.  spantrace adds one event per goroutine start
 * ("spawn g=0x... parent=0x...", at runtime.newproc1's return), and go_map_spawn_claims
 * gives a started goroutine the request its parent started it for:
 *
 *   - the parent read the request's first byte at or before the start (its HEADERS);
 *   - the parent has not read on past the request since: the recv that copied the
 *     request's last byte is not older than the parent's last recv before the start
 *     (a request whose goroutine the parent did not start, or started before we saw,
 *     drops out at the parent's next read instead of shifting every later start);
 *   - no earlier start took it; of those left, the first read (by time, then by its
 *     place in the connection's bytes): a reader starts the streams' goroutines in the
 *     order of their frames;
 *   - a request whose reader then started a goroutine that serves streams (hand_over) is
 *     waiting for that one's starts instead.
 *
 * The claim is the child's, from its start to the response's last byte (or, unknown,
 * until its g starts another goroutine).  A goroutine a request's reader starts for
 * another purpose (net/http's background read) is claimed the same way: it runs for
 * that request.
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
        if (ev[j].go || ev[j].wait || ev[j].spawn ||
            (r = run_at(m, ev[j].tid, ev[j].ts_ns)) == NULL)
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

/* ---- goroutines started for a request ---------------------------------------------- */

struct tick {
    int64_t who, ts; /* a goroutine (vtid) and a time */
    size_t i;        /* a spawn: its event; a pending request: its span */
    uint32_t at;     /* a pending request: its first byte's sequence number */
};

static int by_who_ts(const void *x, const void *y)
{
    const struct tick *a = x, *b = y;

    if (a->who != b->who)
        return a->who < b->who ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* In t[0..n) (sorted by who, ts): the place of the first tick after (who, ts); the ticks
 * of who at or before ts end there, its later ones begin there. */
static size_t after(const struct tick *t, size_t n, int64_t who, int64_t ts)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].who < who || (t[mid].who == who && t[mid].ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Pending requests of one reader in the order it read them: the time of the recv of
 * the first byte, then the place of that byte in the connection (one recv, one
 * connection: compared modulo 2^32). */
static int by_read(const void *x, const void *y)
{
    const struct tick *a = x, *b = y;
    int32_t d;

    if (a->who != b->who || a->ts != b->ts)
        return by_who_ts(x, y);
    d = (int32_t)(a->at - b->at);
    return d ? (d > 0 ? 1 : -1) : (a->i > b->i) - (a->i < b->i);
}

/* A goroutine's recv of bytes (go_map_events gave it the goroutine's id). */
static int is_recv(const struct sj_event *e)
{
    return !e->go && !e->wait && !e->spawn && !e->send && e->len && e->tid >= GO_VTID;
}

/* Requests whose reader, after reading them, started a goroutine that serves streams: one
 * that starts goroutines of its own before it reads anything.  They wait for that one's
 * starts, not the reader's own (pend[].who becomes it).  grpc-go's first goroutine on a
 * connection reads the preface, and with it whatever frames came along, then starts its
 * writer, its keepalive and the stream server, which starts the streams' handlers: without
 * this the writer and keepalive took the first requests and the handlers none.  Only the
 * reader's starts before its next read are looked at. */
static void hand_over(struct tick *pend, size_t npend, const struct tick *spawn, size_t nsp,
                      const struct tick *recv, size_t nrecv, const struct sj_event *ev)
{
    int moved = 0;

    for (size_t k = 0; k < npend; k++) {
        int64_t r = pend[k].who, t = pend[k].ts;
        size_t nx = after(recv, nrecv, r, t);
        int64_t next = nx < nrecv && recv[nx].who == r ? recv[nx].ts : INT64_MAX;
        for (size_t j = after(spawn, nsp, r, t); j < nsp && spawn[j].who == r && spawn[j].ts < next;
             j++) {
            int64_t c = vtid_of(ev[spawn[j].i].g), born = spawn[j].ts, first_read;
            size_t cs = after(spawn, nsp, c, born), cr = after(recv, nrecv, c, born);
            first_read = cr < nrecv && recv[cr].who == c ? recv[cr].ts : INT64_MAX;
            if (cs < nsp && spawn[cs].who == c && spawn[cs].ts < first_read) {
                pend[k].who = c;
                moved = 1;
                break;
            }
        }
    }
    if (moved)
        qsort(pend, npend, sizeof(*pend), by_read);
}

size_t go_map_spawn_claims(const struct go_map *m, const struct sj_event *ev, size_t ne,
                           const struct sj_span *sp, const struct sj_result *res, size_t ns,
                           struct sj_claim *out)
{
    struct tick *spawn = NULL, *born = NULL, *recv = NULL, *pend = NULL;
    size_t nsp = 0, nrecv = 0, npend = 0, nout = 0, p = 0;

    for (size_t j = 0; j < ne; j++) {
        nsp += ev[j].spawn;
        nrecv += is_recv(&ev[j]);
    }
    for (size_t i = 0; i < ns; i++)
        npend += res[i].req_a_tid >= GO_VTID;
    if (m->n == 0 || nsp == 0 || npend == 0 || (spawn = malloc(nsp * sizeof(*spawn))) == NULL ||
        (born = malloc(nsp * sizeof(*born))) == NULL ||
        (recv = malloc((nrecv + 1) * sizeof(*recv))) == NULL ||
        (pend = malloc(npend * sizeof(*pend))) == NULL)
        goto out; /* nothing to go by (or no memory: the claims made so far stand) */
    nsp = nrecv = npend = 0;
    for (size_t j = 0; j < ne; j++) {
        if (ev[j].spawn) {
            spawn[nsp] = (struct tick){vtid_of(ev[j].parent), ev[j].ts_ns, j, 0};
            born[nsp++] = (struct tick){vtid_of(ev[j].g), ev[j].ts_ns, j, 0};
        } else if (is_recv(&ev[j]))
            recv[nrecv++] = (struct tick){ev[j].tid, ev[j].ts_ns, j, 0};
    }
    for (size_t i = 0; i < ns; i++)
        if (res[i].req_a_tid >= GO_VTID)
            pend[npend++] = (struct tick){res[i].req_a_tid, res[i].req_a_ts, i, sp[i].req_start};
    qsort(spawn, nsp, sizeof(*spawn), by_who_ts);
    qsort(born, nsp, sizeof(*born), by_who_ts);
    qsort(recv, nrecv, sizeof(*recv), by_who_ts);
    qsort(pend, npend, sizeof(*pend), by_read);
    hand_over(pend, npend, spawn, nsp, recv, nrecv, ev);
    for (size_t k = 0; k < nsp; k++) {
        const struct tick *s = &spawn[k], *w;
        const struct sj_event *e = &ev[s->i];
        size_t r = after(recv, nrecv, s->who, s->ts), b;
        const struct tick *last = r > 0 && recv[r - 1].who == s->who ? &recv[r - 1] : NULL;
        int64_t child = vtid_of(e->g), end;
        /* the parent's pending requests: skip those no start can take any more */
        while (p < npend && (pend[p].who < s->who || (pend[p].who == s->who && last &&
                                                      res[pend[p].i].req_last_ts != SJ_NONE &&
                                                      res[pend[p].i].req_last_ts < last->ts)))
            p++;
        if (p >= npend || pend[p].who != s->who || pend[p].ts > s->ts)
            continue; /* started for something else: nothing read is waiting */
        w = &pend[p++];
        /* to the response's end; else until its g is born again */
        end = res[w->i].resp_last_ts;
        if (end == SJ_NONE || end <= s->ts) {
            b = after(born, nsp, child, s->ts);
            end = b < nsp && born[b].who == child ? born[b].ts : INT64_MAX;
        }
        out[nout++] = (struct sj_claim){w->i, e->pid, child, s->ts, end};
    }
out:
    free(spawn);
    free(born);
    free(recv);
    free(pend);
    return nout;
}

/* intervals.c - span intervals per thread from begin/end/decision markers.
 *
 * The rule (README, tracefs2spans section):
 *
 *   begin S      opens S on the thread, nested inside what is open there (depth = number
 *                of spans open below it); it stays open until `end S`.
 *   decision S,  when S is open on the thread: updates its decision (and trace id).
 *   mark S       Otherwise opens S as a *point* span, which ends at its own `end S` or at
 *                the next span marker of another span on that thread, whichever comes
 *                first (end_rule next-marker); a later `begin S` makes it a nested span.
 *   end S        closes S (end-marker) and every span still open above it, whose own
 *                ends never came (parent-end); an end of a span not open is an orphan,
 *                counted and otherwise ignored.
 *   end of input every span still open ends at the last timestamp of the input (eof).
 *
 * So begin/begin/end/end nests, decision/decision on a worker thread gives consecutive
 * intervals, and interleaved threads never affect each other.  Memory is the open spans
 * of the threads that have some, found by tid in an sf_map: a thread whose stack empties
 * is freed.  At the end of input the threads are closed in a fixed order that depends only
 * on the markers: by eof_key(tid), then by when the thread last opened (the order of the
 * chained table this file kept before sf_map, so outputs stay byte for byte the same).
 */
#include <stdlib.h>
#include <string.h>

#include "sf_map.h"
#include "t2s.h"

struct open_span {
    char span_id[17];
    char trace_id[33];
    int64_t start_ns;
    int decision;
    int point; /* opened by decision/mark: ends at the next marker */
};

struct thread {
    int64_t tid, pid;
    uint64_t seq; /* when it was opened: the eof order among threads of one eof_key */
    int n;
    struct open_span stack[]; /* max_depth entries */
};

struct iv_state {
    iv_emit_fn emit;
    void *ctx;
    int max_depth;
    struct iv_stats stats;
    uint64_t nthreads, opened;
    struct sf_map threads; /* struct thread by tid */
};

struct iv_state *intervals_new(int max_depth, iv_emit_fn emit, void *ctx)
{
    struct iv_state *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return NULL;
    st->emit = emit;
    st->ctx = ctx;
    st->max_depth = max_depth > 0 ? max_depth : 64;
    return st;
}

static int thread_eq(const void *val, const void *key)
{
    return ((const struct thread *)val)->tid == *(const int64_t *)key;
}

static uint64_t tid_hash(int64_t tid)
{
    return sf_hash_u64((uint64_t)tid);
}

/* The first key of the end-of-input order: 10 bits of a multiplicative hash of tid. */
static uint64_t eof_key(int64_t tid)
{
    return (uint64_t)tid * 0x9e3779b97f4a7c15ull >> 54;
}

/* Close the top span of t at end_ns with rule; emits it. */
static int pop(struct iv_state *st, struct thread *t, int64_t end_ns, const char *rule)
{
    struct open_span *o = &t->stack[--t->n];
    struct iv_interval iv;

    memcpy(iv.span_id, o->span_id, sizeof(iv.span_id));
    memcpy(iv.trace_id, o->trace_id, sizeof(iv.trace_id));
    iv.pid = t->pid;
    iv.tid = t->tid;
    iv.start_ns = o->start_ns;
    iv.end_ns = end_ns < o->start_ns ? o->start_ns : end_ns;
    iv.depth = t->n;
    iv.decision = o->decision;
    iv.end_rule = rule;
    st->stats.intervals++;
    return st->emit(st->ctx, &iv);
}

static int find(const struct thread *t, const char *span)
{
    for (int i = t->n - 1; i >= 0; i--)
        if (memcmp(t->stack[i].span_id, span, 16) == 0)
            return i;
    return -1;
}

static void update(struct open_span *o, const struct mk_result *m)
{
    if (m->decision >= 0)
        o->decision = m->decision;
    if (m->has_trace && o->trace_id[0] == 0)
        memcpy(o->trace_id, m->trace_id, sizeof(o->trace_id));
}

static int push(struct iv_state *st, struct thread *t, int64_t ts, const struct mk_result *m,
                int point)
{
    struct open_span *o;

    if (t->n >= st->max_depth) {
        st->stats.too_deep++;
        return 0;
    }
    o = &t->stack[t->n++];
    memset(o, 0, sizeof(*o));
    memcpy(o->span_id, m->span_id, sizeof(o->span_id));
    o->start_ns = ts;
    o->decision = -1;
    o->point = point;
    update(o, m);
    return 0;
}

static int apply(struct iv_state *st, struct thread *t, enum iv_kind kind, int64_t ts,
                 const struct mk_result *m)
{
    int at, rc;

    /* a point span ends at the next marker of another span on its thread */
    if (t->n > 0 && t->stack[t->n - 1].point &&
        memcmp(t->stack[t->n - 1].span_id, m->span_id, 16) != 0) {
        if ((rc = pop(st, t, ts, "next-marker")))
            return rc;
    }
    at = find(t, m->span_id);
    if (kind == IV_END) {
        if (at < 0) {
            st->stats.orphan_ends++;
            return 0;
        }
        update(&t->stack[at], m);
        while (t->n > at + 1)
            if ((rc = pop(st, t, ts, "parent-end")))
                return rc;
        return pop(st, t, ts, "end-marker");
    }
    if (at >= 0) {
        update(&t->stack[at], m);
        if (kind == IV_BEGIN)
            t->stack[at].point = 0;
        return 0;
    }
    return push(st, t, ts, m, kind != IV_BEGIN);
}

/* A new thread with an empty stack, in the map; NULL when out of memory. */
static struct thread *open_thread(struct iv_state *st, int64_t pid, int64_t tid, uint64_t h)
{
    struct thread *t;

    if (sf_map_reserve(&st->threads, 1) < 0)
        return NULL;
    t = calloc(1, sizeof(*t) + (size_t)st->max_depth * sizeof(struct open_span));
    if (t == NULL)
        return NULL;
    t->tid = tid;
    t->pid = pid;
    t->seq = st->opened++;
    sf_map_fill(&st->threads, sf_map_probe(&st->threads, h, thread_eq, &tid), h, t);
    if (++st->nthreads > st->stats.threads_max)
        st->stats.threads_max = st->nthreads;
    return t;
}

static void close_thread(struct iv_state *st, struct thread *t)
{
    sf_map_remove(&st->threads, sf_map_probe(&st->threads, tid_hash(t->tid), thread_eq, &t->tid));
    free(t);
    st->nthreads--;
}

int intervals_marker(struct iv_state *st, enum iv_kind kind, int64_t pid, int64_t tid,
                     int64_t ts_ns, const struct mk_result *m)
{
    uint64_t h = tid_hash(tid);
    struct thread *t = sf_map_find(&st->threads, h, thread_eq, &tid);
    int rc;

    if (t == NULL) {
        if (kind == IV_END) {
            st->stats.orphan_ends++;
            return 0;
        }
        if ((t = open_thread(st, pid, tid, h)) == NULL)
            return SF_E_NOMEM;
    }
    if (pid >= 0)
        t->pid = pid;
    rc = apply(st, t, kind, ts_ns, m);
    if (t->n == 0)
        close_thread(st, t);
    return rc;
}

static int eof_cmp(const void *a, const void *b)
{
    const struct thread *x = *(struct thread *const *)a, *y = *(struct thread *const *)b;
    uint64_t kx = eof_key(x->tid), ky = eof_key(y->tid);

    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int intervals_finish(struct iv_state *st, int64_t end_ns)
{
    struct thread **all;
    struct sf_map_slot *s;
    size_t i = 0, n = 0, k;
    int rc = 0;

    if (st->threads.n == 0)
        return 0;
    if ((all = malloc(st->threads.n * sizeof(*all))) == NULL)
        return SF_E_NOMEM;
    while ((s = sf_map_next(&st->threads, &i)) != NULL)
        all[n++] = s->val;
    qsort(all, n, sizeof(*all), eof_cmp);
    for (k = 0; k < n && rc == 0; k++) {
        while (all[k]->n > 0 && rc == 0)
            rc = pop(st, all[k], end_ns, "eof");
        close_thread(st, all[k]);
    }
    free(all);
    return rc;
}

void intervals_stats(const struct iv_state *st, struct iv_stats *out)
{
    *out = st->stats;
}

void intervals_free(struct iv_state *st)
{
    struct sf_map_slot *s;
    size_t i = 0;

    if (st == NULL)
        return;
    while ((s = sf_map_next(&st->threads, &i)) != NULL)
        free(s->val);
    sf_map_free(&st->threads);
    free(st);
}

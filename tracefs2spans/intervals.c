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
 * of the threads that have some: a thread whose stack empties is freed.
 */
#include <stdlib.h>
#include <string.h>

#include "t2s.h"

#define NBUCKET 1024

struct open_span {
    char span_id[17];
    char trace_id[33];
    int64_t start_ns;
    int decision;
    int point; /* opened by decision/mark: ends at the next marker */
};

struct thread {
    struct thread *next;
    int64_t tid, pid;
    int n;
    struct open_span stack[]; /* max_depth entries */
};

struct iv_state {
    iv_emit_fn emit;
    void *ctx;
    int max_depth;
    struct iv_stats stats;
    uint64_t nthreads;
    struct thread *bucket[NBUCKET];
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

static struct thread **slot(struct iv_state *st, int64_t tid)
{
    struct thread **pp = &st->bucket[(uint64_t)tid * 0x9e3779b97f4a7c15ull >> 54];

    while (*pp && (*pp)->tid != tid)
        pp = &(*pp)->next;
    return pp;
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

int intervals_marker(struct iv_state *st, enum iv_kind kind, int64_t pid, int64_t tid,
                     int64_t ts_ns, const struct mk_result *m)
{
    struct thread **pp = slot(st, tid), *t = *pp;
    int rc;

    if (t == NULL) {
        if (kind == IV_END) {
            st->stats.orphan_ends++;
            return 0;
        }
        t = calloc(1, sizeof(*t) + (size_t)st->max_depth * sizeof(struct open_span));
        if (t == NULL)
            return SF_E_NOMEM;
        t->tid = tid;
        t->pid = pid;
        *pp = t;
        if (++st->nthreads > st->stats.threads_max)
            st->stats.threads_max = st->nthreads;
    }
    if (pid >= 0)
        t->pid = pid;
    rc = apply(st, t, kind, ts_ns, m);
    if (t->n == 0) {
        *slot(st, tid) = t->next;
        free(t);
        st->nthreads--;
    }
    return rc;
}

int intervals_finish(struct iv_state *st, int64_t end_ns)
{
    int rc = 0;

    for (size_t b = 0; b < NBUCKET; b++) {
        while (st->bucket[b]) {
            struct thread *t = st->bucket[b];
            while (t->n > 0 && rc == 0)
                rc = pop(st, t, end_ns, "eof");
            st->bucket[b] = t->next;
            free(t);
            st->nthreads--;
            if (rc)
                return rc;
        }
    }
    return 0;
}

void intervals_stats(const struct iv_state *st, struct iv_stats *out)
{
    *out = st->stats;
}

void intervals_free(struct iv_state *st)
{
    if (st == NULL)
        return;
    for (size_t b = 0; b < NBUCKET; b++) {
        while (st->bucket[b]) {
            struct thread *t = st->bucket[b];
            st->bucket[b] = t->next;
            free(t);
        }
    }
    free(st);
}

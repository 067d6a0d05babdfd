/* Unit tests: tracefs2spans/intervals.c - the per-thread span interval rule:
 * nesting, missing ends, point spans (decision/mark), orphan ends, interleaved
 * threads, end of input, depth cap. */
#include <stdlib.h>
#include <string.h>

#include "../../tracefs2spans/t2s.h"
#include "tap.h"

#define MAXIV 64

struct got {
    struct iv_interval iv[MAXIV];
    int n;
};

static int collect(void *ctx, const struct iv_interval *iv)
{
    struct got *g = ctx;
    if (g->n < MAXIV)
        g->iv[g->n++] = *iv;
    return 0;
}

/* Feed "K SPAN TID TS" steps: K is b(egin) e(nd) d(ecision) m(ark). */
static void feed(struct iv_state *st, const char *steps)
{
    const char *p = steps;

    while (*p) {
        char k = *p;
        char span[17];
        long tid, ts;
        int used = 0;
        /* tiny hand parser: k span tid ts; */
        p++;
        while (*p == ' ')
            p++;
        memcpy(span, p, 16);
        span[16] = 0;
        p += 16;
        tid = strtol(p, (char **)&p, 10);
        ts = strtol(p, (char **)&p, 10);
        while (*p == ';' || *p == ' ')
            p++;
        (void)used;
        struct mk_result m = {0};
        m.has_span = 1;
        memcpy(m.span_id, span, 17);
        m.decision = k == 'd' ? 1 : -1;
        enum iv_kind kind = k == 'b'   ? IV_BEGIN
                            : k == 'e' ? IV_END
                            : k == 'd' ? IV_DECISION
                                       : IV_MARK;
        intervals_marker(st, kind, 100, tid, ts, &m);
    }
}

static const struct iv_interval *find(const struct got *g, const char *span, long tid)
{
    for (int i = 0; i < g->n; i++)
        if (strncmp(g->iv[i].span_id, span, 16) == 0 && g->iv[i].tid == tid)
            return &g->iv[i];
    return NULL;
}

#define A "aaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbb"
#define C "cccccccccccccccc"

static void check(const struct got *g, const char *span, long tid, long s, long e, int depth,
                  const char *rule, const char *what)
{
    const struct iv_interval *iv = find(g, span, tid);
    TAP_OK(iv && iv->start_ns == s && iv->end_ns == e && iv->depth == depth &&
               strcmp(iv->end_rule, rule) == 0,
           "%s: %.4s tid %ld [%ld, %ld] depth %d %s (got %s)", what, span, tid, s, e, depth, rule,
           iv ? iv->end_rule : "none");
}

static void run(const char *steps, int64_t eof, struct got *g, struct iv_stats *stats)
{
    struct iv_state *st = intervals_new(4, collect, g);

    memset(g, 0, sizeof(*g));
    feed(st, steps);
    intervals_finish(st, eof);
    intervals_stats(st, stats);
    intervals_free(st);
}

/* Many threads in the thread table: 5,000 tids open (every third closed and opened again,
 * so it moves back in the order), all closed at end of input, each exactly once, in the
 * documented order: by the tid's 10-bit multiplicative hash, then by when it opened. */
struct many {
    int64_t tid[5000]; /* the eof intervals' tids, in emission order */
    int n, ends;
};

static int many_collect(void *ctx, const struct iv_interval *iv)
{
    struct many *g = ctx;

    if (strcmp(iv->end_rule, "eof") != 0)
        g->ends++;
    else if (g->n < 5000)
        g->tid[g->n++] = iv->tid;
    else
        g->n++;
    return 0;
}

static uint64_t key(int64_t tid)
{
    return (uint64_t)tid * 0x9e3779b97f4a7c15ull >> 54;
}

static void many_threads(void)
{
    static struct many g;
    static int64_t want[5000], seq[5000];
    struct mk_result m = {.has_span = 1, .decision = -1, .span_id = "0123456789abcdef"};
    struct iv_state *st = intervals_new(4, many_collect, &g);
    struct iv_stats s;
    int i, j, opened = 0, bad = 0;

    for (i = 0; i < 5000; i++) { /* tids 7, 14, ...: many share a key */
        intervals_marker(st, IV_BEGIN, 1, 7 * (int64_t)(i + 1), i, &m);
        seq[i] = opened++;
    }
    for (i = 0; i < 5000; i += 3) {
        intervals_marker(st, IV_END, 1, 7 * (int64_t)(i + 1), 6000 + i, &m);
        intervals_marker(st, IV_BEGIN, 1, 7 * (int64_t)(i + 1), 7000 + i, &m);
        seq[i] = opened++;
    }
    for (i = 0; i < 5000; i++) { /* the order wanted: insertion sort on (key, seq) */
        int64_t t = 7 * (int64_t)(i + 1);
        for (j = i; j > 0; j--) {
            int64_t u = want[j - 1];
            if (key(u) < key(t) || (key(u) == key(t) && seq[u / 7 - 1] < seq[i]))
                break;
            want[j] = u;
        }
        want[j] = t;
    }
    intervals_stats(st, &s);
    TAP_EQ_INT(s.threads_max, 5000, "5000 threads open at once");
    TAP_EQ_INT(intervals_finish(st, 9000), 0, "end of input closes them");
    for (i = 0; i < 5000 && i < g.n; i++)
        bad += g.tid[i] != want[i];
    TAP_OK(g.n == 5000 && g.ends == 1667 && bad == 0,
           "each thread ends once at eof, by hash then opening (%d eof, %d ends, %d out of place)",
           g.n, g.ends, bad);
    intervals_free(st);
}

int main(void)
{
    struct got g;
    struct iv_stats s;

    run("b" A " 1 10; b" B " 1 20; e" B " 1 30; e" A " 1 40", 99, &g, &s);
    TAP_EQ_INT(g.n, 2, "nested: two intervals");
    check(&g, B, 1, 20, 30, 1, "end-marker", "nested inner");
    check(&g, A, 1, 10, 40, 0, "end-marker", "nested outer");

    run("b" A " 1 10; b" B " 1 20; e" A " 1 40", 99, &g, &s);
    check(&g, B, 1, 20, 40, 1, "parent-end", "inner never ended");
    check(&g, A, 1, 10, 40, 0, "end-marker", "outer");

    run("d" A " 1 10; d" B " 1 20; m" C " 1 35", 50, &g, &s);
    TAP_EQ_INT(g.n, 3, "decision markers: consecutive point spans");
    check(&g, A, 1, 10, 20, 0, "next-marker", "point span A ends at B");
    check(&g, B, 1, 20, 35, 0, "next-marker", "point span B ends at C");
    check(&g, C, 1, 35, 50, 0, "eof", "last point span ends at end of input");

    run("d" A " 1 10; d" A " 1 15; e" A " 1 30", 99, &g, &s);
    TAP_EQ_INT(g.n, 1, "decision then its end: one interval");
    check(&g, A, 1, 10, 30, 0, "end-marker", "decision -> end");

    run("d" A " 1 10; b" A " 1 12; b" B " 1 20; e" B " 1 25; e" A " 1 30", 99, &g, &s);
    check(&g, A, 1, 10, 30, 0, "end-marker", "decision then begin: nested span");
    check(&g, B, 1, 20, 25, 1, "end-marker", "child of a decision-then-begin span");

    run("b" A " 1 10; b" B " 2 12; e" A " 1 20; b" C " 1 22; e" B " 2 30; e" C " 1 31", 99, &g, &s);
    check(&g, A, 1, 10, 20, 0, "end-marker", "interleaved threads, tid 1");
    check(&g, B, 2, 12, 30, 0, "end-marker", "interleaved threads, tid 2");
    check(&g, C, 1, 22, 31, 0, "end-marker", "interleaved threads, tid 1 again");

    run("e" A " 1 5; b" A " 1 10; e" B " 1 12", 40, &g, &s);
    TAP_EQ_INT(s.orphan_ends, 2, "ends of spans not open are orphans");
    check(&g, A, 1, 10, 40, 0, "eof", "begin without end lasts to end of input");

    run("b" A " 1 1; b" B " 1 2; b" C " 1 3; b" A " 1 4; b1111111111111111 1 5; "
        "b2222222222222222 1 6",
        9, &g, &s);
    TAP_EQ_INT(s.too_deep, 1, "depth cap (4) counted");
    TAP_EQ_INT(g.n, 4, "re-begin of an open span does not nest it again");
    check(&g, "1111111111111111", 1, 5, 9, 3, "eof", "deepest span kept");
    many_threads();
    return tap_done();
}

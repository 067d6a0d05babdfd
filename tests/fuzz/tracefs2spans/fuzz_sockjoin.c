/* Fuzz target: tracefs2spans/sockjoin.c - the socket event parser and the join.
 * Input: one socket event message per line ("recv 10.0.0.1:80 10.0.0.2:5 seq=1 len=2",
 * or a readiness wait, "wait from=1.000000500 ready=1", a goroutine's run "go g=0x1" or
 * start "spawn g=0x2 parent=0x1"); every parsed call also makes a
 * span of its bytes (alternately request and response of the span before), then the
 * events are matched, claimed and split (with the event loop's rules, where there are
 * waits), and the invariants are checked: pieces are non-empty, in time order per
 * thread, never overlapping, and name only spans that exist; a piece the loop's rules
 * gave names one span; goroutine starts' claims name spans that exist, one each at most. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tracefs2spans/t2s.h"

#define MAXN 256

struct check {
    size_t ns;
    int64_t tid, end;
    int any;
};

static int piece(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                 const size_t *spans, size_t n);

/* A goroutine's piece on a thread (goroutines.c): inside the claim, on a real thread. */
static int64_t claim_a, claim_b;
static int go_piece(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                    const size_t *spans, size_t n)
{
    (void)ctx, (void)pid, (void)spans, (void)n;
    if (end <= start || start < claim_a || end > claim_b || tid >= (1ll << 62))
        abort();
    return 0;
}

static int loop_piece(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                      const size_t *spans, size_t n)
{
    if (n != 1)
        abort();
    return piece(ctx, pid, tid, start, end, spans, n);
}

static int piece(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                 const size_t *spans, size_t n)
{
    struct check *c = ctx;

    (void)pid;
    if (end <= start || n == 0)
        abort();
    for (size_t i = 0; i < n; i++)
        if (spans[i] >= c->ns)
            abort();
    if (c->any && c->tid == tid && start < c->end)
        abort(); /* two pieces of one thread overlap */
    c->any = 1;
    c->tid = tid;
    c->end = end;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sj_event ev[MAXN];
    static struct sj_span sp[MAXN];
    static struct sj_result res[MAXN];
    static struct sj_claim cl[3 * MAXN];
    static size_t ev_span[MAXN];
    const char *s = (const char *)data, *end = s + size;
    size_t ne = 0, ns = 0, nc;
    struct check c = {0};
    uint64_t hits;

    while (s < end && ne < MAXN) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        struct sj_event e;
        if (sockjoin_parse(s, n, &e, NULL) == 0) {
            e.ts_ns = (int64_t)(ne * 7 % 13) * 1000;
            e.tid = (int64_t)(e.seq % 3);
            e.pid = 1;
            ev[ne++] = e;
            if (e.wait || e.go || e.spawn) {
                e.tid = (int64_t)((e.wait ? (uint64_t)e.from_ns : e.g) % 3);
                ev[ne - 1] = e;
            } else if (!e.send || ns == 0) {
                sp[ns] = (struct sj_span){e.conn, e.seq, e.seq + e.len, 0, 0, 1, 0};
                ns++;
            } else {
                sp[ns - 1].resp_start = e.seq;
                sp[ns - 1].resp_end = e.seq + e.len;
                sp[ns - 1].has_resp = 1;
            }
        }
        s += n + 1;
    }
    struct go_map gm;
    if (go_map_build(&gm, ev, ne))
        return 0;
    go_map_events(&gm, ev, ne);
    if (sockjoin_match(sp, ns, ev, ne, res, &hits, ev_span)) {
        go_map_free(&gm);
        return 0;
    }
    for (size_t j = 0; j < ne; j++)
        if (ev_span[j] != SJ_NOSPAN && ev_span[j] != SJ_SPANS && ev_span[j] >= ns)
            abort();
    nc = sockjoin_claims(res, ns, cl);
    if (nc > 2 * ns)
        abort();
    size_t ng = go_map_spawn_claims(&gm, ev, ne, sp, res, ns, cl + nc);
    for (size_t i = nc; i < nc + ng; i++)
        for (size_t k = i + 1; k < nc + ng; k++)
            if (cl[i].span >= ns || cl[i].span == cl[k].span || cl[i].tid < (1ll << 62))
                abort(); /* a span, a goroutine, one start each */
    if (ng > ns)
        abort();
    nc += ng;
    c.ns = ns;
    sockjoin_split_loops(cl, nc, ev, ev_span, ne, piece, loop_piece, &c);
    for (size_t i = 0; i < nc; i++) {
        claim_a = cl[i].start_ns;
        claim_b = cl[i].end_ns;
        go_map_pieces(&gm, 1, cl[i].tid, claim_a, claim_b, &cl[i].span, 1, go_piece, NULL);
    }
    go_map_free(&gm);
    return 0;
}

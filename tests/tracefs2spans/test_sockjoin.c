/* Unit tests: tracefs2spans/sockjoin.c - socket events joined to spans by 4-tuple and
 * TCP sequence range, on crafted event streams: the event text, thread per request,
 * a wrap of the sequence space, retransmitted (duplicate) events, pipelining, HTTP/2
 * streams multiplexed on one connection, a worker-pool hand-off, an event loop, and
 * events of another connection. */
#include <stdlib.h>
#include <string.h>

#include "../../tracefs2spans/t2s.h"
#include "tap.h"

#define MAXP 32

struct pieces {
    int n;
    struct {
        int64_t tid, start, end;
        size_t spans[4];
        size_t n;
        int loop; /* given by the event loop's rules */
    } p[MAXP];
};

static int collect(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                   const size_t *spans, size_t n)
{
    struct pieces *g = ctx;

    (void)pid;
    if (g->n < MAXP) {
        g->p[g->n].tid = tid;
        g->p[g->n].start = start;
        g->p[g->n].end = end;
        g->p[g->n].n = n;
        for (size_t k = 0; k < n && k < 4; k++)
            g->p[g->n].spans[k] = spans[k];
        g->n++;
    }
    return 0;
}

static int collect_loop(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                        const size_t *spans, size_t n)
{
    struct pieces *g = ctx;
    int at = g->n;

    collect(ctx, pid, tid, start, end, spans, n);
    if (at < MAXP)
        g->p[at].loop = 1;
    return 0;
}

static uint64_t key(void)
{
    return sockjoin_conn_key("10.0.0.1", 8, 8080, "10.0.0.2", 8, 5555);
}

static struct sj_event ev(int64_t ts, int64_t tid, int send, uint32_t seq, uint32_t len)
{
    struct sj_event e = {
        .ts_ns = ts, .pid = 100, .tid = tid, .conn = key(), .send = send, .seq = seq, .len = len};
    return e;
}

/* An event on the client's socket of the same connection (local 10.0.0.2:5555). */
static struct sj_event cev(int64_t ts, int64_t tid, int send, uint32_t seq, uint32_t len)
{
    char msg[128];
    struct sj_event e;
    int n = snprintf(msg, sizeof(msg), "%s 10.0.0.2:5555 10.0.0.1:8080 seq=%u len=%u",
                     send ? "send" : "recv", seq, len);

    sockjoin_parse(msg, (size_t)n, &e, NULL);
    e.ts_ns = ts;
    e.pid = 200;
    e.tid = tid;
    return e;
}

static struct sj_span span(uint32_t qa, uint32_t qb, uint32_t ra, uint32_t rb)
{
    struct sj_span s = {key(), qa, qb, ra, rb, 1, 1};
    return s;
}

/* Match, claim and split; returns the number of claims. */
static size_t run(const struct sj_span *sp, size_t ns, const struct sj_event *e, size_t ne,
                  struct sj_result *res, struct pieces *pc)
{
    struct sj_claim cl[2 * MAXP];
    uint64_t hits;
    size_t nc;

    memset(pc, 0, sizeof(*pc));
    if (sockjoin_match(sp, ns, e, ne, res, &hits, NULL))
        return 0;
    nc = sockjoin_claims(res, ns, cl);
    sockjoin_split(cl, nc, collect, pc);
    return nc;
}

static void test_parse(void)
{
    struct sj_event e;
    struct sf_err err;
    const char *v4 = "recv 10.0.0.1:8080 10.0.0.2:5555 seq=4294967295 len=200";
    const char *v6 = "send [::1]:8080 [fe80::1]:5555 seq=7 len=0";
    const char *w = "wait from=12345.000000042 ready=3";
    const char *go = "go g=0xc0000061a0";

    TAP_EQ_INT(sockjoin_parse(v4, strlen(v4), &e, &err), 0, "parse: IPv4 recv");
    TAP_OK(e.send == 0 && e.seq == 4294967295u && e.len == 200 && e.conn == key(),
           "parse: direction, seq, len and the server-side key");
    TAP_OK(e.conn_rev == sockjoin_conn_key("10.0.0.2", 8, 5555, "10.0.0.1", 8, 8080),
           "parse: the client-side key, remote as the server");
    TAP_EQ_INT(sockjoin_parse(v6, strlen(v6), &e, &err), 0, "parse: IPv6 send in brackets");
    TAP_OK(e.send == 1 && e.conn == sockjoin_conn_key("::1", 3, 8080, "fe80::1", 7, 5555),
           "parse: IPv6 key without the brackets");
    TAP_EQ_INT(sockjoin_parse(w, strlen(w), &e, &err), 0, "parse: a readiness wait");
    TAP_OK(e.wait == 1 && e.from_ns == 12345000000042ll && e.len == 3,
           "parse: the wait's call time and the descriptors it found ready");
    TAP_EQ_INT(sockjoin_parse(go, strlen(go), &e, &err), 0, "parse: a goroutine's run");
    TAP_OK(e.go == 1 && e.g == 0xc0000061a0ull && e.len == 0, "parse: the g's address");
    const char *sp = "spawn g=0xc000007380 parent=0xc000083860";
    TAP_EQ_INT(sockjoin_parse(sp, strlen(sp), &e, &err), 0, "parse: a goroutine's start");
    TAP_OK(e.spawn == 1 && e.go == 0 && e.g == 0xc000007380ull && e.parent == 0xc000083860ull,
           "parse: the new g and its parent");
    static const struct {
        const char *s;
        int col;
    } bad[] = {
        {"go g=0x", 4},
        {"go g=0xc0z", 4},
        {"spawn g=0x1", 12},
        {"spawn g=0x1 parent=0x", 13},
        {"spawn parent=0x1 g=0x2", 7},
        {"wait from=12.5 ready=1", 15},
        {"wait ready=1", 6},
        {"wait from=12.000000001", 23},
        {"peek 10.0.0.1:1 10.0.0.2:2 seq=1 len=1", 1},
        {"recv 10.0.0.1:99999 10.0.0.2:2 seq=1 len=1", 6},
        {"recv 10.0.0.1:1 10.0.0.2:2 seq=4294967296 len=1", 28},
        {"recv 10.0.0.1:1 10.0.0.2:2 seq=1", 33},
        {"recv 10.0.0.1:1 x<script>:2 seq=1 len=1", 17},
        {"recv 10.0.0.1:1 10.0.0.2:2 seq=1 len=1x", 39},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_err_clear(&err);
        int rc = sockjoin_parse(bad[i].s, strlen(bad[i].s), &e, &err);
        TAP_OK(rc == SF_E_MALFORMED && (int)err.col == bad[i].col,
               "parse: '%s' refused at column %d (got %d: %s)", bad[i].s, bad[i].col, (int)err.col,
               err.msg);
    }
}

/* Two exchanges on one keep-alive connection, each read and answered by one thread. */
static void test_thread_per_request(void)
{
    struct sj_span sp[2] = {span(1000, 1100, 5000, 5300), span(1100, 1200, 5300, 5400)};
    struct sj_event e[] = {ev(10, 7, 0, 1000, 60), ev(12, 7, 0, 1060, 40), ev(30, 7, 1, 5000, 300),
                           ev(40, 7, 0, 1100, 100), ev(55, 7, 1, 5300, 100)};
    struct sj_result r[2];
    struct pieces pc;

    TAP_EQ_INT((int)run(sp, 2, e, 5, r, &pc), 2, "per request: one claim per span");
    TAP_OK(r[0].reader_tid == 7 && r[0].writer_tid == 7 && r[0].req_last_ts == 12 &&
               r[0].req_a_ts == 10 && r[0].resp_last_ts == 30,
           "per request: the recv of the last request byte starts it, the send ends it");
    TAP_OK(pc.n == 2 && pc.p[0].n == 1 && pc.p[0].spans[0] == 0 && pc.p[0].start == 12 &&
               pc.p[0].end == 30 && pc.p[1].n == 1 && pc.p[1].spans[0] == 1 &&
               pc.p[1].start == 40 && pc.p[1].end == 55,
           "per request: each span owns its time alone (%d pieces)", pc.n);
}

/* The request crosses 2^32; the next exchange lies past the wrap. */
static void test_wrap(void)
{
    struct sj_span sp[2] = {span(0xffffff00u, 0x100u, 0xfffffff0u, 0x10u),
                            span(0x100u, 0x180u, 0x10u, 0x20u)};
    struct sj_event e[] = {ev(10, 3, 0, 0xffffff00u, 0x100), ev(11, 4, 0, 0, 0x100),
                           ev(20, 4, 1, 0xfffffff0u, 0x20), ev(30, 4, 0, 0x100, 0x80),
                           ev(40, 4, 1, 0x10, 0x10)};
    struct sj_result r[2];
    struct pieces pc;

    run(sp, 2, e, 5, r, &pc);
    TAP_OK(r[0].reader_tid == 4 && r[0].req_last_ts == 11 && r[0].req_first_ts == 10,
           "wrap: the recv after the wrap holds the request's last byte (reader %lld)",
           (long long)r[0].reader_tid);
    TAP_OK(r[0].writer_tid == 4 && r[0].resp_last_ts == 20, "wrap: the response across 2^32");
    TAP_OK(r[1].reader_tid == 4 && r[1].req_last_ts == 30 && r[1].resp_last_ts == 40,
           "wrap: the exchange past the wrap is found by its own bytes");
}

/* A duplicated event (the same bytes reported again, by another thread) changes nothing. */
static void test_retransmission(void)
{
    struct sj_span sp[1] = {span(500, 600, 900, 1000)};
    struct sj_event e[] = {ev(10, 7, 0, 500, 100), ev(11, 8, 0, 500, 100), ev(20, 7, 1, 900, 100),
                           ev(21, 8, 1, 900, 100)};
    struct sj_result r[1];
    struct pieces pc;

    run(sp, 1, e, 4, r, &pc);
    TAP_OK(r[0].reader_tid == 7 && r[0].writer_tid == 7 && r[0].req_last_ts == 10 &&
               r[0].resp_last_ts == 20,
           "retransmission: the first event to cover the bytes keeps them");
    TAP_OK(pc.n == 1 && pc.p[0].tid == 7 && pc.p[0].n == 1, "retransmission: one exclusive piece");
}

/* Two pipelined requests read by one recv; answered one after the other. */
static void test_pipelining(void)
{
    struct sj_span sp[2] = {span(100, 150, 700, 800), span(150, 200, 800, 850)};
    struct sj_event e[] = {ev(10, 7, 0, 100, 100), ev(20, 7, 1, 700, 100), ev(30, 7, 1, 800, 50)};
    struct sj_result r[2];
    struct pieces pc;

    run(sp, 2, e, 3, r, &pc);
    TAP_OK(r[0].req_last_ts == 10 && r[1].req_last_ts == 10 && r[1].reader_tid == 7,
           "pipelining: one recv completes both requests");
    TAP_OK(pc.n == 2 && pc.p[0].start == 10 && pc.p[0].end == 20 && pc.p[0].n == 2 &&
               pc.p[1].start == 20 && pc.p[1].end == 30 && pc.p[1].n == 1 && pc.p[1].spans[0] == 1,
           "pipelining: the time both wait is shared, the second owns the rest (%d pieces)", pc.n);
}

/* HTTP/2: streams 1 and 3 interleave their frames, so their byte ranges overlap. */
static void test_h2_multiplexing(void)
{
    struct sj_span sp[2] = {span(0, 120, 0, 200), span(60, 150, 100, 260)};
    struct sj_event e[] = {ev(10, 9, 0, 0, 150), ev(20, 9, 1, 0, 150), ev(25, 9, 1, 150, 50),
                           ev(40, 9, 1, 200, 60)};
    struct sj_result r[2];
    struct pieces pc;
    int64_t alone1 = 0, shared = 0;

    run(sp, 2, e, 4, r, &pc);
    TAP_OK(r[0].reader_tid == 9 && r[1].reader_tid == 9 && r[0].req_last_ts == 10 &&
               r[1].req_last_ts == 10,
           "h2: one read completes both streams' requests");
    TAP_OK(r[0].resp_last_ts == 25 && r[1].resp_last_ts == 40,
           "h2: each stream's response ends at the send of its own last byte");
    for (int i = 0; i < pc.n; i++) {
        if (pc.p[i].n == 1 && pc.p[i].spans[0] == 1)
            alone1 += pc.p[i].end - pc.p[i].start;
        else if (pc.p[i].n == 2)
            shared += pc.p[i].end - pc.p[i].start;
        else
            alone1 = -1000; /* span 0 owns no time alone here */
    }
    TAP_OK(shared == 15 && alone1 == 15, "h2: 15 ns shared, 15 ns stream 3 alone (%lld, %lld)",
           (long long)shared, (long long)alone1);
}

/* HTTP/2: the first read holds the connection preface before the first stream's
 * HEADERS, so it starts before any span's bytes (and here, across 2^32 too). */
static void test_h2_preface(void)
{
    struct sj_span sp[2] = {span(0xfffffff0u, 0x40u, 5000, 5100), span(0x40u, 0x80u, 5100, 5200)};
    struct sj_event e[] = {ev(10, 9, 0, 0xffffffd8u, 0xa8), ev(20, 9, 1, 5000, 200)};
    struct sj_result r[2];
    struct pieces pc;

    run(sp, 2, e, 2, r, &pc);
    TAP_OK(r[0].reader_tid == 9 && r[0].req_a_ts == 10 && r[1].reader_tid == 9,
           "h2 preface: a read that starts before the first stream still places both");
}

/* A worker pool: an acceptor thread reads, a worker answers. */
static void test_handoff(void)
{
    struct sj_span sp[1] = {span(0, 300, 0, 100)};
    struct sj_event e[] = {ev(10, 1, 0, 0, 200), ev(12, 1, 0, 200, 100), ev(50, 2, 1, 0, 60),
                           ev(52, 2, 1, 60, 40)};
    struct sj_result r[1];
    struct pieces pc;

    TAP_EQ_INT((int)run(sp, 1, e, 4, r, &pc), 2, "hand-off: a claim on each thread");
    TAP_OK(r[0].reader_tid == 1 && r[0].writer_tid == 2, "hand-off: reader 1, writer 2");
    TAP_OK(pc.n == 2 && pc.p[0].tid == 1 && pc.p[0].start == 10 && pc.p[0].end == 12 &&
               pc.p[1].tid == 2 && pc.p[1].start == 50 && pc.p[1].end == 52,
           "hand-off: each thread's own events bound its piece");
}

/* An event loop: one thread serves two connections at once. */
static void test_event_loop(void)
{
    uint64_t k2 = sockjoin_conn_key("10.0.0.1", 8, 8080, "10.0.0.3", 8, 6000);
    struct sj_span sp[2] = {span(0, 100, 0, 100), span(0, 100, 0, 100)};
    struct sj_event e[] = {ev(10, 5, 0, 0, 100), ev(15, 5, 0, 0, 100), ev(30, 5, 1, 0, 100),
                           ev(40, 5, 1, 0, 100)};
    struct sj_result r[2];
    struct pieces pc;

    sp[1].conn = k2;
    e[1].conn = k2;
    e[3].conn = k2;
    run(sp, 2, e, 4, r, &pc);
    TAP_OK(r[0].resp_last_ts == 30 && r[1].resp_last_ts == 40 && r[1].req_last_ts == 15,
           "event loop: each connection's events find their own span");
    TAP_OK(pc.n == 3 && pc.p[0].n == 1 && pc.p[0].spans[0] == 0 && pc.p[1].n == 2 &&
               pc.p[1].start == 15 && pc.p[1].end == 30 && pc.p[2].n == 1 && pc.p[2].spans[0] == 1,
           "event loop: [15, 30) is shared with both candidates, never split by guess");
}

static struct sj_event wait(int64_t from, int64_t ts, int64_t tid)
{
    struct sj_event e = {.ts_ns = ts, .pid = 100, .tid = tid, .wait = 1, .from_ns = from, .len = 1};
    return e;
}

/* The same event loop with its readiness waits: in an iteration, the work before a
 * call is that call's span's, the work after its last call that call's; time in a wait
 * stays shared. */
static void test_event_loop_waits(void)
{
    uint64_t k2 = sockjoin_conn_key("10.0.0.1", 8, 8080, "10.0.0.3", 8, 6000);
    struct sj_span sp[2] = {span(0, 100, 0, 100), span(0, 100, 0, 100)};
    struct sj_event e[] = {wait(0, 10, 5),       ev(12, 5, 0, 0, 100), wait(14, 20, 5),
                           ev(22, 5, 0, 0, 100), wait(24, 30, 5),      ev(38, 5, 1, 0, 50),
                           wait(40, 50, 5),      ev(55, 5, 1, 0, 100), ev(60, 5, 1, 50, 50),
                           wait(62, 70, 5)};
    size_t ne = sizeof(e) / sizeof(e[0]), ev_span[16], nc;
    struct sj_claim cl[4];
    struct sj_result r[2];
    struct pieces pc;
    uint64_t hits;
    static const struct {
        int64_t a, b;
        size_t n, span;
        int loop;
    } want[] = {{12, 22, 1, 0, 0}, {22, 24, 1, 1, 1}, {24, 30, 2, 0, 0}, {30, 40, 1, 0, 1},
                {40, 50, 2, 0, 0}, {50, 55, 1, 1, 1}, {55, 60, 1, 0, 0}};
    int same;

    sp[1].conn = e[3].conn = e[7].conn = k2;
    memset(&pc, 0, sizeof(pc));
    TAP_EQ_INT(sockjoin_match(sp, 2, e, ne, r, &hits, ev_span), 0, "event loop with waits: match");
    TAP_OK(ev_span[0] == SJ_NOSPAN && ev_span[1] == 0 && ev_span[3] == 1 && ev_span[5] == 0 &&
               ev_span[7] == 1 && ev_span[8] == 0,
           "event loop with waits: each call names the span whose bytes it copied, a wait none");
    nc = sockjoin_claims(r, 2, cl);
    TAP_EQ_INT(sockjoin_split_loops(cl, nc, e, ev_span, ne, collect, collect_loop, &pc), 0,
               "event loop with waits: split");
    same = pc.n == (int)(sizeof(want) / sizeof(want[0]));
    for (int i = 0; same && i < pc.n; i++)
        same = pc.p[i].start == want[i].a && pc.p[i].end == want[i].b && pc.p[i].n == want[i].n &&
               (want[i].n > 1 || pc.p[i].spans[0] == want[i].span) && pc.p[i].loop == want[i].loop;
    TAP_OK(same, "event loop with waits: [22,24) B's (after its iteration's last call), [24,30) "
                 "shared (a wait), [30,40) A's, [40,50) shared, [50,55) B's (before its call), "
                 "A alone after");
    /* a call on neither connection's bytes (another socket) makes an iteration no one's */
    struct sj_event e2[sizeof(e) / sizeof(e[0]) + 1];
    memcpy(e2, e, 5 * sizeof(*e));
    e2[5] = ev(35, 5, 1, 0, 10);
    e2[5].conn = sockjoin_conn_key("10.0.0.9", 8, 1, "10.0.0.8", 8, 2);
    memcpy(e2 + 6, e + 5, (ne - 5) * sizeof(*e));
    memset(&pc, 0, sizeof(pc));
    sockjoin_match(sp, 2, e2, ne + 1, r, &hits, ev_span);
    nc = sockjoin_claims(r, 2, cl);
    sockjoin_split_loops(cl, nc, e2, ev_span, ne + 1, collect, collect_loop, &pc);
    same = 0;
    for (int i = 0; i < pc.n; i++)
        same += (pc.p[i].start == 24 && pc.p[i].end == 35 && pc.p[i].n == 2) +
                (pc.p[i].start == 35 && pc.p[i].end == 40 && pc.p[i].n == 1 &&
                 pc.p[i].spans[0] == 0 && pc.p[i].loop);
    TAP_OK(same == 2, "event loop with waits: the work before a call on an unknown socket stays "
                      "shared ([24,35), the wait with it), after it the next call's ([35,40) A's)");
}

static struct sj_event gorun(int64_t ts, int64_t tid, uint64_t g)
{
    struct sj_event e = {.ts_ns = ts, .pid = 100, .tid = tid, .go = 1, .g = g};
    return e;
}

/* HTTP/2 spans end in any order, so the capture's order is not their bytes' order on the
 * connection: a read of all three places each, the lowest not first in the list too. */
static void test_h2_out_of_order(void)
{
    struct sj_span sp[3] = {span(200, 300, 0, 10), span(100, 200, 10, 20), span(0, 100, 20, 30)};
    struct sj_event e[] = {ev(10, 9, 0, 0, 300)};
    struct sj_result r[3];
    struct pieces pc;

    run(sp, 3, e, 1, r, &pc);
    TAP_OK(r[0].reader_tid == 9 && r[1].reader_tid == 9 && r[2].reader_tid == 9 &&
               r[0].req_a_tid == 9 && r[2].req_a_ts == 10,
           "h2 out of order: one read places the three requests, listed in any order");
}

static struct sj_event spawn(int64_t ts, int64_t tid, uint64_t g, uint64_t parent)
{
    struct sj_event e = {.ts_ns = ts, .pid = 100, .tid = tid, .spawn = 1, .g = g, .parent = parent};
    return e;
}

/* grpc-go: goroutine 0xa0 reads three streams' requests in one recv and starts goroutines
 * for the first two (the third's start was not seen), reads a fourth and starts one; the
 * answers go out from goroutine 0xe0.  Each started goroutine gets its stream in the
 * order of their bytes; the third stream drops out at the next read instead of taking
 * the fourth's goroutine; a start before any read, and one after nothing is pending,
 * get nothing. */
static void test_go_spawns(void)
{
    struct sj_span sp[4] = {span(100, 200, 10, 20), span(0, 100, 0, 10), span(300, 400, 30, 40),
                            span(200, 300, 20, 30)};
    struct sj_event e[] = {
        gorun(0, 5, 0xa0),        spawn(1, 5, 0x99, 0xa0),  ev(10, 5, 0, 0, 300),
        spawn(11, 5, 0xb1, 0xa0), spawn(12, 5, 0xb2, 0xa0), gorun(13, 6, 0xb1),
        ev(20, 5, 0, 300, 100),   spawn(21, 5, 0xb3, 0xa0), spawn(22, 5, 0xb4, 0xa0),
        gorun(23, 7, 0xe0),       ev(40, 7, 1, 0, 10),      ev(41, 7, 1, 10, 10),
        ev(42, 7, 1, 20, 10),     ev(43, 7, 1, 30, 10)};
    size_t ne = sizeof(e) / sizeof(e[0]), nc, i;
    struct sj_claim cl[4];
    struct sj_result r[4];
    struct go_map gm;
    uint64_t hits;
    int64_t want[3][4] = {{1, 0xb1, 11, 40}, {0, 0xb2, 12, 41}, {2, 0xb3, 21, 43}};
    int good;

    TAP_EQ_INT(go_map_build(&gm, e, ne), 0, "go spawns: the map of runs");
    go_map_events(&gm, e, ne);
    sockjoin_match(sp, 4, e, ne, r, &hits, NULL);
    nc = go_map_spawn_claims(&gm, e, ne, sp, r, 4, cl);
    good = nc == 3;
    for (i = 0; good && i < nc; i++) {
        const int64_t *w = want[i];
        good = (int64_t)cl[i].span == w[0] && cl[i].tid == ((1ll << 62) | w[1]) &&
               cl[i].start_ns == w[2] && cl[i].end_ns == w[3];
    }
    TAP_OK(good,
           "go spawns: 0xb1 runs the first stream [11,40), 0xb2 the second [12,41), "
           "0xb3 the fourth [21,43); the third and the starts at 1 and 22 get nothing "
           "(%zu claims)",
           nc);
    go_map_free(&gm);
}

/* A Go server: one goroutine reads a request on thread 5, parks, and answers it on
 * thread 6, while thread 5 runs another goroutine's request: by goroutine, each span's
 * time is on the threads that ran its goroutine, nothing shared, nothing on the other's. */
static void test_goroutines(void)
{
    uint64_t k2 = sockjoin_conn_key("10.0.0.1", 8, 8080, "10.0.0.3", 8, 6000);
    struct sj_span sp[2] = {span(0, 100, 0, 100), span(0, 100, 0, 100)};
    struct sj_event e[] = {gorun(0, 5, 0xa0),    ev(10, 5, 0, 0, 100), gorun(20, 5, 0xb0),
                           ev(25, 5, 0, 0, 100), gorun(30, 6, 0xa0),   ev(40, 6, 1, 0, 100),
                           gorun(45, 6, 0xc0),   ev(50, 5, 1, 0, 100), gorun(60, 5, 0xd0)};
    size_t ne = sizeof(e) / sizeof(e[0]), ev_span[16], nc;
    struct sj_claim cl[4];
    struct sj_result r[2];
    struct pieces pc;
    struct go_map gm;
    uint64_t hits;
    int good;

    sp[1].conn = e[3].conn = e[7].conn = k2;
    TAP_EQ_INT(go_map_build(&gm, e, ne), 0, "goroutines: the map of runs");
    TAP_OK(go_map_thread(&gm, 5, 12) == 5, "goroutines: a thread's id stays itself");
    go_map_events(&gm, e, ne);
    TAP_OK(e[1].tid == e[5].tid && e[1].tid != e[3].tid && e[1].tid > 0xffffffffll && e[0].tid == 5,
           "goroutines: the calls move to the goroutine that made them (a's read on 5 and "
           "answer on 6 alike), the runs stay on their threads");
    TAP_OK(go_map_thread(&gm, e[1].tid, 12) == 5 && go_map_thread(&gm, e[1].tid, 35) == 6 &&
               go_map_thread(&gm, e[1].tid, 25) == -1,
           "goroutines: which thread ran a goroutine when (none while it was parked)");
    sockjoin_match(sp, 2, e, ne, r, &hits, ev_span);
    nc = sockjoin_claims(r, 2, cl);
    memset(&pc, 0, sizeof(pc));
    /* each goroutine piece out as the threads' pieces */
    for (size_t i = 0; i < nc; i++)
        go_map_pieces(&gm, cl[i].pid, cl[i].tid, cl[i].start_ns, cl[i].end_ns, &cl[i].span, 1,
                      collect, &pc);
    good = nc == 2 && pc.n == 3;
    for (int i = 0; good && i < pc.n; i++)
        good =
            (pc.p[i].spans[0] == 0 &&
             ((pc.p[i].tid == 5 && pc.p[i].start == 10 && pc.p[i].end == 20) ||
              (pc.p[i].tid == 6 && pc.p[i].start == 30 && pc.p[i].end == 40))) ||
            (pc.p[i].spans[0] == 1 && pc.p[i].tid == 5 && pc.p[i].start == 25 && pc.p[i].end == 50);
    TAP_OK(good, "goroutines: a's span on 5 [10,20) and on 6 [30,40), b's on 5 [25,50): "
                 "the threads that ran each, when");
    go_map_free(&gm);
}

static void test_other_connection(void)
{
    struct sj_span sp[1] = {span(0, 100, 0, 100)};
    struct sj_event e[] = {ev(10, 5, 0, 0, 100), ev(30, 5, 1, 0, 100)};
    struct sj_result r[1];
    struct pieces pc;

    e[0].conn = e[1].conn = sockjoin_conn_key("10.0.0.2", 8, 5555, "10.0.0.1", 8, 8080);
    TAP_EQ_INT((int)run(sp, 1, e, 2, r, &pc), 0,
               "the client's side of the connection places nothing");
    TAP_OK(r[0].reader_tid == -1 && r[0].writer_tid == -1 && pc.n == 0, "no reader, no writer");
}

/* A call traced on the client's side too (a downstream request the traced process
 * made): its send of the request and recv of the response name the calling thread and
 * the call's times, and claim nothing; the server's side is joined as before. */
static void test_client_side(void)
{
    struct sj_span sp[1] = {span(1000, 1100, 5000, 5300)};
    struct sj_event e[] = {cev(5, 42, 1, 1000, 100), ev(10, 7, 0, 1000, 100),
                           ev(30, 7, 1, 5000, 300), cev(33, 42, 0, 5000, 200),
                           cev(35, 42, 0, 5200, 100)};
    struct sj_result res[1];
    struct pieces pc;
    size_t nc = run(sp, 1, e, 5, res, &pc);

    TAP_OK(res[0].caller_tid == 42 && res[0].caller_pid == 200 && res[0].call_start_ts == 5 &&
               res[0].call_end_ts == 35,
           "client side: caller 42, from its send of the request (5) to its recv of the "
           "response's last byte (35)");
    TAP_OK(res[0].reader_tid == 7 && res[0].writer_tid == 7 && nc == 1 && pc.n == 1 &&
               pc.p[0].tid == 7 && pc.p[0].start == 10 && pc.p[0].end == 30,
           "client side: the server's thread alone claims the span's time");
    struct sj_event only[] = {cev(5, 42, 1, 1000, 100)};
    nc = run(sp, 1, only, 1, res, &pc);
    TAP_OK(res[0].caller_tid == 42 && res[0].call_end_ts == SJ_NONE && res[0].reader_tid < 0 &&
               nc == 0,
           "client side without its response: a caller, no end, no claim");
}

int main(void)
{
    test_parse();
    test_thread_per_request();
    test_wrap();
    test_retransmission();
    test_pipelining();
    test_h2_multiplexing();
    test_h2_preface();
    test_handoff();
    test_event_loop();
    test_event_loop_waits();
    test_goroutines();
    test_h2_out_of_order();
    test_go_spawns();
    test_other_connection();
    test_client_side();
    return tap_done();
}

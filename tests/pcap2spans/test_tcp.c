/* Unit tests: pcap2spans TCP reassembly (tcp.c) with synthetic segments.
 *
 * A recording parser (ctx->force_ops) collects the bytes each direction delivers, with
 * gaps written into the stream as "<gap N>", so every test checks the exact byte
 * stream an application parser would see.
 */
#include <stdlib.h>
#include <string.h>

#include "../../pcap2spans/p2s.h"
#include "sf_buf.h"
#include "tap.h"

struct rec {
    struct sf_buf d[2];
    int opened, closed;
};

static void *rec_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct rec *r = ctx->span_hook_arg;

    (void)conn;
    r->opened++;
    return r;
}

static int rec_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                    struct sf_err *err)
{
    struct rec *r = st;

    (void)ts;
    (void)err;
    sf_buf_append(&r->d[dir], p, n);
    return 0;
}

static void rec_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct rec *r = st;

    (void)ts;
    sf_buf_printf(&r->d[dir], "<gap %llu>", (unsigned long long)len);
}

static void rec_close(void *st, int64_t ts)
{
    struct rec *r = st;

    (void)ts;
    r->closed++;
}

static const struct p2s_app_ops rec_ops = {"rec", rec_open, rec_data, rec_gap, rec_close};

static struct p2s_ctx ctx;
static struct rec rec;
/* The ISN each side sent in its SYN (syn_seen), for the acknowledgement numbers. */
static uint32_t isn[2];
static int syn_seen[2];

static void setup(void)
{
    syn_seen[0] = syn_seen[1] = 0;
    p2s_ctx_init(&ctx);
    ctx.quiet = 1;
    ctx.force_ops = &rec_ops;
    memset(&rec, 0, sizeof(rec));
    sf_buf_init(&rec.d[0], 1 << 20);
    sf_buf_init(&rec.d[1], 1 << 20);
    ctx.span_hook_arg = &rec;
}

static void teardown(void)
{
    p2s_ctx_free(&ctx);
    sf_buf_free(&rec.d[0]);
    sf_buf_free(&rec.d[1]);
}

/* Send a segment: c2s = 1 from 10.0.0.1:40000 to 10.0.0.2:80, else the reverse, with
 * acknowledgement number ack (when flags has ACK). */
static void seg_ack(int c2s, uint32_t seq, uint8_t flags, const char *data, int64_t ts,
                    uint32_t ack)
{
    static const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    struct p2s_seg s;

    memset(&s, 0, sizeof(s));
    s.family = 4;
    memcpy(s.src, c2s ? a : b, 4);
    memcpy(s.dst, c2s ? b : a, 4);
    s.sport = c2s ? 40000 : 80;
    s.dport = c2s ? 80 : 40000;
    s.seq = seq;
    s.ack = ack;
    s.flags = flags;
    s.payload = (const uint8_t *)data;
    s.len = data ? strlen(data) : 0;
    s.ts_ns = ts ? ts : 1000;
    ctx.pkt_ts = s.ts_ns;
    if (flags & 0x02) {
        isn[!c2s] = seq;
        syn_seen[!c2s] = 1;
    }
    tcp_segment(&ctx, &s);
}

/* The same, acknowledging only the peer's SYN (if seen): an ACK that proves nothing
 * about the peer's data, so these tests see reassembly alone. */
static void seg(int c2s, uint32_t seq, uint8_t flags, const char *data, int64_t ts)
{
    seg_ack(c2s, seq, flags, data, ts, syn_seen[c2s] ? isn[c2s] + 1 : 0);
}

static int stream_is(int dir, const char *want)
{
    struct sf_buf *b = &rec.d[dir];
    int ok = b->len == strlen(want) && (b->len == 0 || memcmp(b->data, want, b->len) == 0);

    if (!ok)
        printf("#   stream %d: got \"%.*s\", want \"%s\"\n", dir, (int)b->len,
               b->data ? (const char *)b->data : "", want);
    return ok;
}

#define SYN P2S_TH_SYN
#define ACK P2S_TH_ACK
#define FIN P2S_TH_FIN
#define RST P2S_TH_RST

static void handshake(uint32_t cisn, uint32_t sisn)
{
    seg(1, cisn, SYN, NULL, 0);
    seg(0, sisn, SYN | ACK, NULL, 0);
    seg(1, cisn + 1, ACK, NULL, 0);
}

static void test_in_order_and_close(void)
{
    setup();
    handshake(1000, 5000);
    seg(1, 1001, ACK, "hello ", 0);
    seg(1, 1007, ACK, "world", 0);
    seg(0, 5001, ACK, "reply", 0);
    TAP_OK(stream_is(0, "hello world"), "in-order bytes delivered once");
    TAP_OK(stream_is(1, "reply"), "server direction delivered");
    seg(1, 1012, FIN | ACK, NULL, 0);
    TAP_EQ_INT(rec.closed, 0, "one FIN does not close");
    seg(0, 5006, FIN | ACK, NULL, 0);
    TAP_EQ_INT(rec.closed, 1, "FIN both ways closes the connection");
    TAP_EQ_INT(ctx.st.connections, 1, "one connection counted");
    teardown();
}

static void test_out_of_order_retrans_overlap(void)
{
    setup();
    handshake(1000, 5000);
    seg(1, 1007, ACK, "world", 0);
    seg(1, 1001, ACK, "hello ", 0);
    seg(1, 1001, ACK, "hello ", 0); /* retransmission */
    TAP_OK(stream_is(0, "hello world"), "out-of-order segment waits for the hole, no duplicate");
    /* in-order overlap: only the new tail is delivered */
    seg(1, 1010, ACK, "XXxyz", 0);
    TAP_OK(stream_is(0, "hello worldxyz"), "overlap with delivered bytes: first copy wins");
    /* buffered overlaps: 1020..1024 "BBBB" first, then 1018..1026 "cccccccc" */
    seg(1, 1020, ACK, "BBBB", 0);
    seg(1, 1018, ACK, "cccccccc", 0);
    seg(1, 1015, ACK, "012", 0);
    TAP_OK(stream_is(0, "hello worldxyz012ccBBBBcc"),
           "overlap among buffered pieces: first copy wins");
    teardown();
}

static void test_wraparound(void)
{
    setup();
    handshake(0xfffffff0u, 7);
    /* data starts at 0xfffffff1; 8 + 8 + 8 bytes crossing 2^32, sent out of order */
    seg(1, 0x00000001u, ACK, "CCCCCCCC", 0);
    seg(1, 0xfffffff9u, ACK, "BBBBBBBB", 0);
    seg(1, 0xfffffff1u, ACK, "AAAAAAAA", 0);
    TAP_OK(stream_is(0, "AAAAAAAABBBBBBBBCCCCCCCC"), "sequence wrap at 2^32 with reordering");
    seg(1, 0x00000009u, FIN | ACK, NULL, 0);
    seg(0, 8, FIN | ACK, NULL, 0);
    TAP_EQ_INT(rec.closed, 1, "FIN after the wrap closes");
    teardown();
}

static void test_port_reuse(void)
{
    setup();
    handshake(1000, 5000);
    seg(1, 1001, ACK, "first", 0);
    seg(1, 1006, FIN | ACK, NULL, 0);
    seg(0, 5001, FIN | ACK, NULL, 0);
    TAP_EQ_INT(rec.closed, 1, "first connection closed");
    seg(1, 1007, ACK, NULL, 0); /* last ACK of the old connection: no new state */
    TAP_EQ_INT(ctx.st.connections, 1, "a bare ACK creates no connection");
    handshake(90000, 70000);
    seg(1, 90001, ACK, "second", 0);
    TAP_EQ_INT(ctx.st.connections, 2, "SYN on a reused tuple after FIN: new connection");
    TAP_OK(stream_is(0, "firstsecond"), "the two connections are not spliced");
    /* a new SYN with another ISN while the connection is open */
    handshake(123456, 654321);
    TAP_EQ_INT(ctx.st.connections, 3, "SYN with a different ISN: new connection");
    TAP_EQ_INT(rec.closed, 2, "the old one was closed");
    seg(1, 123456, SYN, NULL, 0); /* retransmitted SYN */
    TAP_EQ_INT(ctx.st.connections, 3, "retransmitted SYN (same ISN) is the same connection");
    teardown();
}

static void test_gap_and_resume(void)
{
    setup();
    ctx.lim.max_ooo_bytes = 8;
    handshake(1000, 5000);
    seg(1, 1001, ACK, "ab", 0);
    seg(1, 1005, ACK, "efgh", 0); /* hole 1003..1005 */
    TAP_OK(stream_is(0, "ab"), "hole holds back later bytes");
    seg(1, 1009, ACK, "ijklm", 0); /* 4 + 5 > 8: give up the hole */
    TAP_OK(stream_is(0, "ab<gap 2>efghijklm"), "cap hit: gap of 2 then resume");
    TAP_EQ_INT(ctx.st.gaps, 1, "gap counted");
    TAP_EQ_INT(ctx.st.gap_bytes, 2, "gap bytes counted");
    seg(1, 1020, ACK, "zz", 0); /* hole 1014..1020 left open */
    seg(1, 1022, FIN | ACK, NULL, 0);
    seg(0, 5001, FIN | ACK, NULL, 0);
    TAP_EQ_INT(rec.closed, 0, "FIN behind a hole does not close yet");
    seg(1, 1001, RST, NULL, 0);
    TAP_OK(stream_is(0, "ab<gap 2>efghijklm<gap 6>zz"), "close with a hole: gap then the rest");
    TAP_EQ_INT(rec.closed, 1, "RST closes");
    TAP_EQ_INT(ctx.st.gaps, 2, "second gap counted");
    teardown();
}

static void test_big_segment_over_cap(void)
{
    setup();
    ctx.lim.max_ooo_bytes = 4;
    handshake(1000, 5000);
    seg(1, 1001, ACK, "a", 0);
    seg(1, 1003, ACK, "0123456789", 0);
    TAP_OK(stream_is(0, "a<gap 1>0123456789"), "segment larger than the cap: gap, delivered");
    teardown();
}

static void test_flow_cap_and_idle(void)
{
    static const char *req = "x";
    struct p2s_seg s;
    int i;

    setup();
    ctx.lim.max_flows = 2;
    for (i = 0; i < 3; i++) {
        memset(&s, 0, sizeof(s));
        s.family = 4;
        s.src[0] = 10;
        s.src[3] = (uint8_t)(i + 1);
        s.dst[0] = 10;
        s.dst[3] = 100;
        s.sport = 40000;
        s.dport = 80;
        s.flags = SYN;
        s.ts_ns = 1000 + i;
        tcp_segment(&ctx, &s);
    }
    TAP_EQ_INT(ctx.st.flows_evicted, 1, "max_flows: the idlest flow is evicted");
    TAP_EQ_INT(rec.closed, 1, "evicted flow closed");
    ctx.lim.idle_timeout_ns = 1000000000;
    memset(&s, 0, sizeof(s));
    s.family = 4;
    s.src[0] = 10;
    s.src[3] = 50;
    s.dst[0] = 10;
    s.dst[3] = 100;
    s.sport = 40001;
    s.dport = 80;
    s.flags = ACK;
    s.payload = (const uint8_t *)req;
    s.len = 1;
    s.ts_ns = 5000000000;
    tcp_segment(&ctx, &s);
    TAP_EQ_INT(rec.closed, 3, "flows idle longer than the timeout are closed by capture time");
    teardown();
}

static void test_mid_connection(void)
{
    setup();
    ctx.force_ops = NULL; /* real detection */
    /* first segment seen is the server's response: the client is the other side */
    seg(0, 777, ACK, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0);
    TAP_EQ_INT(ctx.st.connections, 1, "data without SYN creates a connection");
    seg(1, 333, ACK, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n", 0);
    seg(0, 777 + 38, ACK, "HTTP/1.1 204 No Content\r\n\r\n", 0);
    TAP_EQ_INT(ctx.st.spans, 2, "mid-connection: orphan response and a full exchange");
    TAP_EQ_INT(ctx.st.partial_spans, 1, "the orphan response is partial");
    teardown();
}

/* The protocol a connection got by content detection (force_ops off). */
static const char *proto_of(int c2s_first, const char *data, size_t len, uint16_t sport,
                            uint16_t dport)
{
    static const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    static char out[16];
    const struct p2s_conn_info *ci;
    struct p2s_seg s;

    setup();
    ctx.force_ops = NULL;
    memset(&s, 0, sizeof(s));
    s.family = 4;
    memcpy(s.src, c2s_first ? a : b, 4);
    memcpy(s.dst, c2s_first ? b : a, 4);
    s.sport = sport;
    s.dport = dport;
    s.seq = 77;
    s.flags = ACK;
    s.payload = (const uint8_t *)data;
    s.len = len;
    s.ts_ns = 1;
    tcp_segment(&ctx, &s);
    ci = tcp_find(&ctx, &s);
    snprintf(out, sizeof(out), "%s", ci ? ci->app_proto : "(none)");
    teardown();
    return out;
}

static void test_detection(void)
{
    /* WINDOW_UPDATE on stream 0, then HEADERS (END_STREAM|END_HEADERS) on stream 3 */
    static const char h2mid[] = "\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x01\x00\x00"
                                "\x00\x00\x03\x01\x05\x00\x00\x00\x03\x82\x84\x86";
    static const char pre[] =
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    static const char tls[] = "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03";
    static const char junk[] = "\x01\x02\x03\x04 some binary protocol \xff\xfe\xfd";

    TAP_EQ_STR(proto_of(1, pre, sizeof(pre) - 1, 50000, 8080), "h2", "detect: HTTP/2 preface");
    TAP_EQ_STR(proto_of(1, h2mid, sizeof(h2mid) - 1, 50000, 8080), "h2",
               "detect: HTTP/2 frames without preface (mid-connection)");
    /* HEADERS of 9 + 50 bytes, then a DATA frame whose header the 64-byte window cuts */
    {
        char cut[9 + 50 + 9 + 100];

        memset(cut, 0, sizeof(cut));
        memcpy(cut, "\x00\x00\x32\x01\x04\x00\x00\x00\x05\x82\x84\x86\x00\x05x-pad\x27", 20);
        memset(cut + 20, 'p', 39);
        memcpy(cut + 9 + 50, "\x00\x00\x64\x00\x01\x00\x00\x00\x05", 9);
        TAP_EQ_STR(proto_of(1, cut, sizeof(cut), 50000, 8080), "h2",
                   "detect: HTTP/2 frames whose second header the detection window cuts");
    }
    TAP_EQ_STR(proto_of(1, "GET / HTTP/1.1\r\n\r\n", 18, 50000, 9999), "http/1.1",
               "detect: HTTP/1 request line on any port");
    TAP_EQ_STR(proto_of(0, "HTTP/1.1 200 OK\r\n", 17, 80, 50000), "http/1.1",
               "detect: HTTP/1 status line from the server");
    TAP_EQ_STR(proto_of(1, tls, sizeof(tls) - 1, 50000, 443), "tls", "detect: TLS record");
    TAP_EQ_STR(proto_of(1, junk, sizeof(junk) - 1, 50000, 80), "unknown",
               "detect: other bytes, even on port 80, are unknown");
}

/* Keep-alive probes where the capture starts mid-connection (issue #18 item 4): a bare
 * segment at SND.NXT - 1 does not start a direction, and a 1-byte probe at SND.NXT - 1
 * is dropped once the next data starts right after it; a first byte that the next data
 * repeats (a zero-window probe of new data) is stream data. */
static void test_keepalive_probes(void)
{
    setup();
    seg(1, 333, ACK, "GET /a HTTP/1.1\r\n", 0); /* no SYN seen */
    seg(0, 776, ACK, NULL, 0);                  /* zero-length probe at SND.NXT - 1 */
    seg(0, 777, ACK, "HTTP/1.1 200 OK\r\n", 0);
    TAP_OK(stream_is(1, "HTTP/1.1 200 OK\r\n"),
           "a zero-length probe first does not open a 1-byte hole before the data");
    teardown();
    setup();
    seg(1, 999, ACK, "\x01", 0); /* 1-byte keep-alive probe, sent twice */
    seg(1, 999, ACK, "\x01", 0);
    seg(0, 50, ACK, NULL, 0);
    seg(1, 1000, ACK, "GET /b HTTP/1.1\r\n", 0);
    TAP_OK(stream_is(0, "GET /b HTTP/1.1\r\n"), "a 1-byte probe before the data is dropped");
    TAP_EQ_INT(p2s_note_count(&ctx, "tcp_keepalive"), 1, "the probe is noted once");
    teardown();
    setup();
    seg(0, 80, ACK, "H", 0); /* zero-window probe: the next byte, sent again with more */
    seg(0, 80, ACK, "HTTP/1.1 204 No Content\r\n", 0);
    TAP_OK(stream_is(1, "HTTP/1.1 204 No Content\r\n"),
           "a 1-byte segment repeated by the next data is stream data, delivered once");
    TAP_EQ_INT(p2s_note_count(&ctx, "tcp_keepalive"), 0, "and not a probe");
    teardown();
}

/* The out-of-order buffer (tcp_ooo.c) with many small pieces: 20,000 one-byte segments
 * behind a hole, in a shuffled order with duplicates and overlaps across its 2 KiB pages,
 * come out as the exact byte stream once the hole fills. */
static void test_many_pieces(void)
{
    enum { N = 20000 };
    static char want[N + 2], one[2];
    static uint32_t order[N];
    uint32_t x = 12345, i;

    setup();
    handshake(1000, 5000);
    for (i = 0; i < N; i++) {
        want[i + 1] = (char)('a' + i % 26);
        order[i] = i;
    }
    want[0] = 'H';
    for (i = N - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
        uint32_t j, t;
        x = x * 1103515245u + 12345u;
        j = (x >> 8) % (i + 1);
        t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (i = 0; i < N; i++) {
        one[0] = want[order[i] + 1];
        seg(1, 1002 + order[i], ACK, one, 0);
        if (i % 1000 == 0) /* a duplicate */
            seg(1, 1002 + order[i], ACK, one, 0);
    }
    seg(1, 4090, ACK, "ZZZZZZZZZZZZZZZZ", 0); /* across the page edge at 4096, all held */
    TAP_OK(stream_is(0, ""), "nothing before the hole fills");
    seg(1, 1001, ACK, "H", 0);
    want[N + 1] = 0;
    TAP_OK(stream_is(0, want), "%d shuffled one-byte segments reassembled exactly", N);
    TAP_EQ_INT(ctx.st.gaps, 0, "no gap");
    teardown();
}

/* Caps: --max-ooo-segments pieces, and --max-ooo-bytes of sequence space after the hole. */
static void test_ooo_caps(void)
{
    setup();
    ctx.lim.max_ooo_segments = 3;
    handshake(1000, 5000);
    seg(1, 1003, ACK, "c", 0);
    seg(1, 1005, ACK, "e", 0);
    seg(1, 1007, ACK, "g", 0);
    TAP_OK(stream_is(0, ""), "three pieces held behind the hole");
    seg(1, 1009, ACK, "i", 0); /* a fourth: the first hole is given up */
    TAP_OK(stream_is(0, "<gap 2>c"), "the segment cap gives up the first hole: %.*s",
           (int)rec.d[0].len, rec.d[0].data);
    teardown();
    setup();
    ctx.lim.max_ooo_bytes = 100;
    handshake(1000, 5000);
    seg(1, 1011, ACK, "k", 0);
    seg(1, 1200, ACK, "far", 0); /* beyond 100 bytes after the hole */
    TAP_OK(stream_is(0, "<gap 10>k<gap 188>far"), "a segment beyond the window: gaps, then it");
    teardown();
}

/* A hole the peer has acknowledged is a gap at once (issue #18 item 1): bytes before the
 * ACK reached the peer and no retransmission will bring them. */
static void test_ack_proves_hole(void)
{
    setup();
    handshake(1000, 5000);
    seg(1, 1001, ACK, "GET /1", 0);
    seg(0, 5011, ACK, "second", 0); /* 5001..5011 lost by the capture */
    TAP_OK(stream_is(1, ""), "held behind the hole");
    seg_ack(1, 1007, ACK, NULL, 0, 5005); /* the client has 5001..5005 */
    TAP_OK(stream_is(1, "<gap 4>"), "ACK 5005: the acknowledged part is a gap at once");
    seg_ack(1, 1007, ACK, NULL, 0, 5017);
    TAP_OK(stream_is(1, "<gap 4><gap 6>second"), "ACK past the held bytes: the rest is a gap");
    seg_ack(1, 1007, ACK, NULL, 0, 5030); /* acknowledges bytes not captured yet */
    TAP_OK(stream_is(1, "<gap 4><gap 6>second<gap 13>"),
           "ACK beyond everything seen: those bytes were lost to the capture too");
    seg(0, 5030, ACK, "more", 0);
    TAP_OK(stream_is(1, "<gap 4><gap 6>second<gap 13>more"), "data after the ACK goes on");
    seg_ack(1, 1007, ACK, NULL, 0, 5020); /* an old ACK proves nothing */
    TAP_EQ_INT(ctx.st.gaps, 3, "three gaps");
    teardown();
}

/* Random overlapping segments (up to 3,000 bytes, so across the 2 KiB pages) in random
 * order over 60,000 bytes of one stream, then the rest in order: the bytes come out once
 * each, in order.  (Which copy of a byte wins when copies differ is test_out_of_order_
 * retrans_overlap's: held ones among themselves the first, like an in-order segment over
 * held bytes, which wins as in Linux' receive queue.) */
static void test_random_overlaps(void)
{
    enum { LEN = 60000, SEGS = 400 };
    static char want[LEN + 1], data[3001];
    uint32_t x = 777, base;
    int k, round;

    for (k = 0; k < LEN; k++)
        want[k] = (char)('A' + (k * 7 + k / 26) % 26);
    for (round = 0; round < 3; round++) {
        base = 5001u + (uint32_t)round * 0x7fff0000u; /* the last round wraps 2^32 */
        setup();
        handshake(base - 1, 9000);
        for (k = 0; k < SEGS; k++) {
            uint32_t off, len;
            x = x * 1103515245u + 12345u;
            off = 1 + (x >> 4) % (LEN - 1); /* byte 0 stays a hole until the end */
            x = x * 1103515245u + 12345u;
            len = 1 + (x >> 4) % 3000;
            if (off + len > LEN)
                len = LEN - off;
            memcpy(data, want + off, len);
            data[len] = 0;
            seg(1, base + off, ACK, data, 0);
        }
        TAP_EQ_INT(rec.d[0].len, 0, "round %d: all held behind the hole", round);
        for (k = 0; k < LEN; k += 3000) { /* then the whole stream in order */
            uint32_t len = LEN - (uint32_t)k < 3000 ? LEN - (uint32_t)k : 3000;
            memcpy(data, want + k, len);
            data[len] = 0;
            seg(1, base + (uint32_t)k, ACK, data, 0);
        }
        want[LEN] = 0;
        TAP_OK(
            stream_is(0, want) && ctx.st.gaps == 0,
            "round %d: %d random overlapping segments, then the stream: each byte once, in order",
            round, SEGS);
        teardown();
    }
}

int main(void)
{
    test_detection();
    test_in_order_and_close();
    test_out_of_order_retrans_overlap();
    test_wraparound();
    test_port_reuse();
    test_gap_and_resume();
    test_big_segment_over_cap();
    test_flow_cap_and_idle();
    test_mid_connection();
    test_keepalive_probes();
    test_many_pieces();
    test_ooo_caps();
    test_ack_proves_hole();
    test_random_overlaps();
    return tap_done();
}

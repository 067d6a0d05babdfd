/* Unit tests: link.c and ip.c with synthetic frames.  Each frame carries one TCP
 * segment with a payload; a recording parser (force_ops) shows whether it reached TCP. */
#include <string.h>

#include "../../pcap2spans/p2s.h"
#include "sf_buf.h"
#include "tap.h"

static struct sf_buf got;

static void *rec_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    (void)ctx;
    (void)conn;
    return &got;
}

static int rec_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                    struct sf_err *err)
{
    (void)dir;
    (void)ts;
    (void)err;
    sf_buf_append(st, p, n);
    return 0;
}

static void rec_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    (void)st;
    (void)dir;
    (void)len;
    (void)ts;
}

static void rec_close(void *st, int64_t ts)
{
    (void)st;
    (void)ts;
}

static const struct p2s_app_ops rec_ops = {"rec", rec_open, rec_data, rec_gap, rec_close};

/* TCP header (20 bytes, ACK|PSH) + "hello" */
static size_t tcp_seg(uint8_t *p)
{
    static const uint8_t h[20] = {0x9c, 0x40, 0x00, 0x50, 0, 0, 0x10, 0, 0, 0, 0, 1, 0x50, 0x18};
    memcpy(p, h, 20);
    memcpy(p + 20, "hello", 5);
    return 25;
}

static size_t ipv4(uint8_t *p, int options, int frag)
{
    size_t ihl = options ? 24 : 20, n;
    memset(p, 0, ihl);
    p[0] = (uint8_t)(0x40 | ihl / 4);
    p[9] = 6;
    p[12] = 10, p[15] = 1, p[16] = 10, p[19] = 2;
    if (frag)
        p[6] = 0x20; /* more fragments */
    if (options)
        p[20] = 1, p[21] = 1, p[22] = 1, p[23] = 0; /* NOPs, EOL */
    n = ihl + tcp_seg(p + ihl);
    p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
    return n;
}

static size_t ipv6(uint8_t *p, int ext)
{
    size_t off = 40, n;
    memset(p, 0, 48);
    p[0] = 0x60;
    p[6] = ext ? 0 : 6; /* hop-by-hop first, or TCP */
    p[8] = 0x20, p[9] = 1, p[23] = 1;
    p[24] = 0x20, p[25] = 1, p[39] = 2;
    if (ext) { /* hop-by-hop: next TCP, length 0 (8 bytes), PadN */
        p[40] = 6, p[41] = 0, p[42] = 1, p[43] = 4;
        off = 48;
    }
    n = off + tcp_seg(p + off) - 40;
    p[4] = (uint8_t)(n >> 8);
    p[5] = (uint8_t)n;
    return n + 40;
}

/* Decode one frame in a fresh context; returns 1 if "hello" reached TCP. */
static int decode(int dlt, const uint8_t *f, size_t n, struct p2s_stats *st)
{
    struct p2s_ctx ctx;
    int ok;

    p2s_ctx_init(&ctx);
    ctx.quiet = 1;
    ctx.errors_printed = 1000;
    ctx.force_ops = &rec_ops;
    sf_buf_init(&got, 1024);
    ctx.pkt_ts = 1;
    link_decode(&ctx, dlt, f, n, n);
    ok = got.len == 5 && memcmp(got.data, "hello", 5) == 0;
    if (st)
        *st = ctx.st;
    p2s_ctx_free(&ctx);
    sf_buf_free(&got);
    return ok;
}

/* A frame of link type dlt carrying IPv4 (or IPv6 where the header says) + TCP "hello":
 * one builder per row of link.c's table; 0 for a link type it does not know. */
static size_t frame_for(int dlt, uint8_t *f)
{
    static const struct {
        int dlt;
        uint8_t hdr[20];
        size_t len;
        int v6;
    } h[] = {
        {0, {2, 0, 0, 0}, 4, 0}, /* little-endian host */
        {1, {[12] = 0x86, [13] = 0xdd}, 14, 1},
        {7, {0x50, 0xbe, 0xd4, 0, 0x12, 0x34}, 6, 0}, /* RFC 1201 IP */
        {9, {0xff, 0x03, 0x00, 0x21}, 4, 0},          /* PPP in HDLC-like framing */
        {12, {0}, 0, 0},
        {14, {0}, 0, 1},
        {50, {0xff, 0x03, 0x00, 0x57}, 4, 1}, /* PPP, IPv6 */
        {101, {0}, 0, 0},
        {104, {0x0f, 0x00, 0x08, 0x00}, 4, 0}, /* Cisco HDLC */
        {108, {0, 0, 0, 2}, 4, 0},
        {113, {[14] = 0x08}, 16, 0},
        {129, {0x50, 0xbe, 0, 0, 0xd4, 0, 0, 1}, 8, 0}, /* Linux RFC 1201 IP */
        {228, {0}, 0, 0},
        {229, {0}, 0, 1},
        {276, {0x86, 0xdd}, 20, 1},
    };
    size_t i;

    for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
        if (h[i].dlt == dlt) {
            memcpy(f, h[i].hdr, h[i].len);
            return h[i].len + (h[i].v6 ? ipv6(f + h[i].len, 0) : ipv4(f + h[i].len, 0, 0));
        }
    return 0;
}

/* Every link type in link.c's table decodes a frame of its own: the table is the list. */
static void every_link_type(void)
{
    uint8_t f[256];
    const char *name;
    size_t i, n;
    int dlt;

    for (i = 0; (dlt = link_type_at(i, &name)) >= 0; i++) {
        n = frame_for(dlt, f);
        TAP_OK(n > 0 && link_supported(dlt) && decode(dlt, f, n, NULL),
               "link type %d (%s) in the table decodes a frame", dlt, name);
    }
    TAP_OK(i == 15, "the table has the 15 link types this test builds frames for (%zu)", i);
    TAP_OK(!link_supported(105) && link_type_at(i, NULL) == -1, "nothing past the table");
}

/* The variants of the new link types: PPP's optional fields, Cisco framing under
 * PPP_HDLC, ARCnet's RFC 1051 header, BSD exception frames and fragments. */
static void ppp_and_arcnet(void)
{
    uint8_t f[256];
    struct p2s_stats st;
    size_t n;

    f[0] = 0x21; /* protocol field compressed, no address/control */
    n = 1 + ipv4(f + 1, 0, 0);
    TAP_OK(decode(9, f, n, NULL), "PPP: 1-byte protocol, no address and control");
    f[0] = 0x00, f[1] = 0x57;
    n = 2 + ipv6(f + 2, 0);
    TAP_OK(decode(9, f, n, NULL), "PPP: 2-byte protocol IPv6, no address and control");
    f[0] = 0xff, f[1] = 0x03, f[2] = 0xc0, f[3] = 0x21; /* LCP */
    TAP_OK(!decode(9, f, 40, &st) && st.unsupported_net == 1, "PPP: LCP counted as unsupported");
    TAP_OK(!decode(9, f, 2, &st) && st.malformed == 1, "PPP: header cut short reported");
    f[0] = 0x8f, f[1] = 0x00, f[2] = 0x86, f[3] = 0xdd;
    n = 4 + ipv6(f + 4, 0);
    TAP_OK(decode(50, f, n, NULL), "PPP_HDLC carrying Cisco HDLC (0x8f) + IPv6");
    TAP_OK(!decode(104, f, 3, &st) && st.malformed == 1, "Cisco HDLC: header cut short reported");
    f[0] = 0x50, f[1] = 0xbe, f[2] = 0xf0; /* RFC 1051 IP: no flag, no seqid */
    n = 3 + ipv4(f + 3, 0, 0);
    TAP_OK(decode(7, f, n, NULL), "ARCnet BSD, RFC 1051 IP");
    f[2] = 0, f[3] = 0, f[4] = 0xf0;
    n = 5 + ipv4(f + 5, 0, 0);
    TAP_OK(decode(129, f, n, NULL), "ARCnet Linux, RFC 1051 IP");
    f[2] = 0, f[3] = 0, f[4] = 0xc4, f[5] = 0, f[6] = 0, f[7] = 1;
    n = 8 + ipv6(f + 8, 0);
    TAP_OK(decode(129, f, n, NULL), "ARCnet Linux, RFC 1201 IPv6");
    f[2] = 0xd4, f[3] = 0xff, f[4] = 0, f[5] = 0, f[6] = 0xd4, f[7] = 0, f[8] = 0, f[9] = 1;
    n = 10 + ipv4(f + 10, 0, 0);
    TAP_OK(decode(7, f, n, NULL), "ARCnet BSD exception frame (flag 0xff)");
    f[2] = 0xd4, f[3] = 0x01, f[4] = 0, f[5] = 1;
    n = 6 + ipv4(f + 6, 0, 0);
    TAP_OK(!decode(7, f, n, &st) && st.unsupported_net == 1, "ARCnet BSD fragment counted");
    f[2] = 0xd5; /* RFC 1201 ARP */
    f[3] = 0;
    TAP_OK(!decode(7, f, n, &st) && st.unsupported_net == 1, "ARCnet ARP counted as unsupported");
    TAP_OK(!decode(129, f, 6, &st) && st.malformed == 1, "ARCnet Linux: header cut short reported");
}

int main(void)
{
    uint8_t f[256];
    struct p2s_stats st;
    size_t n;
    uint32_t fam;

    /* Ethernet, plain */
    memset(f, 0, 14);
    f[12] = 0x08;
    n = 14 + ipv4(f + 14, 0, 0);
    TAP_OK(decode(1, f, n, NULL), "Ethernet + IPv4 + TCP");
    /* Ethernet padding after a short IP packet is ignored (IP total length rules) */
    memset(f + n, 0xee, 10);
    TAP_OK(decode(1, f, n + 10, NULL), "Ethernet padding ignored");
    /* 802.1Q then QinQ */
    memset(f, 0, 22);
    f[12] = 0x88, f[13] = 0xa8, f[16] = 0x81, f[17] = 0x00, f[20] = 0x86, f[21] = 0xdd;
    n = 22 + ipv6(f + 22, 0);
    TAP_OK(decode(1, f, n, NULL), "Ethernet QinQ (0x88a8 + 0x8100) + IPv6");
    /* IPv4 options, IPv6 hop-by-hop */
    f[12] = 0x08, f[13] = 0x00;
    n = 14 + ipv4(f + 14, 1, 0);
    TAP_OK(decode(1, f, n, NULL), "IPv4 with options");
    f[12] = 0x86, f[13] = 0xdd;
    n = 14 + ipv6(f + 14, 1);
    TAP_OK(decode(1, f, n, NULL), "IPv6 with a hop-by-hop extension header");
    /* fragments are counted, not decoded */
    f[12] = 0x08, f[13] = 0x00;
    n = 14 + ipv4(f + 14, 0, 1);
    TAP_OK(!decode(1, f, n, &st) && st.ip_fragments == 1, "IPv4 fragment counted");
    /* ARP is another ethertype */
    f[12] = 0x08, f[13] = 0x06;
    TAP_OK(!decode(1, f, n, &st) && st.unsupported_net == 1, "ARP counted as unsupported");
    /* Linux cooked v1 and v2 */
    memset(f, 0, 20);
    f[14] = 0x08;
    n = 16 + ipv4(f + 16, 0, 0);
    TAP_OK(decode(113, f, n, NULL), "Linux cooked (SLL)");
    memset(f, 0, 20);
    f[0] = 0x86, f[1] = 0xdd;
    n = 20 + ipv6(f + 20, 0);
    TAP_OK(decode(276, f, n, NULL), "Linux cooked v2 (SLL2) + IPv6");
    /* BSD loopback: host byte order, both orders; LOOP: network order */
    fam = 2;
    memcpy(f, &fam, 4);
    n = 4 + ipv4(f + 4, 0, 0);
    TAP_OK(decode(0, f, n, NULL), "NULL, this host's byte order");
    fam = __builtin_bswap32(2);
    memcpy(f, &fam, 4);
    TAP_OK(decode(0, f, n, NULL), "NULL, the other byte order");
    f[0] = 0, f[1] = 0, f[2] = 0, f[3] = 30;
    n = 4 + ipv6(f + 4, 0);
    TAP_OK(decode(108, f, n, NULL), "LOOP (big endian) with Darwin's AF_INET6 30");
    /* raw IP, three link type numbers */
    n = ipv4(f, 0, 0);
    TAP_OK(decode(12, f, n, NULL), "DLT_RAW IPv4");
    TAP_OK(decode(228, f, n, NULL), "LINKTYPE_IPV4");
    n = ipv6(f, 0);
    TAP_OK(decode(229, f, n, NULL), "LINKTYPE_IPV6");
    TAP_OK(decode(101, f, n, NULL), "LINKTYPE_RAW IPv6");
    /* unsupported link type, truncated frames */
    TAP_OK(!decode(105, f, n, &st) && st.unsupported_link == 1, "802.11 counted as unsupported");
    TAP_OK(!decode(1, f, 10, &st) && st.malformed == 1, "short Ethernet frame reported");
    n = ipv4(f, 0, 0);
    TAP_OK(!decode(12, f, n - 3, &st) && st.truncated == 1, "IP packet cut by the snap length");
    n = ipv4(f, 0, 0);
    f[20 + 12] = 0x20; /* data offset 8 bytes < 20 */
    TAP_OK(!decode(12, f, n, &st) && st.malformed == 1, "bad TCP data offset reported");
    every_link_type();
    ppp_and_arcnet();
    return tap_done();
}

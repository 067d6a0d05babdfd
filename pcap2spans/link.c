/* link.c - link-layer headers: Ethernet (802.1Q, QinQ), Linux cooked (SLL, SLL2),
 * BSD loopback (NULL, LOOP) and raw IP.
 *
 * References: IEEE 802.3 / 802.1Q; tcpdump.org/linktypes.html (LINKTYPE_LINUX_SLL,
 * LINKTYPE_LINUX_SLL2, LINKTYPE_NULL, LINKTYPE_LOOP, LINKTYPE_RAW/IPV4/IPV6).
 *
 *   Ethernet:  dst(6) src(6) [TPID 0x8100/0x88a8/0x9100 TCI(2)]... type(2) payload
 *   SLL:       pkttype(2) hatype(2) halen(2) addr(8) protocol(2)          = 16 bytes
 *   SLL2:      protocol(2) rsvd(2) ifindex(4) hatype(2) pkttype(1) halen(1) addr(8) = 20
 *   NULL:      family(4, byte order of the capturing host)  LOOP: family(4, big endian)
 *
 * Everything that is not IPv4/IPv6 is counted (st.unsupported_net); link types we
 * do not decode are counted (st.unsupported_link) and reported once by pcap.c.
 */
#include "link.h"

#include <string.h>

#include "ip.h"
#include "sf_rd.h"

enum {
    DLT_NULL_ = 0,
    DLT_EN10MB_ = 1,
    DLT_RAW_ = 12,
    DLT_RAW_OPENBSD_ = 14,
    LINKTYPE_RAW_ = 101,
    DLT_LOOP_ = 108,
    DLT_LINUX_SLL_ = 113,
    LINKTYPE_IPV4_ = 228,
    LINKTYPE_IPV6_ = 229,
    DLT_LINUX_SLL2_ = 276,
};

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd

int link_supported(int dlt)
{
    switch (dlt) {
    case DLT_NULL_:
    case DLT_EN10MB_:
    case DLT_RAW_:
    case DLT_RAW_OPENBSD_:
    case LINKTYPE_RAW_:
    case DLT_LOOP_:
    case DLT_LINUX_SLL_:
    case LINKTYPE_IPV4_:
    case LINKTYPE_IPV6_:
    case DLT_LINUX_SLL2_:
        return 1;
    default:
        return 0;
    }
}

static void by_ethertype(struct p2s_ctx *ctx, unsigned type, const uint8_t *p, size_t n)
{
    if (type == ETH_IPV4 || type == ETH_IPV6)
        ip_decode(ctx, p, n);
    else
        ctx->st.unsupported_net++;
}

static void short_frame(struct p2s_ctx *ctx, const char *what, size_t n)
{
    struct sf_err err;

    sf_err_clear(&err);
    err.proto = "link";
    sf_err_set(&err, SF_E_TRUNC, UINT64_MAX, "%s header needs more than the %zu captured bytes",
               what, n);
    ctx->st.malformed++;
    p2s_report(ctx, &err);
}

static void ethernet(struct p2s_ctx *ctx, const uint8_t *p, size_t n)
{
    struct sf_rd rd;
    unsigned type;
    int tags = 0;

    sf_rd_init(&rd, p, n, 0);
    sf_rd_skip(&rd, 12);
    type = sf_rd_u16be(&rd);
    /* 802.1Q, 802.1ad (QinQ) and the old 0x9100: skip each 4-byte tag. */
    while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && tags++ < 8) {
        sf_rd_skip(&rd, 2);
        type = sf_rd_u16be(&rd);
    }
    if (rd.err) {
        short_frame(ctx, "Ethernet", n);
        return;
    }
    if (type < 0x0600) { /* 802.3 length field: LLC, not IP */
        ctx->st.unsupported_net++;
        return;
    }
    by_ethertype(ctx, type, rd.p, sf_rd_left(&rd));
}

/* BSD loopback address family: AF_INET is 2 everywhere; AF_INET6 is 10 (Linux),
 * 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (Darwin). */
static void null_family(struct p2s_ctx *ctx, uint32_t fam, const uint8_t *p, size_t n)
{
    if (fam == 2 || fam == 10 || fam == 24 || fam == 28 || fam == 30)
        ip_decode(ctx, p, n);
    else
        ctx->st.unsupported_net++;
}

/* Linux cooked capture (what names it): a header of hdr bytes with the EtherType at
 * type_at. */
static void cooked(struct p2s_ctx *ctx, const char *what, const uint8_t *p, size_t n,
                   size_t type_at, size_t hdr)
{
    struct sf_rd rd;
    unsigned type;

    sf_rd_init(&rd, p, n, 0);
    sf_rd_skip(&rd, type_at);
    type = sf_rd_u16be(&rd);
    sf_rd_skip(&rd, hdr - type_at - 2);
    if (rd.err)
        short_frame(ctx, what, n);
    else
        by_ethertype(ctx, type, rd.p, sf_rd_left(&rd));
}

/* BSD loopback: a 4-byte address family, in the writer's byte order (DLT_NULL) or
 * big-endian (DLT_LOOP). */
static void loopback(struct p2s_ctx *ctx, const uint8_t *p, size_t n, int host_order)
{
    struct sf_rd rd;
    uint32_t fam;

    sf_rd_init(&rd, p, n, 0);
    fam = host_order ? sf_rd_u32le(&rd) : sf_rd_u32be(&rd);
    if (rd.err) {
        short_frame(ctx, "loopback", n);
        return;
    }
    if (host_order && fam > 0xffff) /* written by a big-endian host */
        fam = __builtin_bswap32(fam);
    null_family(ctx, fam, rd.p, sf_rd_left(&rd));
}

void link_decode(struct p2s_ctx *ctx, int dlt, const uint8_t *p, size_t caplen, size_t len)
{
    (void)len;
    switch (dlt) {
    case DLT_EN10MB_:
        ethernet(ctx, p, caplen);
        return;
    case DLT_LINUX_SLL_:
        cooked(ctx, "SLL", p, caplen, 14, 16);
        return;
    case DLT_LINUX_SLL2_:
        cooked(ctx, "SLL2", p, caplen, 0, 20);
        return;
    case DLT_NULL_:
    case DLT_LOOP_:
        loopback(ctx, p, caplen, dlt == DLT_NULL_);
        return;
    case DLT_RAW_:
    case DLT_RAW_OPENBSD_:
    case LINKTYPE_RAW_:
    case LINKTYPE_IPV4_:
    case LINKTYPE_IPV6_:
        ip_decode(ctx, p, caplen);
        return;
    default:
        ctx->st.unsupported_link++;
        return;
    }
}

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

void link_decode(struct p2s_ctx *ctx, int dlt, const uint8_t *p, size_t caplen, size_t len)
{
    uint32_t fam;

    (void)len;
    switch (dlt) {
    case DLT_EN10MB_:
        ethernet(ctx, p, caplen);
        return;
    case DLT_LINUX_SLL_:
        if (caplen < 16)
            break;
        by_ethertype(ctx, (unsigned)(p[14] << 8 | p[15]), p + 16, caplen - 16);
        return;
    case DLT_LINUX_SLL2_:
        if (caplen < 20)
            break;
        by_ethertype(ctx, (unsigned)(p[0] << 8 | p[1]), p + 20, caplen - 20);
        return;
    case DLT_NULL_:
        if (caplen < 4)
            break;
        memcpy(&fam, p, 4);
        if (fam > 0xffff) /* written by a host of the other byte order */
            fam = __builtin_bswap32(fam);
        null_family(ctx, fam, p + 4, caplen - 4);
        return;
    case DLT_LOOP_:
        if (caplen < 4)
            break;
        null_family(ctx, (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | p[2] << 8 | p[3], p + 4,
                    caplen - 4);
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
    short_frame(ctx,
                dlt == DLT_LINUX_SLL_    ? "SLL"
                : dlt == DLT_LINUX_SLL2_ ? "SLL2"
                                         : "loopback",
                caplen);
}

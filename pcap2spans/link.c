/* link.c - link-layer headers: one table, link_types[], of every link type we decode
 * (its LINKTYPE_ value, its name, its header parser), the way tcpdump's print.c keeps
 * its printers.  A new link type is one parser here and one row in the table.
 *
 * References: tcpdump.org/linktypes.html; IEEE 802.3 / 802.1Q; RFC 1661 and RFC 1662
 * (PPP, HDLC-like framing); RFC 1547 section 4.3.1 (Cisco HDLC); ATA 878.1, RFC 1051
 * and RFC 1201 (ARCnet).
 *
 *   Ethernet (1):   dst(6) src(6) [TPID 0x8100/0x88a8/0x9100 TCI(2)]... type(2) payload
 *   SLL (113):      pkttype(2) hatype(2) halen(2) addr(8) protocol(2)          = 16 bytes
 *   SLL2 (276):     protocol(2) rsvd(2) ifindex(4) hatype(2) pkttype(1) halen(1) addr(8) = 20
 *   NULL (0):       family(4, byte order of the capturing host)  LOOP (108): family(4, BE)
 *   raw (12 14 101 228 229): the IP header itself
 *   PPP (9):        [0xff 0x03] protocol(1 or 2: odd first byte = 1)  0x0021 IPv4, 0x0057 IPv6
 *   PPP_HDLC (50):  0xff 0x03 protocol(2) as PPP, or 0x0f/0x8f as C_HDLC
 *   C_HDLC (104):   address(1: 0x0f, 0x8f) control(1) protocol(2, an EtherType)
 *   ARCNET_BSD (7): src(1) dst(1) type(1) [flag(1) seqid(2) [type(1) flag(1) seqid(2)]]
 *   ARCNET_LINUX (129): src(1) dst(1) offset(2) type(1) [flag(1) seqid(2)]
 *
 * ARCnet: the RFC 1051 types (0xf0 IP, 0xf1 ARP, 0x80 diagnostics) end the header at
 * the type; every other type (RFC 1201: 0xd4 IP, 0xc4 IPv6, ...) adds a split flag and a
 * sequence number, and on BSD a flag of 0xff marks an exception frame that repeats all
 * three.  Linux hands over reassembled packets; BSD's fragments (flag != 0) are not
 * reassembled and are counted as unsupported.
 *
 * Everything that is not IPv4/IPv6 is counted (st.unsupported_net); link types we
 * do not decode are counted (st.unsupported_link) and reported once by pcap.c.
 */
#include "link.h"

#include <string.h>

#include "ip.h"
#include "sf_rd.h"

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd

struct link_type {
    int dlt;          /* LINKTYPE_* value (libpcap's DLT_* for all of these) */
    const char *name; /* in messages about a short header */
    void (*decode)(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n);
};

static void by_ethertype(struct p2s_ctx *ctx, unsigned type, const uint8_t *p, size_t n)
{
    if (type == ETH_IPV4 || type == ETH_IPV6)
        ip_decode(ctx, p, n);
    else
        ctx->st.unsupported_net++;
}

static void short_frame(struct p2s_ctx *ctx, const struct link_type *lt, size_t n)
{
    struct sf_err err;

    sf_err_clear(&err);
    err.proto = "link";
    sf_err_set(&err, SF_E_TRUNC, UINT64_MAX, "%s header needs more than the %zu captured bytes",
               lt->name, n);
    ctx->st.malformed++;
    p2s_report(ctx, &err);
}

static void ethernet(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
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
        short_frame(ctx, lt, n);
        return;
    }
    if (type < 0x0600) { /* 802.3 length field: LLC, not IP */
        ctx->st.unsupported_net++;
        return;
    }
    by_ethertype(ctx, type, rd.p, sf_rd_left(&rd));
}

/* Linux cooked capture: a header of hdr bytes with the EtherType at type_at. */
static void cooked(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n,
                   size_t type_at, size_t hdr)
{
    struct sf_rd rd;
    unsigned type;

    sf_rd_init(&rd, p, n, 0);
    sf_rd_skip(&rd, type_at);
    type = sf_rd_u16be(&rd);
    sf_rd_skip(&rd, hdr - type_at - 2);
    if (rd.err)
        short_frame(ctx, lt, n);
    else
        by_ethertype(ctx, type, rd.p, sf_rd_left(&rd));
}

static void sll(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    cooked(ctx, lt, p, n, 14, 16);
}

static void sll2(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    cooked(ctx, lt, p, n, 0, 20);
}

/* BSD loopback: a 4-byte address family, in the writer's byte order (DLT_NULL) or
 * big-endian (DLT_LOOP).  AF_INET is 2 everywhere; AF_INET6 is 10 (Linux), 24
 * (NetBSD/OpenBSD), 28 (FreeBSD), 30 (Darwin). */
static void loopback(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n,
                     int host_order)
{
    struct sf_rd rd;
    uint32_t fam;

    sf_rd_init(&rd, p, n, 0);
    fam = host_order ? sf_rd_u32le(&rd) : sf_rd_u32be(&rd);
    if (rd.err) {
        short_frame(ctx, lt, n);
        return;
    }
    if (host_order && fam > 0xffff) /* written by a big-endian host */
        fam = __builtin_bswap32(fam);
    if (fam == 2 || fam == 10 || fam == 24 || fam == 28 || fam == 30)
        ip_decode(ctx, rd.p, sf_rd_left(&rd));
    else
        ctx->st.unsupported_net++;
}

static void null_bsd(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    loopback(ctx, lt, p, n, 1);
}

static void loop_bsd(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    loopback(ctx, lt, p, n, 0);
}

static void raw_ip(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    (void)lt;
    ip_decode(ctx, p, n);
}

/* PPP (RFC 1661): the address and control bytes 0xff 0x03 may be there (RFC 1662) or
 * not; the protocol is one byte when its first byte is odd (protocol field
 * compression), else two. */
static void ppp(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    struct sf_rd rd;
    unsigned proto;

    sf_rd_init(&rd, p, n, 0);
    if (n >= 2 && p[0] == 0xff && p[1] == 0x03)
        sf_rd_skip(&rd, 2);
    proto = sf_rd_u8(&rd);
    if (!(proto & 1))
        proto = proto << 8 | sf_rd_u8(&rd);
    if (rd.err)
        short_frame(ctx, lt, n);
    else if (proto == 0x0021 || proto == 0x0057)
        ip_decode(ctx, rd.p, sf_rd_left(&rd));
    else
        ctx->st.unsupported_net++;
}

/* Cisco HDLC (RFC 1547 4.3.1): address, control, then an EtherType. */
static void chdlc(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    cooked(ctx, lt, p, n, 2, 4);
}

/* LINKTYPE_PPP_HDLC: PPP in HDLC-like framing (first byte 0xff), or Cisco HDLC. */
static void ppp_hdlc(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    if (n > 0 && (p[0] == 0x0f || p[0] == 0x8f))
        chdlc(ctx, lt, p, n);
    else
        ppp(ctx, lt, p, n);
}

/* ARCnet after the addresses (and Linux's offset): the header from the type on. */
static void arcnet(struct p2s_ctx *ctx, const struct link_type *lt, struct sf_rd *rd, size_t n,
                   int bsd)
{
    unsigned type = sf_rd_u8(rd), flag = 0;

    if (type != 0xf0 && type != 0xf1 && type != 0x80) { /* not RFC 1051: RFC 1201 */
        flag = sf_rd_u8(rd);
        sf_rd_skip(rd, 2);
        if (bsd && flag == 0xff) { /* an exception frame: type, flag, seqid again */
            sf_rd_skip(rd, 1);
            flag = sf_rd_u8(rd);
            sf_rd_skip(rd, 2);
        }
    }
    if (rd->err)
        short_frame(ctx, lt, n);
    else if (bsd && flag != 0) /* a fragment: not reassembled */
        ctx->st.unsupported_net++;
    else if (type == 0xf0 || type == 0xd4 || type == 0xc4)
        ip_decode(ctx, rd->p, sf_rd_left(rd));
    else
        ctx->st.unsupported_net++;
}

static void arcnet_bsd(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p, size_t n)
{
    struct sf_rd rd;

    sf_rd_init(&rd, p, n, 0);
    sf_rd_skip(&rd, 2);
    arcnet(ctx, lt, &rd, n, 1);
}

static void arcnet_linux(struct p2s_ctx *ctx, const struct link_type *lt, const uint8_t *p,
                         size_t n)
{
    struct sf_rd rd;

    sf_rd_init(&rd, p, n, 0);
    sf_rd_skip(&rd, 4);
    arcnet(ctx, lt, &rd, n, 0);
}

/* Every link type link_decode understands; link_supported and the tests read it too. */
static const struct link_type link_types[] = {
    {0, "loopback", null_bsd},
    {1, "Ethernet", ethernet},
    {7, "ARCnet", arcnet_bsd},
    {9, "PPP", ppp},
    {12, "raw IP", raw_ip},
    {14, "raw IP", raw_ip},
    {50, "PPP in HDLC", ppp_hdlc},
    {101, "raw IP", raw_ip},
    {104, "Cisco HDLC", chdlc},
    {108, "loopback", loop_bsd},
    {113, "SLL", sll},
    {129, "ARCnet (Linux)", arcnet_linux},
    {228, "raw IP", raw_ip},
    {229, "raw IP", raw_ip},
    {276, "SLL2", sll2},
};
#define N_LINK_TYPES (sizeof(link_types) / sizeof(link_types[0]))

static const struct link_type *find(int dlt)
{
    size_t i;

    for (i = 0; i < N_LINK_TYPES; i++)
        if (link_types[i].dlt == dlt)
            return &link_types[i];
    return NULL;
}

int link_supported(int dlt)
{
    return find(dlt) != NULL;
}

int link_type_at(size_t i, const char **name)
{
    if (i >= N_LINK_TYPES)
        return -1;
    if (name)
        *name = link_types[i].name;
    return link_types[i].dlt;
}

void link_decode(struct p2s_ctx *ctx, int dlt, const uint8_t *p, size_t caplen, size_t len)
{
    const struct link_type *lt = find(dlt);

    (void)len;
    if (lt)
        lt->decode(ctx, lt, p, caplen);
    else
        ctx->st.unsupported_link++;
}

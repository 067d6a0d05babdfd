/* ip.c - IPv4 (RFC 791) and IPv6 (RFC 8200) headers, then the TCP header (RFC 9293).
 *
 *   IPv4: ver/ihl(1) tos(1) total_len(2) id(2) flags/frag(2) ttl(1) proto(1) csum(2)
 *         src(4) dst(4) [options: (ihl - 5) * 4 bytes]
 *   IPv6: ver/tc/flow(4) payload_len(2) next_header(1) hop_limit(1) src(16) dst(16)
 *         then extension headers: hop-by-hop 0, routing 43, destination options 60,
 *         (next(1) len(1) in 8-byte units, not counting the first 8), AH 51 (len in
 *         4-byte units + 2), fragment 44 (8 bytes)
 *   TCP:  sport(2) dport(2) seq(4) ack(4) off/flags(2) win(2) csum(2) urg(2) [options]
 *
 * Fragments are counted (st.ip_fragments) and not reassembled; other protocols are
 * counted (st.unsupported_net).  Lengths come from the IP header, so Ethernet padding
 * is ignored; a packet cut by the snap length is counted as truncated and dropped,
 * which leaves a hole that TCP reports as a gap.
 */
#include "ip.h"

#include <string.h>

#include "sf_rd.h"
#include "tcp.h"

#define PROTO_TCP 6

static void bad(struct p2s_ctx *ctx, const char *proto, const char *msg)
{
    struct sf_err err;

    sf_err_clear(&err);
    err.proto = proto;
    sf_err_set(&err, SF_E_MALFORMED, UINT64_MAX, "%s", msg);
    ctx->st.malformed++;
    p2s_report(ctx, &err);
}

/* p[0..n): the TCP segment (header and payload) and nothing after it. */
static void tcp_header(struct p2s_ctx *ctx, struct p2s_seg *s, const uint8_t *p, size_t n)
{
    struct sf_rd rd;
    const uint8_t *h;
    size_t off;

    sf_rd_init(&rd, p, n, 0);
    if ((h = sf_rd_bytes(&rd, 20)) == NULL) {
        bad(ctx, "tcp", "header shorter than 20 bytes");
        return;
    }
    off = (size_t)(h[12] >> 4) * 4;
    if (off < 20 || !sf_rd_skip(&rd, off - 20)) { /* options */
        bad(ctx, "tcp", "bad data offset");
        return;
    }
    s->sport = sf_rd_get_u16be(h, 0);
    s->dport = sf_rd_get_u16be(h, 2);
    s->seq = sf_rd_get_u32be(h, 4);
    s->ack = sf_rd_get_u32be(h, 8);
    s->flags = h[13];
    s->window = sf_rd_get_u16be(h, 14);
    s->len = sf_rd_left(&rd);
    s->payload = rd.p;
    s->ts_ns = ctx->pkt_ts;
    tcp_segment(ctx, s);
}

static void ipv4(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    struct p2s_seg s;
    struct sf_rd rd;
    const uint8_t *h;
    size_t ihl, tot;

    sf_rd_init(&rd, p, caplen, 0);
    if ((h = sf_rd_bytes(&rd, 20)) == NULL) {
        ctx->st.truncated++;
        return;
    }
    ihl = (size_t)(h[0] & 0x0f) * 4;
    tot = sf_rd_get_u16be(h, 2);
    if (tot == 0) /* TSO on the capturing host: length not filled in */
        tot = caplen;
    if (ihl < 20 || tot < ihl) {
        bad(ctx, "ipv4", "bad header or total length");
        return;
    }
    if (tot > caplen) {
        ctx->st.truncated++;
        return;
    }
    if (sf_rd_get_u16be(h, 6) & 0x3fff) { /* MF set or a non-zero fragment offset */
        ctx->st.ip_fragments++;
        return;
    }
    if (h[9] != PROTO_TCP) {
        ctx->st.unsupported_net++;
        return;
    }
    memset(&s, 0, sizeof(s));
    s.family = 4;
    memcpy(s.src, h + 12, 4);
    memcpy(s.dst, h + 16, 4);
    tcp_header(ctx, &s, p + ihl, tot - ihl); /* Ethernet padding after tot is not TCP's */
}

/* Skip IPv6 extension headers from rd (the bytes after the fixed header) up to TCP:
 * 0 with rd at the TCP header, or -1 when the packet is not TCP (counted or reported). */
static int ipv6_ext(struct p2s_ctx *ctx, struct sf_rd *rd, unsigned nh)
{
    int hops = 0;
    unsigned len;

    while (nh != PROTO_TCP) {
        if (++hops > 16 || rd->err || sf_rd_left(rd) < 8)
            break;
        switch (nh) {
        case 0:
        case 43:
        case 60:
            nh = sf_rd_u8(rd);
            len = sf_rd_u8(rd);
            sf_rd_skip(rd, ((size_t)len + 1) * 8 - 2);
            break;
        case 51:
            nh = sf_rd_u8(rd);
            len = sf_rd_u8(rd);
            sf_rd_skip(rd, ((size_t)len + 2) * 4 - 2);
            break;
        case 44:
            ctx->st.ip_fragments++;
            return -1;
        default:
            ctx->st.unsupported_net++;
            return -1;
        }
    }
    if (nh != PROTO_TCP || rd->err) {
        bad(ctx, "ipv6", "extension headers run past the packet");
        return -1;
    }
    return 0;
}

static void ipv6(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    struct p2s_seg s;
    struct sf_rd rd;
    const uint8_t *h;
    size_t plen;

    sf_rd_init(&rd, p, caplen, 0);
    if ((h = sf_rd_bytes(&rd, 40)) == NULL) {
        ctx->st.truncated++;
        return;
    }
    plen = sf_rd_get_u16be(h, 4);
    if (plen == 0) /* jumbogram or TSO: take what was captured */
        plen = caplen - 40;
    if (40 + plen > caplen) {
        ctx->st.truncated++;
        return;
    }
    sf_rd_init(&rd, p, 40 + plen, 0);
    sf_rd_skip(&rd, 40);
    if (ipv6_ext(ctx, &rd, h[6]) < 0)
        return;
    memset(&s, 0, sizeof(s));
    s.family = 6;
    memcpy(s.src, h + 8, 16);
    memcpy(s.dst, h + 24, 16);
    tcp_header(ctx, &s, rd.p, sf_rd_left(&rd));
}

void ip_decode(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    struct sf_rd rd;
    const uint8_t *v;

    sf_rd_init(&rd, p, caplen, 0);
    if ((v = sf_rd_bytes(&rd, 1)) == NULL) {
        ctx->st.truncated++;
        return;
    }
    switch (v[0] >> 4) {
    case 4:
        ipv4(ctx, p, caplen);
        return;
    case 6:
        ipv6(ctx, p, caplen);
        return;
    default:
        ctx->st.unsupported_net++;
        return;
    }
}

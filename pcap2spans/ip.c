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

static void tcp_header(struct p2s_ctx *ctx, struct p2s_seg *s, const uint8_t *p, size_t n)
{
    size_t off;

    if (n < 20) {
        bad(ctx, "tcp", "header shorter than 20 bytes");
        return;
    }
    off = (size_t)(p[12] >> 4) * 4;
    if (off < 20 || off > n) {
        bad(ctx, "tcp", "bad data offset");
        return;
    }
    s->sport = (uint16_t)(p[0] << 8 | p[1]);
    s->dport = (uint16_t)(p[2] << 8 | p[3]);
    s->seq = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    s->ack = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
    s->flags = p[13];
    s->payload = p + off;
    s->len = n - off;
    s->ts_ns = ctx->pkt_ts;
    tcp_segment(ctx, s);
}

static void ipv4(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    struct p2s_seg s;
    size_t ihl, tot;
    unsigned frag;

    if (caplen < 20) {
        ctx->st.truncated++;
        return;
    }
    ihl = (size_t)(p[0] & 0x0f) * 4;
    tot = (size_t)(p[2] << 8 | p[3]);
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
    frag = (unsigned)(p[6] << 8 | p[7]);
    if (frag & 0x3fff) { /* MF set or a non-zero offset */
        ctx->st.ip_fragments++;
        return;
    }
    if (p[9] != PROTO_TCP) {
        ctx->st.unsupported_net++;
        return;
    }
    memset(&s, 0, sizeof(s));
    s.family = 4;
    memcpy(s.src, p + 12, 4);
    memcpy(s.dst, p + 16, 4);
    tcp_header(ctx, &s, p + ihl, tot - ihl);
}

static void ipv6(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    struct p2s_seg s;
    size_t plen, off = 40, end;
    unsigned nh;
    int hops = 0;

    if (caplen < 40) {
        ctx->st.truncated++;
        return;
    }
    plen = (size_t)(p[4] << 8 | p[5]);
    if (plen == 0) /* jumbogram or TSO: take what was captured */
        plen = caplen - 40;
    end = 40 + plen;
    if (end > caplen) {
        ctx->st.truncated++;
        return;
    }
    nh = p[6];
    while (nh != PROTO_TCP) {
        if (++hops > 16 || off + 8 > end) {
            bad(ctx, "ipv6", "extension headers run past the packet");
            return;
        }
        switch (nh) {
        case 0:
        case 43:
        case 60:
            nh = p[off];
            off += ((size_t)p[off + 1] + 1) * 8;
            break;
        case 51:
            nh = p[off];
            off += ((size_t)p[off + 1] + 2) * 4;
            break;
        case 44:
            ctx->st.ip_fragments++;
            return;
        default:
            ctx->st.unsupported_net++;
            return;
        }
    }
    if (off > end) {
        bad(ctx, "ipv6", "extension headers run past the packet");
        return;
    }
    memset(&s, 0, sizeof(s));
    s.family = 6;
    memcpy(s.src, p + 8, 16);
    memcpy(s.dst, p + 24, 16);
    tcp_header(ctx, &s, p + off, end - off);
}

void ip_decode(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen)
{
    if (caplen < 1) {
        ctx->st.truncated++;
        return;
    }
    switch (p[0] >> 4) {
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

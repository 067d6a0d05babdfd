/* Fuzz target: a packet sequence through link.c, ip.c, tcp.c and the HTTP parsers.
 *
 * Input: byte 0 picks the mode.
 *   even: raw frames of one link type (byte 1 picks it) as [len:2 BE][frame], so the
 *         fuzzer drives the link, IP and TCP header parsers;
 *   odd:  synthetic TCP segments between two fixed endpoints as
 *         [flags:1][dir:1][seq delta:2 BE][len:1][payload], so it reaches reassembly
 *         (reordering, overlaps, wrap, SYN/FIN/RST, caps) and the parsers quickly.
 * Small caps make the out-of-order, header and flow limits reachable.
 */
#include <stdint.h>
#include <string.h>

#include "../../../pcap2spans/p2s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int dlts[] = {0, 1, 12, 101, 108, 113, 228, 229, 276, 147};

static void frames(struct p2s_ctx *ctx, const uint8_t *p, size_t n)
{
    int dlt;

    if (n < 1)
        return;
    dlt = dlts[p[0] % (sizeof(dlts) / sizeof(dlts[0]))];
    p++;
    n--;
    while (n >= 2) {
        size_t len = (size_t)(p[0] << 8 | p[1]);
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        ctx->pkt_no++;
        ctx->pkt_ts += 1000;
        link_decode(ctx, dlt, p, len, len);
        p += len;
        n -= len;
    }
}

static void segments(struct p2s_ctx *ctx, const uint8_t *p, size_t n)
{
    uint32_t seq[2] = {1000, 900000};
    struct p2s_seg s;

    while (n >= 5) {
        int dir = p[1] & 1;
        size_t len = p[4];
        memset(&s, 0, sizeof(s));
        s.family = 4;
        s.src[0] = 10;
        s.src[3] = (uint8_t)(dir ? 2 : 1);
        s.dst[0] = 10;
        s.dst[3] = (uint8_t)(dir ? 1 : 2);
        s.sport = dir ? 80 : (uint16_t)(40000 + (p[1] >> 4));
        s.dport = dir ? (uint16_t)(40000 + (p[1] >> 4)) : 80;
        s.flags = p[0];
        seq[dir] += (uint32_t)(int16_t)(p[2] << 8 | p[3]);
        s.seq = seq[dir];
        p += 5;
        n -= 5;
        if (len > n)
            len = n;
        s.payload = p;
        s.len = len;
        ctx->pkt_no++;
        ctx->pkt_ts += 1000;
        s.ts_ns = ctx->pkt_ts;
        tcp_segment(ctx, &s);
        seq[dir] += (uint32_t)len;
        p += len;
        n -= len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct p2s_ctx ctx;

    if (size < 1 || p2s_ctx_init(&ctx) < 0)
        return 0;
    ctx.quiet = 1;
    ctx.errors_printed = 1000000; /* do not print */
    ctx.lim.max_flows = 4;
    ctx.lim.max_ooo_bytes = 256;
    ctx.lim.max_header_bytes = 512;
    ctx.lim.idle_timeout_ns = 50000;
    ctx.pkt_ts = 1;
    if (data[0] & 1)
        segments(&ctx, data + 1, size - 1);
    else
        frames(&ctx, data + 1, size - 1);
    p2s_ctx_free(&ctx);
    return 0;
}

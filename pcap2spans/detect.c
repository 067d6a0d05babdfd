/* detect.c - the probe table of protocol detection by content (see detect.h).
 *
 * A probe's look() answers from the bytes it has: no as soon as one byte does not fit,
 * "need more" when they all fit but do not settle it; det_look() turns a yes on fewer
 * than min bytes into "need more", and "need more" into no when no more will come.
 */
#include "detect.h"

#include <string.h>

#include "sf_rd.h"

#define METHOD_MAX   32         /* the longest method h1.c's request line accepts */
#define H2_FRAME_MAX (1u << 20) /* a longer first frame is not believed */

static const char h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* The first bytes of p (as many as there are) are those of lit. */
static int prefix(const uint8_t *p, size_t n, const char *lit, size_t litlen)
{
    return memcmp(p, lit, n < litlen ? n : litlen) == 0 ? DET_YES : DET_NO;
}

static int look_preface(const uint8_t *p, size_t n, int final)
{
    (void) final;
    return prefix(p, n, h2_preface, sizeof(h2_preface) - 1);
}

static int look_status(const uint8_t *p, size_t n, int final)
{
    (void) final;
    return prefix(p, n, "HTTP/1.", 7);
}

static int look_tls_record(const uint8_t *p, size_t n, int final)
{
    (void) final;
    if ((n >= 1 && p[0] != 0x16) || (n >= 2 && p[1] != 0x03) || (n >= 3 && p[2] > 0x04))
        return DET_NO;
    return DET_YES;
}

/* A record header (5 bytes), then handshake type 1. */
static int look_tls_hello(const uint8_t *p, size_t n, int final)
{
    if (look_tls_record(p, n, final) == DET_NO || (n >= 6 && p[5] != 1))
        return DET_NO;
    return DET_YES;
}

static int is_method_char(uint8_t ch)
{
    return (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '_';
}

static int look_request(const uint8_t *p, size_t n, int final)
{
    size_t i;

    (void) final;
    for (i = 0; i < n && i <= METHOD_MAX; i++) {
        if (p[i] == ' ')
            return i > 0 ? DET_YES : DET_NO;
        if (!is_method_char(p[i]))
            return DET_NO;
    }
    return i <= METHOD_MAX ? DET_MORE : DET_NO;
}

/* One plausible HTTP/2 frame header sent by a client (RFC 9113 section 6: per-type
 * lengths, flags and stream ids; client-initiated streams are odd). */
static int h2_frame_ok(struct sf_rd *rd, uint32_t *len)
{
    uint32_t l = sf_rd_u24be(rd), sid;
    uint8_t type = sf_rd_u8(rd), fl = sf_rd_u8(rd);

    sid = sf_rd_u32be(rd);
    *len = l;
    if (rd->err || l > H2_FRAME_MAX || (sid & 0x80000000u))
        return 0;
    switch (type) {
    case 0: /* DATA */
        return sid && !(fl & ~0x09);
    case 1: /* HEADERS */
        return (sid & 1) && !(fl & ~0x2d);
    case 2: /* PRIORITY */
        return sid && l == 5 && !fl;
    case 3: /* RST_STREAM */
        return sid && l == 4 && !fl;
    case 4: /* SETTINGS */
        return !sid && !(fl & ~1) && l % 6 == 0 && (!fl || !l);
    case 6: /* PING */
        return !sid && l == 8 && !(fl & ~1);
    case 7: /* GOAWAY */
        return !sid && l >= 8 && !fl;
    case 8: /* WINDOW_UPDATE */
        return l == 4 && !fl;
    case 9: /* CONTINUATION */
        return sid && !(fl & ~0x04);
    default: /* PUSH_PROMISE is never sent by a client */
        return 0;
    }
}

/* Client bytes that look like HTTP/2 frames without a preface (a capture that started
 * mid-connection), judged by the frames they hold, wherever the bytes end: two
 * plausible frame headers in a row; or, when no more bytes come, a plausible first
 * frame that runs past them or that is followed by a header they cut. */
static int look_h2_frames(const uint8_t *p, size_t n, int final)
{
    struct sf_rd rd;
    uint32_t len;
    int frames = 0;

    sf_rd_init(&rd, p, n, 0);
    while (sf_rd_left(&rd) >= 9) {
        if (!h2_frame_ok(&rd, &len))
            return DET_NO;
        if (++frames >= 2)
            return DET_YES;
        if (len >= sf_rd_left(&rd))
            break;
        sf_rd_skip(&rd, len);
    }
    if (frames == 0)
        return final ? DET_NO : DET_MORE;
    return final ? DET_YES : DET_MORE;
}

const struct det_probe det_probes[DET_NPROBE] = {
    [DET_H2_PREFACE] = {"h2-preface", sizeof(h2_preface) - 1, DET_APP_H2, look_preface},
    [DET_TLS_RECORD] = {"tls-record", 3, DET_APP_TLS, look_tls_record},
    [DET_TLS_HELLO] = {"tls-client-hello", 6, DET_APP_TLS, look_tls_hello},
    [DET_H1_REQUEST] = {"h1-request", 2, DET_APP_H1, look_request},
    [DET_H2_FRAMES] = {"h2-frames", 9, DET_APP_H2, look_h2_frames},
    [DET_H1_STATUS] = {"h1-status", 7, DET_APP_H1, look_status},
};

int det_look(enum det_id id, const uint8_t *p, size_t n, int final)
{
    const struct det_probe *pr = &det_probes[id];
    int v = pr->look(p, n, final);

    if (v == DET_YES && n < pr->min)
        v = DET_MORE;
    if (v == DET_MORE && final)
        v = DET_NO;
    return v;
}

int det_first(unsigned set, const uint8_t *p, size_t n, int final, const struct det_probe **hit)
{
    int id, v;

    for (id = 0; id < DET_NPROBE; id++) {
        if (!(set & DET_BIT(id)))
            continue;
        v = det_look((enum det_id)id, p, n, final);
        if (v == DET_YES)
            *hit = &det_probes[id];
        if (v != DET_NO)
            return v;
    }
    return DET_NO;
}

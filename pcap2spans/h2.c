/* h2.c - HTTP/2 connections (RFC 9113): framing; streams and header blocks are in
 * h2_stream.c.
 *
 *   client preface: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (24 bytes), then frames both ways
 *
 *   frame:  +-----------------------------------------------+
 *           |                 Length (24)                   |
 *           +---------------+---------------+---------------+
 *           |   Type (8)    |   Flags (8)   |
 *           +-+-------------+---------------+-------------------------------+
 *           |R|                 Stream Identifier (31)                      |
 *           +=+=============================================================+
 *           |                   Frame Payload (Length)                      |
 *           +---------------------------------------------------------------+
 *   HEADERS: [Pad Length(8) if PADDED] [E(1) Dep(31) Weight(8) if PRIORITY]
 *            Field Block Fragment [Padding]; then CONTINUATION frames of the same
 *            stream, with no other frame in between, until END_HEADERS (6.10).
 *   DATA:    [Pad Length(8) if PADDED] Data [Padding]
 *
 * A stream is a span: from the first byte of the request HEADERS to the last byte of
 * the frame that ends the response (END_STREAM), both directions ended.  RST_STREAM
 * ends the sender's side (reset_code, partial); the stream then waits for the other
 * side's frames in flight (at most H2_LINGER such streams).  Trailers (a later HEADERS block) give
 * grpc-status / grpc-message.  A PUSH_PROMISE opens a span of its own for the
 * promised stream: its request is the promise, and partial_reason says
 * "server push (promised on stream N)" although the span is not partial.
 *
 * Per direction: DATA payloads are never buffered (only counted); other frames are
 * buffered up to a cap when split across segments.  A frame longer than the
 * receiver's SETTINGS_MAX_FRAME_SIZE (or the header cap), a capture gap that cuts
 * a frame, or bytes that are not a preface make the direction look for the next
 * plausible pair of frame headers (resync); after 1 MiB without one it is abandoned.
 * Header blocks are decoded in frame order with hpack.c (one decoder per direction,
 * bounded by the peer's SETTINGS_HEADER_TABLE_SIZE once ACKed), even for streams not
 * tracked, so that the dynamic table stays in step.  After an h2c upgrade the
 * request's HTTP2-Settings are the client's first SETTINGS, ACKed by the 101 (RFC 7540
 * 3.2.1), and go through the same parser and the same apply step.  Every header field is offered
 * to the stream's trace-context sets.  gRPC "true binary" -bin values (0x00 prefix,
 * SETTINGS 0xFE03 = 1) are passed through as bytes; sf_tracectx reads both forms.
 */
#include "h2.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "sf_base64.h"
#include "sf_rd.h"

/* ---- helpers ------------------------------------------------------------------------ */

const char *h2_error_name(uint32_t code)
{
    static const char *const names[] = {
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    };

    return code < sizeof(names) / sizeof(names[0]) ? names[code] : "UNKNOWN";
}

/* ---- frames -------------------------------------------------------------------------- */

static void frame_headers(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                          const uint8_t *p, size_t len, int64_t ts)
{
    struct sf_rd rd;
    size_t pad = 0;

    sf_rd_init(&rd, p, len, 0);
    if (flags & F_PADDED)
        pad = sf_rd_u8(&rd);
    if (flags & F_PRIORITY)
        sf_rd_skip(&rd, 5);
    if (rd.err || pad > sf_rd_left(&rd)) {
        h2_fail(c, dir, SF_E_MALFORMED,
                "HEADERS on stream %u: padding and priority (%zu) "
                "longer than the frame (%zu)",
                sid, pad, len);
        h2_stream_block_start(c, dir, T_HEADERS, sid, 0, 0);
        h2_stream_block_abandon(c, dir, "malformed HEADERS frame");
        return;
    }
    h2_stream_block_start(c, dir, T_HEADERS, sid, 0, flags & F_END_STREAM);
    h2_stream_block_add(c, dir, rd.p, sf_rd_left(&rd) - pad, flags & F_END_HEADERS, ts);
}

static void frame_push_promise(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                               const uint8_t *p, size_t len, int64_t ts)
{
    struct sf_rd rd;
    size_t pad = 0;
    uint32_t promised;

    sf_rd_init(&rd, p, len, 0);
    if (flags & F_PADDED)
        pad = sf_rd_u8(&rd);
    promised = sf_rd_u32be(&rd) & 0x7fffffffu;
    if (rd.err || pad > sf_rd_left(&rd)) {
        h2_fail(c, dir, SF_E_MALFORMED, "PUSH_PROMISE on stream %u shorter than its fields", sid);
        h2_stream_block_start(c, dir, T_PUSH_PROMISE, sid, 0, 0);
        h2_stream_block_abandon(c, dir, "malformed PUSH_PROMISE frame");
        return;
    }
    if (dir == P2S_C2S)
        h2_fail(c, dir, SF_E_MALFORMED, "PUSH_PROMISE sent by the client (stream %u)", sid);
    h2_stream_block_start(c, dir, T_PUSH_PROMISE, sid, dir == P2S_S2C ? promised : 0, 0);
    h2_stream_block_add(c, dir, rd.p, sf_rd_left(&rd) - pad, flags & F_END_HEADERS, ts);
}

static void frame_rst(struct h2_conn *c, enum p2s_dir dir, uint32_t sid, const uint8_t *p,
                      size_t len, int64_t ts)
{
    struct h2_stream *s;
    struct sf_rd rd;
    uint32_t code;
    char why[96];

    if (len != 4) {
        h2_fail(c, dir, SF_E_MALFORMED, "RST_STREAM of %zu bytes (want 4)", len);
        return;
    }
    sf_rd_init(&rd, p, len, 0);
    code = sf_rd_u32be(&rd);
    snprintf(why, sizeof(why), "stream %u %s (0x%x) from the %s", sid, h2_error_name(code), code,
             dir == P2S_C2S ? "client" : "server");
    p2s_note(c->ctx, c->conn, "h2_rst", why, ts);
    if ((s = h2_stream_find(c, sid)) == NULL)
        return;
    if (s->reset_code < 0) {
        s->reset_code = code;
        s->reset_ts = ts;
        snprintf(why, sizeof(why), "RST_STREAM %s from the %s", h2_error_name(code),
                 dir == P2S_C2S ? "client" : "server");
        h2_stream_partial(s, why);
    }
    /* The reset ends the sender's side at the RST frame. */
    if (dir == P2S_C2S && !s->req_done) {
        s->req_done = 1;
        s->req_end = ts;
        h2_stream_seq_end(c, dir, s);
    } else if (dir == P2S_S2C && !s->resp_done) {
        s->resp_done = 1;
        s->resp_end = s->resp_start ? ts : 0;
        h2_stream_seq_end(c, dir, s);
    }
    if (s->req_done && s->resp_done) {
        h2_stream_emit(c, s);
        return;
    }
    /* The peer may have frames in flight (a gRPC server's trailers-only answer to
     * the client's CANCEL): keep the stream, at most H2_LINGER of them. */
    if (!s->lingering) {
        s->lingering = 1;
        c->nlinger++;
    }
    if (c->nlinger > H2_LINGER) {
        struct h2_stream *o = c->first;

        while (o && !o->lingering)
            o = o->next;
        if (o)
            h2_stream_reset_end(c, o);
    }
}

/* SETTINGS sent by the peer of direction dir bound what dir sends once they are
 * acknowledged: the HPACK table of dir's encoder and the size of dir's frames. */
static void settings_apply(struct h2_conn *c, enum p2s_dir dir, const struct h2_settings *st)
{
    struct h2_dir *d = &c->d[dir];

    if (st->table >= 0) {
        if (d->hd)
            hpack_dec_set_bound(d->hd, (uint32_t)st->table);
        else
            d->bound = st->table;
    }
    if (st->frame >= 0) {
        d->max_frame = (uint32_t)st->frame;
        d->max_frame_known = 1;
    }
}

static void settings_ack(struct h2_conn *c, enum p2s_dir dir)
{
    struct h2_dir *o = &c->d[!dir];
    struct h2_settings st;

    if (o->npend == 0)
        return; /* the SETTINGS were sent before the capture started */
    st = o->pend[0];
    memmove(o->pend, o->pend + 1, (size_t)(o->npend - 1) * sizeof(o->pend[0]));
    o->npend--;
    /* SETTINGS of the peer bound what this direction sends from the ACK on. */
    settings_apply(c, dir, &st);
}

/* The parameters of a SETTINGS payload p[0..len) (len a multiple of 6, section 6.5.1)
 * sent by direction dir: what we follow goes to st (fields left alone when absent).
 * Returns 0, or -1 with *bad the first SETTINGS_MAX_FRAME_SIZE out of range (that
 * value is ignored, the others are kept). */
static int settings_parse(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t len,
                          struct h2_settings *st, uint32_t *bad)
{
    struct sf_rd rd;
    int rc = 0;

    sf_rd_init(&rd, p, len, 0);
    while (sf_rd_left(&rd) >= 6) {
        uint16_t id = sf_rd_u16be(&rd);
        uint32_t v = sf_rd_u32be(&rd);

        if (id == 1) {
            st->table = v;
        } else if (id == 5 && v >= H2_DEFAULT_MAX_FRAME && v <= H2_ABS_MAX_FRAME) {
            st->frame = v;
        } else if (id == 5 && rc == 0) {
            *bad = v;
            rc = -1;
        } else if (id == 0xfe03 && v == 1) {
            p2s_note(c->ctx, c->conn, "grpc_true_binary", dir == P2S_C2S ? "client" : "server",
                     c->ts);
        }
    }
    return rc;
}

static void frame_settings(struct h2_conn *c, enum p2s_dir dir, uint8_t flags, uint32_t sid,
                           const uint8_t *p, size_t len)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_settings st = {-1, -1};
    uint32_t bad;

    if (sid != 0 || ((flags & F_ACK) && len != 0) || len % 6 != 0) {
        h2_fail(c, dir, SF_E_MALFORMED, "SETTINGS on stream %u with %zu bytes%s", sid, len,
                (flags & F_ACK) ? " (ACK)" : "");
        return;
    }
    if (flags & F_ACK) {
        settings_ack(c, dir);
        return;
    }
    if (settings_parse(c, dir, p, len, &st, &bad) < 0)
        h2_fail(c, dir, SF_E_MALFORMED, "SETTINGS_MAX_FRAME_SIZE %u out of range", bad);
    if (d->npend == H2_PENDING) { /* never ACKed: forget the oldest */
        memmove(d->pend, d->pend + 1, (H2_PENDING - 1) * sizeof(d->pend[0]));
        d->npend--;
    }
    d->pend[d->npend++] = st;
}

/* Why an HTTP2-Settings value cannot be used, or NULL; the SETTINGS payload goes
 * to buf (sz bytes), its length to *n. */
static const char *upgrade_settings_decode(const struct p2s_h2c_settings *hs, uint8_t *buf,
                                           size_t sz, size_t *n, char *why, size_t whysz)
{
    long k;

    if (hs->count > 1) {
        snprintf(why, whysz, "%u HTTP2-Settings fields (RFC 7540 3.2.1 wants one)", hs->count);
        return why;
    }
    if (hs->value == NULL || hs->len > P2S_H2C_SETTINGS_MAX) {
        snprintf(why, whysz, "HTTP2-Settings of %zu bytes (over %d)", hs->len,
                 P2S_H2C_SETTINGS_MAX);
        return why;
    }
    k = sf_base64url_decode(buf, sz, hs->value, hs->len);
    if (k < 0)
        return "HTTP2-Settings is not base64url";
    if (k % 6 != 0) {
        snprintf(why, whysz, "HTTP2-Settings of %ld bytes, not a multiple of 6", k);
        return why;
    }
    *n = (size_t)k;
    return NULL;
}

static void h2_upgrade_settings(struct h2_conn *c, const struct p2s_h2c_settings *hs)
{
    uint8_t buf[SF_BASE64_DECODED_MAX(P2S_H2C_SETTINGS_MAX)];
    struct h2_settings st = {-1, -1};
    char why[96];
    const char *bad_why;
    size_t n = 0;
    uint32_t bad;

    if (hs == NULL || hs->count == 0)
        return; /* RFC 7540 forbids the upgrade then; the defaults hold */
    bad_why = upgrade_settings_decode(hs, buf, sizeof(buf), &n, why, sizeof(why));
    if (bad_why == NULL && settings_parse(c, P2S_C2S, buf, n, &st, &bad) < 0) {
        snprintf(why, sizeof(why), "HTTP2-Settings: SETTINGS_MAX_FRAME_SIZE %u out of range", bad);
        bad_why = why;
    }
    if (bad_why)
        p2s_note(c->ctx, c->conn, "h2c_settings", bad_why, c->ts);
    /* The 101 is the acknowledgement (RFC 7540 3.2.1).  st holds nothing when the
     * value was unusable; an out-of-range MAX_FRAME_SIZE alone is left out, as in a
     * SETTINGS frame. */
    settings_apply(c, P2S_S2C, &st);
}

void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req,
                          const struct p2s_h2c_settings *hs)
{
    struct h2_conn *c = h2_state;

    if (c == NULL)
        return;
    /* The client's HTTP2-Settings, not a guess, bound the server's table and frames. */
    if (hs && hs->ack_ns)
        c->ts = hs->ack_ns;
    h2_upgrade_settings(c, hs);
    h2_stream_adopt(c, req);
}

static void frame_goaway(struct h2_conn *c, enum p2s_dir dir, uint32_t sid, const uint8_t *p,
                         size_t len, int64_t ts)
{
    uint32_t last, code;
    char d[96];
    struct h2_stream *s, *nx;
    struct sf_rd rd;

    if (sid != 0 || len < 8) {
        h2_fail(c, dir, SF_E_MALFORMED, "GOAWAY on stream %u with %zu bytes", sid, len);
        return;
    }
    sf_rd_init(&rd, p, len, 0);
    last = sf_rd_u32be(&rd) & 0x7fffffffu;
    code = sf_rd_u32be(&rd);
    snprintf(d, sizeof(d), "%s: last stream %u, %s (0x%x)", dir == P2S_C2S ? "client" : "server",
             last, h2_error_name(code), code);
    p2s_note(c->ctx, c->conn, "h2_goaway", d, ts);
    /* Streams the sender's peer opened above `last` were not processed. */
    for (s = c->first; s; s = nx) {
        nx = s->next;
        if (s->id > last && (s->id & 1) == (dir == P2S_S2C) && !s->resp_done) {
            h2_stream_partial(s, "not processed (GOAWAY)");
            s->req_done = s->resp_done = 1;
            h2_stream_emit(c, s);
        }
    }
}

/* A complete buffered (non-DATA) frame. */
static void frame(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint8_t flags, uint32_t sid,
                  const uint8_t *p, size_t len, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];

    switch (type) {
    case T_HEADERS:
        if (sid == 0)
            h2_fail(c, dir, SF_E_MALFORMED, "HEADERS on stream 0");
        /* decoded even then: its insertions keep the dynamic table in step */
        frame_headers(c, dir, flags, sid, p, len, ts);
        break;
    case T_CONTINUATION:
        if (!d->in_block)
            h2_fail(c, dir, SF_E_MALFORMED, "CONTINUATION on stream %u without HEADERS", sid);
        else
            h2_stream_block_add(c, dir, p, len, flags & F_END_HEADERS, ts);
        break;
    case T_PUSH_PROMISE:
        frame_push_promise(c, dir, flags, sid, p, len, ts);
        break;
    case T_RST_STREAM:
        frame_rst(c, dir, sid, p, len, ts);
        break;
    case T_SETTINGS:
        frame_settings(c, dir, flags, sid, p, len);
        break;
    case T_GOAWAY:
        frame_goaway(c, dir, sid, p, len, ts);
        break;
    case T_PRIORITY:
        if (len != 5 || sid == 0)
            h2_fail(c, dir, SF_E_MALFORMED, "PRIORITY on stream %u with %zu bytes", sid, len);
        break;
    case T_PING:
        if (len != 8 || sid != 0)
            h2_fail(c, dir, SF_E_MALFORMED, "PING on stream %u with %zu bytes", sid, len);
        break;
    case T_WINDOW_UPDATE:
        if (len != 4)
            h2_fail(c, dir, SF_E_MALFORMED, "WINDOW_UPDATE with %zu bytes", len);
        break;
    default:
        break; /* unknown types are skipped (RFC 9113 section 5.5) */
    }
}

/* ---- the byte engine ----------------------------------------------------------------- */

static uint32_t dir_max_frame(const struct h2_dir *d)
{
    return d->max_frame_known ? d->max_frame : H2_ABS_MAX_FRAME;
}

struct frame_hdr {
    uint32_t len, sid; /* sid with the reserved bit */
    uint8_t type, flags;
};

/* The frame header (section 4.1) at p[0..n): 0, or -1 when n is shorter. */
static int frame_hdr(const uint8_t *p, size_t n, struct frame_hdr *f)
{
    struct sf_rd rd;
    const uint8_t *h;

    sf_rd_init(&rd, p, n, 0);
    if ((h = sf_rd_bytes(&rd, H2_HDR)) == NULL)
        return -1;
    f->len = sf_rd_get_u24be(h, 0);
    f->type = h[3];
    f->flags = h[4];
    f->sid = sf_rd_get_u32be(h, 5);
    return 0;
}

/* A frame header at p[0..n) that fits its type: known type, valid stream id and length. */
static int header_plausible(const uint8_t *p, size_t n, uint32_t max_frame)
{
    struct frame_hdr f;
    uint32_t len, sid;
    uint8_t type, flags;

    if (frame_hdr(p, n, &f) < 0)
        return 0;
    len = f.len;
    sid = f.sid;
    type = f.type;
    flags = f.flags;
    if (len > max_frame || (sid & 0x80000000u) || type > T_CONTINUATION)
        return 0;
    switch (type) {
    case T_DATA:
        return sid != 0 && !(flags & ~(F_END_STREAM | F_PADDED));
    case T_HEADERS:
        return sid != 0 && !(flags & ~(F_END_STREAM | F_END_HEADERS | F_PADDED | F_PRIORITY));
    case T_PRIORITY:
        return sid != 0 && len == 5 && flags == 0;
    case T_RST_STREAM:
        return sid != 0 && len == 4 && flags == 0;
    case T_SETTINGS:
        return sid == 0 && len % 6 == 0 && len <= 6 * 16 && !(flags & ~F_ACK) &&
               (!(flags & F_ACK) || len == 0);
    case T_PUSH_PROMISE:
        return sid != 0 && len >= 4 && !(flags & ~(F_END_HEADERS | F_PADDED));
    case T_PING:
        return sid == 0 && len == 8 && !(flags & ~F_ACK);
    case T_GOAWAY:
        return sid == 0 && len >= 8 && flags == 0;
    case T_WINDOW_UPDATE:
        return len == 4 && flags == 0;
    default: /* T_CONTINUATION */
        return sid != 0 && !(flags & ~F_END_HEADERS);
    }
}

static int plausible_pair(const uint8_t *p, size_t n, uint32_t max_frame)
{
    struct frame_hdr f;
    uint32_t len;

    if (frame_hdr(p, n, &f) < 0)
        return -1;
    if (!header_plausible(p, n, max_frame))
        return 0;
    len = f.len;
    /* The next header must be plausible too, unless it is beyond any window, or the
     * frame ends exactly where the bytes do (segments usually end with a frame). */
    if ((uint64_t)len + 2 * H2_HDR > H2_SYNC_WINDOW || n == (size_t)len + H2_HDR)
        return 1;
    if (n < (size_t)len + 2 * H2_HDR)
        return -1;
    return header_plausible(p + H2_HDR + len, n - H2_HDR - len, max_frame);
}

int h2_plausible_frames(const uint8_t *p, size_t n, uint32_t max_frame)
{
    return plausible_pair(p, n, max_frame);
}

/* DATA payload bytes p[0..n) of the current frame (pad length, data, padding). */
static void data_bytes(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s = h2_stream_find(c, d->skip_sid);
    size_t body;

    if (d->pad_pending && n > 0) {
        uint32_t rest = d->skip_left - 1; /* payload after the pad length byte */
        struct sf_rd rd;
        uint8_t pad;

        sf_rd_init(&rd, p, n, 0);
        pad = sf_rd_u8(&rd);
        d->pad_pending = 0;
        if (pad > rest) {
            h2_fail(c, dir, SF_E_MALFORMED, "DATA on stream %u: padding %u > payload %u",
                    d->skip_sid, pad, rest);
            d->body_left = 0;
        } else {
            d->body_left = rest - pad;
        }
        p = rd.p;
        n = sf_rd_left(&rd);
    }
    body = n < d->body_left ? n : d->body_left;
    d->body_left -= (uint32_t)body;
    if (s == NULL || body == 0)
        return;
    if (dir == P2S_C2S)
        s->req_bytes += (int64_t)body;
    else
        s->resp_bytes += (int64_t)body;
    if (s->grpc)
        grpc_msgs_feed(&s->msgs[dir], p, body);
    if (s->rb[dir])
        h2_stream_rpc_data(c, s, dir, p, body);
}

/* The last payload byte of a streamed frame arrived at ts. */
static void skip_end(struct h2_conn *c, enum p2s_dir dir, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    struct h2_stream *s;

    if (d->skip_type == T_DATA && (d->skip_flags & F_END_STREAM) &&
        (s = h2_stream_find(c, d->skip_sid)) != NULL) {
        h2_stream_rpc_end(s, dir, ts);
        if (dir == P2S_C2S) {
            s->req_done = 1;
            s->req_end = ts;
        } else {
            if (s->resp_start == 0)
                h2_stream_partial(s, "response headers not captured");
            s->resp_done = 1;
            s->resp_end = ts;
        }
        h2_stream_seq_end(c, dir, s);
        h2_stream_check_done(c, s);
    } else if ((d->skip_type == T_HEADERS || d->skip_type == T_CONTINUATION ||
                d->skip_type == T_PUSH_PROMISE) &&
               d->in_block && (d->skip_flags & F_END_HEADERS)) {
        h2_stream_block_done(c, dir, NULL, 0, ts);
    }
}

/* A frame header passed the length checks: interleaving rule, then set up a
 * streamed payload when the frame is not buffered. */
static void frame_begin(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint8_t flags,
                        uint32_t sid, uint32_t len, int streamed)
{
    struct h2_dir *d = &c->d[dir];

    d->fend = d->fseq + H2_HDR + len;
    if (d->in_block && (type != T_CONTINUATION || sid != d->block_sid)) {
        h2_fail(c, dir, SF_E_MALFORMED,
                "frame type %u on stream %u inside the header block of stream %u "
                "(RFC 9113 6.10)",
                type, sid, d->block_sid);
        h2_stream_block_abandon(c, dir, "header block interrupted");
    }
    if (!streamed)
        return;
    d->skip_type = type;
    d->skip_flags = flags;
    d->skip_sid = sid;
    d->skip_left = len;
    d->pad_pending = 0;
    d->body_left = 0;
    if (type == T_DATA) {
        if (sid == 0 || ((flags & F_PADDED) && len == 0)) {
            h2_fail(c, dir, SF_E_MALFORMED, "DATA on stream %u with %u bytes", sid, len);
            d->skip_sid = 0;
        }
        d->pad_pending = (flags & F_PADDED) != 0;
        d->body_left = d->pad_pending ? 0 : len;
    } else if (type == T_HEADERS || type == T_PUSH_PROMISE || type == T_CONTINUATION) {
        h2_fail(c, dir, SF_E_LIMIT,
                "%s frame of %u bytes on stream %u over the %zu-byte "
                "header cap (not followed)",
                type == T_CONTINUATION ? "CONTINUATION" : "HEADERS", len, sid,
                c->lim->max_header_bytes);
        if (type == T_CONTINUATION && !d->in_block)
            return; /* an orphan: nothing to give up */
        if (type != T_CONTINUATION)
            h2_stream_block_start(c, dir, type, sid, 0,
                                  type == T_HEADERS && (flags & F_END_STREAM));
        d->block_over = 1;
        sf_buf_reset(&d->block);
    } else if (type == T_GOAWAY) {
        p2s_note(c->ctx, c->conn, "h2_goaway", "oversized GOAWAY skipped", c->ts);
    }
}

/* Why a frame header cannot be followed, or 0 (buffered) / 1 (streamed). */
static int frame_class(struct h2_conn *c, enum p2s_dir dir, uint32_t len, uint8_t type,
                       uint32_t sid)
{
    struct h2_dir *d = &c->d[dir];
    uint32_t maxf = dir_max_frame(d);

    if (len > maxf) {
        h2_fail(c, dir, SF_E_LIMIT,
                "frame of %u bytes (type %u, stream %u) exceeds SETTINGS_MAX_FRAME_SIZE %u; "
                "resynchronising",
                len, type, sid, maxf);
        return -1;
    }
    if (type == T_DATA || type > T_CONTINUATION)
        return 1;
    if (type == T_HEADERS || type == T_CONTINUATION || type == T_PUSH_PROMISE)
        return len > c->lim->max_header_bytes;
    if (type == T_GOAWAY && len > H2_CTRL_MAX)
        return 1;
    if (len > H2_CTRL_MAX) {
        h2_fail(c, dir, SF_E_MALFORMED, "control frame type %u of %u bytes; resynchronising", type,
                len);
        return -1;
    }
    return 0;
}

static void enter_sync(struct h2_conn *c, enum p2s_dir dir)
{
    struct h2_dir *d = &c->d[dir];

    d->state = D_SYNC;
    d->skip_left = 0;
    d->lost = 1;
    h2_stream_mark_all(c, "frames lost (resynchronised)");
    if (d->in_block)
        h2_stream_block_abandon(c, dir, "frames lost");
    else if (d->hd)
        hpack_dec_lost(d->hd);
    else
        d->lost = 1;
}

/* The TCP sequence number of q, a byte of the data call in progress: 1, or 0 when it
 * is unknown (TLS plaintext, bytes replayed from a buffer after a resync). */
static int seq_of(const struct h2_conn *c, enum p2s_dir dir, const uint8_t *q, uint32_t *seq)
{
    if (!c->call_seq_ok || c->call_p == NULL || dir != c->call_dir || q < c->call_p ||
        q > c->call_p + c->call_n)
        return 0;
    *seq = c->call_seq + (uint32_t)(q - c->call_p);
    return 1;
}

/* ---- D_FRAMES: one frame at a time ------------------------------------------------- *
 *
 * Each frame goes header -> payload -> dispatch, and where a direction is in its frame
 * follows from what it holds, so a frame may stop at any byte of one data call and go on
 * in the next:
 *
 *   FS_HEADER   no payload byte held yet: the 9-byte header, read in place or gathered
 *               in d->fb, then classified (frame_class): an absurd one resynchronises;
 *               a streamed one (DATA, oversized, unknown) goes to FS_STREAM; one whose
 *               payload is all in the call is dispatched in place; else -> FS_PAYLOAD
 *   FS_PAYLOAD  header and part of the payload in d->fb: gather the rest, dispatch
 *   FS_STREAM   d->skip_left payload bytes pass through (DATA bytes are counted and
 *               fed to gRPC), then skip_end
 */
enum frame_step { FS_HEADER, FS_PAYLOAD, FS_STREAM };

static enum frame_step frame_step(const struct h2_dir *d)
{
    if (d->skip_left > 0)
        return FS_STREAM;
    return d->fb.len <= H2_HDR ? FS_HEADER : FS_PAYLOAD;
}

/* FS_STREAM: the bytes of a streamed payload in this call. */
static int step_stream(struct h2_conn *c, enum p2s_dir dir, struct sf_rd *in, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    size_t k = sf_rd_left(in) < d->skip_left ? sf_rd_left(in) : d->skip_left;
    const uint8_t *q = sf_rd_bytes(in, k);

    if (d->skip_type == T_DATA)
        data_bytes(c, dir, q, k);
    d->skip_left -= (uint32_t)k;
    if (d->skip_left == 0)
        skip_end(c, dir, ts);
    return 1;
}

/* FS_PAYLOAD: gather the payload of the frame fh (its header in d->fb) and dispatch it
 * once whole.  0 when the direction left D_FRAMES. */
static int step_payload(struct h2_conn *c, enum p2s_dir dir, struct sf_rd *in,
                        const struct frame_hdr *fh, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    uint32_t sid = fh->sid & 0x7fffffffu;
    size_t need = H2_HDR + (size_t)fh->len - d->fb.len;
    size_t k = need < sf_rd_left(in) ? need : sf_rd_left(in);

    if (sf_buf_append(&d->fb, sf_rd_bytes(in, k), k) < 0) {
        h2_fail(c, dir, SF_E_NOMEM, "out of memory buffering a frame");
        enter_sync(c, dir);
        sf_buf_reset(&d->fb);
        return 0;
    }
    if (d->fb.len == H2_HDR + (size_t)fh->len) {
        frame_begin(c, dir, fh->type, fh->flags, sid, fh->len, 0);
        frame(c, dir, fh->type, fh->flags, sid, d->fb.data + H2_HDR, fh->len, ts);
        sf_buf_reset(&d->fb);
    }
    return 1;
}

/* FS_HEADER: the frame header, then what its class says.  0 when the header is not all
 * there yet or the direction left D_FRAMES. */
static int step_header(struct h2_conn *c, enum p2s_dir dir, struct sf_rd *in, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    int direct = d->fb.len == 0 && sf_rd_left(in) >= H2_HDR; /* read in place */
    struct frame_hdr fh;
    uint32_t sid;
    int cls, streamed;

    if (d->fb.len == 0) {
        d->fts = ts;
        d->fseq_ok = seq_of(c, dir, in->p, &d->fseq);
    }
    if (!direct && d->fb.len < H2_HDR) {
        size_t k = H2_HDR - d->fb.len < sf_rd_left(in) ? H2_HDR - d->fb.len : sf_rd_left(in);

        sf_buf_append(&d->fb, sf_rd_bytes(in, k), k); /* within fb's max */
        if (d->fb.len < H2_HDR)
            return 0;
    }
    if (frame_hdr(direct ? in->p : d->fb.data, direct ? sf_rd_left(in) : d->fb.len, &fh) < 0)
        return 0; /* not reached: a whole header is there */
    sid = fh.sid & 0x7fffffffu;
    cls = frame_class(c, dir, fh.len, fh.type, sid);
    if (cls < 0) {
        /* Never follow an absurd length: look for the next boundary from the byte
         * after this header's first. */
        if (direct)
            sf_rd_skip(in, 1);
        else
            sf_buf_consume(&d->fb, 1);
        enter_sync(c, dir);
        return 0;
    }
    streamed = cls == 1 || fh.type == T_DATA;
    if (cls == 1 || fh.len == 0 || (direct && sf_rd_left(in) - H2_HDR >= fh.len)) {
        const uint8_t *pl = NULL;

        if (direct)
            sf_rd_skip(in, H2_HDR);
        sf_buf_reset(&d->fb);
        frame_begin(c, dir, fh.type, fh.flags, sid, fh.len, streamed);
        if (streamed) {
            if (fh.len == 0)
                skip_end(c, dir, ts);
            return 1;
        }
        if (direct)
            pl = sf_rd_bytes(in, fh.len); /* the whole payload is in this call */
        frame(c, dir, fh.type, fh.flags, sid, pl ? pl : (const uint8_t *)"", fh.len, ts);
        return 1;
    }
    if (direct)
        sf_buf_append(&d->fb, sf_rd_bytes(in, H2_HDR), H2_HDR);
    return step_payload(c, dir, in, &fh, ts);
}

/* Bytes in D_FRAMES; returns how many were consumed (fewer than n only when the
 * direction left D_FRAMES). */
static size_t feed_frames(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n,
                          int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    struct sf_rd in;
    int go = 1;

    sf_rd_init(&in, p, n, 0);
    while (go && sf_rd_left(&in) > 0 && d->state == D_FRAMES) {
        switch (frame_step(d)) {
        case FS_HEADER:
            go = step_header(c, dir, &in, ts);
            break;
        case FS_PAYLOAD: {
            struct frame_hdr fh;

            go = frame_hdr(d->fb.data, d->fb.len, &fh) == 0 && step_payload(c, dir, &in, &fh, ts);
            break;
        }
        case FS_STREAM:
            go = step_stream(c, dir, &in, ts);
            break;
        }
    }
    return (size_t)sf_rd_off(&in);
}

/* Bytes in D_SYNC: hold up to a window and look for two plausible frame headers in
 * a row.  Returns bytes of p consumed; on success the direction is in D_FRAMES and
 * d->fb holds the bytes to replay from the found boundary. */
static size_t feed_sync(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    size_t room = H2_SYNC_WINDOW - d->fb.len, k = n < room ? n : room, i, wait = SIZE_MAX;
    uint32_t maxf = d->max_frame_known ? d->max_frame : H2_SYNC_WINDOW;
    /* Any 31-bit stream id: a capture that starts inside a long-lived connection (gRPC)
     * meets ids in the millions, and a long capture gap can skip as many. */

    sf_buf_append(&d->fb, p, k);
    for (i = 0; i < d->fb.len; i++) {
        int r = plausible_pair(d->fb.data + i, d->fb.len - i, maxf);

        if (r < 0 && wait == SIZE_MAX && d->fb.len < H2_SYNC_WINDOW)
            wait = i; /* undecided here; a confirmed pair further on wins */
        if (r == 1) {
            char det[64];

            snprintf(det, sizeof(det), "%s: %llu bytes skipped", dir == P2S_C2S ? "c2s" : "s2c",
                     (unsigned long long)(d->sync_scanned + i));
            p2s_note(c->ctx, c->conn, "h2_resync", det, c->ts);
            sf_buf_consume(&d->fb, i);
            d->state = D_FRAMES;
            d->sync_scanned = 0;
            return k;
        }
    }
    if (wait != SIZE_MAX)
        i = wait; /* keep the bytes from the first undecided position */
    sf_buf_consume(&d->fb, i);
    d->sync_scanned += i;
    if (d->sync_scanned > H2_SYNC_GIVE_UP) {
        h2_fail(c, dir, SF_E_MALFORMED,
                "no HTTP/2 frame boundary in %u bytes; direction "
                "abandoned",
                H2_SYNC_GIVE_UP);
        d->state = D_DEAD;
        sf_buf_free(&d->fb);
        h2_stream_mark_all(c, "direction abandoned");
    }
    return k;
}

static size_t feed_preface(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    struct h2_dir *d = &c->d[dir];
    size_t k = H2_PREFACE_LEN - d->preface_got;

    if (k > n)
        k = n;
    if (memcmp(p, &H2_PREFACE[d->preface_got], k) != 0) {
        /* tcp.c attached HTTP/2 to a connection seen from its middle: not an error */
        p2s_note(c->ctx, c->conn, "h2_no_preface", "capture started mid-connection", c->ts);
        d->state = D_SYNC;
        d->lost = 1;
        if (d->preface_got) /* replay what matched as candidate frame bytes */
            sf_buf_append(&d->fb, H2_PREFACE, d->preface_got);
        return 0;
    }
    d->preface_got += k;
    if (d->preface_got == H2_PREFACE_LEN) {
        d->state = D_FRAMES;
        c->from_start = 1;
        /* From the start, SETTINGS_MAX_FRAME_SIZE is the default until ACKed. */
        c->d[P2S_C2S].max_frame_known = c->d[P2S_S2C].max_frame_known = 1;
    }
    return k;
}

/* Run bytes through the direction's state machine.  Replays of held bytes after a
 * resync are iterative (a private copy), never recursive. */
static void feed(struct h2_conn *c, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts)
{
    struct h2_dir *d = &c->d[dir];
    uint8_t *tmp = NULL;
    size_t i = 0;

    while (i < n) {
        switch (d->state) {
        case D_PREFACE:
            i += feed_preface(c, dir, p + i, n - i);
            break;
        case D_FRAMES:
            i += feed_frames(c, dir, p + i, n - i, ts);
            break;
        case D_SYNC: {
            uint8_t *t2;
            size_t m;

            i += feed_sync(c, dir, p + i, n - i);
            if (d->state != D_FRAMES)
                break;
            m = d->fb.len + (n - i);
            t2 = malloc(m ? m : 1);
            if (t2 == NULL) {
                d->state = D_DEAD;
                i = n;
                break;
            }
            memcpy(t2, d->fb.data, d->fb.len);
            memcpy(t2 + d->fb.len, p + i, n - i);
            sf_buf_reset(&d->fb);
            free(tmp);
            p = tmp = t2;
            n = m;
            i = 0;
            break;
        }
        case D_DEAD:
            i = n;
            break;
        }
    }
    free(tmp);
}

/* ---- p2s_app_ops ---------------------------------------------------------------------- */

static void *h2_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct h2_conn *c = calloc(1, sizeof(*c));
    size_t fbmax;

    if (c == NULL)
        return NULL;
    c->ctx = ctx;
    c->conn = conn;
    sf_map_init_cap(&c->streams, H2_STREAMS_FIRST);
    c->lim = p2s_limits(ctx);
    fbmax = c->lim->max_header_bytes > H2_SYNC_WINDOW ? c->lim->max_header_bytes : H2_SYNC_WINDOW;
    for (int i = 0; i < 2; i++) {
        struct h2_dir *d = &c->d[i];

        sf_buf_init(&d->fb, H2_HDR + fbmax);
        sf_buf_init(&d->block, c->lim->max_header_bytes);
        d->bound = -1;
        d->max_frame = H2_DEFAULT_MAX_FRAME;
        d->state = i == P2S_C2S ? D_PREFACE : D_FRAMES;
    }
    p2s_conn_set_proto(conn, "h2");
    return c;
}

static int h2_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                   struct sf_err *err)
{
    struct h2_conn *c = st;
    int rc;

    c->err = err;
    c->rc = 0;
    c->ts = ts;
    c->call_p = p;
    c->call_n = n;
    c->call_dir = dir;
    c->call_seq_ok = p2s_conn_data_seq(c->conn, &c->call_seq) == 0;
    feed(c, dir, p, n, ts);
    c->call_p = NULL;
    c->d[dir].off += n;
    rc = c->emit_rc ? c->emit_rc : c->rc;
    c->emit_rc = 0;
    c->err = NULL;
    return rc;
}

static void h2_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct h2_conn *c = st;
    struct h2_dir *d = &c->d[dir];

    c->ts = ts;
    d->off += len;
    if (d->state == D_DEAD)
        return;
    if (d->state == D_FRAMES && d->fb.len == 0 && d->skip_left >= len && !d->pad_pending) {
        /* Inside a streamed payload: frame alignment survives. */
        struct h2_stream *s = h2_stream_find(c, d->skip_sid);
        uint32_t body = len < d->body_left ? (uint32_t)len : d->body_left;

        if (s && d->skip_type == T_DATA) {
            h2_stream_partial(s, "capture gap in DATA");
            h2_stream_rpc_data(c, s, dir, NULL, body);
            if (dir == P2S_C2S)
                s->req_bytes += body;
            else
                s->resp_bytes += body;
        }
        d->body_left -= body;
        d->skip_left -= (uint32_t)len;
        if (d->skip_left == 0)
            skip_end(c, dir, ts);
        return;
    }
    sf_buf_reset(&d->fb);
    h2_stream_mark_all(c, "capture gap");
    enter_sync(c, dir);
}

static void h2_close(void *st, int64_t ts)
{
    struct h2_conn *c = st;

    c->ts = ts;
    c->err = NULL;
    while (c->first) {
        struct h2_stream *s = c->first;

        if (s->lingering) {
            h2_stream_reset_end(c, s);
            continue;
        }
        if (!s->req_done || !s->resp_done)
            h2_stream_partial(s, "connection closed before the stream ended");
        h2_stream_emit(c, s);
    }
    for (int i = 0; i < 2; i++) {
        hpack_dec_free(c->d[i].hd);
        sf_buf_free(&c->d[i].fb);
        sf_buf_free(&c->d[i].block);
    }
    sf_map_free(&c->streams);
    free(c);
}

const struct p2s_app_ops p2s_h2_ops = {
    .name = "h2",
    .open = h2_open,
    .data = h2_data,
    .gap = h2_gap,
    .close = h2_close,
};

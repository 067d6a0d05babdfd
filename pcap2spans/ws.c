/* ws.c - WebSocket messages for JSON-RPC (ws.h). */
#include "ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "ctx.h"
#include "rpc.h"
#include "sf_buf.h"
#include "sf_rd.h"

enum { OP_CONT = 0, OP_TEXT = 1, OP_BINARY = 2, OP_CLOSE = 8, OP_PING = 9, OP_PONG = 10 };

struct ws_dir {
    uint8_t hdr[14];
    size_t hlen, hneed; /* header bytes held, needed (2 until the length is known) */
    uint64_t left;      /* payload bytes of the current frame still to come */
    uint8_t mask[4];
    int masked;
    uint64_t moff; /* payload offset, for the mask */
    int opcode, fin;
    /* the message being assembled */
    int in_msg, msg_op, deflated, over;
    struct sf_buf msg;
    int64_t t0;
    /* permessage-deflate: this direction's inflater, kept across messages unless
     * no_context_takeover was agreed */
    z_stream z;
    int z_ready, no_takeover;
    int dead; /* the framing was lost: nothing more is read this way */
};

struct p2s_ws {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
    int64_t stream_id;
    int pmd; /* permessage-deflate agreed */
    struct ws_dir d[2];
};

/* A parameter of the permessage-deflate offer in a Sec-WebSocket-Extensions value. */
static int ext_has(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);

    for (size_t i = 0; i + tl <= n; i++)
        if (strncasecmp(v + i, tok, tl) == 0 && (i == 0 || v[i - 1] == ' ' || v[i - 1] == ';') &&
            (i + tl == n || v[i + tl] == ';' || v[i + tl] == ' ' || v[i + tl] == ',' ||
             v[i + tl] == '='))
            return 1;
    return 0;
}

struct p2s_ws *p2s_ws_new(struct p2s_ctx *ctx, struct p2s_conn *conn, int64_t stream_id,
                          const char *ext, size_t ext_len)
{
    struct p2s_ws *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return NULL;
    w->ctx = ctx;
    w->conn = conn;
    w->stream_id = stream_id;
    w->pmd = ext && ext_has(ext, ext_len, "permessage-deflate");
    for (int i = 0; i < 2; i++) {
        w->d[i].hneed = 2;
        sf_buf_init(&w->d[i].msg, ctx->lim.max_rpc_bytes);
    }
    w->d[P2S_C2S].no_takeover = w->pmd && ext_has(ext, ext_len, "client_no_context_takeover");
    w->d[P2S_S2C].no_takeover = w->pmd && ext_has(ext, ext_len, "server_no_context_takeover");
    return w;
}

void p2s_ws_free(struct p2s_ws *w)
{
    if (w == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        sf_buf_free(&w->d[i].msg);
        if (w->d[i].z_ready)
            inflateEnd(&w->d[i].z);
    }
    free(w);
}

static void lose(struct p2s_ws *w, struct ws_dir *d, const char *why, int64_t ts)
{
    if (!d->dead)
        p2s_note(w->ctx, w->conn, "websocket_unread", why, ts);
    d->dead = 1;
    d->in_msg = 0;
    sf_buf_reset(&d->msg);
}

/* The message's text, inflated when it was deflated, into out; 0, or -1 (noted). */
static int inflate_msg(struct p2s_ws *w, struct ws_dir *d, struct sf_buf *out, int64_t ts)
{
    static const uint8_t tail[4] = {0x00, 0x00, 0xff, 0xff};
    int rc = Z_OK;

    if (!d->z_ready) {
        memset(&d->z, 0, sizeof(d->z));
        if (inflateInit2(&d->z, -15) != Z_OK)
            return -1;
        d->z_ready = 1;
    }
    for (int part = 0; part < 2 && rc == Z_OK; part++) {
        d->z.next_in = (Bytef *)(part ? tail : d->msg.data);
        d->z.avail_in = (uInt)(part ? sizeof(tail) : d->msg.len);
        while (d->z.avail_in > 0 && rc == Z_OK) {
            uint8_t buf[16384];
            d->z.next_out = buf;
            d->z.avail_out = sizeof(buf);
            rc = inflate(&d->z, Z_SYNC_FLUSH);
            if (rc == Z_BUF_ERROR)
                rc = Z_OK; /* no progress possible: all input taken */
            if ((rc == Z_OK || rc == Z_STREAM_END) &&
                sf_buf_append(out, buf, sizeof(buf) - d->z.avail_out) < 0) {
                p2s_note(w->ctx, w->conn, "jsonrpc_over_limit", "a WebSocket message", ts);
                rc = Z_MEM_ERROR;
            }
            if (rc == Z_STREAM_END) /* a final block: the next message starts afresh */
                rc = inflateReset(&d->z);
        }
    }
    if (rc != Z_OK && rc != Z_MEM_ERROR) {
        p2s_note(w->ctx, w->conn, "jsonrpc_bad_coding",
                 d->z.msg ? d->z.msg : "permessage-deflate: bad data", ts);
        inflateReset(&d->z);
        return -1;
    }
    if (d->no_takeover)
        inflateReset(&d->z);
    return rc == Z_OK ? 0 : -1;
}

static void message_end(struct p2s_ws *w, enum p2s_dir dir, int64_t ts)
{
    struct ws_dir *d = &w->d[dir];
    struct p2s_rpc_carrier x = {w->conn, w->stream_id, NULL, 0};
    struct p2s_rpc_body *b;
    struct sf_buf plain;

    d->in_msg = 0;
    if (d->over) {
        p2s_note(w->ctx, w->conn, "jsonrpc_over_limit", "a WebSocket message", ts);
    } else if (d->msg_op == OP_TEXT && (b = p2s_rpc_body_open(w->ctx, &x, dir, 1, NULL, 0))) {
        if (d->deflated) {
            sf_buf_init(&plain, w->ctx->lim.max_rpc_bytes);
            if (inflate_msg(w, d, &plain, ts) == 0)
                p2s_rpc_body_data(b, plain.data, plain.len, d->t0);
            else
                p2s_rpc_body_gap(b);
            sf_buf_free(&plain);
        } else {
            p2s_rpc_body_data(b, d->msg.data, d->msg.len, d->t0);
        }
        p2s_rpc_body_end(b, ts);
    } else if (d->deflated) { /* a binary message still moves the shared window */
        sf_buf_init(&plain, w->ctx->lim.max_rpc_bytes);
        (void)inflate_msg(w, d, &plain, ts);
        sf_buf_free(&plain);
    }
    sf_buf_reset(&d->msg);
    d->over = 0;
}

/* The frame header in d->hdr is whole: check it and start the frame. */
static void frame_start(struct p2s_ws *w, struct ws_dir *d, enum p2s_dir dir, int64_t ts)
{
    struct sf_rd rd;
    uint8_t b0, b1;
    int rsv1, len7;
    const uint8_t *m;

    sf_rd_init(&rd, d->hdr, d->hlen, 0);
    b0 = sf_rd_u8(&rd);
    b1 = sf_rd_u8(&rd);
    rsv1 = b0 >> 6 & 1;
    len7 = b1 & 0x7f;
    d->fin = b0 >> 7;
    d->opcode = b0 & 0x0f;
    d->masked = b1 >> 7;
    d->left = len7 == 126 ? sf_rd_u16be(&rd) : len7 == 127 ? sf_rd_u64be(&rd) : (uint64_t)len7;
    if (d->masked && (m = sf_rd_bytes(&rd, 4)) != NULL)
        memcpy(d->mask, m, 4);
    d->moff = 0;
    d->hlen = 0;
    d->hneed = 2;
    if ((b0 & 0x30) || (rsv1 && (!w->pmd || d->opcode >= 8 || d->opcode == OP_CONT))) {
        lose(w, d, "WebSocket frame with reserved bits set", ts);
        return;
    }
    if (d->opcode >= 8) { /* control: whole, short, between fragments */
        if (d->opcode > OP_PONG || !d->fin || d->left > 125)
            lose(w, d, "bad WebSocket control frame", ts);
        return;
    }
    if (d->opcode > OP_BINARY || (d->opcode == OP_CONT) != (d->in_msg != 0)) {
        lose(w, d, "bad WebSocket data frame", ts);
        return;
    }
    if (d->opcode != OP_CONT) {
        d->in_msg = 1;
        d->msg_op = d->opcode;
        d->deflated = rsv1;
        d->t0 = ts;
        sf_buf_reset(&d->msg);
        d->over = 0;
    }
    (void)dir;
}

static void frame_end(struct p2s_ws *w, struct ws_dir *d, enum p2s_dir dir, int64_t ts)
{
    if (d->opcode < 8 && d->fin && d->in_msg)
        message_end(w, dir, ts);
}

/* Payload bytes p[0..n) of the current frame. */
static void payload(struct ws_dir *d, const uint8_t *p, size_t n)
{
    uint8_t buf[4096];

    if (d->opcode >= 8 || !d->in_msg || d->over)
        return;
    while (n > 0) {
        size_t k = n < sizeof(buf) ? n : sizeof(buf);
        for (size_t i = 0; i < k; i++)
            buf[i] = d->masked ? p[i] ^ d->mask[(d->moff + i) & 3] : p[i];
        d->moff += k;
        if (sf_buf_append(&d->msg, buf, k) < 0) {
            d->over = 1;
            sf_buf_reset(&d->msg);
            return;
        }
        p += k;
        n -= k;
    }
}

void p2s_ws_data(struct p2s_ws *w, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts)
{
    struct ws_dir *d;
    size_t i = 0;

    if (w == NULL)
        return;
    d = &w->d[dir];
    while (i < n && !d->dead) {
        if (d->hneed) { /* a header: 2 bytes, then what they say follows */
            while (i < n && d->hlen < d->hneed)
                d->hdr[d->hlen++] = p[i++];
            if (d->hlen < d->hneed)
                return;
            if (d->hneed == 2) {
                int len7 = d->hdr[1] & 0x7f;
                d->hneed = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (d->hdr[1] >> 7 ? 4 : 0);
                if (d->hneed > 2)
                    continue;
            }
            frame_start(w, d, dir, ts);
            if (d->dead)
                return;
            d->hneed = d->left ? 0 : 2;
            if (d->left == 0)
                frame_end(w, d, dir, ts);
            continue;
        }
        size_t k = n - i < d->left ? n - i : (size_t)d->left;
        payload(d, p + i, k);
        i += k;
        d->left -= k;
        if (d->left == 0) {
            d->hneed = 2;
            frame_end(w, d, dir, ts);
        }
    }
}

void p2s_ws_gap(struct p2s_ws *w, enum p2s_dir dir)
{
    if (w)
        lose(w, &w->d[dir], "capture gap in a WebSocket stream", w->ctx->pkt_ts);
}

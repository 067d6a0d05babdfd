/* h2.c - HTTP/2 framing (RFC 9113) to spans: placeholder so the tool links.
 *
 * The full parser (frames, HPACK via hpack.c, gRPC via grpc.c) replaces this
 * shortly; until then HTTP/2 connections are attached but yield no spans.
 */
#include <stdlib.h>

#include "p2s.h"

struct h2_conn {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
};

static void *h2_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct h2_conn *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->ctx = ctx;
    c->conn = conn;
    p2s_conn_set_proto(conn, "h2");
    return c;
}

static int h2_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts_ns,
                   struct sf_err *err)
{
    (void)st;
    (void)dir;
    (void)p;
    (void)n;
    (void)ts_ns;
    (void)err;
    return 0;
}

static void h2_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts_ns)
{
    (void)st;
    (void)dir;
    (void)len;
    (void)ts_ns;
}

static void h2_close(void *st, int64_t ts_ns)
{
    (void)ts_ns;
    free(st);
}

void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req)
{
    (void)h2_state;
    (void)req;
}

const struct p2s_app_ops p2s_h2_ops = {
    .name = "h2",
    .open = h2_open,
    .data = h2_data,
    .gap = h2_gap,
    .close = h2_close,
};

/* h2.c - HTTP/2 for the demo service (RFC 9113, h2c with prior knowledge) on
 * libnghttp2's server session, and gRPC over it (gRPC over HTTP/2 protocol doc).
 *
 * A request is handled when its stream ends (END_STREAM on HEADERS or DATA), on
 * the connection's thread.  gRPC calls (content-type application/grpc...) are
 * answered with one length-prefixed message and trailers:
 *
 *   HEADERS  :status 200, content-type application/grpc
 *   DATA     | 0 | len (4, big endian) | message |
 *   HEADERS  grpc-status N [, grpc-message] (END_STREAM)
 */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

struct h2_stream {
    struct h2_stream *prev, *next; /* the connection's open streams */
    struct demo_req rq;
    int grpc;
    struct demo_resp rs;
    uint8_t out[5 + sizeof(((struct demo_resp *)0)->body)];
    size_t out_len, out_off;
};

struct h2_conn {
    struct demo_ctx *c;
    int fd;
    struct h2_stream *streams; /* freed at on_stream_close, or at the end of the
                                  session (nghttp2_session_del does not close them) */
};

static void stream_free(struct h2_conn *hc, struct h2_stream *st)
{
    if (st->prev)
        st->prev->next = st->next;
    else
        hc->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    free(st);
}

#define NV(n, v, vlen)                                                                             \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vlen), NGHTTP2_NV_FLAG_NONE                \
    }

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *u)
{
    struct h2_conn *hc = u;
    struct h2_stream *st;

    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if ((st = calloc(1, sizeof(*st))) == NULL)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->next = hc->streams;
    if (hc->streams)
        hc->streams->prev = st;
    hc->streams = st;
    st->rq.proto = "h2";
    sf_tracectx_set_init(&st->rq.tc);
    nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
    return 0;
}

static void copy_field(char *dst, size_t cap, const uint8_t *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *u)
{
    struct h2_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

    (void)flags;
    (void)u;
    if (st == NULL || f->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (nlen == 5 && memcmp(name, ":path", 5) == 0)
        copy_field(st->rq.path, sizeof(st->rq.path), value, vlen);
    else if (nlen == 7 && memcmp(name, ":method", 7) == 0)
        copy_field(st->rq.method, sizeof(st->rq.method), value, vlen);
    else if (nlen == 12 && memcmp(name, "content-type", 12) == 0)
        st->grpc = vlen >= 16 && memcmp(value, "application/grpc", 16) == 0;
    else if (sf_tracectx_header_id((const char *)name, nlen) >= 0)
        sf_tracectx_set_add(&st->rq.tc, (const char *)name, nlen, value, vlen);
    else if (nlen && name[0] != ':') /* for the sampler's header rule */
        sf_tracectx_set_keep(&st->rq.tc, (const char *)name, nlen, value, vlen);
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *u)
{
    struct h2_stream *st = src->ptr;
    size_t n = st->out_len - st->out_off;

    (void)u;
    if (n > len)
        n = len;
    memcpy(buf, st->out + st->out_off, n);
    st->out_off += n;
    if (st->out_off == st->out_len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        if (st->grpc) {
            char gs[8];
            int k = snprintf(gs, sizeof(gs), "%d", st->rs.grpc_status);
            nghttp2_nv tr[] = {NV("grpc-status", gs, (size_t)k),
                               NV("grpc-message", "not found", 9)};
            *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
            if (nghttp2_submit_trailer(s, id, tr, st->rs.grpc_status ? 2 : 1) != 0)
                return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    }
    return (ssize_t)n;
}

static int respond(nghttp2_session *s, int32_t id, struct h2_stream *st, struct demo_ctx *c)
{
    char status[8], clen[24];
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    int k;

    st->rq.proto = st->grpc ? "grpc" : "h2";
    sf_tracectx_set_finish(&st->rq.tc);
    demo_handle(c, &st->rq, &st->rs);
    if (st->grpc) {
        uint32_t m = (uint32_t)st->rs.len;
        uint8_t pfx[5] = {0, (uint8_t)(m >> 24), (uint8_t)(m >> 16), (uint8_t)(m >> 8), (uint8_t)m};
        nghttp2_nv hd[] = {NV(":status", "200", 3), NV("content-type", "application/grpc", 16)};
        memcpy(st->out, pfx, 5);
        memcpy(st->out + 5, st->rs.body, st->rs.len);
        st->out_len = 5 + st->rs.len;
        return nghttp2_submit_response(s, id, hd, 2, &dp);
    }
    memcpy(st->out, st->rs.body, st->rs.len);
    st->out_len = st->rs.len;
    snprintf(status, sizeof(status), "%d", st->rs.status);
    k = snprintf(clen, sizeof(clen), "%zu", st->out_len);
    nghttp2_nv hd[] = {NV(":status", status, 3), NV("content-type", "text/plain", 10),
                       NV("content-length", clen, (size_t)k)};
    return nghttp2_submit_response(s, id, hd, 3, &dp);
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *u)
{
    struct h2_conn *hc = u;
    struct h2_stream *st;

    if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
        !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    if ((st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id)) == NULL)
        return 0;
    if (respond(s, f->hd.stream_id, st, hc->c) != 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *u)
{
    struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

    (void)code;
    if (st) {
        nghttp2_session_set_stream_user_data(s, id, NULL);
        stream_free(u, st);
    }
    return 0;
}

static int flush(nghttp2_session *s, int fd)
{
    for (;;) {
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(s, &p);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        while (n > 0) {
            ssize_t k = write(fd, p, (size_t)n);
            if (k <= 0)
                return -1;
            p += k;
            n -= k;
        }
    }
}

void demo_serve_h2(struct demo_ctx *c, int fd, const char *pre, size_t npre)
{
    struct h2_conn hc = {c, fd, NULL};
    nghttp2_session_callbacks *cb;
    nghttp2_session *s = NULL;
    nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    uint8_t buf[16384];

    if (nghttp2_session_callbacks_new(&cb) != 0)
        goto out;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    if (nghttp2_session_server_new(&s, cb, &hc) != 0)
        s = NULL;
    nghttp2_session_callbacks_del(cb);
    if (s == NULL || nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, set, 1) != 0)
        goto out;
    if (nghttp2_session_mem_recv(s, (const uint8_t *)pre, npre) < 0 || flush(s, fd) < 0)
        goto out;
    while (nghttp2_session_want_read(s) || nghttp2_session_want_write(s)) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0 || nghttp2_session_mem_recv(s, buf, (size_t)n) < 0 || flush(s, fd) < 0)
            break;
    }
out:
    if (s)
        nghttp2_session_del(s);
    while (hc.streams)
        stream_free(&hc, hc.streams);
    close(fd);
}

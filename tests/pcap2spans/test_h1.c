/* Unit tests: pcap2spans HTTP/1.1 parser (h1.c) fed directly, spans collected in memory. */
#include <stdlib.h>
#include <string.h>

#include "../../pcap2spans/p2s.h"
#include "tap.h"

#define MAXS 16

struct got {
    int n, total; /* kept (at most MAXS), emitted */
    struct p2s_span s[MAXS];
    char method[MAXS][16], path[MAXS][128], authority[MAXS][64], why[MAXS][64];
    char trace[MAXS][40];
    int nctx[MAXS], ctx_invalid[MAXS], resp_nctx[MAXS];
};

static int hook(void *arg, struct p2s_conn *conn, const struct p2s_span *s)
{
    struct got *g = arg;
    int i = g->n;

    (void)conn;
    g->total++;
    if (i >= MAXS)
        return 0;
    g->s[i] = *s;
    snprintf(g->method[i], sizeof(g->method[i]), "%s", s->method ? s->method : "(null)");
    snprintf(g->path[i], sizeof(g->path[i]), "%s", s->path ? s->path : "(null)");
    snprintf(g->authority[i], sizeof(g->authority[i]), "%s",
             s->authority ? s->authority : "(null)");
    snprintf(g->why[i], sizeof(g->why[i]), "%s", s->partial_reason ? s->partial_reason : "");
    g->nctx[i] = s->req_ctx ? s->req_ctx->n : 0;
    g->resp_nctx[i] = s->resp_ctx ? s->resp_ctx->n : 0;
    g->trace[i][0] = 0;
    if (s->req_ctx) {
        int b = sf_tracectx_set_preferred(s->req_ctx);
        if (b >= 0)
            snprintf(g->trace[i], sizeof(g->trace[i]), "%s", s->req_ctx->ctx[b].trace_id);
        for (int k = 0; k < s->req_ctx->n; k++)
            g->ctx_invalid[i] += !s->req_ctx->ctx[k].valid;
    }
    g->n++;
    return 0;
}

struct fix {
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    void *st;
    struct got g;
    int errors;
    struct sf_err last;
};

static void open_fix(struct fix *f)
{
    memset(f, 0, sizeof(*f));
    p2s_ctx_init(&f->ctx);
    f->ctx.quiet = 1;
    f->ctx.span_hook = hook;
    f->ctx.span_hook_arg = &f->g;
    f->conn = tcp_conn_new_detached(&f->ctx);
    f->st = p2s_conn_switch(f->conn, &p2s_h1_ops);
}

/* Feed text in pieces of `step` bytes (0 = all at once); timestamps count up. */
static void feed(struct fix *f, enum p2s_dir dir, const char *s, size_t step, int64_t ts)
{
    size_t n = strlen(s), i = 0;

    while (i < n) {
        size_t k = step && n - i > step ? step : n - i;
        struct sf_err err;
        sf_err_clear(&err);
        if (p2s_h1_ops.data(f->st, dir, (const uint8_t *)s + i, k, ts++, &err) < 0) {
            f->errors++;
            f->last = err;
        }
        i += k;
    }
}

/* Closes whichever parser the connection has now (HTTP/1, or HTTP/2 after h2c). */
static void close_fix(struct fix *f)
{
    if (f->conn)
        tcp_conn_free_detached(f->conn);
    p2s_ctx_free(&f->ctx);
}

static const char *req1 = "GET /a?x=1 HTTP/1.1\r\nHost: example.org\r\n"
                          "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"
                          "User-Agent: t\r\n\r\n";
static const char *resp1 = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

static void test_simple_and_split(void)
{
    static const size_t steps[] = {0, 1, 7};
    for (size_t k = 0; k < 3; k++) {
        struct fix f;
        open_fix(&f);
        feed(&f, P2S_C2S, req1, steps[k], 100);
        feed(&f, P2S_S2C, resp1, steps[k], 200);
        TAP_EQ_INT(f.g.n, 1, "step %zu: one span", steps[k]);
        TAP_EQ_STR(f.g.method[0], "GET", "step %zu: method", steps[k]);
        TAP_EQ_STR(f.g.path[0], "/a?x=1", "step %zu: path", steps[k]);
        TAP_EQ_STR(f.g.authority[0], "example.org", "step %zu: authority from Host", steps[k]);
        TAP_EQ_INT(f.g.s[0].status, 200, "step %zu: status", steps[k]);
        TAP_EQ_INT(f.g.s[0].resp_bytes, 5, "step %zu: body bytes", steps[k]);
        TAP_EQ_INT(f.g.s[0].req_start_ns, 100, "step %zu: request first byte time", steps[k]);
        TAP_EQ_INT(f.g.s[0].resp_start_ns, 200, "step %zu: response first byte time", steps[k]);
        TAP_OK(f.g.s[0].resp_end_ns >= 200, "step %zu: response last byte time", steps[k]);
        TAP_EQ_STR(f.g.trace[0], "4bf92f3577b34da6a3ce929d0e0e4736", "step %zu: traceparent",
                   steps[k]);
        TAP_EQ_INT(f.g.s[0].partial, 0, "step %zu: complete", steps[k]);
        TAP_EQ_INT(f.errors, 0, "step %zu: no error", steps[k]);
        close_fix(&f);
    }
}

static void test_chunked_trailers(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S,
         "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
         "3\r\nabc\r\n0\r\n\r\n",
         3, 1);
    feed(&f, P2S_S2C,
         "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
         "4;ext=1\r\nwxyz\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n"
         "X-Trailer: 1\r\nGrpc-Status: 0\r\n\r\n",
         5, 10);
    feed(&f, P2S_C2S, "GET /next HTTP/1.1\r\nHost: h\r\n\r\n", 0, 20);
    feed(&f, P2S_S2C, "HTTP/1.1 204 No Content\r\n\r\n", 0, 30);
    TAP_EQ_INT(f.g.n, 2, "chunked: both exchanges found (framing kept)");
    TAP_EQ_INT(f.g.s[0].req_bytes, 3, "chunked request body bytes");
    TAP_EQ_INT(f.g.s[0].resp_bytes, 30,
               "chunked response body bytes (extensions, trailers skipped)");
    TAP_EQ_STR(f.g.path[1], "/next", "request after the chunked one");
    TAP_EQ_INT(f.g.s[1].status, 204, "204 without body");
    TAP_EQ_INT(f.errors, 0, "no error");
    close_fix(&f);
}

static void test_pipelining_interim_head(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S,
         "HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /p1 HTTP/1.1\r\nHost: h\r\n\r\n"
         "POST /p2 HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n",
         0, 1);
    feed(&f, P2S_S2C,
         "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
         "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"
         "HTTP/1.1 100 Continue\r\n\r\n",
         0, 5);
    feed(&f, P2S_C2S, "body", 0, 6);
    feed(&f, P2S_S2C, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", 0, 7);
    TAP_EQ_INT(f.g.n, 3, "pipelined: three exchanges");
    TAP_EQ_STR(f.g.method[0], "HEAD", "first is HEAD");
    TAP_EQ_INT(f.g.s[0].resp_bytes, 0, "HEAD response has no body despite Content-Length");
    TAP_EQ_INT(f.g.s[1].status, 304, "304 paired with the second request");
    TAP_EQ_STR(f.g.path[2], "/p2", "third request");
    TAP_EQ_INT(f.g.s[2].status, 201, "100 Continue skipped, final status kept");
    TAP_EQ_INT(f.g.s[2].req_bytes, 4, "request body after 100 Continue");
    TAP_EQ_INT(f.g.s[0].stream_id, 1, "exchange numbers count up (1)");
    TAP_EQ_INT(f.g.s[2].stream_id, 3, "exchange numbers count up (3)");
    close_fix(&f);
}

/* A line may end in a bare LF (RFC 9112 2.2, as the field walk reads it): the first blank
 * line ends a header section, even when a CRLF CRLF comes later in the same segment (a
 * pipelined request, or bytes of a body).  Step 0 and 1: in one segment and byte by byte. */
static void test_bare_lf(size_t step)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S,
         "GET /lf HTTP/1.1\nHost: h\n\n"
         "GET /crlf HTTP/1.1\r\nHost: h\r\n\r\n"
         "GET /mixed HTTP/1.1\r\nHost: h\n\r\n",
         step, 1);
    feed(&f, P2S_S2C,
         "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"
         "HTTP/1.1 204 No Content\r\n\r\n"
         "HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n",
         step, 2);
    TAP_EQ_INT(f.g.n, 3, "bare LF (step %zu): three exchanges", step);
    TAP_EQ_STR(f.g.path[0], "/lf", "bare LF (step %zu): the LF-only request", step);
    TAP_EQ_STR(f.g.path[1], "/crlf", "bare LF (step %zu): the CRLF request after it", step);
    TAP_EQ_STR(f.g.path[2], "/mixed", "bare LF (step %zu): LF then CRLF ends a section", step);
    TAP_OK(f.g.s[0].status == 200 && f.g.s[0].resp_bytes == 2 && f.g.s[1].status == 204 &&
               f.g.s[2].status == 200 && !f.g.s[0].partial && !f.g.s[1].partial &&
               !f.g.s[2].partial,
           "bare LF (step %zu): statuses and body paired, none partial", step);
    TAP_EQ_INT(f.errors, 0, "bare LF (step %zu): no error", step);
    close_fix(&f);
}

static void test_close_delimited_and_no_response(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "GET /c HTTP/1.1\r\nHost: h\r\n\r\nGET /lost HTTP/1.1\r\nHost: h\r\n\r\n", 0,
         1);
    feed(&f, P2S_S2C, "HTTP/1.0 200 OK\r\n\r\nuntil the end", 0, 2);
    TAP_EQ_INT(f.g.n, 0, "close-delimited body: no span before close");
    tcp_conn_free_detached(f.conn);
    f.conn = NULL;
    TAP_EQ_INT(f.g.n, 2, "close emits both");
    TAP_EQ_INT(f.g.s[0].resp_bytes, 13, "close-delimited body length");
    TAP_EQ_INT(f.g.s[0].partial, 0, "close-delimited response is complete");
    TAP_EQ_INT(f.g.s[1].partial, 1, "request without response is partial");
    TAP_EQ_STR(f.g.why[1], "no response", "reason given");
    close_fix(&f);
}

static void test_garbage_resync(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "\x16\x03garbage line\r\nmore junk\r\nGET /ok HTTP/1.1\r\nHost: h\r\n\r\n", 4,
         1);
    TAP_EQ_INT(f.errors, 1, "garbage reported once");
    TAP_EQ_INT(f.last.code, SF_E_MALFORMED, "as malformed");
    feed(&f, P2S_S2C, "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 2);
    TAP_EQ_INT(f.g.n, 1, "request after garbage parsed");
    TAP_EQ_STR(f.g.path[0], "/ok", "resynchronised on the request line");
    close_fix(&f);
}

static void test_gap_resync(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "GET /one HTTP/1.1\r\nHo", 0, 1);
    p2s_h1_ops.gap(f.st, P2S_C2S, 100, 2);
    feed(&f, P2S_C2S, "st: h\r\nX: y\r\n\r\nGET /two HTTP/1.1\r\nHost: h\r\n\r\n", 0, 3);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", 0, 4);
    TAP_EQ_INT(f.errors, 0, "a gap is not an error");
    TAP_EQ_INT(f.g.n, 1, "exchange after the gap");
    TAP_EQ_STR(f.g.path[0], "/two", "resumed at the next request line");
    TAP_EQ_INT(f.g.s[0].partial, 1, "marked partial");
    /* gap inside a Content-Length body keeps the framing */
    feed(&f, P2S_C2S, "GET /three HTTP/1.1\r\nHost: h\r\n\r\n", 0, 5);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab", 0, 6);
    p2s_h1_ops.gap(f.st, P2S_S2C, 5, 7);
    feed(&f, P2S_S2C, "cde", 0, 8);
    TAP_EQ_INT(f.g.n, 2, "body gap: exchange still completes");
    TAP_EQ_INT(f.g.s[1].resp_bytes, 10, "body bytes include the lost ones");
    TAP_EQ_INT(f.g.s[1].partial, 1, "partial because of the gap");
    close_fix(&f);
}

/* A gap in the responses that swallows a whole response: on a connection that does not
 * pipeline, the next response answers the newest request sent before it, and the one in
 * between lost its response; on a pipelining connection the oldest waiting one is kept. */
static void test_gap_lost_response(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "GET /r1 HTTP/1.1\r\nHost: h\r\n\r\n", 0, 10);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, 20);
    feed(&f, P2S_C2S, "GET /r2 HTTP/1.1\r\nHost: h\r\n\r\n", 0, 30);
    p2s_h1_ops.gap(f.st, P2S_S2C, 300, 40); /* all of the response to /r2 */
    feed(&f, P2S_C2S, "GET /r3 HTTP/1.1\r\nHost: h\r\n\r\n", 0, 50);
    feed(&f, P2S_S2C, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 0, 60);
    TAP_EQ_INT(f.g.n, 3, "lost response: three exchanges");
    TAP_EQ_INT(f.g.s[0].status, 200, "the exchange before the gap is intact");
    TAP_EQ_INT(f.g.s[0].partial, 0, "and not partial");
    TAP_EQ_STR(f.g.path[1], "/r2", "the request whose response was lost");
    TAP_EQ_INT(f.g.s[1].status, 0, "has no status");
    TAP_EQ_STR(f.g.why[1], "response lost in a capture gap", "and says why");
    TAP_EQ_STR(f.g.path[2], "/r3", "the response after the gap answers /r3");
    TAP_EQ_INT(f.g.s[2].status, 404, "with its own status");
    TAP_EQ_INT(f.g.s[2].resp_start_ns, 60, "and its own timing");
    TAP_EQ_STR(f.g.why[2], "gap before the response", "partial: a gap came before it");
    close_fix(&f);

    open_fix(&f);
    feed(&f, P2S_C2S, "GET /p1 HTTP/1.1\r\nHost: h\r\n\r\nGET /p2 HTTP/1.1\r\nHost: h\r\n\r\n", 0,
         10);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nCont", 0,
         20);
    p2s_h1_ops.gap(f.st, P2S_S2C, 50, 30); /* the rest of the head of /p2's response */
    feed(&f, P2S_C2S, "GET /p3 HTTP/1.1\r\nHost: h\r\n\r\n", 0, 40);
    feed(&f, P2S_S2C, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", 0, 50);
    TAP_EQ_INT(f.g.n, 2, "pipelining connection: two exchanges so far");
    TAP_EQ_STR(f.g.path[1], "/p2", "the response after the gap answers the oldest waiting");
    TAP_EQ_INT(f.g.s[1].status, 202, "its status");
    close_fix(&f);
}

static void test_header_cap(void)
{
    struct fix f;
    char big[3000];

    open_fix(&f);
    f.ctx.lim.max_header_bytes = 1024;
    p2s_h1_ops.close(f.st, 0);
    f.st = p2s_conn_switch(f.conn, &p2s_h1_ops); /* reopen with the smaller cap */
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /big HTTP/1.1\r\nX-Big: ", 26);
    memcpy(big + sizeof(big) - 5, "\r\n\r\n", 5);
    feed(&f, P2S_C2S, big, 500, 1);
    TAP_EQ_INT(f.errors, 1, "oversized header section reported");
    TAP_EQ_INT(f.last.code, SF_E_LIMIT, "as a limit");
    feed(&f, P2S_C2S, "GET /small HTTP/1.1\r\nHost: h\r\n\r\n", 0, 2);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 3);
    TAP_EQ_INT(f.g.n, 1, "the next request is parsed");
    TAP_EQ_STR(f.g.path[0], "/small", "after the skipped one");
    close_fix(&f);
}

static void test_contexts_and_orphan(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_S2C, "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", 0, 1);
    TAP_EQ_INT(f.g.n, 1, "response without request emitted");
    TAP_EQ_STR(f.g.why[0], "request not seen", "orphan response is partial with a reason");
    feed(&f, P2S_C2S,
         "GET /m HTTP/1.1\r\nhost: h\r\nX-B3-TraceId: 80f198ee56343ba8\r\n"
         "X-B3-SpanId: e457b5a2e4d86bd1\r\nx-b3-sampled: 1\r\n"
         "traceparent: 00-00000000000000000000000000000000-00f067aa0ba902b7-01\r\n\r\n",
         0, 2);
    feed(&f, P2S_S2C, "HTTP/1.1 200 OK\r\ntraceresponse: x\r\nContent-Length: 0\r\n\r\n", 0, 3);
    TAP_EQ_INT(f.g.n, 2, "second exchange");
    TAP_EQ_INT(f.g.nctx[1], 2, "both formats kept (b3 multi + traceparent)");
    TAP_EQ_INT(f.g.ctx_invalid[1], 1, "the all-zero traceparent is kept and flagged invalid");
    TAP_EQ_STR(f.g.trace[1], "000000000000000080f198ee56343ba8",
               "preferred: the valid one, 64-bit padded");
    close_fix(&f);
}

static void test_h2c_upgrade(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S,
         "GET /up HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n"
         "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
         0, 1);
    feed(&f, P2S_S2C,
         "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
         "\x00\x00\x00\x04\x00\x00\x00\x00\x00",
         0, 2);
    TAP_EQ_STR(p2s_conn_info(f.conn)->app_proto, "h2", "101 to Upgrade: h2c switches to HTTP/2");
    TAP_EQ_INT(f.g.n, 0, "the upgraded request is HTTP/2's stream 1, not an HTTP/1 span");
    close_fix(&f);
}

static void test_websocket_tunnel(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n", 0, 1);
    feed(&f, P2S_S2C, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello",
         0, 2);
    feed(&f, P2S_C2S, "\x81\x85garbage", 0, 3);
    TAP_EQ_INT(f.g.n, 1, "101 websocket: one span");
    TAP_EQ_INT(f.g.s[0].status, 101, "status 101");
    TAP_EQ_INT(f.errors, 0, "tunnelled bytes are not parsed as HTTP");
    close_fix(&f);
}

/* Regression (fuzz_h1): a malformed chunked request body left the parser pointing at an
 * exchange that the pipeline limit later freed. */
static void test_malformed_body_then_pipeline(void)
{
    struct fix f;

    open_fix(&f);
    feed(&f, P2S_C2S, "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, 1);
    TAP_EQ_INT(f.errors, 1, "bad chunk size reported");
    for (int i = 0; i < 70; i++)
        feed(&f, P2S_C2S, "GET /p HTTP/1.1\r\nHost: h\r\n\r\n", 0, 2 + i);
    TAP_OK(f.g.n >= 1, "pipeline limit gives up the oldest exchanges");
    TAP_EQ_STR(f.g.why[0], "malformed request", "the malformed one is partial with its reason");
    close_fix(&f);
    TAP_EQ_INT(f.g.total, 71, "every exchange emitted once by close");
}

int main(void)
{
    test_malformed_body_then_pipeline();
    test_simple_and_split();
    test_chunked_trailers();
    test_pipelining_interim_head();
    test_bare_lf(0);
    test_bare_lf(1);
    test_close_delimited_and_no_response();
    test_garbage_resync();
    test_gap_resync();
    test_gap_lost_response();
    test_header_cap();
    test_contexts_and_orphan();
    test_h2c_upgrade();
    test_websocket_tunnel();
    return tap_done();
}

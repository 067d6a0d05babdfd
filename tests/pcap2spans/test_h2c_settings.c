/* Unit tests: the HTTP2-Settings header of an h2c upgrade (RFC 7540 3.2.1) bounds what
 * the server sends after its 101, as an ACKed SETTINGS frame would (RFC 9113 6.5).
 *
 * Each case is one byte stream through the HTTP/1.1 parser: the upgrade request, then
 * the server's 101 with the HTTP/2 frames after it in the same segment (h1.c hands
 * them to the HTTP/2 parser it switches to).  The request is HTTP/2 stream 1.
 */
#include <stdlib.h>
#include <string.h>

#include "../../pcap2spans/p2s.h"
#include "h2_build.h"
#include "tap.h"

struct fix {
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    void *st;
    int spans, errors;
    struct p2s_span s; /* the first span (strings not kept) */
    char why[160];
    struct sf_err first;
};

static int hook(void *arg, struct p2s_conn *conn, const struct p2s_span *s)
{
    struct fix *f = arg;

    (void)conn;
    if (f->spans++ == 0) {
        f->s = *s;
        snprintf(f->why, sizeof(f->why), "%s", s->partial_reason ? s->partial_reason : "");
    }
    return 0;
}

static void open_fix(struct fix *f)
{
    memset(f, 0, sizeof(*f));
    p2s_ctx_init(&f->ctx);
    f->ctx.quiet = 1;
    f->ctx.span_hook = hook;
    f->ctx.span_hook_arg = f;
    f->conn = tcp_conn_new_detached(&f->ctx);
    f->st = p2s_conn_switch(f->conn, &p2s_h1_ops);
}

static void close_fix(struct fix *f)
{
    tcp_conn_free_detached(f->conn);
    p2s_ctx_free(&f->ctx);
}

static void feed(struct fix *f, enum p2s_dir dir, const void *p, size_t n, int64_t ts)
{
    struct sf_err err;

    sf_err_clear(&err);
    if (p2s_h1_ops.data(f->st, dir, p, n, ts, &err) < 0 && f->errors++ == 0)
        f->first = err;
}

/* ---- building the server's bytes ---------------------------------------------------- */

/* Literal with incremental indexing, literal name, a value of n copies of c. */
static void hp_inc_fill(struct bb *b, const char *name, int c, size_t n)
{
    put8(b, 0x40);
    hp_int(b, 0, 7, (uint32_t)strlen(name));
    put(b, name, strlen(name));
    hp_int(b, 0, 7, (uint32_t)n);
    memset(b->b + b->n, c, n);
    b->n += n;
}

#define NO_UPDATE UINT32_MAX

/* The server's answer on stream 1: 101, its SETTINGS, one HEADERS block and a DATA
 * frame of data_len bytes ending the stream.  The block starts with a table size
 * update to `update` (unless NO_UPDATE), then :status 200; with `big` it then inserts
 * two 3000-byte fields and refers to the older one (index 63), which only a table
 * over 6064 bytes still holds (RFC 7541 4.1: 32 + name + value each). */
static void server_bytes(struct bb *s, uint32_t update, int big, size_t data_len)
{
    static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                             "Upgrade: h2c\r\n\r\n";
    struct bb *h = calloc(1, sizeof(*h));
    uint8_t *data = calloc(1, data_len + 1);

    put(s, sw, sizeof(sw) - 1);
    frame(s, 4, 0, 0, NULL, 0);
    if (update != NO_UPDATE)
        hp_int(h, 0x20, 5, update);
    put8(h, 0x88); /* :status 200 */
    if (big) {
        hp_inc_fill(h, "x-a", 'a', 3000);
        hp_inc_fill(h, "x-b", 'b', 3000);
        put8(h, 0x80 | 63); /* x-a, inserted first */
    }
    frame(s, 1, 0x4, 1, h->b, h->n);
    frame(s, 0, 0x1, 1, data, data_len);
    free(h);
    free(data);
}

/* One upgrade: `settings` are the request's HTTP2-Settings lines (each ending in
 * CRLF, "" for none), then the server's bytes as above. */
static void run(struct fix *f, const char *settings, uint32_t update, int big, size_t data_len)
{
    char req[4096];
    struct bb *s = calloc(1, sizeof(*s));

    snprintf(req, sizeof(req),
             "GET /up HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n"
             "Upgrade: h2c\r\n%s\r\n",
             settings);
    open_fix(f);
    feed(f, P2S_C2S, req, strlen(req), 1);
    server_bytes(s, update, big, data_len);
    feed(f, P2S_S2C, s->b, s->n, 2);
    free(s);
}

/* The span of stream 1 was emitted when the response ended, complete. */
static int span_ok(const struct fix *f, int64_t resp_bytes)
{
    return f->spans == 1 && f->s.stream_id == 1 && f->s.status == 200 && !f->s.partial &&
           f->s.resp_bytes == resp_bytes && f->s.resp_end_ns == 2 && f->s.req_start_ns == 1;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_table_size(void)
{
    struct fix *f = malloc(sizeof(*f));

    run(f, "HTTP2-Settings: AAEAAQAA\r\n", 65536, 1, 2);
    TAP_OK(f->errors == 0, "HEADER_TABLE_SIZE 65536: the server's update to 65536 is allowed (%s)",
           f->first.msg);
    TAP_OK(span_ok(f, 2), "and its 6 KB of table entries resolve: complete span, :status 200 (%s)",
           f->why);
    TAP_EQ_INT(p2s_note_count(&f->ctx, "h2c_settings"), 0, "a valid value is no event");
    close_fix(f);

    /* The same without the server's size update: the table stays 4096, so x-a was
     * evicted by x-b and index 63 does not exist (the check above is not vacuous). */
    run(f, "HTTP2-Settings: AAEAAQAA\r\n", NO_UPDATE, 1, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "stream 1: HPACK") && f->spans == 1 &&
               f->s.partial,
           "without the update the reference to the evicted entry fails: %s", f->first.msg);
    close_fix(f);

    /* curl's value (no HEADER_TABLE_SIZE): the default 4096 holds. */
    run(f, "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n", 65536, 1, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "exceeds SETTINGS_HEADER_TABLE_SIZE 4096"),
           "no HEADER_TABLE_SIZE: an update to 65536 violates the default 4096: %s", f->first.msg);
    TAP_OK(f->spans == 1 && f->s.partial && f->s.status == 200, "the span is kept, partial (%s)",
           f->why);
    close_fix(f);

    run(f, "HTTP2-Settings: AAEAAAQA\r\n", 4096, 0, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "exceeds SETTINGS_HEADER_TABLE_SIZE 1024"),
           "HEADER_TABLE_SIZE 1024: an update to 4096 is flagged like any bound violation: %s",
           f->first.msg);
    close_fix(f);

    run(f, "HTTP2-Settings: AAEAAAQA\r\n", 1024, 0, 2);
    TAP_OK(f->errors == 0 && span_ok(f, 2),
           "HEADER_TABLE_SIZE 1024: a server that updates to 1024 decodes (%s)", f->first.msg);
    close_fix(f);

    run(f, "HTTP2-Settings: AAEAAAAA\r\n", NO_UPDATE, 0, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "no size update"),
           "HEADER_TABLE_SIZE 0: the first block must start with a size update: %s", f->first.msg);
    close_fix(f);

    run(f, "", 65536, 1, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "exceeds SETTINGS_HEADER_TABLE_SIZE 4096"),
           "no HTTP2-Settings at all: the defaults hold: %s", f->first.msg);
    TAP_EQ_INT(p2s_note_count(&f->ctx, "h2c_settings"), 0,
               "an absent header is no h2c_settings event");
    close_fix(f);
    free(f);
}

static void test_max_frame_size(void)
{
    struct fix *f = malloc(sizeof(*f));

    run(f, "HTTP2-Settings: AAUAAIAA\r\n", NO_UPDATE, 0, 20000);
    TAP_OK(f->errors == 0 && span_ok(f, 20000),
           "MAX_FRAME_SIZE 32768: a 20000-byte DATA frame is followed (%s)", f->first.msg);
    close_fix(f);

    run(f, "HTTP2-Settings: AAUA____\r\n", NO_UPDATE, 0, 20000);
    TAP_OK(f->errors == 0 && span_ok(f, 20000),
           "MAX_FRAME_SIZE 16777215 ('_' of base64url decoded) (%s)", f->first.msg);
    close_fix(f);

    run(f, "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n", NO_UPDATE, 0, 20000);
    TAP_OK(f->errors >= 1 && strstr(f->first.msg, "exceeds SETTINGS_MAX_FRAME_SIZE 16384"),
           "without it the default 16384 holds: %s", f->first.msg);
    close_fix(f);
    free(f);
}

/* A malformed value: one h2c_settings event, no error, the span as usual, and the
 * defaults stay (a server update to 65536 is a violation of 4096 again). */
static void check_malformed(const char *settings, const char *what)
{
    struct fix *f = malloc(sizeof(*f));

    run(f, settings, NO_UPDATE, 0, 2);
    TAP_OK(p2s_note_count(&f->ctx, "h2c_settings") == 1 && f->errors == 0,
           "%s: one h2c_settings event, no error (%s)", what, f->first.msg);
    TAP_OK(span_ok(f, 2), "%s: the span is complete (%s)", what, f->why);
    close_fix(f);
    run(f, settings, 65536, 1, 2);
    TAP_OK(f->errors == 1 && strstr(f->first.msg, "exceeds SETTINGS_HEADER_TABLE_SIZE 4096"),
           "%s: the defaults stay: %s", what, f->first.msg);
    close_fix(f);
    free(f);
}

static void test_malformed(void)
{
    char big[P2S_H2C_SETTINGS_MAX + 200];

    check_malformed("HTTP2-Settings: AAEA*QAA\r\n", "bad character");
    check_malformed("HTTP2-Settings: AAEA/QAA\r\n", "standard base64's '/'");
    check_malformed("HTTP2-Settings: AAEAAQA\r\n", "5-byte payload");
    check_malformed("HTTP2-Settings: AAEAAQAA\r\nHTTP2-Settings: AAEAAQAA\r\n",
                    "two HTTP2-Settings fields");
    /* 1032 characters: 129 HEADER_TABLE_SIZE 65536 settings, over the 1 KB bound */
    memcpy(big, "HTTP2-Settings: ", 16);
    for (int i = 0; i < 129; i++)
        memcpy(big + 16 + 8 * i, "AAEAAQAA", 8);
    memcpy(big + 16 + 8 * 129, "\r\n", 3);
    check_malformed(big, "a value over 1 KB");
}

static void test_frame_size_out_of_range(void)
{
    struct fix *f = malloc(sizeof(*f));

    /* HEADER_TABLE_SIZE 65536 and MAX_FRAME_SIZE 100 (below the 16384 minimum) */
    run(f, "HTTP2-Settings: AAEAAQAAAAUAAABk\r\n", 65536, 1, 2);
    TAP_EQ_INT(p2s_note_count(&f->ctx, "h2c_settings"), 1,
               "MAX_FRAME_SIZE 100: an h2c_settings event");
    TAP_OK(f->errors == 0 && span_ok(f, 2),
           "the table size beside it still applies, as in a SETTINGS frame (%s)", f->first.msg);
    close_fix(f);
    free(f);
}

static void test_case_and_split(void)
{
    struct fix *f = malloc(sizeof(*f));
    static const char req[] = "GET /up HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\n"
                              "http2-settings:   AAEAAQAA  \r\n\r\n";
    struct bb *s = calloc(1, sizeof(*s));

    /* the request split byte by byte (header held across segments), name in lower case,
     * value with spaces around */
    open_fix(f);
    for (size_t i = 0; i < sizeof(req) - 1; i++)
        feed(f, P2S_C2S, req + i, 1, 1);
    server_bytes(s, 65536, 1, 2);
    feed(f, P2S_S2C, s->b, s->n, 2);
    TAP_OK(f->errors == 0 && span_ok(f, 2) && p2s_note_count(&f->ctx, "h2c_settings") == 0,
           "a request split into 1-byte segments keeps its http2-settings (%s)", f->first.msg);
    close_fix(f);
    free(s);
    free(f);
}

int main(void)
{
    test_table_size();
    test_max_frame_size();
    test_malformed();
    test_frame_size_out_of_range();
    test_case_and_split();
    return tap_done();
}

/* fuzz_jsonrpc.c - libFuzzer target for lib/sf_jsonrpc and lib/sf_sse, the readers of
 * JSON-RPC traffic.
 *
 * The first byte picks where the input is split; the rest is read three ways: as one
 * JSON text (sf_jrpc_parse), and as an event stream fed whole and in two pieces at that
 * split, each event's data parsed as JSON-RPC.  Properties: no crash or overrun (the
 * sanitizers), an error's offset inside the text, every kept string NUL-terminated
 * within its bound, a message count that agrees with the handed-on count, and the same
 * events however the stream is split. */
#include <string.h>

#include "../fuzz.h"
#include "sf_jsonrpc.h"
#include "sf_sse.h"

struct seen {
    long n;
    uint64_t sum; /* of the events' types, lengths and bytes: equal for equal events */
};

static void on_msg(void *arg, const struct sf_jrpc_msg *m)
{
    const char *strs[] = {m->method,      m->id,         m->name,    m->error_msg,
                          m->traceparent, m->tracestate, m->baggage, m->model_hint};

    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        CHECK(memchr(strs[i], 0, SF_JRPC_STR) != NULL);
    CHECK(m->kind == SF_JRPC_REQUEST || m->kind == SF_JRPC_NOTIFICATION ||
          m->kind == SF_JRPC_RESPONSE);
    CHECK(m->kind != SF_JRPC_RESPONSE || m->method[0] == 0);
    ((struct seen *)arg)->n++;
}

static void parse(const char *p, size_t n)
{
    struct seen s = {0};
    struct sf_jrpc_err e = {0};
    long r = sf_jrpc_parse(p, n, on_msg, &s, &e);

    if (r >= 0)
        CHECK(r == s.n && r > 0);
    else
        CHECK(e.why != NULL && e.off <= n);
}

static void on_event(void *arg, const struct sf_sse_event *ev)
{
    struct seen *s = arg;

    CHECK(ev->len <= 4096 && (ev->len == 0 || ev->data != NULL));
    s->n++;
    s->sum = s->sum * 31 + strlen(ev->type) * 7 + ev->len + (uint64_t)ev->over;
    for (size_t i = 0; i < ev->len; i++)
        s->sum = s->sum * 131 + (unsigned char)ev->data[i];
    parse(ev->data, ev->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct seen whole = {0}, split = {0};
    struct sf_sse sse;
    size_t cut;

    if (size < 1 || size > (1u << 16))
        return 0;
    cut = data[0] % size;
    data++, size--;
    cut = cut > size ? size : cut;
    parse((const char *)data, size);
    sf_sse_init(&sse, 4096);
    sf_sse_feed(&sse, data, size, 1, on_event, &whole);
    sf_sse_free(&sse);
    sf_sse_init(&sse, 4096);
    sf_sse_feed(&sse, data, cut, 1, on_event, &split);
    sf_sse_feed(&sse, data + cut, size - cut, 2, on_event, &split);
    sf_sse_free(&sse);
    CHECK(whole.n == split.n && whole.sum == split.sum);
    return 0;
}

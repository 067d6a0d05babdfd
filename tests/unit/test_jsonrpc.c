/* test_jsonrpc.c - lib/sf_jsonrpc (JSON-RPC 2.0 messages from JSON text) and lib/sf_sse
 * (event streams read incrementally). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sf_jsonrpc.h"
#include "sf_sse.h"
#include "tap.h"

#define MAXM 8

struct got {
    struct sf_jrpc_msg m[MAXM];
    long n;
};

static void take(void *arg, const struct sf_jrpc_msg *m)
{
    struct got *g = arg;

    if (g->n < MAXM)
        g->m[g->n] = *m;
    g->n++;
}

static long parse(const char *s, struct got *g, struct sf_jrpc_err *e)
{
    memset(g, 0, sizeof(*g));
    e->why = NULL;
    e->off = 0;
    return sf_jrpc_parse(s, strlen(s), take, g, e);
}

static void test_kinds(void)
{
    struct got g;
    struct sf_jrpc_err e;

    TAP_EQ_INT(parse("{\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\","
                     "\"arguments\":{\"q\":[1,{\"a\":null}]},\"_meta\":{\"traceparent\":"
                     "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
                     "\"progressToken\":7}},\"jsonrpc\":\"2.0\",\"id\":0}",
                     &g, &e),
               1, "a request in the SDK's member order");
    TAP_OK(g.m[0].kind == SF_JRPC_REQUEST, "  is a request");
    TAP_EQ_STR(g.m[0].method, "tools/call", "  its method");
    TAP_EQ_STR(g.m[0].id, "0", "  its id as written");
    TAP_EQ_STR(g.m[0].name, "search_docs", "  params.name, not arguments' members");
    TAP_EQ_STR(g.m[0].traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
               "  params._meta.traceparent");
    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                     "\"params\":{\"progress\":1}}",
                     &g, &e),
               1, "a notification");
    TAP_OK(g.m[0].kind == SF_JRPC_NOTIFICATION && g.m[0].id[0] == 0, "  has no id");
    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\\"b\",\"error\":{\"code\":-32601,"
                     "\"message\":\"Method not found\",\"data\":{\"x\":[]}}}",
                     &g, &e),
               1, "an error response with a string id");
    TAP_OK(g.m[0].kind == SF_JRPC_RESPONSE && g.m[0].has_error, "  is an error response");
    TAP_EQ_INT(g.m[0].error_code, -32601, "  its code");
    TAP_EQ_STR(g.m[0].error_msg, "Method not found", "  its message");
    TAP_EQ_STR(g.m[0].id, "\"a\xc3\xa9\"b\"", "  a string id in quotes, decoded");
    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{\"content\":[],"
                     "\"isError\":true}}",
                     &g, &e),
               1, "a tool result with isError");
    TAP_OK(g.m[0].tool_error && !g.m[0].has_error && strcmp(g.m[0].id, "null") == 0,
           "  isError, not a JSON-RPC error; id null");
    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1.5e3,\"result\":{\"isError\":false}}", &g, &e),
               1, "a number id with a fraction and exponent");
    TAP_OK(!g.m[0].tool_error && strcmp(g.m[0].id, "1.5e3") == 0, "  kept as written");
}

static void test_sampling(void)
{
    struct got g;
    struct sf_jrpc_err e;

    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\","
                     "\"params\":{\"messages\":[{\"role\":\"user\"}],\"temperature\":0.7,"
                     "\"maxTokens\":100,\"stopSequences\":[\"\\n\",\"END\",\"x\"],"
                     "\"modelPreferences\":{\"hints\":[{\"name\":\"claude-3-sonnet\"},"
                     "{\"name\":\"gpt\"}],\"costPriority\":0.3}}}",
                     &g, &e),
               1, "sampling/createMessage");
    TAP_OK(fabs(g.m[0].temperature - 0.7) < 1e-12, "  temperature");
    TAP_EQ_INT(g.m[0].max_tokens, 100, "  maxTokens");
    TAP_EQ_INT(g.m[0].stop_sequences, 3, "  how many stopSequences");
    TAP_EQ_STR(g.m[0].model_hint, "claude-3-sonnet", "  the first model hint");
    TAP_OK(isnan(g.m[0].top_p), "  no topP: NaN");
    TAP_EQ_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\",\"params\":{\"top_p\":0.9,"
                     "\"max_tokens\":7.5}}",
                     &g, &e),
               1, "the OpenAI spellings");
    TAP_OK(fabs(g.m[0].top_p - 0.9) < 1e-12 && g.m[0].max_tokens == -1,
           "  top_p read; a max_tokens that is no integer is absent");
}

static void test_batch(void)
{
    struct got g;
    struct sf_jrpc_err e;
    size_t k = 100000, cap = k * 40 + 16, len = 0;
    char *big = malloc(cap);
    long got;

    TAP_EQ_INT(parse(" [ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"b\"} ]\r\n",
                     &g, &e),
               2, "a batch of two, whitespace around");
    TAP_OK(g.m[0].kind == SF_JRPC_REQUEST && g.m[1].kind == SF_JRPC_NOTIFICATION, "  in order");
    TAP_EQ_INT(parse("[]", &g, &e), -1, "an empty batch is an error");
    big[len++] = '[';
    for (size_t i = 0; i < k; i++)
        len += (size_t)snprintf(big + len, cap - len, "%s{\"jsonrpc\":\"2.0\",\"id\":%zu}",
                                i ? "," : "", i);
    big[len++] = ']';
    memset(&g, 0, sizeof(g));
    got = sf_jrpc_parse(big, len, take, &g, &e);
    /* responses without result: each message fails at its end, the first one stops it */
    TAP_EQ_INT(got, -1, "a batch of 100,000 bad responses stops at the first");
    TAP_EQ_INT(e.off, 1, "  at the first one's start");
    len = 0;
    big[len++] = '[';
    for (size_t i = 0; i < k; i++)
        len += (size_t)snprintf(big + len, cap - len,
                                "%s{\"jsonrpc\":\"2.0\",\"id\":%zu,"
                                "\"result\":0}",
                                i ? "," : "", i);
    big[len++] = ']';
    memset(&g, 0, sizeof(g));
    TAP_EQ_INT(sf_jrpc_parse(big, len, take, &g, &e), (long)k, "a batch of 100,000 responses");
    TAP_EQ_INT(g.n, (long)k, "  every one handed on");
    free(big);
}

/* A request whose params are k arrays one inside the other (k + 1 levels in all). */
static size_t deep_params(char *out, int k)
{
    size_t d = (size_t)sprintf(out, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":");

    for (int i = 0; i < k; i++)
        out[d++] = '[';
    for (int i = 0; i < k; i++)
        out[d++] = ']';
    out[d++] = '}';
    out[d] = 0;
    return d;
}

static void test_errors(void)
{
    static const char *const bad[][2] = {
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\",}", "trailing comma"},
        {"{\"jsonrpc\":\"2.0\",\"id\":01,\"result\":1}", "leading zero"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\"}", "duplicate method"},
        {"{\"jsonrpc\":\"1.0\",\"method\":\"a\"}", "version 1.0"},
        {"{\"method\":\"a\"}", "no jsonrpc member"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"\"}}",
         "result and error"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"x\"}}", "error without code"},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":1}", "an object id"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\x01\"}", "a control byte in a string"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\x28\"}", "invalid UTF-8"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"\\ud800x\"}", "a lone surrogate"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\"} x", "text after the message"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\"", "truncated"},
        {"\"just a string\"", "not an object"},
        {"", "nothing"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":1}", "params a number"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":tru}}", "a bad literal"},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":-}}", "a bad number"},
    };
    struct got g;
    struct sf_jrpc_err e;
    char deep[400];
    size_t d = 0;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long r = parse(bad[i][0], &g, &e);
        TAP_OK(r == -1 && e.why && e.off <= strlen(bad[i][0]), "rejected: %s (%s at %zu)",
               bad[i][1], e.why ? e.why : "-", e.off);
    }
    d = deep_params(deep, 64);
    TAP_EQ_INT(parse(deep, &g, &e), -1, "nesting past 64 levels is rejected");
    TAP_EQ_STR(e.why, "nested deeper than 64 levels", "  with the reason");
    d = deep_params(deep, 63);
    TAP_EQ_INT(parse(deep, &g, &e), 1, "64 levels in all are taken");
    (void)d;
}

static void test_huge(void)
{
    size_t n = 100u << 20;
    char *s = malloc(n + 128);
    struct got g;
    struct sf_jrpc_err e;
    clock_t t0;
    double secs;
    size_t len;

    len = (size_t)sprintf(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"");
    memset(s + len, 'x', n);
    len += n;
    len += (size_t)sprintf(s + len, "\"}}");
    memset(&g, 0, sizeof(g));
    t0 = clock();
    TAP_EQ_INT(sf_jrpc_parse(s, len, take, &g, &e), 1, "a 100 MB string");
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    TAP_EQ_INT(strlen(g.m[0].name), SF_JRPC_STR - 1, "  kept cut to 255 bytes");
    printf("# 100 MB string read in %.2f s of CPU\n", secs);
    free(s);
}

/* ---- SSE ------------------------------------------------------------------------------- */

struct evs {
    char text[4096];
    size_t len;
    int n;
};

static void ev(void *arg, const struct sf_sse_event *e)
{
    struct evs *v = arg;

    v->len += (size_t)snprintf(v->text + v->len, sizeof(v->text) - v->len, "[%s|%.*s|%d]", e->type,
                               (int)e->len, e->data ? e->data : "", e->over);
    v->n++;
}

static const char stream[] = ": comment\r\n"
                             "event: endpoint\r\n"
                             "data: /message?sessionId=abc\r\n"
                             "\r\n"
                             "id: 0820fe09\n"
                             "data: \n"
                             "\n"
                             "event: message\r"
                             "id: 1\r"
                             "data: {\"a\":\r"
                             "data:1}\r"
                             "retry: 10\r"
                             "\r"
                             "data\n"
                             "\n"
                             "bogus: x\n"
                             "\n"
                             "data: unfinished\n";

static void test_sse(void)
{
    struct evs whole = {0}, split;
    struct sf_sse s;
    size_t n = strlen(stream);
    int same = 1;

    sf_sse_init(&s, 1 << 20);
    sf_sse_feed(&s, (const uint8_t *)stream, n, 1, ev, &whole);
    TAP_EQ_STR(whole.text,
               "[endpoint|/message?sessionId=abc|0][message||0][message|{\"a\":\n1}|0]"
               "[message||0]",
               "SSE: types, data lines joined, CR / LF / CR LF, comments and unknown fields");
    TAP_OK(sf_sse_pending(&s), "  the unfinished last event is pending");
    sf_sse_free(&s);
    for (size_t cut = 1; cut < n; cut++) {
        memset(&split, 0, sizeof(split));
        sf_sse_init(&s, 1 << 20);
        sf_sse_feed(&s, (const uint8_t *)stream, cut, 1, ev, &split);
        sf_sse_feed(&s, (const uint8_t *)stream + cut, n - cut, 2, ev, &split);
        sf_sse_free(&s);
        same &= strcmp(split.text, whole.text) == 0;
    }
    TAP_OK(same, "  the same events wherever the stream is split");
    memset(&split, 0, sizeof(split));
    sf_sse_init(&s, 4);
    sf_sse_feed(&s, (const uint8_t *)"data: 123456\n\ndata: 12\n\n", 24, 1, ev, &split);
    sf_sse_free(&s);
    TAP_EQ_STR(split.text, "[message|1234|1][message|12|0]", "  an event past the limit is cut");
}

int main(void)
{
    test_kinds();
    test_sampling();
    test_batch();
    test_errors();
    test_huge();
    test_sse();
    return tap_done();
}

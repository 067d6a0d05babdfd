/* test_report.c - spanfold report's words: ISO 8601 times in UTC and in a zone, the HTML
 * escaper on hostile text, and the verdict built from a hand-made analysis (headline
 * inflection, the slow requests' top function, a sampling drift). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../spanfold/report.h"
#include "tap.h"

static void test_time(void)
{
    char b[64];
    /* 1795947681970000000 ns = 2026-11-29 10:21:21.970 UTC */
    TAP_EQ_STR(rp_time_text(b, sizeof(b), 1795947681970000000LL, NULL), "2026-11-29T10:21:21.970Z",
               "UTC with milliseconds");
    TAP_EQ_STR(rp_time_text(b, sizeof(b), 0, "UTC"), "1970-01-01T00:00:00.000Z", "the epoch");
    setenv("TZ", "Europe/Berlin", 1);
    tzset();
    TAP_EQ_STR(rp_time_text(b, sizeof(b), 1795947681970000000LL, "Europe/Berlin"),
               "2026-11-29T11:21:21.970+01:00", "Europe/Berlin in winter");
    /* 1783333333 s = 2026-07-06 10:22:13 UTC */
    TAP_EQ_STR(rp_time_text(b, sizeof(b), 1783333333000000000LL, "Europe/Berlin"),
               "2026-07-06T12:22:13.000+02:00", "Europe/Berlin in summer");
    setenv("TZ", "UTC", 1);
    tzset();
}

static void test_escape(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);

    rp_html_esc(m, "<script>alert('x')</script> & \"q\"\x01\xc3\xa9");
    fclose(m);
    TAP_EQ_STR(text,
               "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
               "\xe2\x90\x81\xc3\xa9", /* U+2401, as lib/sf_text shows a control byte */
               "markup, quotes and control bytes escaped, UTF-8 kept");
    free(text);
}

static void test_verdict(void)
{
    struct rp_ctx *c = calloc(1, sizeof(*c));
    struct sf_win_group g[2];
    char v[1024];

    memset(g, 0, sizeof(g));
    snprintf(g[0].name, sizeof(g[0].name), "GET /api/search");
    snprintf(g[1].name, sizeof(g[1].name), "GET /api/checkout");
    c->sw.g = g;
    c->sw.ng = 2;
    c->sw.nspans = 862;
    /* a small p95 rise and a large p50 rise: the p50 one is the headline */
    c->cps[0] = (struct rp_cp){.group = 1,
                               .metric = SF_M_P95,
                               .kind = CP_STEP,
                               .time_ns = 1795947670000000000LL,
                               .before = 40,
                               .after = 50};
    c->cps[1] = (struct rp_cp){.group = 0,
                               .metric = SF_M_P50,
                               .kind = CP_STEP,
                               .time_ns = 1795947681970000000LL,
                               .before = 19.2,
                               .after = 122.4};
    c->ncps = 2;
    struct rp_slow sl = {.group = 0, .ntop = 1};
    snprintf(sl.top[0].name, sizeof(sl.top[0].name), "slow_regex_backtrack");
    sl.top[0].share = 0.684;
    c->slows = &sl;
    c->nslows = 1;
    struct rp_drift d = {.group = 1,
                         .from_rate = 0.52,
                         .to_rate = 0.13,
                         .time_ns = 1795947695413000000LL,
                         .direction = -1};
    c->drifts = &d;
    c->ndrifts = 1;
    TAP_EQ_INT(rp_headline(c), 1, "the p50 step is the headline");
    rp_verdict(c, v, sizeof(v));
    TAP_EQ_STR(v,
               "GET /api/search p50 rose 19 \xe2\x86\x92 122 ms at 10:21:21 UTC; 68 % of "
               "the slow requests' CPU is slow_regex_backtrack; the kept share of GET "
               "/api/checkout traces fell 0.52 \xe2\x86\x92 0.13 at 10:21:35 UTC",
               "the verdict in words");

    /* a spike is not a regression; a rise under 20 % is not a headline */
    c->cps[1].kind = CP_SPIKE;
    c->cps[0].after = 45;
    c->ndrifts = 0;
    TAP_EQ_INT(rp_headline(c), -1, "no headline from a spike or a small rise");
    rp_verdict(c, v, sizeof(v));
    TAP_EQ_STR(v, "no latency inflection in 862 spans over 0 s; no sampling drift",
               "the calm verdict");

    /* the verdict is cut, never overrun, in a small buffer */
    char small[24];
    memset(small, 'x', sizeof(small));
    rp_verdict(c, small, 16);
    TAP_OK(strlen(small) == 15 && small[16] == 'x', "a 16-byte buffer holds 15 bytes and a NUL");
    free(c);
}

int main(void)
{
    test_time();
    test_escape();
    test_verdict();
    return tap_done();
}

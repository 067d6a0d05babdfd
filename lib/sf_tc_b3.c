/* sf_tc_b3.c - openzipkin/b3-propagation: the single b3 header and the X-B3-* headers.
 *
 * b3-single (b3)   trace-span[-sampling[-parent]]; trace 16 or 32 (16: left-    1/0/d(debug);
 *                  pad, trace_id_64); "0", "1", "d" alone = sampling only        absent -1
 * b3-multi         X-B3-TraceId/-SpanId/-ParentSpanId as b3; first value wins;   Sampled 1/0/
 *                  empty or "-" invalid; Sampled/Flags alone = sampling only     true/false;
 *                                                                                Flags 1 debug
 */
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

/* ---- b3 single ------------------------------------------------------------------------- */

/* Sampling state of b3 single: "1", "0" or "d". */
static int b3_sampling(struct sf_tracectx *c, const char *s, size_t n)
{
    if (n == 1 && (s[0] == '0' || s[0] == '1')) {
        c->sampled = s[0] - '0';
        return 0;
    }
    if (n == 1 && s[0] == 'd') {
        c->sampled = c->debug = 1;
        return 0;
    }
    return sf_tc_fail(c, "b3: sampling state '%.*s' is not 0, 1 or d", (int)(n > 20 ? 20 : n), s);
}

/* Store B3 trace id (16 or 32 lowercase hex, already checked) normalised to 32. */
static void put_trace_id_b3(struct sf_tracectx *c, const char *s, size_t n)
{
    sf_tc_put_id_lower(c->trace_id, 32, s, n);
    c->trace_id_64 = n == 16;
}

/* The parser; fast 0 skips sf_tc_b3_usual (the differential test's general path). */
__attribute__((always_inline)) static inline int b3_parse(struct sf_tracectx *c, const char *v,
                                                          size_t n, int fast)
{
    const char *f[4];
    size_t fl[4];
    int nf;

    sf_tc_start(c, SF_CTX_B3_SINGLE, &v, &n);
    if (n == 0)
        return sf_tc_fail(c, "b3: empty value");
    if (fast && sf_tc_b3_usual(c, v, n))
        return 0;
    nf = sf_tc_split(v, n, '-', f, fl, 4);
    if (nf == 1) {
        if (n > 1 && sf_hex_is_lower(v, n))
            return sf_tc_fail(c, "b3: span id missing");
        return b3_sampling(c, v, n); /* sampling-only form: "0", "1" or "d" */
    }
    if (nf > 4)
        return sf_tc_fail(c, "b3: %d '-'-separated fields, at most 4", nf);
    if (sf_tc_check_id(c, "b3: trace id", f[0], fl[0], 32, 16, 0) < 0 ||
        sf_tc_check_id(c, "b3: span id", f[1], fl[1], 16, 0, 0) < 0)
        return -1;
    if (nf >= 3 && b3_sampling(c, f[2], fl[2]) < 0)
        return -1;
    if (nf == 4 && sf_tc_check_id(c, "b3: parent span id", f[3], fl[3], 16, 0, 0) < 0)
        return -1;
    put_trace_id_b3(c, f[0], fl[0]);
    sf_tc_put_id_lower(c->span_id, 16, f[1], fl[1]);
    if (nf == 4)
        sf_tc_put_id_lower(c->parent_id, 16, f[3], fl[3]);
    return 0;
}

int sf_tracectx_parse_b3_single(struct sf_tracectx *c, const char *v, size_t n)
{
    return b3_parse(c, v, n, 1);
}

int sf_tc_b3_single_general(struct sf_tracectx *c, const char *v, size_t n)
{
    return b3_parse(c, v, n, 0);
}

/* ---- b3 multi --------------------------------------------------------------------------- */

void sf_tc_add_b3_multi(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    sf_tc_keep_first(s->p.b3, s->p.b3_len, &s->p.b3_seen, h - SF_TC_H_B3_TRACEID, v, n);
}

void sf_tc_finish_b3(struct sf_tracectx *c, struct sf_tracectx_pending *p)
{
    static const char *const what[3] = {"b3: X-B3-TraceId", "b3: X-B3-SpanId",
                                        "b3: X-B3-ParentSpanId"};
    const char *smp = p->b3[3];
    unsigned seen = p->b3_seen;

    sf_tc_begin(c, SF_CTX_B3_MULTI);
    sf_tc_raw_multi(c, SF_TC_H_B3_TRACEID, 5, p->b3, p->b3_len, seen);
    for (int i = 0; i < 5; i++)
        if ((seen & (1u << i)) &&
            sf_tc_pending_ok(c, "b3", SF_TC_H_B3_TRACEID + i, p->b3[i], p->b3_len[i]))
            return;
    if (seen & 8) {
        if (SF_TC_EQ_LIT(smp, p->b3_len[3], "1") || SF_TC_EQ_LIT(smp, p->b3_len[3], "true"))
            c->sampled = 1;
        else if (SF_TC_EQ_LIT(smp, p->b3_len[3], "0") || SF_TC_EQ_LIT(smp, p->b3_len[3], "false"))
            c->sampled = 0;
        else
            return (void)sf_tc_fail(c, "b3: X-B3-Sampled '%s' is not 1 or 0", smp);
    }
    if (seen & 16) {
        if (strcmp(p->b3[4], "1") == 0)
            c->sampled = c->debug = 1; /* debug implies accept */
        else if (strcmp(p->b3[4], "0") != 0)
            return (void)sf_tc_fail(c, "b3: X-B3-Flags '%s' is not 1 or 0", p->b3[4]);
    }
    if (!(seen & 3)) {
        if (!(seen & 24))
            sf_tc_fail(c, "b3: X-B3-TraceId and X-B3-SpanId missing");
        return; /* sampling-only form */
    }
    if (!(seen & 1) || !(seen & 2))
        return (void)sf_tc_fail(c, "b3: %s missing", seen & 1 ? "X-B3-SpanId" : "X-B3-TraceId");
    for (int i = 0; i < 3; i++) {
        if (!(seen & (1u << i)))
            continue;
        if (sf_tc_check_id(c, what[i], p->b3[i], p->b3_len[i], 16, i == 0 ? 32 : 0, 0) < 0)
            return;
    }
    put_trace_id_b3(c, p->b3[0], p->b3_len[0]);
    sf_tc_put_id_lower(c->span_id, 16, p->b3[1], p->b3_len[1]);
    if (seen & 4)
        sf_tc_put_id_lower(c->parent_id, 16, p->b3[2], p->b3_len[2]);
}

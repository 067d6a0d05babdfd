/* sf_tc_xray.c - AWS X-Ray's X-Amzn-Trace-Id header.
 *
 * x-amzn-trace-id  Root=1-<8 hex>-<24 hex> -> the 32 hex (strict); Parent ->      sampled:
 *                  span; Self, Lineage, unknown keys only in raw                  Sampled 1/0;
 *                                                                                 ? -> -1
 */
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

/* Root=1-<8 hex epoch>-<24 hex>: strict (it becomes the trace id). */
static int xray_root(struct sf_tracectx *c, const char *s, size_t n)
{
    int nz;

    if (n != 35 || s[0] != '1' || s[1] != '-' || s[10] != '-' || !sf_tc_lower_hex8(s + 2, 8, &nz) ||
        !sf_tc_lower_hex8(s + 11, 24, &nz))
        return sf_tc_fail(c, "x-amzn-trace-id: Root '%.*s' is not 1-<8 hex>-<24 hex>",
                          (int)(n > 40 ? 40 : n), s);
    memcpy(c->trace_id, s + 2, 8);
    memcpy(c->trace_id + 8, s + 11, 24);
    c->trace_id[32] = 0;
    if (sf_hex_is_zero(c->trace_id, 32))
        return sf_tc_fail(c, "x-amzn-trace-id: Root trace id is all zeros");
    return 0;
}

int sf_tracectx_parse_xray(struct sf_tracectx *c, const char *v, size_t n)
{
    size_t pos = 0;
    int have_root = 0, have_parent = 0, have_sampled = 0;

    SF_TC_EMPTY_IF_NULL(v, n);
    sf_tc_begin(c, SF_CTX_XRAY);
    sf_tc_raw_append(c, v, n);
    while (pos < n) {
        const char *m = v + pos, *eq;
        const char *semi = memchr(m, ';', n - pos);
        size_t ml = semi != NULL ? (size_t)(semi - m) : n - pos, kl;
        pos += ml + 1;
        sf_tc_trim_ows(&m, &ml);
        if (ml == 0)
            continue;
        eq = memchr(m, '=', ml);
        if (eq == NULL)
            return sf_tc_fail(c, "x-amzn-trace-id: field '%.*s' has no '='",
                              (int)(ml > 40 ? 40 : ml), m);
        kl = (size_t)(eq - m);
        /* First occurrence wins; Self, Lineage and unknown keys are kept only in raw. */
        if (SF_TC_EQ_LIT(m, kl, "root") && !have_root++) {
            if (xray_root(c, eq + 1, ml - kl - 1) < 0)
                return -1;
        } else if (SF_TC_EQ_LIT(m, kl, "parent") && !have_parent++) {
            if (sf_tc_check_id(c, "x-amzn-trace-id: Parent", eq + 1, ml - kl - 1, 16, 0, 0) < 0)
                return -1;
            memcpy(c->span_id, eq + 1, 16);
            c->span_id[16] = 0;
        } else if (SF_TC_EQ_LIT(m, kl, "sampled") && !have_sampled++) {
            size_t sl = ml - kl - 1;
            if (sl != 1 || (eq[1] != '0' && eq[1] != '1' && eq[1] != '?'))
                return sf_tc_fail(c, "x-amzn-trace-id: Sampled '%.*s' is not 0, 1 or ?",
                                  (int)(sl > 20 ? 20 : sl), eq + 1);
            c->sampled = eq[1] == '?' ? -1 : eq[1] - '0';
        }
    }
    if (!have_root)
        return sf_tc_fail(c, "x-amzn-trace-id: no Root field");
    return 0;
}

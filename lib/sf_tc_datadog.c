/* sf_tc_datadog.c - Datadog's x-datadog-* headers (dd-trace-*).
 *
 * datadog          x-datadog-trace-id/-parent-id decimal u64 -> 16 hex; upper    sampled:
 *                  64 trace bits from x-datadog-tags _dd.p.tid, else padded      priority > 0
 */
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

static int dd_id(struct sf_tracectx *c, const char *what, const char *s, size_t n, uint64_t *id)
{
    if (sf_tc_dec_u64(s, n, id) < 0)
        return sf_tc_fail(c, "datadog: %s '%.*s' is not a decimal uint64", what,
                          (int)(n > 24 ? 24 : n), s);
    if (*id == 0)
        return sf_tc_fail(c, "datadog: %s is 0", what);
    return 0;
}

/* x-datadog-tags: pick _dd.p.tid out of the ','-separated key=value list. */
static void add_dd_tags(struct sf_tracectx_pending *p, const char *v, size_t n)
{
    size_t pos = 0, ml;
    const char *m;

    if (p->dd_tid_seen)
        return;
    while (sf_tc_ts_member(v, n, &pos, &m, &ml)) {
        if (ml >= 10 && memcmp(m, "_dd.p.tid=", 10) == 0) {
            p->dd_tid_seen = 1;
            p->dd_tid_len = ml - 10;
            memcpy(p->dd_tid, m + 10, ml - 10 > 47 ? 47 : ml - 10);
            p->dd_tid[ml - 10 > 47 ? 47 : ml - 10] = 0;
            return;
        }
    }
}

void sf_tc_add_datadog(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    if (h == SF_TC_H_DD_TAGS)
        add_dd_tags(&s->p, v, n);
    sf_tc_keep_first(s->p.dd, s->p.dd_len, &s->p.dd_seen, h - SF_TC_H_DD_TRACE, v, n);
}

void sf_tc_finish_datadog(struct sf_tracectx *c, struct sf_tracectx_pending *p)
{
    uint64_t tid, pid, prio = 0;
    const char *pr = p->dd[2];
    size_t prl = p->dd_len[2];
    unsigned seen = p->dd_seen;

    sf_tc_begin(c, SF_CTX_DATADOG);
    sf_tc_raw_multi(c, SF_TC_H_DD_TRACE, 4, p->dd, p->dd_len, seen);
    if (!(seen & 1) || !(seen & 2))
        return (void)sf_tc_fail(c, "datadog: %s missing",
                                seen & 1 ? "x-datadog-parent-id" : "x-datadog-trace-id");
    for (int i = 0; i < 3; i++)
        if ((seen & (1u << i)) &&
            sf_tc_pending_ok(c, "datadog", SF_TC_H_DD_TRACE + i, p->dd[i], p->dd_len[i]))
            return;
    if (dd_id(c, "x-datadog-trace-id", p->dd[0], p->dd_len[0], &tid) < 0 ||
        dd_id(c, "x-datadog-parent-id", p->dd[1], p->dd_len[1], &pid) < 0)
        return;
    if (seen & 4) {
        int neg = pr[0] == '-';
        if (prl - (size_t)neg > 9 || sf_tc_dec_u64(pr + neg, prl - (size_t)neg, &prio) < 0)
            return (void)sf_tc_fail(
                c, "datadog: x-datadog-sampling-priority '%s' is not an integer", pr);
        c->sampled = !neg && prio > 0; /* -1 USER_REJECT, 0 AUTO_REJECT, 1 AUTO_KEEP, 2 USER_KEEP */
    }
    if (p->dd_tid_seen && p->dd_tid_len == 16 && sf_hex_is_lower(p->dd_tid, 16)) {
        memcpy(c->trace_id, p->dd_tid, 16);
    } else {
        memcpy(c->trace_id, "0000000000000000", 16); /* a fixed-size move, not a call */
        c->trace_id_64 = 1;
        if (p->dd_tid_seen)
            sf_tc_warn(c, "datadog: _dd.p.tid '%s' ignored: not 16 lowercase hex digits",
                       p->dd_tid);
    }
    sf_hex_u64_encode(c->trace_id + 16, tid);
    sf_hex_u64_encode(c->span_id, pid);
}

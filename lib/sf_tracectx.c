/* sf_tracectx.c - trace context in request headers: the header set, over every format.
 *
 * References: W3C Trace Context (REC + test suite, STRICT_LEVEL=2), W3C Baggage,
 * openzipkin/b3-propagation, OpenCensus BinaryEncoding (grpc-trace-bin), Jaeger
 * client-libraries "Propagation Format", AWS X-Ray header, Datadog dd-trace-*,
 * SkyWalking Cross Process Propagation Headers Protocol v3.
 *
 * The formats and the headers they read are listed once, in sf_tc_formats.h; each family
 * has its own file (sf_tc_w3c.c, sf_tc_b3.c, sf_tc_grpc.c, sf_tc_jaeger.c, sf_tc_xray.c,
 * sf_tc_datadog.c, sf_tc_baggage.c, sf_tc_sw8.c), whose head comment gives its row of the
 * format table: ids -> normalised (trace 32, span/parent 16 lowercase hex), and sampled.
 * This file matches header names (the matcher generated from that list, sf_tc_match.h), hands each
 * value to its format's add handler through the table built from that list, and completes the
 * multi-header formats at finish.
 *
 * Common rules: header names ASCII-case-insensitive; SP/HTAB around values are OWS;
 * all-zero ids invalid; an invalid context keeps its raw value, gets valid=0, empty
 * ids and a reason "<format>: <why>".  Over-long values are measured, never copied
 * beyond their fixed buffers.
 */
#include "sf_tracectx.h"

#include <string.h>

#include "sf_tc_fast.h"
#include "sf_tc_int.h"
#include "sf_tc_match.h"
#include "sf_text.h"

const struct sf_tc_format sf_tc_formats[SF_CTX_NFORMATS] = {
#define FORMAT_(id, name, rank, parse) [SF_CTX_##id] = {name, rank, parse},
    SF_CTX_FORMATS(FORMAT_)
#undef FORMAT_
};

const struct sf_tc_header sf_tc_headers[SF_TC_H_COUNT] = {
#define HDR_(id, lower, shown, fmt, add)                                                           \
    [SF_TC_H_##id] = {lower, shown, sizeof(lower) - 1, SF_CTX_##fmt, add},
    SF_CTX_HEADERS(HDR_)
#undef HDR_
};

const char *sf_tracectx_format_name(enum sf_ctx_format f)
{
    return (unsigned)f < SF_CTX_NFORMATS ? sf_tc_formats[f].name : "unknown";
}

/* Which header this is, or -1: generated from the list (sf_tc_match.h). */
SF_TC_DEFINE_MATCHER(header_id, SF_CTX_HEADERS)

int sf_tracectx_header_id(const char *name, size_t nlen)
{
    return name ? header_id(name, nlen) : -1;
}

void sf_tracectx_set_init(struct sf_tracectx_set *s)
{
    /* Only counters: the big buffers are written before they are read. */
    s->n = s->dropped = 0;
    s->kept_len = 0;
    s->kept_dropped = 0;
    s->p.b3_seen = s->p.dd_seen = 0;
    s->p.dd_tid_seen = 0;
    s->p.tp_idx = s->p.bg_idx = -1;
    s->p.tp_count = s->p.bg_members = 0;
    s->p.bg_bytes = 0;
    s->p.ts[0] = 0;
    s->p.ts_len = 0;
    s->p.ts_count = s->p.ts_members = s->p.ts_truncated = s->p.ts_bad = 0;
    s->p.ts_why[0] = 0;
    s->p.finished = 0;
}

struct sf_tracectx *sf_tc_new_ctx(struct sf_tracectx_set *s)
{
    if (s->n >= SF_CTX_MAX) {
        s->dropped++;
        return NULL;
    }
    return &s->ctx[s->n++];
}

/* Keep the first value of a multi-header format's header (first value wins). */
void sf_tc_keep_first(char (*vals)[48], size_t *lens, unsigned char *seen, int i, const char *v,
                      size_t n)
{
    if (*seen & (1u << i))
        return;
    *seen |= (unsigned char)(1u << i);
    sf_tc_trim_ows(&v, &n);
    lens[i] = n;
    if (n > 47)
        n = 47;
    sf_tc_copy_small(vals[i], v, n);
    vals[i][n] = 0;
}

void sf_tc_add_single(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    struct sf_tracectx *c = sf_tc_new_ctx(s);

    if (c != NULL)
        sf_tc_formats[sf_tc_headers[h].format].parse(c, v, n);
}

void sf_tracectx_set_add(struct sf_tracectx_set *s, const char *name, size_t nlen,
                         const uint8_t *value, size_t vlen)
{
    sf_tracectx_set_add_id(s, sf_tracectx_header_id(name, nlen), value, vlen);
}

void sf_tracectx_set_add_id(struct sf_tracectx_set *s, int h, const uint8_t *value, size_t vlen)
{
    const char *v = (const char *)value;

    if (h < 0 || h >= SF_TC_H_COUNT || s->p.finished)
        return;
    if (value == NULL) {
        v = "";
        vlen = 0;
    }
    sf_tc_headers[h].add(s, h, v, vlen);
}

void sf_tracectx_set_keep(struct sf_tracectx_set *s, const char *name, size_t nlen,
                          const uint8_t *value, size_t vlen)
{
    size_t nl = sf_text_utf8_cut(name, nlen, 63), vl;
    char *d;

    if (value == NULL)
        vlen = 0;
    vl = sf_text_utf8_cut((const char *)value, vlen, 128);
    if (nl == 0 || s->kept_len + nl + vl + 2 > sizeof(s->kept)) {
        s->kept_dropped++;
        return;
    }
    d = sf_text_copy_plain(s->kept + s->kept_len, name, nl, 1);
    *d++ = 0;
    d = sf_text_copy_plain(d, (const char *)value, vl, 0);
    *d++ = 0;
    s->kept_len = (size_t)(d - s->kept);
}

int sf_tracectx_kept_next(const struct sf_tracectx_set *s, size_t *pos, const char **name,
                          const char **value)
{
    if (*pos >= s->kept_len)
        return 0;
    *name = s->kept + *pos;
    *value = *name + strlen(*name) + 1;
    *pos = (size_t)(*value - s->kept) + strlen(*value) + 1;
    return 1;
}

/* raw of a multi-header format: "Name: value; Name: value" in canonical order. */
void sf_tc_raw_multi(struct sf_tracectx *c, int first_hdr, int count, char (*vals)[48],
                     const size_t *lens, unsigned seen)
{
    /* written in place (raw is empty after sf_tc_begin): the same bytes as appending piece
     * by piece, as names are printable and the whole always fits */
    char *buf = c->raw;
    size_t len = 0, vl, nl;

    for (int i = 0; i < count; i++) {
        if (!(seen & (1u << i)))
            continue;
        nl = sf_tc_headers[first_hdr + i].len;
        if (len + 2 + nl + 2 + 47 > SF_CTX_RAW_MAX - 1)
            break; /* cannot happen: at most 5 x (27-byte name + 47-byte value + 4) */
        if (len) {
            memcpy(buf + len, "; ", 2);
            len += 2;
        }
        sf_tc_copy_small(buf + len, sf_tc_headers[first_hdr + i].shown, nl);
        len += nl;
        memcpy(buf + len, ": ", 2);
        len += 2;
        vl = sf_tc_san_copy_str(buf + len, vals[i], lens[i] < 47 ? lens[i] : 47);
        len += vl;
        if (lens[i] > 47)
            c->raw_truncated = 1;
    }
    buf[len] = 0;
}

/* A kept multi-header value must be present, non-empty, not '-' and short enough. */
int sf_tc_pending_ok(struct sf_tracectx *c, const char *fmt, int hdr, const char *val, size_t len)
{
    if (len == 0)
        return sf_tc_fail(c, "%s: %s is empty", fmt, sf_tc_headers[hdr].shown);
    if (len == 1 && val[0] == '-')
        return sf_tc_fail(c, "%s: %s is '-'", fmt, sf_tc_headers[hdr].shown);
    if (len > 47)
        return sf_tc_fail(c, "%s: %s has %zu characters", fmt, sf_tc_headers[hdr].shown, len);
    return 0;
}

int sf_tracectx_set_finish(struct sf_tracectx_set *s)
{
    struct sf_tracectx_pending *p = &s->p;
    struct sf_tracectx *c;

    if (p->finished)
        return s->n;
    p->finished = 1;
    sf_tc_finish_tracestate(s);
    if (p->b3_seen && (c = sf_tc_new_ctx(s)) != NULL)
        sf_tc_finish_b3(c, p);
    if (p->dd_seen && (c = sf_tc_new_ctx(s)) != NULL)
        sf_tc_finish_datadog(c, p);
    return s->n;
}

int sf_tracectx_set_preferred(const struct sf_tracectx_set *s)
{
    /* rank from sf_tc_formats.h (1 first; 0: never picked).  One pass: the lowest rank,
     * then the lowest index. */
    unsigned best_rank = SF_CTX_NFORMATS + 1;
    int best = -1;

    for (int i = 0; i < s->n; i++) {
        const struct sf_tracectx *c = &s->ctx[i];
        unsigned r = (unsigned)c->format < SF_CTX_NFORMATS ? sf_tc_formats[c->format].rank : 0;
        if (r != 0 && r < best_rank && c->valid && c->span_id[0]) {
            if (r == 1)
                return i; /* nothing ranks higher */
            best = i;
            best_rank = r;
        }
    }
    return best;
}

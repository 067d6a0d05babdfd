/* sf_tc_w3c.c - W3C Trace Context: traceparent and tracestate (REC + test suite,
 * STRICT_LEVEL=2).
 *
 * traceparent      version-trace-parent-flags, lowercase only; parent-id ->      sampled:
 *                  span_id; 00: exactly 55 chars; 01..fe: more after '-' ok;     flags & 0x01
 *                  ff invalid; 2 headers invalid; tracestate combined (<= 32
 *                  members, Level 2 keys), dropped whole on any bad member
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

#define TS_MAX_MEMBERS 32
#define TS_BIG         128 /* members longer than this are cut first */

/* ---- traceparent ------------------------------------------------------------------------ */

/* The parser; fast 0 skips sf_tc_tp_usual (the differential test's general path). */
__attribute__((always_inline)) static inline int tp_parse(struct sf_tracectx *c, const char *v,
                                                          size_t n, int fast)
{
    static const char *const what[4] = {"traceparent: version", "traceparent: trace-id",
                                        "traceparent: parent-id", "traceparent: trace-flags"};
    static const size_t width[4] = {2, 32, 16, 2};
    const char *f[4];
    size_t fl[4], i = 0;

    sf_tc_start(c, SF_CTX_TRACEPARENT, &v, &n);
    if (n == 0)
        return sf_tc_fail(c, "traceparent: empty value");
    /* Four '-'-separated fields; a higher version may add more after a further '-'. */
    if (fast && sf_tc_tp_usual(v, n)) { /* 2-32-16-2 lowercase hex, ids not zero: checked already */
        f[0] = v, f[1] = v + 3, f[2] = v + 36, f[3] = v + 53;
        i = 55;
        goto checked;
    }
    for (int k = 0; k < 4; k++) {
        size_t start = i;
        while (i < n && v[i] != '-')
            i++;
        f[k] = v + start;
        fl[k] = i - start;
        if (k < 3 && i >= n)
            return sf_tc_fail(c, "%s missing", what[k + 1]);
        if (k < 3)
            i++;
    }
    for (int k = 0; k < 4; k++) {
        /* version and flags may be 00; the ids may not */
        int opts = k == 0 || k == 3 ? SF_TC_ID_ZERO_OK : 0;
        if (sf_tc_check_id(c, what[k], f[k], fl[k], width[k], 0, opts) < 0)
            return -1;
    }
checked:
    if (f[0][0] == 'f' && f[0][1] == 'f')
        return sf_tc_fail(c, "traceparent: version ff is invalid");
    if (f[0][0] == '0' && f[0][1] == '0' && i < n)
        return sf_tc_fail(c, "traceparent: version 00 allows nothing after trace-flags");
    memcpy(c->trace_id, f[1], 32);
    c->trace_id[32] = 0;
    memcpy(c->span_id, f[2], 16);
    c->span_id[16] = 0;
    c->flags = sf_hex_digit(f[3][0]) << 4 | sf_hex_digit(f[3][1]);
    c->sampled = c->flags & 0x01;
    return 0;
}

int sf_tracectx_parse_traceparent(struct sf_tracectx *c, const char *v, size_t n)
{
    return tp_parse(c, v, n, 1);
}

int sf_tc_traceparent_general(struct sf_tracectx *c, const char *v, size_t n)
{
    return tp_parse(c, v, n, 0);
}

/* ---- tracestate ------------------------------------------------------------------------- */

int sf_tc_ts_member(const char *v, size_t n, size_t *pos, const char **m, size_t *ml)
{
    while (*pos < n) {
        size_t start = *pos, end;
        while (*pos < n && v[*pos] != ',')
            (*pos)++;
        end = *pos;
        if (*pos < n)
            (*pos)++; /* the ',' */
        *m = v + start;
        *ml = end - start;
        sf_tc_trim_ows(m, ml);
        if (*ml > 0)
            return 1;
    }
    return 0;
}

static int ts_key_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
           c == '/' || c == '@';
}

/* Check one member "key=value" (Level 2 key grammar, as the test suite applies it).
 * Returns the offset of '=' or -1 with why filled. */
static long ts_check_member(const char *m, size_t ml, char *why, size_t whysz)
{
    const char *eq = memchr(m, '=', ml);
    size_t kl, vl;
    char ch[8];

    if (eq == NULL) {
        snprintf(why, whysz, "member '%.*s' has no '='", (int)(ml > 40 ? 40 : ml), m);
        return -1;
    }
    kl = (size_t)(eq - m);
    vl = ml - kl - 1;
    if (kl == 0 || kl > SF_TC_TS_KEY_MAX) {
        snprintf(why, whysz, "key has %zu characters, need 1 to %d", kl, SF_TC_TS_KEY_MAX);
        return -1;
    }
    for (size_t i = 0; i < kl; i++) {
        int c = (unsigned char)m[i];
        if (ts_key_char(c) && (i > 0 || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            continue;
        sf_tc_show_char(ch, sizeof(ch), c);
        snprintf(why, whysz, "key '%.*s' has illegal character %s", (int)(kl > 40 ? 40 : kl), m,
                 ch);
        return -1;
    }
    if (vl == 0 || vl > SF_TC_TS_VAL_MAX) {
        snprintf(why, whysz, "value of '%.*s' has %zu characters, need 1 to %d",
                 (int)(kl > 40 ? 40 : kl), m, vl, SF_TC_TS_VAL_MAX);
        return -1;
    }
    for (size_t i = kl + 1; i < ml; i++) {
        int c = (unsigned char)m[i];
        if (c >= 0x20 && c <= 0x7e && c != ',' && c != '=')
            continue;
        sf_tc_show_char(ch, sizeof(ch), c);
        snprintf(why, whysz, "value of '%.*s' has illegal character %s", (int)(kl > 40 ? 40 : kl),
                 m, ch);
        return -1;
    }
    return (long)kl;
}

/* Remove the members longer than 128 characters from a kept "k=v,k=v" list: when a
 * tracestate must be cut, W3C drops those first, then whole members from the right. */
static void ts_drop_big(char *out, size_t *outlen)
{
    size_t r = 0, w = 0;

    while (r < *outlen) {
        size_t e = r;
        while (e < *outlen && out[e] != ',')
            e++;
        if (e - r <= TS_BIG) {
            if (w > 0)
                out[w++] = ',';
            memmove(out + w, out + r, e - r);
            w += e - r;
        }
        r = e + 1;
    }
    *outlen = w;
    out[w] = 0;
}

static int ts_fits(size_t outlen, size_t ml, size_t outsz)
{
    return outlen + (outlen > 0) + ml + 1 <= outsz;
}

/* Check the members of one tracestate field, adding them to *members (limit over all
 * fields) and, when out is given, appending them as "k=v" joined by ',' while they fit.
 * *trunc: 0 nothing dropped, 1 some dropped, 2 full (the rest is dropped too).
 * Returns 0, or -1 with why. */
int sf_tc_ts_scan(const char *v, size_t n, int *members, char *why, size_t whysz, char *out,
                  size_t outsz, size_t *outlen, int *trunc, int fast)
{
    size_t pos = 0, ml;
    const char *m;

    while (pos < n) { /* (ts_member finds nothing at the end either) */
        if (!fast || !sf_tc_ts_next_valid(v, n, &pos, &m, &ml)) {
            if (!sf_tc_ts_member(v, n, &pos, &m, &ml))
                break;
            if (ts_check_member(m, ml, why, whysz) < 0)
                return -1;
        }
        if (++*members > TS_MAX_MEMBERS) {
            snprintf(why, whysz, "more than %d members", TS_MAX_MEMBERS);
            return -1;
        }
        if (out == NULL || *trunc == 2)
            continue;
        if (!ts_fits(*outlen, ml, outsz)) {
            *trunc = 1;
            if (ml > TS_BIG)
                continue; /* a long member is the first to go */
            ts_drop_big(out, outlen);
            if (!ts_fits(*outlen, ml, outsz)) {
                *trunc = 2; /* then whole members from the right */
                continue;
            }
        }
        if (*outlen > 0)
            out[(*outlen)++] = ',';
        if (ml <= 48)
            sf_tc_copy_small(out + *outlen, m, ml);
        else
            memcpy(out + *outlen, m, ml);
        *outlen += ml;
        out[*outlen] = 0;
    }
    return 0;
}

int sf_tracectx_check_tracestate(const char *v, size_t n, char *why, size_t whysz)
{
    int members = 0;
    char tmp[SF_CTX_ERR_MAX];

    SF_TC_EMPTY_IF_NULL(v, n);
    if (why == NULL || whysz == 0) {
        why = tmp;
        whysz = sizeof(tmp);
    }
    why[0] = 0;
    return sf_tc_ts_scan(v, n, &members, why, whysz, NULL, 0, NULL, NULL, 1);
}

int sf_tracectx_tracestate_next(const char *v, size_t n, size_t *pos, const char **key,
                                size_t *klen, const char **val, size_t *vlen)
{
    const char *m, *eq;
    size_t ml;

    while (sf_tc_ts_member(v, n, pos, &m, &ml)) {
        eq = memchr(m, '=', ml);
        if (eq == NULL)
            continue; /* not a checked value; skip rather than fail */
        *key = m;
        *klen = (size_t)(eq - m);
        *val = eq + 1;
        *vlen = ml - *klen - 1;
        return 1;
    }
    return 0;
}

/* ---- the header set ------------------------------------------------------------------ */

/* A second traceparent makes the context invalid (W3C: restart the trace). */
void sf_tc_add_traceparent(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    struct sf_tracectx *c;
    char first[SF_CTX_RAW_MAX];

    (void)h;
    if (++s->p.tp_count == 1) {
        c = sf_tc_new_ctx(s);
        if (c != NULL) {
            s->p.tp_idx = (int)(c - s->ctx);
            tp_parse(c, v, n, 1);
        }
        return;
    }
    if (s->p.tp_idx < 0)
        return;
    c = &s->ctx[s->p.tp_idx];
    if (s->p.tp_count == 2) {
        /* raw becomes "traceparent: v1; traceparent: v2" */
        memcpy(first, c->raw, sizeof(first));
        c->raw[0] = 0;
        sf_tc_raw_append(c, "traceparent: ", 13);
        sf_tc_raw_append(c, first, strlen(first));
    }
    sf_tc_raw_append(c, "; traceparent: ", 15);
    sf_tc_raw_append(c, v, n);
    sf_tc_fail(c, "traceparent: %d traceparent headers, need exactly 1", s->p.tp_count);
}

void sf_tc_add_tracestate(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    struct sf_tracectx_pending *p = &s->p;

    (void)h;
    p->ts_count++;
    /* Not parsed once the traceparent is known to be invalid (it will be ignored). */
    if (p->tp_count > 1 || (p->tp_idx >= 0 && !s->ctx[p->tp_idx].valid))
        return;
    if (!p->ts_bad && sf_tc_ts_scan(v, n, &p->ts_members, p->ts_why, sizeof(p->ts_why), p->ts,
                                    sizeof(p->ts), &p->ts_len, &p->ts_truncated, 1) < 0)
        p->ts_bad = 1;
}

/* The combined tracestate goes to the one valid traceparent. */
void sf_tc_finish_tracestate(struct sf_tracectx_set *s)
{
    struct sf_tracectx_pending *p = &s->p;
    struct sf_tracectx *c;

    /* tracestate only when the one traceparent is valid; its failure never invalidates it */
    if (p->tp_idx >= 0 && s->ctx[p->tp_idx].valid && p->ts_count > 0) {
        c = &s->ctx[p->tp_idx];
        if (p->ts_bad) {
            sf_tc_warn(c, "tracestate discarded: %s", p->ts_why);
        } else {
            if (p->ts_len < 48)
                sf_tc_copy_small(c->tracestate, p->ts, p->ts_len + 1);
            else
                memcpy(c->tracestate, p->ts, p->ts_len + 1);
            c->tracestate_truncated = p->ts_truncated != 0;
            if (p->ts_truncated)
                sf_tc_warn(c,
                           "tracestate truncated to %zu bytes: members dropped (over %d "
                           "characters first, then from the right)",
                           p->ts_len, TS_BIG);
        }
    }
}

/* ---- OpenTelemetry's sampling threshold in tracestate ("ot=th:HEX") ---- */

static int ot_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

double sf_tracectx_ot_rate(const char *ts)
{
    const char *p = ts;

    /* members are "key=value" separated by ',' (optional spaces) */
    while (p && *p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (strncmp(p, "ot=", 3) == 0) {
            const char *v = p + 3;
            while (*v && *v != ',') {
                if (strncmp(v, "th:", 3) == 0) {
                    uint64_t t = 0;
                    int len = 0, h;
                    v += 3;
                    while (len < 15 && (h = ot_hexval((unsigned char)*v)) >= 0) {
                        t = t << 4 | (uint64_t)h;
                        len++;
                        v++;
                    }
                    if (len == 0 || len > 14 || (*v && *v != ';' && *v != ','))
                        return NAN;
                    t <<= 4 * (14 - len);
                    return (double)((1ULL << 56) - t) / (double)(1ULL << 56);
                }
                while (*v && *v != ';' && *v != ',')
                    v++;
                if (*v == ';')
                    v++;
            }
            return NAN;
        }
        p = strchr(p, ',');
    }
    return NAN;
}

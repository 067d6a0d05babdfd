/* sf_tc_baggage.c - W3C Baggage.
 *
 * baggage          no ids; W3C baggage grammar (<= 180 members; over 64           sampled: -1
 *                  members or 8192 bytes is a note); all headers one context
 */
#include <stdio.h>
#include <string.h>

#include "sf_tc_int.h"

#define BAGGAGE_GRAMMAR_MAX       180
#define BAGGAGE_PROPAGATE_MEMBERS 64
#define BAGGAGE_PROPAGATE_BYTES   8192

static int tchar(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int baggage_octet(int c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x2b) || (c >= 0x2d && c <= 0x3a) ||
           (c >= 0x3c && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
}

/* key OWS ["=" OWS value] in s[0..n) (already OWS-trimmed); need_value for list members. */
static int baggage_kv(const char *s, size_t n, int need_value, char *why, size_t whysz)
{
    size_t k = 0, i;
    char ch[8];

    while (k < n && tchar((unsigned char)s[k]))
        k++;
    if (k == 0) {
        snprintf(why, whysz, "empty key in '%.*s'", (int)(n > 40 ? 40 : n), s);
        return -1;
    }
    for (i = k; i < n && sf_tc_is_ows((unsigned char)s[i]); i++)
        ;
    if (i == n && !need_value)
        return 0;
    if (i == n || s[i] != '=') {
        if (i < n) {
            sf_tc_show_char(ch, sizeof(ch), (unsigned char)s[i]);
            snprintf(why, whysz, "key '%.*s' followed by %s", (int)(k > 40 ? 40 : k), s, ch);
        } else {
            snprintf(why, whysz, "key '%.*s' has no '='", (int)(k > 40 ? 40 : k), s);
        }
        return -1;
    }
    for (i++; i < n && sf_tc_is_ows((unsigned char)s[i]); i++)
        ;
    for (; i < n; i++) {
        int c = (unsigned char)s[i];
        /* '%' is a baggage-octet: a stray one is the sender's fault, not a grammar error
         * (w3c/baggage's reference parser accepts it too) */
        if (baggage_octet(c))
            continue;
        sf_tc_show_char(ch, sizeof(ch), c);
        snprintf(why, whysz, "value of '%.*s' has %s, which must be percent-encoded",
                 (int)(k > 40 ? 40 : k), s, ch);
        return -1;
    }
    return 0;
}

/* Check one baggage field, adding its members to *members.  0 or -1 with why. */
static int baggage_scan(const char *v, size_t n, int *members, char *why, size_t whysz)
{
    const char *f = v;

    for (size_t pos = 0; pos <= n; pos++) {
        if (pos < n && v[pos] != ',')
            continue;
        const char *m = f;
        size_t ml = (size_t)(v + pos - f);
        f = v + pos + 1;
        sf_tc_trim_ows(&m, &ml);
        if (ml == 0) {
            snprintf(why, whysz, "empty list member");
            return -1;
        }
        if (++*members > BAGGAGE_GRAMMAR_MAX) {
            snprintf(why, whysz, "more than %d list members", BAGGAGE_GRAMMAR_MAX);
            return -1;
        }
        /* member ; property ; property ... (values never contain ';' or ',') */
        int first = 1;
        const char *p = m;
        for (size_t j = 0; j <= ml; j++) {
            if (j < ml && m[j] != ';')
                continue;
            const char *q = p;
            size_t ql = (size_t)(m + j - p);
            p = m + j + 1;
            sf_tc_trim_ows(&q, &ql);
            if (baggage_kv(q, ql, first, why, whysz) < 0)
                return -1;
            first = 0;
        }
    }
    return 0;
}

/* Check one more baggage field of context c; the limits count over all fields. */
static int baggage_field(struct sf_tracectx *c, const char *v, size_t n, int *members,
                         size_t *bytes)
{
    char why[96];

    *bytes += n;
    if (baggage_scan(v, n, members, why, sizeof(why)) < 0)
        return sf_tc_fail(c, "baggage: %s", why);
    if (*members > BAGGAGE_PROPAGATE_MEMBERS || *bytes > BAGGAGE_PROPAGATE_BYTES)
        sf_tc_warn(c, "baggage: over the propagation limit (%d members, %zu bytes)", *members,
                   *bytes);
    return 0;
}

int sf_tracectx_parse_baggage(struct sf_tracectx *c, const char *v, size_t n)
{
    int members = 0;
    size_t bytes = 0;

    SF_TC_EMPTY_IF_NULL(v, n);
    sf_tc_begin(c, SF_CTX_BAGGAGE);
    sf_tc_raw_append(c, v, n);
    return baggage_field(c, v, n, &members, &bytes);
}

void sf_tc_add_baggage(struct sf_tracectx_set *s, int h, const char *v, size_t n)
{
    struct sf_tracectx *c;

    (void)h;
    if (s->p.bg_idx < 0) {
        c = sf_tc_new_ctx(s);
        if (c == NULL)
            return;
        s->p.bg_idx = (int)(c - s->ctx);
        sf_tc_begin(c, SF_CTX_BAGGAGE);
        sf_tc_raw_append(c, v, n);
    } else {
        c = &s->ctx[s->p.bg_idx];
        sf_tc_raw_append(c, ",", 1); /* RFC 9110 §5.3 field combination */
        sf_tc_raw_append(c, v, n);
    }
    if (c->valid)
        baggage_field(c, v, n, &s->p.bg_members, &s->p.bg_bytes);
}

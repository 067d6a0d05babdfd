/* sf_tc_common.c - what every trace-context format uses: failing and warning a context, its
 * raw text, id checks and field splits. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

void sf_tc_show_char(char *out, size_t outsz, int c)
{
    if (c > 0x20 && c < 0x7f && c != '\'')
        snprintf(out, outsz, "'%c'", c);
    else
        snprintf(out, outsz, "0x%02x", (unsigned)c & 0xff);
}

int sf_tc_fail(struct sf_tracectx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    c->valid = 0;
    c->trace_id[0] = c->span_id[0] = c->parent_id[0] = 0;
    c->trace_id_64 = 0;
    c->sampled = c->flags = -1;
    c->debug = 0;
    return -1;
}

void sf_tc_warn(struct sf_tracectx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
}

void sf_tc_raw_append(struct sf_tracectx *c, const char *s, size_t n)
{
    size_t len = c->raw[0] ? strlen(c->raw) : 0; /* most appends are the first */
    size_t room = sizeof(c->raw) - 1 - len, k = n < room ? n : room;
    char *d = c->raw + len;

    sf_tc_san_copy(d, s, k);
    d[k] = 0;
    if (k < n)
        c->raw_truncated = 1;
}

void sf_tc_raw_set_hex(struct sf_tracectx *c, const uint8_t *b, size_t n)
{
    size_t max = (sizeof(c->raw) - 1) / 2;

    if (n > max) {
        n = max;
        c->raw_truncated = 1;
    }
    sf_hex_encode(c->raw, b, n);
}

int sf_tc_check_id(struct sf_tracectx *c, const char *what, const char *s, size_t n, size_t w1,
                   size_t w2, int opts)
{
    /* 1: lowercase hex digit, 2: uppercase A-F, 0: anything else */
    static const unsigned char cls[256] = {
        ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
        ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
        ['A'] = 2, ['B'] = 2, ['C'] = 2, ['D'] = 2, ['E'] = 2, ['F'] = 2};
    unsigned ok = opts & SF_TC_ID_ANYCASE ? 3 : 1;
    int nonzero = 0;
    char ch[8];

    if (n == 0)
        return sf_tc_fail(c, "%s is empty", what);
    if (sf_tc_lower_hex8(s, n, &nonzero))
        goto checked; /* the common case: lowercase hex, 8 digits per step */
    for (size_t i = 0; i < n; i++) {
        int d = (unsigned char)s[i];
        nonzero |= d != '0';
        if (cls[d] & ok)
            continue;
        if (cls[d] == 2)
            return sf_tc_fail(c, "%s has uppercase hex digits", what);
        sf_tc_show_char(ch, sizeof(ch), d);
        return sf_tc_fail(c, "%s has illegal character %s at offset %zu", what, ch, i);
    }
checked:
    if (n != w1 && n != w2) {
        if (w2)
            return sf_tc_fail(c, "%s has %zu hex digits, need %zu or %zu", what, n, w1, w2);
        return sf_tc_fail(c, "%s has %zu hex digit%s, need %zu", what, n, n == 1 ? "" : "s", w1);
    }
    if (!(opts & SF_TC_ID_ZERO_OK) && !nonzero)
        return sf_tc_fail(c, "%s is all zeros", what);
    return 0;
}

int sf_tc_split(const char *s, size_t n, int sep, const char **f, size_t *fl, int max)
{
    int k = 0;
    size_t start = 0;

    for (;;) {
        const char *p = start < n ? memchr(s + start, sep, n - start) : NULL;
        size_t i = p != NULL ? (size_t)(p - s) : n; /* field k is s[start..i) */
        if (k < max) {
            f[k] = s + start;
            fl[k] = i - start;
        }
        k++;
        if (p == NULL)
            return k;
        start = i + 1;
    }
}

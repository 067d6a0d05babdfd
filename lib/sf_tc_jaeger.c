/* sf_tc_jaeger.c - Jaeger uber-trace-id (client-libraries "Propagation Format").
 *
 * uber-trace-id    trace:span:parent:flags; 1-32/1-16 hex of any case, left-      sampled:
 *                  padded; "%3A" as ':'; parent 0 -> ""; flags 1-2 hex digits    flags bit0;
 *                                                                                bit1 debug
 */
#include <string.h>

#include "sf_hex.h"
#include "sf_tc_int.h"
#include "sf_vec.h"

/* put_id_lower, lowercased: every byte | 0x20 ('0'-'9' and the padding have that bit). */
static inline void put_id(char *out, size_t width, const char *s, size_t n)
{
    sf_tc_put_id_lower(out, width, s, n);
    for (size_t i = 0; i < width; i += 8) {
        uint64_t w;
        memcpy(&w, out + i, 8);
        w |= SF_ONES * 0x20;
        memcpy(out + i, &w, 8);
    }
}

/* Split at ':' or its percent-encoded form "%3A" (seen from some clients). */
static int split_uber(const char *s, size_t n, const char **f, size_t *fl, int max)
{
    int k = 0;
    size_t start = 0, i = 0;

    if (memchr(s, '%', n) == NULL)
        return sf_tc_split(s, n, ':', f, fl, max);
    for (;;) {
        size_t sep = 0;
        if (i < n && s[i] == ':')
            sep = 1;
        else if (i + 2 < n && s[i] == '%' && s[i + 1] == '3' &&
                 sf_tc_lc((unsigned char)s[i + 2]) == 'a')
            sep = 3;
        if (i < n && sep == 0) {
            i++;
            continue;
        }
        if (k < max) {
            f[k] = s + start;
            fl[k] = i - start;
        }
        k++;
        if (i >= n)
            return k;
        i += sep;
        start = i;
    }
}

int sf_tracectx_parse_uber(struct sf_tracectx *c, const char *v, size_t n)
{
    const char *f[4];
    size_t fl[4];
    uint64_t flags;
    int nf;

    sf_tc_start(c, SF_CTX_UBER, &v, &n);
    if (n == 0)
        return sf_tc_fail(c, "uber-trace-id: empty value");
    nf = split_uber(v, n, f, fl, 4);
    if (nf != 4)
        return sf_tc_fail(c, "uber-trace-id: %d ':'-separated fields, need 4", nf);
    /* Receivers MUST accept shorter ids and left-pad them (Jaeger client-libraries). */
    if (sf_tc_check_id(c, "uber-trace-id: trace id", f[0], fl[0], fl[0] ? fl[0] : 1, 0,
                       SF_TC_ID_ANYCASE) < 0 ||
        sf_tc_check_id(c, "uber-trace-id: span id", f[1], fl[1], fl[1] ? fl[1] : 1, 0,
                       SF_TC_ID_ANYCASE) < 0 ||
        sf_tc_check_id(c, "uber-trace-id: parent span id", f[2], fl[2], fl[2] ? fl[2] : 1, 0,
                       SF_TC_ID_ANYCASE | SF_TC_ID_ZERO_OK) < 0)
        return -1;
    if (fl[0] > 32 || fl[1] > 16 || fl[2] > 16) {
        int k = fl[0] > 32 ? 0 : fl[1] > 16 ? 1 : 2;
        static const char *const what[3] = {"trace id", "span id", "parent span id"};
        return sf_tc_fail(c, "uber-trace-id: %s has %zu hex digits, at most %d", what[k], fl[k],
                          k ? 16 : 32);
    }
    if (fl[3] < 1 || fl[3] > 2 || sf_hex_u64(f[3], fl[3], &flags) < 0)
        return sf_tc_fail(c, "uber-trace-id: flags '%.*s' are not 1-2 hex digits",
                          (int)(fl[3] > 20 ? 20 : fl[3]), f[3]);
    put_id(c->trace_id, 32, f[0], fl[0]);
    c->trace_id_64 = fl[0] <= 16;
    put_id(c->span_id, 16, f[1], fl[1]);
    if (!sf_hex_is_zero(f[2], fl[2])) /* senders write 0 for "no parent" */
        put_id(c->parent_id, 16, f[2], fl[2]);
    c->flags = (int)flags;
    c->sampled = (int)(flags & 0x01);
    c->debug = (flags & 0x02) != 0;
    return 0;
}

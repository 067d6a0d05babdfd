/* sf_tc_fast.h - the SWAR fast paths of lib/sf_tracectx, beside the general paths.
 *
 * Every fast path here answers a question the general code answers too, only for the
 * usual inputs and many bytes at a time; on anything else it says "not mine" and the
 * general code decides.  tests/unit/test_tc_fast.c feeds both random inputs and requires
 * the same answers:
 *
 *   fast path                      general path it must agree with
 *   -----------------------------  ----------------------------------------------------------
 *   sf_tc_lower_hex8               sf_tc_lower_hex_ref (byte by byte)
 *   sf_tc_san_copy, _str           sf_tc_san_bytes, sf_tc_san_str_bytes (byte by byte)
 *   sf_tc_dec_u64 (8 digits/step)  sf_tc_dec_tail from the first digit
 *   sf_tc_name8_eq (header names)  sf_tc_eq_lit (sf_tc_int.h)
 *   sf_tc_tp_usual                 the field split of sf_tc_traceparent_general (sf_tc_w3c.c)
 *   sf_tc_b3_usual                 sf_tc_b3_single_general (sf_tc_b3.c)
 *   sf_tc_ts_next_valid            sf_tc_ts_scan(..., fast = 0) (sf_tc_w3c.c)
 *
 * All static inline: the callers are in other files, and a call would cost more than most
 * of these take.
 */
#ifndef SF_TC_FAST_H
#define SF_TC_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sf_tracectx.h"
#include "sf_vec.h"

#define SF_TC_TS_KEY_MAX 256 /* W3C tracestate key and value lengths */
#define SF_TC_TS_VAL_MAX 256

/* ---- printable copies (raw) ------------------------------------------------------------ */

/* Nonzero when one of the 8 bytes of x is below 0x20 or is 0x7f (exact as a yes/no). */
static inline uint64_t sf_tc_ctl8(uint64_t x)
{
    uint64_t y = x ^ (SF_ONES * 0x7f);

    return ((x - SF_ONES * 0x20) & ~x & SF_HIGHS) | sf_word_has_zero(y);
}

/* Index of the first lane set in m (one lane at least is set). */
static inline size_t sf_tc_first_lane(v16s m)
{
    uint64_t h[2];

    memcpy(h, &m, 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return h[0] ? (size_t)__builtin_clzll(h[0]) / 8 : 8 + (size_t)__builtin_clzll(h[1]) / 8;
#else
    return h[0] ? (size_t)__builtin_ctzll(h[0]) / 8 : 8 + (size_t)__builtin_ctzll(h[1]) / 8;
#endif
}

/* Zero when all 16 bytes are printable ASCII or SP (0x20-0x7e), so need no '?'; else the
 * caller takes the exact byte loop (HTAB and bytes >= 0x80 go that way too).  v + 1 in
 * signed lanes is below 0x21 exactly for 0x00-0x1f and 0x7f-0xff. */
static inline int sf_tc_ctl16(const char *s)
{
    v16u v;

    memcpy(&v, s, 16);
    return sf_vec_any((v16s)(v + 1) < 0x21); /* wraps in unsigned lanes, compared signed */
}

/* General: copy s[i..k) to d, control bytes (but HTAB) as '?'. */
static inline void sf_tc_san_bytes(char *d, const char *s, size_t i, size_t k)
{
    for (; i < k; i++) {
        unsigned char b = (unsigned char)s[i];
        d[i] = (b < 0x20 && b != '\t') || b == 0x7f ? '?' : (char)b;
    }
}

/* General: sf_tc_san_bytes up to a NUL; returns where it stopped. */
static inline size_t sf_tc_san_str_bytes(char *d, const char *s, size_t i, size_t k)
{
    for (; i < k && s[i]; i++) {
        unsigned char b = (unsigned char)s[i];
        d[i] = (b < 0x20 && b != '\t') || b == 0x7f ? '?' : (char)b;
    }
    return i;
}

/* Fast: sf_tc_san_bytes(d, s, 0, k), 16 or 8 bytes per step while there is no control
 * byte.  str: stop at a NUL (a control byte too) and return the length copied. */
static inline size_t sf_tc_san_copy_any(char *d, const char *s, size_t k, int str)
{
    size_t i = 0;

    if (k >= 16) {
        /* 16 bytes per step, the last step overlapping, while there is no control byte */
        for (; i + 16 <= k; i += 16) {
            if (sf_tc_ctl16(s + i))
                goto bytes;
            memcpy(d + i, s + i, 16);
        }
        if (i < k && !sf_tc_ctl16(s + k - 16)) {
            memcpy(d + k - 16, s + k - 16, 16);
            return k;
        }
    } else if (k >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + k - 8, 8);
        if (!sf_tc_ctl8(x) && !sf_tc_ctl8(y)) {
            memcpy(d, s, k);
            return k;
        }
    }
bytes:
    if (str)
        return sf_tc_san_str_bytes(d, s, i, k);
    sf_tc_san_bytes(d, s, i, k);
    return k;
}

static inline void sf_tc_san_copy(char *d, const char *s, size_t k)
{
    sf_tc_san_copy_any(d, s, k, 0);
}

/* sf_tc_san_copy of the string at s (at most k bytes, up to a NUL); returns its length. */
static inline size_t sf_tc_san_copy_str(char *d, const char *s, size_t k)
{
    return sf_tc_san_copy_any(d, s, k, 1);
}

/* ---- hex ids ------------------------------------------------------------------------------ */

/* General: 1 when s[0..n) is all lowercase hex digits; *nonzero gets 1 if one is not '0'. */
static inline int sf_tc_lower_hex_ref(const char *s, size_t n, int *nonzero)
{
    int nz = 0;

    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
        nz |= s[i] != '0';
    }
    *nonzero = nz;
    return 1;
}

/* Fast: 1 when s[0..n) is all lowercase hex digits and n is a multiple of 8 (else 0: the
 * caller checks byte by byte); *nonzero gets 1 if a digit is not '0'. */
static inline int sf_tc_lower_hex8(const char *s, size_t n, int *nonzero)
{
    uint64_t x, ge30, ge3a, ge61, ge67, ok, nz = 0;

    if (n % 16 == 0) { /* 16 and 32-digit ids: 16 bytes per step */
        v16s hex = ~(v16s){0}, nz16 = {0};

        for (size_t i = 0; i < n; i += 16) {
            v16u v;
            memcpy(&v, s + i, 16);
            /* added in unsigned lanes, compared signed: v + 0x50 is below -118 exactly for
             * '0'-'9' (0x80-0x89), v + 0x1f below -122 exactly for 'a'-'f' (0x80-0x85) */
            hex &= ((v16s)(v + 0x50) < -118) | ((v16s)(v + 0x1f) < -122);
            nz16 |= (v16s)(v != '0');
        }
        if (sf_vec_any(~hex))
            return 0;
        *nonzero = sf_vec_any(nz16);
        return 1;
    }
    if (n % 8)
        return 0;
    for (size_t i = 0; i < n; i += 8) {
        memcpy(&x, s + i, 8);
        if (x & SF_HIGHS)
            return 0;
        /* bytes < 0x80: adding (0x80 - k) sets a byte's high bit iff it is >= k */
        ge30 = x + SF_ONES * (0x80 - 0x30);
        ge3a = x + SF_ONES * (0x80 - 0x3a);
        ge61 = x + SF_ONES * (0x80 - 0x61);
        ge67 = x + SF_ONES * (0x80 - 0x67);
        ok = ((ge30 & ~ge3a) | (ge61 & ~ge67)) & SF_HIGHS;
        if (ok != SF_HIGHS)
            return 0;
        nz |= x ^ (SF_ONES * '0');
    }
    *nonzero = nz != 0;
    return 1;
}

static inline int sf_tc_lower_hex2(const char *s)
{
    return ((s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'f')) &&
           ((s[1] >= '0' && s[1] <= '9') || (s[1] >= 'a' && s[1] <= 'f'));
}

/* ---- decimal ids (Datadog, sw8) ---------------------------------------------------------- */

/* 8 bytes as a little-endian word: the first byte in the low 8 bits. */
static inline uint64_t sf_tc_load_le8(const char *s)
{
    uint64_t w;

    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* 1 when the 8 bytes of w are all '0'-'9'. */
static inline int sf_tc_digits8(uint64_t w)
{
    return (w & (SF_ONES * 0xf0)) == SF_ONES * 0x30 &&
           ((w + SF_ONES * 0x06) & (SF_ONES * 0xf0)) == SF_ONES * 0x30;
}

/* Value of 8 decimal digits (checked by sf_tc_digits8), the first in the low byte. */
static inline uint64_t sf_tc_parse8(uint64_t w)
{
    w -= SF_ONES * 0x30;
    w = w * 10 + (w >> 8); /* pairs: d0*10+d1 in each 16-bit lane's low byte */
    return ((w & UINT64_C(0x000000ff000000ff)) * (100 + (UINT64_C(1000000) << 32)) +
            ((w >> 16) & UINT64_C(0x000000ff000000ff)) * (1 + (UINT64_C(10000) << 32))) >>
           32;
}

/* General: the digits s[i..n) after the value x of s[0..i), one by one (n <= 20).  0 with
 * *out, or -1 (not a digit, or over UINT64_MAX). */
static inline int sf_tc_dec_tail(const char *s, size_t i, size_t n, uint64_t x, uint64_t *out)
{
    for (; i < n; i++) {
        unsigned d = (unsigned)((unsigned char)s[i] - '0');
        if (d > 9 || (i >= 19 && x > (UINT64_MAX - d) / 10)) /* 19 digits cannot overflow */
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

/* Fast: decimal uint64 (1..20 digits, no sign), up to 16 digits 8 at a time (below 10^16:
 * no overflow), the rest by sf_tc_dec_tail.  0 or -1. */
static inline int sf_tc_dec_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    size_t i = 0;

    if (n == 0 || n > 20)
        return -1;
    for (; i + 8 <= n && i < 16; i += 8) {
        uint64_t w = sf_tc_load_le8(s + i);
        if (!sf_tc_digits8(w))
            return -1;
        x = x * 100000000 + sf_tc_parse8(w);
    }
    return sf_tc_dec_tail(s, i, n, x, out);
}

/* ---- header names ---------------------------------------------------------------------- */

/* Fast: 8 bytes of a header name against 8 of a lowercase literal made of letters, digits
 * and '-': a letter matches either case (the mask has 0x20 where the literal has a
 * letter: bytes >= 'a'), anything else must be equal. */
static inline int sf_tc_name8_eq(const char *name, const char *lit)
{
    uint64_t x, l, m;

    memcpy(&x, name, 8);
    memcpy(&l, lit, 8);
    m = ((l + SF_ONES * 0x1f) & SF_HIGHS) >> 2;
    return (x | m) == l;
}

/* ---- traceparent ------------------------------------------------------------------------ */

/* Fast: 1 for a traceparent in the usual layout that passes every field check: version,
 * trace-id, parent-id and flags of 2, 32, 16 and 2 lowercase hex digits, the ids not all
 * zeros (then the field split and the id checks are the same, without their cost). */
static inline int sf_tc_tp_usual(const char *v, size_t n)
{
    int nz;

    return n >= 55 && v[2] == '-' && v[35] == '-' && v[52] == '-' && (n == 55 || v[55] == '-') &&
           sf_tc_lower_hex2(v) && sf_tc_lower_hex2(v + 53) && sf_tc_lower_hex8(v + 3, 32, &nz) &&
           nz && sf_tc_lower_hex8(v + 36, 16, &nz) && nz;
}

/* ---- tracestate -------------------------------------------------------------------------- */

/* Byte classes of a tracestate member: SF_TC_TS_K key character, SF_TC_TS_K0 first key
 * character (a-z 0-9), SF_TC_TS_V value character (0x20-0x7e but ',' and '='). */
enum { SF_TC_TS_K = 1, SF_TC_TS_K0 = 2, SF_TC_TS_V = 4 };
#define SF_TC_TS_KEYC(c)                                                                           \
    (((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') || (c) == '_' || (c) == '-' ||       \
     (c) == '*' || (c) == '/' || (c) == '@')
#define SF_TC_TS_CLS(c)                                                                            \
    ((SF_TC_TS_KEYC(c) ? SF_TC_TS_K : 0) |                                                         \
     ((((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9')) ? SF_TC_TS_K0 : 0) |              \
     ((c) >= 0x20 && (c) <= 0x7e && (c) != ',' && (c) != '=' ? SF_TC_TS_V : 0))
#define SF_TC_TS_CLS4(c)                                                                           \
    SF_TC_TS_CLS(c), SF_TC_TS_CLS(c + 1), SF_TC_TS_CLS(c + 2), SF_TC_TS_CLS(c + 3)
#define SF_TC_TS_CLS16(c)                                                                          \
    SF_TC_TS_CLS4(c), SF_TC_TS_CLS4(c + 4), SF_TC_TS_CLS4(c + 8), SF_TC_TS_CLS4(c + 12)
#define SF_TC_TS_CLS64(c)                                                                          \
    SF_TC_TS_CLS16(c), SF_TC_TS_CLS16(c + 16), SF_TC_TS_CLS16(c + 32), SF_TC_TS_CLS16(c + 48)
static const unsigned char sf_tc_ts_cls[256] = {SF_TC_TS_CLS64(0), SF_TC_TS_CLS64(64),
                                                SF_TC_TS_CLS64(128), SF_TC_TS_CLS64(192)};

/* Fast: the next member when it starts right at *pos and is valid (key '=' value, then ','
 * or the end; trailing spaces allowed): sets *m and *ml as sf_tc_ts_member would, moves
 * *pos past it the same way and returns 1.  Anything else (OWS or an empty member first, a
 * bad or odd member) returns 0 with *pos unchanged: the general member checker takes it
 * from there. */
static inline int sf_tc_ts_next_valid(const char *v, size_t n, size_t *pos, const char **m,
                                      size_t *ml)
{
    size_t s = *pos, k = s + 1, j, e;

    if (s >= n || !(sf_tc_ts_cls[(unsigned char)v[s]] & SF_TC_TS_K0))
        return 0;
    while (k < n && (sf_tc_ts_cls[(unsigned char)v[k]] & SF_TC_TS_K))
        k++;
    /* '=' is not a key character: when the key is clean the first '=' is here */
    if (k >= n || v[k] != '=' || k - s > SF_TC_TS_KEY_MAX)
        return 0;
    j = k + 1;
    if (n >= 16 && j < n) {
        /* the value in 16-byte blocks (the last one ending at n, lanes before j masked off):
         * up to the first byte that is no value character, or the end */
        static const v16s iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        for (;; j += 16) {
            size_t b = j + 16 <= n ? j : n - 16;
            v16u x;
            memcpy(&x, v + b, 16);
            v16s stop = ((v16s)(x + 1) < 0x21) | (v16s)(x == ',') | (v16s)(x == '=');
            stop &= iota >= (signed char)(j - b);
            if (sf_vec_any(stop)) {
                j = b + sf_tc_first_lane(stop);
                break;
            }
            if (b + 16 >= n) {
                j = n;
                break;
            }
        }
    }
    for (; j < n && (sf_tc_ts_cls[(unsigned char)v[j]] & SF_TC_TS_V); j++) /* short fields */
        ;
    if (j < n && v[j] != ',') /* HTAB or a byte no value may hold */
        return 0;
    for (e = j; e > k + 1 && v[e - 1] == ' '; e--)
        ;
    if (e - k - 1 == 0 || e - k - 1 > SF_TC_TS_VAL_MAX)
        return 0;
    *m = v + s;
    *ml = e - s;
    *pos = j < n ? j + 1 : n;
    return 1;
}

/* ---- b3 single -------------------------------------------------------------------------- */

/* Fast: the usual b3 shapes, trace-span[-s[-parent]] with lowercase hex ids that are not
 * all zeros and s one of 0, 1, d: fills *c as the general code would and returns 1; any
 * other value returns 0 with *c untouched (the separators found are then not the split's). */
static inline int sf_tc_b3_usual(struct sf_tracectx *c, const char *v, size_t n)
{
    size_t tl = n > 32 && v[32] == '-' ? 32 : n > 16 && v[16] == '-' ? 16 : 0;
    const char *sp = v + tl + 1, *par = NULL;
    size_t rest = n - tl - 1;
    int nz, smp = -1;

    if (tl == 0 || rest < 16)
        return 0;
    if (rest > 16) {
        if (rest != 18 && rest != 35)
            return 0;
        if (sp[16] != '-' || (sp[17] != '0' && sp[17] != '1' && sp[17] != 'd'))
            return 0;
        smp = sp[17];
        if (rest == 35) {
            if (sp[18] != '-' || !sf_tc_lower_hex8(sp + 19, 16, &nz) || !nz)
                return 0;
            par = sp + 19;
        }
    }
    if (!sf_tc_lower_hex8(v, tl, &nz) || !nz || !sf_tc_lower_hex8(sp, 16, &nz) || !nz)
        return 0;
    if (tl == 16) { /* fixed-size moves, no library call */
        memcpy(c->trace_id, "0000000000000000", 16);
        memcpy(c->trace_id + 16, v, 16);
    } else {
        memcpy(c->trace_id, v, 32);
    }
    c->trace_id[32] = 0;
    c->trace_id_64 = tl == 16;
    memcpy(c->span_id, sp, 16);
    c->span_id[16] = 0;
    if (par != NULL) {
        memcpy(c->parent_id, par, 16);
        c->parent_id[16] = 0;
    }
    if (smp == 'd')
        c->sampled = c->debug = 1;
    else if (smp >= 0)
        c->sampled = smp - '0';
    return 1;
}

#endif

/* sf_tracectx.c - trace context in request headers, every wire format.
 *
 * References: W3C Trace Context (REC + test suite, STRICT_LEVEL=2), W3C Baggage,
 * openzipkin/b3-propagation, OpenCensus BinaryEncoding (grpc-trace-bin), Jaeger
 * client-libraries "Propagation Format", AWS X-Ray header, Datadog dd-trace-*,
 * SkyWalking Cross Process Propagation Headers Protocol v3.
 *
 * format           ids -> normalised (trace 32, span/parent 16 lowercase hex)    sampled
 * ---------------  ------------------------------------------------------------  -------------
 * traceparent      version-trace-parent-flags, lowercase only; parent-id ->      flags & 0x01
 *                  span_id; 00: exactly 55 chars; 01..fe: more after '-' ok;
 *                  ff invalid; 2 headers invalid; tracestate combined (<= 32
 *                  members, Level 2 keys), dropped whole on any bad member
 * b3-single (b3)   trace-span[-sampling[-parent]]; trace 16 or 32 (16: left-    1/0/d(debug);
 *                  pad, trace_id_64); "0", "1", "d" alone = sampling only        absent -1
 * b3-multi         X-B3-TraceId/-SpanId/-ParentSpanId as b3; first value wins;   Sampled 1/0/
 *                  empty or "-" invalid; Sampled/Flags alone = sampling only     true/false;
 *                                                                                Flags 1 debug
 * grpc-trace-bin   00 | 00 trace(16) | 01 span(8) | 02 opts; base64 padded or     opts bit0;
 *                  not, ','-joined values = one context each; 0x00 + raw bytes   no opts: 0
 *                  ("true binary"); unknown field id ends decoding
 * uber-trace-id    trace:span:parent:flags; 1-32/1-16 hex of any case, left-      flags bit0;
 *                  padded; "%3A" as ':'; parent 0 -> ""; flags 1-2 hex digits    bit1 debug
 * x-amzn-trace-id  Root=1-<8 hex>-<24 hex> -> the 32 hex (strict); Parent ->      Sampled 1/0;
 *                  span; Self, Lineage, unknown keys only in raw                  ? -> -1
 * datadog          x-datadog-trace-id/-parent-id decimal u64 -> 16 hex; upper    priority > 0
 *                  64 trace bits from x-datadog-tags _dd.p.tid, else padded
 * baggage          no ids; W3C baggage grammar (<= 180 members; over 64           -1
 *                  members or 8192 bytes is a note); all headers one context
 * sw8              no ids (opaque base64); 8 fields, sample 0/1, int span id     sample field
 *
 * Common rules: header names ASCII-case-insensitive; SP/HTAB around values are OWS;
 * all-zero ids invalid; an invalid context keeps its raw value, gets valid=0, empty
 * ids and a reason "<format>: <why>".  Over-long values are measured, never copied
 * beyond their fixed buffers.
 */
#include "sf_tracectx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sf_base64.h"
#include "sf_err.h"
#include "sf_hex.h"
#include "sf_rd.h"
#include "sf_vec.h"

#define TS_MAX_MEMBERS            32
#define TS_KEY_MAX                256
#define TS_VAL_MAX                256
#define TS_BIG                    128 /* members longer than this are cut first */
#define BAGGAGE_GRAMMAR_MAX       180
#define BAGGAGE_PROPAGATE_MEMBERS 64
#define BAGGAGE_PROPAGATE_BYTES   8192
#define GRPC_B64_MAX              256 /* base64 characters of one grpc-trace-bin value we decode */

/* ---- small helpers ---------------------------------------------------------------- */

static int is_ows(int c)
{
    return c == ' ' || c == '\t';
}

static int lc(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static inline void trim_ows(const char **v, size_t *n)
{
    while (*n > 0 && is_ows((unsigned char)(*v)[0])) {
        (*v)++;
        (*n)--;
    }
    while (*n > 0 && is_ows((unsigned char)(*v)[*n - 1]))
        (*n)--;
}

/* memcpy for n <= 16 in at most two fixed-size moves (overlapping, within both ranges):
 * no library call for the short copies of the hot path. */
static inline void copy_small16(char *d, const char *s, size_t n)
{
    if (n == 16) {
        memcpy(d, s, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* The same for n <= 48, in at most three moves. */
static inline void copy_small(char *d, const char *s, size_t n)
{
    if (n > 16) {
        memcpy(d, s, 16);
        if (n > 32)
            memcpy(d + 16, s + 16, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else {
        copy_small16(d, s, n);
    }
}

/* Callers may pass NULL for an empty value; make it a real empty string. */
#define EMPTY_IF_NULL(v, n)                                                                        \
    do {                                                                                           \
        if ((v) == NULL) {                                                                         \
            (v) = "";                                                                              \
            (n) = 0;                                                                               \
        }                                                                                          \
    } while (0)

/* Case-insensitive compare of s[0..n) with a lowercase literal. */
static int eq_lit(const char *s, size_t n, const char *lit)
{
    size_t i;

    for (i = 0; i < n && lit[i]; i++)
        if (lc((unsigned char)s[i]) != lit[i])
            return 0;
    return i == n && lit[i] == 0;
}

/* eq_lit with a string literal: a length mismatch answers at once. */
#define EQ_LIT(s, n, lit) ((n) == sizeof(lit) - 1 && eq_lit(s, n, lit))

/* Printable form of one byte for error messages. */
static void show_char(char *out, size_t outsz, int c)
{
    if (c > 0x20 && c < 0x7f && c != '\'')
        snprintf(out, outsz, "'%c'", c);
    else
        snprintf(out, outsz, "0x%02x", (unsigned)c & 0xff);
}

static void ctx_begin(struct sf_tracectx *c, enum sf_ctx_format f)
{
    c->format = f;
    c->trace_id[0] = c->span_id[0] = c->parent_id[0] = 0;
    c->sampled = -1;
    c->debug = 0;
    c->flags = -1;
    c->trace_id_64 = 0;
    c->valid = 1;
    c->error[0] = c->raw[0] = c->tracestate[0] = 0;
    c->raw_truncated = c->tracestate_truncated = 0;
}

static void ctx_clear_ids(struct sf_tracectx *c)
{
    c->trace_id[0] = c->span_id[0] = c->parent_id[0] = 0;
    c->trace_id_64 = 0;
}

/* Mark *c invalid with a reason; ids are cleared so nothing joins on them. Returns -1. */
__attribute__((format(printf, 2, 3))) static int ctx_fail(struct sf_tracectx *c, const char *fmt,
                                                          ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    c->valid = 0;
    ctx_clear_ids(c);
    c->sampled = c->flags = -1;
    c->debug = 0;
    return -1;
}

/* A note on a context that stays valid (e.g. a discarded tracestate). */
__attribute__((format(printf, 2, 3))) static void ctx_warn(struct sf_tracectx *c, const char *fmt,
                                                           ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
}

/* Nonzero when one of the 8 bytes of x is below 0x20 or is 0x7f (exact as a yes/no). */
static inline uint64_t ctl8(uint64_t x)
{
    uint64_t y = x ^ (SF_ONES * 0x7f);

    return ((x - SF_ONES * 0x20) & ~x & SF_HIGHS) | sf_word_has_zero(y);
}

/* Index of the first lane set in m (one lane at least is set). */
static inline size_t first_lane(v16s m)
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
static inline int ctl16(const char *s)
{
    v16u v;

    memcpy(&v, s, 16);
    return sf_vec_any((v16s)(v + 1) < 0x21); /* wraps in unsigned lanes, compared signed */
}

/* Copy k bytes, control bytes (but HTAB) as '?': raw is always printable text. */
static void san_copy(char *d, const char *s, size_t k)
{
    size_t i = 0;
    uint64_t x;

    if (k >= 16) {
        /* 16 bytes per step, the last step overlapping, while there is no control byte */
        for (; i + 16 <= k; i += 16) {
            if (ctl16(s + i))
                goto bytes;
            memcpy(d + i, s + i, 16);
        }
        if (i < k && !ctl16(s + k - 16)) {
            memcpy(d + k - 16, s + k - 16, 16);
            return;
        }
    } else if (k >= 8) {
        memcpy(&x, s, 8);
        if (!ctl8(x)) {
            memcpy(&x, s + k - 8, 8);
            if (!ctl8(x)) {
                memcpy(d, s, k);
                return;
            }
        }
    }
bytes:
    for (; i < k; i++) {
        unsigned char b = (unsigned char)s[i];
        d[i] = (b < 0x20 && b != '\t') || b == 0x7f ? '?' : (char)b;
    }
}

/* san_copy of the string at s (at most k bytes, up to a NUL); returns its length. */
static size_t san_copy_str(char *d, const char *s, size_t k)
{
    size_t i = 0;

    if (k >= 16) {
        for (; i + 16 <= k; i += 16) {
            if (ctl16(s + i)) /* NUL is a control byte too */
                goto bytes;
            memcpy(d + i, s + i, 16);
        }
        if (i < k && !ctl16(s + k - 16)) {
            memcpy(d + k - 16, s + k - 16, 16);
            return k;
        }
    } else if (k >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + k - 8, 8);
        if (!ctl8(x) && !ctl8(y)) {
            memcpy(d, s, k);
            return k;
        }
    }
bytes:
    for (; i < k && s[i]; i++) {
        unsigned char b = (unsigned char)s[i];
        d[i] = (b < 0x20 && b != '\t') || b == 0x7f ? '?' : (char)b;
    }
    return i;
}

/* Append text to raw; control bytes become '?' so raw is always printable text. */
static void raw_append(struct sf_tracectx *c, const char *s, size_t n)
{
    size_t len = c->raw[0] ? strlen(c->raw) : 0; /* most appends are the first */
    size_t room = sizeof(c->raw) - 1 - len, k = n < room ? n : room;
    char *d = c->raw + len;

    san_copy(d, s, k);
    d[k] = 0;
    if (k < n)
        c->raw_truncated = 1;
}

static void raw_set_hex(struct sf_tracectx *c, const uint8_t *b, size_t n)
{
    size_t max = (sizeof(c->raw) - 1) / 2;

    if (n > max) {
        n = max;
        c->raw_truncated = 1;
    }
    sf_hex_encode(c->raw, b, n);
}

/* 1 when s[0..n) is all lowercase hex digits and n is a multiple of 8 (else 0: the
 * caller checks byte by byte); *nonzero gets 1 if a digit is not '0'. */
static inline int lower_hex8(const char *s, size_t n, int *nonzero)
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

#define ID_ANYCASE 1 /* accept uppercase hex digits too */
#define ID_ZERO_OK 2 /* all zeros allowed (version and flag fields) */

/* Check an id field: lowercase hex (see ID_* opts), of length w1 or w2 (w2 0: only w1),
 * not all zeros.  On failure fills c->error "<what> ..." and returns -1. */
static int check_id(struct sf_tracectx *c, const char *what, const char *s, size_t n, size_t w1,
                    size_t w2, int opts)
{
    /* 1: lowercase hex digit, 2: uppercase A-F, 0: anything else */
    static const unsigned char cls[256] = {
        ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
        ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
        ['A'] = 2, ['B'] = 2, ['C'] = 2, ['D'] = 2, ['E'] = 2, ['F'] = 2};
    unsigned ok = opts & ID_ANYCASE ? 3 : 1;
    int nonzero = 0;
    char ch[8];

    if (n == 0)
        return ctx_fail(c, "%s is empty", what);
    if (lower_hex8(s, n, &nonzero))
        goto checked; /* the common case: lowercase hex, 8 digits per step */
    for (size_t i = 0; i < n; i++) {
        int d = (unsigned char)s[i];
        nonzero |= d != '0';
        if (cls[d] & ok)
            continue;
        if (cls[d] == 2)
            return ctx_fail(c, "%s has uppercase hex digits", what);
        show_char(ch, sizeof(ch), d);
        return ctx_fail(c, "%s has illegal character %s at offset %zu", what, ch, i);
    }
checked:
    if (n != w1 && n != w2) {
        if (w2)
            return ctx_fail(c, "%s has %zu hex digits, need %zu or %zu", what, n, w1, w2);
        return ctx_fail(c, "%s has %zu hex digit%s, need %zu", what, n, n == 1 ? "" : "s", w1);
    }
    if (!(opts & ID_ZERO_OK) && !nonzero)
        return ctx_fail(c, "%s is all zeros", what);
    return 0;
}

/* Store a checked id (hex digits, n <= width <= 32), left-padded to width with '0'. */
static inline void put_id_lower(char *out, size_t width, const char *s, size_t n)
{
    memcpy(out, "00000000000000000000000000000000", width);
    if (width == 16)
        copy_small16(out + 16 - n, s, n);
    else
        copy_small(out + width - n, s, n);
    out[width] = 0;
}

/* put_id_lower, lowercased: every byte | 0x20 ('0'-'9' and the padding have that bit). */
static inline void put_id(char *out, size_t width, const char *s, size_t n)
{
    put_id_lower(out, width, s, n);
    for (size_t i = 0; i < width; i += 8) {
        uint64_t w;
        memcpy(&w, out + i, 8);
        w |= SF_ONES * 0x20;
        memcpy(out + i, &w, 8);
    }
}

/* Split s[0..n) at `sep` into at most max fields; returns the number of fields found (which
 * may exceed max: the rest is then in the last field's remainder, uncounted fields too). */
static int split(const char *s, size_t n, int sep, const char **f, size_t *fl, int max)
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

const char *sf_tracectx_format_name(enum sf_ctx_format f)
{
    static const char *const names[SF_CTX_NFORMATS] = {
        "b3-multi",       "b3-single",     "traceparent",
        "grpc-trace-bin", "uber-trace-id", "x-amzn-trace-id",
        "datadog",        "baggage",       "sw8"};

    return (unsigned)f < SF_CTX_NFORMATS ? names[f] : "unknown";
}

/* ---- W3C traceparent ---------------------------------------------------------------- */

static int lower_hex2(const char *s)
{
    return ((s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'f')) &&
           ((s[1] >= '0' && s[1] <= '9') || (s[1] >= 'a' && s[1] <= 'f'));
}

/* 1 for a traceparent in the usual layout that passes every field check: version,
 * trace-id, parent-id and flags of 2, 32, 16 and 2 lowercase hex digits, the ids not
 * all zeros (then the field split and check_id are the same, without their cost). */
static int tp_usual(const char *v, size_t n)
{
    int nz;

    return n >= 55 && v[2] == '-' && v[35] == '-' && v[52] == '-' && (n == 55 || v[55] == '-') &&
           lower_hex2(v) && lower_hex2(v + 53) && lower_hex8(v + 3, 32, &nz) && nz &&
           lower_hex8(v + 36, 16, &nz) && nz;
}

int sf_tracectx_parse_traceparent(struct sf_tracectx *c, const char *v, size_t n)
{
    static const char *const what[4] = {"traceparent: version", "traceparent: trace-id",
                                        "traceparent: parent-id", "traceparent: trace-flags"};
    static const size_t width[4] = {2, 32, 16, 2};
    const char *f[4];
    size_t fl[4], i = 0;

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_TRACEPARENT);
    raw_append(c, v, n);
    trim_ows(&v, &n);
    if (n == 0)
        return ctx_fail(c, "traceparent: empty value");
    /* Four '-'-separated fields; a higher version may add more after a further '-'. */
    if (tp_usual(v, n)) { /* 2-32-16-2 lowercase hex, ids not zero: checked already */
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
            return ctx_fail(c, "%s missing", what[k + 1]);
        if (k < 3)
            i++;
    }
    for (int k = 0; k < 4; k++) {
        /* version and flags may be 00; the ids may not */
        int opts = k == 0 || k == 3 ? ID_ZERO_OK : 0;
        if (check_id(c, what[k], f[k], fl[k], width[k], 0, opts) < 0)
            return -1;
    }
checked:
    if (f[0][0] == 'f' && f[0][1] == 'f')
        return ctx_fail(c, "traceparent: version ff is invalid");
    if (f[0][0] == '0' && f[0][1] == '0' && i < n)
        return ctx_fail(c, "traceparent: version 00 allows nothing after trace-flags");
    memcpy(c->trace_id, f[1], 32);
    c->trace_id[32] = 0;
    memcpy(c->span_id, f[2], 16);
    c->span_id[16] = 0;
    c->flags = sf_hex_digit(f[3][0]) << 4 | sf_hex_digit(f[3][1]);
    c->sampled = c->flags & 0x01;
    return 0;
}

/* ---- W3C tracestate ------------------------------------------------------------------ */

/* Next non-empty member of a tracestate list from *pos: span without the OWS around it.
 * Returns 1, or 0 at the end. */
static int ts_member(const char *v, size_t n, size_t *pos, const char **m, size_t *ml)
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
        trim_ows(m, ml);
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

/* Byte classes of a tracestate member: TS_K key character, TS_K0 first key character
 * (a-z 0-9), TS_V value character (0x20-0x7e but ',' and '='). */
enum { TS_K = 1, TS_K0 = 2, TS_V = 4 };
#define TS_KEYC(c)                                                                                 \
    (((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') || (c) == '_' || (c) == '-' ||       \
     (c) == '*' || (c) == '/' || (c) == '@')
#define TS_CLS(c)                                                                                  \
    ((TS_KEYC(c) ? TS_K : 0) |                                                                     \
     ((((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9')) ? TS_K0 : 0) |                    \
     ((c) >= 0x20 && (c) <= 0x7e && (c) != ',' && (c) != '=' ? TS_V : 0))
#define TS_CLS4(c)  TS_CLS(c), TS_CLS(c + 1), TS_CLS(c + 2), TS_CLS(c + 3)
#define TS_CLS16(c) TS_CLS4(c), TS_CLS4(c + 4), TS_CLS4(c + 8), TS_CLS4(c + 12)
#define TS_CLS64(c) TS_CLS16(c), TS_CLS16(c + 16), TS_CLS16(c + 32), TS_CLS16(c + 48)
static const unsigned char ts_cls[256] = {TS_CLS64(0), TS_CLS64(64), TS_CLS64(128), TS_CLS64(192)};

/* The next member when it starts right at *pos and is valid (key '=' value, then ',' or
 * the end; trailing spaces allowed): sets *m and *ml as ts_member would, moves *pos past it
 * the same way and returns 1.  Anything else (OWS or an empty member first, a bad or odd
 * member) returns 0 with *pos unchanged: ts_member and ts_check_member take it from there. */
static inline int ts_next_valid(const char *v, size_t n, size_t *pos, const char **m, size_t *ml)
{
    size_t s = *pos, k = s + 1, j, e;

    if (s >= n || !(ts_cls[(unsigned char)v[s]] & TS_K0))
        return 0;
    while (k < n && (ts_cls[(unsigned char)v[k]] & TS_K))
        k++;
    /* '=' is not a key character: when the key is clean the first '=' is here */
    if (k >= n || v[k] != '=' || k - s > TS_KEY_MAX)
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
                j = b + first_lane(stop);
                break;
            }
            if (b + 16 >= n) {
                j = n;
                break;
            }
        }
    }
    for (; j < n && (ts_cls[(unsigned char)v[j]] & TS_V); j++) /* short fields */
        ;
    if (j < n && v[j] != ',') /* HTAB or a byte no value may hold */
        return 0;
    for (e = j; e > k + 1 && v[e - 1] == ' '; e--)
        ;
    if (e - k - 1 == 0 || e - k - 1 > TS_VAL_MAX)
        return 0;
    *m = v + s;
    *ml = e - s;
    *pos = j < n ? j + 1 : n;
    return 1;
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
    if (kl == 0 || kl > TS_KEY_MAX) {
        snprintf(why, whysz, "key has %zu characters, need 1 to %d", kl, TS_KEY_MAX);
        return -1;
    }
    for (size_t i = 0; i < kl; i++) {
        int c = (unsigned char)m[i];
        if (ts_key_char(c) && (i > 0 || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            continue;
        show_char(ch, sizeof(ch), c);
        snprintf(why, whysz, "key '%.*s' has illegal character %s", (int)(kl > 40 ? 40 : kl), m,
                 ch);
        return -1;
    }
    if (vl == 0 || vl > TS_VAL_MAX) {
        snprintf(why, whysz, "value of '%.*s' has %zu characters, need 1 to %d",
                 (int)(kl > 40 ? 40 : kl), m, vl, TS_VAL_MAX);
        return -1;
    }
    for (size_t i = kl + 1; i < ml; i++) {
        int c = (unsigned char)m[i];
        if (c >= 0x20 && c <= 0x7e && c != ',' && c != '=')
            continue;
        show_char(ch, sizeof(ch), c);
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
static int ts_scan(const char *v, size_t n, int *members, char *why, size_t whysz, char *out,
                   size_t outsz, size_t *outlen, int *trunc)
{
    size_t pos = 0, ml;
    const char *m;

    while (pos < n) { /* (ts_member finds nothing at the end either) */
        if (!ts_next_valid(v, n, &pos, &m, &ml)) {
            if (!ts_member(v, n, &pos, &m, &ml))
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
            copy_small(out + *outlen, m, ml);
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

    EMPTY_IF_NULL(v, n);
    if (why == NULL || whysz == 0) {
        why = tmp;
        whysz = sizeof(tmp);
    }
    why[0] = 0;
    return ts_scan(v, n, &members, why, whysz, NULL, 0, NULL, NULL);
}

int sf_tracectx_tracestate_next(const char *v, size_t n, size_t *pos, const char **key,
                                size_t *klen, const char **val, size_t *vlen)
{
    const char *m, *eq;
    size_t ml;

    while (ts_member(v, n, pos, &m, &ml)) {
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

/* ---- B3 ------------------------------------------------------------------------------ */

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
    return ctx_fail(c, "b3: sampling state '%.*s' is not 0, 1 or d", (int)(n > 20 ? 20 : n), s);
}

/* Store B3 trace id (16 or 32 lowercase hex, already checked) normalised to 32. */
static void put_trace_id_b3(struct sf_tracectx *c, const char *s, size_t n)
{
    put_id_lower(c->trace_id, 32, s, n);
    c->trace_id_64 = n == 16;
}

/* The usual b3 shapes, trace-span[-s[-parent]] with lowercase hex ids that are not all
 * zeros and s one of 0, 1, d: fills *c as the general code would and returns 1; any other
 * value returns 0 with *c untouched (the separators found are then not the split's). */
static int b3_usual(struct sf_tracectx *c, const char *v, size_t n)
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
            if (sp[18] != '-' || !lower_hex8(sp + 19, 16, &nz) || !nz)
                return 0;
            par = sp + 19;
        }
    }
    if (!lower_hex8(v, tl, &nz) || !nz || !lower_hex8(sp, 16, &nz) || !nz)
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

int sf_tracectx_parse_b3_single(struct sf_tracectx *c, const char *v, size_t n)
{
    const char *f[4];
    size_t fl[4];
    int nf;

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_B3_SINGLE);
    raw_append(c, v, n);
    trim_ows(&v, &n);
    if (n == 0)
        return ctx_fail(c, "b3: empty value");
    if (b3_usual(c, v, n))
        return 0;
    nf = split(v, n, '-', f, fl, 4);
    if (nf == 1) {
        if (n > 1 && sf_hex_is_lower(v, n))
            return ctx_fail(c, "b3: span id missing");
        return b3_sampling(c, v, n); /* sampling-only form: "0", "1" or "d" */
    }
    if (nf > 4)
        return ctx_fail(c, "b3: %d '-'-separated fields, at most 4", nf);
    if (check_id(c, "b3: trace id", f[0], fl[0], 32, 16, 0) < 0 ||
        check_id(c, "b3: span id", f[1], fl[1], 16, 0, 0) < 0)
        return -1;
    if (nf >= 3 && b3_sampling(c, f[2], fl[2]) < 0)
        return -1;
    if (nf == 4 && check_id(c, "b3: parent span id", f[3], fl[3], 16, 0, 0) < 0)
        return -1;
    put_trace_id_b3(c, f[0], fl[0]);
    put_id_lower(c->span_id, 16, f[1], fl[1]);
    if (nf == 4)
        put_id_lower(c->parent_id, 16, f[3], fl[3]);
    return 0;
}

/* ---- grpc-trace-bin ------------------------------------------------------------------- */

/* 1 when the n bytes at b are all zero. */
static int zero_bytes(const uint8_t *b, size_t n)
{
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++)
        acc |= b[i];
    return acc == 0;
}

/* The decoding of sf_tracectx_parse_grpc_trace_bin; raw is left to the caller. */
static int grpc_bin(struct sf_tracectx *c, const uint8_t *bin, size_t n)
{
    struct sf_rd rd;
    const uint8_t *tid, *sid;
    uint8_t ver, fid;

    if (n == 0)
        return ctx_fail(c, "grpc-trace-bin: empty value");
    sf_rd_init(&rd, bin, n, 0);
    ver = sf_rd_u8(&rd);
    if (ver != 0)
        return ctx_fail(c, "grpc-trace-bin: unsupported version %u", ver);
    /* Field ids are on the wire, lengths are not: trace id (0) then span id (1) must come
     * first, at fixed offsets, as opencensus-java's decoder requires. */
    fid = sf_rd_u8(&rd);
    if (!rd.err && fid != 0)
        return ctx_fail(c, "grpc-trace-bin: field %u at byte 1, need 0 (trace id)", fid);
    tid = sf_rd_bytes(&rd, 16);
    fid = sf_rd_u8(&rd);
    if (!rd.err && fid != 1)
        return ctx_fail(c, "grpc-trace-bin: field %u at byte 18, need 1 (span id)", fid);
    sid = sf_rd_bytes(&rd, 8);
    if (rd.err)
        return ctx_fail(c, "grpc-trace-bin: truncated: %zu bytes, need at least 27", n);
    /* Options only when field 2 follows; any other id ends decoding (tail ignored). */
    if (sf_rd_left(&rd) > 0 && rd.p[0] == 2) {
        sf_rd_u8(&rd);
        c->flags = sf_rd_u8(&rd);
        if (rd.err)
            return ctx_fail(c, "grpc-trace-bin: options field truncated: %zu bytes, need 29", n);
        c->sampled = c->flags & 0x01;
    } else {
        c->sampled = 0; /* OpenCensus default options */
    }
    sf_hex_encode(c->trace_id, tid, 16);
    sf_hex_encode(c->span_id, sid, 8);
    if (zero_bytes(tid, 16))
        return ctx_fail(c, "grpc-trace-bin: trace id is all zeros");
    if (zero_bytes(sid, 8))
        return ctx_fail(c, "grpc-trace-bin: span id is all zeros");
    return 0;
}

int sf_tracectx_parse_grpc_trace_bin(struct sf_tracectx *c, const uint8_t *bin, size_t n)
{
    if (bin == NULL) {
        bin = (const uint8_t *)"";
        n = 0;
    }
    ctx_begin(c, SF_CTX_GRPC_TRACE_BIN);
    raw_set_hex(c, bin, n);
    return grpc_bin(c, bin, n);
}

/* One base64 grpc-trace-bin value (an element of a ','-joined list). */
static int parse_grpc_b64(struct sf_tracectx *c, const char *v, size_t n)
{
    uint8_t bin[SF_BASE64_DECODED_MAX(GRPC_B64_MAX)];
    long len;

    if (n > GRPC_B64_MAX) {
        ctx_begin(c, SF_CTX_GRPC_TRACE_BIN);
        raw_append(c, v, n);
        return ctx_fail(c, "grpc-trace-bin: value has %zu base64 characters, at most %d", n,
                        GRPC_B64_MAX);
    }
    len = sf_base64_decode(bin, sizeof(bin), v, n);
    if (len < 0) {
        ctx_begin(c, SF_CTX_GRPC_TRACE_BIN);
        raw_append(c, v, n);
        return ctx_fail(c, "grpc-trace-bin: invalid base64");
    }
    /* raw shows what travelled: the base64 text (not the hex of the bytes) */
    ctx_begin(c, SF_CTX_GRPC_TRACE_BIN);
    raw_append(c, v, n);
    return grpc_bin(c, bin, (size_t)len);
}

/* ---- Jaeger uber-trace-id --------------------------------------------------------------- */

/* Split at ':' or its percent-encoded form "%3A" (seen from some clients). */
static int split_uber(const char *s, size_t n, const char **f, size_t *fl, int max)
{
    int k = 0;
    size_t start = 0, i = 0;

    if (memchr(s, '%', n) == NULL)
        return split(s, n, ':', f, fl, max);
    for (;;) {
        size_t sep = 0;
        if (i < n && s[i] == ':')
            sep = 1;
        else if (i + 2 < n && s[i] == '%' && s[i + 1] == '3' && lc((unsigned char)s[i + 2]) == 'a')
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

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_UBER);
    raw_append(c, v, n);
    trim_ows(&v, &n);
    if (n == 0)
        return ctx_fail(c, "uber-trace-id: empty value");
    nf = split_uber(v, n, f, fl, 4);
    if (nf != 4)
        return ctx_fail(c, "uber-trace-id: %d ':'-separated fields, need 4", nf);
    /* Receivers MUST accept shorter ids and left-pad them (Jaeger client-libraries). */
    if (check_id(c, "uber-trace-id: trace id", f[0], fl[0], fl[0] ? fl[0] : 1, 0, ID_ANYCASE) < 0 ||
        check_id(c, "uber-trace-id: span id", f[1], fl[1], fl[1] ? fl[1] : 1, 0, ID_ANYCASE) < 0 ||
        check_id(c, "uber-trace-id: parent span id", f[2], fl[2], fl[2] ? fl[2] : 1, 0,
                 ID_ANYCASE | ID_ZERO_OK) < 0)
        return -1;
    if (fl[0] > 32 || fl[1] > 16 || fl[2] > 16) {
        int k = fl[0] > 32 ? 0 : fl[1] > 16 ? 1 : 2;
        static const char *const what[3] = {"trace id", "span id", "parent span id"};
        return ctx_fail(c, "uber-trace-id: %s has %zu hex digits, at most %d", what[k], fl[k],
                        k ? 16 : 32);
    }
    if (fl[3] < 1 || fl[3] > 2 || sf_hex_u64(f[3], fl[3], &flags) < 0)
        return ctx_fail(c, "uber-trace-id: flags '%.*s' are not 1-2 hex digits",
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

/* ---- AWS X-Ray ------------------------------------------------------------------------- */

/* Root=1-<8 hex epoch>-<24 hex>: strict (it becomes the trace id). */
static int xray_root(struct sf_tracectx *c, const char *s, size_t n)
{
    int nz;

    if (n != 35 || s[0] != '1' || s[1] != '-' || s[10] != '-' || !lower_hex8(s + 2, 8, &nz) ||
        !lower_hex8(s + 11, 24, &nz))
        return ctx_fail(c, "x-amzn-trace-id: Root '%.*s' is not 1-<8 hex>-<24 hex>",
                        (int)(n > 40 ? 40 : n), s);
    memcpy(c->trace_id, s + 2, 8);
    memcpy(c->trace_id + 8, s + 11, 24);
    c->trace_id[32] = 0;
    if (sf_hex_is_zero(c->trace_id, 32))
        return ctx_fail(c, "x-amzn-trace-id: Root trace id is all zeros");
    return 0;
}

int sf_tracectx_parse_xray(struct sf_tracectx *c, const char *v, size_t n)
{
    size_t pos = 0;
    int have_root = 0, have_parent = 0, have_sampled = 0;

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_XRAY);
    raw_append(c, v, n);
    while (pos < n) {
        const char *m = v + pos, *eq;
        const char *semi = memchr(m, ';', n - pos);
        size_t ml = semi != NULL ? (size_t)(semi - m) : n - pos, kl;
        pos += ml + 1;
        trim_ows(&m, &ml);
        if (ml == 0)
            continue;
        eq = memchr(m, '=', ml);
        if (eq == NULL)
            return ctx_fail(c, "x-amzn-trace-id: field '%.*s' has no '='", (int)(ml > 40 ? 40 : ml),
                            m);
        kl = (size_t)(eq - m);
        /* First occurrence wins; Self, Lineage and unknown keys are kept only in raw. */
        if (EQ_LIT(m, kl, "root") && !have_root++) {
            if (xray_root(c, eq + 1, ml - kl - 1) < 0)
                return -1;
        } else if (EQ_LIT(m, kl, "parent") && !have_parent++) {
            if (check_id(c, "x-amzn-trace-id: Parent", eq + 1, ml - kl - 1, 16, 0, 0) < 0)
                return -1;
            memcpy(c->span_id, eq + 1, 16);
            c->span_id[16] = 0;
        } else if (EQ_LIT(m, kl, "sampled") && !have_sampled++) {
            size_t sl = ml - kl - 1;
            if (sl != 1 || (eq[1] != '0' && eq[1] != '1' && eq[1] != '?'))
                return ctx_fail(c, "x-amzn-trace-id: Sampled '%.*s' is not 0, 1 or ?",
                                (int)(sl > 20 ? 20 : sl), eq + 1);
            c->sampled = eq[1] == '?' ? -1 : eq[1] - '0';
        }
    }
    if (!have_root)
        return ctx_fail(c, "x-amzn-trace-id: no Root field");
    return 0;
}

/* ---- Datadog ------------------------------------------------------------------------- */

/* 8 bytes as a little-endian word: the first byte in the low 8 bits. */
static inline uint64_t load_le8(const char *s)
{
    uint64_t w;

    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* 1 when the 8 bytes of w are all '0'-'9'. */
static inline int digits8(uint64_t w)
{
    return (w & (SF_ONES * 0xf0)) == SF_ONES * 0x30 &&
           ((w + SF_ONES * 0x06) & (SF_ONES * 0xf0)) == SF_ONES * 0x30;
}

/* Value of 8 decimal digits (checked by digits8), the first in the low byte. */
static inline uint64_t parse8(uint64_t w)
{
    w -= SF_ONES * 0x30;
    w = w * 10 + (w >> 8); /* pairs: d0*10+d1 in each 16-bit lane's low byte */
    return ((w & UINT64_C(0x000000ff000000ff)) * (100 + (UINT64_C(1000000) << 32)) +
            ((w >> 16) & UINT64_C(0x000000ff000000ff)) * (1 + (UINT64_C(10000) << 32))) >>
           32;
}

/* Decimal uint64 (1..20 digits, no sign).  0 or -1. */
static int dec_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    size_t i = 0;

    if (n == 0 || n > 20)
        return -1;
    /* up to 16 digits 8 at a time (below 10^16: no overflow), the rest one by one */
    for (; i + 8 <= n && i < 16; i += 8) {
        uint64_t w = load_le8(s + i);
        if (!digits8(w))
            return -1;
        x = x * 100000000 + parse8(w);
    }
    for (; i < n; i++) {
        unsigned d = (unsigned)((unsigned char)s[i] - '0');
        if (d > 9 || (i >= 19 && x > (UINT64_MAX - d) / 10)) /* 19 digits cannot overflow */
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

static int dd_id(struct sf_tracectx *c, const char *what, const char *s, size_t n, uint64_t *id)
{
    if (dec_u64(s, n, id) < 0)
        return ctx_fail(c, "datadog: %s '%.*s' is not a decimal uint64", what,
                        (int)(n > 24 ? 24 : n), s);
    if (*id == 0)
        return ctx_fail(c, "datadog: %s is 0", what);
    return 0;
}

/* ---- W3C baggage ------------------------------------------------------------------------ */

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
    for (i = k; i < n && is_ows((unsigned char)s[i]); i++)
        ;
    if (i == n && !need_value)
        return 0;
    if (i == n || s[i] != '=') {
        if (i < n) {
            show_char(ch, sizeof(ch), (unsigned char)s[i]);
            snprintf(why, whysz, "key '%.*s' followed by %s", (int)(k > 40 ? 40 : k), s, ch);
        } else {
            snprintf(why, whysz, "key '%.*s' has no '='", (int)(k > 40 ? 40 : k), s);
        }
        return -1;
    }
    for (i++; i < n && is_ows((unsigned char)s[i]); i++)
        ;
    for (; i < n; i++) {
        int c = (unsigned char)s[i];
        /* '%' is a baggage-octet: a stray one is the sender's fault, not a grammar error
         * (w3c/baggage's reference parser accepts it too) */
        if (baggage_octet(c))
            continue;
        show_char(ch, sizeof(ch), c);
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
        trim_ows(&m, &ml);
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
            trim_ows(&q, &ql);
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
        return ctx_fail(c, "baggage: %s", why);
    if (*members > BAGGAGE_PROPAGATE_MEMBERS || *bytes > BAGGAGE_PROPAGATE_BYTES)
        ctx_warn(c, "baggage: over the propagation limit (%d members, %zu bytes)", *members,
                 *bytes);
    return 0;
}

int sf_tracectx_parse_baggage(struct sf_tracectx *c, const char *v, size_t n)
{
    int members = 0;
    size_t bytes = 0;

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_BAGGAGE);
    raw_append(c, v, n);
    return baggage_field(c, v, n, &members, &bytes);
}

/* ---- SkyWalking sw8 ----------------------------------------------------------------------- */

int sf_tracectx_parse_sw8(struct sf_tracectx *c, const char *v, size_t n)
{
    static const char *const what[8] = {"sample",          "trace id",       "parent segment id",
                                        "parent span id",  "parent service", "parent instance",
                                        "parent endpoint", "peer address"};
    const char *f[8];
    size_t fl[8];
    uint8_t tmp[1536];
    uint64_t id;
    int nf;

    EMPTY_IF_NULL(v, n);
    ctx_begin(c, SF_CTX_SW8);
    raw_append(c, v, n);
    trim_ows(&v, &n);
    nf = split(v, n, '-', f, fl, 8);
    if (nf != 8)
        return ctx_fail(c, "sw8: %d '-'-separated fields, need 8", nf);
    if (fl[0] != 1 || (f[0][0] != '0' && f[0][0] != '1'))
        return ctx_fail(c, "sw8: sample '%.*s' is not 0 or 1", (int)(fl[0] > 20 ? 20 : fl[0]),
                        f[0]);
    if (dec_u64(f[3], fl[3], &id) < 0 || id > INT32_MAX)
        return ctx_fail(c, "sw8: parent span id '%.*s' is not a decimal int",
                        (int)(fl[3] > 20 ? 20 : fl[3]), f[3]);
    for (int k = 1; k < 8; k++) {
        if (k == 3)
            continue;
        if (fl[k] == 0)
            return ctx_fail(c, "sw8: %s is empty", what[k]);
        long len = sf_base64_decode(tmp, sizeof(tmp), f[k], fl[k]);
        if (len == SF_E_LIMIT)
            return ctx_fail(c, "sw8: %s is too long (%zu characters)", what[k], fl[k]);
        if (len < 0)
            return ctx_fail(c, "sw8: %s is not valid base64", what[k]);
        if (len == 0)
            return ctx_fail(c, "sw8: %s is empty", what[k]);
    }
    c->sampled = f[0][0] - '0';
    return 0;
}

/* ---- the header set -------------------------------------------------------------------- */

enum hdr_id {
    H_TRACEPARENT,
    H_TRACESTATE,
    H_B3,
    H_B3_TRACEID,
    H_B3_SPANID,
    H_B3_PARENT,
    H_B3_SAMPLED,
    H_B3_FLAGS, /* keep this order */
    H_GRPC,
    H_UBER,
    H_XRAY,
    H_DD_TRACE,
    H_DD_PARENT,
    H_DD_PRIO,
    H_DD_TAGS, /* keep this order */
    H_BAGGAGE,
    H_SW8,
    H_COUNT
};

static const struct {
    const char *name; /* lowercase */
    const char *shown;
    unsigned char len;
} hdrs[H_COUNT] = {
    [H_TRACEPARENT] = {"traceparent", "traceparent", 11},
    [H_TRACESTATE] = {"tracestate", "tracestate", 10},
    [H_B3] = {"b3", "b3", 2},
    [H_B3_TRACEID] = {"x-b3-traceid", "X-B3-TraceId", 12},
    [H_B3_SPANID] = {"x-b3-spanid", "X-B3-SpanId", 11},
    [H_B3_PARENT] = {"x-b3-parentspanid", "X-B3-ParentSpanId", 17},
    [H_B3_SAMPLED] = {"x-b3-sampled", "X-B3-Sampled", 12},
    [H_B3_FLAGS] = {"x-b3-flags", "X-B3-Flags", 10},
    [H_GRPC] = {"grpc-trace-bin", "grpc-trace-bin", 14},
    [H_UBER] = {"uber-trace-id", "uber-trace-id", 13},
    [H_XRAY] = {"x-amzn-trace-id", "X-Amzn-Trace-Id", 15},
    [H_DD_TRACE] = {"x-datadog-trace-id", "x-datadog-trace-id", 18},
    [H_DD_PARENT] = {"x-datadog-parent-id", "x-datadog-parent-id", 19},
    [H_DD_PRIO] = {"x-datadog-sampling-priority", "x-datadog-sampling-priority", 27},
    [H_DD_TAGS] = {"x-datadog-tags", "x-datadog-tags", 14},
    [H_BAGGAGE] = {"baggage", "baggage", 7},
    [H_SW8] = {"sw8", "sw8", 3},
};

/* 8 bytes of a header name against 8 of a lowercase literal made of letters, digits
 * and '-': a letter matches either case (the mask has 0x20 where the literal has a
 * letter: bytes >= 'a'), anything else must be equal. */
static inline int name8_eq(const char *name, const char *lit)
{
    uint64_t x, l, m;

    memcpy(&x, name, 8);
    memcpy(&l, lit, 8);
    m = ((l + SF_ONES * 0x1f) & SF_HIGHS) >> 2;
    return (x | m) == l;
}

/* h when name is header h (c0: its first byte | 0x20), else -1; inlined with a constant h,
 * most other names stop at the first letter. */
static inline int hdr_is(const char *name, size_t nlen, int c0, int h)
{
    const char *lit = hdrs[h].name;
    size_t i;

    if (nlen != hdrs[h].len || c0 != lit[0])
        return -1;
    if (nlen < 8) {
        for (i = 0; i < nlen; i++) {
            unsigned char l = (unsigned char)lit[i];
            if (((unsigned char)name[i] | (l >= 'a' ? 0x20 : 0)) != l)
                return -1;
        }
        return h;
    }
    for (i = 0; i + 8 <= nlen; i += 8)
        if (!name8_eq(name + i, lit + i))
            return -1;
    if (i < nlen && !name8_eq(name + nlen - 8, lit + nlen - 8)) /* the tail, overlapping */
        return -1;
    return h;
}

/* Which header this is, or -1.  Dispatch on length, then the first letter: one compare
 * for most names, a few instructions for most other headers. */
__attribute__((always_inline)) static inline int header_id(const char *name, size_t nlen)
{
    int c0;

    if (nlen < 2 || nlen > 27)
        return -1;
    c0 = (unsigned char)name[0] | 0x20; /* the lowercase letter, or a byte no name starts with */
    switch (nlen) {
    case 2:
        return hdr_is(name, nlen, c0, H_B3);
    case 3:
        return hdr_is(name, nlen, c0, H_SW8);
    case 7:
        return hdr_is(name, nlen, c0, H_BAGGAGE);
    case 10:
        return c0 == 't' ? hdr_is(name, nlen, c0, H_TRACESTATE)
                         : hdr_is(name, nlen, c0, H_B3_FLAGS);
    case 11:
        return c0 == 't' ? hdr_is(name, nlen, c0, H_TRACEPARENT)
                         : hdr_is(name, nlen, c0, H_B3_SPANID);
    case 12:
        return lc((unsigned char)name[5]) == 't' ? hdr_is(name, nlen, c0, H_B3_TRACEID)
                                                 : hdr_is(name, nlen, c0, H_B3_SAMPLED);
    case 13:
        return hdr_is(name, nlen, c0, H_UBER);
    case 14:
        return c0 == 'g' ? hdr_is(name, nlen, c0, H_GRPC) : hdr_is(name, nlen, c0, H_DD_TAGS);
    case 15:
        return hdr_is(name, nlen, c0, H_XRAY);
    case 17:
        return hdr_is(name, nlen, c0, H_B3_PARENT);
    case 18:
        return hdr_is(name, nlen, c0, H_DD_TRACE);
    case 19:
        return hdr_is(name, nlen, c0, H_DD_PARENT);
    case 27:
        return hdr_is(name, nlen, c0, H_DD_PRIO);
    default:
        return -1;
    }
}

int sf_tracectx_header_id(const char *name, size_t nlen)
{
    return name ? header_id(name, nlen) : -1;
}

void sf_tracectx_set_init(struct sf_tracectx_set *s)
{
    /* Only counters: the big buffers are written before they are read. */
    s->n = s->dropped = 0;
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

static struct sf_tracectx *new_ctx(struct sf_tracectx_set *s)
{
    if (s->n >= SF_CTX_MAX) {
        s->dropped++;
        return NULL;
    }
    return &s->ctx[s->n++];
}

/* Keep the first value of a multi-header format's header (first value wins). */
static void keep_first(char (*vals)[48], size_t *lens, unsigned char *seen, int i, const char *v,
                       size_t n)
{
    if (*seen & (1u << i))
        return;
    *seen |= (unsigned char)(1u << i);
    trim_ows(&v, &n);
    lens[i] = n;
    if (n > 47)
        n = 47;
    copy_small(vals[i], v, n);
    vals[i][n] = 0;
}

/* A second traceparent makes the context invalid (W3C: restart the trace). */
static void add_traceparent(struct sf_tracectx_set *s, const char *v, size_t n)
{
    struct sf_tracectx *c;
    char first[SF_CTX_RAW_MAX];

    if (++s->p.tp_count == 1) {
        c = new_ctx(s);
        if (c != NULL) {
            s->p.tp_idx = (int)(c - s->ctx);
            sf_tracectx_parse_traceparent(c, v, n);
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
        raw_append(c, "traceparent: ", 13);
        raw_append(c, first, strlen(first));
    }
    raw_append(c, "; traceparent: ", 15);
    raw_append(c, v, n);
    ctx_fail(c, "traceparent: %d traceparent headers, need exactly 1", s->p.tp_count);
}

static void add_tracestate(struct sf_tracectx_set *s, const char *v, size_t n)
{
    struct sf_tracectx_pending *p = &s->p;

    p->ts_count++;
    /* Not parsed once the traceparent is known to be invalid (it will be ignored). */
    if (p->tp_count > 1 || (p->tp_idx >= 0 && !s->ctx[p->tp_idx].valid))
        return;
    if (!p->ts_bad && ts_scan(v, n, &p->ts_members, p->ts_why, sizeof(p->ts_why), p->ts,
                              sizeof(p->ts), &p->ts_len, &p->ts_truncated) < 0)
        p->ts_bad = 1;
}

/* Several base64 values may be joined with ','; true binary starts with a 0x00 byte. */
static void add_grpc(struct sf_tracectx_set *s, const uint8_t *v, size_t n)
{
    const char *t = (const char *)v, *f;
    size_t tl = n, start = 0;
    struct sf_tracectx *c;
    int found = 0;

    if (n > 0 && v[0] == 0) {
        c = new_ctx(s);
        if (c != NULL)
            sf_tracectx_parse_grpc_trace_bin(c, v + 1, n - 1);
        return;
    }
    for (size_t i;; start = i + 1) {
        const char *comma = start < tl ? memchr(t + start, ',', tl - start) : NULL;
        i = comma != NULL ? (size_t)(comma - t) : tl; /* the element is t[start..i) */
        f = t + start;
        size_t fl = i - start;
        trim_ows(&f, &fl);
        if (fl == 0 && (found || i < tl)) { /* empty list element */
            if (i >= tl)
                break;
            continue;
        }
        found = 1;
        c = new_ctx(s);
        if (c == NULL)
            return;
        if (fl == 0) {
            ctx_begin(c, SF_CTX_GRPC_TRACE_BIN);
            raw_append(c, t, n);
            ctx_fail(c, "grpc-trace-bin: empty value");
        } else {
            parse_grpc_b64(c, f, fl);
        }
        if (i >= tl)
            break;
    }
}

/* x-datadog-tags: pick _dd.p.tid out of the ','-separated key=value list. */
static void add_dd_tags(struct sf_tracectx_pending *p, const char *v, size_t n)
{
    size_t pos = 0, ml;
    const char *m;

    if (p->dd_tid_seen)
        return;
    while (ts_member(v, n, &pos, &m, &ml)) {
        if (ml >= 10 && memcmp(m, "_dd.p.tid=", 10) == 0) {
            p->dd_tid_seen = 1;
            p->dd_tid_len = ml - 10;
            memcpy(p->dd_tid, m + 10, ml - 10 > 47 ? 47 : ml - 10);
            p->dd_tid[ml - 10 > 47 ? 47 : ml - 10] = 0;
            return;
        }
    }
}

static void add_baggage(struct sf_tracectx_set *s, const char *v, size_t n)
{
    struct sf_tracectx *c;

    if (s->p.bg_idx < 0) {
        c = new_ctx(s);
        if (c == NULL)
            return;
        s->p.bg_idx = (int)(c - s->ctx);
        ctx_begin(c, SF_CTX_BAGGAGE);
        raw_append(c, v, n);
    } else {
        c = &s->ctx[s->p.bg_idx];
        raw_append(c, ",", 1); /* RFC 9110 §5.3 field combination */
        raw_append(c, v, n);
    }
    if (c->valid)
        baggage_field(c, v, n, &s->p.bg_members, &s->p.bg_bytes);
}

void sf_tracectx_set_add(struct sf_tracectx_set *s, const char *name, size_t nlen,
                         const uint8_t *value, size_t vlen)
{
    sf_tracectx_set_add_id(s, sf_tracectx_header_id(name, nlen), value, vlen);
}

void sf_tracectx_set_add_id(struct sf_tracectx_set *s, int h, const uint8_t *value, size_t vlen)
{
    const char *v = (const char *)value;
    struct sf_tracectx *c;

    if (h < 0 || h >= H_COUNT || s->p.finished)
        return;
    if (value == NULL) {
        value = (const uint8_t *)"";
        v = "";
        vlen = 0;
    }
    switch (h) {
    case H_TRACEPARENT:
        add_traceparent(s, v, vlen);
        break;
    case H_TRACESTATE:
        add_tracestate(s, v, vlen);
        break;
    case H_GRPC:
        add_grpc(s, value, vlen);
        break;
    case H_BAGGAGE:
        add_baggage(s, v, vlen);
        break;
    case H_B3_TRACEID:
    case H_B3_SPANID:
    case H_B3_PARENT:
    case H_B3_SAMPLED:
    case H_B3_FLAGS:
        keep_first(s->p.b3, s->p.b3_len, &s->p.b3_seen, h - H_B3_TRACEID, v, vlen);
        break;
    case H_DD_TAGS:
        add_dd_tags(&s->p, v, vlen);
        /* fallthrough */
    case H_DD_TRACE:
    case H_DD_PARENT:
    case H_DD_PRIO:
        keep_first(s->p.dd, s->p.dd_len, &s->p.dd_seen, h - H_DD_TRACE, v, vlen);
        break;
    default:
        c = new_ctx(s);
        if (c == NULL)
            break;
        if (h == H_B3)
            sf_tracectx_parse_b3_single(c, v, vlen);
        else if (h == H_UBER)
            sf_tracectx_parse_uber(c, v, vlen);
        else if (h == H_XRAY)
            sf_tracectx_parse_xray(c, v, vlen);
        else
            sf_tracectx_parse_sw8(c, v, vlen);
        break;
    }
}

/* raw of a multi-header format: "Name: value; Name: value" in canonical order. */
static void raw_multi(struct sf_tracectx *c, int first_hdr, int count, char (*vals)[48],
                      const size_t *lens, unsigned seen)
{
    /* written in place (raw is empty after ctx_begin): the same bytes as appending piece
     * by piece, as names are printable and the whole always fits */
    char *buf = c->raw;
    size_t len = 0, vl, nl;

    for (int i = 0; i < count; i++) {
        if (!(seen & (1u << i)))
            continue;
        nl = hdrs[first_hdr + i].len;
        if (len + 2 + nl + 2 + 47 > SF_CTX_RAW_MAX - 1)
            break; /* cannot happen: at most 5 x (27-byte name + 47-byte value + 4) */
        if (len) {
            memcpy(buf + len, "; ", 2);
            len += 2;
        }
        copy_small(buf + len, hdrs[first_hdr + i].shown, nl);
        len += nl;
        memcpy(buf + len, ": ", 2);
        len += 2;
        vl = san_copy_str(buf + len, vals[i], lens[i] < 47 ? lens[i] : 47);
        len += vl;
        if (lens[i] > 47)
            c->raw_truncated = 1;
    }
    buf[len] = 0;
}

/* A kept multi-header value must be present, non-empty, not '-' and short enough. */
static int pending_ok(struct sf_tracectx *c, const char *fmt, int hdr, const char *val, size_t len)
{
    if (len == 0)
        return ctx_fail(c, "%s: %s is empty", fmt, hdrs[hdr].shown);
    if (len == 1 && val[0] == '-')
        return ctx_fail(c, "%s: %s is '-'", fmt, hdrs[hdr].shown);
    if (len > 47)
        return ctx_fail(c, "%s: %s has %zu characters", fmt, hdrs[hdr].shown, len);
    return 0;
}

static void finish_b3(struct sf_tracectx *c, struct sf_tracectx_pending *p)
{
    static const char *const what[3] = {"b3: X-B3-TraceId", "b3: X-B3-SpanId",
                                        "b3: X-B3-ParentSpanId"};
    const char *smp = p->b3[3];
    unsigned seen = p->b3_seen;

    ctx_begin(c, SF_CTX_B3_MULTI);
    raw_multi(c, H_B3_TRACEID, 5, p->b3, p->b3_len, seen);
    for (int i = 0; i < 5; i++)
        if ((seen & (1u << i)) && pending_ok(c, "b3", H_B3_TRACEID + i, p->b3[i], p->b3_len[i]))
            return;
    if (seen & 8) {
        if (EQ_LIT(smp, p->b3_len[3], "1") || EQ_LIT(smp, p->b3_len[3], "true"))
            c->sampled = 1;
        else if (EQ_LIT(smp, p->b3_len[3], "0") || EQ_LIT(smp, p->b3_len[3], "false"))
            c->sampled = 0;
        else
            return (void)ctx_fail(c, "b3: X-B3-Sampled '%s' is not 1 or 0", smp);
    }
    if (seen & 16) {
        if (strcmp(p->b3[4], "1") == 0)
            c->sampled = c->debug = 1; /* debug implies accept */
        else if (strcmp(p->b3[4], "0") != 0)
            return (void)ctx_fail(c, "b3: X-B3-Flags '%s' is not 1 or 0", p->b3[4]);
    }
    if (!(seen & 3)) {
        if (!(seen & 24))
            ctx_fail(c, "b3: X-B3-TraceId and X-B3-SpanId missing");
        return; /* sampling-only form */
    }
    if (!(seen & 1) || !(seen & 2))
        return (void)ctx_fail(c, "b3: %s missing", seen & 1 ? "X-B3-SpanId" : "X-B3-TraceId");
    for (int i = 0; i < 3; i++) {
        if (!(seen & (1u << i)))
            continue;
        if (check_id(c, what[i], p->b3[i], p->b3_len[i], 16, i == 0 ? 32 : 0, 0) < 0)
            return;
    }
    put_trace_id_b3(c, p->b3[0], p->b3_len[0]);
    put_id_lower(c->span_id, 16, p->b3[1], p->b3_len[1]);
    if (seen & 4)
        put_id_lower(c->parent_id, 16, p->b3[2], p->b3_len[2]);
}

static void finish_datadog(struct sf_tracectx *c, struct sf_tracectx_pending *p)
{
    uint64_t tid, pid, prio = 0;
    const char *pr = p->dd[2];
    size_t prl = p->dd_len[2];
    unsigned seen = p->dd_seen;

    ctx_begin(c, SF_CTX_DATADOG);
    raw_multi(c, H_DD_TRACE, 4, p->dd, p->dd_len, seen);
    if (!(seen & 1) || !(seen & 2))
        return (void)ctx_fail(c, "datadog: %s missing",
                              seen & 1 ? "x-datadog-parent-id" : "x-datadog-trace-id");
    for (int i = 0; i < 3; i++)
        if ((seen & (1u << i)) && pending_ok(c, "datadog", H_DD_TRACE + i, p->dd[i], p->dd_len[i]))
            return;
    if (dd_id(c, "x-datadog-trace-id", p->dd[0], p->dd_len[0], &tid) < 0 ||
        dd_id(c, "x-datadog-parent-id", p->dd[1], p->dd_len[1], &pid) < 0)
        return;
    if (seen & 4) {
        int neg = pr[0] == '-';
        if (prl - (size_t)neg > 9 || dec_u64(pr + neg, prl - (size_t)neg, &prio) < 0)
            return (void)ctx_fail(c, "datadog: x-datadog-sampling-priority '%s' is not an integer",
                                  pr);
        c->sampled = !neg && prio > 0; /* -1 USER_REJECT, 0 AUTO_REJECT, 1 AUTO_KEEP, 2 USER_KEEP */
    }
    if (p->dd_tid_seen && p->dd_tid_len == 16 && sf_hex_is_lower(p->dd_tid, 16)) {
        memcpy(c->trace_id, p->dd_tid, 16);
    } else {
        memcpy(c->trace_id, "0000000000000000", 16); /* a fixed-size move, not a call */
        c->trace_id_64 = 1;
        if (p->dd_tid_seen)
            ctx_warn(c, "datadog: _dd.p.tid '%s' ignored: not 16 lowercase hex digits", p->dd_tid);
    }
    sf_hex_u64_encode(c->trace_id + 16, tid);
    sf_hex_u64_encode(c->span_id, pid);
}

int sf_tracectx_set_finish(struct sf_tracectx_set *s)
{
    struct sf_tracectx_pending *p = &s->p;
    struct sf_tracectx *c;

    if (p->finished)
        return s->n;
    p->finished = 1;
    /* tracestate only when the one traceparent is valid; its failure never invalidates it */
    if (p->tp_idx >= 0 && s->ctx[p->tp_idx].valid && p->ts_count > 0) {
        c = &s->ctx[p->tp_idx];
        if (p->ts_bad) {
            ctx_warn(c, "tracestate discarded: %s", p->ts_why);
        } else {
            if (p->ts_len < 48)
                copy_small(c->tracestate, p->ts, p->ts_len + 1);
            else
                memcpy(c->tracestate, p->ts, p->ts_len + 1);
            c->tracestate_truncated = p->ts_truncated != 0;
            if (p->ts_truncated)
                ctx_warn(c,
                         "tracestate truncated to %zu bytes: members dropped (over %d "
                         "characters first, then from the right)",
                         p->ts_len, TS_BIG);
        }
    }
    if (p->b3_seen && (c = new_ctx(s)) != NULL)
        finish_b3(c, p);
    if (p->dd_seen && (c = new_ctx(s)) != NULL)
        finish_datadog(c, p);
    return s->n;
}

int sf_tracectx_set_preferred(const struct sf_tracectx_set *s)
{
    /* rank in the order traceparent, b3-single, b3-multi, grpc-trace-bin, uber-trace-id,
     * x-amzn-trace-id, datadog; 0: never picked.  One pass: the lowest rank, then the
     * lowest index. */
    static const unsigned char rank[SF_CTX_NFORMATS] = {
        [SF_CTX_TRACEPARENT] = 1,    [SF_CTX_B3_SINGLE] = 2, [SF_CTX_B3_MULTI] = 3,
        [SF_CTX_GRPC_TRACE_BIN] = 4, [SF_CTX_UBER] = 5,      [SF_CTX_XRAY] = 6,
        [SF_CTX_DATADOG] = 7};
    unsigned best_rank = 8;
    int best = -1;

    for (int i = 0; i < s->n; i++) {
        const struct sf_tracectx *c = &s->ctx[i];
        unsigned r = (unsigned)c->format < SF_CTX_NFORMATS ? rank[c->format] : 0;
        if (r != 0 && r < best_rank && c->valid && c->span_id[0]) {
            if (r == 1)
                return i; /* nothing ranks higher */
            best = i;
            best_rank = r;
        }
    }
    return best;
}

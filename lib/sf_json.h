/* sf_json.h - JSON output: string escaping (RFC 8259) and a streaming writer,
 * compact (NDJSON, exports) or indented (reports read by people).
 *
 * One escaper and one writer for every tool that writes JSON.
 * Strings are written as UTF-8 as given; control characters, '"' and '\\' are
 * escaped; bytes that are not valid UTF-8 are written as \u00XX of the byte, so
 * the output is always valid JSON even for binary header values.
 *
 *   struct sf_jw w;
 *   sf_jw_init(&w, stdout);
 *   sf_jw_obj(&w, NULL);                 // {
 *   sf_jw_str(&w, "traceId", id);        //   "traceId":"..."
 *   sf_jw_arr(&w, "spans"); ... sf_jw_end(&w);
 *   sf_jw_end(&w);                       // }
 *   sf_jw_finish(&w);                    // newline; -1 if the stream failed
 *
 * sf_jw_init_pretty(&w, f, 2, 10) writes the same calls indented: every member on
 * its own line, two spaces a level, `"key": value`, numbers with 10 significant
 * digits; an array opened with sf_jw_arr_inline() stays on one line, `[1, 2]`,
 * with everything inside it.  Empty containers are `{}` and `[]` in both modes.
 * Nesting has no fixed limit (a flame graph's hierarchy is as deep as its stacks).
 */
#ifndef SF_JSON_H
#define SF_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sf_vec.h"

/* Length (1..4) of the valid UTF-8 sequence at s[0..n), or 0 when it is not valid
 * UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not). */
size_t sf_json_utf8_len(const unsigned char *s, size_t n);

/* Write s[0..n) as a quoted JSON string. */
void sf_json_str(FILE *f, const char *s, size_t n);

#define SF_JW_LEVELS 32 /* levels kept in the struct; deeper ones on the heap */

struct sf_jw {
    FILE *f;
    int depth;
    int indent;                     /* spaces a level; 0: compact */
    int num_prec;                   /* significant digits of sf_jw_num */
    int failed;                     /* a deeper level could not be allocated */
    unsigned char lv[SF_JW_LEVELS]; /* each level's SF_JW_* flags (sf_json.c) */
    unsigned char *deep;            /* levels SF_JW_LEVELS.. (sf_jw_finish frees it) */
    size_t deep_cap;
};

/* Compact writer: no whitespace at all, numbers with 17 significant digits
 * (a double survives the round trip). */
void sf_jw_init(struct sf_jw *w, FILE *f);
/* Indented writer: indent (1..16) spaces a level, num_prec (1..17) significant
 * digits for sf_jw_num; values out of range are clamped. */
void sf_jw_init_pretty(struct sf_jw *w, FILE *f, int indent, int num_prec);
/* key: member name inside an object; NULL inside an array or at the top level. */
void sf_jw_obj(struct sf_jw *w, const char *key);
void sf_jw_arr(struct sf_jw *w, const char *key);
/* An array kept on one line in pretty mode (short lists such as indexes); the
 * same as sf_jw_arr in compact mode. */
void sf_jw_arr_inline(struct sf_jw *w, const char *key);
void sf_jw_end(struct sf_jw *w); /* closes the innermost object or array */
/* After the top-level value: writes the newline and frees what levels deeper than
 * SF_JW_LEVELS took (a writer that went that deep must be finished).  Returns 0, or
 * -1 when the stream has had an error (ferror) or a level could not be allocated,
 * so one check covers every write. */
int sf_jw_finish(struct sf_jw *w);
void sf_jw_str(struct sf_jw *w, const char *key, const char *s); /* NULL -> null */
void sf_jw_strn(struct sf_jw *w, const char *key, const char *s, size_t n);
void sf_jw_int(struct sf_jw *w, const char *key, int64_t v);
void sf_jw_int_str(struct sf_jw *w, const char *key, int64_t v); /* 64-bit as "decimal" */
/* %.<num_prec>g; NaN and infinities -> null, -0 -> 0 */
void sf_jw_num(struct sf_jw *w, const char *key, double v);
void sf_jw_bool(struct sf_jw *w, const char *key, int v);
void sf_jw_null(struct sf_jw *w, const char *key);
/* Write pre-formatted JSON text as a value (caller guarantees validity). */
void sf_jw_raw(struct sf_jw *w, const char *key, const char *json);

/* ---- the fast path: records built in a buffer (NDJSON at millions of values a second)
 *
 * The same JSON as sf_json_str with one difference kept for the NDJSON contract
 * (docs/pcap2spans.md): every control byte and DEL is \u00XX (no \n short forms).
 * Values are written through a cursor `o` into b->buf:
 *
 *   char *o = sf_jb_room(&b, b.buf + b.len, 0);
 *   SF_JB_LIT(o, "{\"id\":");
 *   o = sf_jb_int(o, 42);
 *   SF_JB_LIT(o, ",\"name\":");
 *   o = sf_jb_str(&b, o, name);      // NULL -> null
 *   SF_JB_LIT(o, "}\n");
 *   sf_jb_done(&b, o);
 *
 * Every variable-length write (sf_jb_str, sf_jb_plain) makes its own room and leaves
 * at least SF_JB_SLACK bytes free after it; the fixed-size writes between two of them
 * (keys, integers, ids: well under 1 KB in a row) need no check.  The buffer goes to
 * b->f with fwrite when it fills (sf_jb_room) and at sf_jb_flush. */
#define SF_JB_SLACK 4096

struct sf_jb {
    char *buf;
    size_t len, cap;
    FILE *f;
};

/* cap bytes of buffer (at least 4 * SF_JB_SLACK); returns 0 or -1 (no memory). */
int sf_jb_init(struct sf_jb *b, FILE *f, size_t cap);
void sf_jb_flush(struct sf_jb *b);
void sf_jb_free(struct sf_jb *b); /* flushes first */

#define SF_JB_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) += sizeof(lit) - 1)

/* Sync the length to o, flush when fewer than need + SF_JB_SLACK bytes are free;
 * returns the cursor. */
static inline char *sf_jb_room(struct sf_jb *b, char *o, size_t need)
{
    b->len = (size_t)(o - b->buf);
    if (__builtin_expect(b->cap - b->len < need + SF_JB_SLACK, 0))
        sf_jb_flush(b);
    return b->buf + b->len;
}

/* End of a record: the length follows the cursor. */
static inline void sf_jb_done(struct sf_jb *b, char *o)
{
    b->len = (size_t)(o - b->buf);
}

extern const char sf_json_d2[201]; /* "00" "01" ... "99" */

/* Exactly 8 digits of v < 10^8, with 32-bit arithmetic. */
static inline void sf_jb_put8(char *p, uint32_t v)
{
    uint32_t a = v / 10000, c = v % 10000;

    memcpy(p, sf_json_d2 + 2 * (a / 100), 2);
    memcpy(p + 2, sf_json_d2 + 2 * (a % 100), 2);
    memcpy(p + 4, sf_json_d2 + 2 * (c / 100), 2);
    memcpy(p + 6, sf_json_d2 + 2 * (c % 100), 2);
}

/* v < 10^8 without leading zeros. */
static inline char *sf_jb_small(char *o, uint32_t v)
{
    size_t nd;
    char *p;

    if (v < 10) {
        *o++ = (char)('0' + v);
        return o;
    }
    nd = v < 10000     ? (v < 100    ? 2
                          : v < 1000 ? 3
                                     : 4)
         : v < 1000000 ? (v < 100000 ? 5 : 6)
                       : (v < 10000000 ? 7 : 8);
    o += nd;
    p = o;
    while (v >= 100) {
        p -= 2;
        memcpy(p, sf_json_d2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, sf_json_d2 + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    return o;
}

/* Decimal in 8-digit groups (timestamps have 19 digits); at most 20 bytes. */
static inline char *sf_jb_int(char *o, int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    if (v < 0)
        *o++ = '-';
    if (u < 100000000)
        return sf_jb_small(o, (uint32_t)u);
    if (u < UINT64_C(10000000000000000)) {
        o = sf_jb_small(o, (uint32_t)(u / 100000000));
    } else {
        o = sf_jb_small(o, (uint32_t)(u / UINT64_C(10000000000000000)));
        sf_jb_put8(o, (uint32_t)(u / 100000000 % 100000000));
        o += 8;
    }
    sf_jb_put8(o, (uint32_t)(u % 100000000));
    return o + 8;
}

/* key, then the integer, or null when v == nul */
#define SF_JB_INT(o, key, v, nul)                                                                  \
    do {                                                                                           \
        int64_t v_ = (v);                                                                          \
        SF_JB_LIT(o, key);                                                                         \
        if (v_ == (nul))                                                                           \
            SF_JB_LIT(o, "null");                                                                  \
        else if ((uint64_t)v_ < 10) /* flags and counts: most values */                            \
            *o++ = (char)('0' + v_);                                                               \
        else                                                                                       \
            o = sf_jb_int(o, v_);                                                                  \
    } while (0)

/* A hex id held in a char[width + 1], width a multiple of 8; "" is null.  At most
 * width + 2 bytes. */
static inline char *sf_jb_id(char *o, const char *s, size_t width)
{
    uint64_t x, acc = 0;
    size_t n = width;

    if (s[0] == 0) {
        SF_JB_LIT(o, "null");
        return o;
    }
    for (size_t i = 0; i < width; i += 8) {
        memcpy(&x, s + i, 8);
        acc |= sf_word_has_zero(x);
    }
    *o++ = '"';
    if (acc || s[width] != 0) {
        n = strnlen(s, width);
        memcpy(o, s, n);
    } else {
        memcpy(o, s, width); /* the usual full-width id: a fixed-size copy */
    }
    o += n;
    *o++ = '"';
    return o;
}

/* 1 when s[0..n) needs no escaping (see above: bytes >= 0x80 count as needing it). */
int sf_jb_clean(const char *s, size_t n);
/* A quoted string that needs escaping, or is too long for the fast path. */
char *sf_jb_str_slow(struct sf_jb *b, char *o, const char *s, size_t n);

/* s, or null; `check`: escape what needs it, else the caller knows nothing does. */
static inline char *sf_jb_quote(struct sf_jb *b, char *o, const char *s, int check)
{
    size_t n;

    if (s == NULL) {
        SF_JB_LIT(o, "null");
        return o;
    }
    n = strlen(s);
    if (n > b->cap / 8 || (check && !sf_jb_clean(s, n)))
        return sf_jb_str_slow(b, o, s, n);
    o = sf_jb_room(b, o, n + 2);
    *o++ = '"';
    memcpy(o, s, n);
    o += n;
    *o++ = '"';
    return o;
}

/* A JSON string, or null.  Inline: most strings need no escaping. */
static inline char *sf_jb_str(struct sf_jb *b, char *o, const char *s)
{
    return sf_jb_quote(b, o, s, 1);
}

/* A string the caller knows needs no escaping (static names, addresses), or null. */
static inline char *sf_jb_plain(struct sf_jb *b, char *o, const char *s)
{
    return sf_jb_quote(b, o, s, 0);
}

#endif

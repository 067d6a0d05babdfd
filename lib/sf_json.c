/* sf_json.c - JSON escaping and the compact and indented writer (see sf_json.h). */
#include "sf_json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t sf_json_utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* The escape of byte c (not valid UTF-8 text by itself) into e[0..6): short forms for
 * \n \r \t when `short_forms`, \u00XX for every other control byte.  Returns its length. */
static size_t esc_byte(char *e, unsigned char c, int short_forms)
{
    static const char hex[] = "0123456789abcdef";

    if (c == '"' || c == '\\' || (short_forms && (c == '\n' || c == '\r' || c == '\t'))) {
        e[0] = '\\';
        e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : (char)c;
        return 2;
    }
    memcpy(e, "\\u00", 4);
    e[4] = hex[c >> 4];
    e[5] = hex[c & 15];
    return 6;
}

void sf_json_str(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + n, *run = s;
    char e[6];

    putc('"', f);
    while (s < end) {
        size_t l;
        if (*s >= 0x20 && *s != '"' && *s != '\\' && *s < 0x80) {
            s++;
            continue;
        }
        if (*s >= 0x80 && (l = sf_json_utf8_len(s, (size_t)(end - s))) > 0) {
            s += l;
            continue;
        }
        fwrite(run, 1, (size_t)(s - run), f);
        l = esc_byte(e, *s, 1);
        fwrite(e, 1, l, f);
        run = ++s;
    }
    fwrite(run, 1, (size_t)(s - run), f);
    putc('"', f);
}

/* ---- the fast path (sf_jb) ---------------------------------------------------------- */

const char sf_json_d2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

int sf_jb_init(struct sf_jb *b, FILE *f, size_t cap)
{
    b->cap = cap < 4 * SF_JB_SLACK ? 4 * SF_JB_SLACK : cap;
    b->len = 0;
    b->f = f;
    b->buf = malloc(b->cap);
    return b->buf ? 0 : -1;
}

void sf_jb_flush(struct sf_jb *b)
{
    if (b->len)
        fwrite(b->buf, 1, b->len, b->f);
    b->len = 0;
}

void sf_jb_free(struct sf_jb *b)
{
    if (b->buf)
        sf_jb_flush(b);
    free(b->buf);
    b->buf = NULL;
}

/* 1 for bytes the fast path escapes (control bytes, DEL, '"', '\\', and >= 0x80,
 * which the slow path keeps when it is valid UTF-8). */
static inline int jb_escape(unsigned char c)
{
    return (unsigned char)(c - 0x20) >= 0x5f || c == '"' || c == '\\';
}

/* Nonzero when one of the 8 bytes of x needs escaping (see jb_escape). */
static inline uint64_t needs_escape8(uint64_t x)
{
    return ((x - SF_ONES * 0x20) & ~x & SF_HIGHS) | (x & SF_HIGHS) |
           sf_word_has_zero(x ^ (SF_ONES * 0x7f)) | sf_word_has_zero(x ^ (SF_ONES * '"')) |
           sf_word_has_zero(x ^ (SF_ONES * '\\'));
}

/* The bytes of v that need escaping: as signed bytes, control bytes and non-ASCII are
 * both below 0x20, so one signed compare covers them. */
#define JB_BAD16(v) (((v16s)(v) < 0x20) | ((v) == 0x7f) | ((v) == '"') | ((v) == '\\'))

/* 16 bytes per step, the last step overlapping the one before it (no byte loop for the
 * tail); short strings in one or two 8-byte words, padded with a letter below 8 bytes. */
int sf_jb_clean(const char *s, size_t n)
{
    uint64_t x, y;

    if (n >= 16) {
        v16s bad = {0};
        v16u v;

        for (size_t i = 0; i + 16 < n; i += 16) {
            memcpy(&v, s + i, 16);
            bad |= JB_BAD16(v);
        }
        memcpy(&v, s + n - 16, 16);
        bad |= JB_BAD16(v);
        return !sf_vec_any(bad);
    }
    if (n >= 8) {
        memcpy(&x, s, 8);
        memcpy(&y, s + n - 8, 8);
        return !(needs_escape8(x) | needs_escape8(y));
    }
    x = SF_ONES * 'a';
    memcpy(&x, s, n);
    return !needs_escape8(x);
}

/* Input bytes escaped per sf_jb_room: at most 6 output bytes each, plus a UTF-8
 * sequence that starts in the step and ends after it. */
#define JB_STEP 1024

char *sf_jb_str_slow(struct sf_jb *b, char *o, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    o = sf_jb_room(b, o, 1);
    *o++ = '"';
    while (i < n) {
        size_t stop = n - i > JB_STEP ? i + JB_STEP : n;
        o = sf_jb_room(b, o, 6 * (stop - i) + 8);
        for (; i < stop; i++) {
            size_t l;
            if (!jb_escape(u[i])) {
                *o++ = (char)u[i];
            } else if (u[i] >= 0x80 && (l = sf_json_utf8_len(u + i, n - i)) > 0) {
                memcpy(o, u + i, l);
                o += l;
                i += l - 1;
            } else {
                o += esc_byte(o, u[i], 0);
            }
        }
    }
    *o++ = '"';
    return o;
}

/* A level's flags: no member written yet, written on one line (pretty mode), an
 * object (closed by '}') rather than an array. */
enum { SF_JW_FIRST = 1, SF_JW_INL = 2, SF_JW_OBJ = 4 };

static unsigned char *level(struct sf_jw *w, int d)
{
    assert(d >= 0 && (d < SF_JW_LEVELS || (size_t)(d - SF_JW_LEVELS) < w->deep_cap));
    return d < SF_JW_LEVELS ? &w->lv[d] : &w->deep[d - SF_JW_LEVELS];
}

void sf_jw_init(struct sf_jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->indent = 0;
    w->num_prec = 17;
    w->failed = 0;
    w->lv[0] = SF_JW_FIRST;
    w->deep = NULL;
    w->deep_cap = 0;
}

void sf_jw_init_pretty(struct sf_jw *w, FILE *f, int indent, int num_prec)
{
    sf_jw_init(w, f);
    w->indent = indent < 1 ? 1 : indent > 16 ? 16 : indent;
    w->num_prec = num_prec < 1 ? 1 : num_prec > 17 ? 17 : num_prec;
}

/* Pretty mode: start a new line at the indentation of level depth. */
static void newline(struct sf_jw *w, int depth)
{
    fprintf(w->f, "\n%*s", w->indent * depth, "");
}

/* Separator, line break and key before a value. */
static void sep(struct sf_jw *w, const char *key)
{
    int d = w->depth;
    unsigned char *l = level(w, d);

    if (!(*l & SF_JW_FIRST))
        fputs(*l & SF_JW_INL ? ", " : ",", w->f);
    *l &= (unsigned char)~SF_JW_FIRST;
    if (w->indent && d > 0 && !(*l & SF_JW_INL))
        newline(w, d);
    if (key) {
        sf_json_str(w->f, key, strlen(key));
        fputs(w->indent ? ": " : ":", w->f);
    }
}

/* Room for level d: the struct's first SF_JW_LEVELS, then a heap array that doubles. */
static int reserve_level(struct sf_jw *w, int d)
{
    size_t need = d < SF_JW_LEVELS ? 0 : (size_t)(d - SF_JW_LEVELS) + 1;
    unsigned char *p;
    size_t nc;

    if (need <= w->deep_cap)
        return 0;
    nc = w->deep_cap ? 2 * w->deep_cap : SF_JW_LEVELS;
    if ((p = realloc(w->deep, nc)) == NULL)
        return -1;
    w->deep = p;
    w->deep_cap = nc;
    return 0;
}

static void open_level(struct sf_jw *w, const char *key, int c, int inl)
{
    unsigned char up;

    sep(w, key);
    putc(c, w->f);
    if (reserve_level(w, w->depth + 1) < 0) {
        w->failed = 1; /* sf_jw_finish says so; the text from here is not JSON */
        return;
    }
    up = *level(w, w->depth);
    w->depth++;
    /* what sits inside a one-line array stays on that line */
    *level(w, w->depth) = (unsigned char)(SF_JW_FIRST | (c == '{' ? SF_JW_OBJ : 0) |
                                          (w->indent && (inl || (up & SF_JW_INL)) ? SF_JW_INL : 0));
}

void sf_jw_obj(struct sf_jw *w, const char *key)
{
    open_level(w, key, '{', 0);
}

void sf_jw_arr(struct sf_jw *w, const char *key)
{
    open_level(w, key, '[', 0);
}

void sf_jw_arr_inline(struct sf_jw *w, const char *key)
{
    open_level(w, key, '[', 1);
}

void sf_jw_end(struct sf_jw *w)
{
    int d = w->depth;
    unsigned char l;

    if (d == 0)
        return;
    l = *level(w, d);
    w->depth--;
    /* members were written: the bracket goes on its own line; empty: {} or [] */
    if (w->indent && !(l & SF_JW_FIRST) && !(l & SF_JW_INL))
        newline(w, w->depth);
    putc(l & SF_JW_OBJ ? '}' : ']', w->f);
}

int sf_jw_finish(struct sf_jw *w)
{
    int failed = w->failed;

    putc('\n', w->f);
    free(w->deep);
    w->deep = NULL;
    w->deep_cap = 0;
    return failed || fflush(w->f) != 0 || ferror(w->f) ? -1
                                                       : 0; /* buffered errors show at the flush */
}

void sf_jw_str(struct sf_jw *w, const char *key, const char *s)
{
    if (s == NULL) {
        sf_jw_null(w, key);
        return;
    }
    sf_jw_strn(w, key, s, strlen(s));
}

void sf_jw_strn(struct sf_jw *w, const char *key, const char *s, size_t n)
{
    sep(w, key);
    sf_json_str(w->f, s, n);
}

void sf_jw_int(struct sf_jw *w, const char *key, int64_t v)
{
    sep(w, key);
    fprintf(w->f, "%" PRId64, v);
}

void sf_jw_int_str(struct sf_jw *w, const char *key, int64_t v)
{
    sep(w, key);
    fprintf(w->f, "\"%" PRId64 "\"", v);
}

void sf_jw_num(struct sf_jw *w, const char *key, double v)
{
    sep(w, key);
    if (!isfinite(v))
        fputs("null", w->f);
    else if (v == 0)
        putc('0', w->f); /* -0 too: "-0" surprises readers and diffs */
    else
        fprintf(w->f, "%.*g", w->num_prec, v);
}

void sf_jw_bool(struct sf_jw *w, const char *key, int v)
{
    sep(w, key);
    fputs(v ? "true" : "false", w->f);
}

void sf_jw_null(struct sf_jw *w, const char *key)
{
    sep(w, key);
    fputs("null", w->f);
}

void sf_jw_raw(struct sf_jw *w, const char *key, const char *json)
{
    sep(w, key);
    fputs(json, w->f);
}

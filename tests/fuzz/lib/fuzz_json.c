/* fuzz_json.c - libFuzzer target for the lib/sf_json writer, compact and indented.
 *
 * The input is a program: each byte picks a call (open an object or an array, inline or
 * not, close, a string of the next bytes, an integer, a number, true/false/null), keys
 * are slices of the input (any bytes, invalid UTF-8 included), and the first byte picks
 * the mode.  Whatever the calls, the output must be one valid JSON text (RFC 8259), in
 * valid UTF-8, followed by the newline of sf_jw_finish: checked here by a strict
 * recursive-descent reader with its own UTF-8 decoder, which knows nothing of the
 * writer. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_json.h"

/* Deeper than the writer's SF_JW_LEVELS, so that its heap levels are exercised too. */
#define FUZZ_DEPTH (3 * SF_JW_LEVELS)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the checker -------------------------------------------------------------------- */

struct rd {
    const unsigned char *p, *end;
    int depth;
};

static void ws(struct rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

static int lit(struct rd *r, const char *s)
{
    size_t n = strlen(s);

    if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0)
        return -1;
    r->p += n;
    return 0;
}

static int hex4(struct rd *r)
{
    for (int i = 0; i < 4; i++, r->p++)
        if (r->p >= r->end || !((*r->p >= '0' && *r->p <= '9') || (*r->p >= 'a' && *r->p <= 'f') ||
                                (*r->p >= 'A' && *r->p <= 'F')))
            return -1;
    return 0;
}

/* Length of the UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF), 0 when it is not one: the checker's own, not the writer's. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], cp;
    size_t n;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static int string(struct rd *r)
{
    if (r->p >= r->end || *r->p++ != '"')
        return -1;
    while (r->p < r->end && *r->p != '"') {
        size_t u;

        if (*r->p < 0x20)
            return -1; /* raw control character */
        if (*r->p == '\\') {
            if (++r->p >= r->end)
                return -1;
            if (*r->p == 'u') {
                r->p++;
                if (hex4(r) < 0)
                    return -1;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *r->p) || *r->p == 0)
                return -1;
            r->p++;
            continue;
        }
        if ((u = utf8_seq(r->p, r->end)) == 0)
            return -1;
        r->p += u;
    }
    return lit(r, "\"");
}

static int digits(struct rd *r)
{
    const unsigned char *s = r->p;

    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        r->p++;
    return r->p > s ? 0 : -1;
}

static int number(struct rd *r)
{
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (r->p < r->end && *r->p == '0')
        r->p++;
    else if (digits(r) < 0)
        return -1;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (digits(r) < 0)
            return -1;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (digits(r) < 0)
            return -1;
    }
    return 0;
}

static int value(struct rd *r);

/* object or array after its opening bracket */
static int members(struct rd *r, int obj)
{
    char close = obj ? '}' : ']';

    ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return 0;
    }
    for (;;) {
        if (obj) {
            ws(r);
            if (string(r) < 0)
                return -1;
            ws(r);
            if (lit(r, ":") < 0)
                return -1;
        }
        if (value(r) < 0)
            return -1;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        return r->p < r->end && *r->p++ == close ? 0 : -1;
    }
}

static int value(struct rd *r)
{
    int rc;

    ws(r);
    if (r->p >= r->end)
        return -1;
    switch (*r->p) {
    case '{':
    case '[':
        if (++r->depth > FUZZ_DEPTH)
            return -1;
        rc = members(r, *r->p++ == '{');
        r->depth--;
        return rc;
    case '"':
        return string(r);
    case 't':
        return lit(r, "true");
    case 'f':
        return lit(r, "false");
    case 'n':
        return lit(r, "null");
    default:
        return number(r);
    }
}

/* ---- the program -------------------------------------------------------------------- */

struct prog {
    const uint8_t *p, *end;
    char buf[2][64]; /* key, string value */
};

static int next(struct prog *g)
{
    return g->p < g->end ? *g->p++ : -1;
}

/* The next up to 0..31 input bytes as a NUL-terminated string (a NUL byte ends it). */
static const char *slice(struct prog *g, int which)
{
    int n = next(g);
    size_t i = 0;

    n = n < 0 ? 0 : n & 31;
    while ((int)i < n && g->p < g->end && *g->p != 0)
        g->buf[which][i++] = (char)*g->p++;
    g->buf[which][i] = 0;
    return g->buf[which];
}

static int64_t i64(struct prog *g)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | (uint64_t)(next(g) & 0xff);
    return (int64_t)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const double nums[] = {0.0,
                                  -0.0,
                                  1.5,
                                  -1e300,
                                  1e-300,
                                  123456789.123456789,
                                  NAN,
                                  INFINITY,
                                  -INFINITY,
                                  5e-324,
                                  1.7976931348623157e308};
    struct prog g = {data, data + size, {{0}}};
    struct sf_jw w;
    char *out = NULL;
    size_t len = 0;
    int mode = next(&g), depth = 1, op;
    unsigned char is_arr[FUZZ_DEPTH] = {0};
    FILE *f;

    if (size > 4096 || (f = open_memstream(&out, &len)) == NULL)
        return 0;
    if (mode >= 0 && (mode & 1))
        sf_jw_init_pretty(&w, f, 1 + (mode >> 1) % 4, 1 + (mode >> 3) % 17);
    else
        sf_jw_init(&w, f);
    sf_jw_obj(&w, NULL);
    while ((op = next(&g)) >= 0) {
        /* a member of an object has a key, an element of an array none */
        const char *key = is_arr[depth - 1] ? NULL : slice(&g, 0);

        switch (op % 11) {
        case 0:
        case 1:
        case 2:
            if (depth >= FUZZ_DEPTH - 1) /* past the struct's levels, onto the heap */
                break;
            if (op % 11 == 0)
                sf_jw_obj(&w, key);
            else if (op % 11 == 1)
                sf_jw_arr(&w, key);
            else
                sf_jw_arr_inline(&w, key);
            is_arr[depth++] = op % 11 != 0;
            break;
        case 3:
            if (depth > 1) {
                sf_jw_end(&w);
                depth--;
            }
            break;
        case 4:
            sf_jw_str(&w, key, slice(&g, 1));
            break;
        case 5: {
            const char *s = slice(&g, 1);
            sf_jw_strn(&w, key, s, strlen(s) + (next(&g) > 200)); /* with its NUL byte */
            break;
        }
        case 6:
            sf_jw_int(&w, key, i64(&g));
            break;
        case 7:
            sf_jw_int_str(&w, key, i64(&g));
            break;
        case 8:
            sf_jw_num(&w, key, nums[(unsigned)next(&g) % (sizeof(nums) / sizeof(nums[0]))]);
            break;
        case 9:
            sf_jw_bool(&w, key, next(&g) & 1);
            break;
        default:
            sf_jw_null(&w, key);
            break;
        }
    }
    while (depth-- > 0)
        sf_jw_end(&w);
    if (sf_jw_finish(&w) < 0)
        abort();
    fclose(f);
    {
        struct rd r = {(const unsigned char *)out, (const unsigned char *)out + len, 0};

        if (len == 0 || out[len - 1] != '\n')
            abort(); /* sf_jw_finish ends the text with a newline */
        r.end--;
        if (value(&r) < 0)
            abort();
        ws(&r);
        if (r.p != r.end)
            abort(); /* one JSON text, nothing after it */
    }
    free(out);
    return 0;
}

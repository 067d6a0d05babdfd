/* sf_json.c - JSON escaping and the compact and indented writer (see sf_json.h). */
#include "sf_json.h"

#include <inttypes.h>
#include <math.h>
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

void sf_json_str(FILE *f, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str, *end = s + n, *run = s;

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
        switch (*s) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            fputs("\\u00", f);
            putc(hex[*s >> 4], f);
            putc(hex[*s & 15], f);
        }
        run = ++s;
    }
    fwrite(run, 1, (size_t)(s - run), f);
    putc('"', f);
}

void sf_jw_init(struct sf_jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->indent = 0;
    w->num_prec = 17;
    w->first[0] = 1;
    w->inl[0] = 0;
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

    if (!w->first[d])
        fputs(w->inl[d] ? ", " : ",", w->f);
    w->first[d] = 0;
    if (w->indent && d > 0 && !w->inl[d])
        newline(w, d);
    if (key) {
        sf_json_str(w->f, key, strlen(key));
        fputs(w->indent ? ": " : ":", w->f);
    }
}

static void open_level(struct sf_jw *w, const char *key, int c, int inl)
{
    sep(w, key);
    putc(c, w->f);
    /* deeper than the cap: keep writing at the last level (output stays valid
     * as long as the caller closes what it opened) */
    if (w->depth < SF_JW_MAX_DEPTH - 1)
        w->depth++;
    w->first[w->depth] = 1;
    w->close[w->depth] = c == '{' ? '}' : ']';
    /* what sits inside a one-line array stays on that line */
    w->inl[w->depth] = w->indent && (inl || w->inl[w->depth - 1]);
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

    if (d == 0)
        return;
    w->depth--;
    /* members were written: the bracket goes on its own line; empty: {} or [] */
    if (w->indent && !w->first[d] && !w->inl[d])
        newline(w, w->depth);
    putc(w->close[d], w->f);
}

int sf_jw_finish(struct sf_jw *w)
{
    putc('\n', w->f);
    return fflush(w->f) != 0 || ferror(w->f) ? -1 : 0; /* buffered errors show at the flush */
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

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
 */
#ifndef SF_JSON_H
#define SF_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length (1..4) of the valid UTF-8 sequence at s[0..n), or 0 when it is not valid
 * UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not). */
size_t sf_json_utf8_len(const unsigned char *s, size_t n);

/* Write s[0..n) as a quoted JSON string. */
void sf_json_str(FILE *f, const char *s, size_t n);

#define SF_JW_MAX_DEPTH 32

struct sf_jw {
    FILE *f;
    int depth;
    int indent;                           /* spaces a level; 0: compact */
    int num_prec;                         /* significant digits of sf_jw_num */
    unsigned char first[SF_JW_MAX_DEPTH]; /* no member written yet at this level */
    unsigned char inl[SF_JW_MAX_DEPTH];   /* level written on one line (pretty mode) */
    char close[SF_JW_MAX_DEPTH];          /* '}' or ']' closing each level */
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
/* After the top-level value: writes the newline.  Returns 0, or -1 when the
 * stream has had an error (ferror), so one check covers every write. */
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

#endif

/* sf_json.h - JSON output: string escaping (RFC 8259) and a compact streaming writer.
 *
 * One escaper for every tool that writes JSON (NDJSON spans, reports, exports).
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
    unsigned char first[SF_JW_MAX_DEPTH]; /* no member written yet at this level */
    char close[SF_JW_MAX_DEPTH];          /* '}' or ']' closing each level */
};

void sf_jw_init(struct sf_jw *w, FILE *f);
/* key: member name inside an object; NULL inside an array or at the top level. */
void sf_jw_obj(struct sf_jw *w, const char *key);
void sf_jw_arr(struct sf_jw *w, const char *key);
void sf_jw_end(struct sf_jw *w); /* closes the innermost object or array */
void sf_jw_str(struct sf_jw *w, const char *key, const char *s); /* NULL -> null */
void sf_jw_strn(struct sf_jw *w, const char *key, const char *s, size_t n);
void sf_jw_int(struct sf_jw *w, const char *key, int64_t v);
void sf_jw_int_str(struct sf_jw *w, const char *key, int64_t v); /* 64-bit as "decimal" */
void sf_jw_num(struct sf_jw *w, const char *key, double v);      /* NaN/inf -> null */
void sf_jw_bool(struct sf_jw *w, const char *key, int v);
void sf_jw_null(struct sf_jw *w, const char *key);
/* Write pre-formatted JSON text as a value (caller guarantees validity). */
void sf_jw_raw(struct sf_jw *w, const char *key, const char *json);

#endif

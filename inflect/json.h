/* json.h - a small streaming JSON writer for inflect's summary.
 *
 * Pretty-printed with two-space indentation; arrays opened "inline" stay on one
 * line (index lists).  Numbers are printed with %.10g; NaN and infinities become
 * null, so the output is always valid JSON and byte-stable across runs.
 */
#ifndef INFLECT_JSON_H
#define INFLECT_JSON_H

#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json_w {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH];  /* members written at each level */
    int inl[JSON_MAX_DEPTH];    /* level is an inline array */
    char close[JSON_MAX_DEPTH]; /* bracket that closes each level */
};

void json_init(struct json_w *w, FILE *f);
/* key is the member name inside an object, NULL inside an array or at top level. */
void json_obj(struct json_w *w, const char *key);
void json_arr(struct json_w *w, const char *key, int inline_);
void json_end(struct json_w *w); /* closes the innermost object or array */
void json_num(struct json_w *w, const char *key, double v);
void json_int(struct json_w *w, const char *key, long long v);
void json_str(struct json_w *w, const char *key, const char *s);
void json_bool(struct json_w *w, const char *key, int v);
void json_null(struct json_w *w, const char *key);
/* After the top-level value: newline. Returns 0, or -1 if the stream had an error. */
int json_finish(struct json_w *w);

#endif

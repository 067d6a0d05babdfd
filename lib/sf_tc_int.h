/* sf_tc_int.h - what the files of lib/sf_tracectx share (not for callers: see sf_tracectx.h).
 *
 *   sf_tracectx.c     the header set: header ids, the table of headers and formats, finish
 *   sf_tc_common.c    context helpers every format uses (fail, warn, raw, id checks, split)
 *   sf_tc_fast.h      the SWAR fast paths, each beside the general path it is checked against
 *   sf_tc_w3c.c       traceparent, tracestate      sf_tc_b3.c       b3 single and multi
 *   sf_tc_grpc.c      grpc-trace-bin               sf_tc_jaeger.c   uber-trace-id
 *   sf_tc_xray.c      X-Amzn-Trace-Id              sf_tc_datadog.c  x-datadog-*
 *   sf_tc_baggage.c   W3C baggage                  sf_tc_sw8.c      SkyWalking sw8
 *
 * The formats and their headers are listed once, in sf_tc_formats.h.
 */
#ifndef SF_TC_INT_H
#define SF_TC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sf_tc_formats.h"
#include "sf_tracectx.h"

/* Header ids (sf_tracectx_header_id), in SF_CTX_HEADERS order. */
enum sf_tc_hdr {
#define SF_TC_HDR_ID_(id, lower, shown, fmt, add) SF_TC_H_##id,
    SF_CTX_HEADERS(SF_TC_HDR_ID_)
#undef SF_TC_HDR_ID_
        SF_TC_H_COUNT
};

/* One format: the table row of sf_tracectx.c. */
struct sf_tc_format {
    const char *name;   /* as stored in contexts.format */
    unsigned char rank; /* sf_tracectx_set_preferred's order, 0 never */
    int (*parse)(struct sf_tracectx *c, const char *v, size_t n); /* one text value, or NULL */
};
extern const struct sf_tc_format sf_tc_formats[SF_CTX_NFORMATS];

/* One header a format reads: the table row of sf_tracectx.c. */
struct sf_tc_header {
    const char *name;  /* lowercase */
    const char *shown; /* as raw and errors show it */
    unsigned char len;
    enum sf_ctx_format format;
    void (*add)(struct sf_tracectx_set *s, int h, const char *v, size_t n);
};
extern const struct sf_tc_header sf_tc_headers[SF_TC_H_COUNT];

/* The add handler of every header (the values as bytes, never NULL): sf_tc_add_single (a
 * new context from the format's parse) or the format file's own. */
#define SF_TC_ADD_DECL_(id, lower, shown, fmt, add)                                                \
    void add(struct sf_tracectx_set *s, int h, const char *v, size_t n);
SF_CTX_HEADERS(SF_TC_ADD_DECL_)
#undef SF_TC_ADD_DECL_

/* Completing the multi-header formats at sf_tracectx_set_finish, in this order. */
void sf_tc_finish_tracestate(struct sf_tracectx_set *s);
void sf_tc_finish_b3(struct sf_tracectx *c, struct sf_tracectx_pending *p);
void sf_tc_finish_datadog(struct sf_tracectx *c, struct sf_tracectx_pending *p);

/* ---- the set (sf_tracectx.c) ------------------------------------------------------------ */

/* The next free context of the set, or NULL (counted in s->dropped) when it is full. */
struct sf_tracectx *sf_tc_new_ctx(struct sf_tracectx_set *s);
/* Keep the first value of a multi-header format's header i (first value wins). */
void sf_tc_keep_first(char (*vals)[48], size_t *lens, unsigned char *seen, int i, const char *v,
                      size_t n);
/* raw of a multi-header format: "Name: value; Name: value" in header order. */
void sf_tc_raw_multi(struct sf_tracectx *c, int first_hdr, int count, char (*vals)[48],
                     const size_t *lens, unsigned seen);
/* A kept multi-header value must be present, non-empty, not '-' and short enough:
 * 0, or -1 with c failed. */
int sf_tc_pending_ok(struct sf_tracectx *c, const char *fmt, int hdr, const char *val, size_t len);

/* ---- small helpers ---------------------------------------------------------------------- */

static inline int sf_tc_is_ows(int c)
{
    return c == ' ' || c == '\t';
}

static inline int sf_tc_lc(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static inline void sf_tc_trim_ows(const char **v, size_t *n)
{
    while (*n > 0 && sf_tc_is_ows((unsigned char)(*v)[0])) {
        (*v)++;
        (*n)--;
    }
    while (*n > 0 && sf_tc_is_ows((unsigned char)(*v)[*n - 1]))
        (*n)--;
}

/* memcpy for n <= 16 in at most two fixed-size moves (overlapping, within both ranges):
 * no library call for the short copies of the hot path. */
static inline void sf_tc_copy_small16(char *d, const char *s, size_t n)
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
static inline void sf_tc_copy_small(char *d, const char *s, size_t n)
{
    if (n > 16) {
        memcpy(d, s, 16);
        if (n > 32)
            memcpy(d + 16, s + 16, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else {
        sf_tc_copy_small16(d, s, n);
    }
}

/* Callers may pass NULL for an empty value; make it a real empty string. */
#define SF_TC_EMPTY_IF_NULL(v, n)                                                                  \
    do {                                                                                           \
        if ((v) == NULL) {                                                                         \
            (v) = "";                                                                              \
            (n) = 0;                                                                               \
        }                                                                                          \
    } while (0)

/* Case-insensitive compare of s[0..n) with a lowercase literal. */
static inline int sf_tc_eq_lit(const char *s, size_t n, const char *lit)
{
    size_t i;

    for (i = 0; i < n && lit[i]; i++)
        if (sf_tc_lc((unsigned char)s[i]) != lit[i])
            return 0;
    return i == n && lit[i] == 0;
}

/* sf_tc_eq_lit with a string literal: a length mismatch answers at once. */
#define SF_TC_EQ_LIT(s, n, lit) ((n) == sizeof(lit) - 1 && sf_tc_eq_lit(s, n, lit))

/* ---- contexts (sf_tc_common.c) ------------------------------------------------------------ */

static inline void sf_tc_begin(struct sf_tracectx *c, enum sf_ctx_format f)
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

/* Mark *c invalid with a reason; ids are cleared so nothing joins on them. Returns -1. */
__attribute__((format(printf, 2, 3))) int sf_tc_fail(struct sf_tracectx *c, const char *fmt, ...);
/* A note on a context that stays valid (e.g. a discarded tracestate). */
__attribute__((format(printf, 2, 3))) void sf_tc_warn(struct sf_tracectx *c, const char *fmt, ...);
/* Printable form of one byte for error messages. */
void sf_tc_show_char(char *out, size_t outsz, int c);
/* Append text to raw; control bytes (but HTAB) become '?' so raw is always printable text. */
void sf_tc_raw_append(struct sf_tracectx *c, const char *s, size_t n);
/* The start of a text parser that trims: *v NULL is an empty value; c begun as format f
 * with raw the value; then the value OWS-trimmed. */
static inline void sf_tc_start(struct sf_tracectx *c, enum sf_ctx_format f, const char **v,
                               size_t *n)
{
    SF_TC_EMPTY_IF_NULL(*v, *n);
    sf_tc_begin(c, f);
    sf_tc_raw_append(c, *v, *n);
    sf_tc_trim_ows(v, n);
}

/* raw as the hex of n bytes. */
void sf_tc_raw_set_hex(struct sf_tracectx *c, const uint8_t *b, size_t n);

#define SF_TC_ID_ANYCASE 1 /* accept uppercase hex digits too */
#define SF_TC_ID_ZERO_OK 2 /* all zeros allowed (version and flag fields) */

/* Check an id field: lowercase hex (see SF_TC_ID_* opts), of length w1 or w2 (w2 0: only
 * w1), not all zeros.  On failure fills c->error "<what> ..." and returns -1. */
int sf_tc_check_id(struct sf_tracectx *c, const char *what, const char *s, size_t n, size_t w1,
                   size_t w2, int opts);

/* Split s[0..n) at `sep` into at most max fields; returns the number of fields found (which
 * may exceed max: the rest is then in the last field's remainder, uncounted fields too). */
int sf_tc_split(const char *s, size_t n, int sep, const char **f, size_t *fl, int max);

/* Store a checked id (hex digits, n <= width <= 32), left-padded to width with '0'. */
static inline void sf_tc_put_id_lower(char *out, size_t width, const char *s, size_t n)
{
    memcpy(out, "00000000000000000000000000000000", width);
    if (width == 16)
        sf_tc_copy_small16(out + 16 - n, s, n);
    else
        sf_tc_copy_small(out + width - n, s, n);
    out[width] = 0;
}

/* ---- shared by two formats ---------------------------------------------------------------- */

/* Next non-empty member of a ','-separated list (tracestate, x-datadog-tags) from *pos:
 * span without the OWS around it.  Returns 1, or 0 at the end (sf_tc_w3c.c). */
int sf_tc_ts_member(const char *v, size_t n, size_t *pos, const char **m, size_t *ml);

/* ---- the general paths alone, for the differential test of sf_tc_fast.h ------------------- */

/* sf_tracectx_parse_traceparent / _b3_single without their fast path. */
int sf_tc_traceparent_general(struct sf_tracectx *c, const char *v, size_t n);
int sf_tc_b3_single_general(struct sf_tracectx *c, const char *v, size_t n);
/* The members of one tracestate field checked and kept (see sf_tc_w3c.c); fast 0: member by
 * member with the general checker only. */
int sf_tc_ts_scan(const char *v, size_t n, int *members, char *why, size_t whysz, char *out,
                  size_t outsz, size_t *outlen, int *trunc, int fast);

#endif

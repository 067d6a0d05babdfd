/* sf_thin.h - a uniform sample of the requests that a database file and a ClickHouse
 * cluster draw alike (spanfold report --spans-max, its explorer's --page-samples).
 *
 * A key is kept at share f when the top 53 bits of its SHA-256's first 8 bytes (read
 * big-endian, as ch_hash and ClickHouse's reinterpretAsUInt64(reverse(...)) read them),
 * as a number in [0, 1), are below f: x * 2^-53 < f is x < ceil(f * 2^53) for a whole x,
 * both sides exact, so the file's C and the cluster's SQL draw the same keys.
 *
 * A request's key (sf_thin_request) is its span id, cut to SF_THIN_SPAN_ID bytes as the
 * report keeps span ids, so that the spans of one id (whose samples go to the first of
 * them) are kept or left together; without one its trace id; without either its start
 * (req_start_ns) in decimal.  Not the trace id: one trace may hold every request of a
 * run (a client that sends one context), which would defeat the bound.  A request's
 * downstream calls are the spans whose parent span id is kept: sf_thin_sql_ch with
 * children reads them too.  SF_THIN_KEY_CH is the key over a spans row in ClickHouse's
 * dialect; SF_THIN_HASH_CH(K) the 53 bits of K.
 */
#ifndef SF_THIN_H
#define SF_THIN_H

#include <stddef.h>
#include <stdint.h>

#define SF_THIN_SPAN_ID 16

#define SF_THIN_HASH_CH(k)                                                                         \
    "bitShiftRight(reinterpretAsUInt64(reverse(substring(SHA256(" k "), 1, 8))), 11)"
#define SF_THIN_KEY_CH                                                                             \
    "if(ifNull(span_id, '') != '', substring(assumeNotNull(span_id), 1, 16), "                     \
    "if(ifNull(trace_id, '') != '', assumeNotNull(trace_id), "                                     \
    "toString(assumeNotNull(req_start_ns))))"
#define SF_THIN_PARENT_CH "substring(assumeNotNull(parent_span_id), 1, 16)"

/* The share of n that max keeps: 1 when n fits (max < 0: no bound), and where libcrypto
 * cannot be loaded (no key can be drawn). */
double sf_thin_share(uint64_t n, int64_t max);

/* The bound of share f: a key is kept when its 53 bits are below it. */
uint64_t sf_thin_bound(double f);

/* The 53 bits of s[0..n). */
uint64_t sf_thin_hash(const void *s, size_t n);

/* 1 when key (NUL-terminated) is kept at share f (always at f >= 1). */
int sf_thin_kept(const char *key, double f);

/* 1 when the request with trace id trace, span id span (NULL or "": none) and start
 * start_ns is kept at share f. */
int sf_thin_request(const char *trace, const char *span, int64_t start_ns, double f);

/* Into out (n bytes) the ClickHouse condition that keeps a spans row at share f, with
 * children also the rows whose parent span is kept: "1" at f >= 1.  Returns 0, or -1
 * when it does not fit. */
int sf_thin_sql_ch(double f, int children, char *out, size_t n);

#endif

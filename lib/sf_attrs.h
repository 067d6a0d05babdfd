/* sf_attrs.h - the request attributes a sampling decision can depend on.
 *
 * One definition for pcap2spans (what it keeps), the Wireshark plugin (what it shows)
 * and the drift explanation (what it contrasts), so the three name them alike:
 *
 *   baggage.KEY        a W3C baggage member's value (properties after ';' dropped)
 *   tracestate.KEY     a W3C tracestate member's value
 *   header.NAME        a kept request header (NAME lowercase): the default list below
 *                      and pcap2spans --keep-header NAME (a trailing '*' keeps a prefix)
 *   decision           who decided the sampling: "upstream:FORMAT" (the preferred
 *                      context carried a sampled flag) or "service" (deferred to it)
 *   client             the client's address
 *   authority          :authority or Host
 *   temperature, top_p, max_tokens, model_hint
 *                      the sampling parameters a JSON-RPC request carried
 *                      (sampling/createMessage; pcap2spans/rpc.h)
 *
 * Bounds: keys are cut at SF_ATTR_KEY_MAX - 1 bytes, values at SF_ATTR_VALUE_MAX - 1
 * (both between two UTF-8 characters); control bytes in a value become '?'.  A
 * request keeps at most SF_CTX_KEPT_MAX bytes of kept headers (sf_tracectx.h).
 */
#ifndef SF_ATTRS_H
#define SF_ATTRS_H

#include <stddef.h>

#define SF_ATTR_KEY_MAX   80  /* "header." or "tracestate." + 64 */
#define SF_ATTR_VALUE_MAX 129 /* 128 bytes of a value */
#define SF_ATTR_KEEP_MAX  32  /* header names (or prefixes) kept */

/* The request headers pcap2spans keeps.  The default list holds the proxies' and
 * SDKs' usual ones: user-agent, via, forwarded, x-forwarded-for, x-forwarded-host,
 * x-real-ip, x-b3-flags, x-envoy-*, x-client-*, x-sampling-*. */
struct sf_attrs_keep {
    char name[SF_ATTR_KEEP_MAX][64]; /* lowercase; "x-envoy-*" is a prefix */
    unsigned char len[SF_ATTR_KEEP_MAX], prefix[SF_ATTR_KEEP_MAX];
    unsigned char first[256]; /* 1: some name starts with this byte (either case) */
    int n;
};

void sf_attrs_keep_default(struct sf_attrs_keep *k);
/* Add a name (or "PREFIX*").  Returns 0, or -1 when the list is full or the name is
 * empty, longer than 63 bytes or not an HTTP token. */
int sf_attrs_keep_add(struct sf_attrs_keep *k, const char *name);
/* 1 when a header of this name is kept (names ASCII case-insensitive). */
int sf_attrs_keep_match(const struct sf_attrs_keep *k, const char *name, size_t nlen);

/* One attribute: key and value NUL-terminated and within the bounds above.  Returns 0
 * to go on, non-zero to stop (the iterator returns it). */
typedef int (*sf_attr_fn)(void *arg, const char *key, const char *value);

/* The members of a baggage header value (the contexts' raw text), as baggage.KEY. */
int sf_attrs_baggage(const char *raw, sf_attr_fn fn, void *arg);
/* The members of a tracestate value, as tracestate.KEY. */
int sf_attrs_tracestate(const char *ts, sf_attr_fn fn, void *arg);
/* One attribute from a prefix ("header.", "" ...), a name and a value, bounded as above. */
int sf_attrs_one(const char *prefix, const char *name, size_t nlen, const char *value, size_t vlen,
                 sf_attr_fn fn, void *arg);

#endif

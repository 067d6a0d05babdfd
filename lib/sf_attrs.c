/* sf_attrs.c - the request attributes a sampling decision can depend on.  See sf_attrs.h.
 */
#include "sf_attrs.h"

#include <string.h>
#include <strings.h>

#include "sf_text.h"

static const char *const default_keep[] = {
    "user-agent", "via",        "forwarded", "x-forwarded-for", "x-forwarded-host",
    "x-real-ip",  "x-b3-flags", "x-envoy-*", "x-client-*",      "x-sampling-*",
};

void sf_attrs_keep_default(struct sf_attrs_keep *k)
{
    k->n = 0;
    memset(k->first, 0, sizeof(k->first));
    for (size_t i = 0; i < sizeof(default_keep) / sizeof(default_keep[0]); i++)
        (void)sf_attrs_keep_add(k, default_keep[i]);
}

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'+-.^_`|~", c));
}

int sf_attrs_keep_add(struct sf_attrs_keep *k, const char *name)
{
    size_t n = strlen(name), i;
    int prefix = n > 0 && name[n - 1] == '*';

    n -= (size_t)prefix;
    if (k->n >= SF_ATTR_KEEP_MAX || n == 0 || n > 63)
        return -1;
    for (i = 0; i < n; i++) {
        if (!is_tchar((unsigned char)name[i]))
            return -1;
        k->name[k->n][i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    }
    k->name[k->n][n] = 0;
    for (int j = 0; j < k->n; j++) /* already there */
        if (k->len[j] == n && k->prefix[j] == prefix && memcmp(k->name[j], k->name[k->n], n) == 0)
            return 0;
    k->len[k->n] = (unsigned char)n;
    k->prefix[k->n] = (unsigned char)prefix;
    k->first[(unsigned char)k->name[k->n][0]] = 1;
    k->first[(unsigned char)k->name[k->n][0] & 0xdf] = 1; /* its upper case (letters) */
    k->n++;
    return 0;
}

int sf_attrs_keep_match(const struct sf_attrs_keep *k, const char *name, size_t nlen)
{
    /* every header of every request comes here: most are out at their first byte */
    if (nlen == 0 || !k->first[(unsigned char)name[0]])
        return 0;
    for (int i = 0; i < k->n; i++) {
        size_t l = k->len[i];
        if ((k->prefix[i] ? nlen > l : nlen == l) && strncasecmp(name, k->name[i], l) == 0)
            return 1;
    }
    return 0;
}

int sf_attrs_one(const char *prefix, const char *name, size_t nlen, const char *value, size_t vlen,
                 sf_attr_fn fn, void *arg)
{
    char key[SF_ATTR_KEY_MAX], val[SF_ATTR_VALUE_MAX];
    size_t pl = strlen(prefix), kl, vl;

    if (pl > 16)
        pl = 16; /* the prefixes are short constants */
    kl = sf_text_utf8_cut(name, nlen, sizeof(key) - 1 - pl);
    memcpy(key, prefix, pl);
    *sf_text_copy_plain(key + pl, name, kl, 0) = 0;
    vl = value ? sf_text_utf8_cut(value, vlen, sizeof(val) - 1) : 0;
    *sf_text_copy_plain(val, value, vl, 0) = 0;
    return fn(arg, key, val);
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Split a ','-list of "key=value[;props]" members (baggage, tracestate) into attributes. */
static int members(const char *prefix, const char *list, sf_attr_fn fn, void *arg)
{
    const char *p = list;
    int rc;

    while (p && *p) {
        const char *e = strchr(p, ','), *eq, *ve;
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && is_ows(*p))
            p++, n--;
        while (n && is_ows(p[n - 1]))
            n--;
        eq = memchr(p, '=', n);
        if (eq && eq > p) {
            const char *k_end = eq, *v = eq + 1;
            while (k_end > p && is_ows(k_end[-1]))
                k_end--;
            ve = memchr(v, ';', (size_t)(p + n - v)); /* baggage properties */
            if (ve == NULL)
                ve = p + n;
            while (v < ve && is_ows(*v))
                v++;
            while (ve > v && is_ows(ve[-1]))
                ve--;
            if ((rc = sf_attrs_one(prefix, p, (size_t)(k_end - p), v, (size_t)(ve - v), fn, arg)) !=
                0)
                return rc;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int sf_attrs_baggage(const char *raw, sf_attr_fn fn, void *arg)
{
    return members("baggage.", raw, fn, arg);
}

int sf_attrs_tracestate(const char *ts, sf_attr_fn fn, void *arg)
{
    return members("tracestate.", ts, fn, arg);
}

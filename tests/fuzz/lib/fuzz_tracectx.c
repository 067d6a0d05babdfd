/* fuzz_tracectx.c - libFuzzer target for lib/sf_tracectx.
 *
 * Input: header lines "name:value" separated by '\n' (the value is every byte after the
 * first ':').  They are fed to a header set, and the whole input to every single-value
 * parser and the tracestate checker.  Asserts the output invariants callers rely on: ids
 * are "" or 32/16 lowercase hex, valid contexts never carry all-zero ids, invalid ones carry
 * a reason and no ids, every string is NUL-terminated in its array, raw is printable, a
 * kept tracestate passes the checker, and the preferred context is valid with a span id.
 * The parsers with a fast path (lib/sf_tc_fast.h) must also give exactly what their general
 * path alone gives (tests/unit/test_tc_fast.c does the same on random inputs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sf_tc_int.h"
#include "sf_tracectx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_id(const char *id, size_t arrsz, size_t width, int valid)
{
    size_t n;
    int zero = 1;

    if (memchr(id, 0, arrsz) == NULL)
        abort();
    n = strlen(id);
    if (n != 0 && n != width)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            abort();
        zero &= id[i] == '0';
    }
    if (n && zero && valid)
        abort();
    if (n && !valid)
        abort(); /* invalid contexts never keep ids */
}

static void check_ctx(const struct sf_tracectx *c)
{
    if ((unsigned)c->format >= SF_CTX_NFORMATS || (c->valid != 0 && c->valid != 1))
        abort();
    check_id(c->trace_id, sizeof(c->trace_id), 32, c->valid);
    check_id(c->span_id, sizeof(c->span_id), 16, c->valid);
    check_id(c->parent_id, sizeof(c->parent_id), 16, c->valid);
    if (c->sampled < -1 || c->sampled > 1 || (c->debug != 0 && c->debug != 1) || c->flags < -1 ||
        c->flags > 255 || (c->trace_id_64 && !c->trace_id[0]))
        abort();
    if (memchr(c->error, 0, sizeof(c->error)) == NULL || (!c->valid && !c->error[0]))
        abort();
    if (memchr(c->raw, 0, sizeof(c->raw)) == NULL ||
        memchr(c->tracestate, 0, sizeof(c->tracestate)) == NULL)
        abort();
    for (const char *p = c->raw; *p; p++)
        if ((*p > 0 && *p < 0x20 && *p != '\t') || *p == 0x7f)
            abort();
    if (c->tracestate[0] &&
        (c->format != SF_CTX_TRACEPARENT ||
         sf_tracectx_check_tracestate(c->tracestate, strlen(c->tracestate), NULL, 0) != 0))
        abort();
}

static void run_parsers(const uint8_t *data, size_t size)
{
    int (*const text[])(struct sf_tracectx *, const char *, size_t) = {
        sf_tracectx_parse_traceparent, sf_tracectx_parse_b3_single, sf_tracectx_parse_uber,
        sf_tracectx_parse_xray,        sf_tracectx_parse_baggage,   sf_tracectx_parse_sw8};
    struct sf_tracectx c;
    int rc;

    for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
        memset(&c, 0xa5, sizeof(c));
        rc = text[i](&c, (const char *)data, size);
        check_ctx(&c);
        if (rc != (c.valid ? 0 : -1))
            abort();
    }
    memset(&c, 0xa5, sizeof(c));
    rc = sf_tracectx_parse_grpc_trace_bin(&c, data, size);
    check_ctx(&c);
    if (rc != (c.valid ? 0 : -1))
        abort();
}

/* Fast path == general path: whole contexts, and the kept tracestate members. */
static void run_general(const uint8_t *data, size_t size)
{
    static struct sf_tracectx c1, c2;
    static char o1[SF_CTX_STATE_MAX], o2[SF_CTX_STATE_MAX];
    char w1[96] = "", w2[96] = "";
    const char *v = (const char *)data;
    size_t l1 = 0, l2 = 0;
    int m1 = 0, m2 = 0, t1 = 0, t2 = 0;

    memset(&c1, 0xa5, sizeof(c1));
    memset(&c2, 0xa5, sizeof(c2));
    if (sf_tracectx_parse_traceparent(&c1, v, size) != sf_tc_traceparent_general(&c2, v, size) ||
        memcmp(&c1, &c2, sizeof(c1)) != 0)
        abort();
    memset(&c1, 0xa5, sizeof(c1));
    memset(&c2, 0xa5, sizeof(c2));
    if (sf_tracectx_parse_b3_single(&c1, v, size) != sf_tc_b3_single_general(&c2, v, size) ||
        memcmp(&c1, &c2, sizeof(c1)) != 0)
        abort();
    if (sf_tc_ts_scan(v, size, &m1, w1, sizeof(w1), o1, sizeof(o1), &l1, &t1, 1) !=
            sf_tc_ts_scan(v, size, &m2, w2, sizeof(w2), o2, sizeof(o2), &l2, &t2, 0) ||
        m1 != m2 || strcmp(w1, w2) != 0 || l1 != l2 || t1 != t2 || memcmp(o1, o2, l1) != 0)
        abort();
}

static void run_tracestate(const uint8_t *data, size_t size)
{
    char why[SF_CTX_ERR_MAX];
    const char *k, *v, *s = (const char *)data;
    size_t kl, vl, pos = 0;
    int members = 0;

    memset(why, 0xa5, sizeof(why));
    if (sf_tracectx_check_tracestate(s, size, why, sizeof(why)) != 0) {
        if (memchr(why, 0, sizeof(why)) == NULL || !why[0])
            abort();
        return;
    }
    while (sf_tracectx_tracestate_next(s, size, &pos, &k, &kl, &v, &vl)) {
        if (k < s || v + vl > s + size || kl == 0 || kl > 256 || vl == 0 || vl > 256 || pos > size)
            abort();
        members++;
    }
    if (members > 32)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sf_tracectx_set s;
    size_t start = 0;
    int best;

    if (size > 20000)
        return 0;
    memset(&s, 0xa5, sizeof(s)); /* set_init must not rely on a zeroed set */
    sf_tracectx_set_init(&s);
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n')
            continue;
        const uint8_t *line = data + start, *colon = memchr(line, ':', i - start);
        if (colon != NULL) {
            size_t nlen = (size_t)(colon - line);
            int known = sf_tracectx_header_id((const char *)line, nlen) >= 0;
            if (known != 0 && known != 1)
                abort();
            sf_tracectx_set_add(&s, (const char *)line, nlen, colon + 1,
                                (size_t)(data + i - colon - 1));
        }
        start = i + 1;
    }
    if (sf_tracectx_set_finish(&s) != s.n || s.n < 0 || s.n > SF_CTX_MAX || s.dropped < 0)
        abort();
    for (int i = 0; i < s.n; i++)
        check_ctx(&s.ctx[i]);
    best = sf_tracectx_set_preferred(&s);
    if (best < -1 || best >= s.n || (best >= 0 && (!s.ctx[best].valid || !s.ctx[best].span_id[0])))
        abort();
    run_parsers(data, size);
    run_general(data, size);
    run_tracestate(data, size);
    return 0;
}

/* sf_thin.c - a uniform sample of the requests, drawn alike from a file and a cluster
 * (sf_thin.h). */
#include "sf_thin.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sf_sha256.h"

double sf_thin_share(uint64_t n, int64_t max)
{
    /* without libcrypto no key can be drawn as the cluster draws it: every one is kept */
    return max < 0 || n <= (uint64_t)max || !sf_sha256_ready() ? 1.0 : (double)max / (double)n;
}

uint64_t sf_thin_bound(double f)
{
    return f >= 1.0 ? UINT64_C(1) << 53 : (uint64_t)ceil(f * 0x1p53);
}

uint64_t sf_thin_hash(const void *s, size_t n)
{
    return sf_sha256_u64(s, n) >> 11; /* no libcrypto: 0, every key kept (sf_thin_share: 1) */
}

int sf_thin_kept(const char *key, double f)
{
    return f >= 1.0 || sf_thin_hash(key, strlen(key)) < sf_thin_bound(f);
}

int sf_thin_request(const char *trace, const char *span, int64_t start_ns, double f)
{
    char k[24];

    if (f >= 1.0)
        return 1;
    if (span && span[0])
        return sf_thin_hash(span, strnlen(span, SF_THIN_SPAN_ID)) < sf_thin_bound(f);
    if (trace && trace[0])
        return sf_thin_kept(trace, f);
    snprintf(k, sizeof(k), "%" PRId64, start_ns);
    return sf_thin_kept(k, f);
}

int sf_thin_sql_ch(double f, int children, char *out, size_t n)
{
    uint64_t b = sf_thin_bound(f);
    int w = f >= 1.0 ? snprintf(out, n, "1")
            : children
                ? snprintf(out, n,
                           SF_THIN_HASH_CH(SF_THIN_KEY_CH) " < %" PRIu64
                                                           " OR (ifNull(parent_span_id, '') != '' "
                                                           "AND " SF_THIN_HASH_CH(
                                                               SF_THIN_PARENT_CH) " < %" PRIu64 ")",
                           b, b)
                : snprintf(out, n, SF_THIN_HASH_CH(SF_THIN_KEY_CH) " < %" PRIu64, b);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* sf_tc_sw8.c - SkyWalking sw8 (Cross Process Propagation Headers Protocol v3).
 *
 * sw8              no ids (opaque base64); 8 fields, sample 0/1, int span id     sampled:
 *                                                                                sample field
 */
#include <string.h>

#include "sf_base64.h"
#include "sf_err.h"
#include "sf_tc_fast.h"
#include "sf_tc_int.h"

int sf_tracectx_parse_sw8(struct sf_tracectx *c, const char *v, size_t n)
{
    static const char *const what[8] = {"sample",          "trace id",       "parent segment id",
                                        "parent span id",  "parent service", "parent instance",
                                        "parent endpoint", "peer address"};
    const char *f[8];
    size_t fl[8];
    uint8_t tmp[1536];
    uint64_t id;
    int nf;

    sf_tc_start(c, SF_CTX_SW8, &v, &n);
    nf = sf_tc_split(v, n, '-', f, fl, 8);
    if (nf != 8)
        return sf_tc_fail(c, "sw8: %d '-'-separated fields, need 8", nf);
    if (fl[0] != 1 || (f[0][0] != '0' && f[0][0] != '1'))
        return sf_tc_fail(c, "sw8: sample '%.*s' is not 0 or 1", (int)(fl[0] > 20 ? 20 : fl[0]),
                          f[0]);
    if (sf_tc_dec_u64(f[3], fl[3], &id) < 0 || id > INT32_MAX)
        return sf_tc_fail(c, "sw8: parent span id '%.*s' is not a decimal int",
                          (int)(fl[3] > 20 ? 20 : fl[3]), f[3]);
    for (int k = 1; k < 8; k++) {
        if (k == 3)
            continue;
        if (fl[k] == 0)
            return sf_tc_fail(c, "sw8: %s is empty", what[k]);
        long len = sf_base64_decode(tmp, sizeof(tmp), f[k], fl[k]);
        if (len == SF_E_LIMIT)
            return sf_tc_fail(c, "sw8: %s is too long (%zu characters)", what[k], fl[k]);
        if (len < 0)
            return sf_tc_fail(c, "sw8: %s is not valid base64", what[k]);
        if (len == 0)
            return sf_tc_fail(c, "sw8: %s is empty", what[k]);
    }
    c->sampled = f[0][0] - '0';
    return 0;
}

/* Fuzz target: tracefs2spans clock fit on arbitrary pairs (16 bytes each: x, y as
 * little-endian int64), with the options taken from the first byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tracefs2spans/t2s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cf_opts o;
    struct cf_result r;
    struct sf_err err;
    size_t n;
    struct cf_pair *p;

    if (size < 1)
        return 0;
    clockfit_defaults(&o);
    o.fit_skew = (data[0] & 3) == 3 ? -1 : (data[0] & 3) == 2 ? 0 : data[0] & 1;
    o.detect_steps = (data[0] >> 2) & 1;
    o.min_step_ns = (data[0] >> 3) * 1000;
    data++, size--;
    n = size / 16;
    if (n == 0 || n > 4000)
        return 0;
    p = malloc(n * sizeof(*p));
    if (p == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(&p[i].x, data + 16 * i, 8);
        memcpy(&p[i].y, data + 16 * i + 8, 8);
    }
    if (clockfit_fit(p, n, &o, &r, &err) == 0) {
        if (r.nseg < 1 || r.nseg > CF_MAX_SEGMENTS)
            abort();
        size_t total = 0;
        for (int k = 0; k < r.nseg; k++)
            total += r.seg[k].count;
        if (total != n)
            abort(); /* segments cover every pair exactly once */
    }
    free(p);
    return 0;
}

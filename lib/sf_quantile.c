/* sf_quantile.c - exact nearest-rank percentiles (Hyndman & Fan type 1).
 *
 * A window's latencies are held until the window closes (memory grows with the
 * busiest window, never with the input), sorted once, and read at ceil(p n) - 1.
 * No sketch is needed at window sizes of spans: 1 M spans in a window cost 8 MB
 * and ~0.1 s to sort.
 */
#include "sf_quantile.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void sf_quantile_exact(double *v, size_t n, const double *p, size_t k, double *out)
{
    if (n == 0) {
        for (size_t j = 0; j < k; j++)
            out[j] = NAN;
        return;
    }
    qsort(v, n, sizeof(*v), cmp_double);
    for (size_t j = 0; j < k; j++) {
        double r = ceil(p[j] * (double)n);
        size_t i = r < 1 ? 0 : (size_t)r - 1;
        out[j] = v[i < n ? i : n - 1];
    }
}

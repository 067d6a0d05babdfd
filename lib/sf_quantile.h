/* sf_quantile.h - exact percentiles of one window's latencies. */
#ifndef SF_QUANTILE_H
#define SF_QUANTILE_H

#include <stddef.h>

/* Sort v[0..n) in place and write the nearest-rank p-quantiles (p in (0, 1]) for
 * each of the k probabilities into out: the smallest value with at least p*n
 * values <= it, i.e. v[ceil(p n) - 1].  Exact: no sketch, no interpolation, so a
 * P99 is always a latency that was observed.  n = 0 gives NaN. */
void sf_quantile_exact(double *v, size_t n, const double *p, size_t k, double *out);

#endif

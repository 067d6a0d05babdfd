/* sf_window.h - the default window length: adapted to how dense the spans are.
 *
 * A window must hold enough spans for the percentile it reports, and the run must
 * have enough windows for the change-point detectors.  The rule:
 *
 *   rate  = the median span rate (spans/s) of the groups that hold at least 1 % of
 *           the spans (so that a rare endpoint does not stretch every window);
 *   W     = min(SF_WINDOW_SPANS / rate, duration / SF_WINDOW_MIN_COUNT), rounded down to
 *           1, 2 or 5 x 10^k ns (at least 1 ms);
 *           but at least duration / SF_WINDOW_MAX_COUNT, rounded up to 1, 2 or 5 x 10^k:
 *           the change-point detectors' cost grows with the square of a series' length
 *           (PELT on a series without a change prunes nothing), and at 16 spans a window
 *           the windows grow with the spans — 100,000 spans made 5,000 windows and a
 *           report of 22 s, nearly all of it PELT.  Past 32,000 spans, windows hold more.
 *
 * SF_WINDOW_SPANS = 16: with n spans the 95 % rank interval of the median is
 * n/2 +- 1.96 sqrt(n)/2, which stays inside the quartiles once n >= 16.
 * The tail percentiles need more: a nearest-rank p95 differs from the window's max
 * only when n > 1/(1 - 0.95) = 20 spans, p99 when n > 100 (sf_window_pct_min_spans).
 */
#ifndef SF_WINDOW_H
#define SF_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

#define SF_WINDOW_SPANS      16            /* spans per window for the median endpoint */
#define SF_WINDOW_MIN_COUNT  16            /* windows over the whole run, at least */
#define SF_WINDOW_MAX_COUNT  2000          /* and at most */
#define SF_WINDOW_DEFAULT_NS 10000000000LL /* no spans, or all at one instant */

/* The window for groups with counts[0..ng) spans over dur_ns.  Returns it in ns. */
int64_t sf_window_choose(const uint64_t *counts, size_t ng, int64_t dur_ns);

/* The smallest number of spans in a window for which the nearest-rank percentile
 * p (0.95) is not simply the window's max: floor(1 / (1 - p)) + 1 (p95: 21, p99: 101;
 * p <= 0.5: 1). */
uint64_t sf_window_pct_min_spans(double p);

/* sf_window_choose() over the spans of the database at path, grouped by `by` (as
 * sf_spans_window groups them).  Returns 0 or SF_E_IO / SF_E_DB / SF_E_NOMEM with err
 * set. */
int sf_window_auto(const char *path, const char *by, int64_t *window_ns, struct sf_err *err);

/* Its choice from what it reads, wherever the spans are (spanfold/ch_series.c): the
 * first and last start lo, hi of the n spans with one, the starts blo, bhi of the
 * (n/100)th and (n-1-n/100)th of them in start order (0-based), and the spans of each
 * of the ng groups sf_spans_window makes. */
int64_t sf_window_of(int64_t lo, int64_t hi, int64_t n, int64_t blo, int64_t bhi,
                     const uint64_t *counts, size_t ng);

#endif

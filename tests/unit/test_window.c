/* test_window.c - the default window from span density (lib/sf_window.h): the median
 * group's rate sets it, the run keeps at least 16 windows and at most 2,000, values are
 * 1/2/5 x 10^k, and
 * the percentile thresholds p95 > 20 spans, p99 > 100 spans. */
#include <stdint.h>

#include "sf_window.h"
#include "tap.h"

#define S 1000000000LL

int main(void)
{
    /* the demo: 3 endpoints of about 270 spans over 45 s: 6/s, 16 / 6 = 2.67 s -> 2 s */
    uint64_t demo[3] = {270, 270, 322};
    TAP_EQ_INT(sf_window_choose(demo, 3, 45 * S), 2 * S, "45 s, 3 x ~280 spans: 2 s");

    /* one group at 10/s over 600 s: 1.6 s -> 1 s */
    uint64_t one[1] = {6000};
    TAP_EQ_INT(sf_window_choose(one, 1, 600 * S), 1 * S, "10 spans/s: 1 s");

    /* sparse: 0.1 span/s over an hour: 160 s -> 100 s */
    uint64_t sparse[1] = {360};
    TAP_EQ_INT(sf_window_choose(sparse, 1, 3600 * S), 100 * S, "0.1 span/s: 100 s");

    /* dense but short: 10,000/s over 2 s: 1.6 ms -> 1 ms */
    uint64_t dense[1] = {20000};
    TAP_EQ_INT(sf_window_choose(dense, 1, 2 * S), 1000000, "10,000 spans/s: 1 ms");

    /* few spans over a short run: the 16-window floor wins (30 s / 16 = 1.875 s -> 1 s) */
    uint64_t few[1] = {40};
    TAP_EQ_INT(sf_window_choose(few, 1, 30 * S), 1 * S, "40 spans in 30 s: at least 16 windows");

    /* a group under 1 % of the spans does not decide: the median of the others does */
    uint64_t rare[3] = {5000, 5000, 10};
    TAP_EQ_INT(sf_window_choose(rare, 3, 1000 * S), 2 * S,
               "a rare group is left out of the median");

    /* the median group decides, not the busiest: rates 100/s, 10/s, 2/s: 16 / 10 = 1.6 s -> 1 s */
    uint64_t mixed[3] = {100000, 10000, 2000};
    TAP_EQ_INT(sf_window_choose(mixed, 3, 1000 * S), 1 * S, "median of three rates decides");

    /* many spans: at most 2,000 windows, rounded up (the detectors' cost is the square of
     * the windows).  1,000,000 spans over 100 s: 16 spans a window would be 1.6 ms and
     * 62,500 windows; 100 s / 2,000 = 50 ms */
    uint64_t many[1] = {1000000};
    TAP_EQ_INT(sf_window_choose(many, 1, 100 * S), 50000000, "10,000 spans/s over 100 s: 50 ms");
    /* 100 s / 2,000 = 50 ms exactly is kept; 120 s / 2,000 = 60 ms rounds up to 100 ms,
     * 300 s / 2,000 = 150 ms up to 200 ms */
    TAP_EQ_INT(sf_window_choose(many, 1, 120 * S), 100000000, "60 ms rounds up to 100 ms");
    TAP_EQ_INT(sf_window_choose(many, 1, 300 * S), 200000000, "150 ms rounds up to 200 ms");
    {
        int fits = 1;
        for (int64_t d = S; d < 100000 * S && fits; d = d * 13 / 10) {
            uint64_t n[1] = {(uint64_t)(d / 1000)}; /* a million spans/s */
            int64_t w = sf_window_choose(n, 1, d);
            fits = d / w <= SF_WINDOW_MAX_COUNT && w <= d / SF_WINDOW_MAX_COUNT * 5 / 2 + 1;
        }
        TAP_OK(fits, "1 s to a day at a million spans/s: at most 2,000 windows, at least 800");
    }

    /* nothing to go on: the old default */
    TAP_EQ_INT(sf_window_choose(one, 0, 10 * S), SF_WINDOW_DEFAULT_NS, "no groups: 10 s");
    TAP_EQ_INT(sf_window_choose(one, 1, 0), SF_WINDOW_DEFAULT_NS, "zero duration: 10 s");

    TAP_EQ_INT((long long)sf_window_pct_min_spans(0.95), 21, "p95 needs 21 spans");
    TAP_EQ_INT((long long)sf_window_pct_min_spans(0.99), 101, "p99 needs 101 spans");
    TAP_EQ_INT((long long)sf_window_pct_min_spans(0.5), 1, "p50 needs 1 span");
    return tap_done();
}

/* test_spans.c - lib/sf_spans.c windowing: sparse windows (gaps cut to
 * SF_SPANS_MAX_GAP, exact window numbers), spans far from the bulk left out and
 * counted, and the cell cap counted in stored windows, not in time. */
#include <math.h>
#include <string.h>

#include "sf_spans.h"
#include "tap.h"

#define W  10000000000LL /* 10 s windows */
#define T0 1700000000000000000LL

static int add(struct sf_span_windows *sw, int64_t t)
{
    return sf_spans_add(sw, "all", t, 20.0, 0, 1, NULL, NAN);
}

static void test_gap_cut(void)
{
    struct sf_span_windows sw;
    int rc = 0;

    sf_spans_init(&sw, W);
    for (int i = 0; i < 30; i++) /* 30 spans in windows 0..2 */
        rc |= add(&sw, T0 + (int64_t)i * W / 10);
    for (int i = 0; i < 30; i++) /* 30 spans 1,000,000 windows later */
        rc |= add(&sw, T0 + 1000000 * W + (int64_t)i * W / 10);
    TAP_EQ_INT(rc | sf_spans_finish(&sw), 0, "two bursts a million windows apart");
    TAP_EQ_INT(sw.nwin, 3 + SF_SPANS_MAX_GAP + 3, "3 windows, the gap cut to 100, 3 windows");
    TAP_EQ_INT(sw.win[3 + SF_SPANS_MAX_GAP], 1000000, "the window after the gap keeps its number");
    TAP_OK(sf_spans_window_start(&sw, sw.nwin - 1) == T0 + 1000002 * W, "and its exact start time");
    TAP_EQ_INT(sw.gaps_cut, 1, "one gap cut");
    TAP_EQ_INT(sw.longest_gap, 1000000 - 3, "its length before cutting");
    TAP_EQ_INT(sw.g[0].m[SF_M_COUNT][3], 0, "kept gap windows count 0 spans");
    TAP_EQ_INT(sw.outliers.before + sw.outliers.after, 0, "two equal bursts are no outliers");
    sf_spans_free(&sw);
}

static void test_outlier(void)
{
    struct sf_span_windows sw;
    char note[400];
    int rc = 0;

    sf_spans_init(&sw, W);
    rc |= add(&sw, T0 - 39000000LL * 1000000000LL); /* 39,000,000 s before */
    for (int i = 0; i < 6000; i++)
        rc |= add(&sw, T0 + (int64_t)i * 10000000);
    rc |= add(&sw, T0 + 39000000LL * 1000000000LL); /* and after */
    TAP_EQ_INT(rc | sf_spans_finish(&sw), 0, "6000 spans and two far off");
    TAP_EQ_INT(sw.nwin, 6, "only the bulk's 6 windows stay");
    TAP_EQ_INT(sw.nspans, 6000, "with its 6000 spans");
    TAP_EQ_INT(sw.outliers.before, 1, "one outlier before");
    TAP_EQ_INT(sw.outliers.after, 1, "one after");
    TAP_OK(sw.t0_ns == T0, "t0 moves to the bulk's first window");
    TAP_EQ_INT(sw.gaps_cut, 0, "the cut gaps went with the outliers");
    sf_spans_outlier_note(&sw, note, sizeof(note));
    TAP_OK(strstr(note, "2 spans far from the bulk left out") != NULL, "note: %s", note);
    sf_spans_free(&sw);

    sf_spans_init(&sw, W);
    for (int i = 0; i < SF_SPANS_FENCE_MIN - 1; i++)
        rc |= add(&sw, T0 + (int64_t)i * 1000 * W);
    rc |= add(&sw, T0 + 39000000LL * 1000000000LL);
    TAP_EQ_INT(rc | sf_spans_finish(&sw), 0, "fewer than 20 spans");
    TAP_EQ_INT(sw.outliers.after, 0, "are not judged for outliers");
    TAP_OK(sw.nwin < 20 * (SF_SPANS_MAX_GAP + 1), "and still take few windows (%zu)", sw.nwin);
    sf_spans_free(&sw);
}

static void test_extremes(void)
{
    struct sf_span_windows sw;
    int rc = 0;

    sf_spans_init(&sw, 1000); /* 1 us windows, the smallest --window */
    rc |= add(&sw, INT64_MIN + 1);
    rc |= add(&sw, 0);
    rc |= add(&sw, INT64_MAX);
    TAP_EQ_INT(rc | sf_spans_finish(&sw), 0, "times from INT64_MIN to INT64_MAX: no overflow");
    TAP_OK(sw.nwin <= 3 + 2 * SF_SPANS_MAX_GAP, "%zu windows", sw.nwin);
    TAP_OK(sf_spans_window_start(&sw, sw.nwin - 1) > INT64_MAX - 1000,
           "the last window starts within 1 us of INT64_MAX");
    sf_spans_free(&sw);
}

int main(void)
{
    test_gap_cut();
    test_outlier();
    test_extremes();
    return tap_done();
}

/* test_spans.c - lib/sf_spans.c windowing: sparse windows (gaps cut to
 * SF_SPANS_MAX_GAP, exact window numbers), spans far from the bulk left out and
 * counted, the cell cap counted in stored windows, not in time; the tail rule on the
 * last window only; windows put whole equal to their spans added. */
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

/* Only the last window's throughput is unknown when its spans cover less than half of
 * it (the capture ended there); a quiet window in the middle keeps its count. */
static void test_quiet_middle(void)
{
    struct sf_span_windows sw;
    int rc = 0;

    sf_spans_init(&sw, W);
    for (int i = 0; i < 10; i++) /* window 0 */
        rc |= add(&sw, T0 + (int64_t)i * W / 10);
    rc |= add(&sw, T0 + W + W / 10); /* window 1: one span in its first tenth */
    for (int i = 0; i < 10; i++)     /* window 2 */
        rc |= add(&sw, T0 + 2 * W + (int64_t)i * W / 10);
    rc |= add(&sw, T0 + 3 * W + W / 5); /* window 3, the last: its first fifth */
    TAP_EQ_INT(rc | sf_spans_finish(&sw), 0, "four windows, a quiet one in the middle");
    TAP_OK(sw.g[0].m[SF_M_THROUGHPUT][1] == 0.1, "the quiet window's throughput: 1 span in 10 s");
    TAP_OK(isnan(sw.g[0].m[SF_M_THROUGHPUT][3]), "the last, a fifth covered: unknown");
    sf_spans_free(&sw);
}

/* Windows put whole (what a cluster computed) are the windows of their spans added. */
static void test_put(void)
{
    struct sf_span_windows a, b;
    struct sf_spans_cell c0 = {.spans = 3,
                               .err = 1,
                               .known = 3,
                               .traces = 2,
                               .trials = 2,
                               .kept = 1,
                               .cfg_n = 0,
                               .q = {20, 30, 30, 30}}; /* over {10, 20, 30} */
    struct sf_spans_cell c2 = {
        .spans = 1, .known = 1, .traces = 1, .trials = 1, .kept = 1, .q = {5, 5, 5, 5}};
    int rc = 0;

    sf_spans_init(&a, W);
    rc |= sf_spans_add(&a, "x", T0, 20, 0, 1, "t1", NAN);
    rc |= sf_spans_add(&a, "x", T0 + 1, 30, 1, 0, "t2", NAN);
    rc |= sf_spans_add(&a, "x", T0 + 2, 10, 0, 0, "t1", NAN);
    rc |= sf_spans_add(&a, "x", T0 + 2 * W + W / 2, 5, 0, 1, "t3", NAN);
    rc |= sf_spans_finish(&a);
    sf_spans_init(&b, W);
    b.t0_ns = T0;
    rc |= sf_spans_put(&b, "x", 0, &c0);
    rc |= sf_spans_put(&b, "x", 2, &c2);
    b.last_ns = T0 + 2 * W + W / 2;
    rc |= sf_spans_finish(&b);
    TAP_EQ_INT(rc, 0, "the same spans, added and put");
    TAP_OK(a.nwin == 3 && b.nwin == 3 && a.ng == 1 && b.ng == 1, "3 windows (one empty), 1 group");
    int same = a.nspans == b.nspans && a.last_ns == b.last_ns;
    for (int m = 0; m < SF_M_NMETRICS; m++)
        for (size_t w = 0; w < 3; w++) {
            double x = a.g[0].m[m][w], y = b.g[0].m[m][w];
            same &= (isnan(x) && isnan(y)) || x == y;
        }
    for (size_t w = 0; w < 3; w++)
        same &= a.g[0].spans[w] == b.g[0].spans[w] && a.g[0].known[w] == b.g[0].known[w] &&
                a.g[0].traces[w] == b.g[0].traces[w] && a.g[0].trials[w] == b.g[0].trials[w] &&
                a.g[0].kept[w] == b.g[0].kept[w];
    TAP_OK(same, "every metric and count of every window the same");
    sf_spans_free(&a);
    sf_spans_free(&b);
}

int main(void)
{
    test_quiet_middle();
    test_put();
    test_gap_cut();
    test_outlier();
    test_extremes();
    return tap_done();
}

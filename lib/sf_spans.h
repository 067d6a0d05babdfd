/* sf_spans.h - per-window series from the spans table of a spanfold database: what
 * inflect and spanfold report both read (lib/, so that neither reaches into the other).
 *
 * Spans are read in request-start order and cut into fixed windows (default
 * 10 s) per group (--by service | endpoint | grpc_method | all).  Per window and
 * group: span count, throughput (spans/s), exact P50/P95/P99/max latency (ms,
 * request first byte to response last byte), error rate (HTTP 5xx, grpc-status
 * != 0, RST_STREAM), and the sampling facts inflect's drift.c needs: distinct traces (the
 * unit of a sampling trial: one root decision per trace), kept traces, spans
 * per trace (amplification) and the configured rate from OpenTelemetry's
 * tracestate `ot=th:` when present.
 *
 * Windows are sparse: only windows with spans, and up to SF_SPANS_MAX_GAP empty
 * windows of each gap between them, are stored (win[] gives each one's number),
 * so the cost follows the spans, not the time they cover.  Spans far from the
 * bulk in time (beyond SF_SPANS_FENCE_SPAN times the 1st-99th percentile range, or
 * SF_SPANS_MAX_GAP windows, past either percentile) are left out of the windows and
 * counted in `outliers`, so that one stray timestamp cannot stretch a report.
 */
#ifndef SF_SPANS_H
#define SF_SPANS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_err.h"
#include "sf_map.h"

enum sf_span_metric {
    SF_M_COUNT,
    SF_M_THROUGHPUT,
    SF_M_P50,
    SF_M_P95,
    SF_M_P99,
    SF_M_MAX,
    SF_M_ERROR_RATE,
    SF_M_SAMPLED_SHARE,
    SF_M_AMPLIFICATION,
    SF_M_NMETRICS
};

#define SF_SPANS_MAX_GROUPS 64      /* further groups are folded into "(other)" */
#define SF_SPANS_MAX_CELLS  4000000 /* windows x groups kept (about 450 MB at most) */
#define SF_SPANS_MAX_GAP    100     /* empty windows kept of one gap; longer gaps are cut */
#define SF_SPANS_FENCE_SPAN 10      /* outlier fence: this many 1st-99th percentile ranges */
#define SF_SPANS_FENCE_MIN  20      /* fewer spans: no outliers are looked for */

/* Stable metric name: "count", "throughput", "p50", "p95", "p99", "max",
 * "error_rate", "sampled_share", "amplification". */
const char *sf_spans_metric_name(enum sf_span_metric m);

struct sf_win_group {
    char name[128];
    size_t cap;               /* windows allocated */
    double *m[SF_M_NMETRICS]; /* per window; NaN = no data (count/throughput: 0) */
    uint64_t *spans, *traces, *trials, *kept;
    uint64_t *known; /* spans whose outcome is known: error_rate's trials */
    double *cfg;     /* mean configured rate (ot=th) per window, NaN = none */
    /* the open window */
    double *lat;
    size_t nlat, latcap;
    uint64_t c_spans, c_err, c_known, c_traces, c_trials, c_kept, c_cfg_n;
    double c_cfg;
    int c_put; /* the open window came whole from sf_spans_put, with its quantiles: */
    double c_q[4];
    struct sf_map seen; /* the open window's traces: sf_hash of the trace id */
};

struct sf_span_windows {
    int64_t t0_ns, window_ns;
    size_t nwin;  /* windows stored */
    int64_t *win; /* per stored window: its number, (start - t0_ns) / window_ns */
    size_t wincap;
    struct sf_win_group *g;
    size_t ng;
    uint64_t nspans;     /* spans in the windows */
    int64_t last_ns;     /* the latest request start in the windows */
    uint64_t gaps_cut;   /* gaps longer than SF_SPANS_MAX_GAP windows, shortened */
    int64_t longest_gap; /* windows, before cutting */
    struct {
        uint64_t before, after;           /* spans left out, before and after the bulk */
        int64_t first_ns, last_ns;        /* the earliest and latest of them */
        int64_t bulk_from_ns, bulk_to_ns; /* the windows kept */
    } outliers;
    char note[700]; /* sf_spans_window: sources that are not complete ("" none) */
};

/* The trials of a rate metric of g, one per window: the spans of each window for
 * SF_M_ERROR_RATE, the traces with a sampling decision for SF_M_SAMPLED_SHARE (the
 * metric is a proportion of them); NULL for any other metric. */
const uint64_t *sf_spans_trials(const struct sf_win_group *g, enum sf_span_metric m);

/* Start time in ns of stored window w (t0_ns + win[w] * window_ns). */
int64_t sf_spans_window_start(const struct sf_span_windows *sw, size_t w);

/* Read the spans of the database at path (opened read-only) into windows.  by is
 * "all", "service", "endpoint" or "grpc_method"; complete_only leaves out sources
 * that are not complete; sw->note says which were not (sf_db_partial_note).
 * progress (spans read) goes to `progress` when not NULL.  Returns 0 (possibly
 * with nwin 0: no spans), or SF_E_IO (no such file) / SF_E_DB / SF_E_NOMEM /
 * SF_E_LIMIT with err set. */
int sf_spans_window(struct sf_span_windows *sw, const char *path, const char *by, int64_t window_ns,
                    int complete_only, FILE *progress, struct sf_err *err);

/* One line about the outliers and cut gaps of sw into buf ("" when none). */
void sf_spans_outlier_note(const struct sf_span_windows *sw, char *buf, size_t n);

/* The SQL expression (over `spans s`) of a span's sampling decision (1 kept, 0 dropped,
 * NULL unknown): its request's sampled flag, or, for a request that deferred the decision
 * (B3 without a sampling state), the decision the service marked for that span (tracefs
 * markers, span_intervals).  The drift series and its explanation both read it. */
const char *sf_spans_decision_sql(void);

/* The SQL expression (over `spans s`) that names a span's group for `by`; NULL when a
 * span has none, and for an HTTP exchange that carried JSON-RPC calls (they are counted
 * as spans of their own).  Anything that must group spans as inflect does uses it. */
const char *sf_spans_group_expr(const char *by);
/* The same in ClickHouse's dialect (spanfold/ch_series.c), over the unqualified columns
 * of spanfold's spans table there. */
const char *sf_spans_group_expr_ch(const char *by);

/* The same from rows fed one by one (tests, and the reader above): call
 * sf_spans_add for spans in non-decreasing start order, then sf_spans_finish.
 * latency_ms NaN = unknown; sampled -1 = unknown; trace NULL = no context;
 * cfg_rate NaN = none.  Returns 0 or SF_E_NOMEM / SF_E_LIMIT. */
void sf_spans_init(struct sf_span_windows *sw, int64_t window_ns);
int sf_spans_add(struct sf_span_windows *sw, const char *group, int64_t start_ns, double latency_ms,
                 int error, int sampled, const char *trace, double cfg_rate);
int sf_spans_finish(struct sf_span_windows *sw);
void sf_spans_free(struct sf_span_windows *sw);

/* Or from windows whose spans were gathered elsewhere (a ClickHouse cluster,
 * spanfold/ch_series.c): what sf_spans_add would have gathered in one window of one
 * group. */
struct sf_spans_cell {
    uint64_t spans, err, known;    /* known: spans with a latency or an error */
    uint64_t traces, trials, kept; /* per trace in the window, its first span's decision */
    uint64_t cfg_n;                /* traces whose first span has a configured rate */
    double cfg_sum;
    double q[4]; /* latency in ms at P50, P95, P99 and the maximum (sf_quantile_exact,
                    over the spans with a latency; NaN: none) */
};

/* Set sw->t0_ns (the first span's start) after sf_spans_init, then put each cell in
 * order of window number num (>= every earlier one), and within a window of the
 * rank of each group's first span; a group is put at most once per window.  Set
 * sw->last_ns (the last span's start) before sf_spans_finish.  The result is the one
 * sf_spans_add gives for the same spans.  Returns 0 or SF_E_NOMEM / SF_E_LIMIT. */
int sf_spans_put(struct sf_span_windows *sw, const char *group, int64_t num,
                 const struct sf_spans_cell *cell);

#endif

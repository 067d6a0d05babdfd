/* ch_series.h - the report's windows of the spans (lib/sf_spans.h), gathered by a
 * ClickHouse cluster: per endpoint and window the counts, errors, latency percentiles
 * and sampling trials are computed where the spans are, and only those travel.  The
 * result is the one sf_window_auto() and sf_spans_window() give on the file ch_pull
 * would write from the same tables (tests/spanfold/t_clickhouse.sh). */
#ifndef SPANFOLD_CH_SERIES_H
#define SPANFOLD_CH_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "ch.h"
#include "sf_err.h"
#include "sf_spans.h"

/* What the queries of one ch_series call moved (the answers' bytes). */
struct ch_series_cost {
    unsigned queries;
    uint64_t bytes;
    double seconds; /* wall time, the cluster's work and the transfer */
};

/* The windows of the spans of c's database (through the Distributed tables, or the
 * shards that answered, with cluster) into sw, grouped by `by` as sf_spans_window
 * groups them; *window_ns 0 is chosen as sf_window_auto() chooses it.  cost (may be NULL) is added
 * to.  Returns 0, or SF_E_DB / SF_E_MALFORMED / SF_E_USAGE (no complete source) / SF_E_NOMEM /
 * SF_E_LIMIT with err filled; sw is then empty.  With keep, *keep is what the next
 * questions of the same spans read (ch_spanq_free), NULL on error. */
struct ch_spanq;
int ch_series(struct ch *c, const char *cluster, const char *by, int64_t *window_ns,
              struct sf_span_windows *sw, struct ch_series_cost *cost, struct ch_spanq **keep,
              struct sf_err *err);
/* What ch_series kept (keep): the span rows and groups its queries read, for more
 * questions of the same data (ch_sets.h); c must stay open while they are asked. */
void ch_spanq_free(struct ch_spanq *p);
/* Its groups: how many, and the name of rank r < that (as the windows name it). */
int ch_spanq_groups(const struct ch_spanq *p);
const char *ch_spanq_group(const struct ch_spanq *p, int r);

/* inflect --clickhouse through spanfold (inflect_windows_fn, inflect/run.h): the
 * windows of ctx->ch's database, grouped by ctx->by.  Returns 0 or 2 (printed). */
struct inflect_ctx;
int ch_series_inflect(const struct inflect_ctx *ctx, int64_t *window_ns, struct sf_span_windows *sw,
                      char *name, size_t n);

#endif

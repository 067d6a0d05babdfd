/* ch_sets.h - the report's CPU sets (spanfold/report_data.c's cpu_sets) folded by a
 * ClickHouse cluster where the samples are: only stacks and their sums travel, never a
 * sample.  The spans, groups and complete sources are those ch_series read (its keep):
 * the answers are those report_data.c computes from the file ch_pull would write
 * (tests/spanfold/t_clickhouse.sh compares the reports byte for byte). */
#ifndef SPANFOLD_CH_SETS_H
#define SPANFOLD_CH_SETS_H

#include <stddef.h>
#include <stdint.h>

#include "ch_series.h"
#include "sf_err.h"

struct pf_table;

/* The samples of the complete sources, folded by their frames (perf-fold's keys and
 * counts): every one into all; those attributed to a span among the slowest (spec, as
 * sf_select_slowest takes it, over the complete sources' spans) into in, the other
 * attributed ones into out.  The tables are set up by the caller.  cost (may be NULL) is
 * added to.  The slowest's cut is asked first; where their ids would pass the servers'
 * memory limit for a query as one set, the question is asked in buckets of their hash
 * (ch_buckets), its sums added.  Returns 0, or an SF_E_* with err filled. */
int ch_sets_folds(struct ch_spanq *p, const char *slowest, struct pf_table *all,
                  struct pf_table *in, struct pf_table *out, struct ch_series_cost *cost,
                  struct sf_err *err);

/* Per group rank (ch_spanq's names): the latency (ms) at or above which a span is among
 * the slowest share of its group's spans with a latency (k = ceil(share * n) of them, at
 * least 1, ties kept: report_data.c's slow_cut) into cut[rank], INFINITY without one, and
 * how many are at or above it into n[rank].  Each cut is a partial sort of k on the
 * servers, not an array of the group's latencies.  Returns as ch_sets_folds. */
int ch_sets_cuts(struct ch_spanq *p, double share, double *cut, uint64_t *n,
                 struct ch_series_cost *cost, struct sf_err *err);

/* One answer row of ch_sets_leaves; returns 0 or -1 (out of memory). */
typedef int (*ch_sets_leaf_fn)(void *arg, int rank, int slow, const char *leaf, size_t len,
                               uint64_t n);

/* The attributed samples summed per group rank (ch_spanq's names), leaf frame and whether
 * their span is slow: the span the report finds for an id (of those with a group, the
 * first in start order) has a latency at or above cut[rank] (ms; INFINITY: none is).  fn
 * may be called more than once per (rank, slow, leaf), its sums to be added: the question
 * is asked in buckets of span ids where one would pass the servers' memory limit.
 * Returns as ch_sets_folds. */
int ch_sets_leaves(struct ch_spanq *p, const double *cut, ch_sets_leaf_fn fn, void *arg,
                   struct ch_series_cost *cost, struct sf_err *err);

/* The per-span answers (ch_sets_leaves, ch_sets_span_cpu, ch_sets_blocked,
 * ch_sets_explore_count) only for the ids of the spans rows that meet cond (a ClickHouse
 * condition on a spans row, sf_thin_sql_ch: the requests the report analyses one by one),
 * NULL: every span's.  Their span-id joins then hold the sample, not every span.  Returns
 * 0, or SF_E_LIMIT with err filled. */
int ch_sets_only(struct ch_spanq *p, const char *cond, struct sf_err *err);

/* Per span id, the periods of its clock samples (cpu-clock, task-clock): fn(arg, id, n,
 * ns) once per id, as report_cause.c reads them from a file.  Returns as ch_sets_folds. */
typedef int (*ch_sets_cpu_fn)(void *arg, const char *id, size_t n, int64_t ns);
int ch_sets_span_cpu(struct ch_spanq *p, ch_sets_cpu_fn fn, void *arg, struct ch_series_cost *cost,
                     struct sf_err *err);

/* Per span id and reason (report_cause.c's "reason under frame"), the length of its
 * off-CPU intervals, in (id, reason) byte order: fn(arg, id, n, why, wn, ns); *any: whether
 * there is any off-CPU interval at all.  Returns as ch_sets_folds. */
typedef int (*ch_sets_blocked_fn)(void *arg, const char *id, size_t n, const char *why, size_t wn,
                                  int64_t ns);
int ch_sets_blocked(struct ch_spanq *p, ch_sets_blocked_fn fn, void *arg, int *any,
                    struct ch_series_cost *cost, struct sf_err *err);

/* The samples' events: the least (ev, n bytes, "" when none) and how many distinct. */
int ch_sets_events(struct ch_spanq *p, char *ev, size_t n, uint64_t *distinct,
                   struct ch_series_cost *cost, struct sf_err *err);

/* sf_db_coverage (lib/sf_db.h) on the cluster: how each process's samples were
 * attributed, the max processes with the most samples into rows. */
struct sf_db_coverage;
int ch_sets_coverage(struct ch_spanq *p, struct sf_db_coverage *rows, size_t max, size_t *n,
                     struct ch_series_cost *cost, struct sf_err *err);

/* How many samples are attributed to a span the report has (one with a group): the
 * samples the page's explorer would carry, before its --page-samples cut. */
int ch_sets_explore_count(struct ch_spanq *p, uint64_t *n, struct ch_series_cost *cost,
                          struct sf_err *err);

#endif

/* ch_spanq.h - the span rows the cluster's queries read (ch_series.c's `base`: the
 * complete sources' spans with a start and a group, their ids as ch_pull numbers them,
 * the groups ranked as the windows name them), shared by the files that ask the
 * cluster about them: ch_series.c (the windows) and ch_sets.c (the report's CPU sets).
 * Private to those two; ch_series.h and ch_sets.h are the interfaces. */
#ifndef SPANFOLD_CH_SPANQ_H
#define SPANFOLD_CH_SPANQ_H

#include "ch.h"
#include "ch_series.h"
#include "sf_buf.h"
#include "sf_err.h"
#include "sf_spans.h"

struct ch_spanq {
    struct ch *ch;
    struct ch_series_cost *cost; /* added to by every query (may be NULL) */
    struct sf_err *err;
    const char *group;  /* sf_spans_group_expr_ch(by) */
    char settings[256]; /* of the queries that group by trace or gather latencies */
    uint64_t mem_limit; /* the server's max_memory_usage for a query (0: none) */
    char spans[CH_TABLE_MAX], intervals[CH_TABLE_MAX], contexts[CH_TABLE_MAX];
    char samples[CH_TABLE_MAX], stacks[CH_TABLE_MAX], offcpu[CH_TABLE_MAX];
    char shared[CH_TABLE_MAX]; /* shared_intervals */
    /* keys: the complete sources' skeys; ord: a spans row's id as ch_pull gives it;
       base: the span rows (skey, id, t, o, g, tr, sampled, sn, sid, e, lat); map: an
       expression of g, the rank of its group (255: none, "(other)" absent) */
    struct sf_buf keys, ord, base, map, sql, r;
    /* ch_sets_only's spans, as a condition on a row's span_id and on a sid: whose
       per-span answers are asked (empty: every span's) */
    struct sf_buf only, only_sid;
    int ng; /* the groups: rank r is named names[r] (sf_spans' cut name) */
    char names[SF_SPANS_MAX_GROUPS][sizeof(((struct sf_win_group *)0)->name)];
};

/* p->sql with " FORMAT RowBinary" appended, into p->r; counted in p->cost.  Returns 0 or
 * an SF_E_* with p->err filled. */
int ch_spanq_run(struct ch_spanq *p);
/* p->sql set to the query fmt formats.  Returns 0, or SF_E_LIMIT ("query too long") with
 * p->err filled. */
int ch_spanq_sql(struct ch_spanq *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* SF_E_MALFORMED: an answer that ends inside a row. */
int ch_spanq_truncated(struct ch_spanq *p);

#endif

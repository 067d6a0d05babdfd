/* stacks_ch.h - spanfold stacks over ClickHouse (stacks_ch.c). */
#ifndef SPANFOLD_STACKS_CH_H
#define SPANFOLD_STACKS_CH_H

#include <stddef.h>

#include "../perf-fold/perf_fold.h"
#include "ch.h"
#include "sf_select.h"

/* The connection and the qualified tables a query reads. */
struct stacks_ch {
    struct ch *ch;
    char spans[CH_TABLE_MAX], samples[CH_TABLE_MAX], stacks[CH_TABLE_MAX];
    char offcpu[CH_TABLE_MAX];
    int count_samples; /* count samples (1 each), not the sum of their periods */
    int rows;          /* enum pf_rows: CPU samples, off-CPU intervals, or both (wall) */
};

/* Name c's tables in s as ch_table does.  Returns 0 or SF_E_LIMIT. */
int stacks_ch_tables(struct stacks_ch *s, struct ch *c, int cluster);

/* Fold into t the attributed samples (s->rows: or off-CPU intervals, weighing their ns,
 * or both, each interval's stack ending in "[off-CPU: REASON]" as perf-fold's --wall
 * writes it) of the spans sel selects (NULL: every attributed row; rest: of every other
 * span), as stacks.c's fold_side does on SQLite; sel
 * must be compiled in the ClickHouse dialect over s->spans.  Returns 0, or SF_E_DB /
 * SF_E_MALFORMED / SF_E_NOMEM / SF_E_LIMIT with err filled. */
int stacks_ch_fold(const struct stacks_ch *s, const struct sf_select *sel, int rest,
                   struct pf_table *t, struct sf_err *err);

/* The unit of the counts, as stacks.c's unit(): "ns" for off-CPU time and a clock event,
 * else the one event's name, else "samples".  Always returns 0. */
int stacks_ch_unit(const struct stacks_ch *s, char *buf, size_t n);

#endif

/* run.h - the two modes of inflect, driven from main.c. */
#ifndef INFLECT_RUN_H
#define INFLECT_RUN_H

#include "inflect.h"

/* --series: read, analyse, write JSON / report, evaluate gates.  Returns the exit
 * status (0, 1 gate failed, 2 input or output error), having printed any error. */
int run_series(const struct inflect_ctx *ctx);

/* --db: window spans, analyse every metric, sampling drift, clock drift, report,
 * JSON, gates.  Returns the exit status as run_series. */
int run_db(const struct inflect_ctx *ctx);

/* The --db mode's series: one per group and metric (group-major, SF_M_NMETRICS each) from
 * the windows with data (row = window index), each analysed (inflect_analyse; the error
 * rate also with the 0.8 % baseline ceiling).  *ser and *res are calloc'ed even on
 * failure (free each element with series_free / inflect_result_free, then the arrays).
 * Returns 0 or -1 (out of memory). */
struct sf_span_windows;
int run_db_series(const struct inflect_ctx *ctx, const struct sf_span_windows *sw,
                  struct inflect_series **ser, struct inflect_result **res);

/* The numbers behind every chart of the --db report, one row per group and window (RFC
 * 4180, the group a quoted field), into the file at path (DIR/windows.csv; spanfold
 * report writes it too).  drift and pi have sw->ng entries.  Returns 0 or -1 (printed,
 * prefixed by tool). */
struct drift_result;
int run_windows_csv(const char *path, const char *tool, const struct sf_span_windows *sw,
                    const struct drift_result *drift, const double *const *pi);

/* --clickhouse: the windows of --db read from a ClickHouse cluster instead of a file.
 * The spanfold front end, which links the ClickHouse client, sets it (spanfold/
 * ch_series.c); in the inflect program it is NULL and --clickhouse is refused.  Fills
 * sw grouped by ctx->by (*window_ns 0: chosen as for a file) and name (n bytes: what
 * messages and the report call the data); returns 0, or an exit status with the error
 * printed. */
typedef int (*inflect_windows_fn)(const struct inflect_ctx *ctx, int64_t *window_ns,
                                  struct sf_span_windows *sw, char *name, size_t n);
extern inflect_windows_fn inflect_ch_windows;

/* What the gates see besides the series: the sampling-drift verdict and how much
 * data there was. */
struct run_facts {
    int is_db;
    int drift_alarm;  /* some group's drift chart alarmed */
    int drift_tested; /* some group had a configured rate (--expect-rate, ot=th) */
    size_t nspans;    /* --db: spans read */
    const char *input;
};

/* Every --gate once the mode is known: split a --db subject into GROUP/METRIC, check
 * that the metric exists and its unit fits, allow "drift" only with --db.  Returns 0
 * or the exit status 2 (the error printed, with the gate's column). */
int run_gates_prepare(struct inflect_ctx *ctx);

/* Evaluate gate g against the analysed series (metric, and group when g names one)
 * and the facts.  Returns the verdict: SF_GATE_FAIL for a regression, SF_GATE_ERROR
 * when it cannot be evaluated (nothing matches without --allow-missing, too few
 * observations, drift without a configured rate); detail gets a one-line reason. */
enum sf_gate_verdict run_gate(const struct inflect_ctx *ctx, const struct inflect_gate *g,
                              const struct inflect_result *res, size_t nres,
                              const struct run_facts *f, char *detail, size_t dsz);

/* Helpers shared by both modes (run.c). */
struct sf_jw;
struct sf_err;
int run_print_err(const struct inflect_ctx *ctx, const struct sf_err *err, const char *file);
/* Evaluate every gate; write them to the JSON (w may be NULL), the log, --summary
 * and --junit.  Returns the exit status. */
int run_gates(const struct inflect_ctx *ctx, const struct inflect_result *res, size_t nres,
              const struct run_facts *f, struct sf_jw *w);
#include <stdio.h>
/* The summary's JSON layout (sf_jw_init_pretty): two spaces a level, numbers with
 * 10 significant digits, so that the file is byte-stable across runs and builds. */
#define RUN_JSON_INDENT 2
#define RUN_JSON_DIGITS 10
FILE *run_json_open(const struct inflect_ctx *ctx, char *path, size_t psz);
int run_json_close(const char *path, FILE *f);

#endif

/* sf_gate.h - the one CI gate language: parser, evaluator, confidence intervals,
 * and the Markdown / JUnit XML reports, shared by `perf-fold diff --fail-if`,
 * `inflect --gate` and `spanfold gate` (docs/ci.md is the reference).
 *
 *   gate    := SUBJECT OP VALUE | SUBJECT            ("drift": a bare predicate)
 *   OP      := '>' | '>=' | '<' | '<='               (the last '<' or '>' in the text)
 *   VALUE   := [SIGN] NUMBER [UNIT]
 *   UNIT    := 'pt' | '%' | 'ms' | 'us' | 's' | 'samples' | (none)
 *
 *   no sign, not %   a level: the new value (a profile's share, a segment's level)
 *   + or - sign      a change: new - old, in the unit
 *   %                a relative change: (new - old) / old, sign optional
 *   pt               percentage points of a share (a frame's share, error_rate)
 *
 * Values are kept in the metric's base unit: shares as fractions (5pt = 0.05),
 * durations in ms (1s = 1000), relative changes as fractions (20% = 0.2).
 */
#ifndef SF_GATE_H
#define SF_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "sf_err.h"

#define SF_GATE_TEXT_MAX 256
#define SF_GATE_MIN_N    10 /* samples in each profile for a confidence interval */

enum sf_gate_op { SF_GATE_NONE, SF_GATE_GT, SF_GATE_GE, SF_GATE_LT, SF_GATE_LE };
enum sf_gate_mode { SF_GATE_LEVEL, SF_GATE_CHANGE, SF_GATE_RELATIVE };
enum sf_gate_unit { SF_GATE_U_NONE, SF_GATE_U_PT, SF_GATE_U_PCT, SF_GATE_U_MS, SF_GATE_U_SAMPLES };

/* What a subject measures: decides which units a gate on it may use. */
enum sf_gate_kind {
    SF_GATE_K_SHARE,  /* a fraction of a total: pt, % */
    SF_GATE_K_MS,     /* a duration in ms: ms, us, s, %, or none (ms) */
    SF_GATE_K_COUNT,  /* a number of samples or spans: samples, %, or none */
    SF_GATE_K_NUMBER, /* any other number: %, or none */
    SF_GATE_K_ANY,    /* a column of unknown meaning (inflect --series): every unit */
};

enum sf_gate_verdict { SF_GATE_PASS, SF_GATE_INCONCLUSIVE, SF_GATE_FAIL, SF_GATE_ERROR };

struct sf_gate {
    char text[SF_GATE_TEXT_MAX];    /* as given */
    char subject[SF_GATE_TEXT_MAX]; /* a metric, a frame name, "frame", "total", "drift" */
    enum sf_gate_op op;             /* SF_GATE_NONE: a bare predicate */
    enum sf_gate_mode mode;
    enum sf_gate_unit unit;
    double value;    /* in the base unit (see above) */
    size_t unit_col; /* 1-based column of the unit (or of the end), for errors */
};

/* Parse text into g.  Returns 0, or SF_E_USAGE with err->col the 1-based column
 * of the fault and err->msg saying what was expected there. */
int sf_gate_parse(struct sf_gate *g, const char *text, struct sf_err *err);

/* The one error format for a gate: "TOOL: gate 'TEXT': column N: MESSAGE" (no
 * column when err->col is 0).  Always NUL-terminates. */
void sf_gate_errfmt(const char *tool, const char *text, const struct sf_err *err, char *out,
                    size_t n);

/* Check that g's unit fits a subject of this kind.  Returns 0 or SF_E_USAGE (err
 * names the column and the units the subject takes). */
int sf_gate_check(const struct sf_gate *g, enum sf_gate_kind kind, struct sf_err *err);

/* One thing measured for a gate: a value before and after (old and new profile,
 * the segments either side of a change point).  For shares counted from samples,
 * n0 and n1 are the samples behind the two shares (0 when not counted), which
 * give the gate a confidence interval. */
struct sf_gate_obs {
    double before, after;
    double n0, n1;
};

/* The gate's statistic for one observation and its verdict. */
struct sf_gate_res {
    enum sf_gate_verdict verdict;
    double est;    /* the level, change or relative change, in the base unit */
    double lo, hi; /* its interval at the confidence (has_ci) */
    int has_ci;
    double confidence; /* of the interval */
};

/* Evaluate g on one observation.  confidence in (0, 1) asks for significance: a
 * gate whose estimate crosses the threshold fails only when its whole interval
 * does (a two-sided interval at that level), else it is inconclusive; 0 judges the
 * point estimate (an interval at 0.95 is still computed for the report).  Intervals
 * exist for shares with n0, n1 >= SF_GATE_MIN_N: Wilson score for a level,
 * Newcombe's hybrid score (method 10, 1998) for a difference, that interval over
 * the old share for a relative change.  Fewer samples with a confidence asked for
 * is SF_GATE_ERROR.  Returns r->verdict. */
enum sf_gate_verdict sf_gate_eval(const struct sf_gate *g, const struct sf_gate_obs *o,
                                  double confidence, struct sf_gate_res *r);

/* The two-sided normal quantile z for confidence c in (0, 1) (1.96 for 0.95). */
double sf_gate_z(double c);

/* Wilson score interval of a share p of n samples at z.  n > 0. */
void sf_gate_wilson(double p, double n, double z, double *lo, double *hi);

/* Newcombe's hybrid score interval of p1 - p0 (shares of n1 and n0 samples). */
void sf_gate_newcombe(double p0, double n0, double p1, double n1, double z, double *lo, double *hi);

/* The worse of two verdicts: error > fail > inconclusive > pass. */
enum sf_gate_verdict sf_gate_worse(enum sf_gate_verdict a, enum sf_gate_verdict b);

/* "pass", "fail", "inconclusive", "error". */
const char *sf_gate_verdict_name(enum sf_gate_verdict v);

/* Format r's statistic in g's unit ("+4.20 pt [1.10, 7.30] at 95 %", "+71.8 %",
 * "36 ms").  Always NUL-terminates. */
void sf_gate_format(const struct sf_gate *g, const struct sf_gate_res *r, char *out, size_t n);

/* ---- a run's gates, its exit status and its reports ----------------------------- */

#define SF_GATE_DETAIL_MAX 384

struct sf_gate_entry {
    const char *gate; /* the gate's text (not copied) */
    enum sf_gate_verdict verdict;
    char detail[SF_GATE_DETAIL_MAX]; /* what was measured, or why it is an error */
};

struct sf_gate_run {
    const char *tool;       /* "perf-fold diff", "inflect", "spanfold gate" */
    const char *subject;    /* what was gated: "base.folded → new.folded", a database */
    int inconclusive_fails; /* --on-inconclusive fail */
    double confidence;      /* --confidence, 0 = point estimates */
    struct sf_gate_entry *e;
    size_t n;
};

/* The exit status of a run (docs/exit-status.md): 2 when a gate is an error, 1 when
 * one failed (or was inconclusive with --on-inconclusive fail), else 0. */
int sf_gate_exit(const struct sf_gate_run *run);

/* One line on f for every gate that did not pass ("TOOL: gate 'G' failed: detail"),
 * for the CI log.  Returns 0 or SF_E_IO. */
int sf_gate_write_log(FILE *f, const struct sf_gate_run *run);

/* Append a Markdown section (a heading and one table row per gate) to f.  Every
 * string from data goes through lib/sf_text (GitHub and GitLab Markdown, GFM cells).  Returns 0 or
 * SF_E_IO. */
int sf_gate_write_md(FILE *f, const struct sf_gate_run *run);

/* Write a JUnit XML report to f: one <testsuite> named after the tool, one
 * <testcase> per gate, <failure> for a failed (or counted inconclusive) gate, <error>
 * for a gate that could not be evaluated.  Returns 0 or SF_E_IO. */
int sf_gate_write_junit(FILE *f, const struct sf_gate_run *run);

#endif

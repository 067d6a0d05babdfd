/* sf_select_int.h - what the files of the selection language share (not a public
 * header: lib/sf_select.c and lib/sf_select_expr.c only).
 *
 *   sf_select.c       the selection's buffers, the SQL and parameter writers below,
 *                     the shorthands (--status, --slowest, --during, ...), errors
 *   sf_select_expr.c  the --where language: columns, lexer, parser
 *
 * A call that adds a term runs sf_sel_begin(), writes SQL with the emitters (which
 * do nothing once the call failed) and ends with sf_sel_end(), which rolls the
 * fragment and the parameters back when the call failed.
 */
#ifndef SF_SELECT_INT_H
#define SF_SELECT_INT_H

#include "sf_select.h"

/* Compilation state of one call. */
struct sf_sel_comp {
    struct sf_select *s;
    struct sf_err *err;
    size_t sql_len0, nparam0; /* to roll back to */
    int failed;
};

/* Record the first error of the call (code, the 0-based byte off, a message).
 * Returns code, or the earlier error's. */
int sf_sel_fail(struct sf_sel_comp *c, int code, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Append SQL text; a literal as "?" with its parameter.  Each returns 0 or the
 * call's error (SF_E_LIMIT, SF_E_NOMEM). */
int sf_sel_emit(struct sf_sel_comp *c, const char *sql);
int sf_sel_emit_int(struct sf_sel_comp *c, int64_t v);
int sf_sel_emit_real(struct sf_sel_comp *c, double v);
int sf_sel_emit_text(struct sf_sel_comp *c, const char *t, size_t n);

/* The nearest-rank percentile p (0..100) of the column expression col over every
 * span with a value, as a scalar subquery. */
int sf_sel_percentile(struct sf_sel_comp *c, const char *col, double p);

/* Open a term ("(" or " AND ("); close it (")"), or roll it back.  end returns 0 or
 * the call's error. */
void sf_sel_begin(struct sf_sel_comp *c);
int sf_sel_end(struct sf_sel_comp *c);

/* The SQL of the selection's dialect: sqlite's text or ClickHouse's. */
const char *sf_sel_dialect_sql(const struct sf_sel_comp *c, const char *sqlite, const char *ch);

/* Append, in the ClickHouse dialect, the text as a quoted string literal ('...', with
 * \\, \' and \xHH for control bytes).  Returns 0 or the call's error. */
int sf_sel_emit_ch_quoted(struct sf_sel_comp *c, const char *t, size_t n);

/* 1 if s[0..n) is all hex digits. */
int sf_sel_is_hex(const char *s, size_t n);

#endif

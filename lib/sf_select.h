/* sf_select.h - the span selection language: a small filter over span columns that
 * compiles to an SQLite WHERE fragment with bound parameters.
 *
 *   endpoint = "/api/search" and duration > p95
 *   (status = 5xx or grpc_status != 0) and not partial
 *   path ~ "/api/[a-z]*" and duration >= 120ms
 *
 *   expr    := term { "or" term }
 *   term    := factor { "and" factor }
 *   factor  := "not" factor | "(" expr ")" | COLUMN OP value | BOOLCOLUMN
 *   OP      := "=" | "!=" | "<" | "<=" | ">" | ">=" | "~" (glob) | "like" (SQL LIKE)
 *   value   := "string" | NUMBER [UNIT] | pNN (percentile) | NXX (status class) | true | false
 *
 * The language is documented in docs/spanfold.md ("Selecting spans").  Data never
 * becomes SQL text: every literal is a bound parameter, every column a fixed
 * expression from this module's table.  The fragment is written for
 *
 *   SELECT ... FROM spans WHERE <fragment>
 *
 * (unqualified column names, so it must not be used in a join with other tables
 * that share a column name; use `span_id IN (SELECT span_id FROM spans WHERE
 * <fragment>)` there).  Percentiles (duration > p95) are subqueries over every span
 * of the database, so the fragment is complete on its own.
 *
 * The same selection compiles to ClickHouse's dialect (sf_select_dialect, before any
 * adder): there the literals are written inline as quoted ClickHouse literals,
 * because the HTTP interface of ClickHouse 18.16 has no bound parameters; each is
 * escaped byte by byte, so the fragment is still fixed text around data that cannot
 * leave its quotes.  GLOB becomes match() on the same pattern as a regular
 * expression, LIKE stays ASCII-case-insensitive as SQLite's is, percentiles are
 * array subscripts (or, with sf_select_ch_ask, values asked now), and every subquery
 * reads the spans table the caller names (a Distributed table, so that a percentile is
 * over the whole cluster).
 *
 * Several calls to the adders below combine with AND.  Errors fill err with code
 * SF_E_USAGE (or SF_E_LIMIT / SF_E_NOMEM / SF_E_DB), err->col = the 1-based byte
 * column in the expression and a message; sf_select_format_error() turns that into
 * the expression with a caret under the column.  lib/ never prints.
 */
#ifndef SF_SELECT_H
#define SF_SELECT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "sf_buf.h"
#include "sf_err.h"

#define SF_SELECT_EXPR_MAX   4096       /* bytes of one expression */
#define SF_SELECT_DEPTH_MAX  64         /* nesting of parentheses and "not" */
#define SF_SELECT_PARAMS_MAX 1024       /* bound parameters in one selection */
#define SF_SELECT_SQL_MAX    (1u << 20) /* bytes of the compiled fragment */

enum sf_select_dialect { SF_SELECT_SQLITE, SF_SELECT_CLICKHOUSE };

enum sf_select_ptype { SF_SELECT_P_TEXT, SF_SELECT_P_INT, SF_SELECT_P_REAL };

struct sf_select_param {
    enum sf_select_ptype type;
    char *text; /* SF_SELECT_P_TEXT: owned, NUL-terminated */
    int64_t i;
    double r;
};

/* Runs sql (a SELECT of one value: a count, or one span's value of a column) on the
 * cluster: 0 and out holding the value as TabSeparated writes it ("" when no row),
 * NUL-terminated in n bytes, or an SF_E_* with err filled. */
typedef int (*sf_select_ask_fn)(void *arg, const char *sql, char *out, size_t n,
                                struct sf_err *err);

/* A selection being built.  Initialise with sf_select_init, free with sf_select_free. */
struct sf_select {
    struct sf_buf sql; /* the fragment, NUL-terminated; empty until a term is added */
    struct sf_select_param *param;
    size_t nparam, capparam;
    unsigned nterms; /* calls that added a term */
    enum sf_select_dialect dialect;
    const char *spans;    /* the spans table of subqueries ("spans") */
    sf_select_ask_fn ask; /* sf_select_ch_ask's (NULL: none) */
    void *ask_arg;
};

void sf_select_init(struct sf_select *s);
void sf_select_free(struct sf_select *s);

/* Compile what is added from now on for dialect d, with spans_table (not copied;
 * NULL: "spans") in the subqueries of percentiles and --slowest.  Call it before the
 * first adder.  In SF_SELECT_CLICKHOUSE the fragment has no parameters, and
 * sf_select_during's h is a file whose sources.id are the ClickHouse sources' skeys
 * (as int64; spanfold/ch_pull.c's CH_PULL_CLOCKS writes it): the window is placed by
 * the same code, and each source's term names its skey. */
void sf_select_dialect(struct sf_select *s, enum sf_select_dialect d, const char *spans_table);

/* In SF_SELECT_CLICKHOUSE, a percentile or --slowest is asked of the servers now, by
 * fn: the count of values, then the k-th of them by a partial sort (ORDER BY ... LIMIT
 * k - 1, 1), and compiles to that value as a literal, rather than to an array of every
 * value (8 bytes a span on the server asked, twice to sort it) in a subquery that each
 * query using the fragment would sort again: what a cluster of tens of millions of
 * spans needs.  Call it before the first adder; an adder then returns fn's error. */
void sf_select_ch_ask(struct sf_select *s, sf_select_ask_fn fn, void *arg);
/* Add a --where expression (AND with what is there).  Returns 0, or SF_E_USAGE with
 * err->col at the offending token, SF_E_LIMIT (too long, too deep, too many
 * literals) or SF_E_NOMEM; on failure s is unchanged. */
int sf_select_where(struct sf_select *s, const char *expr, struct sf_err *err);

/* Shorthands, each the same as a --where term (and documented beside it):
 *   trace_id:    16 or 32 hex digits (16 match the low half, as 64-bit ids are stored)
 *   span_id:     16 hex digits
 *   status:      "5xx", "404", or a comma list "4xx,503"
 *   grpc_method: "Method" or "package.Service/Method"
 *   slowest:     "5%" (the slowest 5 % of spans by duration, ties kept) or "20" (spans)
 * Same returns as sf_select_where. */
int sf_select_trace_id(struct sf_select *s, const char *id, struct sf_err *err);
int sf_select_span_id(struct sf_select *s, const char *id, struct sf_err *err);
int sf_select_status(struct sf_select *s, const char *spec, struct sf_err *err);
int sf_select_grpc_method(struct sf_select *s, const char *m, struct sf_err *err);
int sf_select_slowest(struct sf_select *s, const char *spec, struct sf_err *err);

/* --during A..B: spans whose request started in [A, B) on the wall clock.  A and B
 * are each empty (open), "+DURATION" (after the capture start: +10s, +1.5m),
 * "HH:MM[:SS[.frac]]" (the capture's day) or "YYYY-MM-DD[T ]HH:MM[:SS[.frac]]",
 * optionally followed by "Z" or "+HH:MM"/"-HH:MM"; without one the time is in tz:
 * NULL or "UTC" (the default), "local" (the TZ environment), or "+HH:MM".  h is the
 * database: the capture start and the clocks of the spans' sources (sources.clock)
 * come from it, and a source not on CLOCK_REALTIME is placed through its
 * clock_fits row to "realtime".  Same returns as sf_select_where, plus SF_E_DB. */
int sf_select_during(struct sf_select *s, sqlite3 *h, const char *range, const char *tz,
                     struct sf_err *err);

/* The fragment: "1" when nothing was added (every span). */
const char *sf_select_sql(const struct sf_select *s);

/* The one definition of a span's endpoint, as an SQL expression over the spans table's
 * unqualified columns: for a JSON-RPC call its method, with the tool or prompt name
 * after a space ("tools/call search_docs"); "service/method" for gRPC (or the method
 * alone); else the path without its query string.  The selection's `endpoint` column,
 * inflect's --by endpoint and the report's groups all use it, so a name the report shows
 * can be selected as is. */
const char *sf_select_endpoint_sql(void);
/* t[0..n) as a ClickHouse string literal appended to b: quoted, escaped byte by byte
 * (\\, \', \xHH for control bytes), so that no data leaves its quotes.  The dialect's
 * literals and every query spanfold writes inline use it.  Returns as sf_buf_append. */
struct sf_buf;
int sf_select_ch_literal(struct sf_buf *b, const char *t, size_t n);

/* The same in ClickHouse's dialect, over the spans table's unqualified columns. */
#define SF_ENDPOINT_CH                                                                             \
    "(CASE WHEN proto = 'jsonrpc' THEN method || coalesce(' ' || nullIf(rpc_name, ''), '')"        \
    " WHEN grpc_method IS NOT NULL THEN coalesce(grpc_service || '/', '') || grpc_method"          \
    " WHEN position(path, '?') > 0 THEN substring(path, 1, position(path, '?') - 1)"               \
    " ELSE path END)"
#define SF_ENDPOINT_SQL                                                                            \
    "(CASE WHEN proto = 'jsonrpc' THEN method || COALESCE(' ' || NULLIF(rpc_name, ''), '')"        \
    " WHEN grpc_method IS NOT NULL THEN COALESCE(grpc_service || '/', '') || grpc_method"          \
    " WHEN instr(path, '?') > 0 THEN substr(path, 1, instr(path, '?') - 1) ELSE path END)"

struct sf_buf;
/* The same endpoint computed in C from a span's columns (NULL where the SQL gives
 * NULL): path itself, or the text in scratch (reset first).  NULL also when scratch
 * cannot hold it.  tests/unit/test_select.c holds it equal to the SQL. */
struct sf_endpoint_of {
    const char *proto, *method, *rpc_name, *grpc_service, *grpc_method, *path;
};
const char *sf_select_endpoint(const struct sf_endpoint_of *c, struct sf_buf *scratch);

/* Bind the parameters to st from index first on (the fragment's "?" in order).
 * Returns the next free index, or SF_E_DB when SQLite refused a binding. */
int sf_select_bind(const struct sf_select *s, sqlite3_stmt *st, int first);

/* The expression with a caret under err->col, two lines ending in '\n', control
 * bytes shown as '?', the caret counted in UTF-8 characters.  Always NUL-terminates;
 * returns the length that would have been written (snprintf semantics). */
int sf_select_format_error(const char *expr, const struct sf_err *err, char *out, size_t outsz);

/* The column names, comma-separated (for help texts and error messages). */
const char *sf_select_columns(void);

#endif

/* series.h - time series for inflect: plain CSV/NDJSON files and span windows.
 *
 * A struct inflect_series is one named value column: n observations (missing
 * cells dropped), each with its time and its 0-based row in the input, so that
 * change points found on the compacted values map back to input rows.
 */
#ifndef INFLECT_SERIES_H
#define INFLECT_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

#define SERIES_MAX_ROWS 10000000u /* rows per input: keeps memory bounded */
#define SERIES_MAX_COLS 256
#define SERIES_NAME_MAX 128

struct inflect_series {
    char name[SERIES_NAME_MAX]; /* column or "group/metric" */
    size_t n;                   /* observations present */
    size_t cap;                 /* allocated observations */
    double *v;                  /* values */
    double *t;                  /* time: seconds (numeric or ISO-8601), or the row index */
    size_t *row;                /* 0-based row of each observation */
    char **tlabel;              /* original time text per observation, or NULL */
    double *trials;             /* n trials per observation when v is a proportion of
                                   them (--db error_rate: spans; sampled_share: traces),
                                   else NULL; series_free frees it */
};

/* A set of series read from one file (all value columns share the rows). */
struct inflect_table {
    size_t nseries;
    struct inflect_series *s;
    size_t rows;  /* data rows read */
    int time_iso; /* the time column held ISO-8601 text */
};

/* Read a CSV (header row; first column time, number or ISO-8601, or index) or an
 * NDJSON file (one flat object a line; "time"/"t"/"ts" key for time) from path
 * ("-" = stdin).  column non-NULL keeps only that value column.  Returns 0, or
 * SF_E_IO / SF_E_MALFORMED / SF_E_LIMIT / SF_E_NOMEM / SF_E_USAGE (unknown column)
 * with err naming the line and column. */
int series_read_file(struct inflect_table *tab, const char *path, const char *column,
                     struct sf_err *err);

/* Parse a whole buffer (CSV or NDJSON, detected from the first non-blank byte).
 * Same returns as series_read_file.  Used by the reader and the fuzz target. */
int series_parse(struct inflect_table *tab, const char *buf, size_t len, const char *column,
                 struct sf_err *err);

/* Parse ISO-8601 date/time text ("2024-05-01", "2024-05-01T12:00:00.5Z",
 * "2024-05-01 12:00:00+02:00", "2024-05") into seconds since the epoch.
 * Returns 0 or SF_E_MALFORMED. */
int series_parse_iso8601(const char *s, size_t n, double *secs);

/* Append one observation (grows the arrays). Returns 0 or SF_E_NOMEM / SF_E_LIMIT. */
int series_push(struct inflect_series *s, double t, double v, size_t row, const char *label);

/* Free everything a table holds; the table is empty afterwards. */
void series_table_free(struct inflect_table *tab);
void series_free(struct inflect_series *s);

#endif

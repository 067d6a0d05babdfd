/* report.h - the human report: report.md and report.html with SVG charts. */
#ifndef INFLECT_REPORT_H
#define INFLECT_REPORT_H

#include <stdio.h>

#include "inflect.h"

struct sf_span_windows;
struct drift_result;
struct clock_report;

/* Two open files written side by side (Markdown and HTML). */
struct report {
    const struct inflect_ctx *ctx;
    FILE *md, *html;
    char dir[1024];
    int charts; /* render charts (gnuplot found and not --no-charts) */
    int nchart;
    int bad_charts; /* charts gnuplot failed to draw: the report fails */
};

/* Create DIR (if needed) and open report.md / report.html.  Returns 0 or -1 with
 * the error printed. */
int report_open(struct report *rp, const struct inflect_ctx *ctx, const char *title);
/* Close both files; returns 0, or -1 on a write error or when a chart could not be
 * drawn (printed). */
int report_close(struct report *rp);

/* A section for one analysed series: chart (values, change points marked), the
 * inflection table and every detector's indices.  x holds the chart's x values
 * (NULL = the series' times). */
void report_series_section(struct report *rp, const struct inflect_result *r);

/* --series: the whole report.  Returns 0 or -1 (printed). */
int report_series(const struct inflect_ctx *ctx, const char *input,
                  const struct inflect_result *res, size_t nres);

/* --db: overview, per group latency chart + inflection table + sampling chart
 * (Wilson band, configured rate) + verdict, clock table and residual chart (the
 * numbers, DIR/windows.csv, are run_windows_csv's).  res is ng * SF_M_NMETRICS results
 * in group-major order; drift and pi have ng entries.  The warnings (sources not
 * complete: sw->note; outliers and cut gaps: outlier_note) open the report.
 * Returns 0 or -1 (printed). */
struct sf_explain;
/* why[g] is group g's drift explanation (--explain-drift), NULL when none. */
int report_db(const struct inflect_ctx *ctx, const struct sf_span_windows *sw,
              const struct inflect_result *res, const struct drift_result *drift,
              const struct sf_explain *const *why, const double *const *pi,
              const struct clock_report *clk, const char *outlier_note);

/* Path DIR/name into buf; returns buf. */
char *report_path(const struct report *rp, const char *name, char *buf, size_t n);

/* A heading: the report's own text (or NULL), then a name from the data (or NULL) as
 * a code span; text and data are escaped for both documents. */
void report_heading(struct report *rp, int level, const char *text, const char *data);
/* A paragraph of the report's own words (escaped for HTML, written as is in Markdown). */
void report_para(struct report *rp, const char *text);
/* Chart file name (relative to DIR, [A-Za-z0-9._-]) and caption, linked in both
 * documents; the caption is escaped for each. */
void report_image(struct report *rp, const char *file, const char *caption);
/* Table: ncol header cells, then rows of ncol cells each (call per row). */
void report_table_head(struct report *rp, const char *const *cells, int ncol);
void report_table_row(struct report *rp, const char *const *cells, int ncol);
void report_table_end(struct report *rp);

#endif

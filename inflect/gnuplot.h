/* gnuplot.h - charts rendered by gnuplot through a pipe, data inline.
 *
 * Each chart is one `popen("gnuplot", "w")`: pinned terminal options (svg, fixed
 * size, fixed font), data as inline datablocks ($d0 << EOD ... EOD) printed with
 * %.10g, so the same data give byte-identical SVG with the same gnuplot build.
 * No temporary files.  A missing gnuplot is a clear error (SF_E_UNSUPPORTED).
 */
#ifndef INFLECT_GNUPLOT_H
#define INFLECT_GNUPLOT_H

#include <stddef.h>

#include "sf_err.h"

#define GP_MAX_LINES 6
#define GP_MAX_MARKS 256

struct gp_line {
    const char *title;
    const double *x, *y; /* n points; NaN y leaves a gap */
    size_t n;
    const char *color; /* "#1f77b4" */
};

struct gp_chart {
    const char *title, *xlabel, *ylabel;
    int xtime; /* x values are Unix seconds: a date/time axis (UTC) */
    struct gp_line lines[GP_MAX_LINES];
    int nlines;
    const double *band_x, *band_lo, *band_hi; /* optional shaded band (e.g. Wilson) */
    size_t nband;
    const char *band_title;
    double marks[GP_MAX_MARKS]; /* x of vertical markers (change points) */
    const char *mark_color[GP_MAX_MARKS];
    size_t nmarks;
};

/* 0 when a gnuplot executable is on PATH, else SF_E_UNSUPPORTED with err set. */
int gnuplot_check(struct sf_err *err);

/* Render c as SVG into path (titles may hold anything: they are made labels and quoted).
 * Returns 0, SF_E_UNSUPPORTED (no gnuplot), SF_E_USAGE
 * (a path holding a line break), or SF_E_IO (gnuplot failed) with err set. */
int gnuplot_chart(const char *path, const struct gp_chart *c, struct sf_err *err);

/* Colour of a change-point marker by kind name ("step", "spike", "ramp"). */
const char *gnuplot_kind_color(const char *kind);

#endif

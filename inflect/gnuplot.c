/* gnuplot.c - SVG charts through popen("gnuplot") with inline datablocks.
 *
 * gnuplot 5.4 (Debian gnuplot-nox).  The script written to the pipe:
 *
 *   set terminal svg size 900,360 fixed font 'Helvetica,11' noenhanced background rgb 'white'
 *   set output 'DIR/latency.svg'
 *   $d0 << EOD          <- one block per line, "x y" rows, NaN = gap
 *   ...
 *   EOD
 *   set arrow from X, graph 0 to X, graph 1 nohead ...   <- change points
 *   plot $d0 using 1:2 with lines lc rgb '#1f77b4' title 'p99', ...
 *
 * Titles and labels are data (names from the captures): each is made a label first
 * (lib/sf_text: one line, valid UTF-8, no character XML forbids, no "]]>", since the
 * SVG terminal escapes only < and &), then written in single quotes with every quote
 * doubled, gnuplot's one escape there: no backquote, macro or quote can act, and
 * noenhanced keeps ^ _ @ { } as text.
 */
#include "gnuplot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sf_text.h"

int gnuplot_check(struct sf_err *err)
{
    const char *path = getenv("PATH");
    char buf[4096];

    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        if (n > 0 && n + 9 < sizeof(buf)) {
            memcpy(buf, path, n);
            memcpy(buf + n, "/gnuplot", 9);
            if (access(buf, X_OK) == 0)
                return 0;
        }
        path = e ? e + 1 : NULL;
    }
    return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX,
                      "gnuplot not found on PATH: install it (Debian: apt-get install "
                      "gnuplot-nox) or use --no-charts");
}

const char *gnuplot_kind_color(const char *kind)
{
    if (strcmp(kind, "spike") == 0)
        return "#ff7f0e";
    if (strcmp(kind, "ramp") == 0)
        return "#9467bd";
    return "#d62728";
}

/* s in single quotes, each quote doubled. */
static void put_quoted(FILE *p, const char *s)
{
    fputc('\'', p);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', p);
        fputc(*s, p);
    }
    fputc('\'', p);
}

/* A title or label: made a label (cut between characters past 1023 bytes), quoted. */
static void put_label(FILE *p, const char *s)
{
    char buf[1024];

    sf_text_label(buf, sizeof(buf), s, strlen(s));
    put_quoted(p, buf);
}

static void put_num(FILE *p, double v)
{
    if (isfinite(v))
        fprintf(p, " %.10g", v);
    else
        fputs(" NaN", p);
}

/* Widen a zero-height (or zero-width) range by hand: gnuplot would warn
 * "empty y range" on stderr and pick one itself. */
static void fixed_range(FILE *p, const char *axis, double lo, double hi)
{
    if (lo == hi && isfinite(lo)) {
        double d = fabs(lo) > 1 ? fabs(lo) * 0.1 : 1;
        fprintf(p, "set %srange [%.10g:%.10g]\n", axis, lo - d, hi + d);
    }
}

static void ranges(FILE *p, const struct gp_chart *c)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;

    for (int l = 0; l < c->nlines; l++)
        for (size_t i = 0; i < c->lines[l].n; i++)
            if (isfinite(c->lines[l].x[i]) && isfinite(c->lines[l].y[i])) {
                xlo = fmin(xlo, c->lines[l].x[i]);
                xhi = fmax(xhi, c->lines[l].x[i]);
                ylo = fmin(ylo, c->lines[l].y[i]);
                yhi = fmax(yhi, c->lines[l].y[i]);
            }
    for (size_t i = 0; i < c->nband; i++)
        if (isfinite(c->band_lo[i]) && isfinite(c->band_hi[i])) {
            ylo = fmin(ylo, c->band_lo[i]);
            yhi = fmax(yhi, c->band_hi[i]);
        }
    fixed_range(p, "x", xlo, xhi);
    fixed_range(p, "y", ylo, yhi);
}

static void script(FILE *p, const char *path, const struct gp_chart *c)
{
    fputs("set terminal svg size 900,360 fixed font 'Helvetica,11' noenhanced "
          "background rgb 'white'\n",
          p);
    fputs("set output ", p);
    put_quoted(p, path);
    fputc('\n', p);
    fputs("set encoding utf8\nset grid\nset key below horizontal\n", p);
    fputs("set format y '%g'\n", p);
    if (c->xtime) /* gnuplot 5 reads numbers on a time axis as Unix seconds */
        fputs("set xdata time\nset timefmt '%s'\nset format x \"%Y-%m-%d\\n%H:%M:%S\"\n", p);
    else
        fputs("set format x '%g'\n", p);
    fputs("set title ", p);
    put_label(p, c->title);
    fputs("\nset xlabel ", p);
    put_label(p, c->xlabel);
    fputs("\nset ylabel ", p);
    put_label(p, c->ylabel);
    fputc('\n', p);
    ranges(p, c);
    for (int l = 0; l < c->nlines; l++) {
        fprintf(p, "$d%d << EOD\n", l);
        for (size_t i = 0; i < c->lines[l].n; i++) {
            put_num(p, c->lines[l].x[i]);
            put_num(p, c->lines[l].y[i]);
            fputc('\n', p);
        }
        fputs("EOD\n", p);
    }
    if (c->nband) {
        fputs("$band << EOD\n", p);
        for (size_t i = 0; i < c->nband; i++) {
            put_num(p, c->band_x[i]);
            put_num(p, c->band_lo[i]);
            put_num(p, c->band_hi[i]);
            fputc('\n', p);
        }
        fputs("EOD\n", p);
    }
    for (size_t m = 0; m < c->nmarks && m < GP_MAX_MARKS; m++)
        fprintf(p,
                "set arrow from %.10g, graph 0 to %.10g, graph 1 nohead lw 1.5 dt 2 "
                "lc rgb '%s'\n",
                c->marks[m], c->marks[m], c->mark_color[m]);
    fputs("plot ", p);
    if (c->nband) {
        fputs("$band using 1:2:3 with filledcurves fs transparent solid 0.25 noborder "
              "lc rgb '#7f7f7f' title ",
              p);
        put_label(p, c->band_title ? c->band_title : "band");
        fputs(c->nlines ? ", " : "", p);
    }
    for (int l = 0; l < c->nlines; l++) {
        fprintf(p, "$d%d using 1:2 with linespoints pt 7 ps 0.3 lw 1.5 lc rgb ", l);
        put_label(p, c->lines[l].color);
        fputs(" title ", p);
        put_label(p, c->lines[l].title);
        fputs(l + 1 < c->nlines ? ", " : "\n", p);
    }
    if (c->nlines == 0)
        fputs("\n", p);
    fputs("unset output\n", p);
}

int gnuplot_chart(const char *path, const struct gp_chart *c, struct sf_err *err)
{
    FILE *p;
    int st, rc;

    if ((rc = gnuplot_check(err)) < 0)
        return rc;
    /* a line break cannot be quoted, and a path is not a label that may be changed */
    if (strpbrk(path, "\n\r"))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "%s: a chart path holds a line break", path);
    fflush(NULL); /* the child must not inherit unflushed stdio buffers */
    if ((p = popen("gnuplot", "w")) == NULL)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot start gnuplot: %s", strerror(errno));
    script(p, path, c);
    st = pclose(p);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "%s: gnuplot failed (status %d)", path,
                          st == -1        ? -1
                          : WIFEXITED(st) ? WEXITSTATUS(st)
                                          : 128);
    return 0;
}

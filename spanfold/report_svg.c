/* report_svg.c - the timeline of one endpoint, drawn as inline SVG.
 *
 *   +------------------------------------------------------------+
 *   | latency (ms)   p50 / p95 / p99 per window      |  | markers |
 *   +------------------------------------------------------------+
 *   | errors (%)                                                 |
 *   +------------------------------------------------------------+
 *   | kept share of traces, configured / estimated rate dashed   |
 *   +------------------------------------------------------------+
 *     12:03:00   12:03:10   ...   wall-clock axis (--tz), date
 *
 * Drawn here rather than by gnuplot: the page must be one file that works without
 * anything installed, and the markers carry labels and hover titles.  Every text that
 * comes from the capture goes through rp_html_esc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "sf_window.h"

#define W      1100.0
#define ML     70.0 /* left margin: the y labels */
#define MR     20.0
#define PW     (W - ML - MR)
#define PAD    8.0
#define H_LAT  170.0
#define H_HEAT 144.0 /* 24 rows of 6 */
#define H_ERR  80.0
#define H_KEPT 100.0
#define LABELS 4 /* rows of marker labels above the latency panel */
#define LROW   14.0

static const char *const lat_color[4] = {"#1f77b4", "#ff7f0e", "#d62728", "#bbbbbb"};

struct axis {
    double t0, t1; /* seconds (CLOCK_REALTIME) */
};

static double xpos(const struct axis *a, double t)
{
    return ML + (a->t1 > a->t0 ? (t - a->t0) / (a->t1 - a->t0) : 0) * PW;
}

/* A "nice" tick step (1, 2, 5 x 10^k) for about n ticks over span. */
static double nice_step(double span, int n)
{
    double raw = span / n, p, m;
    if (!(raw > 0))
        return 1;
    p = pow(10, floor(log10(raw)));
    m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A tick step in seconds for a wall-clock axis. */
static double time_step(double span)
{
    static const double steps[] = {0.1, 0.2, 0.5, 1,    2,    5,    10,    15,    30,    60,   120,
                                   300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (span / steps[i] <= 10)
            return steps[i];
    return 86400 * ceil(span / 86400 / 10);
}

static void tm_of(const struct rp_ctx *c, double secs, struct tm *tm)
{
    time_t s = (time_t)floor(secs);
    if (c->o.tz == NULL)
        gmtime_r(&s, tm);
    else
        localtime_r(&s, tm);
}

static void x_axis(FILE *f, const struct rp_ctx *c, const struct axis *a, double y)
{
    double step = time_step(a->t1 - a->t0);
    struct tm tm;
    char lab[32], zone[16];

    for (double t = ceil(a->t0 / step) * step; t <= a->t1 + 1e-9; t += step) {
        double x = xpos(a, t);
        tm_of(c, t, &tm);
        strftime(lab, sizeof(lab), step < 60 ? "%H:%M:%S" : "%H:%M", &tm);
        if (step < 1)
            snprintf(lab + strlen(lab), sizeof(lab) - strlen(lab), ".%d",
                     (int)((t - floor(t)) * 10 + 0.5) % 10);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"tick\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"middle\">%s</text>\n",
                x, y, x, y + 5, x, y + 18, lab);
    }
    tm_of(c, a->t0, &tm);
    strftime(lab, sizeof(lab), "%Y-%m-%d", &tm);
    strftime(zone, sizeof(zone), "%Z", &tm);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\">", ML + PW / 2,
            y + 36);
    fprintf(f, "wall-clock time (%s), %s</text>\n", c->o.tz ? zone : "UTC", lab);
}

/* Horizontal grid and y labels of a panel [top, top + h) for values [0, vmax]. */
static void y_axis(FILE *f, double top, double h, double vmax, const char *fmt, double mult,
                   const char *title)
{
    double step = nice_step(vmax, 5);
    for (double v = 0; v <= vmax + 1e-12; v += step) {
        double y = top + h - v / vmax * h;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"end\">",
                ML, y, ML + PW, y, ML - 6, y + 4);
        fprintf(f, fmt, v * mult);
        fputs("</text>\n", f);
    }
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>"
            "<text x=\"14\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 14 %.1f)\">%s</text>\n",
            ML, top, PW, h, top + h / 2, top + h / 2, title);
}

/* A polyline of v[0..nwin) (NaN = gap) at window centres, scaled to [0, vmax]; a value
 * with gaps on both sides is a dot, since a polyline of one point draws nothing.
 * Returns how many windows were drawn. */
static size_t series(FILE *f, const struct rp_ctx *c, const struct axis *a, const double *v,
                     double top, double h, double vmax, const char *color, const char *name)
{
    int open = 0;
    size_t drawn = 0, n = c->sw.nwin;
    fprintf(f, "<g class=\"series\" data-name=\"%s\">", name);
    for (size_t w = 0; w < n; w++) {
        double t = ((double)rp_win_time(c, w) + (double)c->sw.window_ns / 2) / 1e9;
        if (!isfinite(v[w])) {
            if (open)
                fputs("\"/>", f);
            open = 0;
            continue;
        }
        drawn++;
        if (!open && (w + 1 == n || !isfinite(v[w + 1]))) {
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>", xpos(a, t),
                    top + h - fmin(v[w], vmax) / vmax * h, color);
            continue;
        }
        if (!open)
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"",
                    color);
        fprintf(f, "%.1f,%.1f ", xpos(a, t), top + h - fmin(v[w], vmax) / vmax * h);
        open = 1;
    }
    if (open)
        fputs("\"/>", f);
    fputs("</g>\n", f);
    return drawn;
}

static double vmax_of(const struct rp_ctx *c, const double *const *v, int nv, double floor_v)
{
    double m = floor_v;
    for (int k = 0; k < nv; k++)
        for (size_t w = 0; w < c->sw.nwin; w++)
            if (isfinite(v[k][w]) && v[k][w] > m)
                m = v[k][w];
    return m * 1.1;
}

/* A vertical marker over the panels with a label in row `row` above them. */
static void marker(FILE *f, const struct axis *a, double t, double y0, double y1, int row,
                   const char *color, const char *label)
{
    double x = xpos(a, t);
    double ly = PAD + LROW * (row % LABELS) + 10;
    fprintf(f,
            "<g class=\"marker\"><title>%s</title><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
            "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"5,3\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"ml\" fill=\"%s\" text-anchor=\"%s\">%s</text>"
            "</g>\n",
            label, x, ly + 3, x, y1, color, x + (x > ML + PW * 0.75 ? -3 : 3), ly, color,
            x > ML + PW * 0.75 ? "end" : "start", label);
    (void)y0;
}

/* The legend of the latency panel: only the lines drawn (drawn[k] windows of p50, p95,
 * p99, max), and for a percentile left out the reason, so that the legend never
 * promises a line the chart does not have. */
static void legend(FILE *f, double y, const size_t drawn[4])
{
    static const char *const names[4] = {"p50", "p95", "p99", "max"};
    static const double pct[4] = {0.5, 0.95, 0.99, 1};
    char names_out[16] = "", counts[48] = "";
    int m = 0, k;
    double x;

    for (k = 0; k < 4; k++)
        m += drawn[k] > 0;
    x = ML + PW - 64.0 * m + 10;
    for (k = 0; k < 4; k++) {
        if (drawn[k] == 0)
            continue;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tl\">%s</text>\n",
                x, y, x + 20, y, lat_color[k], x + 24, y + 4, names[k]);
        x += 64;
    }
    /* "p95, p99 not drawn: no window has 21, 101 spans" */
    for (k = 1; k <= 2; k++)
        if (drawn[k] == 0) {
            size_t l = strlen(names_out), lc = strlen(counts);
            snprintf(names_out + l, sizeof(names_out) - l, "%s%s", l ? ", " : "", names[k]);
            snprintf(counts + lc, sizeof(counts) - lc, "%s%llu", lc ? ", " : "",
                     (unsigned long long)sf_window_pct_min_spans(pct[k]));
        }
    if (names_out[0])
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"end\">%s not drawn: "
                "no window has %s spans</text>\n",
                ML + PW - 64.0 * m + 2, y + 4, names_out, counts);
}

/* y of a latency on the heatmap's log axis, as a share 0..1 of its height. */
static double heat_share(const struct rp_heat *h, double ms)
{
    return fmin(1, fmax(0, log(ms / h->lo_ms) / log(h->hi_ms / h->lo_ms)));
}

#define HEAT_LEVELS 8 /* colour levels of the heatmap's cells */

/* The level (0 .. HEAT_LEVELS - 1) of a cell of n of max spans, on a square-root
 * scale, so that a single slow request still shows beside a crowd. */
static int heat_level(uint32_t n, uint32_t max)
{
    double t = max > 1 ? sqrt((double)(n - 1) / (double)(max - 1)) : 1;
    int lv = (int)(t * HEAT_LEVELS);
    return lv >= HEAT_LEVELS ? HEAT_LEVELS - 1 : lv;
}

/* Level lv's colour: light to dark blue (#deebf7 to #08306b). */
static void heat_level_color(char out[8], int lv)
{
    double t = (lv + 0.5) / HEAT_LEVELS;
    snprintf(out, 8, "#%02x%02x%02x", (int)lround(222 + (8 - 222) * t),
             (int)lround(235 + (48 - 235) * t), (int)lround(247 + (107 - 247) * t));
}

/* The x range of heatmap column col: from its first window's start to its last one's end. */
static void heat_col_x(const struct rp_ctx *c, const struct axis *a, const struct rp_heat *h,
                       size_t col, double *x0, double *x1)
{
    size_t w0 = col * h->per_col, w1 = w0 + h->per_col < c->sw.nwin ? w0 + h->per_col : c->sw.nwin;

    *x0 = xpos(a, (double)rp_win_time(c, w0) / 1e9);
    *x1 = xpos(a, (double)rp_win_time(c, w1 - 1) / 1e9 + (double)c->sw.window_ns / 1e9);
}

/* A transparent rectangle over each column with requests, its title what the column
 * holds: "19:09:44: 12 requests, median 4.1-4.6 ms, slowest 44-49 ms" (the rows of the
 * median request and of the slowest). */
static void heat_columns(FILE *f, const struct rp_ctx *c, const struct axis *a,
                         const struct rp_heat *h, double top)
{
    fputs("<g class=\"heat-cols\">", f);
    for (size_t col = 0; col < h->ncol; col++) {
        const uint32_t *r = h->n + col * RP_HEAT_BINS;
        uint64_t n = 0, seen = 0;
        int med = -1, last = 0;
        double x0, x1, step = pow(h->hi_ms / h->lo_ms, 1.0 / RP_HEAT_BINS);
        char when[16];
        struct tm tm;
        for (int b = 0; b < RP_HEAT_BINS; b++)
            n += r[b];
        if (n == 0)
            continue;
        for (int b = 0; b < RP_HEAT_BINS; b++) {
            seen += r[b];
            if (med < 0 && 2 * seen >= n)
                med = b;
            if (r[b])
                last = b;
        }
        heat_col_x(c, a, h, col, &x0, &x1);
        tm_of(c, (double)rp_win_time(c, col * h->per_col) / 1e9, &tm);
        strftime(when, sizeof(when), "%H:%M:%S", &tm);
        fprintf(
            f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"transparent\">"
            "<title>%s: %llu request%s, median %.3g-%.3g ms, slowest %.3g-%.3g ms</title></rect>",
            x0, top, fmax(x1 - x0, 0.5), H_HEAT, when, (unsigned long long)n, n == 1 ? "" : "s",
            h->lo_ms * pow(step, med), h->lo_ms * pow(step, med + 1), h->lo_ms * pow(step, last),
            h->lo_ms * pow(step, last + 1));
    }
    fputs("</g>\n", f);
}

/* The latency distribution of group g: time x log latency, each cell's colour the
 * requests that started in that window with that latency (a title says how many),
 * the percentile lines drawn over it where the latency panel has them.  top is the
 * panel's top.  Returns 0, or -1 out of memory (the panel then says so). */
static int heatmap(FILE *f, const struct rp_ctx *c, size_t g, const struct axis *a, double top)
{
    static const double steps[3] = {1, 2, 5};
    const struct sf_win_group *wg = &c->sw.g[g];
    const double row = H_HEAT / RP_HEAT_BINS;
    struct rp_heat h;
    double *v;
    int rc = rp_heatmap(c, g, &h);

    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>"
            "<text x=\"14\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 14 %.1f)\">requests by latency</text>\n",
            ML, top, PW, H_HEAT, top + H_HEAT / 2, top + H_HEAT / 2);
    if (rc < 0 || h.total == 0) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\">%s</text>\n", ML + 8, top + H_HEAT / 2,
                rc < 0 ? "out of memory" : "no request with a latency");
        rp_heat_free(&h);
        return rc;
    }
    /* 1-2-5 ticks of the log axis */
    for (int k = (int)floor(log10(h.lo_ms)); k <= (int)ceil(log10(h.hi_ms)); k++)
        for (int m = 0; m < 3; m++) {
            double ms = steps[m] * pow(10, k), y;
            if (ms < h.lo_ms || ms > h.hi_ms)
                continue;
            y = top + H_HEAT - heat_share(&h, ms) * H_HEAT;
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"end\">%g ms</text>\n",
                    ML, y, ML + PW, y, ML - 6, y + 4, ms);
        }
    /* the cells: one path per colour level, so that 240 columns x 24 rows of an
     * endpoint stay a few kB; what a column holds is its title (heat_columns) */
    fputs("<g class=\"heat\">", f);
    for (int lv = 0; lv < HEAT_LEVELS; lv++) {
        char fill[8];
        int any = 0;
        heat_level_color(fill, lv);
        for (size_t col = 0; col < h.ncol; col++) {
            double x0, x1;
            heat_col_x(c, a, &h, col, &x0, &x1);
            for (int b = 0; b < RP_HEAT_BINS; b++) {
                uint32_t n = h.n[col * RP_HEAT_BINS + (size_t)b];
                if (n == 0 || heat_level(n, h.max) != lv)
                    continue;
                if (!any)
                    fprintf(f, "<path fill=\"%s\" d=\"", fill);
                any = 1;
                fprintf(f, "M%.1f %.1fh%.1fv%.0fh%.1fz", x0, top + H_HEAT - (b + 1) * row,
                        fmax(x1 - x0, 0.5), row, -fmax(x1 - x0, 0.5));
            }
        }
        if (any)
            fputs("\"/>", f);
    }
    fputs("</g>\n", f);
    /* the percentiles over it, on the same log axis (shares of its height) */
    if ((v = malloc((c->sw.nwin ? c->sw.nwin : 1) * sizeof(*v))) != NULL) {
        for (int k = 0; k < 3; k++) {
            const double *m = wg->m[k == 0 ? SF_M_P50 : k == 1 ? SF_M_P95 : SF_M_P99];
            for (size_t w = 0; w < c->sw.nwin; w++)
                v[w] = isfinite(m[w]) && m[w] > 0 ? heat_share(&h, m[w]) : NAN;
            series(f, c, a, v, top, H_HEAT, 1, lat_color[k],
                   k == 0   ? "heat-p50"
                   : k == 1 ? "heat-p95"
                            : "heat-p99");
        }
        free(v);
    }
    heat_columns(f, c, a, &h, top);
    {
        char light[8], dark[8];
        heat_level_color(light, 0);
        heat_level_color(dark, HEAT_LEVELS - 1);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"196\" height=\"18\" fill=\"#ffffff\" "
                "fill-opacity=\"0.85\"/>",
                ML + PW - 200, top + 2);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"end\">requests per "
                "window and row: 1</text><text x=\"%.1f\" y=\"%.1f\" class=\"tl\">%u</text>\n",
                ML + PW - 60, top + 6, light, ML + PW - 48, top + 6, dark, ML + PW - 64, top + 15,
                ML + PW - 34, top + 15, h.max);
    }
    rp_heat_free(&h);
    return 0;
}

/* The markers of group g: its inflections (latency, errors, kept share) and its drift
 * alarm, each with a label such as "p50 step 19 -> 122 ms". */
static void markers(FILE *f, const struct rp_ctx *c, size_t g, const struct axis *a, double y0,
                    double y1)
{
    int row = 0;
    char label[256];

    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        const char *color = p->metric == SF_M_ERROR_RATE      ? "#8c564b"
                            : p->metric == SF_M_SAMPLED_SHARE ? "#2ca02c"
                            : p->metric == SF_M_THROUGHPUT    ? "#7f7f7f"
                                                              : "#d62728";
        if (p->group != g)
            continue;
        rp_cp_label(p, label, sizeof(label));
        marker(f, a, (double)p->time_ns / 1e9, y0, y1, row++, color, label);
    }
    for (size_t i = 0; i < c->ndrifts; i++) {
        const struct rp_drift *d = &c->drifts[i];
        if (d->group != g)
            continue;
        rp_drift_label(d, label, sizeof(label));
        marker(f, a, (double)d->time_ns / 1e9, y0, y1, row++, "#9467bd", label);
    }
}

void rp_svg_timeline(FILE *f, const struct rp_ctx *c, size_t g)
{
    const struct sf_win_group *wg = &c->sw.g[g];
    const double *lat[4] = {wg->m[SF_M_P50], wg->m[SF_M_P95], wg->m[SF_M_P99], wg->m[SF_M_MAX]};
    const double *err[1] = {wg->m[SF_M_ERROR_RATE]};
    const struct drift_result *dr = &c->dres[g];
    struct axis a;
    double top = PAD + LROW * LABELS + 6, y_heat, y_err, y_kept, bottom, lmax, emax;
    double h_total;
    size_t drawn[4];

    a.t0 = (double)rp_win_time(c, 0) / 1e9;
    a.t1 = (double)rp_win_time(c, c->sw.nwin) / 1e9;
    y_heat = top + H_LAT + 10;
    y_err = y_heat + H_HEAT + 10;
    y_kept = y_err + H_ERR + 10;
    bottom = y_kept + H_KEPT;
    h_total = bottom + 44;
    lmax = vmax_of(c, lat, 4, 1);
    emax = vmax_of(c, err, 1, 0.01);
    fprintf(f,
            "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
            "%.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" data-x0=\"%.0f\" "
            "data-x1=\"%.0f\" data-t0=\"%.3f\" data-t1=\"%.3f\" aria-label=\"timeline of ",
            W, h_total, W, h_total, ML, ML + PW, a.t0 * 1e3, a.t1 * 1e3);
    rp_html_esc(f, wg->name);
    fputs("\" data-ep=\"", f); /* the plot's x range and its times (ms), for brushing */
    rp_html_esc(f, wg->name);
    fputs("\">\n", f);
    y_axis(f, top, H_LAT, lmax, "%.0f", 1, "latency (ms)");
    y_axis(f, y_err, H_ERR, emax, "%.1f", 100, "errors (%)");
    y_axis(f, y_kept, H_KEPT, 1.0, "%.2f", 1, "kept share");
    /* the window's slowest request, faint: where p95/p99 are left out it is what is known */
    drawn[3] = series(f, c, &a, lat[3], top, H_LAT, lmax, lat_color[3], "max");
    for (int k = 0; k < 3; k++)
        drawn[k] = series(f, c, &a, lat[k], top, H_LAT, lmax, lat_color[k],
                          k == 0   ? "p50"
                          : k == 1 ? "p95"
                                   : "p99");
    heatmap(f, c, g, &a, y_heat);
    series(f, c, &a, err[0], y_err, H_ERR, emax, "#8c564b", "error_rate");
    series(f, c, &a, dr->share, y_kept, H_KEPT, 1.0, "#2ca02c", "kept_share");
    series(f, c, &a, c->pi[g], y_kept, H_KEPT, 1.0, "#2ca02c80", "expected_rate");
    legend(f, top + 12, drawn);
    markers(f, c, g, &a, top, bottom);
    x_axis(f, c, &a, bottom);
    fputs("</svg>\n", f);
}

/* Where a latency inflection's requests spent their time, before and after it: two
 * stacked bars of the mean per request (report_cause.c), each part labelled. */
void rp_svg_breakdown(FILE *f, const struct rp_ctx *c, const struct rp_why *y)
{
    static const char *const names[5] = {"CPU", "downstream", "blocked", "network", "unaccounted"};
    static const char *const colors[5] = {"#d62728", "#9467bd", "#ff7f0e", "#1f77b4", "#bbbbbb"};
    const struct rp_breakdown *bars[2] = {&y->normal, &y->slow};
    const char *rows[2] = {"before", "after"};
    double w = 760, lm = 70, bw = w - lm - 150, top = 18, bh = 20, vmax;

    vmax = fmax(y->normal.dur_ns, y->slow.dur_ns);
    if (!(vmax > 0))
        return;
    fprintf(f,
            "<svg class=\"breakdown\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
            "86\" width=\"%.0f\" height=\"86\" role=\"img\" aria-label=\"where the time "
            "went\">\n",
            w, w);
    for (int r = 0; r < 2; r++) {
        const struct rp_breakdown *b = bars[r];
        const double part[5] = {b->cpu_ns, b->downstream_ns, b->blocked_ns, b->network_ns,
                                b->unaccounted_ns};
        double x = lm, y0 = top + r * (bh + 8);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\" text-anchor=\"end\">%s</text>", lm - 6,
                y0 + 14, rows[r]);
        for (int k = 0; k < 5; k++) {
            double pw = part[k] / vmax * bw;
            if (!(pw > 0))
                continue;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\">"
                    "<title>%s: %.1f ms a request</title></rect>",
                    x, y0, pw, bh, colors[k], names[k], part[k] / 1e6);
            x += pw;
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tl\">%.1f ms a request (%llu)</text>\n",
                x + 6, y0 + 14, b->dur_ns / 1e6, (unsigned long long)b->spans);
    }
    for (int k = 0; k < 5; k++)
        fprintf(f,
                "<rect x=\"%.1f\" y=\"4\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"13\" class=\"tl\">%s</text>",
                lm + k * 100.0, colors[k], lm + 14 + k * 100.0, names[k]);
    fputs("</svg>\n", f);
    (void)c;
}

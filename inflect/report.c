/* report.c - report.md and report.html, written side by side, with SVG charts.
 *
 *   DIR/report.md      Markdown (GitHub flavour: pipe tables, image links)
 *   DIR/report.html    the same content as one self-contained HTML page
 *   DIR/chart-NN-NAME.svg  gnuplot charts (gnuplot.c); DIR/summary.json their data
 *
 * Every chart is referenced from both documents; every table row has its
 * machine-readable twin in summary.json.  Names come from the captures: they reach
 * each document only through lib/sf_text (a code span in Markdown, escaped text in
 * HTML, a quoted field in CSV, a label in a chart title; docs/output-safety.md).
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clockdrift.h"
#include "drift.h"
#include "gnuplot.h"
#include "sf_explain.h"
#include "sf_spans.h"
#include "sf_text.h"

char *report_path(const struct report *rp, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", rp->dir, name);
    return buf;
}

static void html_text(FILE *f, const char *s)
{
    sf_text_xml(f, s, strlen(s));
}

/* A name from the data: a code span in Markdown, <code> in HTML. */
static void put_data(struct report *rp, const char *s, unsigned md_flags)
{
    sf_text_md_code(rp->md, s, strlen(s), md_flags);
    fputs("<code>", rp->html);
    html_text(rp->html, s);
    fputs("</code>", rp->html);
}

/* A chart title: the name as a label of at most 120 bytes, cut between characters,
 * then the rest. */
static void chart_title(char *out, size_t n, const char *name, const char *rest)
{
    size_t k = sf_text_label(out, n < 121 ? n : 121, name, strlen(name));
    snprintf(out + k, n - k, "%s", rest);
}

int report_open(struct report *rp, const struct inflect_ctx *ctx, const char *title)
{
    char p[1100];
    struct sf_err err;

    memset(rp, 0, sizeof(*rp));
    rp->ctx = ctx;
    if (strlen(ctx->out_dir) >= sizeof(rp->dir)) {
        fprintf(stderr, "inflect: %s: path too long\n", ctx->out_dir);
        return -1;
    }
    snprintf(rp->dir, sizeof(rp->dir), "%s", ctx->out_dir);
    if (mkdir(rp->dir, 0777) < 0 && errno != EEXIST) {
        fprintf(stderr, "inflect: %s: cannot create directory: %s\n", rp->dir, strerror(errno));
        return -1;
    }
    sf_err_clear(&err);
    rp->charts = !ctx->no_charts;
    if (rp->charts && gnuplot_check(&err) < 0) {
        fprintf(stderr, "inflect: %s\n", err.msg);
        return -1;
    }
    rp->md = fopen(report_path(rp, "report.md", p, sizeof(p)), "w");
    rp->html = rp->md ? fopen(report_path(rp, "report.html", p, sizeof(p)), "w") : NULL;
    if (rp->md == NULL || rp->html == NULL) {
        fprintf(stderr, "inflect: %s: cannot create: %s\n", p, strerror(errno));
        if (rp->md)
            fclose(rp->md);
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>inflect report</title>\n"
          "<style>body{font-family:sans-serif;max-width:960px;margin:auto}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
          "text-align:right}img{max-width:100%}</style></head><body>\n",
          rp->html);
    report_heading(rp, 1, "inflect report: ", title);
    return 0;
}

int report_close(struct report *rp)
{
    int bad;

    fputs("</body></html>\n", rp->html);
    bad = ferror(rp->md) | ferror(rp->html);
    bad |= fclose(rp->md) != 0;
    bad |= fclose(rp->html) != 0;
    if (bad)
        fprintf(stderr, "inflect: %s: write error in the report\n", rp->dir);
    if (rp->bad_charts)
        fprintf(stderr, "inflect: %s: %d chart(s) could not be drawn (above)\n", rp->dir,
                rp->bad_charts);
    return bad || rp->bad_charts ? -1 : 0;
}

void report_heading(struct report *rp, int level, const char *text, const char *data)
{
    fprintf(rp->md, "%.*s %s", level, "######", text ? text : "");
    fprintf(rp->html, "<h%d>", level);
    html_text(rp->html, text ? text : "");
    if (data)
        put_data(rp, data, 0);
    fprintf(rp->html, "</h%d>\n", level);
    fputs("\n\n", rp->md);
}

void report_para(struct report *rp, const char *text)
{
    fprintf(rp->md, "%s\n\n", text);
    fputs("<p>", rp->html);
    html_text(rp->html, text);
    fputs("</p>\n", rp->html);
}

void report_image(struct report *rp, const char *file, const char *caption)
{
    fputs("![", rp->md);
    sf_text_md(rp->md, caption, strlen(caption), 0);
    fprintf(rp->md, "](%s)\n\n", file);
    fputs("<p><img src=\"", rp->html);
    html_text(rp->html, file);
    fputs("\" alt=\"", rp->html);
    html_text(rp->html, caption);
    fputs("\"></p>\n", rp->html);
}

/* One table row in both outputs: "| a | b |" in Markdown, <tag> cells in HTML.  A cell
 * may hold a name from the data: words and numbers stay as they are, the rest becomes
 * a code span (sf_text_md_cell). */
static void table_row(struct report *rp, const char *const *cells, int ncol, const char *tag)
{
    fputs("|", rp->md);
    for (int i = 0; i < ncol; i++) {
        fputc(' ', rp->md);
        sf_text_md_cell(rp->md, cells[i], strlen(cells[i]));
        fputs(" |", rp->md);
    }
    fputs("\n", rp->md);
    for (int i = 0; i < ncol; i++) {
        fprintf(rp->html, "<%s>", tag);
        html_text(rp->html, cells[i]);
        fprintf(rp->html, "</%s>", tag);
    }
    fputs("</tr>\n", rp->html);
}

void report_table_head(struct report *rp, const char *const *cells, int ncol)
{
    fputs("<table><tr>", rp->html);
    table_row(rp, cells, ncol, "th");
    fputc('|', rp->md);
    for (int i = 0; i < ncol; i++)
        fputs("---|", rp->md);
    fputs("\n", rp->md);
}

void report_table_row(struct report *rp, const char *const *cells, int ncol)
{
    fputs("<tr>", rp->html);
    table_row(rp, cells, ncol, "td");
}

void report_table_end(struct report *rp)
{
    fputs("\n", rp->md);
    fputs("</table>\n", rp->html);
}

/* A file name from a series name: [A-Za-z0-9._-] kept, the rest '_'. */
static void chart_name(struct report *rp, const char *name, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "chart-%02d-", rp->nchart++);
    for (; *name && k + 5 < n && k < 60; name++)
        out[k++] = (strchr("._-", *name) || (*name >= 'a' && *name <= 'z') ||
                    (*name >= 'A' && *name <= 'Z') || (*name >= '0' && *name <= '9'))
                       ? *name
                       : '_';
    snprintf(out + k, n - k, ".svg");
}

/* Render chart c into DIR/file and link it with its title as caption.  A chart gnuplot
 * cannot draw is printed and counted: the report then fails (report_close), so no
 * chart goes missing from a report that exits 0. */
static void draw(struct report *rp, const char *file, const struct gp_chart *c)
{
    char path[1200];
    struct sf_err err;

    sf_err_clear(&err);
    if (gnuplot_chart(report_path(rp, file, path, sizeof(path)), c, &err) < 0) {
        fprintf(stderr, "inflect: %s\n", err.msg);
        rp->bad_charts++;
        return;
    }
    report_image(rp, file, c->title);
}

static void series_chart(struct report *rp, const struct inflect_result *r)
{
    const struct inflect_series *s = r->s;
    struct gp_chart c;
    char file[96], path[1200], title[200];

    if (!rp->charts || s->n == 0)
        return;
    memset(&c, 0, sizeof(c));
    chart_name(rp, s->name, file, sizeof(file));
    snprintf(path, sizeof(path), ": change points (%s)",
             cp_detector_name((enum cp_detector)rp->ctx->detector));
    chart_title(title, sizeof(title), s->name, path);
    c.title = title;
    c.xlabel = s->tlabel ? "time (UTC)" : "time";
    c.xtime = s->tlabel != NULL;
    c.ylabel = r->metric[0] ? r->metric : s->name;
    c.lines[0] = (struct gp_line){s->name, s->t, s->v, s->n, "#1f77b4"};
    c.nlines = 1;
    for (size_t k = 0; k < r->npts && c.nmarks < GP_MAX_MARKS; k++) {
        c.marks[c.nmarks] = s->t[r->pts[k].index];
        c.mark_color[c.nmarks++] = gnuplot_kind_color(cp_kind_name(r->pts[k].kind));
    }
    draw(rp, file, &c);
}

static void fmt_num(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.6g", v);
    else
        snprintf(b, n, "-");
}

/* The confidence (3 decimals) and the location interval "lo..hi" in input rows. */
static void fmt_bounds(char *c, size_t cn, char *iv, size_t ivn, const struct inflect_series *s,
                       const struct cp_point *p)
{
    size_t hi = p->hi < s->n ? p->hi : s->n - 1;
    snprintf(c, cn, "%.3f", p->confidence);
    snprintf(iv, ivn, "%zu..%zu", s->row[p->lo < s->n ? p->lo : hi], s->row[hi]);
}

void report_series_section(struct report *rp, const struct inflect_result *r)
{
    static const char *const head[] = {"index", "time",   "kind",       "role",    "before",
                                       "after", "change", "confidence", "interval"};
    const struct inflect_series *s = r->s;
    char para[768];

    report_heading(rp, 2, NULL, s->name);
    snprintf(para, sizeof(para),
             "%zu observations; %zu inflection point(s) by %s (cost %s, noise variance %.3g, "
             "AR(1) rho %.3f, penalty %.3g per change). Confidence: the BIC-approximate "
             "probability that a change is real; interval: the rows where it could be "
             "(relative likelihood at least 1/20).",
             s->n, r->npts, cp_detector_name((enum cp_detector)rp->ctx->detector),
             cp_cost_name((enum cp_cost)r->info.cost), r->info.sigma2, r->info.rho,
             r->info.penalty);
    report_para(rp, para);
    if (r->info.rejected) {
        snprintf(para, sizeof(para),
                 "The model marked %zu of the %zu observations as change points: that is a "
                 "failure of the model (a unit, a trend or a noise it does not describe), not a "
                 "finding, so none is reported.",
                 r->info.rejected, s->n);
        report_para(rp, para);
    }
    series_chart(rp, r);
    if (r->npts) {
        report_table_head(rp, head, 9);
        for (size_t k = 0; k < r->npts; k++) {
            const struct cp_point *p = &r->pts[k];
            char c0[32], c1[64], c4[32], c5[32], c6[32], c7[32], c8[48];
            const char *row[9] = {c0, c1, cp_kind_name(p->kind), p->role, c4, c5, c6, c7, c8};
            snprintf(c0, sizeof(c0), "%zu", s->row[p->index]);
            if (s->tlabel && s->tlabel[p->index])
                snprintf(c1, sizeof(c1), "%s", s->tlabel[p->index]);
            else
                fmt_num(c1, sizeof(c1), s->t[p->index]);
            fmt_num(c4, sizeof(c4), p->before);
            fmt_num(c5, sizeof(c5), p->after);
            if (isfinite(p->change))
                snprintf(c6, sizeof(c6), "%+.1f%%", p->change * 100);
            else
                snprintf(c6, sizeof(c6), "-");
            fmt_bounds(c7, sizeof(c7), c8, sizeof(c8), s, p);
            report_table_row(rp, row, 9);
        }
        report_table_end(rp);
    }
    {
        static const char *const h2[] = {"detector", "change points (row indices)"};
        report_table_head(rp, h2, 2);
        for (int d = 0; d < CP_NDETECTORS; d++) {
            char list[512];
            size_t k = 0;
            const char *row[2] = {cp_detector_name((enum cp_detector)d), list};
            list[0] = 0;
            for (size_t j = 0; j < r->nby[d] && k + 24 < sizeof(list); j++)
                k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%zu", j ? " " : "",
                                      s->row[r->by[d][j]]);
            if (r->nby[d] && k + 24 >= sizeof(list))
                snprintf(list + k, sizeof(list) - k, " ...");
            report_table_row(rp, row, 2);
        }
        report_table_end(rp);
    }
}

int report_series(const struct inflect_ctx *ctx, const char *input,
                  const struct inflect_result *res, size_t nres)
{
    struct report rp;

    if (report_open(&rp, ctx, input) < 0)
        return -1;
    report_para(&rp, "Change points: index = 0-based row of the first observation of the new "
                     "regime; before/after = segment means; kind = step, spike (returns within "
                     "a few observations) or ramp (moves as a line). Markers: red step, orange "
                     "spike, purple ramp.");
    for (size_t i = 0; i < nres; i++)
        report_series_section(&rp, &res[i]);
    return report_close(&rp);
}

/* ---- --db report ------------------------------------------------------------------ */

static void latency_chart(struct report *rp, const struct sf_span_windows *sw, size_t g,
                          const struct inflect_result *res, const double *x)
{
    static const int ms[3] = {SF_M_P50, SF_M_P95, SF_M_P99};
    static const char *const col[3] = {"#2ca02c", "#1f77b4", "#d62728"};
    const struct sf_win_group *wg = &sw->g[g];
    const struct inflect_result *p99 = &res[g * SF_M_NMETRICS + SF_M_P99];
    struct gp_chart c;
    char file[96], title[200];

    memset(&c, 0, sizeof(c));
    for (int k = 0; k < 3; k++)
        c.lines[k] = (struct gp_line){sf_spans_metric_name((enum sf_span_metric)ms[k]), x,
                                      wg->m[ms[k]], sw->nwin, col[k]};
    c.nlines = 3;
    for (size_t k = 0; k < p99->npts && c.nmarks < GP_MAX_MARKS; k++) {
        c.marks[c.nmarks] = x[p99->s->row[p99->pts[k].index]];
        c.mark_color[c.nmarks++] = gnuplot_kind_color(cp_kind_name(p99->pts[k].kind));
    }
    chart_title(title, sizeof(title), wg->name,
                ": latency percentiles, P99 inflection points marked");
    c.title = title;
    c.xlabel = "seconds since the first span";
    c.ylabel = "latency (ms)";
    chart_name(rp, wg->name, file, sizeof(file));
    draw(rp, file, &c);
}

static void sampling_chart(struct report *rp, const struct sf_span_windows *sw, size_t g,
                           const struct drift_result *dr, const double *pi, const double *x)
{
    struct gp_chart c;
    char file[96], path[1200], title[200];

    memset(&c, 0, sizeof(c));
    c.lines[0] = (struct gp_line){"observed sampled share", x, dr->share, sw->nwin, "#1f77b4"};
    c.nlines = 1;
    if (dr->tested)
        c.lines[c.nlines++] = (struct gp_line){"configured rate", x, pi, sw->nwin, "#d62728"};
    c.band_x = x;
    c.band_lo = dr->lo;
    c.band_hi = dr->hi;
    c.nband = sw->nwin;
    c.band_title = "95% Wilson interval";
    if (dr->alarm) {
        c.marks[0] = x[dr->onset_win < sw->nwin ? dr->onset_win : sw->nwin - 1];
        c.mark_color[0] = "#ff7f0e";
        c.nmarks = 1;
    }
    chart_title(title, sizeof(title), sw->g[g].name, ": sampled share of traces");
    c.title = title;
    c.xlabel = "seconds since the first span";
    c.ylabel = "kept share";
    snprintf(path, sizeof(path), "%s-sampling", sw->g[g].name);
    chart_name(rp, path, file, sizeof(file));
    draw(rp, file, &c);
}

static void inflection_table(struct report *rp, const struct inflect_result *res, size_t g,
                             const double *x)
{
    static const int ms[] = {SF_M_P99, SF_M_P50, SF_M_ERROR_RATE, SF_M_THROUGHPUT,
                             SF_M_SAMPLED_SHARE};
    static const char *const head[] = {"metric", "window", "t (s)",      "kind",   "before",
                                       "after",  "change", "confidence", "windows"};
    int any = 0;

    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        const struct inflect_result *r = &res[g * SF_M_NMETRICS + (size_t)ms[i]];
        for (size_t k = 0; k < r->npts; k++) {
            const struct cp_point *p = &r->pts[k];
            size_t w = r->s->row[p->index];
            char c1[32], c2[32], c4[32], c5[32], c6[32], c7[32], c8[48];
            const char *row[9] = {r->metric, c1, c2, cp_kind_name(p->kind), c4, c5, c6, c7, c8};
            if (!any++)
                report_table_head(rp, head, 9);
            snprintf(c1, sizeof(c1), "%zu", w);
            snprintf(c2, sizeof(c2), "%.10g", x[w]);
            fmt_num(c4, sizeof(c4), p->before);
            fmt_num(c5, sizeof(c5), p->after);
            if (isfinite(p->change))
                snprintf(c6, sizeof(c6), "%+.1f%%", p->change * 100);
            else
                snprintf(c6, sizeof(c6), "-");
            fmt_bounds(c7, sizeof(c7), c8, sizeof(c8), r->s, p);
            report_table_row(rp, row, 9);
        }
    }
    if (any)
        report_table_end(rp);
    else
        report_para(rp, "No inflection point in P99, P50, error rate, throughput or sampled "
                        "share.");
}

static void drift_para(struct report *rp, const struct drift_result *dr, const double *x,
                       size_t nwin)
{
    char b[640];

    if (!dr->tested) {
        snprintf(b, sizeof(b),
                 "Sampling: %llu traces, %llu kept (%.4g). No configured rate (give "
                 "--expect-rate, or spans carry tracestate ot=th:), so drift was not tested.",
                 (unsigned long long)dr->trials, (unsigned long long)dr->kept,
                 dr->trials ? (double)dr->kept / (double)dr->trials : NAN);
    } else if (dr->alarm) {
        size_t on = dr->onset_win < nwin ? dr->onset_win : nwin - 1;
        snprintf(b, sizeof(b),
                 "Sampling DRIFT: the kept share went %s from about window %zu (t = %.10g s; "
                 "alarm at window %zu): %.4g before, %.4g after. Spans per trace %.3g before, "
                 "%.3g after. %zu window(s) had the configured rate outside their 95%% "
                 "interval.",
                 dr->direction > 0 ? "up" : "down", dr->onset_win, x[on], dr->alarm_win,
                 dr->rate_before, dr->rate_after, dr->amp_before, dr->amp_after, dr->outside);
    } else {
        snprintf(b, sizeof(b),
                 "Sampling: no drift alarm (Bernoulli CUSUM, thresholds %.3g up / %.3g down "
                 "for a 0.1%% false-alarm chance over the run). Kept share %.4g; estimated "
                 "traces in all %.6g (relative SE %.3g).",
                 dr->h_up, dr->h_dn, dr->rate_before, dr->est_traces, dr->rel_se);
    }
    report_para(rp, b);
}

static void clock_section(struct report *rp, const struct clock_report *clk)
{
    static const char *const head[] = {"from",           "to",
                                       "segments",       "offset (ns)",
                                       "skew (ppm)",     "alpha (ppm/s)",
                                       "beta (ppm/s^2)", "residual rms (ns)",
                                       "steps"};
    struct gp_chart c;

    report_heading(rp, 2, "Clocks", NULL);
    if (clk->n == 0) {
        report_para(rp, "No clock_fits rows: no clock relation was recorded.");
        return;
    }
    report_table_head(rp, head, 9);
    memset(&c, 0, sizeof(c));
    for (size_t i = 0; i < clk->n; i++) {
        const struct clock_pair *p = &clk->p[i];
        char a[32], b[32], d[32], e[32], f[32], g[32], h[32];
        const char *row[9] = {p->from, p->to, a, b, d, e, f, g, h};
        snprintf(a, sizeof(a), "%zu", p->n);
        snprintf(b, sizeof(b), "%lld", (long long)p->off0_ns);
        snprintf(d, sizeof(d), "%.4g", p->skew0_ppm);
        snprintf(e, sizeof(e), "%.4g", p->alpha_ppm_s);
        snprintf(f, sizeof(f), "%.4g", p->beta_ppm_s2);
        snprintf(g, sizeof(g), "%.4g", p->resid_rms_ns);
        snprintf(h, sizeof(h), "%zu", p->nsteps);
        report_table_row(rp, row, 9);
        if (p->n >= 2 && c.nlines < GP_MAX_LINES)
            c.lines[c.nlines++] = (struct gp_line){p->to, p->t, p->resid_ns, p->n, "#1f77b4"};
    }
    report_table_end(rp);
    if (!rp->charts || c.nlines == 0)
        return;
    c.title = "clock offset residuals after the drift fit";
    c.xlabel = "seconds since the first segment";
    c.ylabel = "residual (ns)";
    draw(rp, "clock-residuals.svg", &c);
}

int report_db(const struct inflect_ctx *ctx, const struct sf_span_windows *sw,
              const struct inflect_result *res, const struct drift_result *drift,
              const struct sf_explain *const *why, const double *const *pi,
              const struct clock_report *clk, const char *outlier_note)
{
    struct report rp;
    char b[800];
    double *x;
    int rc = 0;

    if (report_open(&rp, ctx, ctx->db_path) < 0)
        return -1;
    x = malloc((sw->nwin ? sw->nwin : 1) * sizeof(*x));
    if (x == NULL) {
        report_close(&rp);
        return -1;
    }
    for (size_t w = 0; w < sw->nwin; w++)
        x[w] = (double)sw->win[w] * (double)sw->window_ns / 1e9;
    if (sw->note[0]) {
        snprintf(b, sizeof(b), "Warning: %s.", sw->note);
        report_para(&rp, b);
    }
    if (outlier_note[0]) {
        snprintf(b, sizeof(b), "Warning: %s.", outlier_note);
        report_para(&rp, b);
    }
    snprintf(b, sizeof(b),
             "%llu spans in %zu windows of %.10g s, grouped by %s (%zu group(s)); first span "
             "at %lld ns. Inflection points by %s; data of every chart in windows.csv and "
             "summary.json.",
             (unsigned long long)sw->nspans, sw->nwin, (double)sw->window_ns / 1e9, ctx->by, sw->ng,
             (long long)sw->t0_ns, cp_detector_name((enum cp_detector)ctx->detector));
    report_para(&rp, b);
    for (size_t g = 0; g < sw->ng; g++) {
        report_heading(&rp, 2, NULL, sw->g[g].name);
        if (rp.charts)
            latency_chart(&rp, sw, g, res, x);
        inflection_table(&rp, res, g, x);
        drift_para(&rp, &drift[g], x, sw->nwin);
        if (why && why[g]) {
            char w[600];
            sf_explain_words(why[g], drift[g].direction < 0, w, sizeof(w));
            snprintf(b, sizeof(b), "Why: %s.", w);
            report_para(&rp, b);
        }
        if (rp.charts && drift[g].trials)
            sampling_chart(&rp, sw, g, &drift[g], pi[g], x);
    }
    clock_section(&rp, clk);
    free(x);
    if (report_close(&rp) < 0)
        rc = -1;
    return rc;
}

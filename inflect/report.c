/* report.c - report.md and report.html, written side by side, with SVG charts.
 *
 *   DIR/report.md      Markdown (GitHub flavour: pipe tables, image links)
 *   DIR/report.html    the same content as one self-contained HTML page
 *   DIR/chart-NN-NAME.svg  gnuplot charts (gnuplot.c); DIR/summary.json their data
 *
 * Every chart is referenced from both documents; every table row has its
 * machine-readable twin in summary.json.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gnuplot.h"

char *report_path(const struct report *rp, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", rp->dir, name);
    return buf;
}

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* Markdown table cells must not contain '|' or newlines. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '|' ? '/' : *s == '\n' ? ' ' : *s, f);
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
    fprintf(rp->md, "# inflect report: %s\n\n", title);
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>inflect report</title>\n"
          "<style>body{font-family:sans-serif;max-width:960px;margin:auto}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
          "text-align:right}img{max-width:100%}</style></head><body>\n<h1>inflect report: ",
          rp->html);
    html_text(rp->html, title);
    fputs("</h1>\n", rp->html);
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
    return bad ? -1 : 0;
}

void report_heading(struct report *rp, int level, const char *text)
{
    fprintf(rp->md, "%.*s %s\n\n", level, "######", text);
    fprintf(rp->html, "<h%d>", level);
    html_text(rp->html, text);
    fprintf(rp->html, "</h%d>\n", level);
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
    fprintf(rp->md, "![%s](%s)\n\n", caption, file);
    fputs("<p><img src=\"", rp->html);
    html_text(rp->html, file);
    fputs("\" alt=\"", rp->html);
    html_text(rp->html, caption);
    fputs("\"></p>\n", rp->html);
}

void report_table_head(struct report *rp, const char *const *cells, int ncol)
{
    fputs("|", rp->md);
    for (int i = 0; i < ncol; i++) {
        fputc(' ', rp->md);
        md_cell(rp->md, cells[i]);
        fputs(" |", rp->md);
    }
    fputs("\n|", rp->md);
    for (int i = 0; i < ncol; i++)
        fputs("---|", rp->md);
    fputs("\n", rp->md);
    fputs("<table><tr>", rp->html);
    for (int i = 0; i < ncol; i++) {
        fputs("<th>", rp->html);
        html_text(rp->html, cells[i]);
        fputs("</th>", rp->html);
    }
    fputs("</tr>\n", rp->html);
}

void report_table_row(struct report *rp, const char *const *cells, int ncol)
{
    fputs("|", rp->md);
    for (int i = 0; i < ncol; i++) {
        fputc(' ', rp->md);
        md_cell(rp->md, cells[i]);
        fputs(" |", rp->md);
    }
    fputs("\n", rp->md);
    fputs("<tr>", rp->html);
    for (int i = 0; i < ncol; i++) {
        fputs("<td>", rp->html);
        html_text(rp->html, cells[i]);
        fputs("</td>", rp->html);
    }
    fputs("</tr>\n", rp->html);
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

static void series_chart(struct report *rp, const struct inflect_result *r)
{
    const struct inflect_series *s = r->s;
    struct gp_chart c;
    struct sf_err err;
    char file[96], path[1200], title[200];

    if (!rp->charts || s->n == 0)
        return;
    memset(&c, 0, sizeof(c));
    chart_name(rp, s->name, file, sizeof(file));
    snprintf(title, sizeof(title), "%s: change points (%s)", s->name,
             cp_detector_name((enum cp_detector)rp->ctx->detector));
    c.title = title;
    c.xlabel = s->tlabel ? "time (s since epoch)" : "time";
    c.ylabel = r->metric[0] ? r->metric : s->name;
    c.lines[0] = (struct gp_line){s->name, s->t, s->v, s->n, "#1f77b4"};
    c.nlines = 1;
    for (size_t k = 0; k < r->npts && c.nmarks < GP_MAX_MARKS; k++) {
        c.marks[c.nmarks] = s->t[r->pts[k].index];
        c.mark_color[c.nmarks++] = gnuplot_kind_color(cp_kind_name(r->pts[k].kind));
    }
    sf_err_clear(&err);
    if (gnuplot_chart(report_path(rp, file, path, sizeof(path)), &c, &err) < 0) {
        fprintf(stderr, "inflect: %s\n", err.msg);
        return;
    }
    report_image(rp, file, title);
}

static void fmt_num(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.6g", v);
    else
        snprintf(b, n, "-");
}

void report_series_section(struct report *rp, const struct inflect_result *r)
{
    static const char *const head[] = {"index", "time", "kind", "role", "before", "after",
                                       "change"};
    const struct inflect_series *s = r->s;
    char para[512];

    report_heading(rp, 2, s->name);
    snprintf(para, sizeof(para),
             "%zu observations; %zu inflection point(s) by %s (noise variance %.3g, AR(1) "
             "rho %.3f, penalty %.3g).",
             s->n, r->npts, cp_detector_name((enum cp_detector)rp->ctx->detector),
             r->info.sigma2, r->info.rho, r->info.penalty);
    report_para(rp, para);
    series_chart(rp, r);
    if (r->npts) {
        report_table_head(rp, head, 7);
        for (size_t k = 0; k < r->npts; k++) {
            const struct cp_point *p = &r->pts[k];
            char c0[32], c1[64], c4[32], c5[32], c6[32];
            const char *row[7] = {c0, c1, cp_kind_name(p->kind), p->role, c4, c5, c6};
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
            report_table_row(rp, row, 7);
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

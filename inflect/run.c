/* run.c - the --series mode and the gates (the --db mode is in rundb.c).
 *
 * Flow: read -> analyse every series with every detector -> JSON summary ->
 * report (--out) -> gates.  Errors are printed once, here, as
 * "inflect: FILE:LINE:COL: message".
 */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sf_err.h"
#include "sf_json.h"

double inflect_expect_rate(const struct inflect_ctx *ctx, const char *group)
{
    for (int i = 0; i < ctx->nrates; i++)
        if (strcmp(ctx->rates[i].group, group) == 0)
            return ctx->rates[i].rate;
    return ctx->expect_rate;
}

int run_print_err(const struct inflect_ctx *ctx, const struct sf_err *err, const char *file)
{
    char msg[512];
    sf_err_format(err, ctx->tool, file, msg, sizeof(msg));
    fprintf(stderr, "%s\n", msg);
    return SF_EXIT_USAGE;
}

/* Does a change point cross a relative gate?  A spike recovers by itself, so only
 * steps and ramps count as regressions. */
static int rel_crossed(const struct inflect_gate *g, const struct cp_point *p)
{
    double ch = p->change;
    if (p->kind == CP_SPIKE)
        return 0;
    if (isnan(ch)) /* level was 0: any rise (fall) is unbounded */
        ch = p->after > p->before ? INFINITY : p->after < p->before ? -INFINITY : 0;
    return g->above ? ch > g->value : ch < g->value;
}

/* Segment levels of the default detector: the first, and each cp's after. */
static int abs_crossed(const struct inflect_gate *g, const struct inflect_result *r, double *level)
{
    size_t n = r->s->n;
    double first = 0;

    if (n == 0)
        return 0;
    if (r->npts == 0) {
        for (size_t i = 0; i < n; i++)
            first += r->s->v[i];
        first /= (double)n;
    } else {
        first = r->pts[0].before;
    }
    *level = first;
    if (g->above ? first > g->value : first < g->value)
        return 1;
    for (size_t k = 0; k < r->npts; k++) {
        *level = r->pts[k].after;
        if (g->above ? *level > g->value : *level < g->value)
            return 1;
    }
    return 0;
}

int run_gate(const struct inflect_gate *g, const struct inflect_result *res, size_t nres,
             int drift_alarm, char *detail, size_t dsz)
{
    int seen = 0;

    detail[0] = 0;
    if (g->kind == GATE_DRIFT) {
        snprintf(detail, dsz,
                 drift_alarm ? "sampling rate drifted from its configuration"
                             : "no sampling drift alarm");
        return drift_alarm ? 1 : 0;
    }
    for (size_t i = 0; i < nres; i++) {
        const struct inflect_result *r = &res[i];
        double level;
        if (strcmp(r->metric, g->metric) != 0)
            continue;
        seen = 1;
        if (g->kind == GATE_REL) {
            for (size_t k = 0; k < r->npts; k++) {
                if (rel_crossed(g, &r->pts[k])) {
                    snprintf(detail, dsz, "%s: %s at index %zu changed %+.1f%% (%.6g -> %.6g)",
                             r->s->name, cp_kind_name(r->pts[k].kind), r->s->row[r->pts[k].index],
                             r->pts[k].change * 100, r->pts[k].before, r->pts[k].after);
                    return 1;
                }
            }
        } else if (abs_crossed(g, r, &level)) {
            snprintf(detail, dsz, "%s: a segment's level is %.6g", r->s->name, level);
            return 1;
        }
    }
    if (!seen) {
        snprintf(detail, dsz, "no series named '%s'", g->metric);
        return -1;
    }
    snprintf(detail, dsz, "holds");
    return 0;
}

/* Evaluate every gate; write them to JSON (w may be NULL); return the exit status. */
int run_gates(const struct inflect_ctx *ctx, const struct inflect_result *res, size_t nres,
              int drift_alarm, struct sf_jw *w)
{
    int status = SF_EXIT_OK;

    if (w)
        sf_jw_arr(w, "gates");
    for (int i = 0; i < ctx->ngates; i++) {
        char detail[384];
        int r = run_gate(&ctx->gates[i], res, nres, drift_alarm, detail, sizeof(detail));
        if (w) {
            sf_jw_obj(w, NULL);
            sf_jw_str(w, "gate", ctx->gates[i].text);
            sf_jw_str(w, "result", r > 0 ? "fail" : r == 0 ? "pass" : "unknown");
            sf_jw_str(w, "detail", detail);
            sf_jw_end(w);
        }
        if (r > 0) {
            /* printed even with --quiet: a CI log must say why the build failed */
            fprintf(stderr, "inflect: gate '%s' failed: %s\n", ctx->gates[i].text, detail);
            if (status == SF_EXIT_OK)
                status = SF_EXIT_FINDINGS;
        } else if (r < 0) {
            /* a gate on a metric that does not exist must not pass silently */
            fprintf(stderr, "inflect: gate '%s': %s\n", ctx->gates[i].text, detail);
            status = SF_EXIT_USAGE;
        }
    }
    if (w)
        sf_jw_end(w);
    return status;
}

/* Open the JSON destination: --json path, "-" (stdout), DIR/summary.json with
 * --out, else stdout.  Returns NULL (error printed) when it cannot be created. */
FILE *run_json_open(const struct inflect_ctx *ctx, char *path, size_t psz)
{
    FILE *f;

    if (ctx->json_path == NULL && ctx->out_dir)
        snprintf(path, psz, "%s/summary.json", ctx->out_dir);
    else
        snprintf(path, psz, "%s", ctx->json_path ? ctx->json_path : "-");
    if (strcmp(path, "-") == 0)
        return stdout;
    if ((f = fopen(path, "w")) == NULL)
        fprintf(stderr, "inflect: %s: cannot create: %s\n", path, strerror(errno));
    return f;
}

int run_json_close(const char *path, FILE *f)
{
    int bad = ferror(f);
    if (f != stdout)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad)
        fprintf(stderr, "inflect: %s: write error\n", path);
    return bad ? SF_EXIT_USAGE : 0;
}

int run_series(const struct inflect_ctx *ctx)
{
    struct inflect_table tab;
    struct inflect_result *res;
    struct sf_err err;
    struct sf_jw w;
    FILE *jf;
    char jpath[1100];
    int status = SF_EXIT_OK, rc;

    sf_err_clear(&err);
    if (series_read_file(&tab, ctx->series_path, ctx->column, &err) < 0)
        return run_print_err(ctx, &err, ctx->series_path);
    res = calloc(tab.nseries, sizeof(*res));
    if (res == NULL) {
        series_table_free(&tab);
        fprintf(stderr, "inflect: out of memory\n");
        return SF_EXIT_USAGE;
    }
    for (size_t i = 0; i < tab.nseries; i++) {
        res[i].s = &tab.s[i];
        snprintf(res[i].metric, sizeof(res[i].metric), "%s", tab.s[i].name);
        if (inflect_analyse(ctx, &res[i]) < 0) {
            fprintf(stderr, "inflect: out of memory\n");
            status = SF_EXIT_USAGE;
            goto out;
        }
    }
    if (ctx->out_dir && report_series(ctx, ctx->series_path, res, tab.nseries) < 0) {
        status = SF_EXIT_USAGE;
        goto out;
    }
    if ((jf = run_json_open(ctx, jpath, sizeof(jpath))) == NULL) {
        status = SF_EXIT_USAGE;
        goto out;
    }
    {
        sf_jw_init_pretty(&w, jf, RUN_JSON_INDENT, RUN_JSON_DIGITS);
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "input", ctx->series_path);
        sf_jw_int(&w, "rows", (int64_t)tab.rows);
        /* the first series' analysis at top level: the interface for machines */
        inflect_json_series(&w, ctx, &res[0]);
        sf_jw_arr(&w, "series");
        for (size_t i = 0; i < tab.nseries; i++) {
            sf_jw_obj(&w, NULL);
            inflect_json_series(&w, ctx, &res[i]);
            sf_jw_end(&w);
        }
        sf_jw_end(&w);
    }
    rc = run_gates(ctx, res, tab.nseries, 0, &w);
    sf_jw_end(&w);
    sf_jw_finish(&w);
    if (run_json_close(jpath, jf))
        rc = SF_EXIT_USAGE;
    status = rc;
out:
    for (size_t i = 0; i < tab.nseries; i++)
        inflect_result_free(&res[i]);
    free(res);
    series_table_free(&tab);
    return status;
}

/* ---- the JSON summary of one series --------------------------------------------- */

/* "time" of observation i: its ISO text when the input had one, else the number. */
static void json_time(struct sf_jw *w, const struct inflect_series *s, size_t i)
{
    if (s->tlabel && s->tlabel[i])
        sf_jw_str(w, "time", s->tlabel[i]);
    else
        sf_jw_num(w, "time", s->t[i]);
}

void inflect_json_series(struct sf_jw *w, const struct inflect_ctx *ctx,
                         const struct inflect_result *r)
{
    const struct inflect_series *s = r->s;

    sf_jw_str(w, "name", s->name);
    if (r->group[0]) {
        sf_jw_str(w, "group", r->group);
        sf_jw_str(w, "metric", r->metric);
    }
    sf_jw_int(w, "n", (int64_t)s->n);
    sf_jw_str(w, "detector", cp_detector_name((enum cp_detector)ctx->detector));
    sf_jw_arr(w, "change_points");
    for (size_t k = 0; k < r->npts; k++) {
        const struct cp_point *p = &r->pts[k];
        sf_jw_obj(w, NULL);
        sf_jw_int(w, "index", (int64_t)s->row[p->index]);
        json_time(w, s, p->index);
        if (p->kind == CP_RAMP && p->end != p->index)
            sf_jw_int(w, "end", (int64_t)s->row[p->end < s->n ? p->end : s->n - 1]);
        sf_jw_num(w, "before", p->before);
        sf_jw_num(w, "after", p->after);
        sf_jw_num(w, "change", p->change);
        sf_jw_num(w, "confidence", p->confidence);
        sf_jw_int(w, "lo", (int64_t)s->row[p->lo]);
        sf_jw_int(w, "hi", (int64_t)s->row[p->hi < s->n ? p->hi : s->n - 1]);
        sf_jw_str(w, "kind", cp_kind_name(p->kind));
        sf_jw_str(w, "role", p->role);
        sf_jw_str(w, "detector", cp_detector_name((enum cp_detector)ctx->detector));
        sf_jw_end(w);
    }
    sf_jw_end(w);
    sf_jw_obj(w, "by_detector");
    for (int d = 0; d < CP_NDETECTORS; d++) {
        sf_jw_arr_inline(w, cp_detector_name((enum cp_detector)d));
        for (size_t k = 0; k < r->nby[d]; k++)
            sf_jw_int(w, NULL, (int64_t)s->row[r->by[d][k]]);
        sf_jw_end(w);
    }
    sf_jw_end(w);
    sf_jw_obj(w, "model");
    sf_jw_str(w, "cost", cp_cost_name((enum cp_cost)r->info.cost));
    sf_jw_num(w, "sigma2", r->info.sigma2);
    sf_jw_num(w, "rho", r->info.rho);
    sf_jw_num(w, "penalty", r->info.penalty);
    sf_jw_int(w, "iterations", r->info.iterations);
    sf_jw_end(w);
}

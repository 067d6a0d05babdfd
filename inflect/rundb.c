/* rundb.c - the --db mode: spans -> windows -> change points, drift, clocks.
 *
 *   sf_spans_window()  per group and window: count, throughput, P50/P95/P99/max,
 *                   error rate, sampled share, amplification
 *   inflect_analyse() on every (group, metric) series
 *   drift_analyse() per group against --expect-rate^--tiers or ot=th
 *   clock_read()    clock_fits pairs
 *   report_db(), JSON summary, gates
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockdrift.h"
#include "drift.h"
#include "report.h"
#include "run.h"
#include "sf_err.h"
#include "sf_explain.h"
#include "sf_json.h"
#include "sf_opt.h"
#include "sf_spans.h"
#include "sf_text.h"
#include "sf_window.h"

/* Everything one --db run computed, for the JSON and the report. */
struct db_run {
    struct sf_span_windows sw;
    struct inflect_series *ser; /* ng * SF_M_NMETRICS */
    struct inflect_result *res; /* same order */
    struct drift_result *drift; /* ng */
    struct sf_explain *why;     /* ng, --explain-drift: of each alarm (why_ok[g]) */
    unsigned char *why_ok;
    double **pi; /* ng: configured keep probability per window */
    struct clock_report clk;
    int drift_alarm;
    char outlier_note[400]; /* sf_spans_outlier_note */
};

static void db_run_free(struct db_run *d)
{
    size_t ns = d->sw.ng * SF_M_NMETRICS;
    for (size_t i = 0; d->res && i < ns; i++) {
        inflect_result_free(&d->res[i]);
        series_free(&d->ser[i]);
    }
    for (size_t g = 0; d->drift && g < d->sw.ng; g++) {
        drift_result_free(&d->drift[g]);
        free(d->pi[g]);
    }
    free(d->res);
    free(d->ser);
    free(d->drift);
    free(d->why);
    free(d->why_ok);
    free(d->pi);
    clock_free(&d->clk);
    sf_spans_free(&d->sw);
}

int run_db_series(const struct inflect_ctx *ctx, const struct sf_span_windows *sw,
                  struct inflect_series **ser, struct inflect_result **res)
{
    size_t ns = sw->ng * SF_M_NMETRICS;

    *ser = calloc(ns ? ns : 1, sizeof(**ser));
    *res = calloc(ns ? ns : 1, sizeof(**res));
    if (*ser == NULL || *res == NULL)
        return -1;
    for (size_t g = 0; g < sw->ng; g++) {
        const struct sf_win_group *wg = &sw->g[g];
        for (int m = 0; m < SF_M_NMETRICS; m++) {
            struct inflect_series *s = &(*ser)[g * SF_M_NMETRICS + (size_t)m];
            struct inflect_result *r = &(*res)[g * SF_M_NMETRICS + (size_t)m];
            snprintf(s->name, sizeof(s->name), "%.*s/%s",
                     (int)sf_text_utf8_cut(wg->name, strlen(wg->name), 80), wg->name,
                     sf_spans_metric_name((enum sf_span_metric)m));
            const uint64_t *tr = sf_spans_trials(wg, (enum sf_span_metric)m);
            for (size_t w = 0; w < sw->nwin; w++) {
                double t = (double)sf_spans_window_start(sw, w) / 1e9;
                if (isfinite(wg->m[m][w]) && series_push(s, t, wg->m[m][w], w, NULL) < 0)
                    return -1;
            }
            if (tr && s->n) { /* a rate: the detector models it as k of n trials */
                if ((s->trials = malloc(s->n * sizeof(*s->trials))) == NULL)
                    return -1;
                for (size_t i = 0; i < s->n; i++)
                    s->trials[i] = (double)tr[s->row[i]];
            }
            r->s = s;
            snprintf(r->group, sizeof(r->group), "%s", wg->name);
            snprintf(r->metric, sizeof(r->metric), "%s",
                     sf_spans_metric_name((enum sf_span_metric)m));
            if (m == SF_M_ERROR_RATE) {
                /* the design notes' baseline also alerts on an error rate above 0.8 % */
                struct inflect_ctx c = *ctx;
                c.cp.base_abs = 0.008;
                if (inflect_analyse(&c, r) < 0)
                    return -1;
            } else if (inflect_analyse(ctx, r) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* --explain-drift: the attribute behind each alarm, over the whole run, cut near its
 * onset (lib/sf_explain.h).  A database that cannot be read for it is a note. */
static int explain(const struct inflect_ctx *ctx, struct db_run *d)
{
    struct sf_err err;

    d->why = calloc(d->sw.ng ? d->sw.ng : 1, sizeof(*d->why));
    d->why_ok = calloc(d->sw.ng ? d->sw.ng : 1, 1);
    if (d->why == NULL || d->why_ok == NULL)
        return -1;
    for (size_t g = 0; g < d->sw.ng; g++) {
        const struct drift_result *r = &d->drift[g];
        if (!r->alarm || d->sw.nwin == 0)
            continue;
        if (sf_explain_drift(ctx->db_path, ctx->complete_only, sf_spans_group_expr(ctx->by),
                             d->sw.g[g].name, INT64_MIN,
                             sf_spans_window_start(
                                 &d->sw, r->onset_win < d->sw.nwin ? r->onset_win : d->sw.nwin - 1),
                             INT64_MAX, 1.0, &d->why[g], &err) < 0) {
            if (err.code == SF_E_NOMEM)
                return -1;
            fprintf(stderr, "inflect: %s: explaining the drift of %s: %s\n", ctx->db_path,
                    d->sw.g[g].name, err.msg);
            continue;
        }
        d->why_ok[g] = 1;
    }
    return 0;
}

static int run_drift(const struct inflect_ctx *ctx, struct db_run *d)
{
    struct drift_opts o;

    drift_defaults(&o);
    d->drift = calloc(d->sw.ng ? d->sw.ng : 1, sizeof(*d->drift));
    d->pi = calloc(d->sw.ng ? d->sw.ng : 1, sizeof(*d->pi));
    if (d->drift == NULL || d->pi == NULL)
        return -1;
    for (size_t g = 0; g < d->sw.ng; g++) {
        const struct sf_win_group *wg = &d->sw.g[g];
        double rate = inflect_expect_rate(ctx, wg->name);
        double pi_cfg = rate > 0 ? pow(rate, ctx->tiers) : NAN;
        if ((d->pi[g] = malloc((d->sw.nwin ? d->sw.nwin : 1) * sizeof(double))) == NULL)
            return -1;
        for (size_t w = 0; w < d->sw.nwin; w++)
            d->pi[g][w] = rate > 0 ? pi_cfg : wg->cfg[w];
        if (drift_analyse(wg->trials, wg->kept, d->pi[g], wg->spans, wg->traces, d->sw.nwin, &o,
                          &d->drift[g]) < 0)
            return -1;
        d->drift_alarm |= d->drift[g].alarm;
    }
    return ctx->explain_drift ? explain(ctx, d) : 0;
}

static void json_drift(struct sf_jw *w, const struct db_run *d, const struct inflect_ctx *ctx)
{
    sf_jw_arr(w, "drift");
    for (size_t g = 0; g < d->sw.ng; g++) {
        const struct drift_result *r = &d->drift[g];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "group", d->sw.g[g].name);
        double rate = inflect_expect_rate(ctx, d->sw.g[g].name);
        sf_jw_str(w, "configured", rate > 0 ? "expect-rate" : r->tested ? "ot=th" : "unknown");
        sf_jw_num(w, "expect_rate", rate > 0 ? rate : NAN);
        sf_jw_int(w, "tiers", ctx->tiers);
        sf_jw_int(w, "trials", (int64_t)r->trials);
        sf_jw_int(w, "kept", (int64_t)r->kept);
        sf_jw_int(w, "windows_outside_interval", (int64_t)r->outside);
        sf_jw_bool(w, "alarm", r->alarm);
        if (r->alarm) {
            sf_jw_str(w, "direction", r->direction > 0 ? "up" : "down");
            sf_jw_int(w, "alarm_window", (int64_t)r->alarm_win);
            sf_jw_int(w, "onset_window", (int64_t)r->onset_win);
        }
        sf_jw_num(w, "threshold_up", r->h_up);
        sf_jw_num(w, "threshold_down", r->h_dn);
        sf_jw_num(w, "rate_before", r->rate_before);
        sf_jw_num(w, "rate_after", r->rate_after);
        sf_jw_num(w, "amplification_before", r->amp_before);
        sf_jw_num(w, "amplification_after", r->amp_after);
        sf_jw_num(w, "estimated_traces", r->est_traces);
        sf_jw_num(w, "estimated_traces_rel_se", r->rel_se);
        if (d->why && d->why_ok[g]) {
            char words[600];
            sf_explain_words(&d->why[g], r->direction < 0, words, sizeof(words));
            sf_jw_str(w, "explanation", words);
            sf_explain_json(w, &d->why[g]);
        }
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void json_clock(struct sf_jw *w, const struct clock_report *c)
{
    sf_jw_arr(w, "clock");
    for (size_t i = 0; i < c->n; i++) {
        const struct clock_pair *p = &c->p[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "from", p->from);
        sf_jw_str(w, "to", p->to);
        sf_jw_int(w, "segments", (int64_t)p->n);
        sf_jw_int(w, "offset_ns", (int64_t)p->off0_ns);
        sf_jw_num(w, "skew_ppm", p->skew0_ppm);
        sf_jw_int(w, "fit_degree", p->degree);
        sf_jw_num(w, "alpha_ppm_per_s", p->alpha_ppm_s);
        sf_jw_num(w, "beta_ppm_per_s2", p->beta_ppm_s2);
        sf_jw_num(w, "residual_rms_ns", p->resid_rms_ns);
        sf_jw_int(w, "steps", (int64_t)p->nsteps);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static int write_json(const struct inflect_ctx *ctx, const struct db_run *d, int *gate_status)
{
    struct sf_jw w;
    char path[1100];
    size_t ns = d->sw.ng * SF_M_NMETRICS;
    FILE *f = run_json_open(ctx, path, sizeof(path));

    if (f == NULL)
        return -1;
    sf_jw_init_pretty(&w, f, RUN_JSON_INDENT, RUN_JSON_DIGITS);
    sf_jw_obj(&w, NULL);
    sf_jw_str(&w, "input", ctx->db_path);
    sf_jw_num(&w, "window_s", (double)ctx->window_ns / 1e9);
    sf_jw_str(&w, "by", ctx->by);
    sf_jw_int(&w, "t0_ns", (int64_t)d->sw.t0_ns);
    sf_jw_int(&w, "windows", (int64_t)d->sw.nwin);
    sf_jw_int(&w, "spans", (int64_t)d->sw.nspans);
    sf_jw_obj(&w, "outliers");
    sf_jw_int(&w, "before", (int64_t)d->sw.outliers.before);
    sf_jw_int(&w, "after", (int64_t)d->sw.outliers.after);
    sf_jw_int(&w, "gaps_cut", (int64_t)d->sw.gaps_cut);
    sf_jw_end(&w);
    sf_jw_arr(&w, "warnings");
    if (d->sw.note[0])
        sf_jw_str(&w, NULL, d->sw.note);
    if (d->outlier_note[0])
        sf_jw_str(&w, NULL, d->outlier_note);
    sf_jw_end(&w);
    /* top level: the first group's P99, so that --series and --db read alike */
    if (ns) {
        inflect_json_series(&w, ctx, &d->res[SF_M_P99]);
    } else { /* no spans: the same keys, empty */
        sf_jw_arr(&w, "change_points");
        sf_jw_end(&w);
        sf_jw_obj(&w, "by_detector");
        for (int k = 0; k < CP_NDETECTORS; k++) {
            sf_jw_arr_inline(&w, cp_detector_name((enum cp_detector)k));
            sf_jw_end(&w);
        }
        sf_jw_end(&w);
    }
    sf_jw_arr(&w, "series");
    for (size_t i = 0; i < ns; i++) {
        sf_jw_obj(&w, NULL);
        inflect_json_series(&w, ctx, &d->res[i]);
        sf_jw_end(&w);
    }
    sf_jw_end(&w);
    json_drift(&w, d, ctx);
    json_clock(&w, &d->clk);
    struct run_facts facts = {1, d->drift_alarm, 0, d->sw.nspans, ctx->db_path};
    for (size_t g = 0; g < d->sw.ng; g++)
        facts.drift_tested |= d->drift[g].tested;
    *gate_status = run_gates(ctx, d->res, ns, &facts, &w);
    sf_jw_end(&w);
    sf_jw_finish(&w);
    return run_json_close(path, f) ? -1 : 0;
}

/* The report, with each group's drift explanation where there is one, and the numbers
 * behind it (DIR/windows.csv). */
static int report_why(const struct inflect_ctx *ctx, const struct db_run *d)
{
    const struct sf_explain **why = calloc(d->sw.ng ? d->sw.ng : 1, sizeof(*why));
    char path[1200];
    int rc;

    if (why == NULL)
        return -1;
    for (size_t g = 0; d->why && g < d->sw.ng; g++)
        why[g] = d->why_ok[g] ? &d->why[g] : NULL;
    rc = report_db(ctx, &d->sw, d->res, d->drift, why, (const double *const *)d->pi, &d->clk,
                   d->outlier_note);
    free(why);
    snprintf(path, sizeof(path), "%s/windows.csv", ctx->out_dir);
    if (run_windows_csv(path, "inflect", &d->sw, d->drift, (const double *const *)d->pi) < 0)
        rc = -1;
    return rc;
}

int run_windows_csv(const char *path, const char *tool, const struct sf_span_windows *sw,
                    const struct drift_result *drift, const double *const *pi)
{
    FILE *f = fopen(path, "w");
    int bad;

    if (f == NULL) {
        fprintf(stderr, "%s: %s: cannot create\n", tool, path);
        return -1;
    }
    fputs("group,window,t_s", f);
    for (int m = 0; m < SF_M_NMETRICS; m++)
        fprintf(f, ",%s", sf_spans_metric_name((enum sf_span_metric)m));
    fputs(",traces,trials,kept,configured_rate,wilson_lo,wilson_hi\n", f);
    for (size_t g = 0; g < sw->ng; g++) {
        const struct sf_win_group *wg = &sw->g[g];
        for (size_t w = 0; w < sw->nwin; w++) {
            sf_text_csv(f, wg->name, strlen(wg->name));
            fprintf(f, ",%zu,%.10g", w, (double)sw->win[w] * (double)sw->window_ns / 1e9);
            for (int m = 0; m < SF_M_NMETRICS; m++)
                isfinite(wg->m[m][w]) ? fprintf(f, ",%.10g", wg->m[m][w]) : fputs(",", f);
            fprintf(f, ",%llu,%llu,%llu", (unsigned long long)wg->traces[w],
                    (unsigned long long)wg->trials[w], (unsigned long long)wg->kept[w]);
            isfinite(pi[g][w]) ? fprintf(f, ",%.10g", pi[g][w]) : fputs(",", f);
            isfinite(drift[g].lo[w]) ? fprintf(f, ",%.10g,%.10g\n", drift[g].lo[w], drift[g].hi[w])
                                     : fputs(",,\n", f);
        }
    }
    bad = ferror(f) | (fclose(f) != 0);
    if (bad)
        fprintf(stderr, "%s: %s: write error\n", tool, path);
    return bad ? -1 : 0;
}

inflect_windows_fn inflect_ch_windows;

/* The windows and clocks of the database at ctx->db_path, or of the cluster (no clock
 * report: the clock fits stay on the hosts).  Returns 0 or an exit status (printed). */
static int read_windows(struct inflect_ctx *ctx, struct db_run *d, char *name, size_t n)
{
    int adapt = ctx->window_ns == 0, rc;
    struct sf_err err;

    sf_err_clear(&err);
    if (ctx->ch.url) {
        assert(inflect_ch_windows != NULL); /* main.c refuses --clickhouse without it */
        if ((rc = inflect_ch_windows(ctx, &ctx->window_ns, &d->sw, name, n)) != 0)
            return rc;
        ctx->db_path = name;
    } else if (adapt && sf_window_auto(ctx->db_path, ctx->by, &ctx->window_ns, &err) < 0) {
        return run_print_err(ctx, &err, ctx->db_path);
    }
    if (adapt && !ctx->quiet)
        fprintf(stderr, "inflect: %s: window %gs, adapted to span density (--window sets it)\n",
                ctx->db_path, (double)ctx->window_ns / 1e9);
    if (ctx->ch.url)
        return 0;
    if (sf_spans_window(&d->sw, ctx->db_path, ctx->by, ctx->window_ns, ctx->complete_only,
                        sf_opt_want_progress(ctx->quiet) ? stderr : NULL, &err) < 0)
        return run_print_err(ctx, &err, ctx->db_path);
    if (clock_read(&d->clk, ctx->db_path, ctx->complete_only, &err) < 0) {
        sf_spans_free(&d->sw);
        return run_print_err(ctx, &err, ctx->db_path);
    }
    return 0;
}

int run_db(const struct inflect_ctx *ctx0)
{
    struct inflect_ctx c = *ctx0, *ctx = &c;
    struct db_run d;
    char name[600];
    int status = SF_EXIT_OK, gs = 0;

    memset(&d, 0, sizeof(d));
    if ((status = read_windows(ctx, &d, name, sizeof(name))) != 0)
        return status;
    /* warnings, not notes: --quiet does not hide them (they are in the JSON too) */
    sf_spans_outlier_note(&d.sw, d.outlier_note, sizeof(d.outlier_note));
    if (d.sw.note[0])
        fprintf(stderr, "inflect: %s: warning: %s\n", ctx->db_path, d.sw.note);
    if (d.outlier_note[0])
        fprintf(stderr, "inflect: %s: warning: %s\n", ctx->db_path, d.outlier_note);
    if (d.sw.nspans == 0 && !ctx->quiet)
        fprintf(stderr, "inflect: %s: no spans with a request time\n", ctx->db_path);
    if (run_db_series(ctx, &d.sw, &d.ser, &d.res) < 0 || run_drift(ctx, &d) < 0) {
        fprintf(stderr, "inflect: out of memory\n");
        status = SF_EXIT_USAGE;
    } else if (ctx->out_dir && report_why(ctx, &d) < 0) {
        status = SF_EXIT_USAGE;
    } else if (write_json(ctx, &d, &gs) < 0) {
        status = SF_EXIT_USAGE;
    } else {
        status = gs;
    }
    db_run_free(&d);
    return status;
}

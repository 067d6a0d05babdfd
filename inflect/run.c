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
#include "sf_explain.h"
#include "sf_json.h"
#include "sf_spans.h"

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

/* What each --db metric measures, for the units its gates may use. */
static const enum sf_gate_kind metric_kind[SF_M_NMETRICS] = {
    [SF_M_COUNT] = SF_GATE_K_COUNT,
    [SF_M_THROUGHPUT] = SF_GATE_K_NUMBER,
    [SF_M_P50] = SF_GATE_K_MS,
    [SF_M_P95] = SF_GATE_K_MS,
    [SF_M_P99] = SF_GATE_K_MS,
    [SF_M_MAX] = SF_GATE_K_MS,
    [SF_M_ERROR_RATE] = SF_GATE_K_SHARE,
    [SF_M_SAMPLED_SHARE] = SF_GATE_K_SHARE,
    [SF_M_AMPLIFICATION] = SF_GATE_K_NUMBER,
};

static int metric_by_name(const char *s)
{
    if (strcmp(s, "kept_share") == 0) /* the report's name for it */
        return SF_M_SAMPLED_SHARE;
    for (int m = 0; m < SF_M_NMETRICS; m++)
        if (strcmp(s, sf_spans_metric_name((enum sf_span_metric)m)) == 0)
            return m;
    return -1;
}

/* "... where ATTR = VALUE" (VALUE bare or in double quotes; null: absent) off the end
 * of ig's subject into its where_* fields.  Returns 0, or SF_E_USAGE with err set. */
static int split_where(struct inflect_gate *ig, struct sf_err *err)
{
    char *w = strstr(ig->g.subject, " where "), *p, *a, *e;
    size_t n;

    if (w == NULL)
        return 0;
    err->col = (uint32_t)(w - ig->g.subject) + 2;
    p = w + 7;
    while (*p == ' ')
        p++;
    for (a = p; *p && *p != ' ' && *p != '='; p++)
        ;
    n = (size_t)(p - a);
    while (*p == ' ')
        p++;
    if (n == 0 || n >= sizeof(ig->where_attr) || *p != '=')
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "expected 'where ATTRIBUTE = VALUE' (baggage.env = \"prod\", "
                          "header.user-agent = null, client = 10.0.0.7)");
    memcpy(ig->where_attr, a, n);
    ig->where_attr[n] = 0;
    for (p++; *p == ' '; p++)
        ;
    e = p + strlen(p);
    while (e > p && e[-1] == ' ')
        e--;
    if (e - p >= 2 && *p == '"' && e[-1] == '"') {
        p++;
        e--;
    } else if (e - p == 4 && strncmp(p, "null", 4) == 0) {
        ig->where_absent = 1;
        p = e;
    }
    if ((size_t)(e - p) >= sizeof(ig->where_value))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "a value longer than %d bytes",
                          SF_ATTR_VALUE_MAX - 1);
    memcpy(ig->where_value, p, (size_t)(e - p));
    ig->where_value[e - p] = 0;
    ig->where = 1;
    *w = 0;
    return 0;
}

/* Split a --db gate's subject into GROUP/METRIC (the last '/' before a metric
 * name) and check its unit; a --series gate names a column of any unit. */
static int finish_gate(const struct inflect_ctx *ctx, struct inflect_gate *ig, struct sf_err *err)
{
    const char *s = ig->g.subject, *slash = strrchr(s, '/');
    int m;

    sf_err_clear(err);
    err->col = 1;
    if (ig->g.op == SF_GATE_NONE) {
        if (strcmp(s, "drift") == 0 && ctx->db_path)
            return 0;
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "%s",
                          strcmp(s, "drift") == 0
                              ? "drift needs --db"
                              : "expected a comparison (the one predicate is 'drift', with --db)");
    }
    if (split_where(ig, err) < 0)
        return SF_E_USAGE;
    if (ig->where && (!ctx->db_path || ctx->ch.url))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "'where' needs --db");
    if (!ctx->db_path) {
        snprintf(ig->metric, sizeof(ig->metric), "%s", s);
        return 0;
    }
    if ((m = metric_by_name(s)) < 0 && slash && slash > s && (m = metric_by_name(slash + 1)) >= 0)
        snprintf(ig->group, sizeof(ig->group), "%.*s", (int)(slash - s), s);
    if (m < 0)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "unknown metric (count, throughput, p50, p95, p99, max, error_rate, "
                          "sampled_share, amplification; GROUP/METRIC for one group)");
    snprintf(ig->metric, sizeof(ig->metric), "%s", sf_spans_metric_name((enum sf_span_metric)m));
    if (ig->where && (m != SF_M_SAMPLED_SHARE || ig->g.mode != SF_GATE_LEVEL))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "'where' takes the level of sampled_share (kept_share) only: "
                          "'sampled_share where baggage.env = \"prod\" < 10pt'");
    err->col = 1;
    return sf_gate_check(&ig->g, metric_kind[m], err);
}

int run_gates_prepare(struct inflect_ctx *ctx)
{
    struct sf_err err;
    char msg[700];

    for (int i = 0; i < ctx->ngates; i++) {
        if (finish_gate(ctx, &ctx->gates[i], &err) == 0)
            continue;
        sf_gate_errfmt("inflect", ctx->gates[i].g.text, &err, msg, sizeof(msg));
        fprintf(stderr, "%s\nTry 'inflect --help'.\n", msg);
        return SF_EXIT_USAGE;
    }
    return 0;
}

/* The segment levels of the default detector: the first segment's, then each
 * change point's after.  Returns the number written to lv (at most cap). */
static size_t segment_levels(const struct inflect_result *r, double *lv, size_t cap)
{
    size_t n = r->s->n, k = 0;
    double first = 0;

    if (n == 0 || cap == 0)
        return 0;
    if (r->npts == 0) {
        for (size_t i = 0; i < n; i++)
            first += r->s->v[i];
        first /= (double)n;
    } else {
        first = r->pts[0].before;
    }
    lv[k++] = first;
    for (size_t i = 0; i < r->npts && k < cap; i++)
        lv[k++] = r->pts[i].after;
    return k;
}

/* A level gate on one series: the first segment that crosses it. */
static int level_crossed(const struct inflect_gate *ig, const struct inflect_result *r,
                         char *detail, size_t dsz)
{
    double lv[INFLECT_MAX_CPS + 1];
    size_t nl = segment_levels(r, lv, sizeof(lv) / sizeof(lv[0]));
    struct sf_gate_res gr;
    char stat[160];

    for (size_t k = 0; k < nl; k++) {
        struct sf_gate_obs o = {0, lv[k], 0, 0};
        if (sf_gate_eval(&ig->g, &o, 0, &gr) != SF_GATE_FAIL)
            continue;
        sf_gate_format(&ig->g, &gr, stat, sizeof(stat));
        snprintf(detail, dsz, "%s: a segment's level is %s", r->s->name, stat);
        return 1;
    }
    return 0;
}

/* A change gate on one series: the first step or ramp that crosses it.  A spike
 * recovers by itself, so only steps and ramps count as regressions. */
static int change_crossed(const struct inflect_gate *ig, const struct inflect_result *r,
                          char *detail, size_t dsz)
{
    struct sf_gate_res gr;
    char stat[160];

    for (size_t k = 0; k < r->npts; k++) {
        const struct cp_point *p = &r->pts[k];
        struct sf_gate_obs o = {p->before, p->after, 0, 0};
        if (p->kind == CP_SPIKE || sf_gate_eval(&ig->g, &o, 0, &gr) != SF_GATE_FAIL)
            continue;
        sf_gate_format(&ig->g, &gr, stat, sizeof(stat));
        snprintf(detail, dsz, "%s: %s at index %zu: %s (%.6g -> %.6g)", r->s->name,
                 cp_kind_name(p->kind), r->s->row[p->index], stat, p->before, p->after);
        return 1;
    }
    return 0;
}

static enum sf_gate_verdict drift_gate(const struct run_facts *f, char *detail, size_t dsz)
{
    if (f->nspans == 0) {
        snprintf(detail, dsz, "no spans in %s: nothing to test for drift", f->input);
        return SF_GATE_ERROR;
    }
    if (!f->drift_tested) {
        snprintf(detail, dsz,
                 "no configured sampling rate to test against: give --expect-rate "
                 "R (and --tiers K), or record ot=th in tracestate");
        return SF_GATE_ERROR;
    }
    snprintf(detail, dsz,
             f->drift_alarm ? "sampling rate drifted from its configuration"
                            : "no sampling drift alarm");
    return f->drift_alarm ? SF_GATE_FAIL : SF_GATE_PASS;
}

/* "sampled_share where ATTR = VALUE < X": the kept share of those traces over the run
 * (lib/sf_explain.h).  Fewer than SF_GATE_MIN_N of them cannot be judged. */
static enum sf_gate_verdict where_gate(const struct inflect_ctx *ctx, const struct inflect_gate *ig,
                                       char *detail, size_t dsz)
{
    struct sf_err err;
    struct sf_gate_res gr;
    struct sf_gate_obs o = {0, 0, 0, 0};
    uint64_t n, k;
    char stat[160], what[SF_ATTR_KEY_MAX + SF_ATTR_VALUE_MAX + 40];

    if (ig->where_absent)
        snprintf(what, sizeof(what), "without %s", ig->where_attr);
    else
        snprintf(what, sizeof(what), "with %s = \"%s\"", ig->where_attr, ig->where_value);
    if (sf_explain_share(ctx->db_path, ctx->complete_only, sf_spans_group_expr(ctx->by),
                         ig->group[0] ? ig->group : NULL, ig->where_attr,
                         ig->where_absent ? NULL : ig->where_value, &n, &k, &err) < 0) {
        snprintf(detail, dsz, "cannot read the traces %s: %s", what, err.msg);
        return SF_GATE_ERROR;
    }
    if (n < SF_GATE_MIN_N) {
        snprintf(detail, dsz, "%llu trace%s %s%s%s: too few to judge (at least %d)",
                 (unsigned long long)n, n == 1 ? "" : "s", what, ig->group[0] ? " in " : "",
                 ig->group, SF_GATE_MIN_N);
        return SF_GATE_ERROR;
    }
    o.after = (double)k / (double)n;
    o.n1 = (double)n;
    sf_gate_eval(&ig->g, &o, 0, &gr);
    sf_gate_format(&ig->g, &gr, stat, sizeof(stat));
    snprintf(detail, dsz, "the kept share of the traces %s%s%s is %s (%llu of %llu kept)", what,
             ig->group[0] ? " in " : "", ig->group, stat, (unsigned long long)k,
             (unsigned long long)n);
    return gr.verdict;
}

enum sf_gate_verdict run_gate(const struct inflect_ctx *ctx, const struct inflect_gate *ig,
                              const struct inflect_result *res, size_t nres,
                              const struct run_facts *f, char *detail, size_t dsz)
{
    size_t seen = 0, most = 0;
    const struct inflect_result *empty = NULL;

    detail[0] = 0;
    if (ig->g.op == SF_GATE_NONE)
        return drift_gate(f, detail, dsz);
    if (ig->where)
        return where_gate(ctx, ig, detail, dsz);
    if (f->is_db && f->nspans == 0) {
        snprintf(detail, dsz, "no spans in %s: an empty database passes no gate", f->input);
        return SF_GATE_ERROR;
    }
    for (size_t i = 0; i < nres; i++) {
        const struct inflect_result *r = &res[i];
        if (strcmp(r->metric, ig->metric) != 0 || (ig->group[0] && strcmp(r->group, ig->group)))
            continue;
        seen++;
        most = r->s->n > most ? r->s->n : most;
        if (r->s->n == 0 && !empty)
            empty = r;
        if (ig->g.mode == SF_GATE_LEVEL ? level_crossed(ig, r, detail, dsz)
                                        : change_crossed(ig, r, detail, dsz))
            return SF_GATE_FAIL;
    }
    if (seen == 0) {
        /* a typo must not pass silently */
        snprintf(detail, dsz, "no %s named '%s'%s",
                 ig->group[0] ? "group"
                 : f->is_db   ? "metric"
                              : "column",
                 ig->group[0] ? ig->group : ig->metric,
                 ctx->allow_missing ? " (passes: --allow-missing)"
                                    : " (--allow-missing lets it pass)");
        return ctx->allow_missing ? SF_GATE_PASS : SF_GATE_ERROR;
    }
    /* a series with no value to judge (every span partial, or none at all) must not
     * pass a level gate by having nothing above the threshold */
    if (empty && ig->g.mode == SF_GATE_LEVEL) {
        snprintf(detail, dsz, "no %s in %s (series %s)",
                 f->is_db ? "spans with a response" : "rows with a value", f->input,
                 empty->s->name);
        return SF_GATE_ERROR;
    }
    if (ig->g.mode != SF_GATE_LEVEL && most < INFLECT_GATE_MIN_OBS) {
        snprintf(detail, dsz, "a change needs at least %d %s with data; the longest series has %zu",
                 INFLECT_GATE_MIN_OBS, f->is_db ? "windows" : "rows", most);
        return SF_GATE_ERROR;
    }
    snprintf(detail, dsz, "holds");
    return SF_GATE_PASS;
}

/* --summary (appended) and --junit.  Returns 0 or -1 (printed). */
static int write_gate_reports(const struct inflect_ctx *ctx, const struct sf_gate_run *run)
{
    FILE *f;
    int rc = 0;

    if (ctx->summary) {
        if ((f = fopen(ctx->summary, "a")) == NULL || sf_gate_write_md(f, run) < 0 ||
            fclose(f) != 0) {
            fprintf(stderr, "inflect: %s: cannot append: %s\n", ctx->summary, strerror(errno));
            rc = -1;
        }
    }
    if (ctx->junit) {
        if ((f = fopen(ctx->junit, "w")) == NULL || sf_gate_write_junit(f, run) < 0 ||
            fclose(f) != 0) {
            fprintf(stderr, "inflect: %s: cannot write: %s\n", ctx->junit, strerror(errno));
            rc = -1;
        }
    }
    return rc;
}

int run_gates(const struct inflect_ctx *ctx, const struct inflect_result *res, size_t nres,
              const struct run_facts *f, struct sf_jw *w)
{
    struct sf_gate_entry e[INFLECT_MAX_GATES];
    struct sf_gate_run run = {"inflect", f->input, 0, 0, e, (size_t)ctx->ngates};
    int status;

    if (w)
        sf_jw_arr(w, "gates");
    for (int i = 0; i < ctx->ngates; i++) {
        e[i].gate = ctx->gates[i].g.text;
        e[i].verdict =
            run_gate(ctx, &ctx->gates[i], res, nres, f, e[i].detail, sizeof(e[i].detail));
        if (w) {
            sf_jw_obj(w, NULL);
            sf_jw_str(w, "gate", e[i].gate);
            sf_jw_str(w, "result", sf_gate_verdict_name(e[i].verdict));
            sf_jw_str(w, "detail", e[i].detail);
            sf_jw_end(w);
        }
    }
    if (w)
        sf_jw_end(w);
    /* printed even with --quiet: a CI log must say why the build failed */
    sf_gate_write_log(stderr, &run);
    status = sf_gate_exit(&run);
    if (ctx->ngates && write_gate_reports(ctx, &run) < 0)
        status = SF_EXIT_USAGE;
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
    struct run_facts facts = {0, 0, 0, tab.rows, ctx->series_path};
    rc = run_gates(ctx, res, tab.nseries, &facts, &w);
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
    sf_jw_int(w, "rejected", (int64_t)r->info.rejected);
    sf_jw_end(w);
}

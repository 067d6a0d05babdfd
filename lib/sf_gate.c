/* sf_gate.c - the CI gate language: parse, check units, evaluate with confidence
 * intervals, write the Markdown summary and the JUnit XML report.
 *
 * Statistics (the references, not code, are used):
 *   Wilson, E. B. (1927), "Probable inference, the law of succession, and
 *     statistical inference", JASA 22: the score interval of one share.
 *   Newcombe, R. G. (1998), "Interval estimation for the difference between
 *     independent proportions: comparison of eleven methods", Statistics in
 *     Medicine 17, method 10 (hybrid score): the difference p1 - p0 gets
 *       L = d - sqrt((p1 - l1)^2 + (u0 - p0)^2),  U = d + sqrt((u1 - p1)^2 + (p0 - l0)^2)
 *     from the Wilson intervals (l0, u0) and (l1, u1) of the two shares.
 */
#include "sf_gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sf_text.h"

/* ---- parsing ---------------------------------------------------------------- */

static const struct {
    const char *name;
    enum sf_gate_unit unit;
    double scale; /* to the base unit */
} units[] = {
    {"pt", SF_GATE_U_PT, 0.01},        {"%pt", SF_GATE_U_PT, 0.01}, {"%", SF_GATE_U_PCT, 0.01},
    {"ms", SF_GATE_U_MS, 1},           {"us", SF_GATE_U_MS, 0.001}, {"s", SF_GATE_U_MS, 1000},
    {"samples", SF_GATE_U_SAMPLES, 1}, {"", SF_GATE_U_NONE, 1},
};

/* The operator: the last '<' or '>' (a frame name may hold "<int>"), *oplen 1 or 2. */
static const char *find_op(const char *s, size_t *oplen)
{
    const char *op = NULL;

    for (const char *p = s; *p; p++)
        if (*p == '<' || *p == '>')
            op = p;
    *oplen = op && op[1] == '=' ? 2 : 1;
    return op;
}

static int parse_value(struct sf_gate *g, const char *text, const char *v, const char *opname,
                       struct sf_err *err)
{
    const char *p = v, *unit;
    char num[64], *end;
    int sign = 0;
    double x;

    if (*p == '+' || *p == '-')
        sign = 1, p++;
    unit = p + strspn(p, "0123456789.");
    if (strspn(p, "0123456789") == 0 && !(p[0] == '.' && p[1] >= '0' && p[1] <= '9')) {
        err->col = (uint32_t)(p - text) + 1;
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "expected a number after '%s'", opname);
    }
    if ((size_t)(unit - v) >= sizeof(num)) {
        err->col = (uint32_t)(v - text) + 1;
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "number too long");
    }
    memcpy(num, v, (size_t)(unit - v));
    num[unit - v] = 0;
    x = strtod(num, &end);
    if (*end != 0 || !isfinite(x)) {
        err->col = (uint32_t)(v - text) + 1;
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "bad number '%s'", num);
    }
    g->unit_col = (size_t)(unit - text) + 1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(unit, units[i].name) != 0)
            continue;
        g->unit = units[i].unit;
        g->value = x * units[i].scale;
        g->mode = g->unit == SF_GATE_U_PCT ? SF_GATE_RELATIVE
                  : sign                   ? SF_GATE_CHANGE
                                           : SF_GATE_LEVEL;
        return 0;
    }
    err->col = (uint32_t)g->unit_col;
    return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                      "unknown unit '%.32s' (pt, %%, ms, us, s, samples or none)", unit);
}

int sf_gate_parse(struct sf_gate *g, const char *text, struct sf_err *err)
{
    size_t len = strlen(text), sl, oplen;
    const char *op;

    memset(g, 0, sizeof(*g));
    sf_err_clear(err);
    err->unit = "gate";
    if (len == 0 || len >= sizeof(g->text)) {
        err->col = len ? (uint32_t)sizeof(g->text) : 1;
        return len ? sf_err_set(err, SF_E_USAGE, UINT64_MAX, "gate longer than %zu bytes",
                                sizeof(g->text) - 1)
                   : sf_err_set(err, SF_E_USAGE, UINT64_MAX, "empty gate");
    }
    memcpy(g->text, text, len + 1);
    op = find_op(text, &oplen);
    if (op == NULL) { /* a bare predicate such as "drift"; the tool says which exist */
        memcpy(g->subject, text, len + 1);
        g->op = SF_GATE_NONE;
        g->unit_col = len + 1;
        return 0;
    }
    if ((sl = (size_t)(op - text)) == 0) {
        err->col = 1;
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "expected a metric or frame before '%c'",
                          *op);
    }
    while (sl > 1 && text[sl - 1] == ' ') /* "p99 > 250ms" reads as "p99>250ms" */
        sl--;
    memcpy(g->subject, text, sl);
    g->subject[sl] = 0;
    g->op = *op == '>' ? (oplen == 2 ? SF_GATE_GE : SF_GATE_GT)
                       : (oplen == 2 ? SF_GATE_LE : SF_GATE_LT);
    while (op[oplen] == ' ')
        op++;
    return parse_value(g, text, op + oplen,
                       oplen == 2 ? (*op == '>' ? ">=" : "<=") : (*op == '>' ? ">" : "<"), err);
}

void sf_gate_errfmt(const char *tool, const char *text, const struct sf_err *err, char *out,
                    size_t n)
{
    if (err->col)
        snprintf(out, n, "%s: gate '%s': column %u: %s", tool, text, err->col, err->msg);
    else
        snprintf(out, n, "%s: gate '%s': %s", tool, text, err->msg);
}

int sf_gate_check(const struct sf_gate *g, enum sf_gate_kind kind, struct sf_err *err)
{
    static const char *const takes[] = {
        [SF_GATE_K_SHARE] = "pt or %",
        [SF_GATE_K_MS] = "ms, us, s, % or a number of ms",
        [SF_GATE_K_COUNT] = "samples, % or a number",
        [SF_GATE_K_NUMBER] = "% or a number",
        [SF_GATE_K_ANY] = "any unit",
    };
    int ok;

    if (g->op == SF_GATE_NONE || kind == SF_GATE_K_ANY || g->unit == SF_GATE_U_PCT)
        return 0;
    switch (kind) {
    case SF_GATE_K_SHARE:
        ok = g->unit == SF_GATE_U_PT;
        break;
    case SF_GATE_K_MS:
        ok = g->unit == SF_GATE_U_MS || g->unit == SF_GATE_U_NONE;
        break;
    case SF_GATE_K_COUNT:
        ok = g->unit == SF_GATE_U_SAMPLES || g->unit == SF_GATE_U_NONE;
        break;
    default:
        ok = g->unit == SF_GATE_U_NONE;
        break;
    }
    if (ok)
        return 0;
    sf_err_clear(err);
    err->unit = "gate";
    err->col = (uint32_t)g->unit_col;
    return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "'%.64s' takes %s", g->subject, takes[kind]);
}

/* ---- statistics ------------------------------------------------------------------ */

double sf_gate_z(double c)
{
    /* the upper quantile of p = (1 - c) / 2: Abramowitz & Stegun 26.2.23 (error below
     * 4.5e-4), then Newton steps on 0.5 erfc(z / sqrt 2) = p, each squaring the error;
     * cheap enough to run once per observed frame */
    double p = (1 - c) / 2, t, z;

    if (!(c > 0) || !(c < 1))
        return NAN;
    t = sqrt(-2 * log(p));
    z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    for (int i = 0; i < 3; i++) {
        double phi = exp(-z * z / 2) / sqrt(2 * M_PI);
        if (!(phi > 0))
            break;
        z += (0.5 * erfc(z / sqrt(2.0)) - p) / phi;
    }
    return z;
}

void sf_gate_wilson(double p, double n, double z, double *lo, double *hi)
{
    double z2 = z * z, den = 1 + z2 / n;
    double mid = (p + z2 / (2 * n)) / den;
    double half = z / den * sqrt(p * (1 - p) / n + z2 / (4 * n * n));

    *lo = mid - half < 0 ? 0 : mid - half;
    *hi = mid + half > 1 ? 1 : mid + half;
}

void sf_gate_newcombe(double p0, double n0, double p1, double n1, double z, double *lo, double *hi)
{
    double l0, u0, l1, u1, d = p1 - p0;

    sf_gate_wilson(p0, n0, z, &l0, &u0);
    sf_gate_wilson(p1, n1, z, &l1, &u1);
    *lo = d - sqrt((p1 - l1) * (p1 - l1) + (u0 - p0) * (u0 - p0));
    *hi = d + sqrt((u1 - p1) * (u1 - p1) + (p0 - l0) * (p0 - l0));
}

static int crossed(const struct sf_gate *g, double x)
{
    switch (g->op) {
    case SF_GATE_GT:
        return x > g->value;
    case SF_GATE_GE:
        return x >= g->value;
    case SF_GATE_LT:
        return x < g->value;
    case SF_GATE_LE:
        return x <= g->value;
    default:
        return 0;
    }
}

static double statistic(const struct sf_gate *g, const struct sf_gate_obs *o)
{
    if (g->mode == SF_GATE_LEVEL)
        return o->after;
    if (g->mode == SF_GATE_CHANGE)
        return o->after - o->before;
    if (o->before != 0)
        return (o->after - o->before) / fabs(o->before);
    /* from nothing: any rise (fall) is unbounded */
    return o->after > 0 ? INFINITY : o->after < 0 ? -INFINITY : 0;
}

/* The interval of the statistic for shares counted from samples. */
static void interval(const struct sf_gate *g, const struct sf_gate_obs *o, double z,
                     struct sf_gate_res *r)
{
    double lo, hi;

    if (g->mode == SF_GATE_LEVEL) {
        sf_gate_wilson(o->after, o->n1, z, &lo, &hi);
    } else {
        sf_gate_newcombe(o->before, o->n0, o->after, o->n1, z, &lo, &hi);
        if (g->mode == SF_GATE_RELATIVE) {
            if (o->before <= 0)
                return; /* no interval for a ratio over nothing */
            lo /= o->before;
            hi /= o->before;
        }
    }
    r->lo = lo;
    r->hi = hi;
    r->has_ci = 1;
}

enum sf_gate_verdict sf_gate_eval(const struct sf_gate *g, const struct sf_gate_obs *o,
                                  double confidence, struct sf_gate_res *r)
{
    int counted = o->n0 > 0 || o->n1 > 0;

    memset(r, 0, sizeof(*r));
    r->est = statistic(g, o);
    r->confidence = confidence > 0 ? confidence : 0.95;
    if (counted && o->n0 >= SF_GATE_MIN_N && o->n1 >= SF_GATE_MIN_N)
        interval(g, o, sf_gate_z(r->confidence), r);
    else if (counted && confidence > 0)
        return r->verdict = SF_GATE_ERROR; /* the caller says: too few samples */
    if (!crossed(g, r->est))
        r->verdict = SF_GATE_PASS;
    else if (confidence <= 0 || !r->has_ci)
        r->verdict = SF_GATE_FAIL;
    else /* significant only when the whole interval is past the threshold */
        r->verdict = crossed(g, g->op == SF_GATE_GT || g->op == SF_GATE_GE ? r->lo : r->hi)
                         ? SF_GATE_FAIL
                         : SF_GATE_INCONCLUSIVE;
    return r->verdict;
}

enum sf_gate_verdict sf_gate_worse(enum sf_gate_verdict a, enum sf_gate_verdict b)
{
    return a > b ? a : b;
}

const char *sf_gate_verdict_name(enum sf_gate_verdict v)
{
    static const char *const names[] = {"pass", "inconclusive", "fail", "error"};
    return (unsigned)v < 4 ? names[v] : "error";
}

/* A value of the base unit in the gate's unit, with its unit's name. */
static double in_unit(const struct sf_gate *g, double x, const char **u)
{
    switch (g->mode == SF_GATE_RELATIVE ? SF_GATE_U_PCT : g->unit) {
    case SF_GATE_U_PT:
        *u = " pt";
        return x * 100;
    case SF_GATE_U_PCT:
        *u = " %";
        return x * 100;
    case SF_GATE_U_MS:
        *u = " ms";
        return x;
    case SF_GATE_U_SAMPLES:
        *u = " samples";
        return x;
    default:
        *u = "";
        return x;
    }
}

void sf_gate_format(const struct sf_gate *g, const struct sf_gate_res *r, char *out, size_t n)
{
    const char *u;
    double v = in_unit(g, r->est, &u);
    int k = snprintf(out, n, g->mode == SF_GATE_LEVEL ? "%.4g%s" : "%+.4g%s", v, u);

    if (r->has_ci && k >= 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, " [%.4g, %.4g] at %.4g %% confidence",
                 in_unit(g, r->lo, &u), in_unit(g, r->hi, &u), r->confidence * 100);
}

/* ---- the run: exit status and reports ------------------------------------------- */

int sf_gate_exit(const struct sf_gate_run *run)
{
    int st = SF_EXIT_OK;

    for (size_t i = 0; i < run->n; i++) {
        enum sf_gate_verdict v = run->e[i].verdict;
        if (v == SF_GATE_ERROR)
            return SF_EXIT_USAGE;
        if (v == SF_GATE_FAIL || (v == SF_GATE_INCONCLUSIVE && run->inconclusive_fails))
            st = SF_EXIT_FINDINGS;
    }
    return st;
}

int sf_gate_write_log(FILE *f, const struct sf_gate_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        const struct sf_gate_entry *e = &run->e[i];
        const char *what = e->verdict == SF_GATE_FAIL    ? "failed"
                           : e->verdict == SF_GATE_ERROR ? "cannot be evaluated"
                           : e->verdict == SF_GATE_INCONCLUSIVE
                               ? (run->inconclusive_fails ? "inconclusive, counted as failed"
                                                          : "inconclusive, counted as passed")
                               : NULL;
        if (what == NULL)
            continue;
        /* a terminal must not run escape sequences from captured names */
        char gate[3 * SF_GATE_TEXT_MAX], detail[3 * SF_GATE_DETAIL_MAX];
        sf_text_label(gate, sizeof(gate), e->gate, strlen(e->gate));
        sf_text_label(detail, sizeof(detail), e->detail, strlen(e->detail));
        fprintf(f, "%s: gate '%s' %s: %s\n", run->tool, gate, what, detail);
    }
    return ferror(f) ? SF_E_IO : 0;
}

static const char *md_verdict(const struct sf_gate_run *run, enum sf_gate_verdict v)
{
    switch (v) {
    case SF_GATE_PASS:
        return "pass";
    case SF_GATE_FAIL:
        return "**FAIL**";
    case SF_GATE_INCONCLUSIVE:
        return run->inconclusive_fails ? "**inconclusive (fails)**" : "inconclusive (passes)";
    default:
        return "**ERROR**";
    }
}

int sf_gate_write_md(FILE *f, const struct sf_gate_run *run)
{
    fprintf(f, "\n### Gates: %s, ", run->tool);
    sf_text_md_code(f, run->subject ? run->subject : "", run->subject ? strlen(run->subject) : 0,
                    0);
    if (run->confidence > 0)
        fprintf(f, " (confidence %.4g %%)", run->confidence * 100);
    fprintf(f, "\n\n| gate | verdict | measured |\n|---|---|---|\n");
    for (size_t i = 0; i < run->n; i++) {
        fputs("| ", f);
        sf_text_md_code(f, run->e[i].gate, strlen(run->e[i].gate), SF_TEXT_CELL);
        fprintf(f, " | %s | ", md_verdict(run, run->e[i].verdict));
        sf_text_md(f, run->e[i].detail, strlen(run->e[i].detail), SF_TEXT_CELL);
        fputs(" |\n", f);
    }
    fprintf(f, "\nExit status %d (0 ok, 1 a gate failed, 2 a gate could not be evaluated).\n",
            sf_gate_exit(run));
    return ferror(f) ? SF_E_IO : 0;
}

int sf_gate_write_junit(FILE *f, const struct sf_gate_run *run)
{
    size_t fails = 0, errs = 0;

    for (size_t i = 0; i < run->n; i++) {
        enum sf_gate_verdict v = run->e[i].verdict;
        errs += v == SF_GATE_ERROR;
        fails += v == SF_GATE_FAIL || (v == SF_GATE_INCONCLUSIVE && run->inconclusive_fails);
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%zu\" "
            "failures=\"%zu\" errors=\"%zu\">\n  <testsuite name=\"",
            run->n, fails, errs);
    sf_text_xml(f, run->tool, strlen(run->tool));
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\">\n", run->n, fails,
            errs);
    for (size_t i = 0; i < run->n; i++) {
        const struct sf_gate_entry *e = &run->e[i];
        int failed = e->verdict == SF_GATE_FAIL ||
                     (e->verdict == SF_GATE_INCONCLUSIVE && run->inconclusive_fails);
        const char *tag = e->verdict == SF_GATE_ERROR ? "error" : failed ? "failure" : NULL;
        fputs("    <testcase classname=\"", f);
        sf_text_xml(f, run->tool, strlen(run->tool));
        fputs("\" name=\"", f);
        sf_text_xml(f, e->gate, strlen(e->gate));
        fputs("\">\n", f);
        if (tag) {
            fprintf(f, "      <%s message=\"%s\">", tag, sf_gate_verdict_name(e->verdict));
            sf_text_xml(f, e->detail, strlen(e->detail));
            fprintf(f, "</%s>\n", tag);
        }
        fputs("      <system-out>", f);
        fprintf(f, "%s: ", sf_gate_verdict_name(e->verdict));
        sf_text_xml(f, e->detail, strlen(e->detail));
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? SF_E_IO : 0;
}

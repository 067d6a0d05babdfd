/* json.c - streaming JSON writer (RFC 8259) for the inflect summary. */
#include "json.h"

#include <math.h>
#include <string.h>

#include "inflect.h"
#include "sf_json.h"

void json_init(struct json_w *w, FILE *f)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
}

static void indent(struct json_w *w)
{
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
}

/* Quoted, escaped string: lib/sf_json, the one escaper every tool shares. */
static void put_str(FILE *f, const char *s)
{
    sf_json_str(f, s, strlen(s));
}

/* Separator, indentation and key before a value. */
static void member(struct json_w *w, const char *key)
{
    if (w->depth > 0) {
        if (w->count[w->depth]++)
            fputs(w->inl[w->depth] ? ", " : ",", w->f);
        if (!w->inl[w->depth])
            indent(w);
    }
    if (key) {
        put_str(w->f, key);
        fputs(": ", w->f);
    }
}

static void open_(struct json_w *w, const char *key, char c, int inl)
{
    member(w, key);
    fputc(c, w->f);
    if (w->depth + 1 < JSON_MAX_DEPTH) {
        w->depth++;
        w->count[w->depth] = 0;
        w->close[w->depth] = c == '{' ? '}' : ']';
        w->inl[w->depth] = inl || (w->depth > 1 && w->inl[w->depth - 1]);
    }
}

void json_obj(struct json_w *w, const char *key)
{
    open_(w, key, '{', 0);
}

void json_arr(struct json_w *w, const char *key, int inline_)
{
    open_(w, key, '[', inline_);
}

void json_end(struct json_w *w)
{
    int had = w->count[w->depth], inl = w->inl[w->depth];
    char c = w->close[w->depth];

    if (w->depth == 0)
        return;
    w->depth--;
    if (had && !inl)
        indent(w);
    fputc(c, w->f);
}

void json_num(struct json_w *w, const char *key, double v)
{
    member(w, key);
    if (isfinite(v)) {
        char buf[40];
        snprintf(buf, sizeof(buf), "%.10g", v);
        if (strcmp(buf, "-0") == 0)
            buf[0] = '0', buf[1] = 0;
        fputs(buf, w->f);
    } else {
        fputs("null", w->f);
    }
}

void json_int(struct json_w *w, const char *key, long long v)
{
    member(w, key);
    fprintf(w->f, "%lld", v);
}

void json_str(struct json_w *w, const char *key, const char *s)
{
    member(w, key);
    if (s)
        put_str(w->f, s);
    else
        fputs("null", w->f);
}

void json_bool(struct json_w *w, const char *key, int v)
{
    member(w, key);
    fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_w *w, const char *key)
{
    member(w, key);
    fputs("null", w->f);
}

int json_finish(struct json_w *w)
{
    fputc('\n', w->f);
    return ferror(w->f) ? -1 : 0;
}

/* ---- the summary of one series ---------------------------------------------------- */

/* "time" of observation i: its ISO text when the input had one, else the number. */
static void json_time(struct json_w *w, const struct inflect_series *s, size_t i)
{
    if (s->tlabel && s->tlabel[i])
        json_str(w, "time", s->tlabel[i]);
    else
        json_num(w, "time", s->t[i]);
}

void inflect_json_series(struct json_w *w, const struct inflect_ctx *ctx,
                         const struct inflect_result *r)
{
    const struct inflect_series *s = r->s;

    json_str(w, "name", s->name);
    if (r->group[0]) {
        json_str(w, "group", r->group);
        json_str(w, "metric", r->metric);
    }
    json_int(w, "n", (long long)s->n);
    json_str(w, "detector", cp_detector_name((enum cp_detector)ctx->detector));
    json_arr(w, "change_points", 0);
    for (size_t k = 0; k < r->npts; k++) {
        const struct cp_point *p = &r->pts[k];
        json_obj(w, NULL);
        json_int(w, "index", (long long)s->row[p->index]);
        json_time(w, s, p->index);
        if (p->kind == CP_RAMP && p->end != p->index)
            json_int(w, "end", (long long)s->row[p->end < s->n ? p->end : s->n - 1]);
        json_num(w, "before", p->before);
        json_num(w, "after", p->after);
        json_num(w, "change", p->change);
        json_str(w, "kind", cp_kind_name(p->kind));
        json_str(w, "role", p->role);
        json_str(w, "detector", cp_detector_name((enum cp_detector)ctx->detector));
        json_end(w);
    }
    json_end(w);
    json_obj(w, "by_detector");
    for (int d = 0; d < CP_NDETECTORS; d++) {
        json_arr(w, cp_detector_name((enum cp_detector)d), 1);
        for (size_t k = 0; k < r->nby[d]; k++)
            json_int(w, NULL, (long long)s->row[r->by[d][k]]);
        json_end(w);
    }
    json_end(w);
    json_obj(w, "model");
    json_num(w, "sigma2", r->info.sigma2);
    json_num(w, "rho", r->info.rho);
    json_num(w, "penalty", r->info.penalty);
    json_int(w, "iterations", r->info.iterations);
    json_end(w);
}

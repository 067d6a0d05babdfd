/* speedscope.c - speedscope file format (jlfwong/speedscope file-format-spec.ts):
 * one "sampled" profile per span group (a span, and "unattributed" for samples
 * outside every span), so the viewer's profile switcher moves between per-request
 * flame graphs.  Frames are shared across profiles; stacks are frame indices root
 * first; weights are the sample periods (nanoseconds for cpu-clock/task-clock,
 * else event counts with unit "none").
 *
 * Samples arrive grouped by span, so one profile is written at a time; JSON key
 * order is free, so "shared.frames" comes after "profiles", when every frame is
 * known.  Memory: distinct frames plus one profile's weights.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sf_json.h"
#include "strmap.h"

struct group {
    char span[17];
    int open;
    int ns_unit;
    int64_t *weights;
    size_t n, cap;
    int64_t t0, t1;
};

static void profile_name(struct ex_ctx *c, const char *span, char *out, size_t n)
{
    sqlite3_stmt *st;
    const char *m = NULL, *p = NULL, *gs = NULL, *gm = NULL;

    if (span[0] == 0) {
        snprintf(out, n, "unattributed (outside every span)");
        return;
    }
    snprintf(out, n, "span %s", span);
    if (sqlite3_prepare_v2(
            sf_db_handle(c->db),
            "SELECT method, path, grpc_service, grpc_method FROM spans WHERE span_id = ?1 LIMIT 1",
            -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, span, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        m = (const char *)sqlite3_column_text(st, 0);
        p = (const char *)sqlite3_column_text(st, 1);
        gs = (const char *)sqlite3_column_text(st, 2);
        gm = (const char *)sqlite3_column_text(st, 3);
        if (gs && gm)
            snprintf(out, n, "span %s %s/%s", span, gs, gm);
        else
            snprintf(out, n, "span %s %s %s", span, m ? m : "", p ? p : "");
    }
    sqlite3_finalize(st);
}

static void close_group(struct ex_ctx *c, struct sf_jw *w, struct group *g)
{
    char name[600];
    int64_t total = 0;

    if (!g->open)
        return;
    sf_jw_end(w); /* samples */
    sf_jw_arr(w, "weights");
    for (size_t i = 0; i < g->n; i++) {
        sf_jw_int(w, NULL, g->weights[i]);
        total += g->weights[i];
    }
    sf_jw_end(w);
    profile_name(c, g->span, name, sizeof(name));
    sf_jw_str(w, "type", "sampled");
    sf_jw_str(w, "name", name);
    sf_jw_str(w, "unit", g->ns_unit ? "nanoseconds" : "none");
    sf_jw_int(w, "startValue", 0);
    sf_jw_int(w, "endValue", total);
    sf_jw_end(w); /* profile */
    g->open = 0;
    g->n = 0;
}

static int add_sample(struct sf_jw *w, struct strmap *frames, struct group *g,
                      const struct ex_sample *s)
{
    const char *f = s->frames ? s->frames : "";

    sf_jw_arr(w, NULL);
    while (*f) {
        const char *e = strchr(f, ';');
        size_t len = e ? (size_t)(e - f) : strlen(f);
        long idx = strmap_intern(frames, f, len);
        if (idx < 0)
            return -1;
        sf_jw_int(w, NULL, idx);
        f += len + (e != NULL);
    }
    sf_jw_end(w);
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 1024;
        int64_t *p = realloc(g->weights, nc * sizeof(*p));
        if (p == NULL)
            return -1;
        g->weights = p;
        g->cap = nc;
    }
    g->weights[g->n++] = s->period > 0 ? s->period : 1;
    return 0;
}

int speedscope_write(struct ex_ctx *c)
{
    struct ex_sample_iter *it;
    struct ex_sample s;
    struct strmap frames = {0};
    struct group g = {0};
    struct sf_jw w;
    int rc;

    c->samples_by_span = 1;
    it = ex_sample_iter_new(c);
    if (it == NULL)
        return 2;
    sf_jw_init(&w, c->out);
    sf_jw_obj(&w, NULL);
    sf_jw_str(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
    sf_jw_str(&w, "exporter", "spanfold-export");
    sf_jw_str(&w, "name", c->db_path);
    sf_jw_int(&w, "activeProfileIndex", 0);
    sf_jw_arr(&w, "profiles");
    while ((rc = ex_sample_next(it, &s)) == 1) {
        const char *span = s.span_id ? s.span_id : "";
        if (!g.open || strcmp(g.span, span) != 0) {
            close_group(c, &w, &g);
            snprintf(g.span, sizeof(g.span), "%s", span);
            g.ns_unit = s.event && (strncmp(s.event, "cpu-clock", 9) == 0 ||
                                    strncmp(s.event, "task-clock", 10) == 0);
            g.open = 1;
            sf_jw_obj(&w, NULL);
            sf_jw_arr(&w, "samples");
        }
        if (add_sample(&w, &frames, &g, &s)) {
            rc = -1;
            break;
        }
        c->samples++;
    }
    close_group(c, &w, &g);
    sf_jw_end(&w); /* profiles */
    sf_jw_obj(&w, "shared");
    sf_jw_arr(&w, "frames");
    for (size_t i = 0; i < frames.n; i++) {
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "name", frames.keys[i]);
        sf_jw_end(&w);
    }
    sf_jw_end(&w);
    sf_jw_end(&w);
    sf_jw_end(&w);
    fputc('\n', c->out);
    ex_sample_iter_free(it);
    strmap_free(&frames);
    free(g.weights);
    return rc < 0 ? 2 : 0;
}

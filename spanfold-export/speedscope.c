/* speedscope.c - speedscope file format (lib/sf_speedscope.h writes it):
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
#include "sf_speedscope.h"
#include "strmap.h"

struct group {
    char span[17];
    int open;
    int ns_unit;
    int64_t *weights;
    size_t n, cap;
    uint32_t *stack; /* the sample being written, as frame indices */
    size_t stack_cap;
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
    sf_ss_weights(w);
    for (size_t i = 0; i < g->n; i++) {
        sf_jw_int(w, NULL, g->weights[i]);
        total += g->weights[i];
    }
    profile_name(c, g->span, name, sizeof(name));
    sf_ss_profile_end(w, name, g->ns_unit ? "nanoseconds" : "none", (double)total);
    g->open = 0;
    g->n = 0;
}

/* Double the array *p of *cap elements of size elem (64 the first time): 0 or -1. */
static int grow(void **p, size_t *cap, size_t elem)
{
    size_t nc = *cap ? 2 * *cap : 64;
    void *q = realloc(*p, nc * elem);

    if (q == NULL)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int add_sample(struct sf_jw *w, struct strmap *frames, struct group *g,
                      const struct ex_sample *s)
{
    const char *f = s->frames ? s->frames : "";
    size_t depth = 0;

    while (*f) {
        const char *e = strchr(f, ';');
        size_t len = e ? (size_t)(e - f) : strlen(f);
        long idx = strmap_intern(frames, f, len);
        if (idx < 0)
            return -1;
        if (depth == g->stack_cap && grow((void **)&g->stack, &g->stack_cap, sizeof(*g->stack)))
            return -1;
        g->stack[depth++] = (uint32_t)idx;
        f += len + (e != NULL);
    }
    sf_ss_sample(w, g->stack, depth);
    if (g->n == g->cap && grow((void **)&g->weights, &g->cap, sizeof(*g->weights)))
        return -1;
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
    sf_ss_begin(&w, c->db_path, "spanfold-export");
    while ((rc = ex_sample_next(it, &s)) == 1) {
        const char *span = s.span_id ? s.span_id : "";
        if (!g.open || strcmp(g.span, span) != 0) {
            close_group(c, &w, &g);
            snprintf(g.span, sizeof(g.span), "%s", span);
            g.ns_unit = s.event && (strncmp(s.event, "cpu-clock", 9) == 0 ||
                                    strncmp(s.event, "task-clock", 10) == 0);
            g.open = 1;
            sf_ss_profile(&w);
        }
        if (add_sample(&w, &frames, &g, &s)) {
            rc = -1;
            break;
        }
        c->samples++;
    }
    close_group(c, &w, &g);
    sf_ss_frames(&w);
    for (size_t i = 0; i < frames.n; i++)
        sf_ss_frame(&w, frames.keys[i], strlen(frames.keys[i]));
    if (sf_ss_end(&w) < 0 && rc >= 0)
        rc = -1;
    ex_sample_iter_free(it);
    strmap_free(&frames);
    free(g.weights);
    free(g.stack);
    return rc < 0 ? 2 : 0;
}

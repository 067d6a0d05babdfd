/* json.c - the merged frames as JSON for the viewers people already use, through
 * lib's one JSON writer (sf_jw).
 *
 * d3-flame-graph (spiermar/d3-flame-graph) reads a hierarchy
 *   {"name":"all","value":300,"children":[{"name":"main","value":200,"children":[...]}]}
 * where value includes the children; differential input adds "delta" (second - first).
 * speedscope's format is lib/sf_speedscope.h's (spanfold-export writes it too): one
 * sampled profile with one sample per frame that has time of its own (stack root ->
 * leaf, frame indices), the frames shared.
 */
#include <stdlib.h>
#include <string.h>

#include "fg.h"
#include "sf_json.h"
#include "sf_speedscope.h"

/* flamegraph's numbers have always had 15 significant digits: 0.1 * 3 is 0.3 */
#define FG_JSON_PREC 15

static void init_writer(struct sf_jw *w, FILE *f)
{
    sf_jw_init(w, f);
    w->num_prec = FG_JSON_PREC;
}

int json_write_d3(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n)
{
    struct sf_jw w;
    size_t open = 0; /* objects whose children array is open */

    init_writer(&w, ctx->out);
    for (size_t i = 0; i < n; i++) {
        const struct fg_frame *fr = &frames[i];
        size_t len;
        const char *name = names_get(&ctx->lay.names, fr->name, &len);
        while (open > fr->depth) {
            sf_jw_end(&w); /* children */
            sf_jw_end(&w); /* the frame */
            open--;
        }
        if (open < fr->depth)
            continue; /* an orphan (its parent was elided): cannot happen in order */
        sf_jw_obj(&w, NULL);
        if (fr->depth == 0 && len == 0)
            sf_jw_str(&w, "name", "all");
        else
            sf_jw_strn(&w, "name", name, len);
        sf_jw_num(&w, "value", (fr->etime - fr->stime) * ctx->opt.factor);
        if (fr->has_delta)
            sf_jw_num(&w, "delta", ctx->opt.negate ? -fr->delta : fr->delta);
        sf_jw_arr(&w, "children");
        open++;
    }
    while (open > 0) {
        sf_jw_end(&w);
        sf_jw_end(&w);
        open--;
    }
    if (n == 0) {
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "name", "all");
        sf_jw_int(&w, "value", 0);
        sf_jw_arr(&w, "children");
        sf_jw_end(&w);
        sf_jw_end(&w);
    }
    return sf_jw_finish(&w) < 0 ? SF_E_IO : 0;
}

/* Self time of each frame: its width minus its children's (frames are in preorder). */
static double *self_times(const struct fg_frame *frames, size_t n)
{
    double *self = malloc((n ? n : 1) * sizeof(*self));
    size_t *stack = malloc((n ? n : 1) * sizeof(*stack)), sp = 0;

    if (!self || !stack) {
        free(self);
        free(stack);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        self[i] = frames[i].etime - frames[i].stime;
        while (sp > 0 && frames[stack[sp - 1]].depth >= frames[i].depth)
            sp--;
        if (sp > 0)
            self[stack[sp - 1]] -= self[i];
        stack[sp++] = i;
    }
    free(stack);
    return self;
}

/* The samples (want_weights 0) or the weights (1) of every frame with self time: a
 * frame's stack is the frames open above it, as indices (stack[0] is the root "all",
 * left out). */
static void sp_samples(struct sf_jw *w, const struct fg_frame *frames, size_t n, const double *self,
                       const uint32_t *index, size_t *stack, uint32_t *path, int want_weights,
                       double factor)
{
    size_t sp = 0;

    for (size_t i = 0; i < n; i++) {
        while (sp > 0 && frames[stack[sp - 1]].depth >= frames[i].depth)
            sp--;
        stack[sp++] = i;
        if (!(self[i] > 0) || frames[i].depth == 0)
            continue;
        if (want_weights) {
            sf_jw_num(w, NULL, self[i] * factor);
            continue;
        }
        for (size_t k = 1; k < sp; k++)
            path[k - 1] = index[frames[stack[k]].name];
        sf_ss_sample(w, path, sp - 1);
    }
}

int json_write_speedscope(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n,
                          const char *profile_name)
{
    struct sf_jw w;
    uint32_t nnames = ctx->lay.names.count, next = 0;
    uint32_t *index = malloc(((size_t)nnames + 1) * sizeof(*index));
    uint32_t *path = malloc((n + 1) * sizeof(*path));
    size_t *stack = malloc((n + 1) * sizeof(*stack));
    double *self = self_times(frames, n), total = 0;
    int rc;

    if (!index || !path || !stack || !self) {
        free(index);
        free(path);
        free(stack);
        free(self);
        return SF_E_NOMEM;
    }
    /* frame indices in order of first appearance in preorder */
    memset(index, 0xff, ((size_t)nnames + 1) * sizeof(*index));
    for (size_t i = 0; i < n; i++)
        if (frames[i].depth > 0 && index[frames[i].name] == UINT32_MAX)
            index[frames[i].name] = next++;
    if (n > 0)
        total = (frames[0].etime - frames[0].stime) * ctx->opt.factor;
    init_writer(&w, ctx->out);
    sf_ss_begin(&w, profile_name, "spanfold flamegraph");
    sf_ss_profile(&w);
    sp_samples(&w, frames, n, self, index, stack, path, 0, ctx->opt.factor);
    sf_ss_weights(&w);
    sp_samples(&w, frames, n, self, index, stack, path, 1, ctx->opt.factor);
    sf_ss_profile_end(&w, profile_name, "none", total);
    sf_ss_frames(&w);
    next = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *name;
        if (frames[i].depth == 0 || index[frames[i].name] != next)
            continue; /* the root, or a name written already */
        name = names_get(&ctx->lay.names, frames[i].name, &len);
        sf_ss_frame(&w, name, len);
        next++;
    }
    rc = sf_ss_end(&w) < 0 ? SF_E_IO : 0;
    free(index);
    free(path);
    free(stack);
    free(self);
    return rc;
}

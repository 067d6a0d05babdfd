/* json.c - the merged frames as JSON for the viewers people already use.
 *
 * d3-flame-graph (spiermar/d3-flame-graph) reads a hierarchy
 *   {"name":"all","value":300,"children":[{"name":"main","value":200,"children":[...]}]}
 * where value includes the children; differential input adds "delta" (second - first).
 * speedscope (jlfwong/speedscope:src/lib/file-format-spec.ts) reads
 *   {"$schema":"https://www.speedscope.app/file-format-schema.json",
 *    "shared":{"frames":[{"name":"main"},...]},
 *    "profiles":[{"type":"sampled","name":..,"unit":"none","startValue":0,"endValue":N,
 *                 "samples":[[0,3,7],...],"weights":[12,...]}]}
 * with one sample per frame that has time of its own (stack root -> leaf, frame indices).
 */
#include <stdlib.h>
#include <string.h>

#include "fg.h"
#include "sf_json.h"

/* JSON has no NaN or infinity; counts are plain numbers. */
static void json_num(FILE *f, double v)
{
    if (v != v || v > 1e300 || v < -1e300)
        v = 0;
    fprintf(f, "%.15g", v);
}

int json_write_d3(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n)
{
    FILE *f = ctx->out;
    size_t open = 0; /* objects whose children array is open */

    for (size_t i = 0; i < n; i++) {
        const struct fg_frame *fr = &frames[i];
        size_t len;
        const char *name = names_get(&ctx->lay.names, fr->name, &len);
        int first_child = open == fr->depth;
        while (open > fr->depth) {
            fputs("]}", f);
            open--;
        }
        if (open < fr->depth)
            continue; /* an orphan (its parent was elided): cannot happen in order */
        if (i > 0 && !first_child)
            fputc(',', f);
        fputs("{\"name\":", f);
        if (fr->depth == 0 && len == 0)
            sf_json_str(f, "all", 3);
        else
            sf_json_str(f, name, len);
        fputs(",\"value\":", f);
        json_num(f, (fr->etime - fr->stime) * ctx->opt.factor);
        if (fr->has_delta) {
            fputs(",\"delta\":", f);
            json_num(f, ctx->opt.negate ? -fr->delta : fr->delta);
        }
        fputs(",\"children\":[", f);
        open++;
    }
    while (open > 0) {
        fputs("]}", f);
        open--;
    }
    if (n == 0)
        fputs("{\"name\":\"all\",\"value\":0,\"children\":[]}", f);
    fputc('\n', f);
    fflush(f);
    return ferror(f) ? SF_E_IO : 0;
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

/* Write the samples (want_weights 0) or the weights (1) of every frame with self time. */
static void sp_samples(FILE *f, const struct fg_frame *frames, size_t n, const double *self,
                       const uint32_t *index, size_t *stack, int want_weights, double factor)
{
    size_t sp = 0;
    int first = 1;

    for (size_t i = 0; i < n; i++) {
        while (sp > 0 && frames[stack[sp - 1]].depth >= frames[i].depth)
            sp--;
        stack[sp++] = i;
        if (!(self[i] > 0) || frames[i].depth == 0)
            continue;
        fputs(first ? "" : ",", f);
        first = 0;
        if (want_weights) {
            json_num(f, self[i] * factor);
            continue;
        }
        fputc('[', f);
        for (size_t k = 1; k < sp; k++) /* stack[0] is the root "all" */
            fprintf(f, "%s%u", k > 1 ? "," : "", index[frames[stack[k]].name]);
        fputc(']', f);
    }
}

int json_write_speedscope(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n,
                          const char *profile_name)
{
    FILE *f = ctx->out;
    uint32_t nnames = ctx->lay.names.count, next = 0;
    uint32_t *index = malloc(((size_t)nnames + 1) * sizeof(*index));
    size_t *stack = malloc((n + 1) * sizeof(*stack));
    double *self = self_times(frames, n), total = 0;

    if (!index || !stack || !self) {
        free(index);
        free(stack);
        free(self);
        return SF_E_NOMEM;
    }
    memset(index, 0xff, ((size_t)nnames + 1) * sizeof(*index));
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
          "\"exporter\":\"spanfold flamegraph\",\"name\":",
          f);
    sf_json_str(f, profile_name, strlen(profile_name));
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (frames[i].depth == 0 || index[frames[i].name] != UINT32_MAX)
            continue;
        size_t len;
        const char *name = names_get(&ctx->lay.names, frames[i].name, &len);
        fputs(next ? ",{\"name\":" : "{\"name\":", f);
        sf_json_str(f, name, len);
        fputc('}', f);
        index[frames[i].name] = next++;
    }
    if (n > 0)
        total = (frames[0].etime - frames[0].stime) * ctx->opt.factor;
    fputs("]},\"profiles\":[{\"type\":\"sampled\",\"name\":", f);
    sf_json_str(f, profile_name, strlen(profile_name));
    fputs(",\"unit\":\"none\",\"startValue\":0,\"endValue\":", f);
    json_num(f, total);
    fputs(",\"samples\":[", f);
    sp_samples(f, frames, n, self, index, stack, 0, ctx->opt.factor);
    fputs("],\"weights\":[", f);
    sp_samples(f, frames, n, self, index, stack, 1, ctx->opt.factor);
    fputs("]}]}\n", f);
    free(index);
    free(stack);
    free(self);
    fflush(f);
    return ferror(f) ? SF_E_IO : 0;
}

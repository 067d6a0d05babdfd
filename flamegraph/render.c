/* render.c - a flamegraph run's context and its output, shared by the flamegraph tool
 * and by the spanfold front end (spanfold stacks), which feeds folded lines to
 * folded_add_line() itself instead of reading a file.
 */
#include <stdlib.h>
#include <string.h>

#include "fg.h"

void fg_opts_defaults(struct fg_opts *o)
{
    *o = (struct fg_opts){.fonttype = "Verdana",
                          .countname = "samples",
                          .nametype = "Function:",
                          .colors = "hot",
                          .palfile = "palette.map",
                          .width = 1200,
                          .frameheight = 16,
                          .fontsize = 12,
                          .fontwidth = 0.59,
                          .minwidth = 0.1,
                          .factor = 1,
                          .max_depth = FG_MAX_DEPTH,
                          .max_size = FG_MAX_SIZE};
}

int fg_ctx_init(struct fg_ctx *ctx, const struct fg_opts *opt, FILE *out)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->opt = *opt;
    ctx->out = out;
    ctx->chain = strcmp(ctx->opt.colors, "chain") == 0;
    sf_buf_init(&ctx->scratch, 64u << 20);
    sf_buf_init(&ctx->scratch2, 64u << 20);
    sf_buf_init(&ctx->keybuf, 1u << 20);
    if (layout_init(&ctx->lay, ctx->opt.flamechart) < 0)
        return SF_E_NOMEM;
    ctx->lay.chain = ctx->chain;
    if (ctx->opt.format == FG_FMT_SVG || ctx->opt.minwidth_given)
        layout_set_prune(&ctx->lay, ctx->opt.minwidth, ctx->opt.minwidth_pct,
                         ctx->opt.width - 20.0);
    return 0;
}

void fg_ctx_free(struct fg_ctx *ctx)
{
    layout_free(&ctx->lay);
    palette_map_free(ctx);
    svg_nameattr_free(ctx);
    sf_buf_free(&ctx->scratch);
    sf_buf_free(&ctx->scratch2);
    sf_buf_free(&ctx->keybuf);
    free(ctx->frames);
    free(ctx->frame_lens);
    free(ctx->prev.text);
    free(ctx->prev.ends);
}

void fg_note_cut(const struct fg_ctx *ctx, const char *tool, const char *limit, const char *more)
{
    if (ctx->cut_stacks > 0)
        fprintf(stderr,
                "%s: %llu stack%s deeper than %s%s%u%s: from frame %u on, drawn as one "
                "'[… K frames]'%s\n",
                tool, (unsigned long long)ctx->cut_stacks, ctx->cut_stacks == 1 ? "" : "s",
                limit ? limit : "", limit ? " " : "", ctx->opt.max_depth, limit ? "" : " frames",
                ctx->opt.max_depth, more ? more : "");
}

/* The output's size, estimated from above before anything is written: per frame the
 * SVG's group, title, rect and text (about 250 bytes besides the name, which appears
 * twice, escaped), or the JSON's object; plus the header and the script. */
static uint64_t estimate(const struct fg_ctx *ctx, const struct fg_frame *frames, size_t n)
{
    uint64_t per = ctx->opt.format == FG_FMT_SVG ? 260 : 80, names = 0;

    for (size_t i = 0; i < n; i++)
        names += ctx->lay.names.len[frames[i].name];
    return (uint64_t)n * per + (ctx->opt.format == FG_FMT_SVG ? 3 : 1) * names + 64 * 1024;
}

int fg_render(struct fg_ctx *ctx, const char *first_input)
{
    struct fg_opts *o = &ctx->opt;
    struct fg_frame *frames;
    size_t n;
    uint32_t depthmax;
    double time = ctx->lay.time, timemax, min_time = 0;
    struct sf_err err;
    char msg[512];
    int rc;

    sf_err_clear(&err);
    if (!(time != 0)) {
        fprintf(stderr, "flamegraph: ERROR: no stack counts found\n");
        if (o->format == FG_FMT_SVG)
            svg_write_empty(ctx);
        else
            json_write_d3(ctx, NULL, 0);
        return 2;
    }
    timemax = time;
    if (o->total > 0 && o->total < time) {
        if (o->total / time > 0.02)
            fprintf(stderr,
                    "flamegraph: --total %.15g is less than the actual total %.15g, "
                    "so ignored\n",
                    o->total, time);
    } else if (o->total > 0) {
        timemax = o->total;
    }
    if (o->format == FG_FMT_SVG || o->minwidth_given)
        min_time = o->minwidth_pct ? timemax * o->minwidth / 100
                                   : o->minwidth * timemax / (o->width - 20.0);
    if (layout_frames(&ctx->lay, timemax, min_time, &frames, &n, &depthmax) < 0) {
        fprintf(stderr, "flamegraph: out of memory\n");
        return 2;
    }
    if (o->max_size && estimate(ctx, frames, n) > o->max_size) {
        fprintf(stderr,
                "flamegraph: the %s would be about %llu MB (%zu frames), over --max-size %llu "
                "MB: raise it, or draw less with --minwidth or --max-depth\n",
                o->format == FG_FMT_SVG ? "SVG" : "JSON",
                (unsigned long long)(estimate(ctx, frames, n) >> 20), n,
                (unsigned long long)(o->max_size >> 20));
        free(frames);
        return 2;
    }
    if (o->cp && palette_map_load(ctx, o->palfile, &err) < 0)
        goto fail;
    if (o->format == FG_FMT_JSON)
        rc = json_write_d3(ctx, frames, n);
    else if (o->format == FG_FMT_SPEEDSCOPE)
        rc = json_write_speedscope(ctx, frames, n, first_input);
    else
        rc = svg_write(ctx, frames, n, depthmax, timemax);
    free(frames);
    if (rc < 0) {
        fprintf(stderr, "flamegraph: write error\n");
        return 2;
    }
    if (o->cp && palette_map_save(ctx, o->palfile, &err) < 0)
        goto fail;
    return 0;
fail:
    sf_err_format(&err, "flamegraph", o->palfile, msg, sizeof(msg));
    fprintf(stderr, "%s\n", msg);
    return 2;
}

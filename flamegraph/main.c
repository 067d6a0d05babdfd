/* main.c - flamegraph: folded stacks to an interactive SVG flame graph (flamegraph.pl
 * options), or to d3-flame-graph / speedscope JSON.
 *
 *   perf script | perf-fold | flamegraph > cpu.svg
 *   flamegraph [options] [FILE...|-]
 */
#include <stdlib.h>
#include <string.h>

#include "fg.h"
#include "sf_opt.h"

/* Lay out and write the output.  Returns the exit status. */
static int render(struct fg_ctx *ctx, const char *first_input)
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

int flamegraph_main(int argc, char **argv)
{
    struct fg_ctx ctx = {.opt = {.fonttype = "Verdana",
                                 .countname = "samples",
                                 .nametype = "Function:",
                                 .colors = "hot",
                                 .palfile = "palette.map",
                                 .width = 1200,
                                 .frameheight = 16,
                                 .fontsize = 12,
                                 .fontwidth = 0.59,
                                 .minwidth = 0.1,
                                 .factor = 1}};
    static char *stdin_only[] = {"-"};
    char **inputs;
    int first, ninputs, rc = 0;
    struct sf_err err;
    char msg[512];

    if ((first = opts_parse(argc, argv, &ctx.opt)) < 0)
        return first == -2 ? 0 : 2;
    inputs = first < argc ? argv + first : stdin_only;
    ninputs = first < argc ? argc - first : 1;
    ctx.out = stdout;
    ctx.chain = strcmp(ctx.opt.colors, "chain") == 0;
    sf_buf_init(&ctx.scratch, 64u << 20);
    sf_buf_init(&ctx.scratch2, 64u << 20);
    sf_buf_init(&ctx.keybuf, 1u << 20);
    sf_err_clear(&err);
    if (layout_init(&ctx.lay, ctx.opt.flamechart) < 0) {
        fprintf(stderr, "flamegraph: out of memory\n");
        return 2;
    }
    ctx.lay.chain = ctx.chain;
    if (ctx.opt.format == FG_FMT_SVG || ctx.opt.minwidth_given)
        layout_set_prune(&ctx.lay, ctx.opt.minwidth, ctx.opt.minwidth_pct, ctx.opt.width - 20.0);
    if (ctx.opt.nameattr && svg_nameattr_load(&ctx, ctx.opt.nameattr, &err) < 0) {
        sf_err_format(&err, "flamegraph", ctx.opt.nameattr, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        rc = 2;
    }
    for (int i = 0; i < ninputs && rc == 0; i++)
        rc = folded_read_file(&ctx, inputs[i]);
    if (ctx.bad_lines > 0 && !ctx.opt.quiet)
        fprintf(stderr, "flamegraph: ignored %llu lines with invalid format\n",
                (unsigned long long)ctx.bad_lines);
    if (rc == 0)
        rc = render(&ctx, strcmp(inputs[0], "-") == 0 ? "stdin" : inputs[0]);
    layout_free(&ctx.lay);
    palette_map_free(&ctx);
    svg_nameattr_free(&ctx);
    sf_buf_free(&ctx.scratch);
    sf_buf_free(&ctx.scratch2);
    sf_buf_free(&ctx.keybuf);
    free(ctx.frames);
    free(ctx.frame_lens);
    free(ctx.prev.text);
    free(ctx.prev.ends);
    return rc;
}

/* fuzz_folded.c - libFuzzer target for flamegraph's folded reader, frame tree and writers.
 *
 * The first byte picks the options (--reverse, --flamechart, --colors chain/java/js, --hash,
 * --inverted, --minwidth 0, output format); the rest is folded text, fed line by line as
 * the tool feeds it.  The layout is then drawn as SVG, d3 JSON and speedscope into memory.
 * Invariants: every kept frame lies inside the root and no deeper than the deepest stack;
 * the SVG is closed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../flamegraph/fg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_opts(struct fg_opts *o, uint8_t sel)
{
    static const char *const pal[] = {"hot", "chain", "java", "js", "perl", "mem", "io", "wakeup"};
    memset(o, 0, sizeof(*o));
    o->fonttype = "Verdana";
    o->countname = "samples";
    o->nametype = "Function:";
    o->colors = pal[sel & 7];
    o->bgcolors = "yellow";
    o->title = "Flame Graph";
    o->palfile = "palette.map";
    o->width = 1200;
    o->frameheight = 16;
    o->fontsize = 12;
    o->fontwidth = 0.59;
    o->minwidth = sel & 0x08 ? 0 : 0.1;
    o->factor = 1;
    o->reverse = !!(sel & 0x10);
    o->flamechart = !!(sel & 0x20);
    o->hash = !!(sel & 0x40);
    o->inverted = !!(sel & 0x80);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fg_ctx ctx;
    struct fg_frame *frames = NULL;
    size_t n = 0, start = 1, maxdepth = 0;
    uint32_t depthmax = 0;
    char *buf, *text = NULL;
    size_t textlen = 0;

    if (size < 1 || size > 65536)
        return 0;
    memset(&ctx, 0, sizeof(ctx));
    fuzz_opts(&ctx.opt, data[0]);
    ctx.chain = strcmp(ctx.opt.colors, "chain") == 0;
    sf_buf_init(&ctx.scratch, 1u << 20);
    sf_buf_init(&ctx.scratch2, 1u << 20);
    sf_buf_init(&ctx.keybuf, 1u << 20);
    if (layout_init(&ctx.lay, ctx.opt.flamechart) < 0)
        abort();
    ctx.lay.chain = ctx.chain;
    layout_set_prune(&ctx.lay, ctx.opt.minwidth, 0, ctx.opt.width - 20.0);
    buf = malloc(size);
    memcpy(buf, data, size);
    for (size_t i = 1; i <= size; i++) {
        if (i < size && buf[i] != '\n')
            continue;
        struct sf_err err;
        size_t len = i - start, depth = 1;
        sf_err_clear(&err);
        for (size_t k = start; k < i; k++)
            depth += buf[k] == ';';
        /* lines are passed with their length, not NUL-terminated, as a stress */
        if (len > 0 && folded_add_line(&ctx, buf + start, len, &err) == 1 && depth + 2 > maxdepth)
            maxdepth = depth + 2; /* chain may add a "--" frame */
        start = i + 1;
    }
    double total = ctx.lay.time;
    if (total > 0 && total < 1e300 &&
        layout_frames(&ctx.lay, total, ctx.opt.minwidth * total / 1180, &frames, &n, &depthmax) ==
            0) {
        for (size_t i = 0; i < n; i++) {
            if (frames[i].stime < -1e-6 * total || frames[i].etime > total * (1 + 1e-9) + 1e-9 ||
                frames[i].depth > maxdepth)
                abort();
        }
        ctx.out = open_memstream(&text, &textlen);
        if (ctx.out) {
            svg_write(&ctx, frames, n, depthmax, total);
            json_write_d3(&ctx, frames, n);
            json_write_speedscope(&ctx, frames, n, "fuzz");
            fclose(ctx.out);
            if (textlen == 0 || !strstr(text, "</svg>\n"))
                abort();
        }
    }
    free(text);
    free(frames);
    free(buf);
    free(ctx.frames);
    free(ctx.frame_lens);
    free(ctx.prev.text);
    free(ctx.prev.ends);
    sf_buf_free(&ctx.scratch);
    sf_buf_free(&ctx.scratch2);
    sf_buf_free(&ctx.keybuf);
    layout_free(&ctx.lay);
    return 0;
}

/* main.c - flamegraph: folded stacks to an interactive SVG flame graph (flamegraph.pl
 * options), or to d3-flame-graph / speedscope JSON.
 *
 *   perf script | perf-fold | flamegraph > cpu.svg
 *   flamegraph [options] [FILE...|-]
 */
#include <string.h>

#include "fg.h"
#include "sf_opt.h"

int flamegraph_main(int argc, char **argv)
{
    struct fg_ctx ctx;
    struct fg_opts opt;
    static char *stdin_only[] = {"-"};
    char **inputs;
    int first, ninputs, rc = 0;
    struct sf_err err;
    char msg[512];

    fg_opts_defaults(&opt);
    if ((first = opts_parse(argc, argv, &opt)) < 0)
        return first == -2 ? 0 : 2;
    inputs = first < argc ? argv + first : stdin_only;
    ninputs = first < argc ? argc - first : 1;
    if (fg_ctx_init(&ctx, &opt, stdout) < 0) {
        fprintf(stderr, "flamegraph: out of memory\n");
        return 2;
    }
    sf_err_clear(&err);
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
    if (!ctx.opt.quiet)
        fg_note_cut(&ctx, "flamegraph", "--max-depth", NULL);
    if (rc == 0)
        rc = fg_render(&ctx, strcmp(inputs[0], "-") == 0 ? "stdin" : inputs[0]);
    /* the graph is drawn from the good lines; skipped ones make exit 1 (docs/exit-status.md) */
    if (rc == 0 && ctx.bad_lines > 0)
        rc = SF_EXIT_FINDINGS;
    fg_ctx_free(&ctx);
    return rc;
}

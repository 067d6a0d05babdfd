/* test_folded.c - flamegraph's line parser, merge order and colour hashes, table-driven. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../flamegraph/fg.h"
#include "tap.h"

static void test_split_count(void)
{
    static const struct {
        const char *line;
        int ok;
        size_t stack_len;
        double count;
    } cases[] = {
        {"a;b 12", 1, 3, 12},  {"a;b  12", 1, 4, 12}, {"a;b\t7", 1, 3, 7}, {"a 1.5", 1, 1, 1.5},
        {"a 2.", 1, 1, 2},     {" 5", 1, 0, 5},       {"a .5", 0, 0, 0},   {"a5", 0, 0, 0},
        {"", 0, 0, 0},         {"a 1x", 0, 0, 0},     {"a 1 2", 1, 3, 2},  {"a 1.2.3", 0, 0, 0},
        {"f(int) 3", 1, 6, 3}, {"a;b 0", 1, 3, 0},    {"12", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t sl = 99;
        double c = -1;
        int ok = folded_split_count(cases[i].line, strlen(cases[i].line), &sl, &c);
        TAP_OK(ok == cases[i].ok && (!ok || (sl == cases[i].stack_len && c == cases[i].count)),
               "count of \"%s\": ok=%d stack %zu count %g", cases[i].line, ok, sl, c);
    }
}

static void test_seeded_rand(void)
{
    /* Perl: srand(sum of code points); rand() == POSIX drand48 after srand48(sum) */
    static const char *const names[] = {"", "func_a", "main", "java", "日本語", "x"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        long sum = 0;
        const unsigned char *p = (const unsigned char *)names[i];
        /* code points of the UTF-8 test names, decoded by hand */
        if (strcmp(names[i], "日本語") == 0)
            sum = 0x65e5 + 0x672c + 0x8a9e;
        else
            for (; *p; p++)
                sum += *p;
        srand48(sum);
        double want = drand48();
        double got = palette_seeded_rand(names[i], strlen(names[i]));
        TAP_OK(got == want, "seeded hue of \"%s\" is drand48 after srand48(%ld): %.17g", names[i],
               sum, got);
    }
}

static void test_namehash(void)
{
    /* by hand: 'a' 97%10=7 -> 7/9; 'b' 98%11=10 -> 10/10*0.7; max 1+1+0.7 */
    double want = 1 - (7.0 / 9 + 0.7) / 2.7;
    TAP_OK(fabs(palette_namehash("ab", 2) - want) < 1e-12, "namehash(ab) = %.6f", want);
    TAP_OK(palette_namehash("mod`ab", 6) == palette_namehash("ab", 2),
           "namehash drops a module prefix up to '`'");
    TAP_OK(palette_namehash("abcdef", 6) == palette_namehash("abcxyz", 6),
           "namehash reads three characters");
}

/* Lines into a fresh context; returns the frames (caller frees). */
static struct fg_frame *run(struct fg_ctx *ctx, const char *const *lines, size_t n, size_t *nf)
{
    struct fg_frame *frames;
    uint32_t depthmax;

    for (size_t i = 0; i < n; i++) {
        struct sf_err err;
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", lines[i]);
        sf_err_clear(&err);
        folded_add_line(ctx, buf, strlen(buf), &err);
    }
    if (layout_frames(&ctx->lay, ctx->lay.time, 0, &frames, nf, &depthmax) < 0)
        return NULL;
    return frames;
}

static void ctx_init(struct fg_ctx *ctx, const char *colors, int flamechart)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->opt.colors = colors;
    ctx->chain = strcmp(colors, "chain") == 0;
    sf_buf_init(&ctx->scratch, 1 << 16);
    sf_buf_init(&ctx->scratch2, 1 << 16);
    sf_buf_init(&ctx->keybuf, 1 << 16);
    layout_init(&ctx->lay, flamechart);
    ctx->lay.chain = ctx->chain;
}

static void ctx_free(struct fg_ctx *ctx)
{
    layout_free(&ctx->lay);
    sf_buf_free(&ctx->scratch);
    sf_buf_free(&ctx->scratch2);
    sf_buf_free(&ctx->keybuf);
    free(ctx->frames);
    free(ctx->frame_lens);
    free(ctx->prev.text);
    free(ctx->prev.ends);
}

static const char *fname(struct fg_ctx *ctx, const struct fg_frame *f)
{
    return names_get(&ctx->lay.names, f->name, NULL);
}

static void test_merge_order(void)
{
    /* byte-wise line order splits f: "f 5" < "f2;x 1" < "f;g 2" */
    static const char *const lines[] = {"f;g 2", "f2;x 1", "f 5"};
    struct fg_ctx ctx;
    size_t n, fs = 0;
    ctx_init(&ctx, "hot", 0);
    struct fg_frame *fr = run(&ctx, lines, 3, &n);
    double f_first = -1, f2 = -1, f_second = -1;
    for (size_t i = 0; fr && i < n; i++) {
        if (strcmp(fname(&ctx, &fr[i]), "f") == 0) {
            fs++;
            if (f_first < 0)
                f_first = fr[i].stime;
            else
                f_second = fr[i].stime;
        }
        if (strcmp(fname(&ctx, &fr[i]), "f2") == 0)
            f2 = fr[i].stime;
    }
    TAP_OK(fs == 2 && f_first == 0 && f2 == 5 && f_second == 6,
           "\"f\" split around \"f2\" as flamegraph.pl's sort does (f at 0 and 6, f2 at 5)");
    free(fr);
    ctx_free(&ctx);

    /* flamechart: input order, consecutive equal frames merge */
    static const char *const chart[] = {"a;b 1", "a;b 2", "c 1", "a 1"};
    ctx_init(&ctx, "hot", 1);
    fr = run(&ctx, chart, 4, &n);
    size_t as = 0;
    for (size_t i = 0; fr && i < n; i++)
        as += strcmp(fname(&ctx, &fr[i]), "a") == 0;
    TAP_OK(n == 5 && as == 2, "flamechart keeps input order: all, a, b, c, a (%zu frames)", n);
    free(fr);
    ctx_free(&ctx);

    /* chain: waker frames annotated, a "--" frame appended without a separator */
    static const char *const ch[] = {"m;--;w;x 2", "m 1"};
    ctx_init(&ctx, "chain", 0);
    fr = run(&ctx, ch, 2, &n);
    int wx = 0, dash = 0;
    for (size_t i = 0; fr && i < n; i++) {
        wx +=
            strcmp(fname(&ctx, &fr[i]), "w_[w]") == 0 || strcmp(fname(&ctx, &fr[i]), "x_[w]") == 0;
        dash += strcmp(fname(&ctx, &fr[i]), "--") == 0;
    }
    TAP_OK(wx == 2 && dash == 1,
           "chain: w_[w] x_[w], and the \"--\" appended to m merges with m;--");
    free(fr);
    ctx_free(&ctx);

    /* differential: delta = second - first, width from the second column */
    static const char *const df[] = {"a;b 3 5", "a;c 4 1"};
    ctx_init(&ctx, "hot", 0);
    fr = run(&ctx, df, 2, &n);
    int good = ctx.lay.time == 6 && ctx.lay.maxdelta == 3;
    for (size_t i = 0; fr && i < n; i++) {
        if (strcmp(fname(&ctx, &fr[i]), "b") == 0)
            good &= fr[i].has_delta && fr[i].delta == 2 && fr[i].etime - fr[i].stime == 5;
        if (strcmp(fname(&ctx, &fr[i]), "a") == 0)
            good &= fr[i].has_delta && fr[i].delta == 0;
    }
    TAP_OK(good, "differential: widths from the second column, deltas on the leaves");
    free(fr);
    ctx_free(&ctx);
}

int main(void)
{
    test_split_count();
    test_seeded_rand();
    test_namehash();
    test_merge_order();
    return tap_done();
}

/* folded.c - folded-stack lines into the frame tree, read as flamegraph.pl reads them.
 *
 * A folded line is "frame;frame;...;leaf COUNT" or, for differential input (difffolded.pl),
 * "frame;...;leaf COUNT1 COUNT2".  flamegraph.pl matches /^(.*)\s+?(\d+(?:\.\d*)?)$/ once
 * for the count and once more on the stack for a second column, splits the stack on ';'
 * (Perl split: trailing empty fields dropped) and, with --reverse, reverses the frames.
 * With --colors chain, frames after a ";--;" separator get the waker annotation "_[w]".
 *
 *   java;start_thread;run;read_[k] 42          one stack, 42 samples
 *   java;start_thread;run;read_[k] 40 45       differential: before 40, after 45
 */
#include "fg.h"

#include <stdlib.h>
#include <string.h>

/* Perl's \s on ASCII: space, \t, \n, \v, \f, \r. */
static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

int folded_split_count(const char *s, size_t len, size_t *stack_len, double *count)
{
    size_t j = len, i;
    char num[64];
    char *end;

    while (j > 0 && is_digit((unsigned char)s[j - 1]))
        j--;
    i = j;
    if (j > 0 && s[j - 1] == '.') {
        /* "12.5" or "12.": the fraction needs digits before the dot */
        i = j - 1;
        while (i > 0 && is_digit((unsigned char)s[i - 1]))
            i--;
        if (i == j - 1)
            return 0;
    } else if (j == len) {
        return 0;
    }
    if (i == 0 || !is_space((unsigned char)s[i - 1]))
        return 0;
    if (len - i >= sizeof(num)) {
        /* a huge digit string: Perl reads it as a (possibly infinite) double too */
        *count = strtod(s + i, &end);
    } else {
        memcpy(num, s + i, len - i);
        num[len - i] = '\0';
        *count = strtod(num, &end);
    }
    *stack_len = i - 1;
    return 1;
}

/* Grow the frame arrays to hold n frames. */
static int frames_reserve(struct fg_ctx *ctx, size_t n)
{
    const char **f;
    size_t *l;
    size_t cap;

    if (n <= ctx->frames_cap)
        return 0;
    cap = ctx->frames_cap ? ctx->frames_cap * 2 : 256;
    while (cap < n)
        cap *= 2;
    f = realloc(ctx->frames, cap * sizeof(*f));
    if (!f)
        return SF_E_NOMEM;
    ctx->frames = f;
    l = realloc(ctx->frame_lens, cap * sizeof(*l));
    if (!l)
        return SF_E_NOMEM;
    ctx->frame_lens = l;
    ctx->frames_cap = cap;
    return 0;
}

/* Split s on ';' into ctx->frames, Perl style: trailing empty fields dropped.  Returns the
 * number of frames or a negative SF_E_*. */
static long split_frames(struct fg_ctx *ctx, const char *s, size_t len)
{
    size_t n = 0, start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ';')
            continue;
        if (frames_reserve(ctx, n + 1) < 0)
            return SF_E_NOMEM;
        ctx->frames[n] = s + start;
        ctx->frame_lens[n] = i - start;
        n++;
        start = i + 1;
    }
    while (n > 0 && ctx->frame_lens[n - 1] == 0)
        n--;
    return (long)n;
}

static void reverse_frames(struct fg_ctx *ctx, size_t n)
{
    for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
        const char *f = ctx->frames[a];
        size_t l = ctx->frame_lens[a];
        ctx->frames[a] = ctx->frames[b];
        ctx->frame_lens[a] = ctx->frame_lens[b];
        ctx->frames[b] = f;
        ctx->frame_lens[b] = l;
    }
}

/* Find ";--;" in s[from..len). */
static const char *find_sep(const char *s, size_t from, size_t len)
{
    for (size_t i = from; i + 4 <= len; i++)
        if (s[i] == ';' && s[i + 1] == '-' && s[i + 2] == '-' && s[i + 3] == ';')
            return s + i;
    return NULL;
}

/* --colors chain: "a;b;--;c;d" becomes "a;b;--;c_[w];d_[w]", and a stack without the
 * separator gains a trailing "--" frame, exactly as flamegraph.pl rewrites it (its split
 * on ";--;" drops trailing empty fields).  The result is in ctx->scratch. */
static int chain_rewrite(struct fg_ctx *ctx, const char *s, size_t len)
{
    struct sf_buf *b = &ctx->scratch;
    size_t keep = len, p = 0;
    const char *sep;
    int rc = 0, part = 0;

    /* drop trailing empty fields: strip every ";--;" that ends the stack */
    while (keep >= 4 && memcmp(s + keep - 4, ";--;", 4) == 0)
        keep -= 4;
    sf_buf_reset(b);
    for (;;) {
        sep = find_sep(s, p, keep);
        size_t end = sep ? (size_t)(sep - s) : keep;
        if (part == 0) {
            rc |= sf_buf_append(b, s, end);
            rc |= sf_buf_append(b, ";--;", 4);
        } else {
            if (part > 1)
                rc |= sf_buf_append(b, ";--;", 4);
            for (size_t i = p; i < end; i++)
                rc |= s[i] == ';' ? sf_buf_append(b, "_[w];", 5) : sf_buf_append(b, s + i, 1);
            rc |= sf_buf_append(b, "_[w]", 4);
        }
        part++;
        if (!sep)
            break;
        p = end + 4;
    }
    return rc ? SF_E_LIMIT : 0;
}

int folded_add_line(struct fg_ctx *ctx, char *line, size_t len, struct sf_err *err)
{
    size_t stack_len, stack2_len;
    double c1, c2 = 0, delta = 0; /* c1: last column */
    int diff = 0, rc;
    long n;
    const char *stack = line;

    /* spanfold reads CRLF files too (flamegraph.pl would ignore every such line) */
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (!folded_split_count(line, len, &stack_len, &c1)) {
        /* point at the last word, where the count should have been */
        size_t end = len, col;
        while (end > 0 && is_space((unsigned char)line[end - 1]))
            end--;
        col = end;
        while (col > 0 && !is_space((unsigned char)line[col - 1]))
            col--;
        err->col = (uint32_t)(col + 1);
        sf_err_set(err, SF_E_MALFORMED, UINT64_MAX,
                   len == 0 ? "empty line" : "no count at the end of the line");
        return 0;
    }
    if (folded_split_count(line, stack_len, &stack2_len, &c2)) {
        /* differential: the last column is the width, delta = last - first */
        diff = 1;
        delta = c1 - c2;
        stack_len = stack2_len;
    }
    if (ctx->opt.reverse) {
        if ((n = split_frames(ctx, stack, stack_len)) < 0)
            return sf_err_set(err, (int)n, UINT64_MAX, "out of memory");
        reverse_frames(ctx, (size_t)n);
        /* flamegraph.pl joins the reversed frames and splits them again */
        sf_buf_reset(&ctx->scratch2);
        for (long i = 0; i < n; i++)
            if ((i && sf_buf_append(&ctx->scratch2, ";", 1) < 0) ||
                sf_buf_append(&ctx->scratch2, ctx->frames[i], ctx->frame_lens[i]) < 0)
                return sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "stack too long");
        stack = ctx->scratch2.data ? (const char *)ctx->scratch2.data : "";
        stack_len = ctx->scratch2.len;
    }
    if (ctx->chain) {
        if ((rc = chain_rewrite(ctx, stack, stack_len)) < 0)
            return sf_err_set(err, rc, UINT64_MAX, "stack too long");
        stack = (const char *)ctx->scratch.data;
        stack_len = ctx->scratch.len;
    }
    if ((n = split_frames(ctx, stack, stack_len)) < 0)
        return sf_err_set(err, (int)n, UINT64_MAX, "out of memory");
    rc = layout_add(&ctx->lay, ctx->frames, ctx->frame_lens, (size_t)n, c1, diff, delta);
    if (rc < 0)
        return sf_err_set(err, rc, UINT64_MAX, "out of memory");
    return 1;
}

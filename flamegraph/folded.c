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
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg.h"
#include "sf_count.h"
#include "sf_line.h"
#include "sf_opt.h"
#include "sf_progress.h"

#define MAX_REPORTED 10 /* malformed lines named one by one; the rest are counted */

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

/* Split s on ';' into ctx->frames from frame n0 on, starting at byte start (frames before
 * n0 are already set).  No trailing fields are dropped here.  Returns the number of frames
 * or SF_E_NOMEM. */
static long split_from(struct fg_ctx *ctx, const char *s, size_t len, size_t start, size_t n0)
{
    size_t n = n0;

    for (;;) {
        const char *semi = start < len ? memchr(s + start, ';', len - start) : NULL;
        size_t end = semi ? (size_t)(semi - s) : len;
        if (frames_reserve(ctx, n + 1) < 0)
            return SF_E_NOMEM;
        ctx->frames[n] = s + start;
        ctx->frame_lens[n] = end - start;
        n++;
        if (!semi)
            return (long)n;
        start = end + 1;
    }
}

/* Perl split: trailing empty fields are dropped. */
static long drop_trailing_empty(struct fg_ctx *ctx, long n)
{
    while (n > 0 && ctx->frame_lens[n - 1] == 0)
        n--;
    return n;
}

/* Split s on ';' into ctx->frames, Perl style.  Returns the number of frames or a negative
 * SF_E_*. */
static long split_frames(struct fg_ctx *ctx, const char *s, size_t len)
{
    long n = split_from(ctx, s, len, 0, 0);
    return n < 0 ? n : drop_trailing_empty(ctx, n);
}

/* Length of the common prefix of a and b. */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
    size_t i = 0;
    uint64_t x, y;

    while (i + 8 <= n) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            break;
        i += 8;
    }
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* Split the stack reusing what it shares with the previous line: consecutive folded lines
 * usually share most of their frames, so only the bytes after the first difference are
 * scanned.  Sets *same to the number of leading frames equal to the previous line's.
 * Returns the number of frames (trailing empties dropped) or SF_E_NOMEM. */
static long split_incremental(struct fg_ctx *ctx, const char *s, size_t len, size_t *same)
{
    struct fg_prev *p = &ctx->prev;
    size_t m = len < p->len ? len : p->len, lcp = common_prefix(s, p->text, m), k = 0, start = 0;
    long n;

    /* frame k is shared when it ends inside the common prefix, or at its end in both */
    while (k < p->nframes &&
           (p->ends[k] < lcp || (p->ends[k] == lcp && (len == lcp || s[lcp] == ';')))) {
        if (frames_reserve(ctx, k + 1) < 0)
            return SF_E_NOMEM;
        ctx->frames[k] = s + start;
        ctx->frame_lens[k] = p->ends[k] - start;
        start = p->ends[k] + 1;
        k++;
    }
    if (k > 0 && start > len) {
        n = (long)k; /* the stack ends with its last shared frame */
    } else if ((n = split_from(ctx, s, len, start, k)) < 0) {
        return n;
    }
    *same = k;
    /* remember this line for the next one */
    if (len > p->cap || (size_t)n > p->fcap) {
        size_t cap = len > p->cap ? len * 2 + 64 : p->cap,
               fcap = (size_t)n > p->fcap ? (size_t)n * 2 + 16 : p->fcap;
        char *t = realloc(p->text, cap);
        if (t)
            p->text = t;
        uint32_t *e = realloc(p->ends, fcap * sizeof(*e));
        if (e)
            p->ends = e;
        if (!t || !e)
            return SF_E_NOMEM;
        p->cap = cap;
        p->fcap = fcap;
    }
    memcpy(p->text, s, len);
    p->len = len;
    for (long i = (long)k; i < n; i++)
        p->ends[i] = (uint32_t)(ctx->frames[i] - s + ctx->frame_lens[i]);
    p->nframes = (size_t)n;
    n = drop_trailing_empty(ctx, n);
    if (*same > (size_t)n)
        *same = (size_t)n;
    return n;
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
static int chain_rewrite(struct fg_ctx *ctx, const char *s, size_t len, size_t *sep_at)
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
            *sep_at = 1; /* the "--" follows the fields of the first part */
            for (size_t i = 0; i < end; i++)
                *sep_at += s[i] == ';';
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

/* The part of the line flamegraph.pl sorts that follows the last frame kept: trailing
 * ';'s, the blank and the counts.  Lines ending at the same frame are ordered by it, and
 * the first (its delta, for differential input) opens the frame.  With --reverse Perl
 * rebuilds the line as "REVERSED COUNT" or "REVERSED FIRST LAST".  Sets lay.key. */
static int set_sort_key(struct fg_ctx *ctx, const char *line, size_t len, const char *stack,
                        size_t stack_len, size_t orig_len, size_t last_at, int diff)
{
    size_t t = 0;
    struct sf_buf *k = &ctx->keybuf;

    while (t < stack_len && stack[stack_len - 1 - t] == ';')
        t++;
    if (!ctx->opt.reverse) {
        ctx->lay.key = line + stack_len - t;
        ctx->lay.key_len = len - (stack_len - t);
        return 0;
    }
    sf_buf_reset(k);
    for (size_t i = 0; i < t; i++)
        if (sf_buf_append(k, ";", 1) < 0)
            return SF_E_LIMIT;
    if (sf_buf_append(k, " ", 1) < 0 ||
        (diff && (sf_buf_append(k, line + orig_len + 1, last_at - orig_len - 1) < 0 ||
                  sf_buf_append(k, " ", 1) < 0)) ||
        sf_buf_append(k, line + last_at + 1, len - last_at - 1) < 0)
        return SF_E_LIMIT;
    ctx->lay.key = (const char *)k->data;
    ctx->lay.key_len = k->len;
    return 0;
}

int folded_add_line(struct fg_ctx *ctx, char *line, size_t len, struct sf_err *err)
{
    size_t stack_len, stack2_len;
    double c1, c2 = 0, delta = 0; /* c1: last column */
    int diff = 0, rc;
    long n;
    size_t same = 0, sep_at = SIZE_MAX;
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
    size_t last_at = stack_len; /* the last count is line[last_at + 1 .. len) */
    size_t orig_len;
    if (folded_split_count(line, stack_len, &stack2_len, &c2)) {
        /* differential: the last column is the width, delta = last - first */
        diff = 1;
        delta = c1 - c2;
        stack_len = stack2_len;
    }
    /* (a double cannot tell 2^63-1 from 2^63: the bound is 2^63 itself) */
    if (c1 >= 0x1p63 || c2 >= 0x1p63) {
        err->col = (uint32_t)((c2 >= 0x1p63 ? stack_len : last_at) + 2);
        sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "count is more than " SF_COUNT_MAX_TEXT);
        return 0;
    }
    if (ctx->count_sum + c1 >= 0x1p63 || ctx->count_sum2 + c2 >= 0x1p63) {
        err->col = (uint32_t)(last_at + 2);
        return sf_err_set(err, SF_E_RANGE, UINT64_MAX, "the counts sum past " SF_COUNT_MAX_TEXT);
    }
    ctx->count_sum += c1;
    ctx->count_sum2 += c2;
    orig_len = stack_len;
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
    if (set_sort_key(ctx, line, len, stack, stack_len, orig_len, last_at, diff) < 0)
        return sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "line too long");
    if (ctx->chain) {
        if ((rc = chain_rewrite(ctx, stack, stack_len, &sep_at)) < 0)
            return sf_err_set(err, rc, UINT64_MAX, "stack too long");
        stack = (const char *)ctx->scratch.data;
        stack_len = ctx->scratch.len;
    }
    if (ctx->opt.reverse || ctx->chain || stack_len > UINT32_MAX)
        n = split_frames(ctx, stack, stack_len);
    else
        n = split_incremental(ctx, stack, stack_len, &same);
    if (n < 0)
        return sf_err_set(err, (int)n, UINT64_MAX, "out of memory");
    if (ctx->opt.max_depth && (size_t)n > ctx->opt.max_depth) {
        /* frames max_depth.. become one; the array stays as split (the next line's
         * split reuses it), only the entry that stands for the cut is swapped in */
        size_t keep = ctx->opt.max_depth - 1;
        const char *saved = ctx->frames[keep];
        size_t saved_len = ctx->frame_lens[keep];
        int k =
            snprintf(ctx->cut_name, sizeof(ctx->cut_name), "[\u2026 %zu frames]", (size_t)n - keep);
        ctx->frames[keep] = ctx->cut_name;
        ctx->frame_lens[keep] = (size_t)k;
        rc = layout_add(&ctx->lay, ctx->frames, ctx->frame_lens, keep + 1,
                        same < keep ? same : keep, sep_at, c1, diff, delta);
        ctx->frames[keep] = saved;
        ctx->frame_lens[keep] = saved_len;
        ctx->cut_stacks++;
    } else {
        rc = layout_add(&ctx->lay, ctx->frames, ctx->frame_lens, (size_t)n, same, sep_at, c1, diff,
                        delta);
    }
    if (rc < 0)
        return sf_err_set(err, rc, UINT64_MAX, "out of memory");
    return 1;
}

int folded_read_file(struct fg_ctx *ctx, const char *path)
{
    int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY);
    const char *shown = strcmp(path, "-") == 0 ? "-" : path;
    struct sf_line r;
    struct sf_progress prog;
    struct stat st;
    char *line, msg[512];
    size_t len;
    int rc, ret = 0;

    if (fd < 0) {
        fprintf(stderr, "flamegraph: %s: cannot open: %s\n", shown, strerror(errno));
        return 2;
    }
    if (sf_line_open(&r, fd, 8u << 20) < 0) {
        fprintf(stderr, "flamegraph: out of memory\n");
        return 2;
    }
    sf_progress_start(&prog, sf_opt_want_progress(ctx->opt.quiet) ? stderr : NULL, shown, "B",
                      fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
    while ((rc = sf_line_next(&r, &line, &len)) != 0) {
        struct sf_err err;
        sf_err_clear(&err);
        err.unit = "line";
        err.unit_no = r.lineno;
        if (rc == SF_E_IO) {
            fprintf(stderr, "flamegraph: %s: read error\n", shown);
            ret = 2;
            break;
        }
        if (rc == SF_E_LIMIT)
            sf_err_set(&err, SF_E_LIMIT, r.off, "line longer than 8 MiB skipped");
        else if (len == 0)
            continue; /* blank lines separate nothing in folded input */
        else if (r.lineno == 1 && len > 10 && memcmp(line, "# weight: ", 10) == 0)
            continue; /* spanfold stacks' unit line (flamegraph.pl ignores it as invalid) */
        else if ((rc = folded_add_line(ctx, line, len, &err)) == 1)
            goto next;
        else if (rc < 0) {
            sf_err_format(&err, "flamegraph", shown, msg, sizeof(msg));
            fprintf(stderr, "%s\n", msg);
            ret = 2;
            break;
        }
        if (ctx->bad_lines++ < MAX_REPORTED && !ctx->opt.quiet) {
            sf_err_format(&err, "flamegraph", shown, msg, sizeof(msg));
            fprintf(stderr, "%s\n", msg);
        }
        if (ctx->opt.strict) {
            ret = 2;
            break;
        }
    next:
        if ((r.lineno & 0xffff) == 0)
            sf_progress_update(&prog, r.next_off);
    }
    sf_progress_end(&prog);
    sf_line_close(&r);
    if (fd != STDIN_FILENO)
        close(fd);
    return ret;
}

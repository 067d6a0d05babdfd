/* fold.c - stack assembly, tidying and annotation as stackcollapse-perf.pl does
 * them, and the table of distinct folded stacks.
 *
 * A frame line's symbol is split on "->" (perf's inline notation) into pieces;
 * each piece is tidied (';' -> ':', argument lists and quotes dropped, Java's
 * leading 'L' removed) and annotated (_[i] inlined, _[k] kernel, _[j] JIT).
 * Frames arrive leaf first; a sample's key is "pname;root;...;leaf", built by
 * walking the frame segments backwards.  The table is open addressing with
 * linear probing; it holds one entry per distinct stack, so memory grows with
 * distinct stacks only, never with input size.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, memrchr */
#endif
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "perf_fold.h"
#include "sf_count.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sf_db_perf.h"

int fold_init(struct perf_fold_ctx *c)
{
    sf_buf_init(&c->pname, 1 << 20);
    sf_buf_init(&c->last_id, 1 << 20);
    sf_buf_init(&c->frames, PF_RECORD_MAX);
    sf_buf_init(&c->pend, 1 << 20);
    sf_buf_init(&c->event_filter, 1 << 20);
    sf_buf_init(&c->comm, 1 << 20);
    sf_buf_init(&c->event, 1 << 20);
    sf_buf_init(&c->hdr_events, 1 << 20);
    sf_arena_init(&c->stacks.keys, 1 << 20, PF_TABLE_MAX);
    c->stk_cap = c->stk_pos = 1 << 16;
    c->stk = malloc(c->stk_cap);
    return c->stk ? 0 : SF_E_NOMEM;
}

void fold_free(struct perf_fold_ctx *c)
{
    sf_buf_free(&c->pname);
    sf_buf_free(&c->last_id);
    sf_buf_free(&c->frames);
    sf_buf_free(&c->pend);
    sf_buf_free(&c->event_filter);
    sf_buf_free(&c->comm);
    sf_buf_free(&c->event);
    sf_buf_free(&c->hdr_events);
    free(c->stk);
    fold_table_free(&c->stacks);
    inline_free(c);
}

static int fatal(struct perf_fold_ctx *c, const char *what)
{
    fprintf(stderr, "%s: %s:%llu: %s\n", PF_TOOL, c->file ? c->file : "-",
            (unsigned long long)c->lineno, what);
    c->failed = 1;
    return -1;
}

/* Grow the stack buffer so that n more bytes fit in front. */
static __attribute__((noinline)) int stk_grow(struct perf_fold_ctx *c, size_t n)
{
    size_t used = c->stk_cap - c->stk_pos, ncap = c->stk_cap;
    char *nb;

    while (ncap - used < n)
        ncap *= 2;
    if (ncap > PF_RECORD_MAX)
        return -1;
    if ((nb = malloc(ncap)) == NULL)
        return -1;
    memcpy(nb + ncap - used, c->stk + c->stk_pos, used);
    free(c->stk);
    c->stk = nb;
    c->stk_pos = ncap - used;
    c->stk_cap = ncap;
    return 0;
}

/* Make room for n more bytes in front of the stack. */
static inline int stk_room(struct perf_fold_ctx *c, size_t n)
{
    return n <= c->stk_pos ? 0 : stk_grow(c, n);
}

/* p[0, 9) == "[unknown]", without a library call. */
static inline int is_unknown9(const char *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v == *(const uint64_t *)(const void *)"[unknown" && p[8] == ']';
}

/* Add one frame line's text (";" + p) in front of the stack. */
static int push_seg(struct perf_fold_ctx *c, const void *p, size_t n)
{
    if (stk_room(c, n + 1))
        return -1;
    c->stk_pos -= n + 1;
    c->stk[c->stk_pos] = ';';
    memcpy(c->stk + c->stk_pos + 1, p, n);
    return 0;
}

static int has(const char *p, size_t n, const char *lit)
{
    return memmem(p, n, lit, strlen(lit)) != NULL;
}

/* m:/tmp/perf-\d+\.map: */
static int mod_is_jit(const struct pf_str *m)
{
    const char *p = m->p, *end = m->p + m->n, *hit;

    while ((hit = memmem(p, (size_t)(end - p), "/tmp/perf-", 10)) != NULL) {
        const char *d = hit + 10, *q = d;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q > d && end - q >= 4 && memcmp(q, ".map", 4) == 0)
            return 1;
        p = hit + 1;
    }
    return 0;
}

/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
static int mod_is_kernel(const struct pf_str *m)
{
    if (m->n == 0 || has(m->p, m->n, "unknown"))
        return 0;
    return m->p[0] == '[' || (m->n >= 7 && memcmp(m->p + m->n - 7, "vmlinux", 7) == 0);
}

/* Perl: s/;/:/g, then unless the name looks like a Go method (".(...).") cut at
 * the first '(' not opening "(anonymous namespace)", then tr/"'//d. */
static void tidy(struct sf_buf *b, size_t start)
{
    char *p = (char *)b->data + start;
    size_t n = b->len - start, i, o;
    int special = 0;

    for (i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == ';')
            p[i] = ':';
        else if (ch == '(' || ch == '"' || ch == '\'')
            special = 1;
    }
    if (!special)
        return;
    {
        const char *go = memmem(p, n, ".(", 2);
        int is_go = 0;
        if (go) {
            for (const char *q = go + 2; q + 1 < p + n; q++)
                if (q[0] == ')' && q[1] == '.') {
                    is_go = 1;
                    break;
                }
        }
        if (!is_go) {
            static const char anon[] = "anonymous namespace)";
            for (i = 0; i < n; i++) {
                if (p[i] == '(' && !(n - i - 1 >= sizeof(anon) - 1 &&
                                     memcmp(p + i + 1, anon, sizeof(anon) - 1) == 0)) {
                    n = i;
                    break;
                }
            }
        }
    }
    for (i = o = 0; i < n; i++)
        if (p[i] != '"' && p[i] != '\'')
            p[o++] = p[i];
    b->len = start + o;
}

/* One "->" piece of a frame's symbol into dst (tidied, annotated). */
static int emit_piece(struct perf_fold_ctx *c, struct sf_buf *dst, const char *s, size_t n,
                      size_t idx, const struct pf_frame *f, int *is_unknown)
{
    size_t start = dst->len;
    int rc = 0;

    if (n == 9 && memcmp(s, "[unknown]", 9) == 0) {
        const char *m = "unknown";
        size_t mn = 7;
        if (!(f->mod.n == 9 && memcmp(f->mod.p, "[unknown]", 9) == 0)) {
            const char *slash = memrchr(f->mod.p, '/', f->mod.n);
            m = slash ? slash + 1 : f->mod.p;
            mn = (size_t)(f->mod.p + f->mod.n - m);
        } else {
            *is_unknown = 1;
        }
        rc |= sf_buf_append(dst, "[", 1);
        rc |= sf_buf_append(dst, m, mn);
        if (c->o.addrs) {
            rc |= sf_buf_append(dst, " <", 2);
            rc |= sf_buf_append(dst, f->pc.p, f->pc.n);
            rc |= sf_buf_append(dst, ">", 1);
        }
        rc |= sf_buf_append(dst, "]", 1);
    } else {
        rc |= sf_buf_append(dst, s, n);
    }
    if (rc)
        return -1;
    tidy(dst, start);
    if (c->is_java && dst->len > start && dst->data[start] == 'L' &&
        memchr(dst->data + start, '/', dst->len - start)) {
        memmove(dst->data + start, dst->data + start + 1, dst->len - start - 1);
        dst->len--;
    }
    if (idx > 0) {
        if (!has((char *)dst->data + start, dst->len - start, "_[i]"))
            rc = sf_buf_append(dst, "_[i]", 4);
    } else if (c->o.kernel && mod_is_kernel(&f->mod)) {
        rc = sf_buf_append(dst, "_[k]", 4);
    } else if (c->o.jit && mod_is_jit(&f->mod)) {
        if (!has((char *)dst->data + start, dst->len - start, "_[j]"))
            rc = sf_buf_append(dst, "_[j]", 4);
    }
    return rc ? -1 : 0;
}

#ifdef __SSE2__
static inline __m128i in_range(__m128i v, char lo, char hi)
{
    /* signed compares: bytes >= 0x80 are negative, outside every ASCII range */
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}
#endif

/* s/\+0x[\da-f]+$// */
static void strip_offset(struct pf_str *fn, const struct pf_frame *f)
{
    size_t e = fn->n;

#ifdef __SSE2__
    /* the 16 bytes that end the symbol, when the line holds them */
    if (fn->p + e - 16 >= f->line) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(fn->p + e - 16));
        unsigned hex =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(in_range(v, '0', '9'), in_range(v, 'a', 'f')));
        unsigned other = ~hex & 0xffff;
        if (other) {
            size_t run = 15 - (size_t)(31 - __builtin_clz(other)); /* trailing hex digits */
            e = run < e ? e - run : 0;
            goto check;
        }
    }
#else
    (void)f;
#endif
    while (e > 0 && ((fn->p[e - 1] >= '0' && fn->p[e - 1] <= '9') ||
                     (fn->p[e - 1] >= 'a' && fn->p[e - 1] <= 'f')))
        e--;
#ifdef __SSE2__
check:
#endif
    if (e < fn->n && e >= 3 && fn->p[e - 3] == '+' && fn->p[e - 2] == '0' && fn->p[e - 1] == 'x')
        fn->n = e - 3;
}

/* m/(perf-\d+.map|kernel\.|\[[^\]]+\])/ : modules --inline leaves alone */
static int inline_skips(const struct pf_str *m)
{
    const char *p = m->p, *end = m->p + m->n, *hit;

    if (has(m->p, m->n, "kernel."))
        return 1;
    for (const char *q = p; q + 2 < end; q++)
        if (*q == '[' && q[1] != ']' && memchr(q + 2, ']', (size_t)(end - q - 2)))
            return 1;
    /* \d+ may give digits back to the '.' (any character) */
    while ((hit = memmem(p, (size_t)(end - p), "perf-", 5)) != NULL) {
        const char *d = hit + 5, *q = d;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        for (const char *k = d + 1; k <= q; k++)
            if (end - k >= 4 && memcmp(k + 1, "map", 3) == 0)
                return 1;
        p = hit + 1;
    }
    return 0;
}

static int frame_inline(struct perf_fold_ctx *c, const struct pf_frame *f, int *done)
{
    const char *res;
    size_t n;

    *done = 0;
    if (inline_skips(&f->mod))
        return 0;
    res = inline_lookup(c, &f->pc, &f->func, &f->mod);
    if (res == NULL)
        return fatal(c, "out of memory");
    n = strlen(res);
    if (n == 0 || strcmp(res, "??") == 0 || strcmp(res, "??:??:0") == 0)
        return 0;
    if (push_seg(c, res, n))
        return fatal(c, "sample too large");
    *done = 1;
    return 0;
}

/* Bytes that need the general path: "->" splits, ';' '(' '"' '\'' tidying. */
static const unsigned char slow_byte[256] = {
    ['>'] = 1, [';'] = 1, ['('] = 1, ['"'] = 1, ['\''] = 1,
};

/* "[unknown]" without --addrs: "[dso basename]", or "[unknown]" when the dso
 * is unknown too. */
static int fast_unknown(struct perf_fold_ctx *c, const struct pf_frame *f)
{
    const char *m = f->mod.p, *slash;
    size_t mn = f->mod.n;

    if (c->o.kernel || c->o.jit)
        return 1;
    if (mn == 9 && is_unknown9(m)) {
        m = "unknown";
        mn = 7;
    } else {
        /* one pass from the right: the basename, and no byte that needs tidying */
        for (slash = m + mn; slash > m && slash[-1] != '/'; slash--)
            if (slow_byte[(unsigned char)slash[-1]])
                return 1;
        mn -= (size_t)(slash - m);
        m = slash;
    }
    if (stk_room(c, mn + 3))
        return fatal(c, "sample too large");
    c->stk_pos -= mn + 3;
    memcpy(c->stk + c->stk_pos, ";[", 2);
    memcpy(c->stk + c->stk_pos + 2, m, mn);
    c->stk[c->stk_pos + 2 + mn] = ']';
    return 0;
}

/* The common frame: one piece, nothing to tidy, at most a _[k]/_[j] suffix.
 * Returns 0 when done, 1 when the general path must run, -1 on error. */
static int fast_frame(struct perf_fold_ctx *c, const struct pf_frame *f, const struct pf_str *fn)
{
    const unsigned char *p = (const unsigned char *)fn->p;
    const char *suffix = NULL;
    size_t n = fn->n, i;

    if (n == 0 || (c->is_java && p[0] == 'L'))
        return 1;
    if (p[0] == '[') {
        if (n != 9 || !is_unknown9((const char *)p) || c->o.addrs)
            return 1;
        return fast_unknown(c, f);
    }
    i = 0;
#ifdef __SSE2__
    /* 16 bytes a step, reading on into the rest of the line (" (dso)") when the
     * symbol is shorter; bits past the symbol are masked off */
    for (; i < n && (const char *)p + i + 16 <= f->end; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i m =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('>')),
                                      _mm_cmpeq_epi8(v, _mm_set1_epi8(';'))),
                         _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('(')),
                                      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                   _mm_cmpeq_epi8(v, _mm_set1_epi8('\'')))));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (n - i < 16)
            bits &= (1u << (n - i)) - 1;
        if (bits)
            break; /* let the scalar loop look closer */
    }
    if (i > n)
        i = n;
#endif
    for (; i < n; i++)
        if (slow_byte[p[i]] && (p[i] != '>' || (i && p[i - 1] == '-')))
            return 1;
    if (c->o.kernel && mod_is_kernel(&f->mod))
        suffix = "_[k]";
    else if (c->o.jit && mod_is_jit(&f->mod))
        return 1;
    if (stk_room(c, n + 5))
        return fatal(c, "sample too large");
    if (suffix) {
        c->stk_pos -= 4;
        memcpy(c->stk + c->stk_pos, suffix, 4);
    }
    c->stk_pos -= n + 1;
    c->stk[c->stk_pos] = ';';
    memcpy(c->stk + c->stk_pos + 1, p, n);
    return 0;
}

int fold_frame(struct perf_fold_ctx *c, const struct pf_frame *f)
{
    struct pf_str fn = f->func;
    const char *p, *end, *arrow;
    size_t pieces[2 * 64], np = 0, idx = 0;
    int is_unknown = 0;

    if (c->o.inline_) {
        int done;
        if (frame_inline(c, f, &done))
            return -1;
        if (done)
            return 0;
    }
    strip_offset(&fn, f);
    if (fn.n && fn.p[0] == '(')
        return 0;
    if (!c->o.srcline) {
        int rc = fast_frame(c, f, &fn);
        if (rc <= 0)
            return rc;
    }
    /* split /\->/: leading empty pieces stay, trailing ones go */
    p = fn.p;
    end = fn.p + fn.n;
    for (;;) {
        arrow = memmem(p, (size_t)(end - p), "->", 2);
        if (np == 2 * 64)
            return perfscript_bad(c, "more than 64 \"->\" pieces in one frame");
        pieces[np++] = (size_t)(p - fn.p);
        pieces[np++] = (size_t)((arrow ? arrow : end) - fn.p);
        if (!arrow)
            break;
        p = arrow + 2;
    }
    while (np >= 2 && pieces[np - 1] == pieces[np - 2])
        np -= 2;
    if (np == 0)
        return 0;
    if (c->o.srcline) {
        sf_buf_reset(&c->pend);
        c->npend = c->pend_need = c->pend_done = 0;
        for (idx = 0; idx < np / 2; idx++) {
            size_t st = c->pend.len;
            if (emit_piece(c, &c->pend, fn.p + pieces[2 * idx],
                           pieces[2 * idx + 1] - pieces[2 * idx], idx, f, &is_unknown))
                return fatal(c, "sample too large");
            c->pend_piece[idx] = (struct pf_seg){st, c->pend.len - st};
            if (!is_unknown)
                c->pend_need++;
        }
        c->npend = np / 2;
        return c->pend_need ? 0 : fold_srcline_flush(c);
    }
    sf_buf_reset(&c->frames);
    for (idx = 0; idx < np / 2; idx++) {
        if ((idx && sf_buf_append(&c->frames, ";", 1)) ||
            emit_piece(c, &c->frames, fn.p + pieces[2 * idx], pieces[2 * idx + 1] - pieces[2 * idx],
                       idx, f, &is_unknown))
            return fatal(c, "sample too large");
    }
    if (push_seg(c, c->frames.data, c->frames.len))
        return fatal(c, "sample too large");
    return 0;
}

/* --srcline: drop "[...]" groups (non-greedy), trim white space, then append
 * ":text" to the piece (nothing when the text is empty). */
int fold_srcline(struct perf_fold_ctx *c, const char *s, size_t n)
{
    size_t st = c->pend.len, i = 0, e;
    int rc = 0;

    while (i < n) {
        const char *open = memchr(s + i, '[', n - i);
        const char *close = open ? memchr(open + 1, ']', (size_t)(s + n - open - 1)) : NULL;
        size_t upto = close ? (size_t)(open - s) : n;
        rc |= sf_buf_append(&c->pend, s + i, upto - i);
        i = close ? (size_t)(close - s) + 1 : n;
    }
    if (rc)
        return fatal(c, "source line too long");
    /* trim white space in place */
    {
        char *p = (char *)c->pend.data + st;
        size_t len = c->pend.len - st, b = 0;
        while (b < len && (p[b] == ' ' || (p[b] >= '\t' && p[b] <= '\r')))
            b++;
        e = len;
        while (e > b && (p[e - 1] == ' ' || (p[e - 1] >= '\t' && p[e - 1] <= '\r')))
            e--;
        memmove(p, p + b, e - b);
        c->pend.len = st + (e - b);
    }
    c->pend_src[c->pend_done++] = (struct pf_seg){st, c->pend.len - st};
    if (c->pend_done < c->pend_need)
        return 0;
    return fold_srcline_flush(c);
}

int fold_srcline_flush(struct perf_fold_ctx *c)
{
    int rc = 0;

    sf_buf_reset(&c->frames);
    for (size_t i = 0; i < c->npend; i++) {
        const struct pf_seg *pc = &c->pend_piece[i];
        if (i)
            rc |= sf_buf_append(&c->frames, ";", 1);
        rc |= sf_buf_append(&c->frames, c->pend.data + pc->off, pc->len);
        if (i < c->pend_done && c->pend_src[i].len) {
            rc |= sf_buf_append(&c->frames, ":", 1);
            rc |= sf_buf_append(&c->frames, c->pend.data + c->pend_src[i].off, c->pend_src[i].len);
        }
    }
    c->npend = c->pend_need = c->pend_done = 0;
    if (rc || push_seg(c, c->frames.data, c->frames.len))
        return fatal(c, "sample too large");
    return 0;
}

static int db_sample(struct perf_fold_ctx *c, struct pf_entry *e)
{
    struct sf_perf_sample s;
    struct sf_err err;

    sf_err_clear(&err);
    if (e->db_id == 0 && sf_db_perf_stack(c->db, e->key, e->len, &e->db_id, &err))
        goto fail;
    assert(c->period <= (uint64_t)SF_COUNT_MAX); /* fold_commit checked it */
    s = (struct sf_perf_sample){
        .ts_ns = c->ts_ns < 0 ? SF_DB_NULL : c->ts_ns,
        .pid = c->pid,
        .tid = c->tid,
        .cpu = c->cpu < 0 ? SF_DB_NULL : c->cpu,
        .comm = (const char *)c->comm.data,
        .comm_len = c->comm.len,
        .event = c->event.len ? (const char *)c->event.data : NULL,
        .event_len = c->event.len,
        .period = (int64_t)c->period,
        .stack_id = e->db_id,
    };
    if (sf_db_perf_sample(c->db, c->source_id, &s, &err))
        goto fail;
    c->samples_db++;
    return 0;
fail:
    sf_err_format(&err, PF_TOOL, c->file, c->errbuf, sizeof(c->errbuf));
    fprintf(stderr, "%s\n", c->errbuf);
    c->failed = 1;
    return -1;
}

int fold_commit(struct perf_fold_ctx *c)
{
    struct pf_entry *e;
    size_t len;
    int rc = 0;

    if (stk_room(c, c->pname.len))
        return fatal(c, "sample too large");
    c->stk_pos -= c->pname.len;
    memcpy(c->stk + c->stk_pos, c->pname.data, c->pname.len);
    if (c->side) { /* a scheduler record: its stack is the off-CPU interval's */
        rc = offcpu_commit(c, c->stk + c->stk_pos, c->stk_cap - c->stk_pos);
        c->stk_pos = c->stk_cap;
        c->have_pname = 0;
        return rc;
    }
    /* Half the samples of real recordings repeat the previous sample's stack:
     * that entry is compared first, without hashing or probing the table. */
    e = c->last_entry;
    len = c->stk_cap - c->stk_pos;
    /* --samples: a sample counts 1, so that a gate's statistics see samples */
    uint64_t w = c->o.samples ? 1 : c->period;
    if (c->period > (uint64_t)SF_COUNT_MAX)
        return fatal(c, "the sample's period is more than " SF_COUNT_MAX_TEXT);
    if (e && e->len == len && memcmp(e->key, c->stk + c->stk_pos, len) == 0) {
        if (sf_count_add(&e->count, w) < 0)
            return fatal(c, "the periods of one stack sum past " SF_COUNT_MAX_TEXT);
    } else {
        if ((rc = fold_table_add(&c->stacks, c->stk + c->stk_pos, len, w, &e)) != 0)
            return fatal(c, rc == SF_E_RANGE
                                ? "the periods of one stack sum past " SF_COUNT_MAX_TEXT
                                : "too many distinct stacks (out of memory)");
        c->last_entry = e;
    }
    c->samples++;
    if (c->db)
        rc = db_sample(c, e);
    c->stk_pos = c->stk_cap;
    c->have_pname = 0;
    return rc;
}

int fold_again(struct perf_fold_ctx *c, struct pf_entry *e, uint64_t period)
{
    assert(c->db == NULL && !c->side); /* the callers' contract: no row to write */
    if (period > (uint64_t)SF_COUNT_MAX)
        return fatal(c, "the sample's period is more than " SF_COUNT_MAX_TEXT);
    if (sf_count_add(&e->count, c->o.samples ? 1 : period) < 0)
        return fatal(c, "the periods of one stack sum past " SF_COUNT_MAX_TEXT);
    c->last_entry = e;
    c->samples++;
    return 0;
}

/* ---- the table ---------------------------------------------------------------- */

static int entry_eq(const void *val, const void *key)
{
    const struct pf_entry *e = val;
    const struct pf_str *k = key;

    return e->len == k->n && memcmp(e->key, k->p, k->n) == 0;
}

int fold_table_add(struct pf_table *t, const char *key, size_t len, uint64_t count,
                   struct pf_entry **out)
{
    uint64_t h = sf_hash(key, len);
    struct pf_str k = {key, len};
    struct sf_map_slot *s;
    struct pf_entry *e;

    if (sf_map_reserve(&t->map, 1) < 0)
        return SF_E_NOMEM;
    s = sf_map_probe(&t->map, h, entry_eq, &k);
    if ((e = s->val) != NULL) {
        *out = e;
        return sf_count_add(&e->count, count) < 0 ? SF_E_RANGE : 0;
    }
    e = sf_arena_alloc(&t->keys, sizeof(*e) + (len ? len : 1));
    if (e == NULL)
        return SF_E_LIMIT;
    e->key = (char *)(e + 1);
    memcpy(e->key, key, len);
    e->len = len;
    e->count = count;
    e->db_id = 0;
    sf_map_fill(&t->map, s, h, e);
    *out = e;
    return 0;
}

void fold_table_free(struct pf_table *t)
{
    sf_map_free(&t->map);
    sf_arena_free(&t->keys);
}

/* Perl's `sort { $a cmp $b }` on byte strings: memcmp, then the shorter first. */
static int cmp_entry(const void *a, const void *b)
{
    const struct pf_entry *x = *(struct pf_entry *const *)a, *y = *(struct pf_entry *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);

    if (r)
        return r;
    return x->len < y->len ? -1 : x->len > y->len;
}

int fold_table_print(struct pf_table *t, FILE *out)
{
    struct pf_entry **v;
    size_t k = t->map.n;
    char num[24];

    if (fold_table_sorted(t, &v))
        return SF_E_NOMEM;
    for (size_t i = 0; i < k; i++) {
        char *p = num + sizeof(num);
        uint64_t x = v[i]->count;
        *--p = '\n';
        do
            *--p = (char)('0' + x % 10);
        while ((x /= 10) != 0);
        *--p = ' ';
        fwrite(v[i]->key, 1, v[i]->len, out);
        fwrite(p, 1, (size_t)(num + sizeof(num) - p), out);
    }
    free(v);
    return ferror(out) ? SF_E_IO : 0;
}

struct pf_entry *fold_table_find(const struct pf_table *t, const char *key, size_t len)
{
    struct pf_str k = {key, len};

    return sf_map_find(&t->map, sf_hash(key, len), entry_eq, &k);
}

uint64_t fold_table_total(const struct pf_table *t)
{
    const struct pf_entry *e;
    uint64_t n = 0;

    for (size_t i = 0; (e = fold_table_next(t, &i)) != NULL;)
        n += e->count;
    return n;
}

int fold_table_sorted(const struct pf_table *t, struct pf_entry ***out)
{
    struct pf_entry **v = malloc((t->map.n ? t->map.n : 1) * sizeof(*v)), *e;
    size_t k = 0, i = 0;

    if (v == NULL)
        return SF_E_NOMEM;
    while ((e = fold_table_next(t, &i)) != NULL)
        v[k++] = e;
    qsort(v, k, sizeof(*v), cmp_entry);
    *out = v;
    return 0;
}

/* perfscript.c - streaming parser of `perf script` text, replaying the main loop
 * of FlameGraph's stackcollapse-perf.pl exactly (quirks included) without regexes.
 *
 * Reference: brendangregg/FlameGraph:stackcollapse-perf.pl (commit 41fee1f);
 * layouts: torvalds/linux:tools/perf/builtin-script.c.
 *
 *   java 24636/25607 [000] 94564.109216:     100 cycles:u:       <- event header
 *   \t    7f722d142778 Ljava/io/PrintStream;::print+0x1f (/tmp/perf-19982.map)
 *   \t ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])     <- frames, leaf first
 *   <blank line>                                                  <- end of sample
 *
 * The Perl regexes and what the hand-written matchers below reproduce:
 *   header  ^(\S.+?)\s+(\d+)[/]*(\d+)*\s+          shortest comm that fits
 *   event   :\s*(\d+)*\s+(\S+):\s*$               scanned from the end of the line
 *   frame   ^\s*(\w+)\s*(.+) \((.*)\)             last " (" before the last ")"
 * Perl's \s here is [ \t\n\v\f\r], \w is [A-Za-z0-9_] (byte strings).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, memrchr */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_fold.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sf_clock.h"
#include "sf_db_perf.h"
#include "sf_line.h"
#include "sf_opt.h"
#include "sf_progress.h"
#include "sf_sha256.h"

/* Perl's character classes on byte strings: 1 \s [ \t\n\v\f\r], 2 \d, 4 \w. */
static const unsigned char cclass[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0, 0,
    0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 4,
    0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline int is_ws(unsigned char c)
{
    return cclass[c] & 1;
}

static inline int is_digit(unsigned char c)
{
    return cclass[c] & 2;
}

static inline int is_word(unsigned char c)
{
    return cclass[c] & 4;
}

/* SSE2 (every x86-64) scans 16 bytes a step; the scalar loops finish the
 * tail and give the same answers anywhere else. */
#ifdef __SSE2__
static inline unsigned ws_mask(__m128i v)
{
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
}

static inline __m128i in_range(__m128i v, char lo, char hi)
{
    /* signed compares: bytes >= 0x80 are negative, outside every ASCII range */
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}

static inline unsigned word_mask(__m128i v)
{
    __m128i m = _mm_or_si128(in_range(v, '0', '9'),
                             in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('_'))));
}
#endif

/* First index >= i of s[0..n) that is not Perl white space. */
static inline size_t skip_ws(const char *s, size_t i, size_t n)
{
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16) {
        unsigned m = ws_mask(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        if (m != 0xffff) {
            i += (size_t)__builtin_ctz(~m);
            break;
        }
    }
#endif
    while (i < n && is_ws((unsigned char)s[i]))
        i++;
    return i;
}

/* First index >= i of s[0..n) that is not a \w character. */
static inline size_t skip_word(const char *s, size_t i, size_t n)
{
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16) {
        unsigned m = word_mask(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        if (m != 0xffff)
            return i + (size_t)__builtin_ctz(~m);
    }
#endif
    while (i < n && is_word((unsigned char)s[i]))
        i++;
    return i;
}

/* Last index in [1, lim) of a '(' in s, 0 when there is none.  The module
 * names it skips are short: 16 bytes a step backwards, no library call. */
static inline size_t rfind_open(const char *s, size_t lim)
{
#ifdef __SSE2__
    while (lim >= 17) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + lim - 16));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('(')));
        if (m)
            return lim - 16 + (size_t)(31 - __builtin_clz(m));
        lim -= 16;
    }
#endif
    while (lim > 1) {
        lim--;
        if (s[lim] == '(')
            return lim;
    }
    return 0;
}

/* The event regex, matched from the end: the last token must be "X:" with X
 * non-empty, preceded by white space, optionally by a digit run (the period)
 * with white space before it, and then by ':'. */
static void header_event(const char *s, size_t n, struct pf_header *h)
{
    size_t z = n, w0, v, u, t;

    h->has_event = 0;
    h->tp_args = 0;
    h->event.n = 0;
    h->period.n = 0;
    while (z > 0 && is_ws((unsigned char)s[z - 1]))
        z--;
    if (z < 2 || s[z - 1] != ':')
        return;
    w0 = z - 1;
    while (w0 > 0 && !is_ws((unsigned char)s[w0 - 1]))
        w0--;
    if (w0 == 0 || w0 == z - 1)
        return;
    v = w0;
    while (v > 0 && is_ws((unsigned char)s[v - 1]))
        v--;
    if (v == 0)
        return;
    if (s[v - 1] == ':') {
        h->period.p = s + v;
        h->ev_from = v - 1;
    } else if (is_digit((unsigned char)s[v - 1])) {
        u = v - 1;
        while (u > 0 && is_digit((unsigned char)s[u - 1]))
            u--;
        t = u;
        while (t > 0 && is_ws((unsigned char)s[t - 1]))
            t--;
        if (t == 0 || s[t - 1] != ':')
            return;
        h->period.p = s + u;
        h->period.n = v - u;
        h->ev_from = t - 1;
    } else {
        return;
    }
    h->has_event = 1;
    h->event.p = s + w0;
    h->event.n = z - 1 - w0;
}

int perfscript_header(const char *s, size_t n, struct pf_header *h)
{
    if (n < 3 || is_ws((unsigned char)s[0]))
        return 0;
    /* (\S.+?) is lazy: try each end e >= 2 where white space starts.  Every e
     * inside one run of white space sees the same digits after the run, so a
     * failed run is skipped whole (linear time on any line). */
    for (size_t e = 2; e < n;) {
        size_t a, d, t, t2;

        if (!is_ws((unsigned char)s[e])) {
            e++;
            continue;
        }
        for (a = e; a < n && is_ws((unsigned char)s[a]); a++)
            ;
        for (d = a; d < n && is_digit((unsigned char)s[d]); d++)
            ;
        if (d > a) {
            for (t = d; t < n && s[t] == '/'; t++)
                ;
            for (t2 = t; t2 < n && is_digit((unsigned char)s[t2]); t2++)
                ;
            if (t2 < n && is_ws((unsigned char)s[t2])) {
                h->comm = (struct pf_str){s, e};
                h->pid = (struct pf_str){s + a, d - a};
                h->tid = (struct pf_str){s + t, t2 - t};
                h->num1 = h->pid;
                h->num2 = h->tid;
                /* Perl: `if (not $tid)` - absent or "0" means "pid is the tid" */
                if (h->tid.n == 0 || (h->tid.n == 1 && h->tid.p[0] == '0')) {
                    h->tid = h->pid;
                    h->pid.n = 0;
                }
                header_event(s, n, h);
                h->ts_ns = -1;
                h->cpu = -1;
                return 1;
            }
        }
        e = a;
    }
    return 0;
}

/* After the time stamp: "[period] event: fields", the way perf script prints a
 * tracepoint; the event regex (from the line's end) cannot see it. */
static void middle_event(const char *p, const char *end, struct pf_header *h)
{
    const char *tok;

    for (int k = 0; k < 2; k++) { /* the period, then the event */
        while (p < end && is_ws((unsigned char)*p))
            p++;
        tok = p;
        while (p < end && !is_ws((unsigned char)*p))
            p++;
        if (p - tok >= 2 && p[-1] == ':') {
            h->event = (struct pf_str){tok, (size_t)(p - tok) - 1};
            while (p < end && is_ws((unsigned char)*p))
                p++;
            h->tp_args = p < end;
            h->args = (struct pf_str){p, (size_t)(end - p)};
            return;
        }
        if (tok == p || !is_digit((unsigned char)*tok))
            return;
    }
}

void perfscript_header_detail(const char *s, size_t n, struct pf_header *h)
{
    /* Fields after the pid/tid: "[cpu]" and "sec.frac:" in that order, others
     * (flags, ...) skipped.  Stop at the time stamp. */
    const char *p = h->tid.p + h->tid.n;
    const char *end = s + n;

    if (h->pid.n && h->pid.p > h->tid.p)
        p = h->pid.p + h->pid.n;
    while (p < end) {
        const char *tok;
        size_t len;

        while (p < end && is_ws((unsigned char)*p))
            p++;
        tok = p;
        while (p < end && !is_ws((unsigned char)*p))
            p++;
        len = (size_t)(p - tok);
        if (len >= 3 && tok[0] == '[' && tok[len - 1] == ']') {
            int64_t v = 0;
            size_t i;
            for (i = 1; i < len - 1 && is_digit((unsigned char)tok[i]) && v < 1000000; i++)
                v = v * 10 + (tok[i] - '0');
            if (i == len - 1)
                h->cpu = (int)v;
        } else if (len >= 2 && tok[len - 1] == ':' && is_digit((unsigned char)tok[0])) {
            int64_t ns;
            if (sf_clock_parse_ts(tok, len - 1, &ns) == 0)
                h->ts_ns = ns;
            if (!h->has_event)
                middle_event(p, end, h);
            return;
        }
    }
}

/* The frame regex; inlined into the line loop, exported as perfscript_frame(). */
static inline __attribute__((always_inline)) int match_frame(const char *s, size_t n,
                                                             struct pf_frame *f)
{
    size_t s0 = 0, w, k, q, j, r, p;
    const char *rp;

    s0 = skip_ws(s, 0, n);
    w = skip_word(s, s0, n);
    w -= s0;
    if (w == 0)
        return 0;
    /* (.*)\) is greedy: the module ends at the last ')'; (.+) \( is greedy too:
     * the symbol ends at the last " (" before it. */
    /* usually the very last byte */
    rp = n && s[n - 1] == ')' ? s + n - 1 : memrchr(s, ')', n);
    if (rp == NULL)
        return 0;
    r = (size_t)(rp - s);
    if (r < 2)
        return 0;
    for (size_t lim = r;;) { /* a '(' in [1, lim) with a space before it */
        p = rfind_open(s, lim);
        if (p == 0)
            return 0;
        if (s[p - 1] == ' ')
            break;
        lim = p;
    }
    p--; /* p = the space of " (" */
    /* Backtracking of (\w+)\s*: the symbol needs one character before " (". */
    if (p < s0 + 2)
        return 0;
    k = w < p - 1 - s0 ? w : p - 1 - s0;
    q = s0 + k;
    j = 0;
    if (k == w) {
        while (q + j < p - 1 && is_ws((unsigned char)s[q + j]))
            j++;
    }
    f->pc = (struct pf_str){s + s0, k};
    f->func = (struct pf_str){s + q + j, p - q - j};
    f->mod = (struct pf_str){s + p + 2, r - p - 2};
    f->line = s;
    f->end = s + n;
    return 1;
}

int perfscript_frame(const char *s, size_t n, struct pf_frame *f)
{
    return match_frame(s, n, f);
}

int perfscript_bad(struct perf_fold_ctx *c, const char *fmt, ...)
{
    struct sf_err err;
    char msg[SF_ERR_MSG_MAX];
    va_list ap;

    c->bad_lines++;
    if (c->bad_lines <= PF_SHOW_ERRORS || c->o.strict) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        sf_err_clear(&err);
        err.code = SF_E_MALFORMED;
        err.unit = "line";
        err.unit_no = c->lineno;
        snprintf(err.msg, sizeof(err.msg), "%s", msg);
        sf_err_format(&err, PF_TOOL, c->file, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
    }
    if (c->o.strict) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* A printable excerpt of a bad line for messages. */
static const char *excerpt(char *out, size_t outsz, const char *s, size_t n)
{
    size_t i, o = 0;

    for (i = 0; i < n && o + 5 < outsz && o < 40; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f) {
            out[o++] = (char)ch;
        } else {
            snprintf(out + o, outsz - o, "\\x%02x", ch);
            o += 4;
        }
    }
    if (i < n && o + 4 < outsz)
        out[o++] = '.', out[o++] = '.', out[o++] = '.';
    out[o] = 0;
    return out;
}

/* A comment line: stackcollapse skips it; --db takes the clock from it. */
/* "# event : name = NAME, , id = { ... }, type = T, ..." (perf script --header):
 * remember whether NAME is a tracepoint (type 2, PERF_TYPE_TRACEPOINT). */
static int header_event_desc(struct perf_fold_ctx *c, const char *s, size_t n)
{
    static const char key[] = "# event : name = ";
    const char *name = s + sizeof(key) - 1, *end = s + n, *ne, *ty;
    char kind;

    ne = memmem(name, (size_t)(end - name), ", id = ", 7);
    ty = memmem(name, (size_t)(end - name), ", type = ", 9);
    if (ty == NULL)
        return 0;
    if (ne == NULL || ne > ty)
        ne = ty;
    while (ne - name >= 2 && ne[-2] == ',' && ne[-1] == ' ')
        ne -= 2; /* "name = cpu-clock, , id = " */
    if (ne == name)
        return 0;
    kind = ty + 9 < end && ty[9] == '2' && (ty + 10 == end || !is_digit((unsigned char)ty[10]))
               ? 'T'
               : 'S';
    if ((c->hdr_events.len == 0 && sf_buf_append(&c->hdr_events, "\n", 1)) ||
        sf_buf_append(&c->hdr_events, &kind, 1) ||
        sf_buf_append(&c->hdr_events, name, (size_t)(ne - name)) ||
        sf_buf_append(&c->hdr_events, "\n", 1))
        return -1;
    return 0;
}

static int comment_line(struct perf_fold_ctx *c, const char *s, size_t n)
{
    static const char key[] = "# clockid: ", evkey[] = "# event : name = ";
    const char *dom;
    struct sf_err err;

    if (c->db && n > sizeof(evkey) - 1 && memcmp(s, evkey, sizeof(evkey) - 1) == 0)
        return header_event_desc(c, s, n);
    if (c->db == NULL || c->o.clock || n <= sizeof(key) - 1 || memcmp(s, key, sizeof(key) - 1))
        return 0;
    dom = sf_clock_domain(s + sizeof(key) - 1, n - (sizeof(key) - 1));
    sf_err_clear(&err);
    if (sf_db_source_set_clock(c->db, c->source_id, dom, &err)) {
        sf_err_format(&err, PF_TOOL, c->file, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        c->failed = 1;
        return -1;
    }
    return 0;
}

static int set_str(struct sf_buf *b, const char *p, size_t n)
{
    sf_buf_reset(b);
    if (sf_buf_append(b, p, n) || sf_buf_append(b, "", 1))
        return -1;
    b->len--;
    return 0;
}

/* Perl: `if (not $period) { $period = 1 }` - absent or "0" counts 1. */
static uint64_t period_value(const struct pf_str *p)
{
    uint64_t v = 0;

    if (p->n == 0 || (p->n == 1 && p->p[0] == '0'))
        return 1;
    for (size_t i = 0; i < p->n; i++) {
        if (v > (UINT64_MAX - 9) / 10)
            return UINT64_MAX;
        v = v * 10 + (uint64_t)(p->p[i] - '0');
    }
    return v;
}

/* A pid or tid as printed (digits only); SF_DB_NULL when absurdly long. */
static int64_t dec_value(const struct pf_str *p)
{
    int64_t v = 0;

    for (size_t i = 0; i < p->n; i++) {
        if (v > (INT64_MAX - 9) / 10)
            return SF_DB_NULL;
        v = v * 10 + (p->p[i] - '0');
    }
    return v;
}

/* stackcollapse-perf.pl's $pname: comm[-pid[/tid]], spaces made '_'. */
static int build_pname(struct perf_fold_ctx *c, const struct pf_header *h)
{
    int rc;

    sf_buf_reset(&c->pname);
    rc = sf_buf_append(&c->pname, h->comm.p, h->comm.n);
    if (c->o.tid || c->o.pid) {
        rc |= sf_buf_append(&c->pname, "-", 1);
        if (h->pid.n)
            rc |= sf_buf_append(&c->pname, h->pid.p, h->pid.n);
        else
            rc |= sf_buf_append(&c->pname, "?", 1);
        if (c->o.tid) {
            rc |= sf_buf_append(&c->pname, "/", 1);
            rc |= sf_buf_append(&c->pname, h->tid.p, h->tid.n);
        }
    }
    for (size_t i = 0; i < c->pname.len; i++)
        if (c->pname.data[i] == ' ')
            c->pname.data[i] = '_';
    c->is_java = c->pname.len >= 4 && memcmp(c->pname.data, "java", 4) == 0;
    return rc ? -1 : 0;
}

/* Bits of the bytes of p[0, 32) that equal ref's. */
static inline uint32_t same32(const char *p, const unsigned char *ref)
{
#ifdef __SSE2__
    __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    __m128i b0 = _mm_loadu_si128((const __m128i *)(const void *)ref);
    __m128i b1 = _mm_loadu_si128((const __m128i *)(const void *)(ref + 16));
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0)) |
           (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1)) << 16;
#else
    uint32_t m = 0;
    for (unsigned i = 0; i < 32; i++)
        m |= (uint32_t)((unsigned char)p[i] == ref[i]) << i;
    return m;
#endif
}

/* 1 when s is a header that parses as the cached one (see struct pf_hcache). */
static inline int hcache_hit(const struct pf_hcache *hc, const char *s, size_t n)
{
    return hc->valid && n >= 32 && (~same32(s, hc->pre) & hc->pmask) == 0 &&
           (~same32(s + n - 32, hc->tail) & hc->tmask) == 0;
}

/* Remember a header parsed in full and what event_line() made of it. */
static void hcache_fill(struct perf_fold_ctx *c, const char *s, size_t n, const struct pf_header *h,
                        int pass)
{
    struct pf_hcache *hc = &c->hc;
    size_t plen = (size_t)(h->num2.p - s) + h->num2.n + 1, tlen = n - h->ev_from;

    hc->valid = 0;
    if (c->db || !h->has_event || n < 32 || plen > 32 || tlen > 32)
        return;
    memcpy(hc->pre, s, 32);
    memcpy(hc->tail, s + n - 32, 32);
    hc->pmask = plen == 32 ? UINT32_MAX : ((uint32_t)1 << plen) - 1;
    hc->tmask = UINT32_MAX << (32 - tlen);
    hc->pass = pass;
    hc->period = c->period;
    hc->valid = 1;
}

/* Is the event a tracepoint?  As the header's event descriptions say; without
 * them, when the line printed its fields after it, or when it is spelled
 * "subsystem:name" with a name that is not a set of event modifiers (cycles:u,
 * cpu-clock:ppp are sampling events). */
static int is_tracepoint(const struct perf_fold_ctx *c, const struct pf_header *h)
{
    static const char mods[] = "ukhIGHpPSDWeb";
    const char *col;
    char key[sizeof(((struct pf_event_count *)0)->name) + 3];

    if (c->hdr_events.len && h->event.n + 3 <= sizeof(key)) {
        key[0] = '\n';
        memcpy(key + 2, h->event.p, h->event.n);
        key[h->event.n + 2] = '\n';
        for (int k = 0; k < 2; k++) {
            key[1] = "TS"[k];
            if (memmem(c->hdr_events.data, c->hdr_events.len, key, h->event.n + 3))
                return k == 0;
        }
    }
    if (h->tp_args)
        return 1;
    col = memrchr(h->event.p, ':', h->event.n);
    if (col == NULL || col == h->event.p)
        return 0;
    for (const char *q = col + 1; q < h->event.p + h->event.n; q++)
        if (!memchr(mods, *q, sizeof(mods) - 1))
            return 1;
    return 0;
}

/* --db: the samples table holds the CPU profile, one sampling event: --event-filter's,
 * else the source's first sampling event.  Tracepoints and other events are counted
 * per source (sample_events) and kept out.  *pass gets 1 to store the sample, 0 to
 * skip it, -1 for no memory; returns 0 when *pass is -1, else 1. */
static int db_event_pass(struct perf_fold_ctx *c, const struct pf_header *h, int *pass)
{
    struct pf_event_count *e = NULL;

    *pass = 1;
    if (h->event.n == 0)
        return 1; /* perf script -F without event: every sample is one */
    if (c->ev_last < c->nevs && c->evs[c->ev_last].len == h->event.n &&
        memcmp(c->evs[c->ev_last].name, h->event.p, h->event.n) == 0)
        e = &c->evs[c->ev_last];
    for (size_t i = 0; e == NULL && i < c->nevs; i++)
        if (c->evs[i].len == h->event.n && memcmp(c->evs[i].name, h->event.p, h->event.n) == 0)
            e = &c->evs[c->ev_last = i];
    if (e == NULL && c->nevs < PF_EVENTS_MAX && h->event.n < sizeof(e->name)) {
        e = &c->evs[c->ev_last = c->nevs++];
        memcpy(e->name, h->event.p, h->event.n);
        e->name[h->event.n] = 0;
        e->len = h->event.n;
        e->tracepoint = is_tracepoint(c, h);
        e->records = 0;
        if (!c->event_set && !e->tracepoint) {
            if (set_str(&c->event_filter, h->event.p, h->event.n)) {
                *pass = -1;
                return 0;
            }
            c->event_set = 1;
        }
        e->stored = c->event_set && h->event.n == c->event_filter.len &&
                    memcmp(h->event.p, c->event_filter.data, h->event.n) == 0;
    }
    if (e == NULL) {
        c->evs_more++;
        *pass = c->event_set && h->event.n == c->event_filter.len &&
                memcmp(h->event.p, c->event_filter.data, h->event.n) == 0;
        return 1;
    }
    e->records++;
    *pass = e->stored;
    return 1;
}

/* Returns 0 (*pass: 1 when the header opens a sample, 0 when its event is
 * filtered out) or -1 (no memory). */
static int event_line(struct perf_fold_ctx *c, const char *s, size_t n, struct pf_header *h,
                      int *pass)
{
    size_t idn;

    *pass = 0;
    if (c->db) {
        int side;
        perfscript_header_detail(s, n, h);
        if ((side = offcpu_header(c, h)) < 0 || !db_event_pass(c, h, pass))
            return -1;
        if (!*pass && !side)
            return 0;
        /* a scheduler record's stack goes to offcpu.c, unless it is the profile asked for */
        c->side = *pass ? 0 : side;
        *pass = 0;
    } else if (h->has_event) {
        if (!c->event_set) {
            if (set_str(&c->event_filter, h->event.p, h->event.n))
                return -1;
            c->event_set = c->event_defaulted = 1;
        } else if (h->event.n != c->event_filter.len ||
                   memcmp(h->event.p, c->event_filter.data, h->event.n) != 0) {
            if (c->event_defaulted && !c->event_warned && !c->o.quiet)
                fprintf(stderr,
                        "%s: %s: several event types; folding only '%s' "
                        "(as stackcollapse-perf.pl; choose with --event-filter)\n",
                        PF_TOOL, c->file, (const char *)c->event_filter.data);
            c->event_warned = 1;
            return 0; /* filtered: $pname stays what it was */
        }
    }
    c->period = period_value(&h->period);
    /* Most headers repeat the previous one's comm and ids: keep that pname. */
    idn = (size_t)((h->num2.n ? h->num2.p + h->num2.n : h->num1.p + h->num1.n) - s);
    if (c->last_id.len != idn || idn == 0 || memcmp(c->last_id.data, s, idn) != 0) {
        if (build_pname(c, h) || set_str(&c->last_id, s, idn))
            return -1;
    }
    c->have_pname = 1;
    *pass = 1;
    if (c->db) {
        c->ts_ns = h->ts_ns;
        c->cpu = h->cpu;
        c->pid = h->num2.n ? dec_value(&h->num1) : SF_DB_NULL;
        c->tid = dec_value(h->num2.n ? &h->num2 : &h->num1);
        if (set_str(&c->comm, h->comm.p, h->comm.n) ||
            set_str(&c->event, h->event.n ? h->event.p : "", h->event.n))
            return -1;
    }
    return 0;
}

int perfscript_line(struct perf_fold_ctx *c, char *s, size_t n)
{
    struct pf_header h;
    struct pf_frame f;
    char ex[64];

    if (c->pend_need > c->pend_done)
        return fold_srcline(c, s, n);
    if (n && s[0] == '#')
        return comment_line(c, s, n);
    if (n == 0) {
        if (!c->have_pname)
            return 0;
        return fold_commit(c);
    }
    /* A header never starts with white space; a frame line almost always does. */
    if (is_ws((unsigned char)s[0]))
        goto frame;
    if (c->db == NULL && hcache_hit(&c->hc, s, n)) {
        if (c->hc.pass) {
            c->period = c->hc.period;
            c->have_pname = 1;
        }
        return 0;
    }
    if (perfscript_header(s, n, &h)) {
        int pass;
        if (event_line(c, s, n, &h, &pass))
            return -1;
        hcache_fill(c, s, n, &h, pass);
        return 0;
    }
frame:
    if (match_frame(s, n, &f)) {
        if (!c->have_pname)
            return 0;
        if (c->side)
            offcpu_frame(c, &f);
        return fold_frame(c, &f);
    }
    return perfscript_bad(c, "unrecognized line: %s", excerpt(ex, sizeof(ex), s, n));
}

static void tap_read(void *ctx, const void *p, size_t n)
{
    sf_sha256_update(&((struct pf_hash_tap *)ctx)->sha, p, n);
}

static int db_begin(struct perf_fold_ctx *c, const char *path, int fd, struct pf_hash_tap *tap)
{
    struct sf_source_info in = {.kind = "perf", .path = path, .tool = PF_TOOL, .clock = c->o.clock};
    struct sf_err err;
    struct stat sb;
    int64_t dup = 0;
    int rc;

    sf_err_clear(&err);
    /* hashed while read (the hash is set at the end); a file's size lets
     * sf_db_source_begin tell a re-ingest before it is read */
    if (fd != 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
        in.bytes = (uint64_t)sb.st_size;
    tap->sized = in.bytes != 0;
    if (sf_sha256_init(&tap->sha) == 0)
        tap->on = 1;
    rc = sf_db_source_begin(c->db, &in, &c->source_id, &dup, &err);
    if (rc == SF_E_DUP) {
        fprintf(stderr,
                "%s: %s: already in the database as source %lld (same sha256); "
                "folded, not stored again\n",
                PF_TOOL, path, (long long)dup);
        return 1;
    }
    if (rc) {
        sf_err_format(&err, PF_TOOL, path, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        return -1;
    }
    return 0;
}

/* The source's events into sample_events; what was kept out said unless --quiet. */
static int db_events(struct perf_fold_ctx *c, const char *path, struct sf_err *err)
{
    char out[400];
    size_t k = 0;
    int rc;

    out[0] = 0;
    for (size_t i = 0; i < c->nevs; i++) {
        const struct pf_event_count *e = &c->evs[i];
        if ((rc = sf_db_perf_event(c->db, c->source_id, e->name, e->len, e->tracepoint, e->records,
                                   e->stored, err)))
            return rc;
        if (!e->stored && k < sizeof(out))
            k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%llu %s%s", k ? ", " : "",
                                  (unsigned long long)e->records, e->name,
                                  e->tracepoint ? "" : " (a second sampling event)");
    }
    if (c->evs_more && k < sizeof(out))
        k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%llu of further events", k ? ", " : "",
                              (unsigned long long)c->evs_more);
    if (k && !c->o.quiet)
        fprintf(stderr,
                "%s: %s: not CPU samples, kept out of the samples table (sample_events counts "
                "them): %s%s\n",
                PF_TOOL, path, out, c->event_set ? "" : "; no sampling event: no CPU profile");
    return 0;
}

static int db_end(struct perf_fold_ctx *c, const char *path, struct pf_hash_tap *tap,
                  uint64_t bytes, const char *error)
{
    char hex[SF_SHA256_HEX_LEN + 1], sum[96];
    struct sf_err err;
    int64_t dup = 0;
    int rc = 0;

    sf_err_clear(&err);
    if (tap->on && !(error && tap->sized)) {
        tap->on = 0;
        sf_sha256_final_hex(&tap->sha, hex);
        rc = sf_db_source_set_hash(c->db, c->source_id, hex, bytes, &dup, &err);
        if (rc == SF_E_DUP) {
            fprintf(stderr,
                    "%s: %s: already in the database as source %lld (same sha256); "
                    "not stored again\n",
                    PF_TOOL, path, (long long)dup);
            return 0;
        }
    }
    if (error == NULL && c->bad_lines) {
        snprintf(sum, sizeof(sum), "%llu bad lines", (unsigned long long)c->bad_lines);
        error = sum;
    }
    if (rc == 0)
        rc = db_events(c, path, &err);
    if (rc == 0)
        rc = sf_db_source_end(c->db, c->source_id, error, c->lines, c->bad_lines, &err);
    if (rc) {
        sf_err_format(&err, PF_TOOL, path, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        return -1;
    }
    return 0;
}

static int read_lines(struct perf_fold_ctx *c, struct sf_line *r, struct sf_progress *pg)
{
    char *s, ex[64];
    size_t n;
    int rc;

    while ((rc = sf_line_get(r, &s, &n)) != 0) {
        c->lineno = r->lineno;
        c->lines++;
        if (rc == SF_E_LIMIT) {
            if (perfscript_bad(c, "line longer than %zu bytes skipped", r->max_line))
                return -1;
            continue;
        }
        if (rc < 0) {
            fprintf(stderr, "%s: %s:%llu: read error: %s\n", PF_TOOL, c->file,
                    (unsigned long long)r->lineno, strerror(errno));
            c->failed = 1;
            return -1;
        }
        if (perfscript_line(c, s, n))
            return -1;
        if ((c->lines & 0xffff) == 0)
            sf_progress_update(pg, r->bytes_read);
        if (r->unterminated && !c->o.quiet)
            fprintf(stderr, "%s: %s:%llu: last line has no newline (truncated input?): %s\n",
                    PF_TOOL, c->file, (unsigned long long)r->lineno, excerpt(ex, sizeof(ex), s, n));
    }
    return 0;
}

int perf_source_begin(struct perf_fold_ctx *c, const char *path, int fd, struct pf_source *src)
{
    int rc;

    memset(src, 0, sizeof(*src));
    src->db = c->db;
    c->lines = c->bad_lines = 0;
    c->lineno = 0;
    if (c->db == NULL)
        return 0;
    if ((rc = db_begin(c, path, fd, &src->tap)) != 0) {
        if (rc < 0)
            return -1;
        c->db = NULL; /* already stored: fold it, store nothing */
        return 1;
    }
    /* each source picks its own sampling event */
    c->nevs = c->ev_last = 0;
    c->evs_more = 0;
    sf_buf_reset(&c->hdr_events);
    if (!(c->o.event_filter && c->o.event_filter[0]))
        c->event_set = 0;
    return 0;
}

int perf_source_end(struct perf_fold_ctx *c, const char *path, struct pf_source *src,
                    uint64_t bytes, const char *error)
{
    int rc = 0;

    if (c->bad_lines > PF_SHOW_ERRORS && !c->o.strict)
        fprintf(stderr, "%s: %s: %llu bad lines in all (first %d shown), skipped\n", PF_TOOL,
                c->file, (unsigned long long)c->bad_lines, PF_SHOW_ERRORS);
    c->total_bad += c->bad_lines;
    if (c->db) {
        uint64_t stored, open;
        offcpu_finish(c, &stored, &open);
        if (open && !c->o.quiet)
            fprintf(stderr,
                    "%s: %s: %llu threads left their CPU and had no record after it (they "
                    "exited, or the recording ended): those intervals have no end and are not "
                    "stored (%llu are)\n",
                    PF_TOOL, c->file, (unsigned long long)open, (unsigned long long)stored);
    }
    if (c->db && db_end(c, path, &src->tap, bytes, error))
        rc = -1;
    if (src->tap.on)
        sf_sha256_abort(&src->tap.sha);
    src->tap.on = 0;
    c->db = src->db;
    return rc;
}

int perfscript_file(struct perf_fold_ctx *c, const char *path)
{
    struct pf_source src;
    struct sf_progress pg;
    struct sf_line r;
    struct stat sb;
    int fd = 0, rc;

    c->file = strcmp(path, "-") == 0 ? "-" : path;
    if (fd == 0 && strcmp(path, "-") != 0 && (fd = open(path, O_RDONLY)) < 0) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", PF_TOOL, path, strerror(errno));
        return -1;
    }
    if (perf_source_begin(c, path, fd, &src) < 0) {
        if (fd)
            close(fd);
        return -1;
    }
    if (sf_line_open(&r, fd, 0)) {
        fprintf(stderr, "%s: out of memory\n", PF_TOOL);
        perf_source_end(c, path, &src, 0, "out of memory");
        if (fd)
            close(fd);
        return -1;
    }
    if (src.tap.on) {
        r.on_read = tap_read;
        r.on_read_ctx = &src.tap;
    }
    sf_progress_start(&pg, sf_opt_want_progress(c->o.quiet) ? stderr : NULL, path, "B",
                      fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0);
    rc = read_lines(c, &r, &pg);
    /* --eof: a file's unterminated last sample is counted (and stored) with it */
    if (rc == 0 && c->o.eof && perfscript_finish(c))
        rc = -1;
    sf_progress_end(&pg);
    if (perf_source_end(c, path, &src, r.bytes_read, rc ? "stopped at a bad line" : NULL))
        rc = -1;
    sf_line_close(&r);
    if (fd)
        close(fd);
    return rc;
}

int perfscript_finish(struct perf_fold_ctx *c)
{
    if (c->pend_need > c->pend_done && fold_srcline_flush(c))
        return -1;
    if (!c->have_pname)
        return 0;
    if (c->o.eof)
        return fold_commit(c);
    if (!c->o.quiet)
        fprintf(stderr,
                "%s: %s:%llu: the last sample has no blank line after it: not counted, "
                "as stackcollapse-perf.pl does (--eof counts it)\n",
                PF_TOOL, c->file, (unsigned long long)c->lineno);
    return 0;
}

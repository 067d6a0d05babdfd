/* sf_line.h - fast line reader for multi-gigabyte text inputs.
 *
 * Reads a file descriptor in large blocks and hands out lines in place: no
 * allocation and no library call per line (newlines are found 64 bytes at a
 * time).  Lines are returned without their '\n' and NUL-terminated in the
 * reader's buffer (valid until the next call).
 * A line longer than max_line is reported once as SF_E_LIMIT and skipped, so one
 * bad line cannot make memory grow.
 *
 *   struct sf_line r; char *s; size_t n; int rc;
 *   sf_line_open(&r, fd, 0);
 *   while ((rc = sf_line_next(&r, &s, &n)) > 0) use(s, n, r.lineno);
 *   if (rc < 0) report(r.lineno, r.off);
 *   sf_line_close(&r);
 */
#ifndef SF_LINE_H
#define SF_LINE_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define SF_LINE_MAX_DEFAULT (1u << 20) /* 1 MiB */

struct sf_line {
    int fd;
    char *buf;
    size_t cap;          /* buffer size */
    size_t pos;          /* start of unread data */
    size_t fill;         /* end of valid data */
    size_t max_line;     /* longest accepted line */
    uint64_t lineno;     /* 1-based number of the line last returned */
    uint64_t off;        /* input offset of that line's first byte */
    uint64_t next_off;   /* input offset of buf[pos] */
    uint64_t bytes_read; /* total bytes read from fd */
    int eof;             /* fd reached end of file */
    int unterminated;    /* the line last returned had no '\n' (end of input) */
    /* Called with every block read, e.g. to hash stdin while parsing it. */
    void (*on_read)(void *ctx, const void *p, size_t n);
    void *on_read_ctx;
    /* scanning state (private): newlines of buf[nl_base, nl_base + 64) not yet
     * handed out, as bits; buf[pos, scan) has been scanned */
    uint64_t nl_mask;
    size_t nl_base, scan;
};

/* Prepare to read fd (not closed by the reader).  max_line 0 means
 * SF_LINE_MAX_DEFAULT.  Returns 0 or SF_E_NOMEM. */
int sf_line_open(struct sf_line *r, int fd, size_t max_line);

/* Next line: returns 1 and sets *line and *len, 0 at end of input, SF_E_LIMIT for a
 * line over max_line (skipped; lineno/off name it; the next call goes on after
 * it), or SF_E_IO on a read error (errno is kept). */
int sf_line_next(struct sf_line *r, char **line, size_t *len);

/* sf_line_next() with its common case inline, for the hottest loops: a line
 * whose '\n' is already found costs no call.  Same results, same contract. */
static inline int sf_line_get(struct sf_line *r, char **line, size_t *len)
{
#ifdef __SSE2__
    while (r->nl_mask == 0 && r->fill - r->scan >= 64) {
        const __m128i nl = _mm_set1_epi8('\n');
        const __m128i *p = (const __m128i *)(const void *)(r->buf + r->scan);
        uint64_t m0 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p), nl));
        uint64_t m1 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p + 1), nl));
        uint64_t m2 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p + 2), nl));
        uint64_t m3 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p + 3), nl));
        r->nl_mask = m0 | m1 << 16 | m2 << 32 | m3 << 48;
        r->nl_base = r->scan;
        r->scan += 64;
    }
#endif
    if (r->nl_mask) {
        size_t e = r->nl_base + (size_t)__builtin_ctzll(r->nl_mask), n = e - r->pos;
        if (n <= r->max_line) {
            char *start = r->buf + r->pos;
            r->nl_mask &= r->nl_mask - 1;
            r->lineno++;
            r->off = r->next_off;
            r->next_off += n + 1;
            r->pos = e + 1;
            r->unterminated = 0;
            start[n] = 0;
            *line = start;
            *len = n;
            return 1;
        }
    }
    return sf_line_next(r, line, len);
}

/* Free the buffer. */
void sf_line_close(struct sf_line *r);

#endif

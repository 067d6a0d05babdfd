/* sf_line.c - block-buffered line reader (see sf_line.h).
 *
 * Line ends are found 64 bytes at a time: one pass over each block builds a bit
 * mask of its '\n' bytes (SSE2 where there is one), and each line then costs a
 * count-trailing-zeros instead of a memchr call, whose setup outweighs the
 * scan on the short lines of perf or trace text. */
#include "sf_line.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sf_err.h"

#define READ_BLOCK (256u * 1024)
#define SCAN       64u /* bytes per newline mask; the buffer has this much slack */

int sf_line_open(struct sf_line *r, int fd, size_t max_line)
{
    memset(r, 0, sizeof(*r));
    r->fd = fd;
    r->max_line = max_line ? max_line : SF_LINE_MAX_DEFAULT;
    /* Room for one maximal line, one read block and the NUL we write after a line. */
    r->cap = r->max_line + READ_BLOCK + 1;
    /* calloc: a mask block may read slack bytes past the data, never uninitialised */
    r->buf = calloc(1, r->cap + SCAN);
    if (r->buf == NULL)
        return SF_E_NOMEM;
#ifdef POSIX_FADV_SEQUENTIAL
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); /* a hint: pipes refuse it */
#endif
    return 0;
}

/* Bit i set when p[i] == '\n', for the SCAN bytes at p. */
static inline uint64_t newline_mask(const char *p)
{
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t m0 = (uint16_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), nl));
    uint64_t m1 = (uint16_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)), nl));
    uint64_t m2 = (uint16_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 32)), nl));
    uint64_t m3 = (uint16_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 48)), nl));
    return m0 | m1 << 16 | m2 << 32 | m3 << 48;
#else
    uint64_t m = 0;
    for (unsigned i = 0; i < SCAN; i++)
        m |= (uint64_t)(p[i] == '\n') << i;
    return m;
#endif
}

/* Read more data after the unread part.  Returns bytes read, 0 at EOF, -1 error.
 * Only called when every scanned newline is used (nl_mask == 0). */
static ssize_t fill_more(struct sf_line *r)
{
    ssize_t n;

    if (r->pos > 0 && (r->cap - 1 - r->fill < READ_BLOCK)) {
        memmove(r->buf, r->buf + r->pos, r->fill - r->pos);
        r->fill -= r->pos;
        r->scan -= r->pos;
        r->pos = 0;
    }
    do
        n = read(r->fd, r->buf + r->fill, r->cap - 1 - r->fill);
    while (n < 0 && errno == EINTR);
    if (n > 0) {
        if (r->on_read)
            r->on_read(r->on_read_ctx, r->buf + r->fill, (size_t)n);
        r->fill += (size_t)n;
        r->bytes_read += (uint64_t)n;
    } else if (n == 0) {
        r->eof = 1;
    }
    return n;
}

/* Drop the rest of an over-long line up to and including its '\n'. */
static int skip_long_line(struct sf_line *r)
{
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->fill - r->pos);
        if (nl) {
            size_t adv = (size_t)(nl + 1 - (r->buf + r->pos));
            r->next_off += adv;
            r->pos += adv;
            r->scan = r->pos;
            return SF_E_LIMIT;
        }
        r->next_off += r->fill - r->pos;
        r->pos = r->fill = r->scan = 0;
        if (r->eof)
            return SF_E_LIMIT;
        if (fill_more(r) < 0)
            return SF_E_IO;
    }
}

/* Hand out buf[pos, pos + n) (its '\n', if any, at pos + n). */
static inline int emit(struct sf_line *r, char **line, size_t *len, size_t n, int has_nl)
{
    char *start = r->buf + r->pos;

    r->lineno++;
    r->off = r->next_off;
    r->pos += n + (size_t)has_nl;
    r->next_off += n + (size_t)has_nl;
    if (n > r->max_line)
        return SF_E_LIMIT;
    r->unterminated = !has_nl;
    start[n] = 0; /* the slot after the buffer's data is always writable */
    *line = start;
    *len = n;
    return 1;
}

int sf_line_next(struct sf_line *r, char **line, size_t *len)
{
    for (;;) {
        if (r->nl_mask) {
            size_t e = r->nl_base + (size_t)__builtin_ctzll(r->nl_mask);
            r->nl_mask &= r->nl_mask - 1;
            return emit(r, line, len, e - r->pos, 1);
        }
        /* Mask the next SCAN bytes; bits past the data are dropped, and those
         * bytes are scanned again once they are read (scan stops at fill). */
        if (r->scan < r->fill) {
            size_t have = r->fill - r->scan;
            uint64_t m = newline_mask(r->buf + r->scan);
            if (have < SCAN)
                m &= ((uint64_t)1 << have) - 1;
            else
                have = SCAN;
            r->nl_mask = m;
            r->nl_base = r->scan;
            r->scan += have;
            continue;
        }
        if (r->eof) {
            if (r->fill == r->pos)
                return 0;
            return emit(r, line, len, r->fill - r->pos, 0);
        }
        if (r->fill - r->pos > r->max_line) {
            r->lineno++;
            r->off = r->next_off;
            return skip_long_line(r);
        }
        if (fill_more(r) < 0)
            return SF_E_IO;
    }
}

void sf_line_close(struct sf_line *r)
{
    free(r->buf);
    r->buf = NULL;
}

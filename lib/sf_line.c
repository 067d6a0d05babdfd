/* sf_line.c - block-buffered line reader (see sf_line.h). */
#include "sf_line.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_err.h"

#define READ_BLOCK (256u * 1024)

int sf_line_open(struct sf_line *r, int fd, size_t max_line)
{
    memset(r, 0, sizeof(*r));
    r->fd = fd;
    r->max_line = max_line ? max_line : SF_LINE_MAX_DEFAULT;
    /* Room for one maximal line, one read block and the NUL we write after a line. */
    r->cap = r->max_line + READ_BLOCK + 1;
    r->buf = malloc(r->cap);
    return r->buf ? 0 : SF_E_NOMEM;
}

/* Read more data after the unread part.  Returns bytes read, 0 at EOF, -1 error. */
static ssize_t fill_more(struct sf_line *r)
{
    ssize_t n;

    if (r->pos > 0 && (r->cap - 1 - r->fill < READ_BLOCK)) {
        memmove(r->buf, r->buf + r->pos, r->fill - r->pos);
        r->fill -= r->pos;
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
            return SF_E_LIMIT;
        }
        r->next_off += r->fill - r->pos;
        r->pos = r->fill = 0;
        if (r->eof)
            return SF_E_LIMIT;
        if (fill_more(r) < 0)
            return SF_E_IO;
    }
}

int sf_line_next(struct sf_line *r, char **line, size_t *len)
{
    size_t scanned = 0;

    for (;;) {
        char *start = r->buf + r->pos;
        size_t avail = r->fill - r->pos;
        char *nl = memchr(start + scanned, '\n', avail - scanned);

        if (nl || (r->eof && avail > 0)) {
            size_t n = nl ? (size_t)(nl - start) : avail;
            r->lineno++;
            r->off = r->next_off;
            if (n > r->max_line) {
                r->pos += n + (nl != NULL);
                r->next_off += n + (nl != NULL);
                return SF_E_LIMIT;
            }
            r->unterminated = nl == NULL;
            start[n] = 0; /* the slot after the buffer's data is always writable */
            r->pos += n + (nl != NULL);
            r->next_off += n + (nl != NULL);
            *line = start;
            *len = n;
            return 1;
        }
        if (r->eof)
            return 0;
        scanned = avail;
        if (avail > r->max_line) {
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

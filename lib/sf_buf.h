/* sf_buf.h - growable byte buffer with a hard maximum (curl's dynbuf idea).
 *
 * Every growable buffer in spanfold is created with a maximum size, so that no
 * input can make memory grow without bound: appending past `max` fails with
 * SF_E_LIMIT and leaves the buffer as it was.
 *
 * Preconditions (asserted): a buffer set up by sf_buf_init, whose len never passes max;
 * a NULL p only with n == 0; sf_buf_consume's n <= len.
 */
#ifndef SF_BUF_H
#define SF_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct sf_buf {
    uint8_t *data; /* NULL until the first append */
    size_t len;    /* bytes used */
    size_t cap;    /* bytes allocated */
    size_t max;    /* hard limit on len */
};

/* Initialise an empty buffer that may hold at most max bytes.  Allocates nothing. */
void sf_buf_init(struct sf_buf *b, size_t max);

/* Append n bytes (p may be NULL only when n is 0).  Returns 0, SF_E_LIMIT (len + n > max) or
 * SF_E_NOMEM; on failure the buffer is unchanged. */
int sf_buf_append(struct sf_buf *b, const void *p, size_t n);

/* Append formatted text (not NUL-counted in len, but data stays NUL-terminated).
 * Same returns as sf_buf_append. */
int sf_buf_printf(struct sf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (ap is used up). */
int sf_buf_vprintf(struct sf_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Make sure n more bytes fit without reallocation; same returns as sf_buf_append. */
int sf_buf_reserve(struct sf_buf *b, size_t n);

/* Drop the first n bytes (n <= len), moving the rest to the front. */
void sf_buf_consume(struct sf_buf *b, size_t n);

/* Forget the contents, keep the allocation. */
static inline void sf_buf_reset(struct sf_buf *b)
{
    b->len = 0;
}

/* Free the allocation; the buffer is empty and reusable afterwards. */
void sf_buf_free(struct sf_buf *b);

#endif

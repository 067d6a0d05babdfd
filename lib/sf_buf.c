/* sf_buf.c - capped growable buffer (see sf_buf.h). */
#include "sf_buf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_err.h"

void sf_buf_init(struct sf_buf *b, size_t max)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

int sf_buf_reserve(struct sf_buf *b, size_t n)
{
    size_t need, cap;
    uint8_t *p;

    assert(b->len <= b->max && (b->data != NULL || b->cap == 0));
    if (n > b->max - b->len)
        return SF_E_LIMIT;
    need = b->len + n + 1; /* +1 keeps room for a terminating NUL */
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > b->max + 1)
        cap = b->max + 1;
    p = realloc(b->data, cap);
    if (p == NULL)
        return SF_E_NOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int sf_buf_append(struct sf_buf *b, const void *p, size_t n)
{
    int rc;

    assert(p != NULL || n == 0);
    if ((rc = sf_buf_reserve(b, n)))
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

int sf_buf_vprintf(struct sf_buf *b, const char *fmt, va_list ap)
{
    va_list aq;
    int n, rc;

    va_copy(aq, ap);
    n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        return SF_E_MALFORMED;
    rc = sf_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int sf_buf_printf(struct sf_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = sf_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void sf_buf_consume(struct sf_buf *b, size_t n)
{
    assert(n <= b->len);
    if (n >= b->len) { /* all of it (more only with asserts off) */
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void sf_buf_free(struct sf_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

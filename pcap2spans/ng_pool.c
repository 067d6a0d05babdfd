/* ng_pool.c - size-class pool for libnghttp2's allocations (see ng_pool.h). */
#include "ng_pool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

union ng_blk { /* the header before each block handed out */
    struct {
        size_t cap;         /* usable bytes */
        union ng_blk *next; /* free list link while free */
    } h;
    max_align_t align;
};

#ifdef SF_ARENA_MALLOC /* sanitizer builds: every block its own malloc */

static void *pool_malloc(size_t n, void *arg)
{
    (void)arg;
    return malloc(n);
}

static void pool_free(void *p, void *arg)
{
    (void)arg;
    free(p);
}

static void *pool_calloc(size_t nmemb, size_t size, void *arg)
{
    (void)arg;
    if (size && nmemb > SIZE_MAX / size)
        return NULL; /* as the pool does (ASan would abort inside calloc) */
    return calloc(nmemb, size);
}

static void *pool_realloc(void *p, size_t n, void *arg)
{
    (void)arg;
    return realloc(p, n);
}

#else

static void *pool_malloc(size_t n, void *arg)
{
    struct ng_pool *pl = arg;
    union ng_blk *b;
    size_t k = n > 0 ? (n - 1) / NG_POOL_STEP : 0;

    if (k < NG_POOL_CLASSES && (b = pl->free[k]) != NULL) {
        pl->free[k] = b->h.next;
        pl->nfree[k]--;
        return b + 1;
    }
    if (n > SIZE_MAX - sizeof(*b))
        return NULL;
    if (k < NG_POOL_CLASSES)
        n = (k + 1) * NG_POOL_STEP;
    if ((b = malloc(sizeof(*b) + n)) == NULL)
        return NULL;
    b->h.cap = n;
    return b + 1;
}

static void pool_free(void *p, void *arg)
{
    struct ng_pool *pl = arg;
    union ng_blk *b;
    size_t k;

    if (p == NULL)
        return;
    b = (union ng_blk *)p - 1;
    k = (b->h.cap - 1) / NG_POOL_STEP;
    if (b->h.cap % NG_POOL_STEP == 0 && k < NG_POOL_CLASSES && pl->nfree[k] < NG_POOL_KEEP) {
        b->h.next = pl->free[k];
        pl->free[k] = b;
        pl->nfree[k]++;
        return;
    }
    free(b);
}

static void *pool_calloc(size_t nmemb, size_t size, void *arg)
{
    void *p;

    if (size && nmemb > SIZE_MAX / size)
        return NULL;
    if ((p = pool_malloc(nmemb * size, arg)) != NULL)
        memset(p, 0, nmemb * size);
    return p;
}

static void *pool_realloc(void *p, size_t n, void *arg)
{
    union ng_blk *b;
    void *q;

    if (p == NULL)
        return pool_malloc(n, arg);
    b = (union ng_blk *)p - 1;
    if (n <= b->h.cap)
        return p;
    if ((q = pool_malloc(n, arg)) == NULL)
        return NULL;
    memcpy(q, p, b->h.cap);
    pool_free(p, arg);
    return q;
}

#endif

nghttp2_mem *ng_pool_init(struct ng_pool *pl)
{
    memset(pl, 0, sizeof(*pl));
    pl->mem = (nghttp2_mem){pl, pool_malloc, pool_free, pool_calloc, pool_realloc};
    return &pl->mem;
}

void ng_pool_drain(struct ng_pool *pl)
{
    for (int k = 0; k < NG_POOL_CLASSES; k++) {
        while (pl->free[k]) {
            union ng_blk *b = pl->free[k];
            pl->free[k] = b->h.next;
            free(b);
        }
        pl->nfree[k] = 0;
    }
}

/* sf_arena.c - capped region allocator (see sf_arena.h). */
#include "sf_arena.h"

#include <assert.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sf_prefault.h"

#define ALIGN alignof(max_align_t)

struct sf_arena_chunk {
    struct sf_arena_chunk *next;
    size_t size; /* payload bytes */
    size_t off;  /* next free payload byte */
    alignas(max_align_t) unsigned char data[];
};

void sf_arena_init(struct sf_arena *a, size_t chunk_size, size_t max)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    a->used = a->reserved = 0;
    a->max = max ? max : SIZE_MAX;
}

static struct sf_arena_chunk *chunk_new(struct sf_arena *a, size_t payload)
{
    struct sf_arena_chunk *c;

    if (payload > a->max - a->reserved)
        return NULL;
    c = malloc(sizeof(*c) + payload);
    if (c == NULL)
        return NULL;
    /* an arena that has filled a chunk fills the next: its pages mapped in one call (the
     * first chunk, maybe never filled, faults in as it is used) */
    if (a->head)
        sf_prefault(c, sizeof(*c) + payload);
    c->size = payload;
    c->off = 0;
    c->next = a->head;
    a->head = c;
    a->reserved += payload;
    return c;
}

void *sf_arena_alloc(struct sf_arena *a, size_t n)
{
    struct sf_arena_chunk *c;
    size_t need;

    assert(a->chunk_size > 0 && a->max > 0); /* sf_arena_init sets both */
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX - ALIGN)
        return NULL;
    need = (n + ALIGN - 1) & ~(ALIGN - 1);
#ifdef SF_ARENA_MALLOC
    c = chunk_new(a, need);
#else
    c = a->head;
    if (c == NULL || c->size - c->off < need)
        c = chunk_new(a, need > a->chunk_size ? need : a->chunk_size);
#endif
    if (c == NULL)
        return NULL;
    a->used += need;
    c->off += need;
    return c->data + c->off - need;
}

void *sf_arena_calloc(struct sf_arena *a, size_t n)
{
    void *p = sf_arena_alloc(a, n);

    if (p)
        memset(p, 0, n);
    return p;
}

char *sf_arena_strndup(struct sf_arena *a, const char *s, size_t n)
{
    char *p;

    assert(s != NULL || n == 0);
    if (n == SIZE_MAX)
        return NULL;
    p = sf_arena_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void sf_arena_reset(struct sf_arena *a)
{
    struct sf_arena_chunk *keep = NULL, *c, *next;

    /* Keep one standard-size chunk so a per-packet arena does not malloc per packet. */
    for (c = a->head; c; c = next) {
        next = c->next;
#ifndef SF_ARENA_MALLOC
        if (keep == NULL && c->size == a->chunk_size) {
            keep = c;
            continue;
        }
#endif
        a->reserved -= c->size;
        free(c);
    }
    if (keep) {
        keep->next = NULL;
        keep->off = 0;
    }
    a->head = keep;
    a->used = 0;
}

void sf_arena_free(struct sf_arena *a)
{
    struct sf_arena_chunk *c, *next;

    for (c = a->head; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
    a->used = a->reserved = 0;
}

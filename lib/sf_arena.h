/* sf_arena.h - region allocator with a cap.
 *
 * Memory in spanfold has three lifetimes: a per-run arena for config and
 * interned strings, a per-unit arena reset after every packet or line, and explicit
 * create/destroy for flows.  An arena hands out aligned blocks from chunks and
 * frees them all at once.  Its total size is capped: past `max` bytes an
 * allocation returns NULL, so memory is bounded by configuration.
 *
 * Build with -DSF_ARENA_MALLOC to make every allocation a separate malloc, so that
 * ASan and valgrind see overflows that chunked allocation would hide.
 *
 * Preconditions (asserted): an arena set up by sf_arena_init before any allocation (a
 * zeroed struct is not one); sf_arena_strndup's s NULL only when n is 0.
 */
#ifndef SF_ARENA_H
#define SF_ARENA_H

#include <stddef.h>

struct sf_arena_chunk;

struct sf_arena {
    struct sf_arena_chunk *head; /* current chunk (most recent first) */
    size_t chunk_size;           /* default chunk payload size */
    size_t used;                 /* bytes handed out since the last reset */
    size_t reserved;             /* bytes held in chunks */
    size_t max;                  /* cap on reserved bytes */
};

/* Set up an empty arena: chunks of chunk_size bytes (0 = 64 KiB), at most max bytes
 * reserved in all (0 = no cap).  Allocates nothing. */
void sf_arena_init(struct sf_arena *a, size_t chunk_size, size_t max);

/* n bytes aligned for any type, or NULL when the cap would be passed or malloc
 * fails.  The memory is not zeroed. */
void *sf_arena_alloc(struct sf_arena *a, size_t n);

/* Zeroed allocation; NULL as sf_arena_alloc. */
void *sf_arena_calloc(struct sf_arena *a, size_t n);

/* Copy of n bytes of s (NULL only when n is 0) plus a terminating NUL; NULL as
 * sf_arena_alloc. */
char *sf_arena_strndup(struct sf_arena *a, const char *s, size_t n);

/* Release everything handed out, keeping one chunk for reuse (per-unit arenas). */
void sf_arena_reset(struct sf_arena *a);

/* Release all memory; the arena may be reused after sf_arena_init. */
void sf_arena_free(struct sf_arena *a);

#endif

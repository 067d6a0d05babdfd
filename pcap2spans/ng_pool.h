/* ng_pool.h - memory for libnghttp2's HPACK inflater.
 *
 * libnghttp2 allocates a buffer for every header field it emits (nghttp2_rcbuf) and frees
 * it at the next call, and one per dynamic-table entry: a few sizes, over and over.  An
 * ng_pool recycles those blocks by size class (64, 128, ..., 512 bytes) without malloc's
 * bookkeeping; larger requests go to malloc.  A free list keeps at most NG_POOL_KEEP
 * blocks a class, so what a pool holds stays below what its inflater once had in use at
 * the same time (the table, mostly).  One pool per inflater; ng_pool_drain after
 * nghttp2_hd_inflate_del frees it all.
 *
 * Built with -DSF_ARENA_MALLOC (the sanitizer and valgrind builds) the pool hands every
 * request to malloc and free as it is, so that a use after free or a read past a field
 * is reported.
 */
#ifndef NG_POOL_H
#define NG_POOL_H

#include <nghttp2/nghttp2.h>

#define NG_POOL_STEP    64
#define NG_POOL_CLASSES 8
#define NG_POOL_KEEP    32

union ng_blk;

struct ng_pool {
    nghttp2_mem mem; /* what nghttp2_hd_inflate_new2 is given */
    union ng_blk *free[NG_POOL_CLASSES];
    unsigned nfree[NG_POOL_CLASSES];
};

/* Set up an empty pool (at a stable address: libnghttp2 keeps the pointer) and return
 * its allocator for nghttp2_hd_inflate_new2. */
nghttp2_mem *ng_pool_init(struct ng_pool *pl);

/* Free the blocks kept on the free lists (all of them, once the inflater is deleted). */
void ng_pool_drain(struct ng_pool *pl);

#endif

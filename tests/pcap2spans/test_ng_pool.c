/* Unit tests: pcap2spans/ng_pool.c, libnghttp2's allocator, directly and under an inflater. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../pcap2spans/ng_pool.h"
#include "tap.h"

static void test_functions(void)
{
    struct ng_pool pl;
    nghttp2_mem *m = ng_pool_init(&pl);
    char *p, *q;
    unsigned char *z;
    int zero = 1;

    p = m->malloc(40, m->mem_user_data);
    TAP_OK(p != NULL && ((uintptr_t)p % _Alignof(max_align_t)) == 0, "malloc: aligned block");
    memcpy(p, "0123456789012345678901234567890123456789", 40);
    q = m->realloc(p, 600, m->mem_user_data);
    TAP_OK(q != NULL && memcmp(q, "0123456789012345678901234567890123456789", 40) == 0,
           "realloc past the classes keeps the bytes");
    z = m->calloc(10, 30, m->mem_user_data);
    for (int i = 0; z && i < 300; i++)
        zero &= z[i] == 0;
    TAP_OK(z != NULL && zero, "calloc: zeroed");
    TAP_OK(m->calloc(SIZE_MAX / 2, 4, m->mem_user_data) == NULL, "calloc: overflow refused");
    m->free(q, m->mem_user_data);
    m->free(z, m->mem_user_data);
    m->free(NULL, m->mem_user_data);
    ng_pool_drain(&pl);
}

static void test_recycling(void)
{
#ifdef SF_ARENA_MALLOC
    TAP_SKIP("pool recycling", "SF_ARENA_MALLOC build: the pool passes every block to malloc");
#else
    struct ng_pool pl;
    nghttp2_mem *m = ng_pool_init(&pl);
    void *a, *b, *blk[NG_POOL_KEEP + 8];

    a = m->malloc(40, m->mem_user_data);
    m->free(a, m->mem_user_data);
    b = m->malloc(60, m->mem_user_data); /* same 64-byte class */
    TAP_OK(a == b, "a freed block is handed out again for its class");
    TAP_OK(m->realloc(b, 64, m->mem_user_data) == b, "realloc within the class keeps the block");
    m->free(b, m->mem_user_data);
    for (int i = 0; i < NG_POOL_KEEP + 8; i++)
        blk[i] = m->malloc(100, m->mem_user_data);
    for (int i = 0; i < NG_POOL_KEEP + 8; i++)
        m->free(blk[i], m->mem_user_data);
    TAP_EQ_INT(pl.nfree[1], NG_POOL_KEEP, "at most NG_POOL_KEEP blocks kept a class");
    ng_pool_drain(&pl);
#endif
}

/* A real inflater on the pool: a block that inserts, evicts and references entries. */
static void test_inflater(void)
{
    static const uint8_t blk[] = {0x82, 0x86, 0x84, 0x41, 0x0f, 'w', 'w', 'w', '.', 'e', 'x',
                                  'a',  'm',  'p',  'l',  'e',  '.', 'c', 'o', 'm', 0xbe};
    struct ng_pool pl;
    nghttp2_hd_inflater *inf;
    int fields = 0, again = 0;

    TAP_OK(nghttp2_hd_inflate_new2(&inf, ng_pool_init(&pl)) == 0, "inflater on the pool");
    for (int round = 0; round < 200; round++) {
        size_t pos = 0;
        for (;;) {
            nghttp2_nv nv;
            int fl = 0;
            ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &fl, blk + pos, sizeof(blk) - pos, 1);
            if (rv < 0)
                break;
            pos += (size_t)rv;
            if (fl & NGHTTP2_HD_INFLATE_EMIT) {
                fields++;
                again += nv.namelen == 10 && memcmp(nv.name, ":authority", 10) == 0 &&
                         nv.valuelen == 15 && memcmp(nv.value, "www.example.com", 15) == 0;
            }
            if (fl & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(inf);
                break;
            }
        }
    }
    TAP_EQ_INT(fields, 200 * 5, "200 blocks of five fields decoded");
    TAP_EQ_INT(again, 200 * 2, ":authority both as a literal and from the table");
    nghttp2_hd_inflate_del(inf);
    ng_pool_drain(&pl);
}

int main(void)
{
    test_functions();
    test_recycling();
    test_inflater();
    return tap_done();
}

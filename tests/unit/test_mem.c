/* Unit tests: lib/sf_buf (capped buffer) and lib/sf_arena (capped arena). */
#include <stdlib.h>
#include <string.h>

#include "sf_arena.h"
#include "sf_buf.h"
#include "sf_err.h"
#include "tap.h"

static void test_buf(void)
{
    struct sf_buf b;
    char big[100];

    sf_buf_init(&b, 10);
    TAP_EQ_INT(sf_buf_append(&b, "hello", 5), 0, "append within cap");
    TAP_EQ_INT(sf_buf_append(&b, "world", 5), 0, "append up to exactly the cap");
    TAP_EQ_INT(sf_buf_append(&b, "!", 1), SF_E_LIMIT, "append past the cap is refused");
    TAP_EQ_INT(b.len, 10, "a refused append leaves the length unchanged");
    TAP_OK(memcmp(b.data, "helloworld", 10) == 0 && b.data[10] == 0,
           "contents kept, NUL-terminated");
    sf_buf_consume(&b, 5);
    TAP_OK(b.len == 5 && memcmp(b.data, "world", 5) == 0, "consume drops the front");
    TAP_EQ_INT(sf_buf_printf(&b, "%d", 12345), 0, "printf within cap");
    TAP_EQ_INT(sf_buf_printf(&b, "%d", 1), SF_E_LIMIT, "printf past the cap is refused");
    TAP_EQ_STR((char *)b.data, "world12345", "printf output appended");
    TAP_OK(b.cap <= 11, "capacity never exceeds max + 1 (cap %zu)", b.cap);
    sf_buf_free(&b);

    sf_buf_init(&b, 1 << 20);
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 1000; i++)
        sf_buf_append(&b, big, sizeof(big));
    TAP_EQ_INT(b.len, 100000, "grows to 100000 bytes under a 1 MiB cap");
    sf_buf_free(&b);
}

static void test_arena(void)
{
    struct sf_arena a;
    char *p, *q;
    int aligned = 1;

    sf_arena_init(&a, 1024, 4096);
    for (int i = 1; i < 50; i++) {
        p = sf_arena_alloc(&a, (size_t)i);
        if (p == NULL || ((uintptr_t)p % _Alignof(max_align_t)) != 0)
            aligned = 0;
    }
    TAP_OK(aligned, "allocations are aligned for any type");
    p = sf_arena_strndup(&a, "span:00f067aa", 4);
    TAP_EQ_STR(p, "span", "strndup copies n bytes and terminates");
    q = sf_arena_alloc(&a, 8192);
    TAP_OK(q == NULL, "an allocation past the arena cap returns NULL");
    TAP_OK(a.reserved <= 4096, "reserved bytes stay under the cap (%zu)", a.reserved);
    sf_arena_reset(&a);
    TAP_EQ_INT(a.used, 0, "reset forgets what was handed out");
    p = sf_arena_calloc(&a, 100);
    TAP_OK(p && p[0] == 0 && p[99] == 0, "calloc after reset is zeroed");
    sf_arena_free(&a);
    TAP_OK(a.head == NULL && a.reserved == 0, "free releases every chunk");

    /* A per-packet arena: many resets must not grow memory. */
    sf_arena_init(&a, 4096, 0);
    for (int i = 0; i < 10000; i++) {
        sf_arena_alloc(&a, 100);
        sf_arena_alloc(&a, 3000);
        sf_arena_reset(&a);
    }
    TAP_OK(a.reserved <= 4096 * 2, "10000 reset cycles keep memory bounded (%zu)", a.reserved);
    sf_arena_free(&a);
}

int main(void)
{
    test_buf();
    test_arena();
    return tap_done();
}

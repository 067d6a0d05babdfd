/* Fuzz target: lib/sf_map against a plain array of what it should hold.
 *
 * Input: byte 0 picks how many low hash bits are kept (byte % 64: few bits force
 * long probe runs, collisions and wrap-around) and the first capacity (byte / 64: the
 * default, or 2, 8 or 64 slots, so small maps grow many times); then each byte is one operation on
 * key (byte & 0x7f) of 128: bit 7 set removes it, clear inserts it.  After every operation each key
 * is found exactly when the array says it is in, and the count and the half-full bound hold.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../fuzz.h"
#include "sf_map.h"

#define NKEYS 128

static uint64_t keys[NKEYS];

static int key_eq(const void *val, const void *key)
{
    return val == key;
}

static void check(const struct sf_map *m, const uint8_t *in, uint64_t mask)
{
    size_t n = 0;

    for (size_t k = 0; k < NKEYS; k++) {
        void *got = sf_map_find(m, sf_hash_u64(k) & mask, key_eq, &keys[k]);
        CHECK(got == (in[k] ? &keys[k] : NULL));
        n += in[k];
    }
    CHECK(m->n == n && 2 * m->n <= m->cap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t first[4] = {0, 2, 8, 64};
    struct sf_map m;
    uint8_t in[NKEYS] = {0};
    uint64_t mask;

    if (size < 1)
        return 0;
    sf_map_init_cap(&m, first[data[0] / 64]);
    mask = data[0] % 64 ? (1ull << (data[0] % 64)) - 1 : 0;
    for (size_t i = 1; i < size; i++) {
        size_t k = data[i] & 0x7f;
        uint64_t h = sf_hash_u64(k) & mask;
        struct sf_map_slot *s;

        if (sf_map_reserve(&m, 1) < 0)
            break;
        s = sf_map_probe(&m, h, key_eq, &keys[k]);
        if (data[i] & 0x80) {
            if (s->val != NULL)
                sf_map_remove(&m, s);
            in[k] = 0;
        } else {
            if (s->val == NULL)
                sf_map_fill(&m, s, h, &keys[k]);
            in[k] = 1;
        }
        check(&m, in, mask);
    }
    sf_map_free(&m);
    return 0;
}

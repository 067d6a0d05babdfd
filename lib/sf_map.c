/* sf_map.c - the hash and the parts of the table that are not on the lookup path. */
#include "sf_map.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

uint64_t sf_hash(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull,
             d = 0x27d4eb2f165667c5ull, v, w, x, y;

    /* four independent lanes, 32 bytes a round: the multiplies overlap */
    while (n >= 32) {
        memcpy(&v, s, 8);
        memcpy(&w, s + 8, 8);
        memcpy(&x, s + 16, 8);
        memcpy(&y, s + 24, 8);
        a = (a ^ v) * 0xff51afd7ed558ccdull;
        b = (b ^ w) * 0xc4ceb9fe1a85ec53ull;
        c = (c ^ x) * 0x9fb21c651e98df25ull;
        d = (d ^ y) * 0xd6e8feb86659fd93ull;
        a ^= a >> 29;
        b ^= b >> 31;
        c ^= c >> 27;
        d ^= d >> 33;
        s += 32;
        n -= 32;
    }
    while (n >= 8) {
        memcpy(&v, s, 8);
        a = (a ^ v) * 0xff51afd7ed558ccdull;
        a ^= a >> 29;
        s += 8;
        n -= 8;
    }
    v = 0;
    memcpy(&v, s, n);
    b = (b ^ v) * 0xc4ceb9fe1a85ec53ull;
    return mix(a ^ (b + 0x9e3779b97f4a7c15ull) ^ mix(c) ^ (d * 0x9e3779b97f4a7c15ull));
}

/* sf_map_reserve when the array is too small. */
int sf_map_grow(struct sf_map *m, size_t more)
{
    size_t ncap = m->cap ? m->cap : m->first ? m->first : SF_MAP_MIN_CAP;
    struct sf_map_slot *ns, *s;

    while (2 * (m->n + more) > ncap) {
        if (ncap > SIZE_MAX / 2 / sizeof(*ns))
            return -1;
        ncap *= 2;
    }
    if (ncap == m->cap)
        return 0;
    if ((ns = calloc(ncap, sizeof(*ns))) == NULL)
        return -1;
    for (s = m->slots; s < m->slots + m->cap; s++) {
        size_t j = s->hash & (ncap - 1);
        if (s->val == NULL)
            continue;
        while (ns[j].val)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

/* Backward-shift deletion: each later entry of the probe run whose home slot is not
 * between the hole and itself moves into the hole, so every probe still finds it. */
void sf_map_remove(struct sf_map *m, struct sf_map_slot *s)
{
    size_t mask = m->cap - 1, hole = (size_t)(s - m->slots), j = hole;

    for (;;) {
        size_t home, dist_j, dist_hole;

        j = (j + 1) & mask;
        if (m->slots[j].val == NULL)
            break;
        home = m->slots[j].hash & mask;
        dist_j = (j - home) & mask;       /* how far j is from its home */
        dist_hole = (hole - home) & mask; /* how far the hole is from it */
        if (dist_hole < dist_j) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].val = NULL;
    m->slots[hole].hash = 0;
    m->n--;
}

void sf_map_clear(struct sf_map *m)
{
    if (m->n)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->n = 0;
}

void sf_map_free(struct sf_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

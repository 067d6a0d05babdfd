/* sf_map.c - the hash and the parts of the table that are not on the lookup path. */
#include "sf_map.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sf_prefault.h"

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

#define K_A 0xff51afd7ed558ccdull
#define K_B 0xc4ceb9fe1a85ec53ull
#define K_G 0x9e3779b97f4a7c15ull
#define C0  0x165667b19e3779f9ull
#define D0  0x27d4eb2f165667c5ull

/* The last n < 8 bytes as one little-endian word (what memcpy into a zeroed word gives
 * on a little-endian machine), without a call: n + before >= 8 bytes precede s + n. */
static inline uint64_t tail(const unsigned char *s, size_t n, size_t before)
{
    uint64_t v = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t lo, hi;

    if (n == 0)
        return 0;
    if (before >= 8 - n) { /* one load ending at the last byte */
        memcpy(&v, s + n - 8, 8);
        return v >> (8 * (8 - n));
    }
    if (n >= 4) { /* two overlapping halves */
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        return lo | (uint64_t)hi << (8 * (n - 4));
    }
    return s[0] | (uint64_t)s[n / 2] << (8 * (n / 2)) | (uint64_t)s[n - 1] << (8 * (n - 1));
#else
    (void)before;
    memcpy(&v, s, n);
    return v;
#endif
}

/* The 8-byte rounds and the last bytes of lane a (and b); cd is what lanes c and d add. */
static inline uint64_t finish(const unsigned char *s, size_t n, size_t before, uint64_t a,
                              uint64_t b, uint64_t cd)
{
    uint64_t v;

    while (n >= 8) {
        memcpy(&v, s, 8);
        a = (a ^ v) * K_A;
        a ^= a >> 29;
        s += 8;
        n -= 8;
        before += 8;
    }
    b = (b ^ tail(s, n, before)) * K_B;
    return mix(a ^ (b + K_G) ^ cd);
}

uint64_t sf_hash(const void *p, size_t n)
{
    const unsigned char *s = p, *s0 = p;
    uint64_t a = K_G ^ n, b = 0xc2b2ae3d27d4eb4full, c = C0, d = D0, v, w, x, y;

    if (n < 32) /* lanes c and d untouched: their share is a constant */
        return finish(s, n, 0, a, b, mix(C0) ^ (D0 * K_G));
    /* four independent lanes, 32 bytes a round: the multiplies overlap */
    while (n >= 32) {
        memcpy(&v, s, 8);
        memcpy(&w, s + 8, 8);
        memcpy(&x, s + 16, 8);
        memcpy(&y, s + 24, 8);
        a = (a ^ v) * K_A;
        b = (b ^ w) * K_B;
        c = (c ^ x) * 0x9fb21c651e98df25ull;
        d = (d ^ y) * 0xd6e8feb86659fd93ull;
        a ^= a >> 29;
        b ^= b >> 31;
        c ^= c >> 27;
        d ^= d >> 33;
        s += 32;
        n -= 32;
    }
    return finish(s, n, (size_t)(s - s0), a, b, mix(c) ^ (d * K_G));
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
    /* at most half full after this, a quarter of the slots filled at once: every page
     * of a larger array is written before long, so all are mapped in one call */
    sf_prefault(ns, ncap * sizeof(*ns));
    for (size_t i = 0; i < m->cap; i++) { /* by index: an empty map's slots are NULL */
        size_t j;
        s = &m->slots[i];
        if (s->val == NULL)
            continue;
        j = s->hash & (ncap - 1);
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
    size_t mask = m->cap - 1, hole, j;

    assert(m->cap > 0 && s >= m->slots && s < m->slots + m->cap && s->val != NULL);
    hole = j = (size_t)(s - m->slots);
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

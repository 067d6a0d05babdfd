/* sf_map.h - the one hash table: open addressing with linear probing.
 *
 * A power-of-two array of (hash, value) slots, at most half full, as Redis has one
 * dict.c.  The map holds pointers to entries its caller owns (or any non-NULL word,
 * such as an index + 1) and knows keys only through their hash (sf_hash, or
 * sf_hash_u64 for integers) and an equality test handed to each probe; sf_map_probe
 * is inline, so the test is inlined where it is called and a lookup costs what a
 * hand-written table costs.  Most mismatches are rejected by the stored hash without
 * touching the entry.
 *
 *   if (sf_map_reserve(&m, 1) < 0) return SF_E_NOMEM;
 *   struct sf_map_slot *s = sf_map_probe(&m, h, name_eq, &key);
 *   if (s->val == NULL) sf_map_fill(&m, s, h, new_entry(&key));
 *
 * Iteration (sf_map_next) is in slot order, which depends on the hashes and the
 * history of the table: a caller whose output follows it sorts first or keeps its
 * own order (an insertion-ordered array, a list).  Removal shifts later entries of
 * the probe run back (no tombstones), so a slot pointer is valid only until the next
 * change of the map.
 *
 * The preconditions below ("must", "not NULL", "the slot that ...") are checked with
 * assert (on unless NDEBUG, and no build here sets it: tests/unit/test_asserts.c).
 */
#ifndef SF_MAP_H
#define SF_MAP_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

struct sf_map_slot {
    uint64_t hash;
    void *val; /* NULL = empty */
};

struct sf_map {
    struct sf_map_slot *slots;
    size_t cap, n; /* cap: 0 or a power of two */
    size_t first;  /* slots of the first array, a power of two >= 2; 0 = SF_MAP_MIN_CAP */
};

#define SF_MAP_MIN_CAP 1024 /* the first array by default: 16 KiB */

/* An empty map whose first array has `first` slots (a power of two >= 2, or 0 for
 * SF_MAP_MIN_CAP), for tables kept by the thousand (one per connection, per group):
 * sf_map_init_cap(&m, 64).  A zeroed struct sf_map is an empty map with the default
 * first array. */
static inline void sf_map_init_cap(struct sf_map *m, size_t first)
{
    assert(first == 0 || (first >= 2 && (first & (first - 1)) == 0));
    m->slots = NULL;
    m->cap = m->n = 0;
    m->first = first;
}

/* 64-bit hash of n bytes (four multiply lanes, 32 bytes a round). */
uint64_t sf_hash(const void *p, size_t n);

/* A 64-bit integer mixed so that every bit reaches the low ones (splitmix64). */
static inline uint64_t sf_hash_u64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

int sf_map_grow(struct sf_map *m, size_t more);

/* Room for `more` entries beyond n without passing half full: 0, or -1 when the
 * larger array cannot be allocated (the map is unchanged and still usable). */
static inline int sf_map_reserve(struct sf_map *m, size_t more)
{
    return 2 * (m->n + more) <= m->cap ? 0 : sf_map_grow(m, more);
}

/* The probe run of hash h, for a caller that tests its entries in line: each
 * occupied slot from h's home on, ending at the empty slot where h would go.
 *   SF_MAP_RUN(&m, h, s) if (s->hash == h && same(s->val, key)) break;
 * The map must have room (sf_map_reserve) or hold entries. */
#define SF_MAP_RUN(m, h, s)                                                                        \
    for (assert((m)->cap > 0), (s) = &(m)->slots[(h) & ((m)->cap - 1)]; (s)->val;                  \
         (s) = (s) + 1 == (m)->slots + (m)->cap ? (m)->slots : (s) + 1)

/* The slot of the entry with hash h that eq(val, key) accepts, else the empty slot
 * where it would go.  The map must have room (sf_map_reserve) or hold entries. */
static inline struct sf_map_slot *sf_map_probe(const struct sf_map *m, uint64_t h,
                                               int (*eq)(const void *val, const void *key),
                                               const void *key)
{
    size_t mask = m->cap - 1, j;

    assert(m->cap > 0);
    for (j = h & mask; m->slots[j].val; j = (j + 1) & mask)
        if (m->slots[j].hash == h && eq(m->slots[j].val, key))
            break;
    return &m->slots[j];
}

/* The entry eq accepts, or NULL (also on an empty map). */
static inline void *sf_map_find(const struct sf_map *m, uint64_t h,
                                int (*eq)(const void *val, const void *key), const void *key)
{
    return m->n ? sf_map_probe(m, h, eq, key)->val : NULL;
}

/* Put val (not NULL) in the empty slot s that sf_map_probe returned, with room reserved
 * for it (the map stays at most half full). */
static inline void sf_map_fill(struct sf_map *m, struct sf_map_slot *s, uint64_t h, void *val)
{
    assert(val != NULL && s >= m->slots && s < m->slots + m->cap && s->val == NULL);
    assert(2 * (m->n + 1) <= m->cap);
    s->hash = h;
    s->val = val;
    m->n++;
}

/* Take the entry in slot s (an occupied slot of m) out of the map. */
void sf_map_remove(struct sf_map *m, struct sf_map_slot *s);

/* The next occupied slot at or after *i (advancing *i past it), or NULL at the end:
 *   for (size_t i = 0; (s = sf_map_next(&m, &i)) != NULL;) ... */
static inline struct sf_map_slot *sf_map_next(const struct sf_map *m, size_t *i)
{
    /* by index: an empty map's slots are NULL, and NULL + 0 is undefined in C */
    for (size_t k = *i; k < m->cap; k++)
        if (m->slots[k].val) {
            *i = k + 1;
            return &m->slots[k];
        }
    *i = m->cap;
    return NULL;
}

/* Empty the map, keeping its array (no free, no allocation on the next fills). */
void sf_map_clear(struct sf_map *m);

/* Free the slots (not the entries); the map is empty and reusable (with the same
 * first capacity). */
void sf_map_free(struct sf_map *m);

#endif

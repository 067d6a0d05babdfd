/* Unit tests: sf_map (lib/sf_map.h) and sf_hash.  Entries are integers with a hash the
 * test chooses, so collisions, adversarial hashes (one low-bit pattern) and the
 * wrap-around at the array's end are forced; every change is checked against a plain
 * array of what should be in the map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_map.h"
#include "tap.h"

#define N 5000

struct ent {
    uint64_t key, hash;
    int in;
};

static struct ent ents[N];

static int ent_eq(const void *val, const void *key)
{
    return ((const struct ent *)val)->key == *(const uint64_t *)key;
}

static int add(struct sf_map *m, struct ent *e)
{
    struct sf_map_slot *s;

    if (sf_map_reserve(m, 1) < 0)
        return -1;
    s = sf_map_probe(m, e->hash, ent_eq, &e->key);
    if (s->val != NULL)
        return 1;
    sf_map_fill(m, s, e->hash, e);
    e->in = 1;
    return 0;
}

static int del(struct sf_map *m, struct ent *e)
{
    struct sf_map_slot *s;

    if (m->n == 0)
        return -1;
    s = sf_map_probe(m, e->hash, ent_eq, &e->key);
    if (s->val != e)
        return -1;
    sf_map_remove(m, s);
    e->in = 0;
    return 0;
}

/* Every entry found exactly when it is in, and iteration sees each once. */
static int consistent(const struct sf_map *m, size_t n)
{
    size_t i, count = 0, seen = 0;
    struct sf_map_slot *s;

    for (i = 0; i < n; i++) {
        struct ent *e = sf_map_find(m, ents[i].hash, ent_eq, &ents[i].key);
        if (e != (ents[i].in ? &ents[i] : NULL))
            return 0;
        count += ents[i].in;
    }
    for (i = 0; (s = sf_map_next(m, &i)) != NULL;)
        seen += ((struct ent *)s->val)->in;
    return count == m->n && seen == m->n && 2 * m->n <= m->cap;
}

static void setup(uint64_t (*hash)(uint64_t))
{
    for (size_t i = 0; i < N; i++)
        ents[i] = (struct ent){i * 7919 + 1, hash(i * 7919 + 1), 0};
}

static uint64_t h_good(uint64_t k)
{
    return sf_hash_u64(k);
}

static uint64_t h_same(uint64_t k) /* every key one hash: one probe run */
{
    (void)k;
    return 42;
}

static uint64_t h_lowbits(uint64_t k) /* low 20 bits zero: one home slot until 2^20 slots */
{
    return k << 20;
}

static uint64_t h_end(uint64_t k) /* home at the array's last slots: runs wrap */
{
    return ~(uint64_t)0 - (k & 3);
}

static void run(const char *name, uint64_t (*hash)(uint64_t), size_t n)
{
    struct sf_map m = {0};
    size_t i;
    int ok = 1;

    setup(hash);
    for (i = 0; i < n; i++)
        ok &= add(&m, &ents[i]) == 0;
    TAP_OK(ok && m.n == n, "%s: %zu inserted", name, n);
    TAP_OK(m.cap >= 2 * n && (m.cap & (m.cap - 1)) == 0, "%s: grew to a power of two (%zu)", name,
           m.cap);
    TAP_OK(add(&m, &ents[0]) == 1 && m.n == n, "%s: a second insert of a key finds it", name);
    TAP_OK(consistent(&m, n), "%s: every entry found, iteration sees each once", name);
    for (i = 0, ok = 1; i < n; i += 3)
        ok &= del(&m, &ents[i]) == 0;
    TAP_OK(ok, "%s: every third removed", name);
    TAP_OK(consistent(&m, n), "%s: the rest still found after removals", name);
    /* removal and insertion interleaved, pseudo-random */
    srand(7);
    for (i = 0, ok = 1; i < 4 * n; i++) {
        struct ent *e = &ents[(size_t)rand() % n];
        ok &= (e->in ? del(&m, e) : add(&m, e)) == 0;
    }
    TAP_OK(ok && consistent(&m, n), "%s: %zu random inserts and removals", name, 4 * n);
    for (i = 0, ok = 1; i < n; i++)
        if (ents[i].in)
            ok &= del(&m, &ents[i]) == 0;
    TAP_OK(ok && m.n == 0 && consistent(&m, n), "%s: emptied", name);
    sf_map_free(&m);
}

static void test_empty(void)
{
    struct sf_map m = {0};
    uint64_t k = 1;
    size_t i = 0;

    TAP_OK(sf_map_find(&m, 1, ent_eq, &k) == NULL, "empty: find on a never-filled map");
    TAP_OK(sf_map_next(&m, &i) == NULL, "empty: nothing to iterate");
    TAP_OK(sf_map_reserve(&m, 0) == 0 && m.cap == 0, "empty: no room asked, none made");
    TAP_OK(sf_map_reserve(&m, 1) == 0 && m.cap == SF_MAP_MIN_CAP, "empty: first reserve");
    TAP_OK(sf_map_reserve(&m, SIZE_MAX / 4) < 0 && m.cap == SF_MAP_MIN_CAP,
           "reserve: an impossible size fails and leaves the map");
    sf_map_free(&m);
    TAP_OK(m.slots == NULL && m.cap == 0 && m.n == 0, "free: empty again");
}

/* A small first array: used as asked, doubled as before once half full; a zeroed map
 * keeps the default, and entries sit at their home slot of it (the order perf-fold's
 * table is walked in). */
static void test_first_cap(void)
{
    struct sf_map m, d = {0};
    size_t i;
    int ok = 1;

    setup(h_good);
    sf_map_init_cap(&m, 64);
    TAP_OK(m.cap == 0 && m.slots == NULL, "first cap: nothing allocated before the first fill");
    for (i = 0; i < 32; i++)
        ok &= add(&m, &ents[i]) == 0 && m.cap == 64;
    TAP_OK(ok, "first cap: 32 entries fit the 64 slots asked for");
    TAP_OK(add(&m, &ents[32]) == 0 && m.cap == 128 && consistent(&m, 33),
           "first cap: the 33rd doubles it, every entry still found");
    sf_map_clear(&m);
    TAP_OK(m.n == 0 && m.cap == 128 && consistent(&m, 0) &&
               sf_map_find(&m, ents[0].hash, ent_eq, &ents[0].key) == NULL,
           "clear: empty, the array kept");
    ents[0].in = 0;
    TAP_OK(add(&m, &ents[0]) == 0 && m.n == 1 && m.cap == 128, "clear: filled again in place");
    sf_map_free(&m);
    TAP_OK(m.first == 64 && sf_map_reserve(&m, 1) == 0 && m.cap == 64,
           "free: the first capacity is kept for reuse");
    sf_map_free(&m);
    setup(h_good);
    for (i = 0, ok = 1; i < 8; i++) {
        struct sf_map_slot *s;
        ok &= add(&d, &ents[i]) == 0;
        s = sf_map_probe(&d, ents[i].hash, ent_eq, &ents[i].key);
        ok &= s->val == &ents[i] && d.cap == SF_MAP_MIN_CAP &&
              ((size_t)(s - d.slots) - (ents[i].hash & (SF_MAP_MIN_CAP - 1))) % SF_MAP_MIN_CAP <
                  i + 1;
    }
    TAP_OK(ok, "default: a zeroed map's first array is SF_MAP_MIN_CAP slots, entries near home");
    sf_map_free(&d);
}

static void test_hash(void)
{
    static const char a[] = "main;work;compute_checksum;memcpy_avx_unaligned_erms;x";
    char b[sizeof(a)];
    int differ = 1;

    memcpy(b, a, sizeof(a));
    TAP_OK(sf_hash(a, sizeof(a) - 1) == sf_hash(b, sizeof(b) - 1), "hash: same bytes, same hash");
    for (size_t i = 0; i < sizeof(a) - 1; i++) {
        b[i] ^= 1;
        differ &= sf_hash(a, sizeof(a) - 1) != sf_hash(b, sizeof(b) - 1);
        b[i] ^= 1;
    }
    TAP_OK(differ, "hash: one flipped bit anywhere changes it");
    TAP_OK(sf_hash(a, 0) != sf_hash(a, 1) && sf_hash("", 0) == sf_hash(a, 0),
           "hash: the length counts, not bytes past it");
    TAP_OK(sf_hash_u64(1) != sf_hash_u64(2) && (sf_hash_u64(1) & 0xff) != (sf_hash_u64(257) & 0xff),
           "hash_u64: high bits reach the low ones");
}

/* The values are fixed: perf-fold's stack table is walked in slot order by spanfold
 * report, so a faster sf_hash must give the same hashes (here from the first version,
 * every tail length, a start off the word alignment). */
static void test_hash_values(void)
{
    static const char t[] = "main;work;compute_checksum;memcpy_avx_unaligned_erms;x;parse_request;"
                            "handle_connection;epoll_wait;start_thread;clone3";
    static const struct {
        size_t len;
        uint64_t h;
    } want[] = {
        {0, 0x1ad89464651ca4e8ull},   {1, 0x5dadbd9376b884f8ull},  {3, 0x4a3c5d0f891a2ec5ull},
        {5, 0xbefc5a9b15547413ull},   {7, 0x4f930f213f30918full},  {8, 0x012b3fcfcfa8cca4ull},
        {13, 0x7f946fb4c75db813ull},  {31, 0x19714a23ea9d08bfull}, {32, 0xb6df0f3ab680d9beull},
        {33, 0x976b43e457dbc282ull},  {45, 0x4bb70c371ffd33beull}, {64, 0x992e0e9587d866a4ull},
        {100, 0x4aad82e643266820ull},
    };
    int same = 1;

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (sf_hash(t + 1, want[i].len) != want[i].h) {
            printf("# sf_hash of %zu bytes: %016llx\n", want[i].len,
                   (unsigned long long)sf_hash(t + 1, want[i].len));
            same = 0;
        }
    TAP_OK(same, "hash: the values of the first version, lengths 0 to 100");
}

int main(void)
{
    test_empty();
    test_hash();
    test_hash_values();
    test_first_cap();
    run("good hash", h_good, N);
    run("one hash", h_same, 300);
    run("low bits zero", h_lowbits, 1000);
    run("wrapping runs", h_end, 500);
    return tap_done();
}

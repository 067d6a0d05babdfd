/* strmap.c - string interning (see strmap.h). */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

struct probe {
    const struct strmap *m;
    const char *s;
    size_t len;
};

static int key_eq(const void *val, const void *key)
{
    const struct probe *k = key;
    const char *e = k->m->keys[(uintptr_t)val - 1];

    return strncmp(e, k->s, k->len) == 0 && e[k->len] == 0;
}

long strmap_intern(struct strmap *m, const char *s, size_t len)
{
    struct probe k = {m, s, len};
    uint64_t h = sf_hash(s, len);
    struct sf_map_slot *slot;
    char *key;

    if (sf_map_reserve(&m->map, 1) < 0)
        return -1;
    slot = sf_map_probe(&m->map, h, key_eq, &k);
    if (slot->val != NULL)
        return (long)((uintptr_t)slot->val - 1);
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        char **keys = realloc(m->keys, nc * sizeof(*keys));
        if (keys == NULL)
            return -1;
        m->keys = keys;
        m->cap = nc;
    }
    key = malloc(len + 1);
    if (key == NULL)
        return -1;
    memcpy(key, s, len);
    key[len] = 0;
    m->keys[m->n] = key;
    sf_map_fill(&m->map, slot, h, (void *)(uintptr_t)(m->n + 1));
    return (long)m->n++;
}

void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    sf_map_free(&m->map);
    memset(m, 0, sizeof(*m));
}

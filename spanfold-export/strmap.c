/* strmap.c - string interning (see strmap.h). */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int grow(struct strmap *m)
{
    size_t ns = m->nslots ? m->nslots * 2 : 1024;
    uint32_t *slots = calloc(ns, sizeof(*slots));

    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        size_t j = hash(m->keys[i], strlen(m->keys[i])) & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = ns;
    return 0;
}

long strmap_intern(struct strmap *m, const char *s, size_t len)
{
    size_t j;
    char *k;

    if ((m->n + 1) * 2 > m->nslots && grow(m))
        return -1;
    for (j = hash(s, len) & (m->nslots - 1); m->slots[j]; j = (j + 1) & (m->nslots - 1)) {
        const char *e = m->keys[m->slots[j] - 1];
        if (strncmp(e, s, len) == 0 && e[len] == 0)
            return (long)m->slots[j] - 1;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        char **keys = realloc(m->keys, nc * sizeof(*keys));
        if (keys == NULL)
            return -1;
        m->keys = keys;
        m->cap = nc;
    }
    k = malloc(len + 1);
    if (k == NULL)
        return -1;
    memcpy(k, s, len);
    k[len] = 0;
    m->keys[m->n] = k;
    m->slots[j] = (uint32_t)(m->n + 1);
    return (long)m->n++;
}

void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

/* strmap.h - interning strings to dense indices (frames, labels), open addressing. */
#ifndef EXPORT_STRMAP_H
#define EXPORT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap {
    char **keys;     /* by index */
    size_t n, cap;   /* entries, capacity of keys */
    uint32_t *slots; /* index + 1, 0 = empty */
    size_t nslots;   /* power of two */
};

/* Index of s[0..len), adding it if new; -1 on allocation failure. */
long strmap_intern(struct strmap *m, const char *s, size_t len);
void strmap_free(struct strmap *m);

#endif

/* strmap.h - interning strings to dense indices (frames, labels), in an sf_map. */
#ifndef EXPORT_STRMAP_H
#define EXPORT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "sf_map.h"

struct strmap {
    char **keys;       /* by index */
    size_t n, cap;     /* entries, capacity of keys */
    struct sf_map map; /* sf_hash(key) -> index + 1, as a pointer-sized word */
};

/* Index of s[0..len), adding it if new; -1 on allocation failure. */
long strmap_intern(struct strmap *m, const char *s, size_t len);
void strmap_free(struct strmap *m);

#endif

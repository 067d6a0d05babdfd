/* h2_build.h - byte builders for the HTTP/2 unit tests: frames (RFC 9113 section 4.1) and
 * HPACK representations (RFC 7541 sections 5-6), written into a fixed buffer. */
#ifndef H2_BUILD_H
#define H2_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bb {
    uint8_t b[1 << 17];
    size_t n;
};

static inline void put(struct bb *b, const void *p, size_t n)
{
    if (n) /* p may be NULL for an empty payload */
        memcpy(b->b + b->n, p, n);
    b->n += n;
}

static inline void put8(struct bb *b, unsigned v)
{
    b->b[b->n++] = (uint8_t)v;
}

/* HPACK integer with an N-bit prefix, first byte carrying `hi` (RFC 7541 5.1). */
static inline void hp_int(struct bb *b, unsigned hi, int prefix, uint32_t v)
{
    uint32_t max = (1u << prefix) - 1;

    if (v < max) {
        put8(b, hi | v);
        return;
    }
    put8(b, hi | max);
    for (v -= max; v >= 128; v >>= 7)
        put8(b, (v & 0x7f) | 0x80);
    put8(b, v);
}

/* A string literal, not Huffman-coded. */
static inline void hp_str(struct bb *b, const char *s)
{
    hp_int(b, 0, 7, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}

/* Literal without indexing, literal name. */
static inline void hp_lit(struct bb *b, const char *name, const char *value)
{
    put8(b, 0x00);
    hp_str(b, name);
    hp_str(b, value);
}

/* Literal with incremental indexing, literal name. */
static inline void hp_inc(struct bb *b, const char *name, const char *value)
{
    put8(b, 0x40);
    hp_str(b, name);
    hp_str(b, value);
}

/* A frame: 24-bit length, type, flags, 31-bit stream id, payload. */
static inline void frame(struct bb *b, unsigned type, unsigned flags, uint32_t sid, const void *p,
                         size_t n)
{
    put8(b, (unsigned)(n >> 16));
    put8(b, (unsigned)(n >> 8));
    put8(b, (unsigned)n);
    put8(b, type);
    put8(b, flags);
    put8(b, sid >> 24);
    put8(b, sid >> 16);
    put8(b, sid >> 8);
    put8(b, sid);
    if (n)
        put(b, p, n);
}

#endif

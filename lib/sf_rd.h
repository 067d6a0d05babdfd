/* sf_rd.h - bounded reader for every binary format.
 *
 * A cursor over [p, end) that never reads past end.  A short read sets the sticky
 * `err` flag and returns 0 (or NULL), so a parser reads a whole frame and checks
 * once, as tcpdump's GET_* macros do, without longjmp.  `base` is the input offset
 * of the first byte, so sf_rd_off() always knows the byte an error is at.
 *
 *   struct sf_rd rd;
 *   sf_rd_init(&rd, buf, len, file_off);
 *   uint32_t len = sf_rd_u24be(&rd); uint8_t type = sf_rd_u8(&rd);
 *   if (rd.err) return sf_err_set(err, SF_E_TRUNC, sf_rd_off(&rd), "h2: frame header");
 *
 * A fixed-size header on a hot path is bounded once and read at fixed offsets:
 *   const uint8_t *h = sf_rd_bytes(&rd, 20);
 *   if (h == NULL) ...; tot = sf_rd_get_u16be(h, 2);
 *
 * Preconditions (asserted where they are not on the per-byte path): sf_rd_init's buf is
 * NULL only when len is 0; sf_rd_fill's have <= want.  The readers never need any: a
 * short read is the sticky err, not a precondition.
 */
#ifndef SF_RD_H
#define SF_RD_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sf_rd {
    const uint8_t *p;     /* next byte */
    const uint8_t *end;   /* one past the last readable byte */
    const uint8_t *start; /* first byte, for offsets */
    uint64_t base;        /* input offset of start */
    int err;              /* sticky: set by the first short read */
};

/* A reader over len bytes at buf (NULL only when len is 0), the first at offset base. */
static inline void sf_rd_init(struct sf_rd *rd, const void *buf, size_t len, uint64_t base)
{
    assert(buf != NULL || len == 0);
    rd->p = rd->start = (const uint8_t *)buf;
    rd->end = rd->p + len;
    rd->base = base;
    rd->err = 0;
}

/* Bytes left. */
static inline size_t sf_rd_left(const struct sf_rd *rd)
{
    return (size_t)(rd->end - rd->p);
}

/* Input offset of the next byte. */
static inline uint64_t sf_rd_off(const struct sf_rd *rd)
{
    return rd->base + (uint64_t)(rd->p - rd->start);
}

/* True (and err set) unless n bytes are available. */
static inline int sf_rd_need(struct sf_rd *rd, size_t n)
{
    if (rd->err || sf_rd_left(rd) < n) {
        rd->err = 1;
        return 0;
    }
    return 1;
}

/* Fields of a block sf_rd_bytes() has already bounded (a fixed-size header: one
 * check for the whole block, then reads at fixed offsets, as tcpdump's EXTRACT_*
 * after ND_TCHECK).  p is what sf_rd_bytes returned, off + width <= its n (or a
 * fixed-size header array that sf_rd_fill completed). */
static inline uint8_t sf_rd_get_u8(const uint8_t *p, size_t off)
{
    return p[off];
}

static inline uint16_t sf_rd_get_u16be(const uint8_t *p, size_t off)
{
    return (uint16_t)(p[off] << 8 | p[off + 1]);
}

static inline uint32_t sf_rd_get_u24be(const uint8_t *p, size_t off)
{
    return (uint32_t)p[off] << 16 | (uint32_t)p[off + 1] << 8 | p[off + 2];
}

static inline uint32_t sf_rd_get_u32be(const uint8_t *p, size_t off)
{
    return (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 |
           p[off + 3];
}

static inline uint8_t sf_rd_u8(struct sf_rd *rd)
{
    if (!sf_rd_need(rd, 1))
        return 0;
    return *rd->p++;
}

static inline uint16_t sf_rd_u16be(struct sf_rd *rd)
{
    uint16_t v;

    if (!sf_rd_need(rd, 2))
        return 0;
    v = sf_rd_get_u16be(rd->p, 0);
    rd->p += 2;
    return v;
}

static inline uint32_t sf_rd_u24be(struct sf_rd *rd)
{
    uint32_t v;

    if (!sf_rd_need(rd, 3))
        return 0;
    v = sf_rd_get_u24be(rd->p, 0);
    rd->p += 3;
    return v;
}

static inline uint32_t sf_rd_u32be(struct sf_rd *rd)
{
    uint32_t v;

    if (!sf_rd_need(rd, 4))
        return 0;
    v = sf_rd_get_u32be(rd->p, 0);
    rd->p += 4;
    return v;
}

static inline uint64_t sf_rd_u64be(struct sf_rd *rd)
{
    uint64_t hi = sf_rd_u32be(rd);

    return hi << 32 | sf_rd_u32be(rd);
}

static inline uint16_t sf_rd_u16le(struct sf_rd *rd)
{
    uint16_t v;

    if (!sf_rd_need(rd, 2))
        return 0;
    v = (uint16_t)(rd->p[1] << 8 | rd->p[0]);
    rd->p += 2;
    return v;
}

static inline uint32_t sf_rd_u32le(struct sf_rd *rd)
{
    uint32_t v;

    if (!sf_rd_need(rd, 4))
        return 0;
    v = (uint32_t)rd->p[3] << 24 | (uint32_t)rd->p[2] << 16 | (uint32_t)rd->p[1] << 8 | rd->p[0];
    rd->p += 4;
    return v;
}

/* Pointer to the next n bytes, advancing past them; NULL (and err) if short. */
static inline const uint8_t *sf_rd_bytes(struct sf_rd *rd, size_t n)
{
    const uint8_t *q;

    if (!sf_rd_need(rd, n))
        return NULL;
    q = rd->p;
    rd->p += n;
    return q;
}

/* Skip n bytes; returns 0 and sets err if short. */
static inline int sf_rd_skip(struct sf_rd *rd, size_t n)
{
    return sf_rd_bytes(rd, n) != NULL;
}

/* A sub-reader over the next n bytes (e.g. one TLS extension), advancing the
 * parent past them.  On a short parent the child is empty with err set. */
static inline struct sf_rd sf_rd_sub(struct sf_rd *rd, size_t n)
{
    struct sf_rd sub;
    uint64_t off = sf_rd_off(rd);
    const uint8_t *q = sf_rd_bytes(rd, n);

    sf_rd_init(&sub, q ? q : rd->p, q ? n : 0, off);
    sub.err = q == NULL;
    return sub;
}

/* Sub-readers over a length-prefixed vector (TLS's opaque<0..2^8-1>, <0..2^16-1> and
 * <0..2^24-1>, RFC 8446 section 3.4): the length, then that many bytes.  Nested vectors
 * read from their parent's sub-reader never pass the parent's end; a short length or
 * body leaves the child empty with err set. */
static inline struct sf_rd sf_rd_vec8(struct sf_rd *rd)
{
    return sf_rd_sub(rd, sf_rd_u8(rd));
}

static inline struct sf_rd sf_rd_vec16(struct sf_rd *rd)
{
    return sf_rd_sub(rd, sf_rd_u16be(rd));
}

static inline struct sf_rd sf_rd_vec24(struct sf_rd *rd)
{
    return sf_rd_sub(rd, sf_rd_u24be(rd));
}

/* A fixed-size header split across reads (a record header at a segment boundary): copy
 * up to want - have (have <= want) of the next bytes into buf + have.  Returns the bytes buf now
 * holds; want means complete, and buf is then read with the sf_rd_get_* getters. */
static inline size_t sf_rd_fill(struct sf_rd *rd, uint8_t *buf, size_t have, size_t want)
{
    size_t k;
    const uint8_t *q;

    assert(have <= want);
    k = want - have < sf_rd_left(rd) ? want - have : sf_rd_left(rd);
    if (k == 0 || (q = sf_rd_bytes(rd, k)) == NULL)
        return have;
    memcpy(buf + have, q, k);
    return have + k;
}

#endif

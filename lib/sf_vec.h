/* sf_vec.h - 16 bytes at a time, for the byte-class checks of the parsers and writers.
 *
 * GCC/clang generic vectors: SSE2 on x86-64, NEON on arm64, plain code elsewhere.
 * Comparing a v16u with a scalar gives a v16s of -1 (true) or 0 per byte; or them
 * together and ask sf_vec_any.
 *
 *   v16u v;
 *   memcpy(&v, s, 16);
 *   if (sf_vec_any((v < 0x20) | (v == '"')))  ...one of the 16 bytes needs escaping
 *
 * Eight bytes in a uint64_t where a vector is too much: SF_ONES * c has c in every byte,
 * and sf_word_has_zero(x ^ SF_ONES * c) says whether one byte of x is c.
 */
#ifndef SF_VEC_H
#define SF_VEC_H

#include <stdint.h>
#include <string.h>

#define SF_ONES  UINT64_C(0x0101010101010101)
#define SF_HIGHS UINT64_C(0x8080808080808080)

/* Nonzero when one of the 8 bytes of x is zero (exact as a yes/no answer). */
static inline uint64_t sf_word_has_zero(uint64_t x)
{
    return (x - SF_ONES) & ~x & SF_HIGHS;
}

typedef unsigned char v16u __attribute__((vector_size(16)));
typedef signed char v16s __attribute__((vector_size(16)));
/* what "16 bytes at a time" and sf_vec_any's copy into two words rely on */
_Static_assert(sizeof(v16u) == 16 && sizeof(v16s) == 16 && sizeof(uint64_t[2]) == 16,
               "a v16u is 16 bytes");

/* 1 when any byte of m is set. */
static inline int sf_vec_any(v16s m)
{
    uint64_t h[2];

    memcpy(h, &m, 16);
    return (h[0] | h[1]) != 0;
}

#endif

/* sf_tc_match.h - the header-name matcher, generated from a header list (SF_CTX_HEADERS in
 * sf_tc_formats.h), so that a header added to the list is matched with nothing else to
 * write, whatever its length.
 *
 * SF_TC_DEFINE_MATCHER(FN, LIST) defines `static inline int FN(const char *name, size_t
 * nlen)`: SF_TC_H_<ID> when name (nlen bytes, ASCII letters in either case) is the
 * lowercase name of LIST's row X(ID, lower, ...), else -1.  It checks one bit of a mask of
 * the lengths the list has, then one bit of a mask of (first letter, length) keys (most
 * names stop at one of the two), then length and first letter row by row, then the whole
 * name 8 bytes at a time (sf_tc_name8_eq).
 * sf_tracectx.c defines sf_tracectx_header_id's matcher with it; tests/unit/test_tc_match.c
 * defines one over names of other lengths.
 *
 * A row's lowercase name: 1 to 63 bytes (checked at compile time) of lowercase letters,
 * digits and '-' (what sf_tc_name8_eq compares; test_tracectx.c checks the real list).
 */
#ifndef SF_TC_MATCH_H
#define SF_TC_MATCH_H

#include <stddef.h>

#include "sf_tc_fast.h"

/* 1 when name (nlen bytes, nlen == strlen(lit)) is the lowercase literal lit, its letters
 * in either case.  Inlined with a literal, most of it folds away. */
__attribute__((always_inline)) static inline int sf_tc_name_is(const char *name, size_t nlen,
                                                               const char *lit)
{
    size_t i;

    if (nlen < 8) {
        for (i = 0; i < nlen; i++) {
            unsigned char l = (unsigned char)lit[i];
            if (((unsigned char)name[i] | (l >= 'a' ? 0x20 : 0)) != l)
                return 0;
        }
        return 1;
    }
    for (i = 0; i + 8 <= nlen; i += 8)
        if (!sf_tc_name8_eq(name + i, lit + i))
            return 0;
    /* the tail, overlapping the last full word */
    return i == nlen || sf_tc_name8_eq(name + nlen - 8, lit + nlen - 8);
}

#define SF_TC_MATCH_CHECK_(id, lower, shown, fmt, add)                                             \
    _Static_assert(sizeof(lower) >= 2 && sizeof(lower) <= 64,                                      \
                   "header name " lower ": 1 to 63 bytes");
#define SF_TC_MATCH_LEN_(id, lower, shown, fmt, add) | 1ull << (sizeof(lower) - 1)
#define SF_TC_MATCH_KEY(c0, nlen)                    (((unsigned)(c0) + 5u * (unsigned)(nlen)) & 63)
#define SF_TC_MATCH_KEY_(id, lower, shown, fmt, add)                                               \
    | 1ull << SF_TC_MATCH_KEY((lower)[0], sizeof(lower) - 1)
#define SF_TC_MATCH_TRY_(id, lower, shown, fmt, add)                                               \
    if (nlen == sizeof(lower) - 1 && c0 == (lower)[0] && sf_tc_name_is(name, nlen, lower))         \
        return SF_TC_H_##id;

#define SF_TC_DEFINE_MATCHER(FN, LIST)                                                             \
    LIST(SF_TC_MATCH_CHECK_)                                                                       \
    __attribute__((always_inline)) static inline int FN(const char *name, size_t nlen)             \
    {                                                                                              \
        int c0;                                                                                    \
                                                                                                   \
        if (nlen >= 64 || !((0ull LIST(SF_TC_MATCH_LEN_)) >> nlen & 1))                            \
            return -1;                                                                             \
        c0 = (unsigned char)name[0] | 0x20; /* a lowercase letter, or no name's first byte */      \
        if (!((0ull LIST(SF_TC_MATCH_KEY_)) >> SF_TC_MATCH_KEY(c0, nlen) & 1))                     \
            return -1;                                                                             \
        LIST(SF_TC_MATCH_TRY_)                                                                     \
        return -1;                                                                                 \
    }

#endif

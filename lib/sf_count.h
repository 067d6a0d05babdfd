/* sf_count.h - the largest count any tool accepts.
 *
 * A folded line's count, a sample's period and every sum of them must fit a signed
 * 64-bit integer: that is what SQLite stores, what the gates' statistics are exact
 * for, and what a diff of two profiles can subtract.  A count above it is a bad line
 * (skipped, counted, exit 1); a sum that would pass it is an error (exit 2).  Never
 * saturated or wrapped: a share computed from a clipped total is a wrong answer that
 * looks right (2^64-1 beside 10 made a 50 % frame read as 0.05 %).
 */
#ifndef SF_COUNT_H
#define SF_COUNT_H

#include <stdint.h>

#define SF_COUNT_MAX      INT64_MAX
#define SF_COUNT_MAX_TEXT "9223372036854775807 (2^63-1)"

/* *sum += v unless that passes SF_COUNT_MAX.  Returns 0, or -1 with *sum unchanged. */
static inline int sf_count_add(uint64_t *sum, uint64_t v)
{
    uint64_t s;

    if (__builtin_add_overflow(*sum, v, &s) || s > (uint64_t)SF_COUNT_MAX)
        return -1;
    *sum = s;
    return 0;
}

#endif

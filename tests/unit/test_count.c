/* Unit tests: lib/sf_count.h, the one bound on counts and their sums (2^63-1). */
#include <stdint.h>

#include "sf_count.h"
#include "tap.h"

int main(void)
{
    uint64_t s = 10;

    TAP_EQ_INT(sf_count_add(&s, 5), 0, "10 + 5 fits");
    TAP_OK(s == 15, "and is 15");
    s = (uint64_t)SF_COUNT_MAX - 1;
    TAP_EQ_INT(sf_count_add(&s, 1), 0, "up to 2^63-1 fits");
    TAP_OK(s == (uint64_t)INT64_MAX, "and is 2^63-1");
    TAP_EQ_INT(sf_count_add(&s, 1), -1, "2^63-1 + 1 does not");
    TAP_OK(s == (uint64_t)INT64_MAX, "and leaves the sum unchanged");
    s = 10;
    TAP_EQ_INT(sf_count_add(&s, UINT64_MAX), -1, "10 + 2^64-1 (which wraps to 9) does not");
    TAP_OK(s == 10, "and leaves the sum unchanged");
    s = 0;
    TAP_EQ_INT(sf_count_add(&s, (uint64_t)INT64_MAX + 1), -1, "2^63 alone does not fit");
    return tap_done();
}

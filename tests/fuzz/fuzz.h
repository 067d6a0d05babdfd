/* fuzz.h - what every fuzz target shares: libFuzzer's entry point and CHECK, which
 * aborts (a finding) when a property the target asserts does not hold. */
#ifndef SF_FUZZ_H
#define SF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

#endif

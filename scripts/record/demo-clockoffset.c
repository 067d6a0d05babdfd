/* demo-clockoffset.c - the true CLOCK_REALTIME - CLOCK_MONOTONIC offset, for
 * scripts/record-demo.sh's manifest.
 *
 *   demo-clockoffset [READS]      (default 5000)
 *
 * Of READS back-to-back (monotonic, realtime, monotonic) triples it keeps the one
 * whose two monotonic reads are closest, and prints one JSON object:
 *   {"offset_ns": realtime - midpoint(mono1, mono2), "window_ns": mono2 - mono1,
 *    "monotonic_ns": midpoint, "reads": READS}
 * The offset is exact to within window_ns / 2.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long reads = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
    int64_t best = INT64_MAX, off = 0, mid = 0;

    if (reads < 1 || reads > 100000000) {
        fprintf(stderr, "usage: demo-clockoffset [READS]\n");
        return 2;
    }
    for (long i = 0; i < reads; i++) {
        int64_t m1 = now(CLOCK_MONOTONIC), r = now(CLOCK_REALTIME), m2 = now(CLOCK_MONOTONIC);
        if (m2 - m1 < best) {
            best = m2 - m1;
            mid = m1 + (m2 - m1) / 2;
            off = r - mid;
        }
    }
    printf("{\"offset_ns\": %lld, \"window_ns\": %lld, \"monotonic_ns\": %lld, \"reads\": %ld}\n",
           (long long)off, (long long)best, (long long)mid, reads);
    return 0;
}

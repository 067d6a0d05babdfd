/* probe_target.c - a tiny program with spanfold's span probes, for spantrace's
 * live test: USDT probes spanfold:span_begin/span_end and the plain functions
 * sf_probe_span_begin/end (for --func), each taking (span id, decision).
 * Usage: probe_target COUNT FIRST_SPAN_ID_HEX */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

__attribute__((noinline)) void sf_probe_span_begin(uint64_t span, long decision);
__attribute__((noinline)) void sf_probe_span_end(uint64_t span, long decision);

__attribute__((noinline)) void sf_probe_span_begin(uint64_t span, long decision)
{
    DTRACE_PROBE2(spanfold, span_begin, span, decision);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sf_probe_span_end(uint64_t span, long decision)
{
    DTRACE_PROBE2(spanfold, span_end, span, decision);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
    uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 16) : 0x1000;
    volatile uint64_t sink = 0;

    for (long i = 0; i < n; i++) {
        sf_probe_span_begin(first + (uint64_t)i, i % 2);
        for (int k = 0; k < 100000; k++)
            sink += (uint64_t)k * (uint64_t)i;
        sf_probe_span_end(first + (uint64_t)i, i % 2);
    }
    printf("%ld spans\n", n);
    return sink == 42;
}

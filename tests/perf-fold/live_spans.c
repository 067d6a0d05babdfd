/* live_spans.c - a small workload for tests/perf-fold/t_live.sh.
 *
 * Runs N "requests": each writes "span:<id> begin" to a tracefs trace_marker (if
 * given), burns CPU in burn_in_span() (and, in the slow variant, also in
 * extra_work()), writes "span:<id> end", then burns in burn_outside() outside any
 * span.  It prints "tid span_id start_ns end_ns" (CLOCK_MONOTONIC, the clock of
 * perf record -k mono) per span on stdout, so a test can check attribution even
 * without tracefs.
 *
 * usage: live_spans MARKER|- N SLOW(0|1)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* always inlined into burn_in_span: --inline must find it through addr2line */
static inline __attribute__((always_inline)) uint64_t mix_step(uint64_t h, uint64_t i)
{
    h ^= i;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

static __attribute__((noinline)) uint64_t burn_in_span(long n)
{
    uint64_t h = 1469598103934665603ull;
    for (long i = 0; i < n; i++)
        h = mix_step(h, (uint64_t)i);
    return h;
}

static __attribute__((noinline)) uint64_t extra_work(long n)
{
    uint64_t h = 7;
    for (long i = 0; i < n; i++)
        h = (h ^ (uint64_t)i) * 0x9e3779b97f4a7c15ull + (h >> 17);
    return h;
}

static __attribute__((noinline)) uint64_t burn_outside(long n)
{
    uint64_t h = 3;
    for (long i = 0; i < n; i++)
        h = h * 6364136223846793005ull + (uint64_t)i;
    return h;
}

static void mark(int fd, const char *msg)
{
    if (fd >= 0 && write(fd, msg, strlen(msg)) < 0)
        perror("trace_marker");
}

int main(int argc, char **argv)
{
    int fd = -1, n, slow;
    char msg[96];

    if (argc != 4)
        return 2;
    if (strcmp(argv[1], "-") != 0 && (fd = open(argv[1], O_WRONLY)) < 0) {
        perror(argv[1]);
        return 2;
    }
    n = (int)strtol(argv[2], NULL, 10);
    slow = (int)strtol(argv[3], NULL, 10);
    for (int i = 0; i < n; i++) {
        unsigned long long id = 0x5ba0000000000000ull + (unsigned long long)i + 1;
        int64_t t0, t1;
        t0 = mono();
        snprintf(msg, sizeof(msg), "span:%016llx begin", id);
        mark(fd, msg);
        sink += burn_in_span(6000000);
        if (slow)
            sink += extra_work(12000000);
        snprintf(msg, sizeof(msg), "span:%016llx end", id);
        mark(fd, msg);
        t1 = mono();
        printf("%d %016llx %lld %lld\n", gettid(), id, (long long)t0, (long long)t1);
        sink += burn_outside(3000000);
    }
    return 0;
}

/* work.c - the CPU work behind each endpoint of the demo service.
 *
 * Every function here is noinline and does its own loop, so that a profile of the
 * service shows a distinct call stack per endpoint (perf record -g with frame
 * pointers; built with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
 * -fno-optimize-sibling-calls, so that neither a leaf nor a tail call drops a caller):
 *
 *   GET /api/checkout          work_checkout -> price_cart -> tax_rules
 *   GET /api/search            work_search -> rank_results -> score_doc
 *     (slow mode, cpu)         work_search -> slow_regex_backtrack
 *     (slow mode, mixed)       the backend's answer, then slow_regex_backtrack twice over
 *     (slow mode, lock)        work_search -> search_backend -> pool_acquire (a pool of
 *                              one connection: the others wait on its mutex), then
 *                              backend_wait (15 ms asleep while holding it)
 *   POST /demo.Catalog/Lookup  work_lookup -> catalog_lookup -> hash_sku
 *
 * The cost scales with `scale` and varies +-25 % with the request (its span id).
 */
#include <time.h>

#include "demo.h"

#define NOINLINE __attribute__((noinline))

/* One FNV-1a-like round; `asm` keeps the compiler from folding the loop away. */
#define CHURN(h, i)                                                                                \
    do {                                                                                           \
        (h) ^= (uint64_t)(i);                                                                      \
        (h) *= 1099511628211ULL;                                                                   \
        (h) ^= (h) >> 29;                                                                          \
        __asm__ volatile("" : "+r"(h));                                                            \
    } while (0)

static long iters(double scale, uint64_t seed, long base)
{
    double jitter = 0.75 + (double)(seed % 512) / 1024.0; /* 0.75 .. 1.25 */
    return (long)(scale * jitter * (double)base);
}

static NOINLINE uint64_t tax_rules(uint64_t h, long n)
{
    for (long i = 0; i < n; i++)
        CHURN(h, i * 7);
    return h;
}

/* The callee first: the frame is set up at entry, before any loop (a compiler may
 * otherwise delay the prologue to the call, and samples in the loop would lose this
 * function's caller). */
static NOINLINE uint64_t price_cart(uint64_t h, long n)
{
    h = tax_rules(h, n);
    for (long i = 0; i < n / 3; i++)
        CHURN(h, i);
    return h;
}

uint64_t work_checkout(double scale, uint64_t seed, int *error)
{
    *error = seed % 40 == 0; /* 2.5 %: a cart that cannot be priced */
    return price_cart(seed, iters(scale, seed, 1800000));
}

static NOINLINE uint64_t score_doc(uint64_t h, long n)
{
    for (long i = 0; i < n; i++)
        CHURN(h, i ^ 0x5bd1e995);
    return h;
}

static NOINLINE uint64_t rank_results(uint64_t h, long n)
{
    h = score_doc(h, n);
    for (long i = 0; i < n / 4; i++)
        CHURN(h, i + 3);
    return h;
}

/* A real backtracking matcher of (a|aa)*b over "aaa...ac": every way of cutting
 * the a's is tried before the match fails, Fibonacci-many of them. */
static NOINLINE uint64_t slow_regex_backtrack(uint64_t h, long reps)
{
    char s[32];
    size_t stack[80];

    for (int i = 0; i < 24; i++)
        s[i] = 'a';
    s[24] = 'c';
    s[25] = 0;
    for (long r = 0; r < reps; r++) {
        size_t sp = 0;
        stack[sp++] = 0;
        while (sp) {
            size_t pos = stack[--sp];
            h++;
            if (s[pos] == 'b')
                break;
            if (s[pos] != 'a')
                continue;
            stack[sp++] = pos + 1;
            if (s[pos + 1] == 'a')
                stack[sp++] = pos + 2;
        }
        __asm__ volatile("" : "+r"(h));
    }
    return h;
}

/* The lock kind of slow mode: the search backend's connection pool has one
 * connection, and its answer takes 15 ms; a request waits for the connection (in
 * futex, off CPU) and then for the answer (asleep, off CPU): slow without any CPU. */
static pthread_mutex_t backend_pool = PTHREAD_MUTEX_INITIALIZER;

static NOINLINE void pool_acquire(void)
{
    pthread_mutex_lock(&backend_pool);
    __asm__ volatile("");
}

static NOINLINE void pool_release(void)
{
    pthread_mutex_unlock(&backend_pool);
    __asm__ volatile("");
}

static NOINLINE void backend_wait(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0)
        ;
    __asm__ volatile("");
}

static NOINLINE uint64_t search_backend(uint64_t h)
{
    pool_acquire();
    backend_wait(15);
    pool_release();
    return h + 1;
}

uint64_t work_search(double scale, uint64_t seed, int slow, int *error)
{
    uint64_t h = rank_results(seed, iters(scale, seed, 1400000));

    *error = 0;
    if (slow == DEMO_SLOW_CPU)
        h ^= slow_regex_backtrack(h, iters(scale, seed, 32));
    else if (slow == DEMO_SLOW_MIXED) /* twice the matcher: CPU a third of the growth */
        h ^= slow_regex_backtrack(h, iters(scale, seed, 64));
    else if (slow == DEMO_SLOW_LOCK)
        h ^= search_backend(h);
    return h;
}

static NOINLINE uint64_t hash_sku(uint64_t h, long n)
{
    for (long i = 0; i < n; i++)
        CHURN(h, i * 13 + 1);
    return h;
}

static NOINLINE uint64_t catalog_lookup(uint64_t h, long n)
{
    h = hash_sku(h, n);
    for (long i = 0; i < n / 5; i++)
        CHURN(h, i);
    return h;
}

uint64_t work_lookup(double scale, uint64_t seed, int *error)
{
    *error = seed % 50 == 7; /* 2 %: NOT_FOUND */
    return catalog_lookup(seed, iters(scale, seed, 1200000));
}

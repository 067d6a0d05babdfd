/* inlined.c - what tests/perf-fold/t_perfdata.sh records with --call-graph dwarf: built
 * without frame pointers (-O2 -fomit-frame-pointer), so that only the DWARF unwind tables
 * tell the callers, and with two functions always inlined into a third, so that perf
 * script shows inline frames (from addr2line) that the fold must show the same. */
static volatile unsigned long sink;

static inline __attribute__((always_inline)) void mix(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned long)i * 7 ^ sink >> 3;
}

static inline __attribute__((always_inline)) void stir(int n)
{
    mix(n);
    mix(n / 2);
}

__attribute__((noinline)) void churn(int n)
{
    for (int k = 0; k < 400; k++)
        stir(n);
}

__attribute__((noinline)) void run(int n)
{
    churn(n);
    churn(n / 3);
}

int main(void)
{
    run(200000);
    return (int)(sink & 1);
}

/* spin.c - the program tests/data/perfdata's recordings profile (see README.md), and
 * tests/perf-fold/t_perfdata.sh records again: three frames of plain C that burn CPU. */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(int n)
{
    for (int i = 0; i < n; i++)
        sink += i * 7;
}

__attribute__((noinline)) static void mid(int n)
{
    leaf(n);
    leaf(n / 2);
}

__attribute__((noinline)) void top_fn(int n)
{
    for (int k = 0; k < 200; k++)
        mid(n);
}

int main(void)
{
    top_fn(200000);
    printf("%lu\n", sink);
    return 0;
}

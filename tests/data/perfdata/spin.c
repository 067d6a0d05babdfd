/* spin.c - the program tests/data/perfdata's recordings profile (see README.md), and
 * tests/perf-fold/t_perfdata.sh records again: three frames of plain C that burn CPU. */
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

/* No library call while it runs: a sample in a PLT stub is named by perf after the shape
 * of its symbol tree (docs/perf-fold.md), which a test cannot hold to. */
int main(void)
{
    top_fn(200000);
    return (int)(sink & 1);
}

/* alias.c - one function under three names at one address, as a linker's identical code
 * folding leaves C++ templates: perf keeps one (symbols__fixup_duplicate) and, the others
 * tied (sized, global, one leading underscore), the one whose name is longer as perf
 * shows it, demangled.  Mangled, the other is the longer ("S_" stands for "alpha"), so
 * a reader that compares the names as stored picks the wrong one.  Recorded by
 * tests/perf-fold/t_perfdata.sh. */
static volatile unsigned long sink;

__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++)
        sink += i * 7;
}

/* alpha::f<alpha::gamma>: 26 bytes mangled, 22 shown; alpha::f<omega::xy>: 27 and 19 */
extern void near_name(int n) __asm__("_ZN5alpha1fINS_5gammaEEEvi") __attribute__((alias("work")));
extern void far_name(int n) __asm__("_ZN5alpha1fIN5omega2xyEEEvi") __attribute__((alias("work")));

int main(void)
{
    for (int k = 0; k < 400; k++)
        near_name(200000);
    return (int)(sink & 1);
}

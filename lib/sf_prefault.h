/* sf_prefault.h - the pages of a fresh allocation mapped in one call, not one page fault
 * each as they are first written.  A fault costs microseconds in a virtual machine
 * (~6 us on this project's: a sixth of perf-fold's run on a 13 MB perf.data went to
 * them).  Linux 5.14's MADV_POPULATE_WRITE on the whole pages inside [p, p + n);
 * nothing where the kernel or the system has no such call (the pages then fault in as
 * before).  Only for memory that is about to be written anyway: it is all made
 * resident at once. */
#ifndef SF_PREFAULT_H
#define SF_PREFAULT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

static inline void sf_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)4095;

    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

/* The pages of [p, p + n) of a mapped file read into the mapping in one call (Linux
 * 5.14's MADV_POPULATE_READ), where they would each fault as they are first read: for
 * the parts of a file that will be read through anyway. */
static inline void sf_prefault_read(const void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
    uintptr_t hi = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;

    if (n > 0)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
#else
    (void)p;
    (void)n;
#endif
}

#endif

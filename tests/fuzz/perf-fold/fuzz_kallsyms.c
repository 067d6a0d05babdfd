/* fuzz_kallsyms.c - libFuzzer target: arbitrary bytes as a kallsyms file, read by
 * perf-fold/kallsyms.c both ways it reads one: as a regular file (through its 64 KiB
 * buffer, a line read again when looked up; a memfd named through /proc/self/fd) and as
 * a pipe (read whole into memory, as /proc/kallsyms).  The two must keep the same
 * symbols and name every address alike: the input's words, and a sweep of pages around
 * where a kernel's text starts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../../perf-fold/kallsyms.h"
#include "../fuzz.h"

#define PIPE_MAX 60000 /* under a pipe's 64 KiB: written whole before it is read */

static struct pf_kallsyms *from_memfd(const uint8_t *data, size_t size)
{
    char path[64];
    struct pf_kallsyms *k;
    int fd = memfd_create("fuzz-kallsyms", MFD_CLOEXEC);

    if (fd < 0)
        return NULL;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return NULL;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    k = pf_ks_load(path);
    close(fd);
    return k;
}

static struct pf_kallsyms *from_pipe(const uint8_t *data, size_t size)
{
    char path[64];
    struct pf_kallsyms *k;
    int p[2];

    if (pipe(p) != 0)
        return NULL;
    if (write(p[1], data, size) != (ssize_t)size) {
        close(p[0]);
        close(p[1]);
        return NULL;
    }
    close(p[1]);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
    k = pf_ks_load(path);
    close(p[0]);
    return k;
}

/* both name addr alike (a name and a module copied: the second lookup may reuse) */
static void same(struct pf_kallsyms *a, struct pf_kallsyms *b, uint64_t addr)
{
    const char *na = NULL, *ma = NULL, *nb = NULL, *mb = NULL;
    int ra = pf_ks_find(a, addr, &na, &ma), rb = pf_ks_find(b, addr, &nb, &mb);

    CHECK(ra == rb);
    if (ra == 1) {
        CHECK(strcmp(na, nb) == 0);
        CHECK((ma == NULL) == (mb == NULL));
        CHECK(ma == NULL || strcmp(ma, mb) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pf_kallsyms *f, *p;

    if (size > PIPE_MAX)
        return 0;
    f = from_memfd(data, size);
    p = from_pipe(data, size);
    if (f && p) {
        CHECK(pf_ks_count(f) == pf_ks_count(p));
        for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
            uint64_t w;
            memcpy(&w, data + i, 8);
            same(f, p, w);
        }
        for (uint64_t a = 0xffffffff80fff000ull; a < 0xffffffff81040000ull; a += 0x800)
            same(f, p, a);
    }
    pf_ks_free(f);
    pf_ks_free(p);
    return 0;
}

/* fuzz_a2l_dw.c - libFuzzer target: an ELF file with DWARF, as a recording may name any
 * file, read by perf-fold's in-process addr2line (perf-fold/a2l_dw.c) and asked about
 * addresses: the first 64 bytes' words, and the start, middle and last byte of every
 * range the input's section headers claim.  Whatever the file holds, opening it and
 * every answer stay bounded and never read outside the file; an answer's names are
 * strings (each one read to its end here).
 *
 * The input becomes a file of its own (memfd, named through /proc/self/fd), since
 * a2l_dw.c opens files by name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../../perf-fold/a2l_dw.h"
#include "../fuzz.h"

static void ask(struct pf_a2l_dw *d, uint64_t addr)
{
    const char *names[64];
    long n = pf_a2l_dw_names(d, addr, names, 64);

    CHECK(n <= 64);
    for (long i = 0; i < n; i++)
        CHECK(strlen(names[i]) < ((size_t)1 << 30));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    struct pf_a2l_dw *d;
    int fd = memfd_create("fuzz-a2l-dw", MFD_CLOEXEC);

    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if ((d = pf_a2l_dw_open(path)) != NULL) {
        Elf *e;
        elf_version(EV_CURRENT);
        for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
            uint64_t a;
            memcpy(&a, data + i, 8);
            ask(d, a);
        }
        if ((e = elf_memory((char *)(uintptr_t)data, size)) != NULL) {
            Elf_Scn *s = NULL;
            GElf_Shdr sh;
            while ((s = elf_nextscn(e, s)) != NULL)
                if (gelf_getshdr(s, &sh) != NULL && sh.sh_size) {
                    ask(d, sh.sh_addr);
                    ask(d, sh.sh_addr + sh.sh_size / 2);
                    ask(d, sh.sh_addr + sh.sh_size - 1);
                }
            elf_end(e);
        }
        pf_a2l_dw_free(d);
    }
    close(fd);
    return 0;
}

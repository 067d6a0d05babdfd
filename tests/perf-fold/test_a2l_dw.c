/* test_a2l_dw.c - perf-fold/a2l_dw.c against binutils' addr2line itself: for every file,
 * the names `addr2line -e FILE -i -f` gives (through addr2line.c's child, as perf reads
 * them) and the names computed in this process, asked the same questions in the same
 * order, must be the same at every address.
 *
 * The addresses: each function symbol's start, a third of the way in and its last byte,
 * and a walk over the executable sections (every byte of a small program, an odd step
 * in a large one), so that inlined code, padding and the gaps between functions are
 * asked about.
 *
 *   test_a2l_dw [[-x] FILE...]  the files given (-x: one whose DWARF is in a separate
 *                           debug file, left to addr2line); without any, this program itself (C,
 * -O2 -g: inlined functions), and libc's debug file where one is installed (libc6-dbg: DWARF 5,
 * assembler units, aliases)
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../perf-fold/addr2line.h"
#include "tap.h"

#ifndef ADDRS_MAX
#define ADDRS_MAX 12000 /* questions per file */
#endif
#define WALK_MAX 8000 /* addresses of the walk: every byte of a small program */

struct addrs {
    uint64_t *a;
    size_t n, cap;
};

static void add(struct addrs *s, uint64_t a)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->a = realloc(s->a, s->cap * sizeof(*s->a));
        if (s->a == NULL)
            abort();
    }
    s->a[s->n++] = a;
}

/* The questions for file: symbol starts, middles and ends, and the walk. */
static int questions(const char *file, struct addrs *s)
{
    int fd = open(file, O_RDONLY);
    Elf *e;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    struct addrs all = {0};
    uint64_t exec = 0, step;

    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL) {
        close(fd);
        return -1;
    }
    while ((scn = elf_nextscn(e, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && (sh.sh_flags & SHF_EXECINSTR))
            exec += sh.sh_size;
    step = exec / WALK_MAX | 1;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        Elf_Data *d;
        GElf_Shdr in;
        if (gelf_getshdr(scn, &sh) == NULL)
            continue;
        if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_size)
            for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a += step)
                add(&all, a);
        if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
            (d = elf_getdata(scn, NULL)) == NULL)
            continue;
        for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            if (gelf_getsym(d, (int)i, &sym) == NULL || sym.st_value == 0 ||
                sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
                gelf_getshdr(elf_getscn(e, sym.st_shndx), &in) == NULL ||
                !(in.sh_flags & SHF_EXECINSTR) || /* code: what a sample's address is in */
                (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_NOTYPE &&
                 GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
                continue;
            add(&all, sym.st_value);
            if (sym.st_size > 2) {
                add(&all, sym.st_value + sym.st_size / 3);
                add(&all, sym.st_value + sym.st_size - 1);
            }
        }
    }
    elf_end(e);
    close(fd);
    /* at most ADDRS_MAX of them, spread over all */
    for (size_t i = 0; i < all.n; i++)
        if (all.n <= ADDRS_MAX || (i * ADDRS_MAX) / all.n != ((i + 1) * ADDRS_MAX) / all.n)
            add(s, all.a[i]);
    free(all.a);
    return 0;
}

/* elsewhere: the file's DWARF is in another file, which binutils follows: its answers
 * must come from addr2line itself. */
static void check_file(const char *file, int elsewhere)
{
    struct addrs q = {0};
    struct pf_a2l *child, *here;
    size_t diffs = 0, named = 0;

    if (questions(file, &q) < 0 || q.n == 0) {
        TAP_OK(0, "%s: readable, with addresses to ask about", file);
        return;
    }
    /* both answer each address once, as perf-fold asks (binutils' answers depend on the
       questions asked before: a function is renamed after its first) */
    child = pf_a2l_new(file, 0);
    here = pf_a2l_new(file, 1);
    for (size_t i = 0; i < q.n; i++) {
        const char *const *want, *const *got;
        size_t nw = pf_a2l_names(child, q.a[i], &want);
        size_t ng = pf_a2l_names(here, q.a[i], &got);
        int same = ng == nw;
        for (size_t k = 0; same && k < nw; k++)
            same = strcmp(want[k], got[k]) == 0;
        named += nw > 0;
        if (!same && diffs++ < 12) {
            printf("#   %s %#llx: addr2line", file, (unsigned long long)q.a[i]);
            for (size_t k = 0; k < nw; k++)
                printf(" [%s]", want[k]);
            printf(" / here");
            for (size_t k = 0; k < ng; k++)
                printf(" [%s]", got[k]);
            printf("\n");
        }
    }
    if (elsewhere)
        TAP_OK(!pf_a2l_computed(here), "%s: its DWARF is elsewhere: answered by addr2line", file);
    else
        TAP_OK(pf_a2l_computed(here), "%s: answered in this process", file);
    TAP_OK(diffs == 0 && named > 0,
           "%s: %zu addresses (%zu named), names as addr2line's (%zu differ)", file, q.n, named,
           diffs);
    pf_a2l_free(child);
    pf_a2l_free(here);
    free(q.a);
}

/* libc's debug file by its build id, "" when not installed. */
static void libc_debug(char *out, size_t n)
{
    static const char *const libs[] = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"};

    out[0] = 0;
    for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]) && !out[0]; l++) {
        int fd = open(libs[l], O_RDONLY);
        Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
        Elf_Scn *scn = NULL;
        GElf_Shdr sh;
        while (e && (scn = elf_nextscn(e, scn)) != NULL) {
            Elf_Data *d = elf_getdata(scn, NULL);
            GElf_Nhdr nh;
            size_t off = 0, no, dsc;
            if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE || d == NULL)
                continue;
            while ((off = gelf_getnote(d, off, &nh, &no, &dsc)) > 0)
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz >= 2) {
                    const unsigned char *id = (const unsigned char *)d->d_buf + dsc;
                    int k = snprintf(out, n, "/usr/lib/debug/.build-id/%02x/", id[0]);
                    for (size_t j = 1; j < nh.n_descsz && k > 0 && (size_t)k + 3 < n; j++)
                        k += snprintf(out + k, n - (size_t)k, "%02x", id[j]);
                    if (k > 0 && (size_t)k + 7 < n)
                        strcat(out, ".debug");
                }
        }
        if (e)
            elf_end(e);
        if (fd >= 0)
            close(fd);
        if (out[0] && access(out, R_OK) != 0)
            out[0] = 0;
    }
}

int main(int argc, char **argv)
{
    char self[4096], dbg[4096];
    ssize_t k;

    elf_version(EV_CURRENT);
    if (system("addr2line --version >/dev/null 2>&1") != 0) {
        printf("1..0 # SKIP binutils' addr2line is not installed\n");
        return 0;
    }
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "-x") == 0 && i + 1 < argc)
                check_file(argv[++i], 1);
            else
                check_file(argv[i], 0);
        return tap_done();
    }
    if ((k = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
        return 1;
    self[k] = 0;
    check_file(self, 0);
    libc_debug(dbg, sizeof(dbg));
    if (dbg[0])
        check_file(dbg, 0);
    else
        tap_skip_one("libc's debug file", "libc6-dbg is not installed");
    return tap_done();
}

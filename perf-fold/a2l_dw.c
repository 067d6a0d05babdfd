/* a2l_dw.c - binutils' addr2line answered in this process (a2l_dw.h).
 *
 * FILE is mapped once (the parts questions read populated at once: a page fault costs
 * more than reading the page), its unread DWARF sections hidden from libdw (which
 * decompresses every section it knows), its compilation units listed with their ranges
 * at the first question.  A unit's function DIEs are read at the first question that
 * lands in it, as binutils reads them (scan_unit_for_symbols): one entry per DIE with
 * its range pieces, its enclosing function and, at the first question that needs it, its
 * name; subtrees that can hold no code (types in C, parameters, variables, call sites,
 * functions without an address) are stepped over.  A question is then a search of the
 * unit's pieces, sorted by start with the running maximum of their ends (binutils' lookup
 * table, so that a piece that started long before the address is still found).
 */
#include "a2l_dw.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_fold.h"
#include "sf_prefault.h"

#define DW_NEST_MAX   1024 /* DIE nesting followed; deeper DIEs are skipped */
#define DW_ORIGIN_MAX 32   /* abstract origins and specifications followed in a chain */

struct fn {           /* a subprogram, entry point or inlined subroutine DIE */
    Dwarf_Off off;    /* its DIE */
    int named;        /* name and linkage read (at the first question that needs them) */
    const char *name; /* NULL: none (addr2line prints "??") */
    int linkage;      /* binutils' is_linkage: the name is final, no ELF symbol is asked */
    int inlined;
    long caller;  /* the nearest enclosing function's index, -1 none (inlined only) */
    uint64_t low; /* its first range piece's start (binutils' arange.low) */
};

struct piece {
    uint64_t lo, hi;
    size_t fn;
};

struct unit {
    Dwarf_Die die;
    int plain;     /* lang_plain of its language */
    int addr_base; /* DWARF 5 with an address table (clang's) */
    int dead;      /* no line table: binutils reads nothing of it */
    uint64_t *r;   /* its ranges, lo/hi pairs */
    size_t nr;
    int scanned;
    struct fn *fn;
    size_t nfn, capfn;
    struct piece *pc; /* sorted by lo (then DIE order) */
    size_t npc, cappc;
    uint64_t *maxhi; /* max of pc[0..i].hi */
};

/* A DIE's range pieces as binutils' arange_add keeps them: an empty one left out, one
 * that touches a piece already there (its start at that piece's end, or its end at that
 * piece's start) merged into the first such, any other put second in the list (after
 * the first piece, which is binutils' arange.low). */
struct pieces {
    uint64_t *lo, *hi;
    size_t n, cap;
};

struct sec {
    uint64_t lo, hi;
    size_t index;
};

struct sym {
    uint64_t value, size;
    size_t sec; /* section index */
    unsigned char type;
    const char *name;
    size_t order; /* its place in the table */
};

struct pf_a2l_dw {
    void *map; /* the file, mapped writable and private (libelf converts a foreign byte
                  order in place) */
    size_t map_len;
    Elf *e;
    Dwarf *dw; /* NULL: no DWARF (symbols only) */
    struct sec *secs;
    size_t nsecs;
    struct sym *syms;
    size_t nsyms;
    struct pieces pc;           /* a DIE's range pieces (die_pieces) */
    const struct sec *last_sec; /* elf_find_function's last question and answer */
    const struct sym *last;
    struct unit *u;
    size_t nu;
    int units_read;
};

/* ---- opening ---------------------------------------------------------------------- */

/* By section and address, then as binutils' choice among the symbols at one address
 * ranks them (elf_find_function below): the largest first, then the first in the table. */
static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;

    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The symbols addr2line loads: .symtab when it has any, else .dynsym, in table order
 * (the first entry, always null, left out).  Only those binutils' maybe_function_sym
 * accepts are kept: no section, file, object or thread-local symbols, defined in a
 * section, and not a hidden local untyped zero-sized one (annobin's markers). */
static int read_symbols(struct pf_a2l_dw *d)
{
    Elf_Scn *s = NULL, *tab = NULL, *dyn = NULL;
    GElf_Shdr sh, tsh;
    Elf_Data *data;
    size_t count, kept = 0;

    while ((s = elf_nextscn(d->e, s)) != NULL)
        if (gelf_getshdr(s, &sh) != NULL && sh.sh_entsize && sh.sh_size / sh.sh_entsize > 1) {
            if (sh.sh_type == SHT_SYMTAB && tab == NULL)
                tab = s;
            else if (sh.sh_type == SHT_DYNSYM && dyn == NULL)
                dyn = s;
        }
    if (tab == NULL)
        tab = dyn;
    if (tab == NULL || gelf_getshdr(tab, &tsh) == NULL || (data = elf_getdata(tab, NULL)) == NULL)
        return 0;
    count = tsh.sh_size / tsh.sh_entsize;
    if ((d->syms = malloc(count * sizeof(*d->syms))) == NULL)
        return -1;
    for (size_t i = 1; i < count; i++) {
        GElf_Sym sym;
        int type, bind;
        const char *name;
        if (gelf_getsym(data, (int)i, &sym) == NULL)
            break;
        type = GELF_ST_TYPE(sym.st_info);
        bind = GELF_ST_BIND(sym.st_info);
        if (type == STT_SECTION || type == STT_FILE || type == STT_OBJECT || type == STT_TLS ||
            type == STT_COMMON || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
            continue;
        if (sym.st_size == 0 && bind == STB_LOCAL && type == STT_NOTYPE &&
            GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
            continue;
        if ((name = elf_strptr(d->e, tsh.sh_link, sym.st_name)) == NULL)
            continue;
        d->syms[kept++] = (struct sym){sym.st_value, sym.st_size ? sym.st_size : 1,
                                       sym.st_shndx, (unsigned char)type,
                                       name,         i};
    }
    d->nsyms = kept;
    qsort(d->syms, d->nsyms, sizeof(*d->syms), cmp_sym);
    return 0;
}

/* binutils 2.40's elf_find_function: of the symbols in addr's section, it keeps, in
 * table order, the one starting nearest below addr, of those at one address the first
 * unless a later one is larger.  (Whether it covers addr is not asked: an address in the
 * padding after a function is named by that function.)  With the symbols sorted by
 * cmp_sym, that is the first of the last address at or below addr. */
static const struct sym *elf_find_function(struct pf_a2l_dw *d, const struct sec *sec,
                                           uint64_t addr)
{
    size_t lo = 0, hi = d->nsyms;

    /* binutils keeps its last answer and gives it again for an address of the same section
       within that symbol's size, even where a later symbol starts before the address */
    if (d->last_sec == sec && d->last && addr >= d->last->value &&
        addr - d->last->value < d->last->size)
        return d->last;
    d->last_sec = sec;
    d->last = NULL;

    while (lo < hi) { /* the first symbol past (section, addr) */
        size_t mid = lo + (hi - lo) / 2;
        const struct sym *m = &d->syms[mid];
        if (m->sec < sec->index || (m->sec == sec->index && m->value <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || d->syms[lo - 1].sec != sec->index)
        return NULL;
    while (lo > 1 && d->syms[lo - 2].sec == sec->index &&
           d->syms[lo - 2].value == d->syms[lo - 1].value)
        lo--;
    return d->last = &d->syms[lo - 1];
}

/* The section of e after *s, its header into *sh: its name, or NULL past the last.
 * Sections whose header or name cannot be read are passed over. */
static char *next_section(Elf *e, size_t shstr, Elf_Scn **s, GElf_Shdr *sh)
{
    char *n;

    while ((*s = elf_nextscn(e, *s)) != NULL)
        if (gelf_getshdr(*s, sh) != NULL && (n = elf_strptr(e, shstr, sh->sh_name)) != NULL)
            return n;
    return NULL;
}

static int read_sections(struct pf_a2l_dw *d)
{
    Elf_Scn *s = NULL;
    GElf_Shdr sh;

    while ((s = elf_nextscn(d->e, s)) != NULL) {
        struct sec *g;
        if (gelf_getshdr(s, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
            continue;
        if ((g = realloc(d->secs, (d->nsecs + 1) * sizeof(*g))) == NULL)
            return -1;
        d->secs = g;
        g[d->nsecs++] = (struct sec){sh.sh_addr, sh.sh_addr + sh.sh_size, elf_ndxscn(s)};
    }
    return 0;
}

/* A DWARF section binutils refuses as larger than the file can hold (its
 * _bfd_section_size_insane: a compressed one that would be more than ten times the
 * file, or any whose bytes lie past its end).  It then reads no DWARF from the file, or
 * only some: such a file is left to addr2line. */
static int insane_debug_section(Elf *e, uint64_t filesize)
{
    size_t shstr;
    Elf_Scn *s = NULL;
    GElf_Shdr sh;
    const char *n;

    if (elf_getshdrstrndx(e, &shstr) != 0)
        return 1;
    while ((n = next_section(e, shstr, &s, &sh)) != NULL) {
        uint64_t size;
        if (strncmp(n, ".zdebug", 7) == 0) /* the old GNU compression: not read here */
            return 1;
        if (strncmp(n, ".debug", 6) != 0 || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
            continue;
        size = sh.sh_size;
        if (sh.sh_flags & SHF_COMPRESSED) {
            GElf_Chdr ch;
            if (gelf_getchdr(s, &ch) == NULL || ch.ch_size / 10 > filesize)
                return 1;
        }
        if (sh.sh_offset > filesize || size > filesize - sh.sh_offset)
            return 1;
    }
    return 0;
}

static int exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* A file whose DWARF binutils may find elsewhere: its .gnu_debuglink name where bfd
 * looks for it (beside the file, in its .debug folder, under /usr/lib/debug by the
 * file's folder as named and as resolved, and at the top of /usr/lib/debug), or a debug
 * file by its build id.  Any of them there: the answers are addr2line's to give. */
static int debug_elsewhere(Elf *e, const char *file)
{
    char link[256], id[41], dir[4096], real[4096], cand[8192 + 512];
    const char *slash = strrchr(file, '/');

    if (pf_build_id(e, id) == 0 && strlen(id) > 2) {
        snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
        if (exists(cand))
            return 1;
    }
    pf_debuglink(e, link, sizeof(link));
    if (!link[0])
        return 0;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
    if (realpath(dir, real) == NULL)
        snprintf(real, sizeof(real), "%s", dir);
    const char *const fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
    for (int i = 0; i < 3; i++) {
        snprintf(cand, sizeof(cand), fmt[i], dir, link);
        if (exists(cand))
            return 1;
        snprintf(cand, sizeof(cand), fmt[i], real, link);
        if (exists(cand))
            return 1;
    }
    snprintf(cand, sizeof(cand), "/usr/lib/debug/%s", link);
    return exists(cand);
}

/* The parts of d's file that questions read (its DWARF but for location lists and
 * macros, its symbols) mapped in at once: a page fault each costs more than reading it. */
static void prefault(struct pf_a2l_dw *d)
{
    size_t shstr;
    Elf_Scn *s = NULL;
    GElf_Shdr sh;
    const char *n;

    if (elf_getshdrstrndx(d->e, &shstr) != 0)
        return;
    while ((n = next_section(d->e, shstr, &s, &sh)) != NULL) {
        if (sh.sh_type == SHT_NOBITS || sh.sh_offset > d->map_len ||
            sh.sh_size > d->map_len - sh.sh_offset)
            continue;
        if ((strncmp(n, ".debug_", 7) == 0 && strncmp(n, ".debug_loc", 10) != 0 &&
             strncmp(n, ".debug_macro", 12) != 0 && strcmp(n, ".debug_frame") != 0) ||
            sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM || strcmp(n, ".strtab") == 0 ||
            strcmp(n, ".dynstr") == 0)
            sf_prefault_read((const char *)d->map + sh.sh_offset, sh.sh_size);
    }
}

/* The DWARF sections no question reads hidden from libdw, which decompresses every
 * section it knows when it opens a file: their names' first byte changed in d's private
 * mapping.  Location lists are the largest of them (a seventh of glibc's DWARF).  Where
 * a name does not lie in the mapping (libelf made a copy), nothing is hidden. */
static void hide_unread(struct pf_a2l_dw *d)
{
    static const char *const unread[] = {".debug_loc",      ".debug_loclists", ".debug_aranges",
                                         ".debug_frame",    ".debug_macinfo",  ".debug_macro",
                                         ".debug_pubnames", ".debug_pubtypes"};
    size_t shstr;
    Elf_Scn *s = NULL;
    GElf_Shdr sh;
    char *n;

    if (elf_getshdrstrndx(d->e, &shstr) != 0)
        return;
    while ((n = next_section(d->e, shstr, &s, &sh)) != NULL) {
        if (n < (char *)d->map || n >= (char *)d->map + d->map_len)
            continue;
        for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++)
            if (strcmp(n, unread[i]) == 0)
                n[0] = '_';
    }
}

struct pf_a2l_dw *pf_a2l_dw_open(const char *file)
{
    struct pf_a2l_dw *d = calloc(1, sizeof(*d));
    struct stat st;
    GElf_Ehdr eh;
    GElf_Shdr sh;
    int fd;

    if (d == NULL)
        return NULL;
    elf_version(EV_CURRENT);
    if ((fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        goto no;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (d->map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)) ==
            MAP_FAILED) {
        d->map = NULL;
        close(fd);
        goto no;
    }
    close(fd);
    d->map_len = (size_t)st.st_size;
    if ((d->e = elf_memory(d->map, d->map_len)) == NULL || elf_kind(d->e) != ELF_K_ELF ||
        gelf_getehdr(d->e, &eh) == NULL)
        goto no;
    /* DWARF in another file: binutils would follow the link; so does addr2line itself */
    if (pf_section_named(d->e, ".gnu_debugaltlink", &sh) != NULL ||
        (pf_section_named(d->e, ".debug_info", &sh) == NULL && debug_elsewhere(d->e, file)) ||
        pf_section_named(d->e, ".stab", &sh) != NULL ||
        insane_debug_section(d->e, (uint64_t)st.st_size))
        goto no;
    prefault(d);
    if (read_sections(d) < 0 || read_symbols(d) < 0)
        goto no;
    hide_unread(d);
    if (pf_section_named(d->e, ".debug_info", &sh) != NULL &&
        (d->dw = dwarf_begin_elf(d->e, DWARF_C_READ, NULL)) == NULL)
        goto no;
    return d;
no:
    pf_a2l_dw_free(d);
    return NULL;
}

void pf_a2l_dw_free(struct pf_a2l_dw *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->nu; i++) {
        free(d->u[i].r);
        free(d->u[i].fn);
        free(d->u[i].pc);
        free(d->u[i].maxhi);
    }
    free(d->u);
    free(d->pc.lo);
    free(d->pc.hi);
    free(d->secs);
    free(d->syms);
    if (d->dw)
        dwarf_end(d->dw);
    if (d->e)
        elf_end(d->e);
    if (d->map)
        munmap(d->map, d->map_len);
    free(d);
}

/* ---- compilation units ------------------------------------------------------------ */

/* binutils' mangle_style: 0 for the languages whose DW_AT_name is the symbol's name */
static int lang_plain(int lang)
{
    switch (lang) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Fortran77:
    case DW_LANG_Pascal83:
    case DW_LANG_PLI:
    case DW_LANG_C99:
    case DW_LANG_UPC:
    case DW_LANG_C11:
    case DW_LANG_Mips_Assembler:
    case 0x8765: /* DW_LANG_Upc */
    case 0x8101: /* DW_LANG_HP_Basic91 */
    case 0x8102: /* DW_LANG_HP_IMacro */
    case 0x8103: /* DW_LANG_HP_Assembler */
        return 1;
    default:
        return 0;
    }
}

static int arange_add(struct pieces *p, uint64_t lo, uint64_t hi)
{
    if (lo == hi)
        return 0;
    for (size_t i = 0; i < p->n; i++) {
        if (lo == p->hi[i]) {
            p->hi[i] = hi;
            return 0;
        }
        if (hi == p->lo[i]) {
            p->lo[i] = lo;
            return 0;
        }
    }
    if (p->n == p->cap) { /* a large function of -O3 code has hundreds */
        size_t nc = p->cap ? 2 * p->cap : 64;
        uint64_t *l = realloc(p->lo, nc * sizeof(*l)), *h;
        if (l == NULL)
            return -1;
        p->lo = l;
        if ((h = realloc(p->hi, nc * sizeof(*h))) == NULL)
            return -1;
        p->hi = h;
        p->cap = nc;
    }
    if (p->n == 0) {
        p->lo[0] = lo;
        p->hi[0] = hi;
    } else {
        memmove(p->lo + 2, p->lo + 1, (p->n - 1) * sizeof(p->lo[0]));
        memmove(p->hi + 2, p->hi + 1, (p->n - 1) * sizeof(p->hi[0]));
        p->lo[1] = lo;
        p->hi[1] = hi;
    }
    p->n++;
    return 0;
}

/* The pieces binutils 2.40 reads from die: its DW_AT_ranges while it reads the
 * attributes (unless of DW_FORM_rnglistx, which it does not take as a number and so
 * leaves out), then [low_pc, high_pc) when high_pc is not 0 (a function the linker
 * dropped, at 0, included).  -1: what binutils reads differently (a DWARF 5 unit with an
 * address table, whose range lists may hold the entries 2.40 refuses; both forms on one
 * DIE), or unreadable. */
static int die_pieces(Dwarf_Die *die, int addr_base, struct pieces *p)
{
    Dwarf_Attribute at;
    Dwarf_Addr base, lo, hi;
    int ranges = dwarf_attr(die, DW_AT_ranges, &at) != NULL;

    p->n = 0;
    if (ranges && dwarf_whatform(&at) != DW_FORM_rnglistx) {
        ptrdiff_t off = 0;
        if (addr_base || dwarf_hasattr(die, DW_AT_high_pc))
            return -1;
        while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
            if (arange_add(p, lo, hi) < 0)
                return -1;
        if (off < 0)
            return -1;
    }
    if (!ranges && dwarf_hasattr(die, DW_AT_high_pc)) {
        if (dwarf_highpc(die, &hi) != 0)
            return -1;
        if (dwarf_lowpc(die, &lo) != 0)
            lo = 0;
        if (hi != 0 && arange_add(p, lo, hi) < 0)
            return -1;
    }
    return 0;
}

static int read_units(struct pf_a2l_dw *d)
{
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Half ver;
    uint8_t type;
    Dwarf_Die cudie, sub;
    size_t cap = 0;

    d->units_read = 1;
    while (dwarf_get_units(d->dw, cu, &next, &ver, &type, &cudie, &sub) == 0) {
        struct unit *u;
        cu = next;
        if (type != DW_UT_compile && type != DW_UT_partial)
            continue;
        if (d->nu == cap) {
            size_t nc = cap ? 2 * cap : 64;
            struct unit *g = realloc(d->u, nc * sizeof(*g));
            if (g == NULL)
                return -1;
            d->u = g;
            cap = nc;
        }
        u = &d->u[d->nu++];
        memset(u, 0, sizeof(*u));
        u->die = cudie;
        u->addr_base =
            dwarf_hasattr(&cudie, DW_AT_addr_base) || dwarf_hasattr(&cudie, DW_AT_GNU_addr_base);
        /* a unit without a line table yields nothing in binutils, not even functions */
        u->dead = !dwarf_hasattr(&cudie, DW_AT_stmt_list);
        if (die_pieces(&cudie, u->addr_base, &d->pc) < 0)
            return -1;
        if (d->pc.n && (u->r = malloc(2 * d->pc.n * sizeof(*u->r))) == NULL)
            return -1;
        for (size_t i = 0; i < d->pc.n; i++) {
            u->r[2 * i] = d->pc.lo[i];
            u->r[2 * i + 1] = d->pc.hi[i];
        }
        u->nr = d->pc.n;
    }
    return 0;
}

/* ---- a unit's functions ----------------------------------------------------------- */

struct naming {
    const char **name;
    int *linkage;
    int plain; /* the DIE's unit's lang_plain */
    int depth; /* > 0: in a DIE referred to, where only DW_AT_specification is followed */
    int fail;
};

static int name_attr(Dwarf_Attribute *a, void *arg);

/* The name of the DIE that attribute a refers to, as binutils' find_abstract_instance. */
static void from_origin(Dwarf_Attribute *a, struct naming *nm)
{
    Dwarf_Die die, cudie;
    struct naming sub = *nm;

    if (nm->depth >= DW_ORIGIN_MAX || dwarf_formref_die(a, &die) == NULL ||
        dwarf_diecu(&die, &cudie, NULL, NULL) == NULL) {
        nm->fail = 1;
        return;
    }
    sub.plain = lang_plain(dwarf_srclang(&cudie));
    sub.depth++;
    dwarf_getattrs(&die, name_attr, &sub, 0);
    nm->fail |= sub.fail;
}

static int name_attr(Dwarf_Attribute *a, void *arg)
{
    struct naming *nm = arg;
    const char *s;

    switch (dwarf_whatattr(a)) {
    case DW_AT_name: /* binutils reads an empty string as none */
        if (*nm->name == NULL && (s = dwarf_formstring(a)) != NULL) {
            *nm->name = s[0] ? s : NULL;
            if (nm->plain)
                *nm->linkage = 1;
        }
        break;
    case DW_AT_linkage_name:
    case DW_AT_MIPS_linkage_name:
        if ((s = dwarf_formstring(a)) != NULL) {
            *nm->name = s[0] ? s : NULL;
            *nm->linkage = 1;
        }
        break;
    case DW_AT_abstract_origin:
        if (nm->depth == 0) /* binutils follows an origin's specification, not its origin */
            from_origin(a, nm);
        break;
    case DW_AT_specification:
        from_origin(a, nm);
        break;
    default:
        break;
    }
    return DWARF_CB_OK;
}

/* *a (of *cap elements of size el) twice as large, its new pages mapped at once (a
 * large unit's arrays reach megabytes, and a page fault each is dearer than the rest). */
static int grow(void **a, size_t *cap, size_t el)
{
    size_t nc = *cap ? 2 * *cap : 1024;
    char *g = realloc(*a, nc * el);

    if (g == NULL)
        return -1;
    sf_prefault(g + *cap * el, (nc - *cap) * el);
    *a = g;
    *cap = nc;
    return 0;
}

static int add_fn(struct unit *u, Dwarf_Die *die, long caller, struct pieces *pc)
{
    struct fn *f;

    if (u->nfn == u->capfn && grow((void **)&u->fn, &u->capfn, sizeof(*u->fn)) < 0)
        return -1;
    f = &u->fn[u->nfn];
    memset(f, 0, sizeof(*f));
    f->inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
    f->caller = f->inlined ? caller : -1;
    f->off = dwarf_dieoffset(die);
    if (die_pieces(die, u->addr_base, pc) < 0)
        return -1;
    f->low = pc->n ? pc->lo[0] : 0;
    for (size_t i = 0; i < pc->n; i++) {
        if (u->npc == u->cappc && grow((void **)&u->pc, &u->cappc, sizeof(*u->pc)) < 0)
            return -1;
        u->pc[u->npc++] = (struct piece){pc->lo[i], pc->hi[i], u->nfn};
    }
    u->nfn++;
    return 0;
}

static int cmp_piece(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;

    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->fn > y->fn) - (x->fn < y->fn);
}

/* A DIE whose children can hold no function DIE: its subtree is skipped (over its
 * DW_AT_sibling, which is most of the time a unit's DIEs take to read).  Types with
 * members in C-like languages only: in C++, Rust or D a function may be declared
 * there. */
static int leaf_tree(int tag, int plain)
{
    switch (tag) {
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
    case DW_TAG_formal_parameter:
    case DW_TAG_variable:
    case DW_TAG_member:
    case DW_TAG_enumeration_type:
    case DW_TAG_subroutine_type:
    case DW_TAG_array_type:
        return 1;
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
        return plain;
    default:
        return 0;
    }
}

/* Every function DIE of u, in DIE order, each with the function DIE it is nested in. */
static int scan_unit(struct unit *u, struct pieces *pc)
{
    Dwarf_Die stack[DW_NEST_MAX];
    long inner[DW_NEST_MAX]; /* per level: the function its DIEs are nested in, -1 none */
    int depth = 0;

    u->scanned = 1;
    u->plain = lang_plain(dwarf_srclang(&u->die));
    inner[0] = -1;
    if (dwarf_child(&u->die, &stack[0]) != 0)
        return 0;
    for (;;) {
        Dwarf_Die *die = &stack[depth];
        int tag = dwarf_tag(die), r;
        long self = inner[depth];
        int leaf = leaf_tree(tag, u->plain);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point ||
            tag == DW_TAG_inlined_subroutine) {
            if (add_fn(u, die, inner[depth], pc) < 0)
                return -1;
            self = (long)u->nfn - 1;
            /* a function without an address (an abstract instance, a declaration) nests
               none either: what it holds can answer no address */
            leaf = !dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges) &&
                   !dwarf_hasattr(die, DW_AT_entry_pc);
        }
        if (dwarf_haschildren(die) && !leaf && depth + 1 < DW_NEST_MAX &&
            dwarf_child(die, &stack[depth + 1]) == 0) {
            inner[++depth] = self;
            continue;
        }
        while ((r = dwarf_siblingof(&stack[depth], &stack[depth])) != 0) {
            if (r < 0 || depth == 0)
                goto done;
            depth--;
        }
    }
done:
    if (u->npc)
        qsort(u->pc, u->npc, sizeof(*u->pc), cmp_piece);
    if ((u->maxhi = malloc((u->npc ? u->npc : 1) * sizeof(*u->maxhi))) == NULL)
        return -1;
    for (size_t i = 0; i < u->npc; i++)
        u->maxhi[i] = i && u->maxhi[i - 1] > u->pc[i].hi ? u->maxhi[i - 1] : u->pc[i].hi;
    return 0;
}

/* f's name and linkage as binutils reads them from its DIE (scan_unit_for_symbols). */
static int fn_named(struct pf_a2l_dw *d, struct unit *u, struct fn *f)
{
    Dwarf_Die die;
    struct naming nm = {&f->name, &f->linkage, u->plain, 0, 0};

    if (f->named)
        return 0;
    if (dwarf_offdie(d->dw, f->off, &die) == NULL)
        return -1;
    dwarf_getattrs(&die, name_attr, &nm, 0);
    f->named = 1;
    return nm.fail ? -1 : 0;
}

/* binutils' lookup_address_in_function_table: the function whose piece holding addr is
 * the shortest, the later DIE on a tie; -1 none. */
static long best_fit(const struct unit *u, uint64_t addr)
{
    size_t lo = 0, hi = u->npc;
    long best = -1;
    uint64_t best_len = UINT64_MAX;

    while (lo < hi) { /* the first piece whose running end passes addr */
        size_t mid = lo + (hi - lo) / 2;
        if (u->maxhi[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < u->npc && u->pc[i].lo <= addr; i++) {
        const struct piece *p = &u->pc[i];
        uint64_t len = p->hi - p->lo;
        if (addr >= p->hi)
            continue;
        if (len < best_len || (len == best_len && (long)p->fn > best)) {
            best = (long)p->fn;
            best_len = len;
        }
    }
    return best;
}

static int unit_holds(const struct unit *u, uint64_t addr)
{
    for (size_t i = 0; i < u->nr; i++)
        if (addr >= u->r[2 * i] && addr < u->r[2 * i + 1])
            return 1;
    return 0;
}

/* A line-table row covers addr in u's unit. */
static int has_line(struct unit *u, uint64_t addr)
{
    Dwarf_Line *l = dwarf_getsrc_die(&u->die, addr);
    bool end = false;

    return l != NULL && dwarf_lineendsequence(l, &end) == 0 && !end;
}

/* ---- the question ----------------------------------------------------------------- */

static const struct sec *section_of(const struct pf_a2l_dw *d, uint64_t addr)
{
    for (size_t i = 0; i < d->nsecs; i++)
        if (addr >= d->secs[i].lo && addr < d->secs[i].hi)
            return &d->secs[i];
    return NULL;
}

static const char *shown(const char *name)
{
    return name && name[0] ? name : "??";
}

long pf_a2l_dw_names(struct pf_a2l_dw *d, uint64_t addr, const char **names, size_t max)
{
    const struct sec *sec = section_of(d, addr);
    const struct sym *s;
    struct unit *u = NULL;
    const char *name = NULL;
    long f = -1;
    int found = 0;
    size_t n = 0;

    if (sec == NULL || max == 0)
        return 0;
    if (d->dw) {
        if (!d->units_read && read_units(d) < 0)
            return -1;
        for (size_t i = 0; i < d->nu && !found; i++) {
            u = &d->u[i];
            if (u->dead || (u->nr && !unit_holds(u, addr)))
                continue; /* (a unit without ranges of its own is asked about every address) */
            if (!u->scanned && scan_unit(u, &d->pc) < 0) {
                u->dead = 1; /* not half read again: this answer and the unit are lost */
                return -1;
            }
            f = best_fit(u, addr);
            found = f >= 0 || has_line(u, addr);
        }
    }
    if (f >= 0 && fn_named(d, u, &u->fn[f]) < 0)
        return -1;
    if (f >= 0 && u->fn[f].linkage) {
        name = u->fn[f].name;
    } else {
        /* no function, or one named in a language that mangles: the ELF symbol there */
        s = elf_find_function(d, sec, addr);
        if (s != NULL) {
            name = s->name;
            found = 1;
        }
        if (f >= 0) {
            struct fn *F = &u->fn[f];
            if (s == NULL)
                name = F->name;
            else if (s->value == F->low) /* the symbol is the function's: its name from now */
                F->name = s->name;
            F->linkage = 1; /* the symbols are not searched again for it */
        }
    }
    if (!found)
        return 0;
    names[n++] = shown(name);
    if (f >= 0)
        for (long c = u->fn[f].caller; c >= 0 && n < max; c = u->fn[c].caller) {
            if (fn_named(d, u, &u->fn[c]) < 0)
                return -1;
            names[n++] = shown(u->fn[c].name);
        }
    return (long)n;
}

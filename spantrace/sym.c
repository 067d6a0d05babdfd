/* sym.c - spantrace's symbols (sym.h). */
#include "sym.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sf_db_perf.h"
#include "sf_map.h"

struct fsym {
    uint64_t start, size;
    const char *name; /* in the file's names buffer */
};

struct seg {
    uint64_t off, filesz, vaddr;
};

/* One ELF file's function symbols, sorted by start, and its loaded segments. */
struct file {
    char *path, *base; /* base: "[basename]" */
    int runtime;
    struct fsym *sym;
    size_t nsym;
    char *names;
    struct seg *seg;
    size_t nseg;
};

struct map {
    uint64_t start, end, pgoff;
    struct file *f;
};

struct named {
    uint64_t key; /* address, bit 0 of the hash input: kernel */
    int kernel;
    int runtime;
    char *name;
};

struct st_syms {
    int pid;
    struct fsym *ksym; /* kallsyms' text symbols, sorted */
    size_t nksym;
    char *knames;
    int kread;
    struct map *map;
    size_t nmap;
    double maps_at; /* when the maps were read (CLOCK_MONOTONIC s), 0: never */
    struct file **files;
    size_t nfiles;
    struct sf_map by_addr; /* struct named */
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_fsym(const void *a, const void *b)
{
    const struct fsym *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* The symbol holding a (the last that starts at or before it; one of size 0 holds
 * everything up to the next), or NULL. */
static const struct fsym *find(const struct fsym *s, size_t n, uint64_t a)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    s += lo - 1;
    return s->size == 0 || a < s->start + s->size ? s : NULL;
}

/* ---- the kernel ---- */

static void read_kallsyms(struct st_syms *s)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    size_t cap = 0, ncap = 0, nlen = 0;

    s->kread = 1;
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f)) {
        /* "ffffffff81000000 T name\t[module]" */
        char *p, *name;
        unsigned long long a = strtoull(line, &p, 16);
        char type;
        size_t l;
        if (a == 0 || p[0] != ' ' || p[1] == 0 || p[2] != ' ')
            continue;
        type = p[1];
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        name = p + 3;
        name[strcspn(name, " \t\n")] = 0;
        if (name[0] == 0)
            continue;
        l = strlen(name) + 1;
        if (s->nksym == cap) {
            struct fsym *n = realloc(s->ksym, (cap = cap ? 2 * cap : 65536) * sizeof(*n));
            if (n == NULL)
                break;
            s->ksym = n;
        }
        if (nlen + l > ncap) {
            char *n = realloc(s->knames, ncap = (ncap + l) * 2);
            if (n == NULL)
                break;
            s->knames = n;
        }
        memcpy(s->knames + nlen, name, l);
        /* the offset for now: the buffer may move */
        s->ksym[s->nksym++] = (struct fsym){a, 0, (const char *)(uintptr_t)nlen};
        nlen += l;
    }
    fclose(f);
    for (size_t i = 0; i < s->nksym; i++)
        s->ksym[i].name = s->knames + (uintptr_t)s->ksym[i].name;
    qsort(s->ksym, s->nksym, sizeof(*s->ksym), cmp_fsym);
}

/* ---- files ---- */

static void load_symtab(struct file *fl, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, len = 0, cap = 0;

    if (d == NULL || (fl->sym = calloc(n ? n : 1, sizeof(*fl->sym))) == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sy;
        const char *nm;
        size_t l;
        if (gelf_getsym(d, (int)i, &sy) == NULL || sy.st_value == 0 || sy.st_shndx == SHN_UNDEF ||
            (GELF_ST_TYPE(sy.st_info) != STT_FUNC && GELF_ST_TYPE(sy.st_info) != STT_GNU_IFUNC) ||
            (nm = elf_strptr(e, sh->sh_link, sy.st_name)) == NULL || nm[0] == 0)
            continue;
        l = strlen(nm) + 1;
        if (len + l > cap) {
            char *nn = realloc(fl->names, cap = (cap + l) * 2 + 4096);
            if (nn == NULL)
                return;
            fl->names = nn;
        }
        memcpy(fl->names + len, nm, l);
        fl->sym[fl->nsym++] = (struct fsym){sy.st_value, sy.st_size, (const char *)(uintptr_t)len};
        len += l;
    }
    for (size_t i = 0; i < fl->nsym; i++)
        fl->sym[i].name = fl->names + (uintptr_t)fl->sym[i].name;
    qsort(fl->sym, fl->nsym, sizeof(*fl->sym), cmp_fsym);
}

static void load_file(struct file *fl)
{
    int fd = open(fl->path, O_RDONLY | O_CLOEXEC);
    Elf *e;
    Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
    GElf_Shdr sh, dsh, tsh;
    size_t nph = 0;

    if (fd < 0)
        return;
    if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL) {
        close(fd);
        return;
    }
    while ((scn = elf_nextscn(e, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL) {
            if (sh.sh_type == SHT_SYMTAB)
                tab = scn, tsh = sh;
            else if (sh.sh_type == SHT_DYNSYM)
                dyn = scn, dsh = sh;
        }
    if (tab)
        load_symtab(fl, e, tab, &tsh);
    if (fl->nsym == 0 && dyn) {
        free(fl->sym);
        free(fl->names);
        fl->sym = NULL;
        fl->names = NULL;
        load_symtab(fl, e, dyn, &dsh);
    }
    if (elf_getphdrnum(e, &nph) == 0 && (fl->seg = calloc(nph ? nph : 1, sizeof(*fl->seg))))
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) != NULL && ph.p_type == PT_LOAD)
                fl->seg[fl->nseg++] = (struct seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
        }
    elf_end(e);
    close(fd);
}

static struct file *file_of(struct st_syms *s, const char *path)
{
    struct file *fl, **nf;
    const char *slash = strrchr(path, '/');
    size_t bl;

    for (size_t i = 0; i < s->nfiles; i++)
        if (strcmp(s->files[i]->path, path) == 0)
            return s->files[i];
    if ((fl = calloc(1, sizeof(*fl))) == NULL ||
        (nf = realloc(s->files, (s->nfiles + 1) * sizeof(*nf))) == NULL) {
        free(fl);
        return NULL;
    }
    s->files = nf;
    s->files[s->nfiles++] = fl;
    fl->path = strdup(path);
    bl = strlen(slash ? slash + 1 : path);
    if ((fl->base = malloc(bl + 3)) != NULL)
        snprintf(fl->base, bl + 3, "[%s]", slash ? slash + 1 : path);
    fl->runtime = sf_offcpu_runtime_file(path, strlen(path));
    if (fl->path && path[0] == '/')
        load_file(fl);
    return fl;
}

/* ---- the process's maps ---- */

static void read_maps(struct st_syms *s)
{
    char path[64], line[4096];
    FILE *f;
    size_t cap = 0;

    s->maps_at = now_s();
    s->nmap = 0;
    snprintf(path, sizeof(path), "/proc/%d/maps", s->pid);
    if ((f = fopen(path, "r")) == NULL)
        return;
    while (fgets(line, sizeof(line), f)) {
        /* "start-end perms offset dev inode path" */
        char *p;
        unsigned long long a = strtoull(line, &p, 16), b, off;
        int exec;
        if (*p != '-')
            continue;
        b = strtoull(p + 1, &p, 16);
        if (*p != ' ' || strlen(p) < 6)
            continue;
        exec = p[3] == 'x';
        off = strtoull(p + 6, &p, 16);
        for (int field = 0; field < 2; field++) { /* dev, inode */
            p += strspn(p, " ");
            p += strcspn(p, " \n");
        }
        p += strspn(p, " ");
        p[strcspn(p, "\n")] = 0;
        if (!exec || p[0] == 0)
            continue; /* not code, or anonymous (a JIT's: unnamed here) */
        if (s->nmap == cap) {
            struct map *m = realloc(s->map, (cap = cap ? 2 * cap : 64) * sizeof(*m));
            if (m == NULL)
                break;
            s->map = m;
        }
        s->map[s->nmap++] = (struct map){a, b, off, file_of(s, p)};
    }
    fclose(f);
}

static const struct map *map_of(struct st_syms *s, uint64_t a)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->nmap; i++)
            if (a >= s->map[i].start && a < s->map[i].end)
                return &s->map[i];
        if (pass == 0 && now_s() - s->maps_at < 1.0 && s->maps_at > 0)
            return NULL;
        read_maps(s);
    }
    return NULL;
}

/* ---- names ---- */

static char *user_name(struct st_syms *s, uint64_t a, int *runtime)
{
    const struct map *m = map_of(s, a);
    const struct fsym *sy = NULL;
    uint64_t off, v = a;

    *runtime = 1; /* an address of no known file is no frame of the program's own */
    if (m == NULL || m->f == NULL)
        return strdup("[unknown]");
    *runtime = m->f->runtime;
    off = a - m->start + m->pgoff; /* the file offset, then the ELF address */
    for (size_t i = 0; i < m->f->nseg; i++)
        if (off >= m->f->seg[i].off && off < m->f->seg[i].off + m->f->seg[i].filesz)
            v = off - m->f->seg[i].off + m->f->seg[i].vaddr;
    if (m->f->nsym)
        sy = find(m->f->sym, m->f->nsym, v);
    if (sy == NULL)
        return strdup(m->f->base ? m->f->base : "[unknown]");
    if (sy->name[0] == '_' && sy->name[1] == 'Z') {
        char *d = cplus_demangle(sy->name, DMGL_NO_OPTS);
        if (d)
            return d;
    }
    return strdup(sy->name);
}

static int named_eq(const void *val, const void *key)
{
    const struct named *n = val, *k = key;
    return n->key == k->key && n->kernel == k->kernel;
}

const char *st_syms_name(struct st_syms *s, uint64_t addr, int kernel, int *runtime)
{
    struct named key = {addr, kernel, 0, NULL}, *n;
    uint64_t h = sf_hash_u64(addr ^ (uint64_t)kernel);
    struct sf_map_slot *sl;

    if (sf_map_reserve(&s->by_addr, 1) < 0)
        return "[unknown]";
    sl = sf_map_probe(&s->by_addr, h, named_eq, &key);
    if ((n = sl->val) == NULL) {
        if ((n = calloc(1, sizeof(*n))) == NULL)
            return "[unknown]";
        n->key = addr;
        n->kernel = kernel;
        if (kernel) {
            const struct fsym *sy;
            if (!s->kread)
                read_kallsyms(s);
            sy = find(s->ksym, s->nksym, addr);
            n->name = strdup(sy ? sy->name : "[unknown]");
            n->runtime = 1;
        } else
            n->name = user_name(s, addr, &n->runtime);
        sf_map_fill(&s->by_addr, sl, h, n);
    }
    *runtime = n->runtime;
    return n->name ? n->name : "[unknown]";
}

struct st_syms *st_syms_new(int pid)
{
    struct st_syms *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->pid = pid;
    elf_version(EV_CURRENT);
    return s;
}

void st_syms_free(struct st_syms *s)
{
    struct sf_map_slot *sl;
    size_t it = 0;

    if (s == NULL)
        return;
    while ((sl = sf_map_next(&s->by_addr, &it)) != NULL) {
        struct named *n = sl->val;
        free(n->name);
        free(n);
    }
    sf_map_free(&s->by_addr);
    for (size_t i = 0; i < s->nfiles; i++) {
        free(s->files[i]->path);
        free(s->files[i]->base);
        free(s->files[i]->sym);
        free(s->files[i]->names);
        free(s->files[i]->seg);
        free(s->files[i]);
    }
    free(s->files);
    free(s->map);
    free(s->ksym);
    free(s->knames);
    free(s);
}

/* ---- a call site ---- */

/* The symbol named name in an ELF symbol table: its value and size, 0 when found. */
static int find_sym(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, GElf_Sym *out)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

    for (size_t i = 0; d && i < n; i++) {
        const char *nm;
        if (gelf_getsym(d, (int)i, out) != NULL && out->st_shndx != SHN_UNDEF &&
            (nm = elf_strptr(e, sh->sh_link, out->st_name)) != NULL && strcmp(nm, name) == 0)
            return 0;
    }
    return -1;
}

/* The offset in caller's bytes b[0..n) (at address at) of the instruction after its first
 * direct call to address to, or -1: x86-64's CALL rel32 (E8), arm64's BL imm26. */
static long after_call(const unsigned char *b, size_t n, uint64_t at, uint64_t to, int arm64)
{
    if (arm64) {
        for (size_t i = 0; i + 4 <= n; i += 4) {
            uint32_t w = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
                         (uint32_t)b[i + 3] << 24;
            int64_t imm = (int64_t)(w & 0x3ffffff) << 38 >> 36; /* sign-extended, times 4 */
            if ((w & 0xfc000000u) == 0x94000000u && at + i + (uint64_t)imm == to)
                return (long)(i + 4);
        }
        return -1;
    }
    for (size_t i = 0; i + 5 <= n; i++) {
        int32_t rel = (int32_t)((uint32_t)b[i + 1] | (uint32_t)b[i + 2] << 8 |
                                (uint32_t)b[i + 3] << 16 | (uint32_t)b[i + 4] << 24);
        /* a stray E8 inside another instruction names this exact target by chance
         * only: the target is checked, not just the opcode */
        if (b[i] == 0xe8 && at + i + 5 + (uint64_t)(int64_t)rel == to)
            return (long)(i + 5);
    }
    return -1;
}

long st_call_return(const char *path, const char *caller, const char *callee)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *e = NULL;
    Elf_Scn *scn = NULL, *tab = NULL;
    GElf_Shdr sh, tsh;
    GElf_Ehdr eh;
    GElf_Sym from, to;
    long off = -1;

    elf_version(EV_CURRENT);
    if (fd < 0 || (e = elf_begin(fd, ELF_C_READ, NULL)) == NULL || gelf_getehdr(e, &eh) == NULL)
        goto out;
    while ((scn = elf_nextscn(e, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_SYMTAB)
            tab = scn, tsh = sh;
    if (tab == NULL || find_sym(e, tab, &tsh, caller, &from) ||
        find_sym(e, tab, &tsh, callee, &to) || from.st_size == 0 ||
        (scn = elf_getscn(e, from.st_shndx)) == NULL || gelf_getshdr(scn, &sh) == NULL ||
        sh.sh_type != SHT_PROGBITS || from.st_value < sh.sh_addr ||
        from.st_value - sh.sh_addr + from.st_size > sh.sh_size)
        goto out;
    {
        Elf_Data *d = elf_getdata(scn, NULL);
        uint64_t at = from.st_value - sh.sh_addr;
        if (d && d->d_buf && at + from.st_size <= d->d_size)
            off = after_call((const unsigned char *)d->d_buf + at, from.st_size, from.st_value,
                             to.st_value, eh.e_machine == EM_AARCH64);
    }
out:
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    return off;
}

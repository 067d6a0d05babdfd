/* perfdata.c - perf-fold on perf.data itself (issue #32): the records read by
 * lib/sf_perfdata, each callchain address resolved to the symbol of the ELF file mapped
 * there (libelf, the way perf resolves it), fed to the same state machine as perf
 * script's text (perfscript_line) in the form
 *
 *   perf script -F comm,pid,tid,time,period,event,ip,sym,dso --ns
 *
 * prints them, so every option of the text path, and its output, holds.
 *
 * Processes: maps per pid from MMAP/MMAP2 (a new mapping replaces the ones it overlaps;
 * FORK of a new process copies its parent's), names per thread from COMM (FORK inherits
 * it); records are processed in time order within each FINISHED_ROUND.  Symbols: a
 * file's .symtab, else .dynsym: its functions (STT_FUNC, STT_GNU_IFUNC) with an address,
 * at file offsets (an ET_EXEC's moved from their section's address to its offset, as
 * perf adjusts them), duplicates at one address resolved as perf's choose_best_symbol
 * does (a sized one, not weak, global, fewer leading underscores, the longer name), a
 * zero-sized one ending where the next begins; PLT entries as NAME@plt; kept in the tree
 * perf keeps them in (symtree.h), so that where two hold an address the one perf's walk
 * reaches is named; C++ names demangled as perf shows them; executable anonymous memory
 * by the JIT's /tmp/perf-PID.map; the [vdso] from this process's own.  What is not
 * resolved prints as perf prints it: "[unknown] (FILE)", or "[unknown] ([unknown])"
 * outside every mapping.  Kernel addresses are resolved from kallsyms (kallsyms.h: the
 * copy perf record kept of the recording's, else this machine's when it runs the
 * recorded kernel: load_kernel); inline frames and DWARF call graphs are not done yet.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr2line.h"
#include "kallsyms.h"
#include "perf_fold.h"
#include "sf_hex.h"
#include "sf_perfdata.h"
#include "sf_prefault.h"
#include "symtree.h"
#include "unwind.h"

struct dso {
    struct dso *next;
    char *path;
    struct pf_sym *syms; /* in the order read (perf's insertion order) */
    size_t n;
    char *names;            /* the names, one allocation */
    struct pf_symtree tree; /* perf's tree of them (symtree.h) */
    char want[41];          /* the build id the recording has for it (hex), or "" */
    const char *symfs;      /* --symfs: the folder its path is under, or "" */
    /* --call-graph dwarf: the file perf reads its bytes from (the binary, of the
     * recorded build id) and the one its symbols came from (perhaps a debug file, which
     * addr2line is asked about); the first mapped, with what the unwinder needs */
    char *file, *symsrc;
    struct pf_uw_map data; /* start, end, pgoff and lowest unset: a mapping's */
    size_t map_len;
    int data_tried;
    uint64_t text_off;    /* an ET_EXEC's .text address less its offset: objdump's addresses */
    struct pf_a2l *a2l;   /* the addr2line child for symsrc */
    const uint8_t *image; /* [vdso] from this process's own: its bytes (no file) */
    size_t image_size;
};

struct map {
    uint64_t start, end, pgoff;
    struct dso *dso;
    int identity; /* anonymous memory: addresses are their own keys (a JIT's perf map) */
};

/* Processes and thread names are found by their id, their first member (by_id). */
struct proc {
    uint32_t pid;
    struct map *maps;
    size_t n, cap;
    struct pf_unwinder *uw; /* --call-graph dwarf: its address space (unwind.h) */
};

struct comm {
    uint32_t tid;
    char name[64];
};

/* A record kept until its round is processed: what processing needs of it (the
 * callchain copied; a mapping's file already looked up), small enough to sort. */
struct held {
    uint64_t time, seq;
    uint32_t type, pid, tid, ppid, ptid;
    union {
        struct {
            const struct sf_pd_attr *attr;
            uint64_t period, nr;
            /* in the mapped file where sf_pd_stable and its order is the host's, else
             * copied into the arena of the round */
            const uint64_t *chain;
            const unsigned char *raw; /* a tracepoint's fields (--db) */
            uint32_t raw_size, cpu;
            int copied; /* chain, raw, regs and stack are in the round's arena */
            /* --call-graph dwarf: the user registers (NULL: none) and stack, in the
             * file's order (only a file of this host's order is unwound) */
            const unsigned char *regs, *stack;
            uint32_t stack_size;
            /* dwarf: chain[0..unwound) is the sample's callchain, then the user frames
             * unwound (addresses only, no markers however high: a return address of 0
             * is shown as ffffffffffffffff), shown with their inline frames */
            int dwarf;
            uint32_t unwound;
        } s;
        struct {
            uint64_t start, len, pgoff;
            struct dso *dso;
            int identity;
        } m;
        struct {
            char name[64];
            int exec;
        } comm;
    } u;
};

#define PERF_TYPE_TRACEPOINT 2 /* perf_event_attr.type of a tracepoint; config is its id */

#define PD_OOM   (-1000) /* out of memory */
#define PD_STOP  (-1001) /* the state machine stopped the run (--strict, printed) */
#define PD_DWARF (-1002) /* a user stack to unwind (--call-graph dwarf): not done here */

struct pdctx {
    struct perf_fold_ctx *c;
    struct sf_pd *pd;
    struct dso *dsos;
    struct pf_kallsyms *kernel; /* loaded at the first kernel frame (kallsyms.h) */
    uint64_t *uw_chain;         /* --call-graph dwarf: a sample's callchain, unwound */
    size_t uw_cap;
    struct pf_unwinder *uw_none; /* for samples of a process with nothing mapped */
    int kernel_tried;
    /* the records held: slots that stay where they are until processed (a record
     * carried to the next round is not moved), the free ones stacked in free_slots;
     * pend[pend0..npend) the live ones' places in time (those a flush carried first,
     * left where the sort put them), merge sort_when's other buffer; all capheld long */
    struct held *held;
    size_t npool, capheld, *free_slots, nfree;
    struct when *pend;
    size_t pend0, npend;
    struct when *merge;
    /* the held samples' callchains and fields: all in chains[cur]; a round's flush copies
     * what it keeps into the other arena and frees the rest at once */
    struct sf_arena chains[2];
    int cur;
    uint64_t max_time, next_flush; /* perf's ordered_events: max_timestamp, next_flush */
    uint64_t seq;
    struct sf_buf line;
    int failed;
    struct sf_map by_path;        /* dsos (the list owns them) */
    struct sf_map by_pid, by_tid; /* struct proc, struct comm (the maps own them) */
    struct sf_map by_file;     /* the recording's build ids by file name (the reader owns them) */
    size_t indexed;            /* of them, how many are in by_file */
    struct sf_arena demangled; /* the C++ and Rust names shown, demangled */
    int described;             /* --db: the header's clock and event lines were fed */
    struct pf_tp *tp;          /* --db: the tracepoints' formats, when the recording has them */
    /* Without --db, a sample's fold is decided by its thread, process, event and
     * callchain, given the processes' maps and names: each distinct one goes through
     * perf script's text once, the next ones add their weight to the stack it made
     * (struct seen), found by the callchain's addresses, else by the names and files
     * they resolve to (where no option prints an address or a source line).  Any MMAP,
     * COMM or FORK may change a name, so it forgets them all; so it does past SEEN_MAX. */
    struct sf_map seen;
    struct sf_arena seen_mem;
    int seen_stale;
    uint64_t *words; /* scratch: a sample's names and files, as a key */
    size_t nwords_cap;
};

#define SEEN_MAX (1u << 20)

/* A sample's fold as the text made it: entry, or NULL when the fold kept nothing of it
 * (another event than the one folded, no stack).  Its key: kind SEEN_IPS, words the
 * callchain as recorded; SEEN_NAMES, each frame's name and file (pointers to strings
 * that live as long as the run). */
enum { SEEN_IPS, SEEN_NAMES };
struct seen {
    uint64_t hash;
    uint32_t pid, tid;
    const struct sf_pd_attr *attr;
    uint64_t nr;
    int kind;
    struct pf_entry *entry;
    const uint64_t *w; /* nr words: the callchain where it lies in the mapped file, else a
                          copy in seen_mem */
};

/* ---- symbols ----------------------------------------------------------------------- */

static int underscores(const char *s)
{
    int k = 0;

    while (s[k] == '_')
        k++;
    return k;
}

/* The length of the name perf compares: it demangles a symbol's name as it reads it
 * (cplus_demangle without parameters, as demangled() below), so of two aliases the
 * longer demangled name wins, which need not be the longer mangled one (substitutions). */
static size_t shown_len(const char *name)
{
    char *dm;
    size_t n;

    if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
        (dm = cplus_demangle(name, DMGL_NO_OPTS)) == NULL)
        return strlen(name);
    n = strlen(dm);
    free(dm);
    return n;
}

/* perf's choose_best_symbol: 1 when a is to be kept over b. */
static int better(const struct pf_sym *a, const struct pf_sym *b)
{
    size_t na, nb;

    if (a->sized != b->sized)
        return a->sized;
    if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
        return b->bind == STB_WEAK;
    if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
        return a->bind == STB_GLOBAL;
    if (underscores(a->name) != underscores(b->name))
        return underscores(a->name) < underscores(b->name);
    na = shown_len(a->name);
    nb = shown_len(b->name);
    return na >= nb;
}

Elf_Scn *pf_section_named(Elf *e, const char *want, GElf_Shdr *sh)
{
    Elf_Scn *scn = NULL;
    size_t shstr;
    const char *n;

    if (elf_getshdrstrndx(e, &shstr) != 0)
        return NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL)
        if (gelf_getshdr(scn, sh) != NULL && (n = elf_strptr(e, shstr, sh->sh_name)) != NULL &&
            strcmp(n, want) == 0)
            return scn;
    return NULL;
}

static int add_sym(struct dso *d, size_t *cap, uint64_t start, uint64_t size, int bind,
                   struct sf_buf *names, const char *name, size_t nlen, const char *suffix)
{
    if (d->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 1024;
        struct pf_sym *g = realloc(d->syms, nc * sizeof(*g));
        if (g == NULL)
            return -1;
        d->syms = g;
        *cap = nc;
    }
    d->syms[d->n].start = start;
    d->syms[d->n].end = start + size;
    d->syms[d->n].sized = size > 0;
    d->syms[d->n].bind = bind;
    d->syms[d->n].shown = 0;
    d->syms[d->n].ord = (uint32_t)d->n;
    d->syms[d->n].name = (const char *)(uintptr_t)names->len; /* an offset until the end */
    if (sf_buf_append(names, name, nlen) < 0 ||
        sf_buf_append(names, suffix, strlen(suffix) + 1) < 0)
        return -1;
    d->n++;
    return 0;
}

/* The symbols of one symbol table section as perf's dso__load_sym takes them: a named
 * FUNC, IFUNC or OBJECT in any section, or a label (NOTYPE) in one whose name holds
 * "text". */
/* Where perf 6.1 puts a user-space symbol: at its file offset, st_value less the
 * difference between address and offset of the binary's PT_LOAD segment that holds it
 * (the binary's: a debug file's segments have no bytes), or, where none does, of its
 * section.  For most symbols of a shared library the two are equal; not for its data
 * (an unwinder gone astray lands there) nor for a linker that lays out text unlike GNU
 * ld's. */
static uint64_t file_address(Elf *runtime, uint64_t value, const GElf_Shdr *tsh)
{
    size_t n;

    if (runtime && elf_getphdrnum(runtime, &n) == 0)
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            uint64_t sz;
            if (gelf_getphdr(runtime, (int)i, &ph) == NULL)
                break;
            sz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
            if (ph.p_type == PT_LOAD && sz && value >= ph.p_vaddr && value - ph.p_vaddr < sz)
                return value - (ph.p_vaddr - ph.p_offset);
        }
    return value - (tsh->sh_addr - tsh->sh_offset);
}

static int load_table(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, Elf *runtime, struct dso *d,
                      struct sf_buf *names, size_t *cap)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, shstr = 0;

    if (elf_getshdrstrndx(e, &shstr) != 0)
        return 0;

    for (size_t i = 0; data && i < count; i++) {
        GElf_Sym s;
        GElf_Shdr tsh;
        Elf_Scn *ts;
        const char *name, *secname;
        int type;
        if (gelf_getsym(data, (int)i, &s) == NULL)
            continue;
        type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
             type != STT_NOTYPE) ||
            s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_name == 0)
            continue;
        if ((name = elf_strptr(e, sh->sh_link, s.st_name)) == NULL || !name[0])
            continue;
        if ((ts = elf_getscn(e, s.st_shndx)) == NULL || gelf_getshdr(ts, &tsh) == NULL ||
            (type == STT_NOTYPE &&
             ((secname = elf_strptr(e, shstr, tsh.sh_name)) == NULL || !strstr(secname, "text"))))
            continue;
        if (add_sym(d, cap, file_address(runtime, s.st_value, &tsh), s.st_size,
                    GELF_ST_BIND(s.st_info), names, name, strlen(name), "") < 0)
            return -1;
    }
    return 0;
}

/* Room for a symbol table's symbols and their names at once, before load_table (each
 * bounded by the section's bytes in the file): grown a doubling at a time, the arrays
 * were copied and faulted in afresh each time. */
static void presize(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct dso *d, size_t *cap,
                    struct sf_buf *names)
{
    Elf_Data *data = elf_getdata(scn, NULL), *str;
    Elf_Scn *strscn = elf_getscn(e, sh->sh_link);
    size_t n = data && sh->sh_entsize ? data->d_size / sh->sh_entsize : 0;
    struct pf_sym *g;

    if (n <= *cap || d->n || (g = realloc(d->syms, n * sizeof(*g))) == NULL)
        return;
    sf_prefault(g, n * sizeof(*g));
    d->syms = g;
    *cap = n;
    if (strscn && (str = elf_getdata(strscn, NULL)) != NULL && names->len == 0 &&
        sf_buf_reserve(names, str->d_size) == 0)
        sf_prefault(names->data, names->cap);
}

/* The GNU build id of an ELF file as hex into out (41 bytes); 0, or -1 when it has none. */
int pf_build_id(Elf *e, char *out)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;

    while ((scn = elf_nextscn(e, scn)) != NULL) {
        Elf_Data *d;
        GElf_Nhdr nh;
        size_t off = 0, noff, doff;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE ||
            (d = elf_getdata(scn, NULL)) == NULL)
            continue;
        while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + noff, "GNU", 4) == 0 && nh.n_descsz <= 20) {
                sf_hex_encode(out, (const uint8_t *)d->d_buf + doff, nh.n_descsz);
                return 0;
            }
    }
    return -1;
}

/* The .gnu_debuglink file name of e into out, or "". */
void pf_debuglink(Elf *e, char *out, size_t cap)
{
    GElf_Shdr sh;
    Elf_Scn *scn = pf_section_named(e, ".gnu_debuglink", &sh);
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

    out[0] = 0;
    if (d != NULL && d->d_size > 0)
        snprintf(out, cap, "%.*s", (int)strnlen(d->d_buf, d->d_size), (const char *)d->d_buf);
}

struct elf_file {
    int fd;
    Elf *e;
    char *path; /* the file opened (elf_open's copy) */
};

/* An ELF file named by the recording: a regular file only (a name in a perf.data is
 * the recording's; here it might be a FIFO or a device, which must not block the run). */
static int elf_open(struct elf_file *f, const char *path)
{
    struct stat st;

    f->e = NULL;
    f->path = NULL;
    if ((f->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return -1;
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(f->fd);
        return -1;
    }
    if ((f->e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL)) == NULL || elf_kind(f->e) != ELF_K_ELF ||
        (f->path = strdup(path)) == NULL) {
        if (f->e)
            elf_end(f->e);
        close(f->fd);
        return -1;
    }
    return 0;
}

static void elf_close(struct elf_file *f)
{
    elf_end(f->e);
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
}

static Elf_Scn *table_of(Elf *e, Elf64_Word type)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;

    while ((scn = elf_nextscn(e, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == type)
            return scn;
    return NULL;
}

/* perf's build-id cache: SYMFS/.debug with --symfs (perf then skips the local one),
 * else $PERF_BUILDID_DIR, else ~/.debug; then .build-id/XX/REST/LEAF (LEAF elf: the file
 * as recorded, which perf record copies there; debug: its debug file). */
static void cache_file(char *out, size_t cap, const char *symfs, const char *rest)
{
    const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

    if (symfs[0])
        snprintf(out, cap, "%s/.debug/%s", symfs, rest);
    else if (dir && dir[0])
        snprintf(out, cap, "%s/%s", dir, rest);
    else
        snprintf(out, cap, "%s/.debug/%s", home ? home : "", rest);
}

static void cache_path(char *out, size_t cap, const char *symfs, const char *id, const char *leaf)
{
    char rest[128];

    snprintf(rest, sizeof(rest), ".build-id/%.2s/%s/%s", id, id + 2, leaf);
    cache_file(out, cap, symfs, rest);
}

/* Open path when its build id is want (any, when want is ""): perf uses no file whose
 * build id is not the recording's. */
static int open_matching(struct elf_file *f, const char *path, const char *want)
{
    char id[41];

    if (elf_open(f, path) != 0)
        return -1;
    if (want[0] && (pf_build_id(f->e, id) != 0 || strcmp(id, want) != 0)) {
        elf_close(f);
        return -1;
    }
    return 0;
}

/* A separate debug file with the .symtab the binary lacks, where perf and gdb look for
 * one, of the binary's build id: the build-id cache's debug file, /usr/lib/debug/
 * .build-id/XX/REST.debug, then the .gnu_debuglink name beside the binary, in its .debug
 * folder and under /usr/lib/debug. */
static int debug_file(Elf *bin, const char *path, const char *symfs, struct elf_file *out)
{
    char id[41], link[256], dir[4096], cand[8192];
    const char *slash = strrchr(path, '/');

    if (pf_build_id(bin, id) != 0 || strlen(id) <= 2)
        id[0] = 0;
    if (id[0]) {
        cache_path(cand, sizeof(cand), symfs, id, "debug");
        if (open_matching(out, cand, id) == 0) {
            if (table_of(out->e, SHT_SYMTAB))
                return 0;
            elf_close(out);
        }
        snprintf(cand, sizeof(cand), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", symfs, id, id + 2);
        if (open_matching(out, cand, id) == 0) {
            if (table_of(out->e, SHT_SYMTAB))
                return 0;
            elf_close(out);
        }
    }
    pf_debuglink(bin, link, sizeof(link));
    if (!link[0] || slash == NULL)
        return -1;
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    const char *const fmt[] = {"%s%s/%s", "%s%s/.debug/%s", "%s/usr/lib/debug%s/%s"};
    for (int i = 0; i < 3; i++) {
        snprintf(cand, sizeof(cand), fmt[i], symfs, dir, link);
        if (strcmp(cand + strlen(symfs), path) != 0 && open_matching(out, cand, id) == 0) {
            if (table_of(out->e, SHT_SYMTAB))
                return 0;
            elf_close(out);
        }
    }
    return -1;
}

/* The PLT's entries as "NAME@plt" (perf's dso__synthesize_plt_symbols, x86-64: a 16-byte
 * header, then 16 bytes an entry, one per .rela.plt relocation, in order; .plt.sec's
 * entries when there is one, without a header), named by the relocation's .dynsym entry. */
static int plt_syms(Elf *e, struct dso *d, size_t *cap, struct sf_buf *names)
{
    GElf_Shdr rsh, psh, ssh, dsh;
    Elf_Scn *rel = pf_section_named(e, ".rela.plt", &rsh), *plt, *sec, *dyn;
    Elf_Data *rd, *dd;
    uint64_t off, entry = 16;

    if (rel == NULL || rsh.sh_type != SHT_RELA || rsh.sh_entsize == 0 ||
        (plt = pf_section_named(e, ".plt", &psh)) == NULL ||
        (dyn = elf_getscn(e, rsh.sh_link)) == NULL || gelf_getshdr(dyn, &dsh) == NULL ||
        dsh.sh_type != SHT_DYNSYM || (rd = elf_getdata(rel, NULL)) == NULL ||
        (dd = elf_getdata(dyn, NULL)) == NULL)
        return 0;
    off = psh.sh_offset + 16;
    if ((sec = pf_section_named(e, ".plt.sec", &ssh)) != NULL)
        off = ssh.sh_offset;
    for (size_t i = 0; i < rsh.sh_size / rsh.sh_entsize; i++, off += entry) {
        GElf_Rela r;
        GElf_Sym s;
        const char *name = "";
        if (gelf_getrela(rd, (int)i, &r) == NULL)
            break;
        if (gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s) != NULL && s.st_name &&
            (name = elf_strptr(e, dsh.sh_link, s.st_name)) == NULL)
            name = "";
        if (add_sym(d, cap, off, entry, STB_GLOBAL, names, name, strlen(name), "@plt") < 0)
            return -1;
    }
    return 0;
}

/* A zero-sized symbol ends where the next begins, the last one a page on (perf's
 * symbols__fixup_end), in the tree's order. */
static void fixup_end(struct dso *d)
{
    uint32_t prev = st_first(&d->tree), cur;

    if (prev == ST_NIL)
        return;
    for (cur = st_next(&d->tree, prev); cur != ST_NIL; prev = cur, cur = st_next(&d->tree, cur))
        if (d->syms[prev].end == d->syms[prev].start)
            d->syms[prev].end = d->syms[cur].start;
    if (d->syms[prev].end == d->syms[prev].start)
        d->syms[prev].end = ((d->syms[prev].start + 4095) & ~(uint64_t)4095) + 4096;
}

/* One symbol per address, perf's choice among aliases (symbols__fixup_duplicate): the
 * tree walked in order, of two neighbours at one address the one chosen stays and the
 * other is erased from the tree, in perf's order of erasures. */
static void fixup_duplicate(struct dso *d)
{
    uint32_t nd = st_first(&d->tree), curr, next;

    while (nd != ST_NIL) {
        curr = nd;
        for (;;) {
            if ((next = nd = st_next(&d->tree, curr)) == ST_NIL ||
                d->syms[curr].start != d->syms[next].start)
                break;
            if (better(&d->syms[curr], &d->syms[next])) {
                st_erase(&d->tree, next);
                continue;
            }
            nd = st_next(&d->tree, curr);
            st_erase(&d->tree, curr);
            break;
        }
    }
}

enum { SYMS_ELF, SYMS_PERF_MAP };

/* The symbols read (syms[0..n), the first ntab from a table, the rest an ELF file's PLT)
 * into perf's tree of them: the table's inserted in the order read, the choice among
 * aliases, then the ends fixed; then the PLT's entries inserted, as perf synthesizes
 * them after the rest.  A JIT's perf map is inserted as it is.  (kallsyms fixes its ends
 * before the choice, so of zero-sized aliases the last keeps a size and wins: see
 * kallsyms.h.) */
static void fix_syms(struct dso *d, int kind, size_t ntab)
{
    uint32_t i;

    if (st_init(&d->tree, d->n) < 0) {
        d->n = 0;
        return;
    }
    for (i = 0; i < ntab; i++)
        st_insert(&d->tree, d->syms, i);
    if (kind != SYMS_PERF_MAP)
        fixup_duplicate(d);
    if (kind == SYMS_ELF)
        fixup_end(d);
    for (i = (uint32_t)ntab; i < d->n; i++)
        st_insert(&d->tree, d->syms, i);
}

/* The symbols of one ELF image (its own tables, a debug file's, the PLT). */
static void load_elf(struct dso *d, struct elf_file *bin_f);

/* [vdso]: with a recorded build id, the copy perf record kept in the build-id cache
 * ([vdso]/ID/vdso), perf's only source for it (none there: no symbols, as perf); without
 * one, the image the kernel maps into this process (the recording's kernel assumed). */
static void load_vdso(struct dso *d)
{
    FILE *f;
    char line[512], *e;
    unsigned long long a, b;
    struct elf_file img = {-1, NULL, NULL};

    if (d->want[0]) {
        char rest[128], path[4096 + 256];
        snprintf(rest, sizeof(rest), "[vdso]/%s/vdso", d->want);
        cache_file(path, sizeof(path), d->symfs, rest);
        if (open_matching(&img, path, d->want) == 0) {
            load_elf(d, &img);
        }
        return;
    }
    f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "[vdso]") && (a = strtoull(line, &e, 16), *e == '-') &&
            (b = strtoull(e + 1, &e, 16), *e == ' ') && b > a && b - a < (64u << 10)) {
            static char copy[64u << 10];
            memcpy(copy, (const void *)a, b - a);
            if ((img.e = elf_memory(copy, b - a)) != NULL) {
                load_elf(d, &img);
                d->image = (const uint8_t *)copy;
                d->image_size = b - a;
            }
            break;
        }
    if (f)
        fclose(f);
}

/* A JIT's /tmp/perf-PID.map, as perf's dso__load_perf_map reads it: "START SIZE NAME"
 * per line, hex numbers, the name the rest of the line. */
static void load_perf_map(struct dso *d)
{
    FILE *f = fopen(d->path, "r");
    struct sf_buf names;
    char *line = NULL;
    size_t n = 0, cap = 0;
    ssize_t len;

    if (f == NULL)
        return;
    sf_buf_init(&names, (size_t)1 << 30);
    while ((len = getline(&line, &n, f)) > 0) {
        char *p = line, *e;
        unsigned long long start, size;
        line[strcspn(line, "\n")] = 0;
        start = strtoull(p, &e, 16);
        if (e == p || *e != ' ')
            continue;
        size = strtoull(p = e + 1, &e, 16);
        if (e == p || *e != ' ' || !e[1])
            continue;
        if (add_sym(d, &cap, start, size, STB_GLOBAL, &names, e + 1, strlen(e + 1), "") < 0)
            break;
    }
    free(line);
    fclose(f);
    d->names = (char *)names.data;
    for (size_t i = 0; i < d->n; i++)
        d->syms[i].name = d->names + (size_t)(uintptr_t)d->syms[i].name;
    fix_syms(d, SYMS_PERF_MAP, d->n);
}

/* name[0..n) then suffix as perf shows a name it reads from a file (an ELF symbol, a PLT
 * entry's function, addr2line's answer): C++ and Rust's legacy names demangled by
 * libiberty's cplus_demangle without parameters (DMGL_NO_OPTS: "ns::f", not "ns::f(int)");
 * name itself when there is nothing to demangle (or no memory).  suffix "" keeps name's
 * own length (n is then strlen(name)). */
static const char *demangled(struct pdctx *x, const char *name, size_t n, const char *suffix)
{
    char *dm = NULL, *keep, base[1024];
    const char *src = name;
    size_t l, sl = strlen(suffix);

    if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || (sl && n >= sizeof(base)))
        return name;
    if (sl) { /* the part before the suffix, on its own */
        snprintf(base, sizeof(base), "%.*s", (int)n, name);
        src = base;
    }
    if ((dm = cplus_demangle(src, DMGL_NO_OPTS)) == NULL)
        return name;
    l = strlen(dm);
    if ((keep = sf_arena_alloc(&x->demangled, l + sl + 1)) != NULL) {
        memcpy(keep, dm, l);
        memcpy(keep + l, suffix, sl + 1);
    }
    free(dm);
    return keep ? keep : name;
}

/* The name perf shows for a symbol (a PLT entry: its function's name demangled, then
 * "@plt"); demangled at the first use, once per symbol. */
static const char *shown_name(struct pdctx *x, struct pf_sym *sy)
{
    if (!sy->shown) {
        size_t n = strlen(sy->name);
        int plt = n > 4 && strcmp(sy->name + n - 4, "@plt") == 0;
        sy->shown = 1;
        sy->name = demangled(x, sy->name, plt ? n - 4 : n, plt ? "@plt" : "");
    }
    return sy->name;
}

/* The file a mapping names, if its build id is the one recorded (when one is), else
 * the copy perf record put in the build-id cache; no symbols when neither is there. */
static void load_syms(struct dso *d)
{
    struct elf_file bin;
    char cand[4096 + 256];

    snprintf(cand, sizeof(cand), "%s%s", d->symfs, d->path);
    if (open_matching(&bin, cand, d->want) == 0) {
        load_elf(d, &bin);
        return;
    }
    if (d->want[0]) {
        cache_path(cand, sizeof(cand), d->symfs, d->want, "elf");
        if (open_matching(&bin, cand, d->want) == 0)
            load_elf(d, &bin);
    }
}

static void load_elf(struct dso *d, struct elf_file *bin_f)
{
    struct elf_file bin = *bin_f, dbg, *src = &bin;
    Elf_Scn *scn;
    GElf_Shdr ssh;
    GElf_Ehdr eh;
    struct sf_buf names;
    size_t cap = 0, ntab = 0;
    int have_dbg = 0;

    sf_buf_init(&names, (size_t)1 << 30);
    if (gelf_getehdr(bin.e, &eh) != NULL) {
        /* the symbols from the fullest table: the binary's .symtab, a debug file's, or
         * the binary's .dynsym; whether to move them to file offsets, from the binary */
        if (table_of(bin.e, SHT_SYMTAB) == NULL && bin.fd >= 0 &&
            debug_file(bin.e, d->path, d->symfs, &dbg) == 0) {
            src = &dbg;
            have_dbg = 1;
        }
        scn = table_of(src->e, SHT_SYMTAB);
        if (scn == NULL)
            scn = table_of(src->e, SHT_DYNSYM);
        if (scn && gelf_getshdr(scn, &ssh) != NULL)
            presize(src->e, scn, &ssh, d, &cap, &names);
        if (scn && gelf_getshdr(scn, &ssh) != NULL &&
            load_table(src->e, scn, &ssh, bin.e, d, &names, &cap) < 0)
            d->n = 0;
        ntab = d->n;
        if (plt_syms(bin.e, d, &cap, &names) < 0)
            d->n = ntab = 0;
    }
    /* the files, for --call-graph dwarf (the strings are the dso's now) */
    /* the file whose .symtab the symbols came from, as perf's symsrc_filename: none
     * when only a .dynsym was there (perf then asks addr2line about the recorded path) */
    d->file = bin.path;
    d->symsrc = have_dbg                                          ? dbg.path
                : bin.path && table_of(bin.e, SHT_SYMTAB) != NULL ? strdup(bin.path)
                                                                  : NULL;
    bin.path = NULL;
    if (have_dbg) {
        dbg.path = NULL;
        elf_close(&dbg);
    }
    elf_close(&bin);
    d->names = (char *)names.data; /* the buffer's allocation is the dso's now */
    for (size_t i = 0; i < d->n; i++)
        d->syms[i].name = d->names + (size_t)(uintptr_t)d->syms[i].name;
    fix_syms(d, SYMS_ELF, ntab);
}

static void wanted_id(struct pdctx *x, const char *path, const uint8_t *mid, size_t msize,
                      char *out);

/* The running kernel's build id (its notes' NT_GNU_BUILD_ID) as hex into out, or "". */
static void running_kernel_id(char *out)
{
    unsigned char b[4096];
    FILE *f = fopen("/sys/kernel/notes", "rb");
    size_t n = f ? fread(b, 1, sizeof(b), f) : 0, off = 0;

    out[0] = 0;
    if (f)
        fclose(f);
    while (off + 12 <= n) { /* namesz, descsz, type (host order), name, desc, 4-aligned */
        uint32_t nsz, dsz, type;
        memcpy(&nsz, b + off, 4);
        memcpy(&dsz, b + off + 4, 4);
        memcpy(&type, b + off + 8, 4);
        off += 12;
        if (nsz > n || dsz > n || off + ((nsz + 3) & ~3u) + dsz > n)
            return;
        if (type == NT_GNU_BUILD_ID && nsz == 4 && memcmp(b + off, "GNU", 4) == 0 && dsz <= 20) {
            sf_hex_encode(out, b + off + 4, dsz);
            return;
        }
        off += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
    }
}

/* The kernel's symbols (kallsyms.h), found as perf's dso__find_kallsyms finds them but
 * for one step: --kallsyms FILE; the copy perf record kept in the build-id cache,
 * [kernel.kallsyms]/ID/kallsyms, when the recording names its kernel's build id and the
 * copy has addresses; this machine's /proc/kallsyms when its kernel is the recorded one
 * (or the recording names none); else none (the frames print [unknown]).  perf reads
 * /proc/kallsyms before its own copy when the kernels match.  The copy comes first here
 * because it is the recording's kernel as it was when recorded (a module loaded or
 * unloaded since changes nothing) and because the kernel formats /proc/kallsyms anew on
 * every read: 38 ms of CPU on this project's machines, more than perf-fold's whole run
 * on a 10 MB recording. */
static struct pf_kallsyms *load_kernel(struct pdctx *x)
{
    char want[41], have[41], rest[128], cached[4096 + 128];
    struct pf_kallsyms *k;

    x->kernel_tried = 1;
    if (x->c->o.kallsyms)
        return pf_ks_load(x->c->o.kallsyms);
    wanted_id(x, "[kernel.kallsyms]", NULL, 0, want);
    if (want[0]) {
        snprintf(rest, sizeof(rest), "[kernel.kallsyms]/%s/kallsyms", want);
        cache_file(cached, sizeof(cached), x->c->o.symfs ? x->c->o.symfs : "", rest);
        if ((k = pf_ks_load(cached)) != NULL && pf_ks_count(k) > 0)
            return k;
        pf_ks_free(k);
    }
    running_kernel_id(have);
    if (!want[0] || !have[0] || strcmp(want, have) == 0)
        return pf_ks_load("/proc/kallsyms");
    return NULL;
}

/* The symbol perf names at key: its tree walk (symtree.h). */
static struct pf_sym *find_sym(const struct dso *d, uint64_t key)
{
    uint32_t i = d->n ? st_find(&d->tree, d->syms, key) : ST_NIL;
    return i == ST_NIL ? NULL : &d->syms[i];
}

static int dso_eq(const void *val, const void *key)
{
    return strcmp(((const struct dso *)val)->path, key) == 0;
}

static int id_eq(const void *val, const void *key)
{
    return *(const uint32_t *)val == *(const uint32_t *)key;
}

/* val, new, into m under hash h (not there yet): 0, or -1 for no memory. */
static int index_put(struct sf_map *m, uint64_t h, int (*eq)(const void *, const void *),
                     const void *key, void *val)
{
    if (sf_map_reserve(m, 1) < 0)
        return -1;
    sf_map_fill(m, sf_map_probe(m, h, eq, key), h, val);
    return 0;
}

static int buildid_eq(const void *val, const void *key)
{
    return strcmp(((const struct sf_pd_buildid *)val)->filename, key) == 0;
}

/* The build id the recording has for path (hex into out, "" when none): the mapping's own
 * (MMAP2 with one), else the recording's table of them (indexed at the first call). */
static void wanted_id(struct pdctx *x, const char *path, const uint8_t *mid, size_t msize,
                      char *out)
{
    const struct sf_pd_info *in = sf_pd_info(x->pd);
    const struct sf_pd_buildid *b;

    out[0] = 0;
    if (mid && msize) {
        sf_hex_encode(out, mid, msize);
        return;
    }
    if (x->indexed < in->nbuildids) { /* pipe mode: more may have come */
        for (; x->indexed < in->nbuildids; x->indexed++) {
            const struct sf_pd_buildid *e = &in->buildids[x->indexed];
            uint64_t h = sf_hash(e->filename, strlen(e->filename));
            if (sf_map_find(&x->by_file, h, buildid_eq, e->filename) == NULL &&
                index_put(&x->by_file, h, buildid_eq, e->filename, (void *)e) < 0)
                return;
        }
    }
    b = sf_map_find(&x->by_file, sf_hash(path, strlen(path)), buildid_eq, path);
    if (b && b->size)
        sf_hex_encode(out, b->id, b->size);
}

static struct dso *dso_get(struct pdctx *x, const char *path, const uint8_t *mid, size_t msize)
{
    uint64_t h = sf_hash(path, strlen(path));
    struct dso *d = sf_map_find(&x->by_path, h, dso_eq, path);

    if (d)
        return d;
    if ((d = calloc(1, sizeof(*d))) == NULL || (d->path = strdup(path)) == NULL) {
        free(d);
        return NULL;
    }
    if (index_put(&x->by_path, h, dso_eq, path, d) < 0) {
        free(d->path);
        free(d);
        return NULL;
    }
    wanted_id(x, path, mid, msize, d->want);
    d->symfs = x->c->o.symfs ? x->c->o.symfs : "";
    if (strncmp(path, "/tmp/perf-", 10) == 0 && strlen(path) > 14 &&
        strcmp(path + strlen(path) - 4, ".map") == 0)
        load_perf_map(d);
    else if (path[0] == '/')
        load_syms(d);
    else if (strcmp(path, "[vdso]") == 0)
        load_vdso(d);
    d->next = x->dsos;
    x->dsos = d;
    return d;
}

/* ---- processes --------------------------------------------------------------------- */

/* The entry of id in m, an allocation of size bytes whose first member is its uint32_t
 * id; made (zeroed) when there is none and make is set; NULL when none, or no memory. */
static void *by_id(struct sf_map *m, uint32_t id, size_t size, int make)
{
    uint64_t h = sf_hash_u64(id);
    void *e = sf_map_find(m, h, id_eq, &id);

    if (e || !make || (e = calloc(1, size)) == NULL)
        return e;
    memcpy(e, &id, sizeof(id));
    if (index_put(m, h, id_eq, &id, e) < 0) {
        free(e);
        return NULL;
    }
    return e;
}

_Static_assert(offsetof(struct proc, pid) == 0 && offsetof(struct comm, tid) == 0,
               "by_id finds an entry by its first member");

static struct proc *proc_get(struct pdctx *x, uint32_t pid, int make)
{
    return by_id(&x->by_pid, pid, sizeof(struct proc), make);
}

static int add_map(struct proc *p, const struct map *m)
{
    struct map tail = {0};
    size_t k = 0;

    /* the ones it overlaps give way: whole, or the parts outside it (one that holds it
     * keeps its head and its tail, as perf's maps__fixup_overlappings splits it) */
    for (size_t i = 0; i < p->n; i++) {
        struct map o = p->maps[i];
        if (o.end <= m->start || o.start >= m->end) {
            p->maps[k++] = o;
        } else if (o.start < m->start) {
            if (o.end > m->end) {
                tail = o;
                tail.pgoff += m->end - o.start;
                tail.start = m->end;
            }
            o.end = m->start;
            p->maps[k++] = o;
        } else if (o.end > m->end) {
            o.pgoff += m->end - o.start;
            o.start = m->end;
            p->maps[k++] = o;
        }
    }
    p->n = k;
    if (p->n == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 16;
        struct map *g = realloc(p->maps, nc * sizeof(*g));
        if (g == NULL)
            return -1;
        p->maps = g;
        p->cap = nc;
    }
    /* kept in address order (they do not overlap): found by binary search */
    for (k = p->n; k > 0 && p->maps[k - 1].start > m->start; k--)
        ;
    memmove(&p->maps[k + 1], &p->maps[k], (p->n - k) * sizeof(*p->maps));
    p->maps[k] = *m;
    p->n++;
    return tail.end > tail.start ? add_map(p, &tail) : 0;
}

static const struct map *find_map(const struct proc *p, uint64_t ip)
{
    size_t lo = 0, hi = p ? p->n : 0;

    while (lo < hi) { /* the first map that starts after ip */
        size_t mid = lo + (hi - lo) / 2;
        if (p->maps[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ip < p->maps[lo - 1].end ? &p->maps[lo - 1] : NULL;
}

static struct comm *comm_get(struct pdctx *x, uint32_t tid, int make)
{
    return by_id(&x->by_tid, tid, sizeof(struct comm), make);
}

/* ---- records ----------------------------------------------------------------------- */

static int line(struct pdctx *x)
{
    int rc = perfscript_line(x->c, x->line.len ? (char *)x->line.data : (char *)"", x->line.len);

    sf_buf_reset(&x->line);
    return rc < 0 ? PD_STOP : 0;
}

/* One frame line, "\t%16lx NAME (FILE)", as perf script prints it, without printf: the
 * per-frame cost is most of the run. */
static int frame(struct pdctx *x, uint64_t addr, const char *name, const char *file)
{
    char hex[17], lead[18];
    int k = 16, rc;

    hex[16] = 0;
    do {
        hex[--k] = "0123456789abcdef"[addr & 15];
        addr >>= 4;
    } while (addr);
    lead[0] = '\t';
    memset(lead + 1, ' ', (size_t)k);
    memcpy(lead + 1 + k, hex + k, (size_t)(16 - k));
    lead[17] = ' ';
    rc = sf_buf_append(&x->line, lead, 18);
    rc |= sf_buf_append(&x->line, name, strlen(name));
    rc |= sf_buf_append(&x->line, " (", 2);
    rc |= sf_buf_append(&x->line, file, strlen(file));
    rc |= sf_buf_append(&x->line, ")", 1);
    return rc ? PD_OOM : line(x);
}

/* --db: what perf script --header says of the recording and perf-fold reads: its clock
 * (perf record -k) and its events, tracepoints (type 2) told from the others. */
static int describe(struct pdctx *x)
{
    static const char *const clocks[] = {"realtime",
                                         "monotonic",
                                         "process_cputime_id",
                                         "thread_cputime_id",
                                         "monotonic_raw",
                                         "realtime_coarse",
                                         "monotonic_coarse",
                                         "boottime",
                                         "realtime_alarm",
                                         "boottime_alarm",
                                         NULL,
                                         "tai"};
    const struct sf_pd_info *in = sf_pd_info(x->pd);
    int rc = 0;

    x->described = 1;
    if (in->nattr && in->attr[0].use_clockid) {
        int32_t id = in->attr[0].clockid;
        const char *name = id >= 0 && (size_t)id < sizeof(clocks) / sizeof(clocks[0]) && clocks[id]
                               ? clocks[id]
                               : "unknown";
        sf_buf_printf(&x->line, "# clockid: %s (%d)", name, (int)id);
        rc = line(x);
    }
    for (size_t i = 0; i < in->nattr && rc == 0; i++) {
        if (!in->attr[i].name[0])
            continue;
        sf_buf_printf(&x->line, "# event : name = %s, , type = %u", in->attr[i].name,
                      in->attr[i].type);
        rc = line(x);
    }
    if (rc == 0 && in->tracing && x->tp == NULL) {
        char why[160];
        if (pf_tp_open(&x->tp, in->tracing, in->tracing_size, why, sizeof(why)) < 0)
            fprintf(stderr, "%s: %s: %s: tracepoints without their fields\n", PF_TOOL, x->c->file,
                    why);
    }
    return rc;
}

/* v in decimal (negative when neg), in at least width characters: right-aligned and
 * filled with fill, or left-aligned (width < 0) and filled with blanks; appended to p,
 * returns the end.  printf's %*lld and %-*d, without printf: it is per sample. */
static char *put_num(char *p, uint64_t v, int neg, int width, char fill)
{
    char d[21];
    int k = 0, left = width < 0;

    do {
        d[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        d[k++] = '-';
    width = left ? -width : width;
    for (int w = width; !left && w > k; w--)
        *p++ = fill;
    for (int i = k; i > 0;)
        *p++ = d[--i];
    for (int w = width; left && w > k; w--)
        *p++ = ' ';
    return p;
}

static char *put_u64(char *p, uint64_t v, int width, char fill)
{
    return put_num(p, v, 0, width, fill);
}

/* a pid or tid as perf prints it, signed (-1 for a sample of no task) */
static char *put_id(char *p, uint32_t id, int width)
{
    int32_t v = (int32_t)id;

    return put_num(p, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v, v < 0, width, ' ');
}

struct seen_key {
    uint64_t hash;
    const struct held *h;
    int kind;
    uint64_t nr;
    const uint64_t *w;
};

static int seen_eq(const void *val, const void *key)
{
    const struct seen *a = val;
    const struct seen_key *k = key;
    const struct held *h = k->h;

    return a->hash == k->hash && a->kind == k->kind && a->pid == h->pid && a->tid == h->tid &&
           a->attr == h->u.s.attr && a->nr == k->nr && memcmp(a->w, k->w, a->nr * 8) == 0;
}

static void seen_hash(struct seen_key *k)
{
    const struct held *h = k->h;

    k->hash = sf_hash(k->w, k->nr * 8) ^ sf_hash_u64((uint64_t)h->pid << 32 | h->tid) ^
              sf_hash_u64((uint64_t)(uintptr_t)h->u.s.attr) ^ (uint64_t)k->kind;
}

/* The slot of key k (hashed) in x->seen, room made for one more (empty when not there:
 * fill it with remember); NULL: no memory. */
static struct sf_map_slot *seen_probe(struct pdctx *x, const struct seen_key *k)
{
    return sf_map_reserve(&x->seen, 1) < 0 ? NULL : sf_map_probe(&x->seen, k->hash, seen_eq, k);
}

static int remember(struct pdctx *x, struct sf_map_slot *sl, const struct seen_key *k,
                    struct pf_entry *entry)
{
    /* a callchain read where it lies stays there until the file is closed, after the
     * table is gone: only names (scratch words) and copied chains are copied */
    int lies = k->kind == SEEN_IPS && !k->h->u.s.copied;
    struct seen *s = sf_arena_alloc(&x->seen_mem, sizeof(*s) + (lies ? 0 : k->nr * 8));

    if (s == NULL)
        return PD_OOM;
    *s = (struct seen){k->hash, k->h->pid, k->h->tid, k->h->u.s.attr,
                       k->nr,   k->kind,   entry,     lies ? k->w : (uint64_t *)(s + 1)};
    if (!lies)
        memcpy(s + 1, k->w, k->nr * 8);
    sf_map_fill(&x->seen, sl, k->hash, s);
    return 0;
}

static void resolve(struct pdctx *x, const struct proc *p, uint64_t ip, int user, uint64_t *addr,
                    const char **name, const char **file);
static int sample_text(struct pdctx *x, const struct held *h);
static size_t inline_names(struct pdctx *x, const struct proc *p, uint64_t ip,
                           const char *const **names, const char **base);

/* The sample's frames as names and files (two words each) into x->words; their count,
 * or -1: out of memory, or a context marker perf does not know (then the text, which
 * prints no frames, is the rule). */
static int64_t name_words(struct pdctx *x, const struct held *h)
{
    const struct proc *p = proc_get(x, h->pid, 0);
    size_t n = 0;
    int user = 1;

    for (uint64_t i = 0; i < h->u.s.nr; i++) {
        uint64_t ip = h->u.s.chain[i], addr;
        const char *name, *file, *const *in = NULL, *base = NULL;
        size_t k;
        if (ip >= SF_PD_CONTEXT_MAX && !(h->u.s.dwarf && i >= h->u.s.unwound)) {
            if (ip != SF_PD_CONTEXT_USER && ip != SF_PD_CONTEXT_KERNEL && ip != SF_PD_CONTEXT_HV)
                return -1;
            user = ip == SF_PD_CONTEXT_USER;
            continue;
        }
        resolve(x, p, ip, user, &addr, &name, &file);
        k = h->u.s.dwarf && user ? inline_names(x, p, ip, &in, &base) : 0;
        if (n + 2 * (k ? k : 1) > x->nwords_cap) {
            size_t nc = 2 * (n + 2 * (k ? k : 1)) + 64;
            uint64_t *w = realloc(x->words, nc * sizeof(*w));
            if (w == NULL)
                return -1;
            x->words = w;
            x->nwords_cap = nc;
        }
        if (k) {
            for (size_t j = 0; j < k; j++) { /* perf's append_inlines */
                const char *nm = demangled(x, in[j], strlen(in[j]), "");
                x->words[n++] = (uint64_t)(uintptr_t)nm;
                x->words[n++] = (uint64_t)(uintptr_t)(strcmp(nm, base) == 0 ? file : "inlined");
            }
            continue;
        }
        x->words[n++] = (uint64_t)(uintptr_t)name;
        x->words[n++] = (uint64_t)(uintptr_t)file;
    }
    return (int64_t)n;
}

/* One sample: an earlier one alike adds its weight to the stack that one made; else
 * through perf script's text (sample_text), remembered. */
static int sample(struct pdctx *x, const struct held *h)
{
    struct perf_fold_ctx *c = x->c;
    struct seen_key ips = {0, h, SEEN_IPS, h->u.s.nr, h->u.s.chain},
                    names = {0, h, SEEN_NAMES, 0, NULL};
    const struct seen *s;
    struct sf_map_slot *sl, *sn = NULL;
    uint64_t before = c->samples;
    struct pf_entry *e;
    int64_t nw;
    int rc;

    /* only where the text's fold depends on nothing else: no --db row, no tracepoint
     * fields, the event to fold chosen (by the first sample) */
    if (c->db || !c->event_set || (h->u.s.raw && x->tp))
        return sample_text(x, h);
    if (x->seen_stale || x->seen.n > SEEN_MAX) {
        sf_map_free(&x->seen);
        memset(&x->seen, 0, sizeof(x->seen));
        sf_arena_reset(&x->seen_mem);
        x->seen_stale = 0;
    }
    seen_hash(&ips);
    if ((sl = seen_probe(x, &ips)) == NULL)
        return PD_OOM;
    if ((s = sl->val) != NULL)
        return s->entry && fold_again(c, s->entry, h->u.s.period) < 0 ? PD_STOP : 0;
    /* no option prints an address or source line: the names decide */
    if (!c->o.addrs && !c->o.inline_ && !c->o.srcline && (nw = name_words(x, h)) >= 0) {
        names.nr = (uint64_t)nw;
        names.w = x->words;
        seen_hash(&names);
        if ((sn = seen_probe(x, &names)) == NULL || (sl = seen_probe(x, &ips)) == NULL)
            return PD_OOM; /* (the second probe: the first may have grown the map) */
        if ((s = sn->val) != NULL) {
            if (s->entry && fold_again(c, s->entry, h->u.s.period) < 0)
                return PD_STOP;
            return remember(x, sl, &ips, s->entry);
        }
    }
    if ((rc = sample_text(x, h)) != 0)
        return rc;
    e = c->samples > before ? c->last_entry : NULL;
    if ((sl = seen_probe(x, &ips)) == NULL || (rc = remember(x, sl, &ips, e)) != 0)
        return rc ? rc : PD_OOM;
    if (sn == NULL)
        return 0;
    if ((sn = seen_probe(x, &names)) == NULL)
        return PD_OOM;
    return remember(x, sn, &names, e);
}

/* What perf script prints for a callchain address of process p: the address (a user
 * one as its mapping's file offset), the symbol's name and the file. */
static void resolve(struct pdctx *x, const struct proc *p, uint64_t ip, int user, uint64_t *addr,
                    const char **name, const char **file)
{
    const struct map *m;
    struct pf_sym *sy;

    *addr = ip;
    *name = *file = "[unknown]";
    if (!user) { /* a kernel address: kallsyms, the file a module's name */
        const char *mod = NULL;
        int found;
        if (!x->kernel_tried)
            x->kernel = load_kernel(x);
        if (x->kernel == NULL || pf_ks_count(x->kernel) == 0) { /* its symbols are not here */
            *file = "[kernel.kallsyms]";
            return;
        }
        if ((found = pf_ks_find(x->kernel, ip, name, &mod)) == 0)
            return; /* outside the kernel's map */
        *file = found > 0 && mod ? mod : "[kernel.kallsyms]";
        return;
    }
    if ((m = find_map(p, ip)) == NULL)
        return;
    *addr = m->identity ? ip : ip - m->start + m->pgoff;
    if ((sy = find_sym(m->dso, *addr)) != NULL)
        *name = shown_name(x, sy);
    *file = m->dso->path;
}

static int sample_text(struct pdctx *x, const struct held *h)
{
    const struct comm *cm = comm_get(x, h->tid, 0);
    const struct proc *p = proc_get(x, h->pid, 0);
    const struct sf_pd_attr *a = h->u.s.attr;
    const char *ev = a->name[0] ? a->name : "event";
    char head[160], *e = head;
    size_t cl, el = strlen(ev);
    int user = 1, rc = 0;

    if (cm == NULL)
        cm = comm_get(x, h->pid, 0);
    /* "COMM PID/TID [CPU] SEC.NSEC: PERIOD EVENT: ", as perf script -F ... prints it */
    if (cm) {
        cl = strlen(cm->name); /* < 64 */
        memcpy(e, cm->name, cl);
        e += cl;
    } else if (h->tid == 0) { /* the idle task, which perf names so from the start */
        memcpy(e, "swapper", 7);
        e += 7;
    } else {
        *e++ = ':';
        e = put_id(e, h->tid, 0);
    }
    /* perf's own spacing, "%s %5d/%-5d ", which a line with a pid of -1 depends on */
    *e++ = ' ';
    e = put_id(e, h->pid, 5);
    *e++ = '/';
    e = put_id(e, h->tid, -5);
    *e++ = ' ';
    if (x->c->db && (a->sample_type & SF_PD_S_CPU)) {
        *e++ = '[';
        e = put_u64(e, h->u.s.cpu, 3, '0');
        *e++ = ']';
        *e++ = ' ';
    }
    e = put_u64(e, h->time / 1000000000u, 5, ' ');
    *e++ = '.';
    e = put_u64(e, h->time % 1000000000u, 9, '0');
    *e++ = ':';
    *e++ = ' ';
    e = put_u64(e, h->u.s.period, 10, ' ');
    *e++ = ' ';
    if (sf_buf_append(&x->line, head, (size_t)(e - head)) || sf_buf_append(&x->line, ev, el) ||
        sf_buf_append(&x->line, ": ", 2))
        return PD_OOM;
    if (h->u.s.raw && x->tp &&
        pf_tp_print(x->tp, a->config, h->u.s.raw, h->u.s.raw_size, (int)h->u.s.cpu, h->time,
                    &x->line) < 0)
        return PD_OOM;
    if (line(x) < 0)
        return PD_STOP;
    /* a context marker perf does not know (a user stack walk gone wrong can leave one)
     * makes it discard the whole callchain: the sample prints with no frames */
    for (uint64_t i = 0; i < h->u.s.nr; i++)
        if (!(h->u.s.dwarf && i >= h->u.s.unwound) && h->u.s.chain[i] >= SF_PD_CONTEXT_MAX &&
            h->u.s.chain[i] != SF_PD_CONTEXT_USER && h->u.s.chain[i] != SF_PD_CONTEXT_KERNEL &&
            h->u.s.chain[i] != SF_PD_CONTEXT_HV)
            return line(x);
    for (uint64_t i = 0; i < h->u.s.nr && rc == 0; i++) {
        uint64_t ip = h->u.s.chain[i], addr;
        const char *name, *file, *const *in, *base;
        size_t k;
        if (ip >= SF_PD_CONTEXT_MAX && !(h->u.s.dwarf && i >= h->u.s.unwound)) {
            user = ip == SF_PD_CONTEXT_USER;
            continue;
        }
        resolve(x, p, ip, user, &addr, &name, &file);
        if (h->u.s.dwarf && user && (k = inline_names(x, p, ip, &in, &base)) > 0) {
            for (size_t j = 0; j < k && rc == 0; j++) { /* perf's append_inlines */
                const char *nm = demangled(x, in[j], strlen(in[j]), "");
                rc = frame(x, addr, nm, strcmp(nm, base) == 0 ? file : "inlined");
            }
            continue;
        }
        rc = frame(x, addr, name, file);
    }
    if (rc == 0)
        rc = line(x); /* the blank line that ends the sample */
    return rc;
}

/* ---- --call-graph dwarf ------------------------------------------------------------ */

#define UW_MAX_STACK 127 /* the frames perf script unwinds at most (its --max-stack) */

int perfdata_unwinds(const struct sf_pd_info *in)
{
#if defined(__x86_64__) /* the registers unwind.c reads */
    return !in->swapped && (in->arch[0] == 0 || strcmp(in->arch, "x86_64") == 0);
#else
    (void)in;
    return 0;
#endif
}

static int unwindable(struct pdctx *x)
{
    return perfdata_unwinds(sf_pd_info(x->pd));
}

/* d's bytes mapped, with its .eh_frame_hdr, first segment and .text (once). */
static void dso_data(struct dso *d)
{
    const uint8_t *bytes = d->image;
    size_t size = d->image_size, shstr, nph = 0;
    struct stat st;
    GElf_Ehdr eh;
    Elf_Scn *scn = NULL;
    Elf *e;
    int fd;

    if (d->data_tried)
        return;
    d->data_tried = 1;
    if (bytes == NULL && d->file && (fd = open(d->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
        void *m = MAP_FAILED;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
            /* writable, privately: libelf converts a foreign byte order in place */
            m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        close(fd);
        if (m != MAP_FAILED) {
            bytes = m;
            size = d->map_len = (size_t)st.st_size;
        }
    }
    if (bytes == NULL)
        return;
    d->data.file = bytes;
    d->data.file_size = size;
    if ((e = elf_memory((char *)(uintptr_t)bytes, size)) == NULL)
        return;
    if (gelf_getehdr(e, &eh) != NULL && elf_getshdrstrndx(e, &shstr) == 0) {
        (void)elf_getphdrnum(e, &nph);
        for (size_t i = 0; i < nph; i++) { /* the first loadable segment, page-aligned */
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
                d->data.elf_base = ph.p_vaddr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
                break;
            }
        }
        while ((scn = elf_nextscn(e, scn)) != NULL) {
            GElf_Shdr sh;
            const char *n;
            if (gelf_getshdr(scn, &sh) == NULL || (n = elf_strptr(e, shstr, sh.sh_name)) == NULL)
                continue;
            if (strcmp(n, ".eh_frame_hdr") == 0) {
                d->data.hdr_addr = sh.sh_addr;
                d->data.hdr_off = sh.sh_offset;
            } else if (strcmp(n, ".text") == 0 && eh.e_type == ET_EXEC) {
                d->text_off = sh.sh_addr - sh.sh_offset;
            }
        }
    }
    elf_end(e);
}

/* The unwinder's question: the mapping of process p (arg) that holds addr. */
static int uw_find(void *arg, uint64_t addr, int base, struct pf_uw_map *out)
{
    const struct proc *p = arg;
    const struct map *m = find_map(p, addr);

    if (m == NULL)
        return -1;
    memset(out, 0, sizeof(*out));
    if (!m->identity && m->dso) {
        dso_data(m->dso);
        *out = m->dso->data;
        out->lowest = m->start; /* perf's base: the lowest mapping of the same file */
        for (size_t i = 0; base && i < p->n; i++)
            if (p->maps[i].dso == m->dso && p->maps[i].start < out->lowest)
                out->lowest = p->maps[i].start;
    }
    out->start = m->start;
    out->end = m->end;
    out->pgoff = m->pgoff;
    return 0;
}

/* The names addr2line gives for user address ip of p, as perf's append_inlines asks:
 * only for a frame with a mapping, a symbol and a file that is not [vdso] or a JIT's
 * map.  0: none (the frame shows as it is). */
static size_t inline_names(struct pdctx *x, const struct proc *p, uint64_t ip,
                           const char *const **names, const char **base)
{
    const struct map *m = find_map(p, ip);
    struct pf_sym *sy;
    struct dso *d;
    const char *src;

    if (m == NULL || m->identity || (d = m->dso) == NULL ||
        (sy = find_sym(d, ip - m->start + m->pgoff)) == NULL)
        return 0;
    src = d->symsrc ? d->symsrc : d->path;
    if (src[0] == '[' || strncmp(src, "/tmp/perf-", 10) == 0)
        return 0;
    if (d->a2l == NULL && (d->a2l = pf_a2l_new(src, 1)) == NULL)
        return 0;
    dso_data(d);
    *base = shown_name(x, sy);
    return pf_a2l_names(d->a2l, ip - m->start + m->pgoff + d->text_off, names);
}

/* A sample with a user stack: its callchain (the kernel's frames), then the user
 * frames unwound from the stack, shown with their inline frames (sample_text). */
static int sample_dwarf(struct pdctx *x, const struct held *h)
{
    struct proc *p = proc_get(x, h->pid, 0);
    struct pf_uw_sample s = {h->u.s.regs, h->u.s.attr->sample_regs_user, h->u.s.stack,
                             h->u.s.stack_size};
    struct pf_unwinder *uw;
    struct held d = *h;
    size_t need = h->u.s.nr + 1 + UW_MAX_STACK, k;

    if (need > x->uw_cap) {
        uint64_t *g = realloc(x->uw_chain, need * sizeof(*g));
        if (g == NULL)
            return PD_OOM;
        x->uw_chain = g;
        x->uw_cap = need;
    }
    if (h->u.s.nr)
        memcpy(x->uw_chain, h->u.s.chain, h->u.s.nr * sizeof(*x->uw_chain));
    /* a process of which nothing is mapped unwinds to its sampled address alone */
    if (p == NULL)
        uw = x->uw_none ? x->uw_none : (x->uw_none = pf_uw_new(uw_find, NULL));
    else
        uw = p->uw ? p->uw : (p->uw = pf_uw_new(uw_find, p));
    if (uw == NULL)
        return PD_OOM;
    x->uw_chain[h->u.s.nr] = SF_PD_CONTEXT_USER;
    k = pf_uw_frames(uw, &s, x->uw_chain + h->u.s.nr + 1, UW_MAX_STACK);
    d.u.s.chain = x->uw_chain;
    d.u.s.nr = h->u.s.nr + (k ? 1 + k : 0);
    d.u.s.dwarf = 1;
    d.u.s.unwound = (uint32_t)h->u.s.nr + 1;
    return sample(x, &d);
}

static int process(struct pdctx *x, const struct held *h)
{
    struct proc *p, *parent;
    struct comm *c, *pc;

    x->seen_stale |= h->type == SF_PD_MMAP || h->type == SF_PD_MMAP2 || h->type == SF_PD_COMM ||
                     h->type == SF_PD_FORK;
    switch (h->type) {
    case SF_PD_SAMPLE:
        return h->u.s.regs ? sample_dwarf(x, h) : sample(x, h);
    case SF_PD_MMAP:
    case SF_PD_MMAP2: {
        struct map m = {h->u.m.start, h->u.m.start + h->u.m.len, h->u.m.pgoff, h->u.m.dso,
                        h->u.m.identity};
        if ((p = proc_get(x, h->pid, 1)) == NULL || add_map(p, &m) < 0)
            return PD_OOM;
        return 0;
    }
    case SF_PD_COMM:
        if ((c = comm_get(x, h->tid, 1)) == NULL)
            return PD_OOM;
        snprintf(c->name, sizeof(c->name), "%s", h->u.comm.name);
        if (h->u.comm.exec && (p = proc_get(x, h->pid, 0)) != NULL && p->uw)
            pf_uw_flush(p->uw); /* as perf: an exec forgets the unwind tables cached */
        return 0;
    case SF_PD_FORK:
        if ((pc = comm_get(x, h->ptid, 0)) != NULL && (c = comm_get(x, h->tid, 1)) != NULL)
            snprintf(c->name, sizeof(c->name), "%s", pc->name);
        if (h->pid != h->ppid && (parent = proc_get(x, h->ppid, 0)) != NULL &&
            (p = proc_get(x, h->pid, 1)) != NULL && p->n == 0)
            for (size_t i = 0; i < parent->n; i++)
                if (add_map(p, &parent->maps[i]) < 0)
                    return PD_OOM;
        return 0;
    default:
        return 0;
    }
}

/* A held record's place in time: sorted instead of the records themselves (a hundred
 * bytes each: moving them was a tenth of a run). */
struct when {
    uint64_t time, seq;
    size_t i; /* in held */
};

static int by_time(const void *a, const void *b)
{
    const struct when *x = a, *y = b;

    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void *arena_copy(struct sf_arena *a, const void *p, size_t size)
{
    void *q = sf_arena_alloc(a, size + 1); /* never 0 bytes */

    if (q)
        memcpy(q, p, size);
    return q;
}

/* a[0..n) by time, b as large for scratch: a round's records come from each CPU's ring
 * buffer in turn, a sorted run each, so runs are found and merged pairwise (n log runs,
 * against n log n for a sort that knows nothing of them).  Returns the sorted array:
 * a or b. */
static struct when *sort_when(struct when *a, struct when *b, size_t n)
{
    size_t runs = 1;

    for (size_t j = 1; j < n; j++)
        runs += by_time(&a[j - 1], &a[j]) > 0;
    if (runs > 64) { /* no runs to speak of */
        qsort(a, n, sizeof(*a), by_time);
        return a;
    }
    while (runs > 1) {
        size_t i = 0, k = 0;
        runs = 0;
        while (i < n) { /* two runs [i, m) and [m, e) into b[k..) */
            size_t m = i + 1, e;
            while (m < n && by_time(&a[m - 1], &a[m]) <= 0)
                m++;
            for (e = m; e < n && (e == m || by_time(&a[e - 1], &a[e]) <= 0); e++)
                ;
            for (size_t p = i, q = m; p < m || q < e;)
                b[k++] = q >= e || (p < m && by_time(&a[p], &a[q]) <= 0) ? a[p++] : a[q++];
            runs++;
            i = e;
        }
        struct when *t = a;
        a = b;
        b = t;
    }
    return a;
}

/* The records held, in time order, as perf's ordered_events hands them on: at a
 * FINISHED_ROUND (last == 0) those no later than the latest time seen when the round
 * before ended — a record of this round may still be followed by an earlier one on
 * another CPU in the next — and at the end (last == 1) all of them.  Ties stay in
 * file order. */
static int flush(struct pdctx *x, int last)
{
    uint64_t limit = last ? UINT64_MAX : x->next_flush;
    struct sf_arena *keep = &x->chains[!x->cur];
    struct when *order;
    size_t i = 0;
    int rc = 0;

    if (x->c->db && !x->described && sf_pd_info(x->pd)->nattr)
        rc = describe(x);
    order = sort_when(x->pend + x->pend0, x->merge + x->pend0, x->npend - x->pend0);
    for (; x->pend0 + i < x->npend && rc == 0 && order[i].time <= limit; i++) {
        rc = process(x, &x->held[order[i].i]);
        x->free_slots[x->nfree++] = order[i].i;
    }
    if (rc < 0)
        return rc;
    sf_arena_reset(keep);
    for (size_t j = i; x->pend0 + j < x->npend; j++) { /* carried: the arena's, moved */
        struct held *h = &x->held[order[j].i];
        if (h->type != SF_PD_SAMPLE || !h->u.s.copied)
            continue;
        if (h->u.s.nr && (h->u.s.chain = arena_copy(keep, h->u.s.chain,
                                                    h->u.s.nr * sizeof(*h->u.s.chain))) == NULL)
            return PD_OOM;
        if (h->u.s.raw && (h->u.s.raw = arena_copy(keep, h->u.s.raw, h->u.s.raw_size)) == NULL)
            return PD_OOM;
        if (h->u.s.regs &&
            ((h->u.s.regs = arena_copy(
                  keep, h->u.s.regs,
                  8u * (size_t)__builtin_popcountll(h->u.s.attr->sample_regs_user))) == NULL ||
             (h->u.s.stack = arena_copy(keep, h->u.s.stack, h->u.s.stack_size)) == NULL))
            return PD_OOM;
    }
    /* what is carried is the next round's first records, in time order already */
    if (order != x->pend + x->pend0) { /* sorted into the other buffer: that one is pend */
        struct when *t = x->pend;
        x->pend = x->merge;
        x->merge = t;
    }
    x->pend0 += i; /* the carried stay where they are (copying them was 2% of a run) */
    if (x->pend0 == x->npend)
        x->pend0 = x->npend = 0;
    assert(x->npool - x->nfree == x->npend - x->pend0);
    sf_arena_reset(&x->chains[x->cur]);
    x->cur = !x->cur;
    if (!last)
        x->next_flush = x->max_time;
    return 0;
}

/* The file a mapping is known by, as perf's map__new names it: anonymous memory (and
 * the heap, a stack, SysV shared memory) that may execute is the JIT's
 * /tmp/perf-PID.map, at addresses that are their own keys (*identity). */
static const char *mapped_file(const struct sf_pd_record *r, char *buf, size_t cap, int *identity)
{
    const char *f = r->u.mmap.filename;
    int anon = strcmp(f, "//anon") == 0 || strncmp(f, "/dev/zero", 9) == 0 ||
               strncmp(f, "/anon_hugepage", 14) == 0;
    int no_dso =
        strncmp(f, "[stack", 6) == 0 || strncmp(f, "/SYSV", 5) == 0 || strcmp(f, "[heap]") == 0;
    /* MMAP2 says its protection; for MMAP, a mapping not marked as data is code */
    int exec = r->type == SF_PD_MMAP2 ? (r->u.mmap.prot & 4) != 0 : !(r->misc & (1u << 13));

    *identity = anon || no_dso;
    if (!*identity || !exec)
        return f;
    snprintf(buf, cap, "/tmp/perf-%u.map", r->u.mmap.pid);
    return buf;
}

/* *p to n elements of size bytes: 0, or -1 (no memory; *p unchanged). */
static int resize(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);

    if (q == NULL)
        return -1;
    *p = q;
    sf_prefault(q, n * size);
    return 0;
}

static int hold(struct pdctx *x, const struct sf_pd_record *r)
{
    struct held *h;
    size_t slot;
    char jit[40];

    if (x->nfree == 0 && x->npool == x->capheld) { /* the slots and the arrays beside them */
        size_t nc = x->capheld ? 2 * x->capheld : 4096;
        if (resize((void **)&x->held, nc, sizeof(*x->held)) ||
            resize((void **)&x->free_slots, nc, sizeof(*x->free_slots)) ||
            resize((void **)&x->pend, nc, sizeof(*x->pend)) ||
            resize((void **)&x->merge, nc, sizeof(*x->merge)))
            return PD_OOM;
        x->capheld = nc;
    }
    /* the slot is taken only once the record is whole (an error leaves it free) */
    slot = x->nfree ? x->free_slots[x->nfree - 1] : x->npool;
    h = &x->held[slot];
    /* no memset of the whole: it became a rep stos, a tenth of holding a sample; the
     * sample's fields are each set below, another record's part zeroed first */
    if (r->type != SF_PD_SAMPLE)
        memset(&h->u, 0, sizeof(h->u));
    h->ppid = h->ptid = 0;
    h->time = r->time;
    if (r->time > x->max_time)
        x->max_time = r->time;
    h->seq = x->seq++;
    h->type = r->type;
    h->pid = r->pid;
    h->tid = r->tid;
    switch (r->type) {
    case SF_PD_SAMPLE:
        if ((r->u.sample.attr->sample_type & SF_PD_S_STACK_USER) && !unwindable(x))
            return PD_DWARF;
        /* every field of u.s set here: one added to it must be set too (LP64 size) */
        _Static_assert(sizeof(void *) != 8 || sizeof(h->u.s) == 88, "hold: every field");
        h->u.s.attr = r->u.sample.attr;
        h->u.s.period = r->u.sample.period;
        h->u.s.nr = r->u.sample.nr;
        h->u.s.chain = NULL;
        h->u.s.raw = h->u.s.regs = h->u.s.stack = NULL;
        h->u.s.raw_size = h->u.s.stack_size = 0;
        h->u.s.dwarf = 0;
        h->u.s.unwound = 0;
        h->u.s.cpu = r->u.sample.cpu;
        h->u.s.copied = !sf_pd_stable(x->pd) || sf_pd_info(x->pd)->swapped ||
                        (uintptr_t)r->u.sample.chain % _Alignof(uint64_t) != 0;
        if (!h->u.s.copied) { /* read where it lies until the file is closed */
            h->u.s.chain = (const uint64_t *)(const void *)r->u.sample.chain;
        } else if (r->u.sample.nr) {
            uint64_t *w = sf_arena_alloc(&x->chains[x->cur], r->u.sample.nr * sizeof(*w));
            if (w == NULL)
                return PD_OOM;
            for (uint64_t i = 0; i < r->u.sample.nr; i++)
                w[i] = sf_pd_chain_ip(x->pd, &r->u.sample, i);
            h->u.s.chain = w;
        }
        /* a user stack to unwind: perf unwinds none without registers or stack bytes */
        if (r->u.sample.regs_abi && r->u.sample.regs && r->u.sample.stack_size) {
            h->u.s.regs = r->u.sample.regs;
            h->u.s.stack = r->u.sample.stack;
            h->u.s.stack_size = (uint32_t)r->u.sample.stack_size;
            if (h->u.s.copied && ((h->u.s.regs = arena_copy(&x->chains[x->cur], r->u.sample.regs,
                                                            8u * r->u.sample.nregs)) == NULL ||
                                  (h->u.s.stack = arena_copy(&x->chains[x->cur], r->u.sample.stack,
                                                             r->u.sample.stack_size)) == NULL))
                return PD_OOM;
        }
        if (x->c->db && r->u.sample.attr->type == PERF_TYPE_TRACEPOINT && r->u.sample.raw) {
            h->u.s.raw_size = r->u.sample.raw_size;
            if (!h->u.s.copied)
                h->u.s.raw = r->u.sample.raw;
            else if ((h->u.s.raw = arena_copy(&x->chains[x->cur], r->u.sample.raw,
                                              r->u.sample.raw_size)) == NULL)
                return PD_OOM;
        }
        break;
    case SF_PD_MMAP:
    case SF_PD_MMAP2:
        h->pid = r->u.mmap.pid;
        h->u.m.start = r->u.mmap.start;
        h->u.m.len = r->u.mmap.len;
        h->u.m.pgoff = r->u.mmap.pgoff;
        if ((h->u.m.dso = dso_get(x, mapped_file(r, jit, sizeof(jit), &h->u.m.identity),
                                  r->u.mmap.build_id, r->u.mmap.build_id_size)) == NULL)
            return PD_OOM;
        break;
    case SF_PD_COMM:
        h->tid = r->u.comm.tid;
        snprintf(h->u.comm.name, sizeof(h->u.comm.name), "%s", r->u.comm.comm);
        h->u.comm.exec = r->u.comm.exec;
        break;
    case SF_PD_FORK:
        h->pid = r->u.task.pid;
        h->ppid = r->u.task.ppid;
        h->tid = r->u.task.tid;
        h->ptid = r->u.task.ptid;
        break;
    }
    if (x->nfree)
        x->nfree--;
    else
        x->npool++;
    if (x->npend == x->capheld) { /* the carried to the front, for room after them */
        memmove(x->pend, x->pend + x->pend0, (x->npend - x->pend0) * sizeof(*x->pend));
        x->npend -= x->pend0;
        x->pend0 = 0;
    }
    assert(x->npend < x->capheld); /* fewer live than slots, one of them this one's */
    x->pend[x->npend++] = (struct when){h->time, h->seq, slot};
    return 0;
}

int perfdata_is(const char *path)
{
    unsigned char m[8];
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
    int yes = f && fread(m, 1, 8, f) == 8 &&
              (memcmp(m, "PERFILE2", 8) == 0 || memcmp(m, "2ELIFREP", 8) == 0);

    if (f)
        fclose(f);
    return yes;
}

/* --db: the file's bytes into the source's hash (read once more: perf.data is read in
 * no single order). */
static int hash_file(struct pf_source *src, int fd, uint64_t *bytes)
{
    static unsigned char buf[1 << 16];
    ssize_t k;

    *bytes = 0;
    while ((k = read(fd, buf, sizeof(buf))) > 0) {
        if (src->tap.on)
            sf_sha256_update(&src->tap.sha, buf, (size_t)k);
        *bytes += (uint64_t)k;
    }
    return k < 0 ? -1 : 0;
}

int perfdata_file(struct perf_fold_ctx *c, const char *path)
{
    struct pdctx x = {.c = c};
    struct sf_pd_record r;
    struct pf_source src;
    struct sf_err err;
    char stopped[SF_ERR_MSG_MAX + 40];
    uint64_t bytes = 0;
    int rc, fd;

    c->file = path;
    stopped[0] = 0;
    if ((fd = open(path, O_RDONLY)) < 0) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", PF_TOOL, path, strerror(errno));
        return -1;
    }
    rc = perf_source_begin(c, path, fd, &src);
    if (rc >= 0 && c->db && hash_file(&src, fd, &bytes) < 0) {
        fprintf(stderr, "%s: %s: read: %s\n", PF_TOOL, path, strerror(errno));
        perf_source_end(c, path, &src, 0, "read error");
        rc = -1;
    }
    close(fd);
    if (rc < 0)
        return -1;
    elf_version(EV_CURRENT);
    sf_err_clear(&err);
    if (sf_pd_open(&x.pd, path, &err) < 0) {
        fprintf(stderr, "%s: %s: %s\n", PF_TOOL, path, err.msg);
        perf_source_end(c, path, &src, bytes, err.msg);
        return -1;
    }
    sf_buf_init(&x.line, (size_t)PF_RECORD_MAX);
    sf_arena_init(&x.chains[0], 1u << 20, 0);
    sf_arena_init(&x.chains[1], 1u << 20, 0);
    sf_arena_init(&x.demangled, 1u << 16, 0);
    sf_arena_init(&x.seen_mem, 1u << 16, 0);
    while ((rc = sf_pd_next(x.pd, &r, &err)) > 0) {
        c->lines++; /* records, for the source's count */
        if (r.type == SF_PD_FINISHED_ROUND)
            rc = flush(&x, 0);
        else if (r.type == SF_PD_SAMPLE || r.type == SF_PD_MMAP || r.type == SF_PD_MMAP2 ||
                 r.type == SF_PD_COMM || r.type == SF_PD_FORK)
            rc = hold(&x, &r);
        if (rc < 0)
            break;
    }
    if (rc >= 0) {
        rc = flush(&x, 1);
    } else if (rc != PD_OOM && rc != PD_STOP &&
               rc != PD_DWARF) { /* the reader's: what came before is folded */
        fprintf(stderr, "%s: %s: byte %llu: %s\n", PF_TOOL, path, (unsigned long long)err.off,
                err.msg);
        snprintf(stopped, sizeof(stopped), "stopped at byte %llu: %s", (unsigned long long)err.off,
                 err.msg);
        c->bad_lines++;
        if (flush(&x, 1) == PD_OOM)
            rc = PD_OOM;
    }
    if (rc == PD_OOM)
        fprintf(stderr, "%s: %s: out of memory\n", PF_TOOL, path);
    if (rc == PD_DWARF) {
        fprintf(stderr,
                "%s: %s: recorded with --call-graph dwarf: its user stacks are not unwound "
                "here yet; fold  perf script -F comm,pid,tid,time,period,event,ip,sym,dso "
                "--ns -i FILE  instead\n",
                PF_TOOL, path);
        snprintf(stopped, sizeof(stopped), "--call-graph dwarf: not unwound");
    }
    pf_ks_free(x.kernel);
    pf_uw_free(x.uw_none);
    free(x.uw_chain);
    while (x.dsos) {
        struct dso *d = x.dsos;
        x.dsos = d->next;
        free(d->syms);
        st_free(&d->tree);
        free(d->names);
        free(d->path);
        free(d->file);
        free(d->symsrc);
        if (d->map_len)
            munmap((void *)d->data.file, d->map_len);
        pf_a2l_free(d->a2l);
        free(d);
    }
    {
        struct sf_map_slot *s;
        for (size_t i = 0; (s = sf_map_next(&x.by_pid, &i)) != NULL;) {
            pf_uw_free(((struct proc *)s->val)->uw);
            free(((struct proc *)s->val)->maps);
            free(s->val);
        }
        for (size_t i = 0; (s = sf_map_next(&x.by_tid, &i)) != NULL;)
            free(s->val);
    }
    free(x.held);
    free(x.words);
    free(x.free_slots);
    free(x.pend);
    free(x.merge);
    sf_map_free(&x.by_path);
    sf_map_free(&x.by_pid);
    sf_map_free(&x.by_tid);
    sf_map_free(&x.by_file);
    sf_map_free(&x.seen);
    sf_arena_free(&x.seen_mem);
    pf_tp_close(x.tp);
    sf_arena_free(&x.chains[0]);
    sf_arena_free(&x.chains[1]);
    sf_arena_free(&x.demangled);
    sf_buf_free(&x.line);
    sf_pd_close(x.pd);
    if (rc == PD_OOM)
        snprintf(stopped, sizeof(stopped), "out of memory");
    if (perf_source_end(c, path, &src, bytes, stopped[0] ? stopped : NULL))
        rc = PD_OOM;
    return rc == PD_OOM || rc == PD_STOP || rc == PD_DWARF ? -1 : 0;
}

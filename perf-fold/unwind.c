/* unwind.c - a --call-graph dwarf sample's user stack unwound (unwind.h).
 *
 * libunwind's remote interface: it asks, through the accessors below, for the unwind
 * table that covers an address (find_proc_info: the file's .eh_frame_hdr, located at
 * run time as perf locates it), for registers (the sampled ones) and for memory (the
 * saved stack, else the mapped files).  The table format is the LSB's .eh_frame_hdr:
 * version, three pointer encodings, the encoded .eh_frame pointer and FDE count, then
 * the sorted table of (start, FDE) pairs of signed 32-bit offsets from the header.
 */
#include "unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

/* libunwind's own table search, exported but not declared in its headers */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

/* perf's x86 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
enum { PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP, PR_R8 = 16 };

struct pf_unwinder {
    unw_addr_space_t as;
    pf_uw_find_fn find;
    void *arg;
};

/* What the accessors are handed: the unwinder and the sample being unwound. */
struct walk {
    struct pf_unwinder *u;
    const struct pf_uw_sample *s;
};

/* Register id (perf's numbering) of s: 0, or -EINVAL when it was not sampled. */
static int reg_value(const struct pf_uw_sample *s, int id, uint64_t *v)
{
    if (id < 0 || id >= 64 || !(s->mask & (UINT64_C(1) << id)))
        return -EINVAL;
    memcpy(v, s->regs + 8 * (size_t)__builtin_popcountll(s->mask & ((UINT64_C(1) << id) - 1)), 8);
    return 0;
}

/* libunwind's x86-64 register number as perf's, or -1 (only these are sampled). */
static int perf_reg(unw_regnum_t r)
{
    static const int8_t map[] = {
        [UNW_X86_64_RAX] = PR_AX,     [UNW_X86_64_RDX] = PR_DX,     [UNW_X86_64_RCX] = PR_CX,
        [UNW_X86_64_RBX] = PR_BX,     [UNW_X86_64_RSI] = PR_SI,     [UNW_X86_64_RDI] = PR_DI,
        [UNW_X86_64_RBP] = PR_BP,     [UNW_X86_64_RSP] = PR_SP,     [UNW_X86_64_R8] = PR_R8,
        [UNW_X86_64_R9] = PR_R8 + 1,  [UNW_X86_64_R10] = PR_R8 + 2, [UNW_X86_64_R11] = PR_R8 + 3,
        [UNW_X86_64_R12] = PR_R8 + 4, [UNW_X86_64_R13] = PR_R8 + 5, [UNW_X86_64_R14] = PR_R8 + 6,
        [UNW_X86_64_R15] = PR_R8 + 7, [UNW_X86_64_RIP] = PR_IP,
    };
    return r >= 0 && (size_t)r < sizeof(map) ? map[r] : -1;
}

/* One value of the header at p (end: its end) in encoding enc, as perf reads the two
 * it needs: omit, native pointer, or 4 or 8 bytes absolute or pc-relative (a format
 * of 0 read as 4 bytes).  0, or -1 for another encoding or a cut header. */
static int encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v)
{
    size_t w;

    *v = 0;
    if (enc == 0xff) /* DW_EH_PE_omit */
        return 0;
    if (enc == 0x00) { /* DW_EH_PE_ptr */
        if (end - *p < 8)
            return -1;
        memcpy(v, *p, 8);
        *p += 8;
        return 0;
    }
    if ((enc & 0x70) != 0x00 && (enc & 0x70) != 0x10) /* absptr, pcrel */
        return -1;
    if ((enc & 0x07) == 0)
        enc |= 0x03;
    switch (enc & 0x0f) {
    case 0x03: /* udata4 */
    case 0x0b: /* sdata4 */
        w = 4;
        break;
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        w = 8;
        break;
    default:
        return -1;
    }
    if ((size_t)(end - *p) < w)
        return -1;
    if (w == 4) {
        uint32_t u;
        memcpy(&u, *p, 4);
        *v = (enc & 0x0f) == 0x0b ? (uint64_t)(int64_t)(int32_t)u : u;
    } else {
        memcpy(v, *p, 8);
    }
    *p += w;
    return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need,
                          void *arg)
{
    struct walk *w = arg;
    struct pf_uw_map m;
    const uint8_t *h, *p, *end;
    uint64_t fde_count, skip, segbase;
    unw_dyn_info_t di;

    if (w->u->find(w->u->arg, ip, 1, &m) < 0 || m.file == NULL || m.hdr_off == 0 ||
        m.hdr_off > m.file_size || m.file_size - m.hdr_off < 20)
        return -EINVAL;
    h = m.file + m.hdr_off; /* the header as perf reads it: 4 bytes, then 16 of values */
    p = h + 4;
    end = h + 20;
    if (encoded(&p, end, h[1], &skip) < 0 || encoded(&p, end, h[2], &fde_count) < 0)
        return -EINVAL;
    segbase = m.lowest - m.elf_base + m.hdr_addr;
    memset(&di, 0, sizeof(di));
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m.start;
    di.end_ip = m.end;
    di.u.rti.segbase = segbase;
    di.u.rti.table_data = segbase + (uint64_t)(p - h);
    di.u.rti.table_len = fde_count; /* pairs of 4-byte offsets, counted in 8-byte words */
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as;
    (void)pi;
    (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
    (void)as;
    (void)dil;
    (void)arg;
    return -UNW_ENOINFO;
}

/* A word of a mapped file: 0; 1 when the mapping has no such bytes; -1 outside every
 * mapping (the values perf's reader gives libunwind, which reads 1 as success). */
static int file_word(struct walk *w, unw_word_t addr, unw_word_t *v)
{
    struct pf_uw_map m;
    uint64_t off;

    if (w->u->find(w->u->arg, addr, 0, &m) < 0)
        return -1;
    off = addr - m.start + m.pgoff;
    if (m.file == NULL || off > m.file_size || m.file_size - off < 8)
        return 1;
    memcpy(v, m.file + off, 8);
    return 0;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *v, int write, void *arg)
{
    struct walk *w = arg;
    uint64_t sp;
    int rc;

    (void)as;
    if (write || w->s->regs == NULL) {
        *v = 0;
        return 0;
    }
    if ((rc = reg_value(w->s, PR_SP, &sp)) < 0)
        return rc;
    if (addr + 8 < addr)
        return -EINVAL;
    /* the saved stack's last word is read from the files, as perf's bounds have it */
    if (addr < sp || addr + 8 >= sp + w->s->stack_size) {
        if ((rc = file_word(w, addr, v)) != 0)
            *v = 0;
        return rc;
    }
    memcpy(v, w->s->stack + (addr - sp), 8);
    return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t r, unw_word_t *v, int write, void *arg)
{
    struct walk *w = arg;
    uint64_t val;
    int rc;

    (void)as;
    if (write)
        return 0;
    if (w->s->regs == NULL) {
        *v = 0;
        return 0;
    }
    if ((rc = reg_value(w->s, perf_reg(r), &val)) < 0)
        return rc;
    *v = val;
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t r, unw_fpreg_t *v, int write, void *arg)
{
    (void)as;
    (void)r;
    (void)v;
    (void)write;
    (void)arg;
    return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    /* resume is for unw_resume, never called here; get_proc_name is optional */
    .resume = NULL,
    .get_proc_name = NULL,
};

struct pf_unwinder *pf_uw_new(pf_uw_find_fn find, void *arg)
{
    struct pf_unwinder *u = calloc(1, sizeof(*u));

    if (u == NULL || (u->as = unw_create_addr_space(&accessors, 0)) == NULL) {
        free(u);
        return NULL;
    }
    /* perf's is UNW_CACHE_GLOBAL, whose lock masks every signal around each look into the
     * cache (two system calls a frame); one thread unwinds here, and the answers are the
     * same */
    unw_set_caching_policy(u->as, UNW_CACHE_PER_THREAD);
    u->find = find;
    u->arg = arg;
    return u;
}

void pf_uw_flush(struct pf_unwinder *u)
{
    unw_flush_cache(u->as, 0, 0);
}

size_t pf_uw_frames(struct pf_unwinder *u, const struct pf_uw_sample *s, uint64_t *ips, size_t max)
{
    struct walk w = {u, s};
    unw_cursor_t c;
    size_t n = 0, kept = 0;
    uint64_t ip;

    if (max == 0 || s->regs == NULL || reg_value(s, PR_IP, &ip) < 0)
        return 0;
    ips[n++] = ip;
    if (max > 1 && unw_init_remote(&c, u->as, &w) == 0)
        while (n < max && unw_step(&c) > 0) {
            unw_word_t v = 0;
            unw_get_reg(&c, UNW_REG_IP, &v);
            if (unw_is_signal_frame(&c) <= 0) /* a return address: inside the call */
                v--;
            ips[n++] = v;
        }
    for (size_t i = 0; i < n; i++) /* perf shows no frame for a zero address */
        if (ips[i])
            ips[kept++] = ips[i];
    return kept;
}

void pf_uw_free(struct pf_unwinder *u)
{
    if (u == NULL)
        return;
    unw_destroy_addr_space(u->as);
    free(u);
}

/* unwind.h - the user stack a --call-graph dwarf sample saved, unwound as perf script
 * unwinds it: libunwind's remote unwinder over the sample's registers and stack bytes,
 * with the unwind tables (.eh_frame_hdr, .eh_frame) read from the mapped files, x86-64.
 *
 * What perf 6.1 (built with libunwind, as Debian's is) does and this repeats: the first
 * frame is the sampled instruction pointer; each caller's address is one less than the
 * return address (so that it falls inside the call), unless the frame is a signal
 * frame; a frame whose unwind information is not found ends the stack; memory is read
 * from the saved stack where it lies there (the last word of it excepted, as perf's
 * bounds have it), else from the file mapped at that address; .debug_frame is not read
 * (Debian's libunwind exports no reader of it, so its perf reads none either).
 */
#ifndef PF_UNWIND_H
#define PF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* A mapping of the sampled process, as the unwinder asks for one. */
struct pf_uw_map {
    uint64_t start, end, pgoff;
    const uint8_t *file; /* the mapped file's bytes (file_size), NULL when unreadable */
    size_t file_size;
    /* the file's .eh_frame_hdr (address and offset; hdr_off 0: none), its first loadable
     * segment's address rounded down to a page, and the lowest start of a mapping of the
     * same file in the process: where the table is at run time */
    uint64_t hdr_addr, hdr_off, elf_base, lowest;
};

/* The mapping that holds addr: 0 with *m filled (lowest only when base is set: it is
 * needed to place a table, not to read a word), or -1. */
typedef int (*pf_uw_find_fn)(void *arg, uint64_t addr, int base, struct pf_uw_map *m);

/* One sample's user registers (one u64 in host order per bit set in mask, perf's x86
 * numbering) and stack bytes from the stack pointer up. */
struct pf_uw_sample {
    const uint8_t *regs;
    uint64_t mask;
    const uint8_t *stack;
    size_t stack_size;
};

struct pf_unwinder;

/* An unwinder for one process, whose mappings find answers for.  NULL: no memory. */
struct pf_unwinder *pf_uw_new(pf_uw_find_fn find, void *arg);
/* The process's mappings changed: forget what was cached of the old ones. */
void pf_uw_flush(struct pf_unwinder *u);
/* The frames of s into ips (at most max): the sampled address, then the callers.
 * Returns their count, 0 when the sample has no instruction pointer. */
size_t pf_uw_frames(struct pf_unwinder *u, const struct pf_uw_sample *s, uint64_t *ips, size_t max);
void pf_uw_free(struct pf_unwinder *u);

#endif

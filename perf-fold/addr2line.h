/* addr2line.h - the inline frames at an address, as perf script 6.1 finds them: the
 * names binutils' `addr2line -e FILE -i -f` gives, answered per address and kept.
 *
 * perf built without libbfd (Debian's) asks addr2line for a --call-graph dwarf frame's
 * inline chain and shows each function it names, innermost first: the frame's own
 * symbol where the name is that symbol's, else "NAME (inlined)".  Which name addr2line
 * gives (the DWARF name of an inlined function; for the outermost one, the ELF symbol
 * that binutils picks among aliases) is binutils' own choice.  Where the machine's
 * addr2line is binutils 2.40 and the file's DWARF is its own, the answers are computed
 * in this process by its rules (a2l_dw.h: 0.7 ms of a child's CPU an address saved);
 * otherwise a child per file is kept running and asked.  No addr2line at all: no
 * inline frames, as perf shows none.
 */
#ifndef PF_ADDR2LINE_H
#define PF_ADDR2LINE_H

#include <stddef.h>
#include <stdint.h>

struct pf_a2l;

/* The answers for file: computed in this process where a2l_dw.h can (in_process 1),
 * else from a child (not started until the first question).  NULL: no memory. */
struct pf_a2l *pf_a2l_new(const char *file, int in_process);
/* The function names addr2line gives for addr (an address of the file, as objdump
 * numbers it), innermost first: their count, *names pointing at them (valid until
 * pf_a2l_free); 0 when it knows nothing of addr, or cannot be run. */
size_t pf_a2l_names(struct pf_a2l *a, uint64_t addr, const char *const **names);
/* a's answers so far were computed in this process (a2l_dw.h), not by addr2line. */
int pf_a2l_computed(const struct pf_a2l *a);
void pf_a2l_free(struct pf_a2l *a);

#endif

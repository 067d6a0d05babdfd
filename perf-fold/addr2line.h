/* addr2line.h - the inline frames at an address, as perf script 6.1 finds them: from
 * binutils' addr2line, one child per file, kept running ("addr2line -e FILE -i -f").
 *
 * perf built without libbfd (Debian's) asks addr2line for a --call-graph dwarf frame's
 * inline chain and shows each function it names, innermost first: the frame's own
 * symbol where the name is that symbol's, else "NAME (inlined)".  Which name addr2line
 * gives (the DWARF name of an inlined function; for the outermost one, the ELF symbol
 * that binutils picks among aliases) is binutils' own choice, so it is asked, not
 * imitated: that is what makes the folds the same.  Answers are kept per address.
 */
#ifndef PF_ADDR2LINE_H
#define PF_ADDR2LINE_H

#include <stddef.h>
#include <stdint.h>

struct pf_a2l;

/* A child for file (not started until the first question).  NULL: no memory. */
struct pf_a2l *pf_a2l_new(const char *file);
/* The function names addr2line gives for addr (an address of the file, as objdump
 * numbers it), innermost first: their count, *names pointing at them (valid until
 * pf_a2l_free); 0 when it knows nothing of addr, or cannot be run. */
size_t pf_a2l_names(struct pf_a2l *a, uint64_t addr, const char *const **names);
void pf_a2l_free(struct pf_a2l *a);

#endif

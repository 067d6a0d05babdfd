/* a2l_dw.h - binutils' addr2line answered in this process: the function names that
 * `addr2line -e FILE -i -f` prints for an address, from FILE's ELF symbols (libelf) and
 * its DWARF (libdw), by binutils 2.40's rules, without a child and its 0.7 ms of CPU an
 * address.
 *
 * The rules (bfd's elf.c and dwarf2.c, as addr2line uses them):
 *   - the address must lie in an allocated section of FILE (else no answer); its
 *     compilation unit is the first, in .debug_info's order, whose ranges hold it and
 *     that has a function or a line there;
 *   - its function is the subprogram, entry point or inlined subroutine whose range
 *     piece holding the address is the shortest (the later DIE on a tie);
 *   - that function's name: its DW_AT_linkage_name, else DW_AT_name, else its abstract
 *     origin's or specification's; a DW_AT_name of a language that mangles (C++, Rust,
 *     ...) is replaced by the ELF symbol that holds the address (binutils' "linkage"
 *     search, which also renames the function for later questions when that symbol
 *     starts where the function does);
 *   - no DWARF function there: the ELF symbol binutils' elf_find_function picks;
 *   - then, while the function is an inlined subroutine, the function it was inlined
 *     into (the nearest enclosing function DIE), by its name as it stands.
 * Where FILE's DWARF lies in another file (no .debug_info but a .gnu_debuglink, or a
 * .gnu_debugaltlink for dwz), or anything is not as these rules know it, no answer is
 * made here: addr2line.c asks binutils' addr2line itself, as before.
 */
#ifndef PF_A2L_DW_H
#define PF_A2L_DW_H

#include <stddef.h>
#include <stdint.h>

struct pf_a2l_dw;

/* FILE opened for answers: NULL when they must come from addr2line (not an ELF file,
 * DWARF elsewhere, no memory). */
struct pf_a2l_dw *pf_a2l_dw_open(const char *file);
/* The names for addr (FILE's address, as objdump numbers it), innermost first, into
 * names[0..max): their count (0: addr2line knows nothing of addr).  The strings stay
 * valid until pf_a2l_dw_free.  -1: no memory, or DWARF this file cannot read. */
long pf_a2l_dw_names(struct pf_a2l_dw *d, uint64_t addr, const char **names, size_t max);
void pf_a2l_dw_free(struct pf_a2l_dw *d);

#endif

/* sym.h - spantrace's symbols: the names of the addresses of a running process's
 * stacks (--offcpu), as perf script and stackcollapse-perf.pl name them, so that
 * off-CPU stacks fold beside perf's CPU stacks of the same process:
 *
 *   kernel  /proc/kallsyms (text symbols), the name alone
 *   user    /proc/PID/maps -> the file -> its ELF .symtab (else .dynsym) function
 *           symbols, C++ names demangled without parameters (as perf does);
 *           "[libfoo.so.1]" where the file is known and the symbol is not,
 *           "[unknown]" where the address is in no mapping of a file
 *
 * Each distinct address is named once (cached); a file's symbols are read once; the
 * maps are read again when an address falls outside them (a library loaded since),
 * at most once a second.
 */
#ifndef SPANTRACE_SYM_H
#define SPANTRACE_SYM_H

#include <stdint.h>

struct st_syms;

/* Symbols of process pid (the kernel's too).  NULL: out of memory. */
struct st_syms *st_syms_new(int pid);
void st_syms_free(struct st_syms *s);

/* The name of addr (a kernel address when kernel is set), owned by s.  *runtime gets 1
 * where the frame is the kernel's or the C runtime's (libc, libpthread, ld-linux,
 * libstdc++, libgcc_s, libm: sf_offcpu_runtime_file), or of no known file. */
const char *st_syms_name(struct st_syms *s, uint64_t addr, int kernel, int *runtime);

/* The offset, within function caller of ELF file path, of the instruction after its first
 * direct call to function callee (the place to read what callee returned), or -1: no
 * symbol table, no such functions, no such call. */
long st_call_return(const char *path, const char *caller, const char *callee);

#endif

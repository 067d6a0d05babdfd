/* kallsyms.h - the kernel's symbols from a kallsyms file (/proc/kallsyms, or the copy
 * perf record keeps in its build-id cache), for perf-fold's perf.data reader.
 *
 * The symbols are those perf's dso__load_kallsyms keeps (text, weak, data and bss: T W D
 * B in either case) with its choice among aliases: each symbol ends where the next one
 * starts, the last a page past its own, and of symbols at one address the last one read
 * is the one named.  A kallsyms file has 100,000 or more symbols of which a profile hits
 * a few hundred, so they are indexed where they lie in the file's text, and a name is
 * copied out only when an address is looked up in it.
 */
#ifndef PF_KALLSYMS_H
#define PF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct pf_kallsyms;

/* path's symbols: a table (empty when the file names none, as a kallsyms read without
 * the right to see addresses does), or NULL with errno set when it cannot be read. */
struct pf_kallsyms *pf_ks_load(const char *path);
size_t pf_ks_count(const struct pf_kallsyms *k);
/* The symbol that holds addr: 1 with *name and *module (the module's "[name]", or NULL
 * for the kernel itself), 0 when addr is outside every symbol's range.  -1: no memory. */
int pf_ks_find(struct pf_kallsyms *k, uint64_t addr, const char **name, const char **module);
void pf_ks_free(struct pf_kallsyms *k);

#endif

/* symtree.h - a file's symbols in the red-black tree perf keeps them in, node for node.
 *
 * Where two symbols cover one address (a zero-sized symbol whose end perf moved to the
 * next symbol's start, over PLT entries perf adds later; a label inside a sized function),
 * perf names the one its tree walk (symbols__find) reaches first, which depends on the
 * tree's shape: the order the symbols were inserted in, and the rebalancing of each
 * insertion and erasure.  To give perf's answer, the symbols are kept in the same tree,
 * built by the same algorithm (the kernel's lib/rbtree.c: __rb_insert, __rb_erase and
 * ____rb_erase_color), in the same order, and walked the same way.
 *
 * Nodes are the indices of the caller's symbol array; the tree keeps links beside it.
 */
#ifndef PF_SYMTREE_H
#define PF_SYMTREE_H

#include <stddef.h>
#include <stdint.h>

#define ST_NIL UINT32_MAX

struct pf_sym {
    uint64_t start, end;
    const char *name; /* demangled at its first use (perfdata.c: shown_name) */
    int bind, sized, shown;
    uint32_t ord; /* the order it was read in: perf inserts in that order */
};

struct pf_symtree {
    uint32_t *child[2], *parent; /* child[0]: left, child[1]: right */
    uint8_t *red;
    uint32_t root;
    size_t cap;
};

/* Room for n nodes (indices < n).  Returns 0 or -1 (no memory). */
int st_init(struct pf_symtree *t, size_t n);
void st_free(struct pf_symtree *t);
/* Insert node i, keyed by s[i].start (equal keys go right, as perf's __symbols__insert). */
void st_insert(struct pf_symtree *t, const struct pf_sym *s, uint32_t i);
/* Take node i out. */
void st_erase(struct pf_symtree *t, uint32_t i);
/* In order: the first node, the one after i; ST_NIL at the end. */
uint32_t st_first(const struct pf_symtree *t);
uint32_t st_next(const struct pf_symtree *t, uint32_t i);
/* perf's symbols__find: the first node on the path from the root whose [start, end]
 * holds ip (end itself only for a zero-sized symbol); ST_NIL when none. */
uint32_t st_find(const struct pf_symtree *t, const struct pf_sym *s, uint64_t ip);

#endif

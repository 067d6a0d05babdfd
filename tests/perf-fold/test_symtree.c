/* test_symtree.c - perf-fold/symtree.c, the kernel's red-black tree over symbol indices:
 * after every insertion and erasure of random (and repeated) keys the tree is a
 * red-black tree (root black, no red node with a red child, one black height, parent
 * links that agree, keys in order, equal keys in insertion order), holds exactly the
 * nodes not erased, and its walk (st_find) answers as perf's symbols__find would; and
 * the shapes a few small sequences must take under the kernel's algorithm. */
#include <stdlib.h>
#include <string.h>

#include "../../perf-fold/symtree.h"
#include "tap.h"

#define N 600

static struct pf_sym syms[N];
static int present[N];

/* the black height below n, or -1 when a rule is broken */
static int check(const struct pf_symtree *t, uint32_t n, uint32_t parent, int *bad)
{
    int l, r;

    if (n == ST_NIL)
        return 1;
    if (t->parent[n] != parent || !present[n])
        *bad = 1;
    if (t->red[n] && ((t->child[0][n] != ST_NIL && t->red[t->child[0][n]]) ||
                      (t->child[1][n] != ST_NIL && t->red[t->child[1][n]])))
        *bad = 1;
    l = check(t, t->child[0][n], n, bad);
    r = check(t, t->child[1][n], n, bad);
    if (l != r)
        *bad = 1;
    return l + !t->red[n];
}

static int valid(const struct pf_symtree *t, size_t live)
{
    int bad = 0;
    size_t count = 0;
    uint32_t prev = ST_NIL;

    if (t->root != ST_NIL && t->red[t->root])
        return 0;
    check(t, t->root, ST_NIL, &bad);
    for (uint32_t i = st_first(t); i != ST_NIL; prev = i, i = st_next(t, i), count++) {
        uint64_t before, here = syms[i].start;
        if (prev == ST_NIL)
            continue;
        before = syms[prev].start;
        if (before > here || (before == here && prev > i))
            bad = 1; /* equal keys: inserted in index order, so in index order */
    }
    return !bad && count == live;
}

/* The kernel's shapes: 1..3 inserted in order rotate to 2 at the root. */
static void shapes(void)
{
    struct pf_symtree t;

    memset(syms, 0, sizeof(syms));
    for (int i = 0; i < 3; i++)
        syms[i].start = syms[i].end = (uint64_t)(i + 1) * 16;
    st_init(&t, 3);
    for (uint32_t i = 0; i < 3; i++)
        st_insert(&t, syms, i);
    TAP_OK(t.root == 1 && t.child[0][1] == 0 && t.child[1][1] == 2 && !t.red[1] && t.red[0] &&
               t.red[2],
           "three keys in order: the middle one at the root, black, its children red");
    st_erase(&t, 1); /* two children: the successor (2) takes its place */
    TAP_OK(t.root == 2 && t.child[0][2] == 0 && t.child[1][2] == ST_NIL && !t.red[2] && t.red[0],
           "erasing the root: its successor takes its place and colour");
    st_free(&t);
}

int main(void)
{
    struct pf_symtree t;
    size_t live = 0;
    int all_valid = 1, finds = 1;

    shapes();
    memset(syms, 0, sizeof(syms));
    memset(present, 0, sizeof(present));
    srand(7);
    for (int i = 0; i < N; i++) {
        syms[i].start = (uint64_t)(rand() % 200) * 16; /* many repeated keys */
        syms[i].end = syms[i].start + (uint64_t)(rand() % 3) * 16;
    }
    if (st_init(&t, N) != 0)
        return tap_done();
    for (uint32_t i = 0; i < N; i++) {
        st_insert(&t, syms, i);
        present[i] = 1;
        live++;
        if (!valid(&t, live))
            all_valid = 0;
        if (i % 3 == 2) { /* erase a random live node */
            uint32_t k = (uint32_t)rand() % (i + 1);
            while (!present[k])
                k = (k + 1) % (i + 1);
            st_erase(&t, k);
            present[k] = 0;
            live--;
            if (!valid(&t, live))
                all_valid = 0;
        }
    }
    TAP_OK(all_valid,
           "after each of %d insertions and %d erasures the tree is a red-black tree "
           "in key order holding exactly the nodes not erased",
           N, N / 3);
    /* st_find: a live node whose [start, end] holds ip (end only for a zero-sized one);
     * with overlapping ranges the walk may miss one off its path, as perf's does */
    for (uint64_t ip = 0; ip < 200 * 16 + 32; ip += 4) {
        uint32_t f = st_find(&t, syms, ip);
        if (f != ST_NIL && (!present[f] || ip < syms[f].start || ip > syms[f].end ||
                            (ip == syms[f].end && ip != syms[f].start)))
            finds = 0;
    }
    TAP_OK(finds, "st_find names only a live symbol that holds the address");
    /* erase everything */
    for (uint32_t i = 0; i < N; i++)
        if (present[i]) {
            st_erase(&t, i);
            present[i] = 0;
            live--;
        }
    TAP_OK(t.root == ST_NIL && valid(&t, 0), "every node erased: the tree is empty");
    st_free(&t);
    /* ranges that do not overlap (ends fixed up to the next start, as for kallsyms),
     * inserted in a scrambled order: the walk finds exactly the one that holds ip */
    {
        uint32_t order[N];
        int exact = 1;
        for (uint32_t i = 0; i < N; i++) {
            syms[i].start = (uint64_t)i * 32;
            syms[i].end = syms[i].start + 32;
            order[i] = i;
        }
        for (uint32_t i = N - 1; i > 0; i--) {
            uint32_t k = (uint32_t)rand() % (i + 1), tmp = order[i];
            order[i] = order[k];
            order[k] = tmp;
        }
        st_init(&t, N);
        for (uint32_t i = 0; i < N; i++)
            st_insert(&t, syms, order[i]);
        for (uint64_t ip = 0; ip < (uint64_t)N * 32; ip += 7)
            if (st_find(&t, syms, ip) != (uint32_t)(ip / 32))
                exact = 0;
        TAP_OK(exact && st_find(&t, syms, (uint64_t)N * 32 + 1) == ST_NIL,
               "ranges that do not overlap: the walk finds the one that holds each address");
        st_free(&t);
    }
    return tap_done();
}

/* symtree.c - the kernel's red-black tree algorithm (lib/rbtree.c) over array indices,
 * so that a file's symbols take the shape perf's tree of them takes (symtree.h).  The
 * cases and their order follow the kernel's: insertion's three cases on either side,
 * erasure by splicing in the successor, and the four rebalancing cases after it. */
#include "symtree.h"

#include <assert.h>
#include <stdlib.h>

#define NIL ST_NIL

int st_init(struct pf_symtree *t, size_t n)
{
    t->root = NIL;
    t->cap = n;
    t->child[0] = malloc((n ? n : 1) * sizeof(*t->child[0]));
    t->child[1] = malloc((n ? n : 1) * sizeof(*t->child[1]));
    t->parent = malloc((n ? n : 1) * sizeof(*t->parent));
    t->red = malloc(n ? n : 1);
    if (!t->child[0] || !t->child[1] || !t->parent || !t->red) {
        st_free(t);
        return -1;
    }
    return 0;
}

void st_free(struct pf_symtree *t)
{
    free(t->child[0]);
    free(t->child[1]);
    free(t->parent);
    free(t->red);
    t->child[0] = t->child[1] = t->parent = NULL;
    t->red = NULL;
    t->root = NIL;
    t->cap = 0;
}

static int is_red(const struct pf_symtree *t, uint32_t n)
{
    return n != NIL && t->red[n];
}

/* parent's link to old now leads to new (or the root does) */
static void change_child(struct pf_symtree *t, uint32_t old, uint32_t new, uint32_t parent)
{
    if (parent == NIL)
        t->root = new;
    else if (t->child[0][parent] == old)
        t->child[0][parent] = new;
    else
        t->child[1][parent] = new;
}

/* new takes old's place and colour; old becomes new's child, coloured red (1) or black */
static void rotate_set_parents(struct pf_symtree *t, uint32_t old, uint32_t new, int red)
{
    uint32_t parent = t->parent[old];

    t->parent[new] = parent;
    t->red[new] = t->red[old];
    t->parent[old] = new;
    t->red[old] = (uint8_t)red;
    change_child(t, old, new, parent);
}

void st_insert(struct pf_symtree *t, const struct pf_sym *s, uint32_t i)
{
    uint32_t *link = &t->root, parent = NIL, node = i, gparent, uncle, tmp;
    int d;

    assert(i < t->cap);
    while (*link != NIL) {
        parent = *link;
        link = &t->child[s[i].start < s[parent].start ? 0 : 1][parent];
    }
    t->child[0][i] = t->child[1][i] = NIL;
    t->parent[i] = parent;
    t->red[i] = 1;
    *link = i;
    /* __rb_insert; d is the side parent hangs on gparent (0 left), its cases mirrored */
    for (;;) {
        if (parent == NIL) {
            t->red[node] = 0;
            break;
        }
        if (!t->red[parent])
            break;
        gparent = t->parent[parent];
        d = parent == t->child[1][gparent];
        uncle = t->child[!d][gparent];
        if (is_red(t, uncle)) { /* case 1: recolour, go up */
            t->red[uncle] = t->red[parent] = 0;
            node = gparent;
            parent = t->parent[node];
            t->red[node] = 1;
            continue;
        }
        tmp = t->child[!d][parent];
        if (node == tmp) { /* case 2: node on the inside: rotate at parent */
            tmp = t->child[d][node];
            t->child[!d][parent] = tmp;
            t->child[d][node] = parent;
            if (tmp != NIL) {
                t->parent[tmp] = parent;
                t->red[tmp] = 0;
            }
            t->parent[parent] = node;
            t->red[parent] = 1;
            parent = node;
            tmp = t->child[!d][node];
        }
        /* case 3: rotate at gparent the other way */
        t->child[d][gparent] = tmp;
        t->child[!d][parent] = gparent;
        if (tmp != NIL) {
            t->parent[tmp] = gparent;
            t->red[tmp] = 0;
        }
        rotate_set_parents(t, gparent, parent, 1);
        break;
    }
}

/* ____rb_erase_color: parent lost a black node on the side node is on (d: 0 left; node
 * is NIL at first, and then on the left unless it is parent's right child), the four
 * cases mirrored by d */
static void erase_color(struct pf_symtree *t, uint32_t parent)
{
    uint32_t node = NIL, sibling, tmp1, tmp2;
    int d;

    for (;;) {
        d = node == t->child[1][parent];
        sibling = t->child[!d][parent];
        if (is_red(t, sibling)) { /* case 1: rotate at parent toward node */
            tmp1 = t->child[d][sibling];
            t->child[!d][parent] = tmp1;
            t->child[d][sibling] = parent;
            t->parent[tmp1] = parent;
            t->red[tmp1] = 0;
            rotate_set_parents(t, parent, sibling, 1);
            sibling = tmp1;
        }
        tmp1 = t->child[!d][sibling];
        if (!is_red(t, tmp1)) {
            tmp2 = t->child[d][sibling];
            if (!is_red(t, tmp2)) { /* case 2: sibling colour flip */
                t->red[sibling] = 1;
                if (t->red[parent]) {
                    t->red[parent] = 0;
                } else {
                    node = parent;
                    parent = t->parent[node];
                    if (parent != NIL)
                        continue;
                }
                break;
            }
            /* case 3: rotate at sibling away from node */
            tmp1 = t->child[!d][tmp2];
            t->child[d][sibling] = tmp1;
            t->child[!d][tmp2] = sibling;
            t->child[!d][parent] = tmp2;
            if (tmp1 != NIL) {
                t->parent[tmp1] = sibling;
                t->red[tmp1] = 0;
            }
            tmp1 = sibling;
            sibling = tmp2;
        }
        /* case 4: rotate at parent toward node, colour flips */
        tmp2 = t->child[d][sibling];
        t->child[!d][parent] = tmp2;
        t->child[d][sibling] = parent;
        t->parent[tmp1] = sibling;
        t->red[tmp1] = 0;
        if (tmp2 != NIL)
            t->parent[tmp2] = parent;
        rotate_set_parents(t, parent, sibling, 0);
        break;
    }
}

void st_erase(struct pf_symtree *t, uint32_t node)
{
    uint32_t child = t->child[1][node], tmp = t->child[0][node], parent, rebalance;

    assert(node < t->cap);
    if (tmp == NIL) { /* at most one child, the right */
        parent = t->parent[node];
        change_child(t, node, child, parent);
        if (child != NIL) {
            t->parent[child] = parent;
            t->red[child] = t->red[node];
            rebalance = NIL;
        } else {
            rebalance = t->red[node] ? NIL : parent;
        }
    } else if (child == NIL) { /* only the left */
        parent = t->parent[node];
        t->parent[tmp] = parent;
        t->red[tmp] = t->red[node];
        change_child(t, node, tmp, parent);
        rebalance = NIL;
    } else {
        uint32_t successor = child, child2;
        tmp = t->child[0][child];
        if (tmp == NIL) { /* the successor is the right child */
            parent = successor;
            child2 = t->child[1][successor];
        } else { /* the leftmost of the right subtree */
            do {
                parent = successor;
                successor = tmp;
                tmp = t->child[0][tmp];
            } while (tmp != NIL);
            child2 = t->child[1][successor];
            t->child[0][parent] = child2;
            t->child[1][successor] = child;
            t->parent[child] = successor;
        }
        tmp = t->child[0][node];
        t->child[0][successor] = tmp;
        t->parent[tmp] = successor;
        change_child(t, node, successor, t->parent[node]);
        if (child2 != NIL) {
            t->parent[child2] = parent;
            t->red[child2] = 0;
            rebalance = NIL;
        } else {
            rebalance = t->red[successor] ? NIL : parent;
        }
        t->parent[successor] = t->parent[node];
        t->red[successor] = t->red[node];
    }
    if (rebalance != NIL)
        erase_color(t, rebalance);
}

uint32_t st_first(const struct pf_symtree *t)
{
    uint32_t n = t->root;

    if (n == NIL)
        return NIL;
    while (t->child[0][n] != NIL)
        n = t->child[0][n];
    return n;
}

uint32_t st_next(const struct pf_symtree *t, uint32_t n)
{
    uint32_t p;

    if (t->child[1][n] != NIL) {
        for (n = t->child[1][n]; t->child[0][n] != NIL;)
            n = t->child[0][n];
        return n;
    }
    while ((p = t->parent[n]) != NIL && n == t->child[1][p])
        n = p;
    return p;
}

uint32_t st_find(const struct pf_symtree *t, const struct pf_sym *s, uint64_t ip)
{
    uint32_t n = t->root;

    while (n != NIL) {
        if (ip < s[n].start)
            n = t->child[0][n];
        else if (ip > s[n].end || (ip == s[n].end && ip != s[n].start))
            n = t->child[1][n];
        else
            return n;
    }
    return NIL;
}

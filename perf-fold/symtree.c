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
    t->left = malloc((n ? n : 1) * sizeof(*t->left));
    t->right = malloc((n ? n : 1) * sizeof(*t->right));
    t->parent = malloc((n ? n : 1) * sizeof(*t->parent));
    t->red = malloc(n ? n : 1);
    if (!t->left || !t->right || !t->parent || !t->red) {
        st_free(t);
        return -1;
    }
    return 0;
}

void st_free(struct pf_symtree *t)
{
    free(t->left);
    free(t->right);
    free(t->parent);
    free(t->red);
    t->left = t->right = t->parent = NULL;
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
    else if (t->left[parent] == old)
        t->left[parent] = new;
    else
        t->right[parent] = new;
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
    uint32_t *link = &t->root, parent = NIL, node = i, gparent, tmp;

    assert(i < t->cap);
    while (*link != NIL) {
        parent = *link;
        link = s[i].start < s[parent].start ? &t->left[parent] : &t->right[parent];
    }
    t->left[i] = t->right[i] = NIL;
    t->parent[i] = parent;
    t->red[i] = 1;
    *link = i;
    /* __rb_insert */
    for (;;) {
        if (parent == NIL) {
            t->red[node] = 0;
            break;
        }
        if (!t->red[parent])
            break;
        gparent = t->parent[parent];
        tmp = t->right[gparent];
        if (parent != tmp) { /* parent is gparent's left child */
            if (is_red(t, tmp)) {
                t->red[tmp] = t->red[parent] = 0; /* case 1: recolour, go up */
                node = gparent;
                parent = t->parent[node];
                t->red[node] = 1;
                continue;
            }
            tmp = t->right[parent];
            if (node == tmp) { /* case 2: left rotate at parent */
                tmp = t->left[node];
                t->right[parent] = tmp;
                t->left[node] = parent;
                if (tmp != NIL) {
                    t->parent[tmp] = parent;
                    t->red[tmp] = 0;
                }
                t->parent[parent] = node;
                t->red[parent] = 1;
                parent = node;
                tmp = t->right[node];
            }
            /* case 3: right rotate at gparent */
            t->left[gparent] = tmp;
            t->right[parent] = gparent;
            if (tmp != NIL) {
                t->parent[tmp] = gparent;
                t->red[tmp] = 0;
            }
            rotate_set_parents(t, gparent, parent, 1);
            break;
        } else {
            tmp = t->left[gparent];
            if (is_red(t, tmp)) {
                t->red[tmp] = t->red[parent] = 0;
                node = gparent;
                parent = t->parent[node];
                t->red[node] = 1;
                continue;
            }
            tmp = t->left[parent];
            if (node == tmp) { /* case 2: right rotate at parent */
                tmp = t->right[node];
                t->left[parent] = tmp;
                t->right[node] = parent;
                if (tmp != NIL) {
                    t->parent[tmp] = parent;
                    t->red[tmp] = 0;
                }
                t->parent[parent] = node;
                t->red[parent] = 1;
                parent = node;
                tmp = t->left[node];
            }
            /* case 3: left rotate at gparent */
            t->right[gparent] = tmp;
            t->left[parent] = gparent;
            if (tmp != NIL) {
                t->parent[tmp] = gparent;
                t->red[tmp] = 0;
            }
            rotate_set_parents(t, gparent, parent, 1);
            break;
        }
    }
}

/* ____rb_erase_color: parent lost a black node on its side that node is on */
static void erase_color(struct pf_symtree *t, uint32_t parent)
{
    uint32_t node = NIL, sibling, tmp1, tmp2;

    for (;;) {
        sibling = t->right[parent];
        if (node != sibling) {        /* node is parent's left child */
            if (is_red(t, sibling)) { /* case 1: left rotate at parent */
                tmp1 = t->left[sibling];
                t->right[parent] = tmp1;
                t->left[sibling] = parent;
                t->parent[tmp1] = parent;
                t->red[tmp1] = 0;
                rotate_set_parents(t, parent, sibling, 1);
                sibling = tmp1;
            }
            tmp1 = t->right[sibling];
            if (!is_red(t, tmp1)) {
                tmp2 = t->left[sibling];
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
                /* case 3: right rotate at sibling */
                tmp1 = t->right[tmp2];
                t->left[sibling] = tmp1;
                t->right[tmp2] = sibling;
                t->right[parent] = tmp2;
                if (tmp1 != NIL) {
                    t->parent[tmp1] = sibling;
                    t->red[tmp1] = 0;
                }
                tmp1 = sibling;
                sibling = tmp2;
            }
            /* case 4: left rotate at parent, colour flips */
            tmp2 = t->left[sibling];
            t->right[parent] = tmp2;
            t->left[sibling] = parent;
            t->parent[tmp1] = sibling;
            t->red[tmp1] = 0;
            if (tmp2 != NIL)
                t->parent[tmp2] = parent;
            rotate_set_parents(t, parent, sibling, 0);
            break;
        } else {
            sibling = t->left[parent];
            if (is_red(t, sibling)) { /* case 1: right rotate at parent */
                tmp1 = t->right[sibling];
                t->left[parent] = tmp1;
                t->right[sibling] = parent;
                t->parent[tmp1] = parent;
                t->red[tmp1] = 0;
                rotate_set_parents(t, parent, sibling, 1);
                sibling = tmp1;
            }
            tmp1 = t->left[sibling];
            if (!is_red(t, tmp1)) {
                tmp2 = t->right[sibling];
                if (!is_red(t, tmp2)) { /* case 2 */
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
                /* case 3: left rotate at sibling */
                tmp1 = t->left[tmp2];
                t->right[sibling] = tmp1;
                t->left[tmp2] = sibling;
                t->left[parent] = tmp2;
                if (tmp1 != NIL) {
                    t->parent[tmp1] = sibling;
                    t->red[tmp1] = 0;
                }
                tmp1 = sibling;
                sibling = tmp2;
            }
            /* case 4: right rotate at parent, colour flips */
            tmp2 = t->right[sibling];
            t->left[parent] = tmp2;
            t->right[sibling] = parent;
            t->parent[tmp1] = sibling;
            t->red[tmp1] = 0;
            if (tmp2 != NIL)
                t->parent[tmp2] = parent;
            rotate_set_parents(t, parent, sibling, 0);
            break;
        }
    }
}

void st_erase(struct pf_symtree *t, uint32_t node)
{
    uint32_t child = t->right[node], tmp = t->left[node], parent, rebalance;

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
        tmp = t->left[child];
        if (tmp == NIL) { /* the successor is the right child */
            parent = successor;
            child2 = t->right[successor];
        } else { /* the leftmost of the right subtree */
            do {
                parent = successor;
                successor = tmp;
                tmp = t->left[tmp];
            } while (tmp != NIL);
            child2 = t->right[successor];
            t->left[parent] = child2;
            t->right[successor] = child;
            t->parent[child] = successor;
        }
        tmp = t->left[node];
        t->left[successor] = tmp;
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
    while (t->left[n] != NIL)
        n = t->left[n];
    return n;
}

uint32_t st_next(const struct pf_symtree *t, uint32_t n)
{
    uint32_t p;

    if (t->right[n] != NIL) {
        for (n = t->right[n]; t->left[n] != NIL;)
            n = t->left[n];
        return n;
    }
    while ((p = t->parent[n]) != NIL && n == t->right[p])
        n = p;
    return p;
}

uint32_t st_find(const struct pf_symtree *t, const struct pf_sym *s, uint64_t ip)
{
    uint32_t n = t->root;

    while (n != NIL) {
        if (ip < s[n].start)
            n = t->left[n];
        else if (ip > s[n].end || (ip == s[n].end && ip != s[n].start))
            n = t->right[n];
        else
            return n;
    }
    return NIL;
}

/* layout.c - the frame tree: stacks merged into frames the way flamegraph.pl merges them.
 *
 * flamegraph.pl sorts the input lines byte-wise and merges each line's frames with the
 * frames still open from the line before (same name at the same depth under the same
 * parents).  Sorting whole lines is not sorting names: a stack ending at "f" sorts as
 * "f 12" and one passing through "f" as "f;g 3", so a sibling "f2" (or "f.x", "f-y": any
 * byte between ' ' and ';') sorts between them and splits "f" into two frames.
 *
 * Here the lines are streamed into a prefix tree (memory grows with distinct frames, not
 * with input size); each node keeps the counts of the lines that end at it.  At the end
 * the children of each node are ordered as their lines would sort: entry T(c) with key
 * "c " for lines ending at c, S(c) with key "c;" for lines going through it; consecutive
 * entries of one child make one frame.
 *
 * --flamechart keeps input order: frames are merged only with the line just before, so the
 * lines are folded as they stream in, and closed frames too narrow to be drawn even at the
 * current total are dropped at once.
 *
 *   depth 2      [ g ][h]            [ g ]
 *   depth 1   [   f (T)  ][ f2 ][   f (S)   ]     <- "f 5", "f2;x 1", "f;g 2": f splits
 *   depth 0   [              all             ]
 */
#include <stdlib.h>
#include <string.h>

#include "fg.h"

#define NONE UINT32_MAX

#define CHILDREN_FIRST 4096 /* first slots of the (parent, name) table */

/* ---- interned names ---- */

/* An sf_map value is a non-NULL word: an id + 1. */
static void *id_val(uint32_t id)
{
    return (void *)((uintptr_t)id + 1);
}

static uint32_t val_id(const void *val)
{
    return (uint32_t)((uintptr_t)val - 1);
}

uint32_t names_intern(struct fg_names *n, const char *s, size_t len)
{
    uint64_t h = sf_hash(s, len);
    struct sf_map_slot *sl;
    uint32_t id;

    if (sf_map_reserve(&n->map, 1) < 0)
        return NONE;
    /* most mismatches are rejected by the stored hash without the text */
    SF_MAP_RUN(&n->map, h, sl)
    {
        if (sl->hash != h)
            continue;
        id = val_id(sl->val);
        if (n->len[id] == len && memcmp(n->text + n->off[id], s, len) == 0)
            return id;
    }
    if (len > UINT32_MAX / 2 || n->text_len + len + 1 > UINT32_MAX)
        return NONE;
    if (n->count == n->cap) {
        uint32_t cap = n->cap ? n->cap * 2 : 1024;
        uint32_t *o = realloc(n->off, cap * sizeof(*o)), *l;
        if (!o)
            return NONE;
        n->off = o;
        if (!(l = realloc(n->len, cap * sizeof(*l))))
            return NONE;
        n->len = l;
        n->cap = cap;
    }
    if (n->text_len + len + 1 > n->text_cap) {
        size_t cap = n->text_cap ? n->text_cap * 2 : 65536;
        while (cap < n->text_len + len + 1)
            cap *= 2;
        char *t = realloc(n->text, cap);
        if (!t)
            return NONE;
        n->text = t;
        n->text_cap = cap;
    }
    id = n->count++;
    n->off[id] = (uint32_t)n->text_len;
    n->len[id] = (uint32_t)len;
    memcpy(n->text + n->text_len, s, len);
    n->text[n->text_len + len] = '\0';
    n->text_len += len + 1;
    sf_map_fill(&n->map, sl, h, id_val(id));
    return id;
}

void names_free(struct fg_names *n)
{
    free(n->text);
    free(n->off);
    free(n->len);
    sf_map_free(&n->map);
}

/* ---- setup ---- */

static uint32_t node_new(struct fg_layout *l, uint32_t parent, uint32_t name)
{
    struct fg_node *nd;

    if (l->nnodes == l->cap_nodes) {
        uint32_t cap = l->cap_nodes ? l->cap_nodes * 2 : 4096;
        if (cap < l->cap_nodes)
            return NONE;
        nd = realloc(l->nodes, (size_t)cap * sizeof(*nd));
        if (!nd)
            return NONE;
        l->nodes = nd;
        l->cap_nodes = cap;
    }
    nd = &l->nodes[l->nnodes];
    memset(nd, 0, sizeof(*nd));
    nd->name = name;
    nd->parent = parent;
    nd->first_child = NONE;
    nd->next_sibling = NONE;
    if (parent != NONE) {
        nd->next_sibling = l->nodes[parent].first_child;
        l->nodes[parent].first_child = l->nnodes;
    }
    return l->nnodes++;
}

int layout_init(struct fg_layout *l, int flamechart)
{
    memset(l, 0, sizeof(*l));
    l->flamechart = flamechart;
    l->maxdelta = 1;
    if (names_intern(&l->names, "", 0) != 0)
        return SF_E_NOMEM;
    sf_map_init_cap(&l->children, CHILDREN_FIRST);
    if (!flamechart && node_new(l, NONE, 0) != 0)
        return SF_E_NOMEM;
    return 0;
}

void layout_free(struct fg_layout *l)
{
    names_free(&l->names);
    free(l->nodes);
    sf_map_free(&l->children);
    free(l->path);
    free(l->open);
    free(l->closed);
    memset(l, 0, sizeof(*l));
}

void layout_set_prune(struct fg_layout *l, double minwidth, int pct, double drawable_width)
{
    l->prune_px = minwidth;
    l->prune_pct = pct;
    l->prune_width = drawable_width;
}

/* ---- sorted mode: the prefix tree ---- */

/* The child of parent named name, created if missing; NONE when out of memory.  The
 * slots hold the key's hash, which sf_hash_u64 makes one-to-one: equal hashes are the
 * same (parent, name), and probing stays in the slots instead of visiting nodes all
 * over the array. */
static uint32_t child_get(struct fg_layout *l, uint32_t parent, uint32_t name)
{
    uint64_t h = sf_hash_u64((uint64_t)parent << 32 | name);
    struct sf_map_slot *s;
    uint32_t id;

    if (sf_map_reserve(&l->children, 1) < 0)
        return NONE;
    SF_MAP_RUN(&l->children, h, s)
    {
        if (s->hash == h)
            return val_id(s->val);
    }
    if ((id = node_new(l, parent, name)) == NONE)
        return NONE;
    sf_map_fill(&l->children, s, h, id_val(id));
    return id;
}

static int path_reserve(struct fg_layout *l, size_t n)
{
    if (n <= l->path_cap)
        return 0;
    size_t cap = l->path_cap ? l->path_cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *p = realloc(l->path, cap * sizeof(*p));
    if (!p || cap > UINT32_MAX)
        return SF_E_NOMEM;
    l->path = p;
    l->path_cap = (uint32_t)cap;
    return 0;
}

/* Does the current line's key sort before the stored one (byte-wise, shorter first)? */
static int key_less(const struct fg_layout *l, uint32_t stored)
{
    size_t len;
    const char *s = names_get(&l->names, stored, &len);
    size_t m = len < l->key_len ? len : l->key_len;
    int r = memcmp(l->key ? l->key : "", s, m);

    return r < 0 || (r == 0 && l->key_len < len);
}

static int tree_add(struct fg_layout *l, const char *const *frames, const size_t *lens, size_t n,
                    size_t same, size_t sep_at, double count, int diff, double delta)
{
    uint32_t cur = 0;
    size_t i = 0;
    struct fg_node *nd;

    if (path_reserve(l, n) < 0)
        return SF_E_NOMEM;
    /* consecutive lines share long prefixes: reuse the last path before hashing */
    for (; i < same && i < l->path_len; i++)
        cur = l->path[i];
    for (; i < n && i < l->path_len; i++) {
        size_t len;
        const char *s = names_get(&l->names, l->nodes[l->path[i]].name, &len);
        if (len != lens[i] || memcmp(s, frames[i], len) != 0)
            break;
        cur = l->path[i];
    }
    for (; i < n; i++) {
        uint32_t name = names_intern(&l->names, frames[i], lens[i]);
        if (name == NONE || (cur = child_get(l, cur, name)) == NONE)
            return SF_E_NOMEM;
        l->path[i] = cur;
        if (sep_at != SIZE_MAX && l->nodes[cur].chain == 0 && i >= sep_at)
            l->nodes[cur].chain = i == sep_at ? 1 : 2;
    }
    l->path_len = (uint32_t)n;
    nd = &l->nodes[cur];
    nd->self += count;
    if (!nd->term || key_less(l, nd->tkey)) {
        /* the line that sorts first among equal stacks opens the frame */
        nd->term = 1;
        nd->tdiff = (uint8_t)diff;
        nd->tdelta = delta;
        if ((nd->tkey = names_intern(&l->names, l->key ? l->key : "", l->key_len)) == NONE)
            return SF_E_NOMEM;
    }
    return 0;
}

/* ---- flamechart mode: flamegraph.pl's flow() over lines in input order ---- */

static double prune_now(const struct fg_layout *l)
{
    if (l->prune_pct)
        return l->time * l->prune_px / 100;
    return l->prune_width > 0 ? l->prune_px * l->time / l->prune_width : 0;
}

static int closed_add(struct fg_layout *l, const struct fg_frame *f)
{
    double min = prune_now(l);

    if (f->etime - f->stime < min && f->depth > 0)
        return 0;
    if (l->nclosed == l->cap_closed) {
        /* drop what has become too narrow before growing */
        size_t k = 0;
        for (size_t i = 0; i < l->nclosed; i++)
            if (l->closed[i].etime - l->closed[i].stime >= min)
                l->closed[k++] = l->closed[i];
        l->nclosed = k;
        if (k * 2 > l->cap_closed || l->cap_closed == 0) {
            size_t cap = l->cap_closed ? l->cap_closed * 2 : 4096;
            struct fg_frame *c = realloc(l->closed, cap * sizeof(*c));
            if (!c)
                return SF_E_NOMEM;
            l->closed = c;
            l->cap_closed = cap;
        }
    }
    l->closed[l->nclosed++] = *f;
    return 0;
}

static int flow_add(struct fg_layout *l, const char *const *frames, const size_t *lens, size_t n,
                    size_t known, int diff, double delta)
{
    size_t same = 0;

    if (n + 1 > l->open_cap) {
        size_t cap = l->open_cap ? l->open_cap * 2 : 64;
        while (cap < n + 1)
            cap *= 2;
        struct fg_frame *o = realloc(l->open, cap * sizeof(*o));
        if (!o || cap > UINT32_MAX)
            return SF_E_NOMEM;
        l->open = o;
        l->open_cap = (uint32_t)cap;
    }
    if (l->open_len > 0) {
        same = 1; /* the root is shared by every line */
        while (same < l->open_len && same <= known)
            same++;
    }
    for (; same < l->open_len && same <= n; same++) {
        size_t len;
        const char *s = names_get(&l->names, l->open[same].name, &len);
        if (len != lens[same - 1] || memcmp(s, frames[same - 1], len) != 0)
            break;
    }
    for (size_t i = l->open_len; i-- > same;) {
        l->open[i].etime = l->time;
        if (closed_add(l, &l->open[i]) < 0)
            return SF_E_NOMEM;
    }
    for (size_t i = same; i <= n; i++) {
        struct fg_frame *f = &l->open[i];
        f->name = i == 0 ? 0 : names_intern(&l->names, frames[i - 1], lens[i - 1]);
        if (f->name == NONE)
            return SF_E_NOMEM;
        f->depth = (uint32_t)i;
        f->stime = l->time;
        f->has_delta = diff;
        f->delta = diff && i == n ? delta : 0;
    }
    l->open_len = (uint32_t)(n + 1);
    return 0;
}

int layout_add(struct fg_layout *l, const char *const *frames, const size_t *lens, size_t n,
               size_t same, size_t sep_at, double count, int diff, double delta)
{
    int rc;

    if (l->flamechart)
        rc = flow_add(l, frames, lens, n, same, diff, delta);
    else
        rc = tree_add(l, frames, lens, n, same, sep_at, count, diff, delta);
    if (rc < 0)
        return rc;
    if (diff) {
        double a = delta < 0 ? -delta : delta;
        if (a > l->maxdelta)
            l->maxdelta = a;
        l->any_delta++;
    }
    l->time += count;
    l->lines++;
    return 0;
}

/* ---- the frames to draw ---- */

/* One sort entry: lines ending at a child (sep ' ') or passing through it (sep ';'). */
struct entry {
    const char *name;
    uint32_t len;
    uint32_t node;
    char sep;         /* ' ' lines ending at the frame, ';' lines going through it */
    char virt;        /* chain: lines that ended at the parent before "--" was appended */
    const char *tail; /* what follows the name in the sorted line: counts, or ";" */
    uint32_t tail_len;
};

/* Byte i of name + tail. */
static unsigned char entry_byte(const struct entry *e, uint32_t i)
{
    return (unsigned char)(i < e->len ? e->name[i] : e->tail[i - e->len]);
}

/* Byte-wise order of "name" + tail, as flamegraph.pl's sort sees the lines. */
static int entry_cmp(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    uint32_t m = a->len < b->len ? a->len : b->len, la, lb;
    int r;

    if (a->virt != b->virt) /* the parent's own line "p N" sorts before every "p;..." */
        return a->virt ? -1 : 1;
    r = memcmp(a->name, b->name, m);
    if (r)
        return r;
    la = a->len + a->tail_len;
    lb = b->len + b->tail_len;
    for (uint32_t i = m; i < la && i < lb; i++) {
        unsigned char ca = entry_byte(a, i), cb = entry_byte(b, i);
        if (ca != cb)
            return ca < cb ? -1 : 1;
    }
    /* a line that ends first sorts first; "c;" goes on with c's children, which sort after
     * the blank of a "c;  N" line */
    if (la < lb)
        return a->sep == ' ' ? -1 : 1;
    if (lb < la)
        return b->sep == ' ' ? 1 : -1;
    return (unsigned char)a->sep - (unsigned char)b->sep;
}

/* A frame waiting to be emitted (explicit stack: stacks can be very deep). */
struct run {
    uint32_t node, depth;
    double stime, width;
    double delta;
    uint8_t t_part, s_part, has_delta;
};

struct walk {
    struct fg_layout *l;
    struct entry *ents;
    size_t nents, cap_ents;
    struct run *runs; /* work stack */
    size_t nruns, cap_runs;
    struct fg_frame *out;
    size_t nout, cap_out;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return SF_E_NOMEM;
    *p = q;
    *cap = c;
    return 0;
}

/* --colors chain: the "--" child that the rewrite appended to (or found after) the first
 * part of c's stacks, or NONE.  flamegraph.pl sorts the lines before that rewrite, so a
 * line that ends at "--" sorts as if it ended at c. */
static uint32_t chain_sep(const struct fg_layout *l, uint32_t c)
{
    if (!l->chain || l->nodes[c].chain != 0)
        return NONE;
    for (uint32_t k = l->nodes[c].first_child; k != NONE; k = l->nodes[k].next_sibling)
        if (l->nodes[k].chain == 1)
            return k;
    return NONE;
}

/* Time of the lines that (before any rewrite) end at c. */
static double t_time(const struct fg_layout *l, uint32_t c)
{
    uint32_t sep = chain_sep(l, c);

    if (l->nodes[c].term)
        return l->nodes[c].self;
    return sep != NONE && l->nodes[sep].term ? l->nodes[sep].self : 0;
}

/* Does c have lines going through it (rather than ending at it)? */
static int has_s(const struct fg_layout *l, uint32_t c)
{
    uint32_t sep = chain_sep(l, c);

    for (uint32_t k = l->nodes[c].first_child; k != NONE; k = l->nodes[k].next_sibling)
        if (k != sep || l->nodes[k].first_child != NONE)
            return 1;
    return 0;
}

enum { ALL_ENTRIES, NO_VIRTUAL, ONLY_VIRTUAL };

/* Sorted entries of node's children into w->ents; mode drops or keeps only the entry of a
 * chain "--" child standing for lines that ended at node.  Returns 0 or SF_E_NOMEM. */
static int sorted_entries(struct walk *w, uint32_t node, int mode)
{
    struct fg_layout *l = w->l;
    uint32_t own_sep = chain_sep(l, node);

    w->nents = 0;
    for (uint32_t c = l->nodes[node].first_child; c != NONE; c = l->nodes[c].next_sibling) {
        if (grow((void **)&w->ents, &w->cap_ents, w->nents + 2, sizeof(*w->ents)) < 0)
            return SF_E_NOMEM;
        size_t len;
        const char *s = names_get(&l->names, l->nodes[c].name, &len);
        /* waker frames sort by their names before the _[w] annotation */
        if (l->nodes[c].chain == 2 && len >= 4 && memcmp(s + len - 4, "_[w]", 4) == 0)
            len -= 4;
        struct entry e = {s, (uint32_t)len, c, ' ', 0, NULL, 0}, through = e;
        uint32_t ends = l->nodes[c].term ? c : chain_sep(l, c);
        through.sep = ';';
        through.tail = ";";
        through.tail_len = 1;
        if (ends != NONE && l->nodes[ends].term) {
            size_t tl;
            e.tail = names_get(&l->names, l->nodes[ends].tkey, &tl);
            e.tail_len = (uint32_t)tl;
        }
        if (c == own_sep) {
            if (l->nodes[c].term && mode != NO_VIRTUAL) {
                e.virt = 1;
                w->ents[w->nents++] = e;
            }
            if (l->nodes[c].first_child != NONE && mode != ONLY_VIRTUAL)
                w->ents[w->nents++] = through;
            continue;
        }
        if (mode == ONLY_VIRTUAL)
            continue;
        if (ends != NONE && l->nodes[ends].term)
            w->ents[w->nents++] = e;
        if (has_s(l, c))
            w->ents[w->nents++] = through;
    }
    qsort(w->ents, w->nents, sizeof(*w->ents), entry_cmp);
    return 0;
}

/* Was the first line (in sort order) under node a differential one?  That line opened the
 * frame, and flamegraph.pl gives a frame a delta only when its opening line had one. */
static int first_line_diff(struct fg_layout *l, uint32_t node)
{
    if (!l->any_delta)
        return 0;
    if ((uint64_t)l->any_delta == l->lines)
        return 1;
    for (;;) {
        struct entry best = {0}, e = {0};
        int have = 0;
        uint32_t sep = chain_sep(l, node);
        if (sep != NONE && l->nodes[sep].term)
            return l->nodes[sep].tdiff;
        for (uint32_t c = l->nodes[node].first_child; c != NONE; c = l->nodes[c].next_sibling) {
            size_t len;
            e.name = names_get(&l->names, l->nodes[c].name, &len);
            e.len = (uint32_t)len;
            e.node = c;
            e.sep = l->nodes[c].term ? ' ' : ';';
            e.tail = ";";
            e.tail_len = 1;
            if (l->nodes[c].term) {
                size_t tl;
                e.tail = names_get(&l->names, l->nodes[c].tkey, &tl);
                e.tail_len = (uint32_t)tl;
            }
            if (!have || entry_cmp(&e, &best) < 0)
                best = e;
            have = 1;
        }
        if (!have)
            return 0;
        if (best.sep == ' ')
            return l->nodes[best.node].tdiff;
        node = best.node;
    }
}

/* Push the frames of node's children, starting at time t, so that the leftmost pops first;
 * mode as for sorted_entries. */
static int expand(struct walk *w, uint32_t node, double t, uint32_t depth, int mode)
{
    struct fg_layout *l = w->l;
    size_t first;

    if (sorted_entries(w, node, mode) < 0)
        return SF_E_NOMEM;
    first = w->nruns;
    for (size_t i = 0; i < w->nents;) {
        uint32_t id = w->ents[i].node;
        const struct fg_node *c = &l->nodes[id];
        struct run r = {id, depth, t, 0, 0, 0, 0, 0};
        double tt = w->ents[i].virt ? c->self : t_time(l, id);
        if (w->ents[i].sep == ' ') {
            r.t_part = 1;
            if (c->term) {
                r.has_delta = c->tdiff;
                r.delta = c->tdelta;
            } else { /* chain: opened by a line whose leaf is the appended "--" */
                r.has_delta = l->nodes[chain_sep(l, id)].tdiff;
            }
            i++;
        } else {
            r.has_delta = (uint8_t)first_line_diff(l, id);
        }
        if (i < w->nents && w->ents[i].node == id && w->ents[i].sep == ';') {
            r.s_part = 1;
            i++;
        }
        r.width = (r.t_part ? tt : 0) + (r.s_part ? c->total - tt : 0);
        t += r.width;
        if (grow((void **)&w->runs, &w->cap_runs, w->nruns + 1, sizeof(*w->runs)) < 0)
            return SF_E_NOMEM;
        w->runs[w->nruns++] = r;
    }
    /* reverse the new runs: the stack pops from the end */
    for (size_t a = first, b = w->nruns ? w->nruns - 1 : 0; a < b; a++, b--) {
        struct run tmp = w->runs[a];
        w->runs[a] = w->runs[b];
        w->runs[b] = tmp;
    }
    return 0;
}

/* The children of a run's frame: after its own lines' time for a real terminal part; with
 * the chain "--" child first when the run's terminal part is that child's. */
static int expand_run(struct walk *w, const struct run *r)
{
    struct fg_layout *l = w->l;
    int virt = l->chain && !l->nodes[r->node].term && chain_sep(l, r->node) != NONE &&
               l->nodes[chain_sep(l, r->node)].term;

    if (virt && r->t_part)
        return expand(w, r->node, r->stime, r->depth + 1, r->s_part ? ALL_ENTRIES : ONLY_VIRTUAL);
    if (!r->s_part)
        return 0;
    return expand(w, r->node, r->stime + (r->t_part ? l->nodes[r->node].self : 0), r->depth + 1,
                  virt ? NO_VIRTUAL : ALL_ENTRIES);
}

static int emit(struct walk *w, uint32_t name, uint32_t depth, double s, double e, int hd, double d)
{
    if (grow((void **)&w->out, &w->cap_out, w->nout + 1, sizeof(*w->out)) < 0)
        return SF_E_NOMEM;
    w->out[w->nout++] = (struct fg_frame){name, depth, s, e, d, hd};
    return 0;
}

static int tree_frames(struct fg_layout *l, double timemax, double min_time, struct walk *w)
{
    struct fg_node *root = &l->nodes[0];
    int rc = 0;

    for (uint32_t id = 0; id < l->nnodes; id++)
        l->nodes[id].total = l->nodes[id].self;
    for (uint32_t id = l->nnodes; id-- > 1;)
        l->nodes[l->nodes[id].parent].total += l->nodes[id].total;
    if (root->total < min_time)
        return 0;
    if (root->term)
        rc = emit(w, 0, 0, 0, timemax, root->tdiff, root->tdelta);
    else
        rc = emit(w, 0, 0, 0, timemax, first_line_diff(l, 0), 0);
    if (rc < 0 || expand(w, 0, root->self, 1, ALL_ENTRIES) < 0)
        return SF_E_NOMEM;
    while (w->nruns > 0) {
        struct run r = w->runs[--w->nruns];
        if (r.width < min_time)
            continue;
        if (emit(w, l->nodes[r.node].name, r.depth, r.stime, r.stime + r.width, r.has_delta,
                 r.delta) < 0)
            return SF_E_NOMEM;
        if (expand_run(w, &r) < 0)
            return SF_E_NOMEM;
    }
    return 0;
}

static int frame_time_cmp(const void *pa, const void *pb)
{
    const struct fg_frame *a = pa, *b = pb;

    if (a->stime != b->stime)
        return a->stime < b->stime ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

static int chart_frames(struct fg_layout *l, double timemax, double min_time, struct walk *w)
{
    for (size_t i = l->open_len; i-- > 0;) {
        l->open[i].etime = l->time;
        if (closed_add(l, &l->open[i]) < 0)
            return SF_E_NOMEM;
    }
    l->open_len = 0;
    for (size_t i = 0; i < l->nclosed; i++) {
        struct fg_frame f = l->closed[i];
        if (f.etime - f.stime < min_time)
            continue;
        if (f.depth == 0)
            f.etime = timemax;
        if (emit(w, f.name, f.depth, f.stime, f.etime, f.has_delta, f.delta) < 0)
            return SF_E_NOMEM;
    }
    qsort(w->out, w->nout, sizeof(*w->out), frame_time_cmp);
    return 0;
}

int layout_frames(struct fg_layout *l, double timemax, double min_time, struct fg_frame **out,
                  size_t *n, uint32_t *depthmax)
{
    struct walk w = {.l = l};
    int rc;

    *out = NULL;
    *n = 0;
    *depthmax = 0;
    rc = l->flamechart ? chart_frames(l, timemax, min_time, &w)
                       : tree_frames(l, timemax, min_time, &w);
    free(w.ents);
    free(w.runs);
    if (rc < 0) {
        free(w.out);
        return rc;
    }
    for (size_t i = 0; i < w.nout; i++)
        if (w.out[i].depth > *depthmax)
            *depthmax = w.out[i].depth;
    *out = w.out;
    *n = w.nout;
    return 0;
}

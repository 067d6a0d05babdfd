/* hpack.c - HPACK (RFC 7541) decoding: libnghttp2 while the table is known, an own
 * tolerant decoder otherwise.  See hpack.h for the design.
 *
 * Header field representations (first byte of each, RFC 7541 section 6):
 *
 *   1xxxxxxx  indexed field              index (7-bit prefix)
 *   01xxxxxx  literal, incremental index name index (6-bit prefix; 0 = literal name)
 *   001xxxxx  dynamic table size update  new max size (5-bit prefix)
 *   0001xxxx  literal, never indexed     name index (4-bit prefix)
 *   0000xxxx  literal, without indexing  name index (4-bit prefix)
 *
 *   string:   +---+---------------------------+
 *             | H |     length (7+)           |  H = Huffman (Appendix B)
 *             +---+---------------------------+
 *             |  bytes ...                    |
 *             +-------------------------------+
 *
 *   integer:  prefix bits all ones => continue with 7-bit groups, low first,
 *             high bit = more (section 5.1).
 */
#include "hpack.h"

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng_pool.h"
#include "sf_rd.h"

/* ---- static table (RFC 7541 Appendix A) ------------------------------------------ */

static const char *const hp_static[62][2] = {
    {"", ""},
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
};

#define HP_STATIC_N       61
#define HP_ENTRY_OVERHEAD 32
#define HP_DEFAULT_TABLE  4096

int hpack_static(uint32_t idx, const char **name, const char **value)
{
    if (idx < 1 || idx > HP_STATIC_N)
        return 0;
    *name = hp_static[idx][0];
    *value = hp_static[idx][1];
    return 1;
}

/* ---- integers (section 5.1) ------------------------------------------------------ */

int hpack_int_read(struct sf_rd *rd, int prefix, uint32_t *v)
{
    uint32_t mask = (1u << prefix) - 1;
    uint64_t val = sf_rd_u8(rd) & mask;
    int shift = 0;

    if (rd->err)
        return SF_E_TRUNC;
    if (val < mask) {
        *v = (uint32_t)val;
        return 0;
    }
    for (;;) {
        uint8_t b = sf_rd_u8(rd);

        if (rd->err)
            return SF_E_TRUNC;
        /* More than five continuation bytes, or a value past 32 bits, is an attack
         * or garbage, never a real size or index. */
        if (shift > 28)
            return SF_E_MALFORMED;
        val += (uint64_t)(b & 0x7f) << shift;
        if (val > UINT32_MAX)
            return SF_E_MALFORMED;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    *v = (uint32_t)val;
    return 0;
}

/* ---- own decoder: dynamic table -------------------------------------------------- */

struct hp_entry {
    uint32_t nlen, vlen;
    uint32_t size;  /* RFC size; a lower bound when a part is unknown */
    unsigned flags; /* HPACK_F_NAME_UNKNOWN / HPACK_F_VALUE_UNKNOWN */
    char data[];    /* name then value */
};

struct hpack_dec {
    struct hpack_limits lim;
    nghttp2_hd_inflater *ng; /* non-NULL while nghttp2 decodes */
    struct ng_pool pool;     /* ng's memory (ng_pool.h) */
    /* Own table: a ring of entries, newest at ring[head], entry j at
     * ring[(head + j) & (cap - 1)]. */
    struct hp_entry **ring;
    size_t cap, head, n;
    size_t size;    /* summed entry sizes (lower bound with unknown parts) */
    uint32_t max;   /* the encoder's table size, when max_known */
    uint32_t bound; /* SETTINGS_HEADER_TABLE_SIZE acknowledged, when bound_known */
    int max_known, bound_known;
    int synced;       /* no entry of the table is missing from the ring */
    int need_update;  /* bound lowered: the next block must start with an update */
    uint8_t *sbuf[2]; /* Huffman output for a name [0] and a value [1], grown on */
    size_t scap[2];   /* demand up to max_field (most connections never need much) */
};

static void hp_clear(struct hpack_dec *d)
{
    for (size_t j = 0; j < d->n; j++)
        free(d->ring[(d->head + j) & (d->cap - 1)]);
    d->n = 0;
    d->size = 0;
}

/* The size the table is kept within: the exact one, else the SETTINGS bound, else
 * the cap.  Keeping more than the real table holds is harmless (an encoder never
 * refers past its own table, and entry j is the same in both while j is small). */
static size_t hp_limit(const struct hpack_dec *d)
{
    size_t lim = d->lim.max_table;

    if (d->max_known && d->max < lim)
        lim = d->max;
    else if (!d->max_known && d->bound_known && d->bound < lim)
        lim = d->bound;
    return lim;
}

static void hp_evict(struct hpack_dec *d, size_t room)
{
    size_t lim = hp_limit(d);

    while (d->n > 0 && d->size + room > lim) {
        struct hp_entry **e = &d->ring[(d->head + d->n - 1) & (d->cap - 1)];

        d->size -= (*e)->size;
        free(*e);
        *e = NULL;
        d->n--;
    }
}

/* In tolerant mode: can an entry older than the tracked ones still be in the table? */
static void hp_check_sync(struct hpack_dec *d)
{
    size_t upper;

    if (d->synced || !(d->max_known || d->bound_known))
        return;
    upper = d->max_known ? d->max : d->bound;
    if (d->size + HP_ENTRY_OVERHEAD > upper)
        d->synced = 1;
}

static int hp_grow(struct hpack_dec *d)
{
    size_t ncap = d->cap ? d->cap * 2 : 16;
    struct hp_entry **r = calloc(ncap, sizeof(*r));

    if (r == NULL)
        return SF_E_NOMEM;
    for (size_t j = 0; j < d->n; j++)
        r[j] = d->ring[(d->head + j) & (d->cap - 1)];
    free(d->ring);
    d->ring = r;
    d->cap = ncap;
    d->head = 0;
    return 0;
}

/* Insert a new entry (section 4.4).  `size` is its RFC size or a lower bound. */
static int hp_insert(struct hpack_dec *d, const char *name, size_t nlen, const uint8_t *value,
                     size_t vlen, unsigned flags, size_t size)
{
    struct hp_entry *e;

    if (size > hp_limit(d)) {
        hp_clear(d); /* an entry larger than the table empties it */
        hp_check_sync(d);
        return 0;
    }
    /* Copy first: the name may be that of an entry this insertion evicts (4.4). */
    e = malloc(sizeof(*e) + nlen + vlen + 1);
    if (e == NULL)
        return SF_E_NOMEM;
    e->nlen = (uint32_t)nlen;
    e->vlen = (uint32_t)vlen;
    e->size = (uint32_t)size;
    e->flags = flags;
    if (nlen)
        memcpy(e->data, name, nlen);
    if (vlen)
        memcpy(e->data + nlen, value, vlen);
    hp_evict(d, size);
    if (d->n == d->cap && hp_grow(d) < 0) {
        free(e);
        return SF_E_NOMEM;
    }
    d->head = (d->head + d->cap - 1) & (d->cap - 1);
    d->ring[d->head] = e;
    d->n++;
    d->size += size;
    hp_check_sync(d);
    return 0;
}

/* Apply a size update (section 6.3); returns 0 or an error code (message in why). */
static int hp_size_update(struct hpack_dec *d, uint32_t v, char *why, size_t whysz)
{
    int rc = 0;

    if (d->bound_known && v > d->bound) {
        snprintf(why, whysz, "size update to %u exceeds SETTINGS_HEADER_TABLE_SIZE %u", v,
                 d->bound);
        rc = SF_E_MALFORMED;
    }
    if (v > d->lim.max_table) {
        snprintf(why, whysz, "size update to %u exceeds the %zu-byte table cap", v,
                 d->lim.max_table);
        hp_clear(d); /* cannot follow: the table is unknown from here */
        d->synced = 0;
        d->max_known = 0;
        return SF_E_LIMIT;
    }
    d->max = v;
    d->max_known = 1;
    d->need_update = 0;
    hp_evict(d, 0);
    if (v == 0)
        d->synced = 1; /* everything is evicted: the table is known again */
    hp_check_sync(d);
    return rc;
}

struct hpack_dec *hpack_dec_new(const struct hpack_limits *lim, int table_known, int use_nghttp2)
{
    struct hpack_dec *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return NULL;
    d->lim = *lim;
    if (table_known) {
        d->max = d->bound = HP_DEFAULT_TABLE;
        d->max_known = d->bound_known = 1;
        d->synced = 1;
        if (use_nghttp2 && nghttp2_hd_inflate_new2(&d->ng, ng_pool_init(&d->pool)) != 0)
            d->ng = NULL; /* the own decoder does the same job */
    }
    return d;
}

/* Stop using libnghttp2 (its table, if needed, was taken over before) and free its
 * memory. */
static void hp_drop_nghttp2(struct hpack_dec *d)
{
    if (d->ng)
        nghttp2_hd_inflate_del(d->ng);
    d->ng = NULL;
    ng_pool_drain(&d->pool);
}

void hpack_dec_free(struct hpack_dec *d)
{
    if (d == NULL)
        return;
    hp_drop_nghttp2(d);
    hp_clear(d);
    free(d->ring);
    free(d->sbuf[0]);
    free(d->sbuf[1]);
    free(d);
}

void hpack_dec_set_bound(struct hpack_dec *d, uint32_t v)
{
    d->bound = v;
    d->bound_known = 1;
    if (d->ng) {
        /* nghttp2 enforces the same rules (update required when lowered). */
        nghttp2_hd_inflate_change_table_size(d->ng, v < d->lim.max_table ? v : d->lim.max_table);
    }
    if (d->max_known && v < d->max) {
        d->max = v;
        d->need_update = d->synced;
        hp_evict(d, 0);
    }
    hp_check_sync(d);
}

void hpack_dec_lost(struct hpack_dec *d)
{
    hp_drop_nghttp2(d);
    hp_clear(d);
    d->synced = 0;
    d->max_known = 0; /* a lost block may have carried a size update */
    d->need_update = 0;
}

int hpack_dec_synced(const struct hpack_dec *d)
{
    return d->ng != NULL || d->synced;
}

int hpack_dec_uses_nghttp2(const struct hpack_dec *d)
{
    return d->ng != NULL;
}

/* ---- own decoder: one block ------------------------------------------------------- */

/* Walking state of one block. */
struct hp_walk {
    struct hpack_dec *d;
    struct sf_rd rd; /* the block; its offsets are block offsets */
    hpack_emit_fn fn;
    void *arg;
    unsigned skip; /* fields already emitted by nghttp2: do not emit again */
    unsigned seen; /* field representations walked */
    size_t list;   /* decoded list size so far */
    struct hpack_result *res;
    struct sf_err *err;
    int rc;       /* first error */
    char unk[32]; /* "<unknown:IDX>" */
};

/* Record an error; the first one is what the block returns. */
static void hp_fail(struct hp_walk *w, int code, size_t off, const char *what)
{
    w->res->errors++;
    if (w->rc == 0) {
        w->rc = code;
        sf_err_set(w->err, code, off, "HPACK: %s at block offset %zu", what, off);
    }
}

/* Resolve index idx (>= 1) to a name and value; unknown parts get placeholders. */
/* "<unknown:IDX>" into w->unk (tolerant decoding meets one per unknown reference, so
 * without printf); returns its length. */
static size_t hp_unknown_name(struct hp_walk *w, uint32_t idx)
{
    char digits[10];
    size_t nd = 0, n = 9;

    do
        digits[nd++] = (char)('0' + idx % 10);
    while ((idx /= 10) != 0);
    memcpy(w->unk, "<unknown:", 9);
    while (nd > 0)
        w->unk[n++] = digits[--nd];
    w->unk[n++] = '>';
    w->unk[n] = 0;
    return n;
}

static void hp_lookup(struct hp_walk *w, uint32_t idx, size_t at, struct hpack_field *f)
{
    struct hpack_dec *d = w->d;

    f->flags = 0;
    if (idx >= 1 && idx <= HP_STATIC_N) {
        f->name = hp_static[idx][0];
        f->nlen = strlen(f->name);
        f->value = (const uint8_t *)hp_static[idx][1];
        f->vlen = strlen(hp_static[idx][1]);
        return;
    }
    if (idx > HP_STATIC_N && idx - HP_STATIC_N - 1 < d->n) {
        struct hp_entry *e = d->ring[(d->head + idx - HP_STATIC_N - 1) & (d->cap - 1)];

        f->name = e->data;
        f->nlen = e->nlen;
        f->value = (const uint8_t *)e->data + e->nlen;
        f->vlen = e->vlen;
        f->flags = e->flags;
        if (e->flags & HPACK_F_NAME_UNKNOWN) {
            f->nlen = hp_unknown_name(w, idx);
            f->name = w->unk;
        }
        return;
    }
    if (idx == 0 || d->synced) {
        char what[64];

        snprintf(what, sizeof(what), "invalid index %u (table has %zu entries)", idx, d->n);
        hp_fail(w, SF_E_MALFORMED, at, what);
        if (idx != 0) {
            /* Our table model is wrong somewhere: stop trusting it. */
            hp_clear(d);
            d->synced = 0;
        }
    }
    f->nlen = hp_unknown_name(w, idx);
    f->name = w->unk;
    f->value = (const uint8_t *)"";
    f->vlen = 0;
    f->flags = HPACK_F_NAME_UNKNOWN | HPACK_F_VALUE_UNKNOWN;
}

/* Read one string literal (section 5.2) into *s / *slen (pointing into the block, or
 * into buf when Huffman-coded).  *full gets the decoded length even past bufsz.
 * Returns 0, 1 when the string is unusable but the walk can go on (bad Huffman or
 * over cap; the error is recorded), or a negative code when the block is broken. */
static int hp_string(struct hp_walk *w, int which, const uint8_t **s, size_t *slen, size_t *full)
{
    struct hpack_dec *d = w->d;
    size_t want, bufsz;
    uint8_t *buf;
    const uint8_t *in;
    size_t at = sf_rd_off(&w->rd);
    int huff;
    uint32_t len;
    int rc;

    if (sf_rd_left(&w->rd) == 0)
        return SF_E_TRUNC;
    huff = w->rd.p[0] & 0x80;
    rc = hpack_int_read(&w->rd, 7, &len);
    if (rc < 0)
        return rc;
    if ((in = sf_rd_bytes(&w->rd, len)) == NULL)
        return SF_E_TRUNC;
    if (!huff) {
        *s = in;
        *slen = *full = len;
        return 0;
    }
    /* Huffman codes are at least 5 bits: len bytes decode to at most len * 8 / 5. */
    want = (size_t)len * 8 / 5 + 1;
    if (want > d->lim.max_field)
        want = d->lim.max_field;
    if (d->scap[which] < want) {
        size_t ncap = d->scap[which] * 2 > want ? d->scap[which] * 2 : want;
        uint8_t *nb;

        if (ncap > d->lim.max_field)
            ncap = d->lim.max_field;
        if ((nb = realloc(d->sbuf[which], ncap)) != NULL) {
            d->sbuf[which] = nb;
            d->scap[which] = ncap;
        }
    }
    buf = d->sbuf[which];
    bufsz = buf ? d->scap[which] : 0;
    rc = hpack_huff_decode(buf, bufsz, in, len, full);
    *s = buf ? buf : (const uint8_t *)"";
    *slen = *full < bufsz ? *full : bufsz;
    if (rc == SF_E_MALFORMED) {
        hp_fail(w, rc, at, "invalid Huffman string");
        *full = 0;
        return 1;
    }
    return 0;
}

/* Hand a field to the caller, applying the field and list caps. */
static void hp_emit(struct hp_walk *w, struct hpack_field *f, size_t fullsz, size_t at)
{
    w->seen++;
    w->list += fullsz + HP_ENTRY_OVERHEAD;
    if (fullsz > w->d->lim.max_field && !(f->flags & HPACK_F_VALUE_UNKNOWN)) {
        char what[96];

        snprintf(what, sizeof(what), "field of %zu bytes exceeds the %zu-byte cap", fullsz,
                 w->d->lim.max_field);
        hp_fail(w, SF_E_LIMIT, at, what);
        f->flags |= HPACK_F_VALUE_UNKNOWN;
        f->vlen = 0;
        if (f->nlen > w->d->lim.max_field)
            f->nlen = w->d->lim.max_field;
    }
    if (w->list > w->d->lim.max_list && !w->res->capped) {
        char what[96];

        snprintf(what, sizeof(what), "header list exceeds the %zu-byte cap (not followed)",
                 w->d->lim.max_list);
        hp_fail(w, SF_E_LIMIT, at, what);
        w->res->capped = 1;
    }
    if (w->res->capped || w->seen <= w->skip)
        return;
    w->res->fields++;
    if (f->flags & (HPACK_F_NAME_UNKNOWN | HPACK_F_VALUE_UNKNOWN))
        w->res->unknown++;
    if (w->fn)
        w->fn(w->arg, f);
}

/* One literal representation (sections 6.2.1-6.2.3); the reader is at its first byte. */
static int hp_literal(struct hp_walk *w, int prefix, int index_it, int never)
{
    size_t at = sf_rd_off(&w->rd), vfull = 0, nfull = 0;
    struct hpack_field f;
    uint32_t idx;
    const uint8_t *v, *nm;
    size_t vlen;
    int rc, bad;

    rc = hpack_int_read(&w->rd, prefix, &idx);
    if (rc < 0)
        return rc;
    if (idx) {
        hp_lookup(w, idx, at, &f);
        f.flags &= HPACK_F_NAME_UNKNOWN;
        nfull = (f.flags & HPACK_F_NAME_UNKNOWN) ? 0 : f.nlen;
    } else {
        rc = hp_string(w, 0, &nm, &f.nlen, &nfull);
        if (rc < 0)
            return rc;
        f.name = (const char *)nm;
        f.flags = 0;
        if (rc == 1 || nfull > f.nlen) {
            snprintf(w->unk, sizeof(w->unk), "<unknown:name>");
            f.name = w->unk;
            f.nlen = strlen(w->unk);
            f.flags = HPACK_F_NAME_UNKNOWN;
        }
    }
    rc = hp_string(w, 1, &v, &vlen, &vfull);
    if (rc < 0)
        return rc;
    bad = rc == 1;
    f.value = bad ? (const uint8_t *)"" : v;
    f.vlen = bad ? 0 : vlen;
    if (bad)
        f.flags |= HPACK_F_VALUE_UNKNOWN;
    if (never)
        f.flags |= HPACK_F_NEVER_INDEXED;
    {
        /* What the table gets, taken before hp_emit may blank the value for the cap.
         * Emit before inserting: an insertion can evict (free) the entry the name
         * points into (an entry larger than the table empties it); hp_insert
         * itself copies before it evicts. */
        struct hpack_field e = f;
        unsigned ef = f.flags & (HPACK_F_NAME_UNKNOWN | HPACK_F_VALUE_UNKNOWN);
        size_t keep = nfull + vfull > w->d->lim.max_field ? 0 : f.vlen;

        if (keep == 0 && vfull > 0)
            ef |= HPACK_F_VALUE_UNKNOWN;
        hp_emit(w, &f, nfull + vfull, at);
        if (index_it) {
            rc = hp_insert(w->d, (ef & HPACK_F_NAME_UNKNOWN) ? "" : e.name,
                           (ef & HPACK_F_NAME_UNKNOWN) ? 0 : e.nlen, e.value, keep, ef,
                           nfull + vfull + HP_ENTRY_OVERHEAD);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* Walk representations from the reader's place to the end of the block. */
static void hp_walk(struct hp_walk *w)
{
    int first = w->seen == 0;

    if (sf_rd_off(&w->rd) == 0 && w->d->need_update && sf_rd_left(&w->rd) > 0 &&
        (w->rd.p[0] & 0xe0) != 0x20)
        hp_fail(w, SF_E_MALFORMED, 0, "no size update after SETTINGS lowered the table");
    while (sf_rd_left(&w->rd) > 0) {
        uint8_t b = w->rd.p[0]; /* the representation's kind; its reader reads it again */
        size_t at = sf_rd_off(&w->rd);
        int rc = 0;

        if (b & 0x80) {
            struct hpack_field f;
            uint32_t idx;

            rc = hpack_int_read(&w->rd, 7, &idx);
            if (rc == 0) {
                hp_lookup(w, idx, at, &f);
                hp_emit(w, &f, f.nlen + f.vlen, at);
            }
        } else if ((b & 0xc0) == 0x40) {
            rc = hp_literal(w, 6, 1, 0);
        } else if ((b & 0xe0) == 0x20) {
            uint32_t v;
            char why[128];
            int urc;

            rc = hpack_int_read(&w->rd, 5, &v);
            if (rc == 0) {
                if (!first)
                    hp_fail(w, SF_E_MALFORMED, at, "dynamic table size update after a field");
                if ((urc = hp_size_update(w->d, v, why, sizeof(why))) != 0)
                    hp_fail(w, urc, at, why);
                continue; /* updates may follow updates: `first` stays */
            }
        } else {
            rc = hp_literal(w, 4, 0, b & 0x10);
        }
        first = 0;
        if (rc < 0) {
            /* The block cannot be walked further, so entries it inserts later are
             * missed: the table is unknown from here on. */
            hp_fail(w, rc, at,
                    rc == SF_E_TRUNC   ? "representation runs past the end of the block"
                    : rc == SF_E_NOMEM ? "out of memory"
                                       : "integer overflow");
            hpack_dec_lost(w->d);
            return;
        }
    }
}

/* Walk a block from offset `from`, after `seen` fields (decoded `list` bytes) that
 * libnghttp2 already emitted. */
static int hp_own_block(struct hpack_dec *d, const uint8_t *p, size_t n, size_t from, unsigned seen,
                        size_t list, hpack_emit_fn fn, void *arg, struct hpack_result *res,
                        struct sf_err *err)
{
    struct hp_walk w = {.d = d,
                        .fn = fn,
                        .arg = arg,
                        .skip = seen,
                        .seen = seen,
                        .list = list,
                        .res = res,
                        .err = err};

    sf_rd_init(&w.rd, p, n, 0);
    sf_rd_skip(&w.rd, from);
    res->tolerant = !d->synced;
    hp_walk(&w);
    if (res->unknown)
        res->tolerant = 1;
    return w.rc;
}

/* ---- nghttp2 path ------------------------------------------------------------------ */

/* Take over libnghttp2's table (after a failure it is still right: nghttp2 inserts
 * an entry only once its representation decoded). */
static int hp_take_ng_table(struct hpack_dec *d)
{
    size_t total = nghttp2_hd_inflate_get_num_table_entries(d->ng);

    hp_clear(d);
    d->max = (uint32_t)nghttp2_hd_inflate_get_max_dynamic_table_size(d->ng);
    d->max_known = d->synced = 1;
    /* oldest first, so that each insertion lands in front */
    for (size_t idx = total; idx > HP_STATIC_N; idx--) {
        const nghttp2_nv *nv = nghttp2_hd_inflate_get_table_entry(d->ng, idx);

        if (nv == NULL || hp_insert(d, (const char *)nv->name, nv->namelen, nv->value, nv->valuelen,
                                    0, nv->namelen + nv->valuelen + HP_ENTRY_OVERHEAD) < 0)
            return -1;
    }
    return 0;
}

/* nghttp2 failed at the representation after offset pos (its inflater is poisoned
 * for good): the own decoder takes its table and goes on from there, so fields
 * already emitted are not emitted twice.  The own decoder's diagnosis is reported
 * when it has one (it names the rule), else nghttp2's. */
static int hp_ng_fallback(struct hpack_dec *d, const uint8_t *p, size_t n, size_t pos,
                          unsigned emitted, size_t list, int rv, hpack_emit_fn fn, void *arg,
                          struct hpack_result *res, struct sf_err *err)
{
    struct sf_err e2;
    struct hpack_result r2 = {0};
    int rc2;

    if (hp_take_ng_table(d) < 0) {
        hpack_dec_lost(d);
        pos = 0; /* without a table: walk the block again, tolerant */
        emitted = 0;
        list = 0;
    }
    hp_drop_nghttp2(d);
    sf_err_clear(&e2);
    rc2 = hp_own_block(d, p, n, pos, emitted, list, fn, arg, &r2, &e2);
    res->fields += r2.fields;
    res->unknown += r2.unknown;
    res->capped |= r2.capped;
    res->errors += r2.errors ? r2.errors : 1;
    res->tolerant |= r2.tolerant;
    if (rc2 < 0)
        return sf_err_set(err, rc2, e2.off, "%s (nghttp2: %s); decoding goes on without libnghttp2",
                          e2.msg, nghttp2_strerror(rv));
    return sf_err_set(err, SF_E_MALFORMED, pos,
                      "HPACK: %s (nghttp2 %d) after block offset %zu; decoding goes on without "
                      "libnghttp2",
                      nghttp2_strerror(rv), rv, pos);
}

static int hp_ng_block(struct hpack_dec *d, const uint8_t *p, size_t n, hpack_emit_fn fn, void *arg,
                       struct hpack_result *res, struct sf_err *err)
{
    struct sf_rd rd;
    size_t start = 0, list = 0;
    unsigned emitted = 0;
    int rc = 0;

    sf_rd_init(&rd, p, n, 0);
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(d->ng, &nv, &fl, rd.p, sf_rd_left(&rd), 1);

        if (rv < 0) {
            /* nghttp2 cannot go on with this connection (its inflater is poisoned):
             * report, then decode the block again with the tolerant decoder, which
             * knows no table; fields already emitted are skipped. */
            return hp_ng_fallback(d, p, n, sf_rd_off(&rd), emitted, list, (int)rv, fn, arg, res,
                                  err);
        }
        start = sf_rd_off(&rd);
        sf_rd_skip(&rd, (size_t)rv); /* nghttp2 consumed rv of the bytes it was given */
        if (fl & NGHTTP2_HD_INFLATE_EMIT) {
            struct hpack_field f = {(const char *)nv.name, nv.namelen, nv.value, nv.valuelen,
                                    (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) ? HPACK_F_NEVER_INDEXED
                                                                          : 0u};
            size_t sz = nv.namelen + nv.valuelen;

            emitted++;
            list += sz + HP_ENTRY_OVERHEAD;
            if (sz > d->lim.max_field) {
                res->errors++;
                if (rc == 0)
                    rc = sf_err_set(err, SF_E_LIMIT, start,
                                    "HPACK: field of %zu bytes exceeds the %zu-byte cap "
                                    "at block offset %zu",
                                    sz, d->lim.max_field, start);
                f.flags |= HPACK_F_VALUE_UNKNOWN;
                f.vlen = 0;
            }
            if (list > d->lim.max_list && !res->capped) {
                res->errors++;
                res->capped = 1;
                if (rc == 0)
                    rc = sf_err_set(err, SF_E_LIMIT, start,
                                    "HPACK: header list exceeds the %zu-byte cap (not "
                                    "followed) at block offset %zu",
                                    d->lim.max_list, start);
            }
            if (!res->capped) {
                res->fields++;
                if (f.flags & HPACK_F_VALUE_UNKNOWN)
                    res->unknown++;
                if (fn)
                    fn(arg, &f);
            }
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(d->ng);
            break;
        }
        if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && sf_rd_left(&rd) == 0)
            break;
    }
    return rc;
}

int hpack_dec_block(struct hpack_dec *d, const uint8_t *p, size_t n, hpack_emit_fn fn, void *arg,
                    struct hpack_result *res, struct sf_err *err)
{
    struct hpack_result dummy;

    if (res == NULL)
        res = &dummy;
    memset(res, 0, sizeof(*res));
    if (d->ng)
        return hp_ng_block(d, p, n, fn, arg, res, err);
    return hp_own_block(d, p, n, 0, 0, 0, fn, arg, res, err);
}

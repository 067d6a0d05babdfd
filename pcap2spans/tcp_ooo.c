/* tcp_ooo.c - out-of-order bytes of one TCP direction, waiting for a hole to fill.
 *
 * Reference: RFC 9293 section 3.10.7.4 (segments beyond RCV.NXT are held until the
 * sequence space before them is filled).
 *
 * The bytes after the next expected sequence number (base) are kept in pages of
 * OOO_PAGE bytes of sequence space, found by page number in a ring of slots:
 *
 *   base                         base + span
 *    |  hole  |#####|  |##|#|      |
 *    [ page k ][ page k+1 ][ page k+2 ] ...   slot[(seq >> 11) & mask]
 *
 * Each page holds its bytes in place (data at seq & 2047), a bitmap of the bytes it has,
 * and the pieces that brought them: (offset, length, capture time), sorted by offset and
 * non-overlapping, so that bytes go to the parser with the time of the segment that
 * carried them.  A new segment only adds the bytes the bitmap lacks (the first copy of a
 * byte wins).  Costs: adding a segment is O(its bytes + log pieces) plus a move of the
 * pieces after it within one page; taking the next piece is O(1); memory is the pages
 * (1.13 x the bytes of a full page) plus 16 bytes per piece and the slot array (8 bytes
 * per page of span), all freed when the direction holds nothing.  Callers bound the
 * span (bytes after base) and the number of pieces; a sparse window costs at most one
 * page per piece.
 */
#include "tcp_ooo.h"

#include <stdlib.h>
#include <string.h>

#define OOO_PAGE_BITS 11
#define OOO_PAGE      (1u << OOO_PAGE_BITS)
#define PNO_MASK      ((1u << (32 - OOO_PAGE_BITS)) - 1) /* page numbers wrap with seq */

struct ooo_piece {
    int64_t ts;
    uint16_t off, len; /* within the page; len <= OOO_PAGE - off */
};

struct ooo_page {
    uint32_t no;           /* seq >> OOO_PAGE_BITS */
    uint32_t head, n, cap; /* pieces[head .. n) are live */
    struct ooo_piece *pieces;
    uint64_t have[OOO_PAGE / 64];
    uint8_t data[OOO_PAGE];
};

static uint32_t pno(uint32_t seq)
{
    return seq >> OOO_PAGE_BITS;
}

static uint32_t pdist(uint32_t a, uint32_t b) /* pages from b up to a, modulo the wrap */
{
    return (a - b) & PNO_MASK;
}

static struct ooo_page **slot_of(struct tcp_ooo *o, uint32_t no)
{
    return &o->slot[no & (o->nslots - 1)];
}

static void page_free(struct ooo_page *pg)
{
    if (pg) {
        free(pg->pieces);
        free(pg);
    }
}

/* The page that tcp_ooo_take handed out last is only freed on the next call. */
static void release_retired(struct tcp_ooo *o)
{
    page_free(o->retired);
    o->retired = NULL;
}

/* Drop a page and what it still holds. */
static void page_drop(struct tcp_ooo *o, struct ooo_page **sp)
{
    struct ooo_page *pg = *sp;

    for (uint32_t i = pg->head; i < pg->n; i++)
        o->bytes -= pg->pieces[i].len;
    o->pieces -= pg->n - pg->head;
    *sp = NULL;
    page_free(pg);
}

void tcp_ooo_free(struct tcp_ooo *o)
{
    release_retired(o);
    for (uint32_t i = 0; o->slot && i < o->nslots; i++)
        if (o->slot[i])
            page_drop(o, &o->slot[i]);
    free(o->slot);
    memset(o, 0, sizeof(*o));
}

/* Forget every page below base's page (their bytes were delivered or given up). */
static void advance(struct tcp_ooo *o, uint32_t base)
{
    uint32_t to = pno(base), d = pdist(to, o->low);

    if (o->slot == NULL) {
        o->low = to;
        return;
    }
    if (d >= o->nslots) {
        tcp_ooo_free(o);
        o->low = to;
        return;
    }
    for (uint32_t p = o->low; p != to; p = (p + 1) & PNO_MASK) {
        struct ooo_page **sp = slot_of(o, p);
        if (*sp)
            page_drop(o, sp);
    }
    o->low = to;
}

/* Slots for a window of span bytes after any base within the first page. */
static int ensure_slots(struct tcp_ooo *o, size_t span)
{
    size_t need = span / OOO_PAGE + 2, n = 1;

    if (o->slot)
        return 0;
    while (n < need)
        n <<= 1;
    if ((o->slot = calloc(n, sizeof(*o->slot))) == NULL)
        return -1;
    o->nslots = (uint32_t)n;
    return 0;
}

static struct ooo_page *page_get(struct tcp_ooo *o, uint32_t no)
{
    struct ooo_page **sp = slot_of(o, no), *pg = *sp;

    if (pg)
        return pg;
    if ((pg = malloc(sizeof(*pg))) == NULL)
        return NULL;
    pg->no = no;
    pg->head = pg->n = pg->cap = 0;
    pg->pieces = NULL;
    memset(pg->have, 0, sizeof(pg->have));
    *sp = pg;
    return pg;
}

/* Record the piece [off, off+len) of a page, keeping pieces sorted by offset. */
static int piece_add(struct tcp_ooo *o, struct ooo_page *pg, uint32_t off, uint32_t len, int64_t ts)
{
    uint32_t lo = pg->head, hi = pg->n;

    if (pg->n == pg->cap) {
        uint32_t cap = pg->cap ? pg->cap * 2 : 4;
        struct ooo_piece *np;
        if (pg->head > pg->n / 2) { /* mostly taken already: reuse the front first */
            memmove(pg->pieces, pg->pieces + pg->head, (pg->n - pg->head) * sizeof(*np));
            pg->n -= pg->head;
            pg->head = 0;
            lo = 0;
            hi = pg->n;
        } else {
            if ((np = realloc(pg->pieces, cap * sizeof(*np))) == NULL)
                return -1;
            pg->pieces = np;
            pg->cap = cap;
        }
    }
    while (lo < hi) { /* first piece at or after off */
        uint32_t mid = lo + (hi - lo) / 2;
        if (pg->pieces[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(pg->pieces + lo + 1, pg->pieces + lo, (pg->n - lo) * sizeof(*pg->pieces));
    pg->pieces[lo].ts = ts;
    pg->pieces[lo].off = (uint16_t)off;
    pg->pieces[lo].len = (uint16_t)len;
    pg->n++;
    o->pieces++;
    o->bytes += len;
    return 0;
}

static int have(const struct ooo_page *pg, uint32_t i)
{
    return (int)(pg->have[i / 64] >> (i % 64)) & 1;
}

/* Add the bytes of one page the page lacks, as pieces. */
static int page_fill(struct tcp_ooo *o, struct ooo_page *pg, uint32_t off, const uint8_t *p,
                     uint32_t k, int64_t ts)
{
    uint32_t i = off, end = off + k;

    while (i < end) {
        uint32_t a;
        while (i < end && have(pg, i))
            i++;
        for (a = i; i < end && !have(pg, i); i++)
            pg->have[i / 64] |= UINT64_C(1) << (i % 64);
        if (i > a) {
            memcpy(pg->data + a, p + (a - off), i - a);
            if (piece_add(o, pg, a, i - a, ts) < 0) {
                for (uint32_t j = a; j < i; j++)
                    pg->have[j / 64] &= ~(UINT64_C(1) << (j % 64));
                return -1;
            }
        }
    }
    return 0;
}

int tcp_ooo_add(struct tcp_ooo *o, uint32_t base, uint32_t seq, const uint8_t *p, size_t n,
                int64_t ts, size_t span)
{
    size_t i = 0;

    release_retired(o);
    if (o->bytes == 0)
        tcp_ooo_free(o);
    advance(o, base);
    if (ensure_slots(o, span) < 0)
        return -1;
    while (i < n) {
        uint32_t s = seq + (uint32_t)i, off = s & (OOO_PAGE - 1);
        uint32_t k = n - i < OOO_PAGE - off ? (uint32_t)(n - i) : OOO_PAGE - off;
        struct ooo_page *pg = page_get(o, pno(s));

        if (pg == NULL || page_fill(o, pg, off, p + i, k, ts) < 0)
            return -1;
        if (pg->head == pg->n) { /* nothing new in a new page */
            *slot_of(o, pg->no) = NULL;
            page_free(pg);
        }
        i += k;
    }
    return 0;
}

uint32_t tcp_ooo_first(struct tcp_ooo *o, uint32_t base, int64_t *ts)
{
    advance(o, base);
    for (uint32_t d = 0; o->slot && d < o->nslots; d++) {
        struct ooo_page *pg = *slot_of(o, (o->low + d) & PNO_MASK);
        if (pg && pg->head < pg->n) {
            uint32_t s = pg->no << OOO_PAGE_BITS | pg->pieces[pg->head].off;
            *ts = pg->pieces[pg->head].ts;
            return (int32_t)(s - base) > 0 ? s : base;
        }
    }
    return base;
}

const uint8_t *tcp_ooo_take(struct tcp_ooo *o, uint32_t seq, size_t *len, int64_t *ts)
{
    struct ooo_page **sp, *pg;
    uint32_t off = seq & (OOO_PAGE - 1);

    release_retired(o);
    if (o->bytes == 0)
        return NULL;
    advance(o, seq);
    if (o->slot == NULL) /* seq jumped past everything held */
        return NULL;
    sp = slot_of(o, pno(seq));
    if ((pg = *sp) == NULL)
        return NULL;
    for (; pg->head < pg->n; pg->head++) {
        struct ooo_piece *x = &pg->pieces[pg->head];
        uint32_t e = (uint32_t)x->off + x->len;

        o->pieces--;
        o->bytes -= x->len;
        if (e <= off)
            continue;       /* delivered in order meanwhile: a duplicate */
        if (x->off > off) { /* a hole at seq: the piece stays */
            o->pieces++;
            o->bytes += x->len;
            return NULL;
        }
        *len = e - off;
        *ts = x->ts;
        pg->head++;
        if (pg->head == pg->n) { /* the page is done; freed at the next call */
            *sp = NULL;
            o->retired = pg;
        }
        if (o->bytes == 0) { /* nothing held: give back the slots, keep the page */
            o->retired = NULL;
            tcp_ooo_free(o);
            o->retired = pg->head == pg->n ? pg : NULL;
        }
        return pg->data + off;
    }
    *sp = NULL;
    page_free(pg);
    return NULL;
}

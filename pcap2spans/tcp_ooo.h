/* tcp_ooo.h - the out-of-order bytes of one TCP direction (tcp_ooo.c): added by
 * sequence number, the first copy of a byte winning, and taken back in order piece by
 * piece with the capture time of the segment that carried each piece. */
#ifndef TCP_OOO_H
#define TCP_OOO_H

#include <stddef.h>
#include <stdint.h>

struct ooo_page;

/* Zero-initialised it is empty; tcp_ooo_free empties it again. */
struct tcp_ooo {
    struct ooo_page **slot;   /* ring of pages, nslots (a power of two) */
    uint32_t nslots, low;     /* page numbers low .. low + nslots - 1 may be held */
    size_t bytes, pieces;     /* held bytes and the pieces (segment parts) they came in */
    struct ooo_page *retired; /* the page of the last tcp_ooo_take, freed at the next call */
};

/* Hold [seq, seq+n), which lies after base (the next byte expected) and ends at most span
 * bytes after it, minus the bytes already held.  Returns 0, or -1 on no memory (the
 * bytes added before the failure stay). */
int tcp_ooo_add(struct tcp_ooo *o, uint32_t base, uint32_t seq, const uint8_t *p, size_t n,
                int64_t ts, size_t span);

/* The first held byte's sequence number after base, and in *ts the capture time of its
 * piece (base and *ts unchanged when nothing is held). */
uint32_t tcp_ooo_first(struct tcp_ooo *o, uint32_t base, int64_t *ts);

/* The held bytes starting at seq, the next byte expected, up to the end of their piece:
 * a pointer valid until the next call on o, *len and the piece's capture time *ts.  NULL
 * when seq is not held.  Held bytes before seq are dropped (they arrived in order
 * meanwhile). */
const uint8_t *tcp_ooo_take(struct tcp_ooo *o, uint32_t seq, size_t *len, int64_t *ts);

/* Drop everything held and free the memory. */
void tcp_ooo_free(struct tcp_ooo *o);

#endif

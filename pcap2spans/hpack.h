/* hpack.h - HPACK header block decoding (RFC 7541) for one direction of an HTTP/2
 * connection, tolerant of captures that start mid-connection.
 *
 * Two decoders behind one interface:
 *  - libnghttp2's inflater (nghttp2_hd_inflate_hd2, Debian 12's 1.52) while the
 *    dynamic table is known, i.e. the connection was seen from its preface;
 *  - an own decoder for everything else.  It is a complete HPACK decoder while it
 *    knows the table ("synced"), and a tolerant one while it does not: static
 *    references and literals are always decoded (Huffman included), references to
 *    dynamic entries it never saw come out as "<unknown:IDX>" placeholders flagged
 *    HPACK_F_*_UNKNOWN, and parsing goes on (representations are self-delimiting).
 *
 * Tolerant table model.  Entries inserted since the decoder lost track are the
 * newest, so they occupy indices 62.. in order and are evicted last: index 62+j
 * is known whenever j < entries tracked, whatever the (unknown) older contents and
 * the exact table size.  The table is known again ("synced") after a size update
 * to 0, or when the tracked entries fill the table so that no older entry can
 * remain (tracked size + 32 > the size bound from a size update or SETTINGS).
 *
 * When nghttp2 fails on a block (bad index, bad Huffman, -523 ...), the error is
 * reported and the own decoder takes over nghttp2's table (still right: nghttp2
 * inserts only what it decoded) and goes on from the failing representation, so no
 * field is emitted twice; the direction stays on the own decoder from then on.  A
 * bad index makes the own decoder drop the table and go tolerant.  Nothing is given
 * up.
 *
 * Caps (struct hpack_limits): one decoded field (name + value), the decoded header
 * list (RFC 9113 size: name + value + 32 per field; an HPACK bomb stops emitting at
 * the cap but the block is still walked so that the table stays in step), and the
 * dynamic table (a size update beyond it cannot be followed: the table becomes
 * unknown).  Every error names the byte offset in the block.
 */
#ifndef HPACK_H
#define HPACK_H

#include <stddef.h>
#include <stdint.h>

#include "hpack_huff.h"
#include "sf_err.h"
#include "sf_rd.h"

struct hpack_limits {
    size_t max_field; /* one decoded field, name + value bytes */
    size_t max_list;  /* decoded header list, sum of name + value + 32 */
    size_t max_table; /* largest dynamic table size followed */
};

/* Flags of an emitted field. */
#define HPACK_F_NAME_UNKNOWN  0x1 /* name is a "<unknown:IDX>" placeholder */
#define HPACK_F_VALUE_UNKNOWN 0x2 /* value unknown (unresolved, bad Huffman, over cap): "" */
#define HPACK_F_NEVER_INDEXED 0x4 /* literal never indexed (sensitive) */

struct hpack_field {
    const char *name; /* not NUL-terminated; valid during the callback only */
    size_t nlen;
    const uint8_t *value; /* not NUL-terminated; may hold any byte (true-binary -bin) */
    size_t vlen;
    unsigned flags; /* HPACK_F_* */
};

typedef void (*hpack_emit_fn)(void *arg, const struct hpack_field *f);

/* What decoding one block gave. */
struct hpack_result {
    unsigned fields;  /* fields emitted */
    unsigned unknown; /* of which with an unknown name or value */
    int tolerant;     /* decoded without full knowledge of the table */
    int capped;       /* the header list passed max_list: later fields not emitted */
    int errors;       /* errors met (the first is returned) */
};

struct hpack_dec;

/* A decoder for one direction.  table_known: the connection is seen from its start
 * (empty table, size 4096, SETTINGS default); use_nghttp2: decode with libnghttp2
 * while that holds.  Returns NULL on allocation failure. */
struct hpack_dec *hpack_dec_new(const struct hpack_limits *lim, int table_known, int use_nghttp2);

/* Free a decoder (NULL is fine). */
void hpack_dec_free(struct hpack_dec *d);

/* The receiver's SETTINGS_HEADER_TABLE_SIZE was acknowledged: it bounds this
 * encoder from the next block on (a smaller value than the current size means the
 * next block must start with a size update). */
void hpack_dec_set_bound(struct hpack_dec *d, uint32_t settings_value);

/* Blocks were lost (capture gap, abandoned block): forget the table and continue
 * in tolerant mode. */
void hpack_dec_lost(struct hpack_dec *d);

/* 1 if the table is fully known (nghttp2, or own decoder synced). */
int hpack_dec_synced(const struct hpack_dec *d);

/* 1 while libnghttp2 does the decoding. */
int hpack_dec_uses_nghttp2(const struct hpack_dec *d);

/* Decode one complete header block, calling fn for each field in order.  Returns 0,
 * or the first error (SF_E_MALFORMED, SF_E_TRUNC, SF_E_LIMIT) with err->off the
 * offset in the block and a message "HPACK: ..."; the decoder stays usable and
 * fields before and (where the block allows) after the error are still emitted.
 * res may be NULL. */
int hpack_dec_block(struct hpack_dec *d, const uint8_t *p, size_t n, hpack_emit_fn fn, void *arg,
                    struct hpack_result *res, struct sf_err *err);

/* Read an HPACK integer with an N-bit prefix (1..8), the prefix in the low bits of the
 * reader's next byte (section 5.1), advancing past it.  Returns 0, SF_E_TRUNC (the
 * reader's err is then set), or SF_E_MALFORMED when it does not fit in 32 bits. */
int hpack_int_read(struct sf_rd *rd, int prefix, uint32_t *v);

/* Static table entry 1..61 (RFC 7541 Appendix A); 0 if idx is out of range. */
int hpack_static(uint32_t idx, const char **name, const char **value);

#endif

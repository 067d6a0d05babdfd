/* Fuzz target: HPACK decoding (hpack.c), with a differential check against libnghttp2.
 *
 * Input: one control byte, then records of a 2-byte big-endian word W: W & 0x8000 means
 * "the receiver's SETTINGS_HEADER_TABLE_SIZE is ACKed with value (W & 0x7fff) * 2";
 * otherwise W bytes of header block follow (the last record may be short).  The same
 * blocks go to three decoders: libnghttp2, the own decoder from a known table, and the
 * own decoder in tolerant (mid-connection) mode with small caps (control bit 0 picks
 * which caps).  While neither the nghttp2 nor the known own decoder reports an error,
 * both must emit exactly the same fields; any difference aborts.  The whole input is
 * also Huffman-decoded, and a successful decode must survive re-encoding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../pcap2spans/hpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LOGMAX 8192

struct log {
    uint8_t b[LOGMAX];
    size_t n;
    int over;
};

static void logf_(void *arg, const struct hpack_field *f)
{
    struct log *l = arg;
    size_t need = f->nlen + f->vlen + 9;

    if (l->over || l->n + need > LOGMAX) {
        l->over = 1;
        return;
    }
    memcpy(l->b + l->n, &f->nlen, 4);
    memcpy(l->b + l->n + 4, f->name, f->nlen);
    l->n += 4 + f->nlen;
    memcpy(l->b + l->n, &f->vlen, 4);
    memcpy(l->b + l->n + 4, f->value, f->vlen);
    l->n += 4 + f->vlen;
    l->b[l->n++] = (uint8_t)(f->flags & ~HPACK_F_NEVER_INDEXED);
}

static void huffman(const uint8_t *data, size_t size)
{
    static uint8_t out[4096], enc[16384], back[4096];
    size_t olen, blen, e;

    if (size > 1024)
        return;
    if (hpack_huff_decode(out, sizeof(out), data, size, &olen) != 0)
        return;
    e = hpack_huff_encode(enc, sizeof(enc), out, olen);
    if (e == 0 && olen > 0)
        abort();
    if (hpack_huff_decode(back, sizeof(back), enc, e, &blen) != 0 || blen != olen ||
        memcmp(back, out, olen) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hpack_limits big = {65536, 1 << 20, 65536};
    struct hpack_limits small = {64, 512, 256};
    struct hpack_dec *ng, *own, *tol;
    struct log *a, *b;
    int diverged = 0;

    if (size < 1 || size > 65536)
        return 0;
    huffman(data, size);
    a = calloc(1, sizeof(*a));
    b = calloc(1, sizeof(*b));
    ng = hpack_dec_new(&big, 1, 1);
    own = hpack_dec_new(&big, 1, 0);
    tol = hpack_dec_new((data[0] & 1) ? &small : &big, 0, 0);
    data++;
    size--;
    while (a && b && ng && own && tol && size >= 2) {
        unsigned w = (unsigned)data[0] << 8 | data[1];
        size_t n;
        struct sf_err e1, e2, e3;
        struct hpack_result r1, r2;
        int rc1, rc2;

        data += 2;
        size -= 2;
        if (w & 0x8000) {
            uint32_t v = (w & 0x7fff) * 2;

            hpack_dec_set_bound(ng, v);
            hpack_dec_set_bound(own, v);
            hpack_dec_set_bound(tol, v);
            continue;
        }
        n = w < size ? w : size;
        a->n = b->n = 0;
        a->over = b->over = 0;
        sf_err_clear(&e1);
        sf_err_clear(&e2);
        sf_err_clear(&e3);
        rc1 = hpack_dec_block(ng, data, n, logf_, a, &r1, &e1);
        rc2 = hpack_dec_block(own, data, n, logf_, b, &r2, &e2);
        hpack_dec_block(tol, data, n, NULL, NULL, NULL, &e3);
        if (rc1 != 0 || rc2 != 0 || !hpack_dec_uses_nghttp2(ng))
            diverged = 1; /* after an error the two may rightly differ */
        if (!diverged && (a->n != b->n || memcmp(a->b, b->b, a->n) != 0 || r1.fields != r2.fields))
            abort();
        data += n;
        size -= n;
    }
    hpack_dec_free(ng);
    hpack_dec_free(own);
    hpack_dec_free(tol);
    free(a);
    free(b);
    return 0;
}

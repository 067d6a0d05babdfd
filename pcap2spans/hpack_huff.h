/* hpack_huff.h - HPACK's Huffman code (RFC 7541 Appendix B): the canonical code of
 * 257 symbols (256 = EOS) that string literals may be coded in (section 5.2).  hpack.c
 * decodes string literals with it; the encoder makes test and fuzz inputs.
 */
#ifndef HPACK_HUFF_H
#define HPACK_HUFF_H

#include <stddef.h>
#include <stdint.h>

/* Huffman-decode in[0..n) (RFC 7541 Appendix B) into out (at most outsz bytes
 * stored).  *outlen gets the full decoded length even when it exceeds outsz (then
 * SF_E_LIMIT is returned and out holds the first outsz bytes).  Returns 0 or
 * SF_E_MALFORMED (EOS symbol, padding longer than 7 bits or not all ones). */
int hpack_huff_decode(uint8_t *out, size_t outsz, const uint8_t *in, size_t n, size_t *outlen);

/* Huffman-encode in[0..n) into out; returns the encoded length, or 0 if it does not
 * fit in outsz (for tests and fuzz seeds). */
size_t hpack_huff_encode(uint8_t *out, size_t outsz, const uint8_t *in, size_t n);

/* Check the derived decoding tables against the RFC table (tests): 0 or -1. */
int hpack_huff_selftest(void);

#endif

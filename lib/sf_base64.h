/* sf_base64.h - base64, standard alphabet (RFC 4648 section 4), and decoding of
 * base64url (section 5).
 *
 * gRPC -bin metadata is base64 and implementations MUST accept padded and unpadded
 * forms (grpc/grpc doc/PROTOCOL-HTTP2.md); the decoder accepts both.  HTTP/2's
 * HTTP2-Settings header is base64url with the padding omitted (RFC 7540 3.2.1).
 */
#ifndef SF_BASE64_H
#define SF_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Bytes needed to decode n characters (an upper bound). */
#define SF_BASE64_DECODED_MAX(n) (((n) + 3) / 4 * 3)
/* Characters (without NUL) to encode n bytes with padding. */
#define SF_BASE64_ENCODED_LEN(n) (((n) + 2) / 3 * 4)

/* Decode s[0..n), padded or unpadded, into out (outsz bytes).  Returns the number of
 * bytes written, or SF_E_MALFORMED (bad character, misplaced '=', impossible length,
 * non-zero trailing bits) or SF_E_LIMIT (out too small). */
long sf_base64_decode(uint8_t *out, size_t outsz, const char *s, size_t n);

/* The same for base64url: '-' and '_' instead of '+' and '/' (which are then bad
 * characters); padded or unpadded, same errors. */
long sf_base64url_decode(uint8_t *out, size_t outsz, const char *s, size_t n);

/* Encode n bytes with padding into out (SF_BASE64_ENCODED_LEN(n)+1 bytes) and
 * NUL-terminate.  Returns the length written; `pad` 0 omits '=' padding. */
size_t sf_base64_encode(char *out, const uint8_t *in, size_t n, int pad);

#endif

/* sf_hex.h - hexadecimal encoding and checks for ids. */
#ifndef SF_HEX_H
#define SF_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Write 2*n lowercase hex digits of in[0..n) to out and a terminating NUL
 * (out must hold 2*n+1 bytes). */
void sf_hex_encode(char *out, const uint8_t *in, size_t n);

/* The 16 lowercase hex digits of x, most significant first, and a NUL (out holds 17):
 * sf_hex_encode of its 8 big-endian bytes. */
void sf_hex_u64_encode(char *out, uint64_t x);

/* Decode 2*n hex digits (either case) into n bytes.  Returns 0, or SF_E_MALFORMED
 * if hexlen is odd or a non-hex character is present (out is then undefined). */
int sf_hex_decode(uint8_t *out, const char *hex, size_t hexlen);

/* Value of one hex digit, or -1. */
static inline int sf_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 1 if s[0..n) is all lowercase hex digits (W3C HEXDIGLC), else 0. */
int sf_hex_is_lower(const char *s, size_t n);

/* 1 if s[0..n) is all '0' characters (an all-zero id), else 0. */
int sf_hex_is_zero(const char *s, size_t n);

/* Copy s[0..n) (n <= width) into out, lowercased, left-padded with '0' to width
 * digits, NUL-terminated (out holds width+1).  Returns 0, or SF_E_MALFORMED for a
 * non-hex character or n > width. */
int sf_hex_pad_lower(char *out, size_t width, const char *s, size_t n);

/* Parse up to 16 hex digits into *v.  Returns 0 or SF_E_MALFORMED. */
int sf_hex_u64(const char *s, size_t n, uint64_t *v);

#endif

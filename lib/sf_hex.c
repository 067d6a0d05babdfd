/* sf_hex.c - hexadecimal helpers (see sf_hex.h). */
#include "sf_hex.h"

#include <string.h>

#include "sf_err.h"
#include "sf_vec.h"

static const char digits[] = "0123456789abcdef";

/* The 8 hex digits of x at out (no NUL), the most significant first: each nibble spread
 * to a byte, then '0' added, and 'a' - '0' - 10 more where the nibble is over 9. */
static void hex32(char *out, uint32_t x)
{
    uint64_t v = x, m;

    v = (v | v << 16) & UINT64_C(0x0000ffff0000ffff);
    v = (v | v << 8) & UINT64_C(0x00ff00ff00ff00ff);
    v = (v | v << 4) & (SF_ONES * 0x0f);       /* nibble k of x in byte k of v */
    m = ((v + SF_ONES * 0x06) >> 4) & SF_ONES; /* 1 in the bytes of digits a-f */
    v += SF_ONES * '0' + m * ('a' - '0' - 10);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v); /* the top nibble goes first in memory */
#endif
    memcpy(out, &v, 8);
}

void sf_hex_encode(char *out, const uint8_t *in, size_t n)
{
    size_t i = 0;

    for (; i + 4 <= n; i += 4) /* 4 bytes, 8 digits per step */
        hex32(out + 2 * i, (uint32_t)in[i] << 24 | (uint32_t)in[i + 1] << 16 |
                               (uint32_t)in[i + 2] << 8 | in[i + 3]);
    for (; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = 0;
}

void sf_hex_u64_encode(char *out, uint64_t x)
{
    hex32(out, (uint32_t)(x >> 32));
    hex32(out + 8, (uint32_t)x);
    out[16] = 0;
}

int sf_hex_decode(uint8_t *out, const char *hex, size_t hexlen)
{
    if (hexlen % 2)
        return SF_E_MALFORMED;
    for (size_t i = 0; i < hexlen; i += 2) {
        int hi = sf_hex_digit((unsigned char)hex[i]);
        int lo = sf_hex_digit((unsigned char)hex[i + 1]);
        if (hi < 0 || lo < 0)
            return SF_E_MALFORMED;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int sf_hex_is_lower(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int sf_hex_is_zero(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return 0;
    return 1;
}

int sf_hex_pad_lower(char *out, size_t width, const char *s, size_t n)
{
    size_t pad;

    if (n > width)
        return SF_E_MALFORMED;
    pad = width - n;
    for (size_t i = 0; i < pad; i++)
        out[i] = '0';
    for (size_t i = 0; i < n; i++) {
        int d = sf_hex_digit((unsigned char)s[i]);
        if (d < 0)
            return SF_E_MALFORMED;
        out[pad + i] = digits[d];
    }
    out[width] = 0;
    return 0;
}

int sf_hex_u64(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;

    if (n == 0 || n > 16)
        return SF_E_MALFORMED;
    for (size_t i = 0; i < n; i++) {
        int d = sf_hex_digit((unsigned char)s[i]);
        if (d < 0)
            return SF_E_MALFORMED;
        x = x << 4 | (uint64_t)d;
    }
    *v = x;
    return 0;
}

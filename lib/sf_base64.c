/* sf_base64.c - RFC 4648 base64 and base64url (see sf_base64.h). */
#include "sf_base64.h"

#include "sf_err.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of each byte in the standard alphabet and in the URL-safe one (section 5,
 * '-' and '_' where the standard one has '+' and '/'); 0xff for bytes outside it. */
#define B64V(c, url)                                                                               \
    ((c) >= 'A' && (c) <= 'Z'     ? (c) - 'A'                                                      \
     : (c) >= 'a' && (c) <= 'z'   ? (c) - 'a' + 26                                                 \
     : (c) >= '0' && (c) <= '9'   ? (c) - '0' + 52                                                 \
     : (c) == ((url) ? '-' : '+') ? 62                                                             \
     : (c) == ((url) ? '_' : '/') ? 63                                                             \
                                  : 0xff)
#define B64V4(c, u)  B64V(c, u), B64V(c + 1, u), B64V(c + 2, u), B64V(c + 3, u)
#define B64V16(c, u) B64V4(c, u), B64V4(c + 4, u), B64V4(c + 8, u), B64V4(c + 12, u)
#define B64V64(c, u) B64V16(c, u), B64V16(c + 16, u), B64V16(c + 32, u), B64V16(c + 48, u)
static const uint8_t b64_std[256] = {B64V64(0, 0), B64V64(64, 0), B64V64(128, 0), B64V64(192, 0)};
static const uint8_t b64_url[256] = {B64V64(0, 1), B64V64(64, 1), B64V64(128, 1), B64V64(192, 1)};

static long decode(uint8_t *out, size_t outsz, const char *s, size_t n, const uint8_t *val)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t pad = 0, o = 0, full, i;
    uint32_t a, b, c, d;

    /* Padding may only appear as one or two '=' at the end of a 4-aligned input. */
    while (n > 0 && s[n - 1] == '=' && pad < 2) {
        n--;
        pad++;
    }
    if (pad && (n + pad) % 4)
        return SF_E_MALFORMED;
    if (n % 4 == 1)
        return SF_E_MALFORMED;
    full = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (full > outsz)
        return SF_E_LIMIT;
    for (i = 0; i + 4 <= n; i += 4) { /* 4 characters, 3 bytes */
        a = val[u[i]], b = val[u[i + 1]], c = val[u[i + 2]], d = val[u[i + 3]];
        if ((a | b | c | d) & 0x80)
            return SF_E_MALFORMED;
        out[o++] = (uint8_t)(a << 2 | b >> 4);
        out[o++] = (uint8_t)(b << 4 | c >> 2);
        out[o++] = (uint8_t)(c << 6 | d);
    }
    /* 2 or 3 characters left: 1 or 2 bytes, and the unused low bits of the last
     * character must be zero (canonical form). */
    if (n - i >= 2) {
        a = val[u[i]], b = val[u[i + 1]], c = n - i == 3 ? val[u[i + 2]] : 0;
        if ((a | b | c) & 0x80)
            return SF_E_MALFORMED;
        out[o++] = (uint8_t)(a << 2 | b >> 4);
        if (n - i == 3) {
            out[o++] = (uint8_t)(b << 4 | c >> 2);
            if (c & 3)
                return SF_E_MALFORMED;
        } else if (b & 15) {
            return SF_E_MALFORMED;
        }
    }
    return (long)o;
}

long sf_base64_decode(uint8_t *out, size_t outsz, const char *s, size_t n)
{
    return decode(out, outsz, s, n, b64_std);
}

long sf_base64url_decode(uint8_t *out, size_t outsz, const char *s, size_t n)
{
    return decode(out, outsz, s, n, b64_url);
}

size_t sf_base64_encode(char *out, const uint8_t *in, size_t n, int pad)
{
    size_t o = 0, i;

    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = alphabet[(v >> 6) & 63];
        else if (pad)
            out[o++] = '=';
        if (pad)
            out[o++] = '=';
    }
    out[o] = 0;
    return o;
}

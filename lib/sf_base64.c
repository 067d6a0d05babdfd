/* sf_base64.c - RFC 4648 base64 and base64url (see sf_base64.h). */
#include "sf_base64.h"

#include "sf_err.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of character c, or -1; `url` selects the URL-safe alphabet (section 5),
 * which has '-' and '_' where the standard one has '+' and '/'. */
static int b64val(int c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

static long decode(uint8_t *out, size_t outsz, const char *s, size_t n, int url)
{
    size_t pad = 0, o = 0, full;
    uint32_t acc = 0;
    int bits = 0;

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
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i], url);
        if (v < 0)
            return SF_E_MALFORMED;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    /* The unused low bits of the last character must be zero (canonical form). */
    if (bits && (acc & ((1u << bits) - 1)))
        return SF_E_MALFORMED;
    return (long)o;
}

long sf_base64_decode(uint8_t *out, size_t outsz, const char *s, size_t n)
{
    return decode(out, outsz, s, n, 0);
}

long sf_base64url_decode(uint8_t *out, size_t outsz, const char *s, size_t n)
{
    return decode(out, outsz, s, n, 1);
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

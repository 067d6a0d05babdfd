/* hpack_huff.c - HPACK's Huffman code (RFC 7541 Appendix B): the RFC's tables, the
 * tables derived from them (checked by hpack_huff_selftest), the decoder and the encoder.
 *
 *   canonical code: codes of one length are consecutive, and a longer code continues
 *   from the shorter ones shifted left; 5 to 30 bits a symbol; a string ends with up to
 *   7 bits of padding, the start of EOS (all ones)
 */
#include "hpack_huff.h"

#include "sf_err.h"

/* RFC 7541 Appendix B: code of each symbol (0..255, 256 = EOS), right-aligned. */
static const uint32_t hp_huff_code[257] = {
    0x1ff8,     0x7fffd8,  0xfffffe2,  0xfffffe3, 0xfffffe4, 0xfffffe5,  0xfffffe6,  0xfffffe7,
    0xfffffe8,  0xffffea,  0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb,  0xfffffec,
    0xfffffed,  0xfffffee, 0xfffffef,  0xffffff0, 0xffffff1, 0xffffff2,  0x3ffffffe, 0xffffff3,
    0xffffff4,  0xffffff5, 0xffffff6,  0xffffff7, 0xffffff8, 0xffffff9,  0xffffffa,  0xffffffb,
    0x14,       0x3f8,     0x3f9,      0xffa,     0x1ff9,    0x15,       0xf8,       0x7fa,
    0x3fa,      0x3fb,     0xf9,       0x7fb,     0xfa,      0x16,       0x17,       0x18,
    0x0,        0x1,       0x2,        0x19,      0x1a,      0x1b,       0x1c,       0x1d,
    0x1e,       0x1f,      0x5c,       0xfb,      0x7ffc,    0x20,       0xffb,      0x3fc,
    0x1ffa,     0x21,      0x5d,       0x5e,      0x5f,      0x60,       0x61,       0x62,
    0x63,       0x64,      0x65,       0x66,      0x67,      0x68,       0x69,       0x6a,
    0x6b,       0x6c,      0x6d,       0x6e,      0x6f,      0x70,       0x71,       0x72,
    0xfc,       0x73,      0xfd,       0x1ffb,    0x7fff0,   0x1ffc,     0x3ffc,     0x22,
    0x7ffd,     0x3,       0x23,       0x4,       0x24,      0x5,        0x25,       0x26,
    0x27,       0x6,       0x74,       0x75,      0x28,      0x29,       0x2a,       0x7,
    0x2b,       0x76,      0x2c,       0x8,       0x9,       0x2d,       0x77,       0x78,
    0x79,       0x7a,      0x7b,       0x7ffe,    0x7fc,     0x3ffd,     0x1ffd,     0xffffffc,
    0xfffe6,    0x3fffd2,  0xfffe7,    0xfffe8,   0x3fffd3,  0x3fffd4,   0x3fffd5,   0x7fffd9,
    0x3fffd6,   0x7fffda,  0x7fffdb,   0x7fffdc,  0x7fffdd,  0x7fffde,   0xffffeb,   0x7fffdf,
    0xffffec,   0xffffed,  0x3fffd7,   0x7fffe0,  0xffffee,  0x7fffe1,   0x7fffe2,   0x7fffe3,
    0x7fffe4,   0x1fffdc,  0x3fffd8,   0x7fffe5,  0x3fffd9,  0x7fffe6,   0x7fffe7,   0xffffef,
    0x3fffda,   0x1fffdd,  0xfffe9,    0x3fffdb,  0x3fffdc,  0x7fffe8,   0x7fffe9,   0x1fffde,
    0x7fffea,   0x3fffdd,  0x3fffde,   0xfffff0,  0x1fffdf,  0x3fffdf,   0x7fffeb,   0x7fffec,
    0x1fffe0,   0x1fffe1,  0x3fffe0,   0x1fffe2,  0x7fffed,  0x3fffe1,   0x7fffee,   0x7fffef,
    0xfffea,    0x3fffe2,  0x3fffe3,   0x3fffe4,  0x7ffff0,  0x3fffe5,   0x3fffe6,   0x7ffff1,
    0x3ffffe0,  0x3ffffe1, 0xfffeb,    0x7fff1,   0x3fffe7,  0x7ffff2,   0x3fffe8,   0x1ffffec,
    0x3ffffe2,  0x3ffffe3, 0x3ffffe4,  0x7ffffde, 0x7ffffdf, 0x3ffffe5,  0xfffff1,   0x1ffffed,
    0x7fff2,    0x1fffe3,  0x3ffffe6,  0x7ffffe0, 0x7ffffe1, 0x3ffffe7,  0x7ffffe2,  0xfffff2,
    0x1fffe4,   0x1fffe5,  0x3ffffe8,  0x3ffffe9, 0xffffffd, 0x7ffffe3,  0x7ffffe4,  0x7ffffe5,
    0xfffec,    0xfffff3,  0xfffed,    0x1fffe6,  0x3fffe9,  0x1fffe7,   0x1fffe8,   0x7ffff3,
    0x3fffea,   0x3fffeb,  0x1ffffee,  0x1ffffef, 0xfffff4,  0xfffff5,   0x3ffffea,  0x7ffff4,
    0x3ffffeb,  0x7ffffe6, 0x3ffffec,  0x3ffffed, 0x7ffffe7, 0x7ffffe8,  0x7ffffe9,  0x7ffffea,
    0x7ffffeb,  0xffffffe, 0x7ffffec,  0x7ffffed, 0x7ffffee, 0x7ffffef,  0x7fffff0,  0x3ffffee,
    0x3fffffff,
};

/* RFC 7541 Appendix B: code length in bits of each symbol. */
static const uint8_t hp_huff_bits[257] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6,  10, 10, 12, 13, 6,  8,  11, 10, 10, 8,  11, 8,  6,  6,  6,
    5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8,  15, 6,  12, 10, 13, 6,  7,  7,  7,  7,  7,  7,
    7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8,  13, 19, 13, 14, 6,
    15, 5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,  6,  7,  6,  5,  5,  6,  7,  7,
    7,  7,  7,  15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21,
    23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24,
    21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
};

/* Derived (the code is canonical): symbols in code order, and how many codes
 * have each length; hpack_huff_selftest() checks both against the tables above. */
static const uint16_t hp_huff_sym[257] = {
    48,  49,  50,  97,  99,  101, 105, 111, 115, 116, 32,  37,  45,  46,  47,  51,  52,  53,  54,
    55,  56,  57,  61,  65,  95,  98,  100, 102, 103, 104, 108, 109, 110, 112, 114, 117, 58,  66,
    67,  68,  69,  70,  71,  72,  73,  74,  75,  76,  77,  78,  79,  80,  81,  82,  83,  84,  85,
    86,  87,  89,  106, 107, 113, 118, 119, 120, 121, 122, 38,  42,  44,  59,  88,  90,  33,  34,
    40,  41,  63,  39,  43,  124, 35,  62,  0,   36,  64,  91,  93,  126, 94,  125, 60,  96,  123,
    92,  195, 208, 128, 130, 131, 162, 184, 194, 224, 226, 153, 161, 167, 172, 176, 177, 179, 209,
    216, 217, 227, 229, 230, 129, 132, 133, 134, 136, 146, 154, 156, 160, 163, 164, 169, 170, 173,
    178, 181, 185, 186, 187, 189, 190, 196, 198, 228, 232, 233, 1,   135, 137, 138, 139, 140, 141,
    143, 147, 149, 150, 151, 152, 155, 157, 158, 165, 166, 168, 174, 175, 180, 182, 183, 188, 191,
    197, 231, 239, 9,   142, 144, 145, 148, 159, 171, 206, 215, 225, 236, 237, 199, 207, 234, 235,
    192, 193, 200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255, 203, 204, 211, 212,
    214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254, 2,   3,   4,   5,
    6,   7,   8,   11,  12,  14,  15,  16,  17,  18,  19,  20,  21,  23,  24,  25,  26,  27,  28,
    29,  30,  31,  127, 220, 249, 10,  13,  22,  256,
};

static const uint16_t hp_huff_count[31] = {
    0, 0, 0, 0, 0, 10, 26, 32, 6,  0, 5,  3,  2,  6, 2, 3,
    0, 0, 0, 3, 8, 13, 26, 29, 12, 4, 15, 19, 29, 0, 4,
};

/* Derived too: the first code of each length, and where its symbol is in
 * hp_huff_sym. */
static const uint32_t hp_huff_first[31] = {
    0,        0,        0,        0,         0,         0,         20,         92,
    248,      508,      1016,     2042,      4090,      8184,      16380,      32764,
    65534,    131068,   262136,   524272,    1048550,   2097116,   4194258,    8388568,
    16777194, 33554412, 67108832, 134217694, 268435426, 536870910, 1073741820,
};

static const uint16_t hp_huff_offset[31] = {
    0,  0,  0,  0,  0,  0,   10,  36,  68,  74,  74,  79,  82,  84,  90,  92,
    95, 95, 95, 95, 98, 106, 119, 145, 174, 186, 190, 205, 224, 253, 253,
};

/* The symbols of codes up to 8 bits by the top 8 bits of the window: (length << 8) |
 * symbol, 0 where the code is longer (the window then starts with 11111110 or 11111111).
 * Derived from hp_huff_code and hp_huff_bits; hpack_huff_selftest checks every entry. */
static const uint16_t hp_huff_top8[256] = {
    0x0530, 0x0530, 0x0530, 0x0530, 0x0530, 0x0530, 0x0530, 0x0530, 0x0531, 0x0531, 0x0531, 0x0531,
    0x0531, 0x0531, 0x0531, 0x0531, 0x0532, 0x0532, 0x0532, 0x0532, 0x0532, 0x0532, 0x0532, 0x0532,
    0x0561, 0x0561, 0x0561, 0x0561, 0x0561, 0x0561, 0x0561, 0x0561, 0x0563, 0x0563, 0x0563, 0x0563,
    0x0563, 0x0563, 0x0563, 0x0563, 0x0565, 0x0565, 0x0565, 0x0565, 0x0565, 0x0565, 0x0565, 0x0565,
    0x0569, 0x0569, 0x0569, 0x0569, 0x0569, 0x0569, 0x0569, 0x0569, 0x056f, 0x056f, 0x056f, 0x056f,
    0x056f, 0x056f, 0x056f, 0x056f, 0x0573, 0x0573, 0x0573, 0x0573, 0x0573, 0x0573, 0x0573, 0x0573,
    0x0574, 0x0574, 0x0574, 0x0574, 0x0574, 0x0574, 0x0574, 0x0574, 0x0620, 0x0620, 0x0620, 0x0620,
    0x0625, 0x0625, 0x0625, 0x0625, 0x062d, 0x062d, 0x062d, 0x062d, 0x062e, 0x062e, 0x062e, 0x062e,
    0x062f, 0x062f, 0x062f, 0x062f, 0x0633, 0x0633, 0x0633, 0x0633, 0x0634, 0x0634, 0x0634, 0x0634,
    0x0635, 0x0635, 0x0635, 0x0635, 0x0636, 0x0636, 0x0636, 0x0636, 0x0637, 0x0637, 0x0637, 0x0637,
    0x0638, 0x0638, 0x0638, 0x0638, 0x0639, 0x0639, 0x0639, 0x0639, 0x063d, 0x063d, 0x063d, 0x063d,
    0x0641, 0x0641, 0x0641, 0x0641, 0x065f, 0x065f, 0x065f, 0x065f, 0x0662, 0x0662, 0x0662, 0x0662,
    0x0664, 0x0664, 0x0664, 0x0664, 0x0666, 0x0666, 0x0666, 0x0666, 0x0667, 0x0667, 0x0667, 0x0667,
    0x0668, 0x0668, 0x0668, 0x0668, 0x066c, 0x066c, 0x066c, 0x066c, 0x066d, 0x066d, 0x066d, 0x066d,
    0x066e, 0x066e, 0x066e, 0x066e, 0x0670, 0x0670, 0x0670, 0x0670, 0x0672, 0x0672, 0x0672, 0x0672,
    0x0675, 0x0675, 0x0675, 0x0675, 0x073a, 0x073a, 0x0742, 0x0742, 0x0743, 0x0743, 0x0744, 0x0744,
    0x0745, 0x0745, 0x0746, 0x0746, 0x0747, 0x0747, 0x0748, 0x0748, 0x0749, 0x0749, 0x074a, 0x074a,
    0x074b, 0x074b, 0x074c, 0x074c, 0x074d, 0x074d, 0x074e, 0x074e, 0x074f, 0x074f, 0x0750, 0x0750,
    0x0751, 0x0751, 0x0752, 0x0752, 0x0753, 0x0753, 0x0754, 0x0754, 0x0755, 0x0755, 0x0756, 0x0756,
    0x0757, 0x0757, 0x0759, 0x0759, 0x076a, 0x076a, 0x076b, 0x076b, 0x0771, 0x0771, 0x0776, 0x0776,
    0x0777, 0x0777, 0x0778, 0x0778, 0x0779, 0x0779, 0x077a, 0x077a, 0x0826, 0x082a, 0x082c, 0x083b,
    0x0858, 0x085a, 0x0000, 0x0000,
};

/* ---- decoding and encoding ------------------------------------------------------- */

int hpack_huff_selftest(void)
{
    uint16_t count[31] = {0};
    uint32_t code = 0;
    int prev = 0;

    for (int s = 0; s < 257; s++) {
        if (hp_huff_bits[s] < 5 || hp_huff_bits[s] > 30)
            return -1;
        count[hp_huff_bits[s]]++;
    }
    for (int l = 0, idx = 0; l < 31; l++) {
        if (count[l] != hp_huff_count[l] ||
            (l >= 5 && (hp_huff_first[l] != code || hp_huff_offset[l] != idx)))
            return -1;
        if (l >= 5) {
            code = (code + count[l]) << 1;
            idx += count[l];
        }
    }
    code = 0;
    /* Canonical: codes increase by one in (length, symbol) order, shifting left
     * when the length grows. */
    for (int i = 0; i < 257; i++) {
        int s = hp_huff_sym[i], l = hp_huff_bits[s];

        if (i > 0)
            code = (code + 1) << (l - prev);
        prev = l;
        if (code != hp_huff_code[s])
            return -1;
        if (i > 0 && (hp_huff_bits[hp_huff_sym[i - 1]] > l ||
                      (hp_huff_bits[hp_huff_sym[i - 1]] == l && hp_huff_sym[i - 1] > s)))
            return -1;
    }
    /* hp_huff_top8: every 8-bit window starts with exactly the code it names */
    for (int b = 0; b < 256; b++) {
        int want = 0;

        for (int s = 0; s < 257 && !want; s++)
            if (hp_huff_bits[s] <= 8 && (uint32_t)(b >> (8 - hp_huff_bits[s])) == hp_huff_code[s])
                want = hp_huff_bits[s] << 8 | s;
        if (hp_huff_top8[b] != want)
            return -1;
    }
    return 0;
}

int hpack_huff_decode(uint8_t *out, size_t outsz, const uint8_t *in, size_t n, size_t *outlen)
{
    /* Canonical decoding from a 64-bit window, left-aligned: the code length is the
     * smallest L whose codes extend past the window's top L bits (most symbols are
     * 5 to 8 bits, so this takes a few steps); bits below the input's end are zero
     * and cannot change that choice. */
    uint64_t acc = 0;
    int nb = 0;
    size_t i = 0, o = 0;

    for (;;) {
        uint32_t w, top;
        int len, sym;

        while (nb <= 56 && i < n) {
            acc |= (uint64_t)in[i++] << (56 - nb);
            nb += 8;
        }
        if (nb == 0)
            break;
        w = (uint32_t)(acc >> 32);
        if (hp_huff_top8[w >> 24] != 0) { /* the common symbols: 5 to 8 bits, one lookup */
            len = hp_huff_top8[w >> 24] >> 8;
            if (len > nb)
                break; /* what is left is padding, or a truncated code */
            sym = hp_huff_top8[w >> 24] & 0xff;
            if (o < outsz)
                out[o] = (uint8_t)sym;
            o++;
            acc <<= len;
            nb -= len;
            continue;
        }
        len = 9;
        while (len <= 30 && (top = w >> (32 - len)) >= hp_huff_first[len] + hp_huff_count[len])
            len++;
        if (len > 30) { /* cannot happen with a complete code */
            *outlen = o;
            return SF_E_MALFORMED;
        }
        if (len > nb)
            break; /* what is left is padding, or a truncated code */
        sym = hp_huff_sym[hp_huff_offset[len] + (int)(top - hp_huff_first[len])];
        if (sym == 256) {
            *outlen = o;
            return SF_E_MALFORMED; /* EOS inside a string (5.2) */
        }
        if (o < outsz)
            out[o] = (uint8_t)sym;
        o++;
        acc <<= len;
        nb -= len;
    }
    *outlen = o;
    /* Padding: a prefix of EOS (all ones), shorter than 8 bits (5.2). */
    if (nb > 7 || (nb > 0 && (acc >> (64 - nb)) != (1u << nb) - 1))
        return SF_E_MALFORMED;
    return o > outsz ? SF_E_LIMIT : 0;
}

size_t hpack_huff_encode(uint8_t *out, size_t outsz, const uint8_t *in, size_t n)
{
    uint64_t acc = 0;
    int bits = 0;
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        acc = acc << hp_huff_bits[in[i]] | hp_huff_code[in[i]];
        bits += hp_huff_bits[in[i]];
        while (bits >= 8) {
            if (o >= outsz)
                return 0;
            out[o++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    if (bits > 0) {
        if (o >= outsz)
            return 0;
        out[o++] = (uint8_t)(acc << (8 - bits) | (0xffu >> bits));
    }
    return o;
}

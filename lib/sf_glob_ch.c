/* sf_glob_ch.c - SQLite's GLOB and LIKE as RE2 over SQLite's characters (sf_glob_ch.h).
 *
 * The pattern is read as SQLite's patternCompare() reads it (sqlite3Utf8Read: a byte
 * from 0xC0 up takes the continuation bytes after it; the value is the code point, or
 * U+FFFD for an overlong or surrogate one).  A character c of the pattern stands for
 * the tokens that read as c; a class for the set of its members' tokens, or, with '^',
 * for every token outside it: the complement of a finite set of hex strings, written
 * from their trie.
 */
#include "sf_glob_ch.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char HEX[] = "0123456789ABCDEF";

#define FFFD_WHY                                                                                   \
    "the pattern holds invalid UTF-8 or U+FFFD, which SQLite matches against every invalid "       \
    "sequence: use ? or * for those bytes"

/* SQLite's UTF-8 reader (sqlite3Utf8Read) on p[*i..n): one character's value. */
static uint32_t read_char(const unsigned char *p, size_t n, size_t *i)
{
    static const unsigned char lead[] = {
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
        0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
        0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
        0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x01, 0x02, 0x03,
        0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00};
    uint32_t c = p[(*i)++];

    assert(*i <= n);
    if (c >= 0xc0) {
        c = lead[c - 0xc0];
        while (*i < n && (p[*i] & 0xc0) == 0x80)
            c = (c << 6) + (0x3f & p[(*i)++]);
        if (c < 0x80 || (c & 0xFFFFF800) == 0xD800 || (c & 0xFFFFFFFE) == 0xFFFE)
            c = 0xFFFD;
    }
    return c;
}

/* ---- sets of tokens, as hex strings ---------------------------------------------- */

struct tokset {
    char (*s)[12]; /* each token's hex: at most 4 bytes of UTF-8, NUL-terminated */
    size_t n, cap;
};

static int tok_add(struct tokset *t, const char *hex)
{
    size_t len = strlen(hex);

    assert(len < sizeof(t->s[0]));
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->s[i], hex) == 0)
            return 0;
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 16;
        char(*ns)[12] = realloc(t->s, nc * sizeof(*ns));
        if (ns == NULL)
            return -1;
        t->s = ns;
        t->cap = nc;
    }
    memcpy(t->s[t->n++], hex, len + 1);
    return 0;
}

/* The first byte of a character whose lead value (sqlite3Utf8Read's table) is h, for
 * each lead group: C0..DF take 0..31, E0..EF 0..15, F0..F7 0..7, F8..FB 0..3, FC..FD
 * 0..1, FE and FF 0.  Returns how many were written to out. */
static int leads_of(uint32_t h, unsigned char out[7])
{
    static const struct {
        unsigned char first;
        uint32_t n;
    } grp[] = {{0xC0, 32}, {0xE0, 16}, {0xF0, 8}, {0xF8, 4}, {0xFC, 2}, {0xFE, 1}, {0xFF, 1}};
    int k = 0;

    for (size_t g = 0; g < sizeof(grp) / sizeof(grp[0]); g++)
        if (h < grp[g].n)
            out[k++] = (unsigned char)(grp[g].first + h);
    return k;
}

/* The tokens that read as value v: for v < 0x80 its byte (anything else that decodes
 * below 0x80 reads as U+FFFD); above, every lead whose value is v's high digits
 * followed by v's low base-64 digits as continuation bytes (C2 A9, but also the
 * truncated E2 A9, read as U+00A9 too), and for 0x80..0xBF the stray byte.  The
 * longer forms that start at a lead of value 0 and pad with 0x80 bytes are left out
 * (overlong; see sf_glob_ch.h). */
static int value_tokens(struct tokset *t, uint32_t v)
{
    unsigned char leads[7];
    char hex[12];

    if (v == 0xFFFD)
        return -2; /* every invalid sequence reads as it: no finite set of tokens */
    if (v < 0x80 || (v >= 0x80 && v <= 0xBF)) {
        hex[0] = HEX[v >> 4];
        hex[1] = HEX[v & 15];
        hex[2] = 0;
        if (tok_add(t, hex) < 0)
            return -1;
        if (v < 0x80)
            return 0;
    }
    for (int m = 1; m <= 4; m++) {
        uint32_t high = m * 6 >= 32 ? 0 : v >> (6 * m);
        int nl = leads_of(high, leads);
        if (high == 0)
            break; /* only the overlong family from here on */
        for (int l = 0; l < nl; l++) {
            size_t k = 0;
            hex[k++] = HEX[leads[l] >> 4];
            hex[k++] = HEX[leads[l] & 15];
            for (int d = m - 1; d >= 0; d--) {
                unsigned char c = (unsigned char)(0x80 | ((v >> (6 * d)) & 0x3F));
                hex[k++] = HEX[c >> 4];
                hex[k++] = HEX[c & 15];
            }
            hex[k] = 0;
            if (tok_add(t, hex) < 0)
                return -1;
        }
    }
    return 0;
}

static int cmp_hex(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Every string over the hex digits, one or more, that is not in s[lo..hi) (sorted),
 * all of whose members share the prefix of length depth.  Written from the trie: at
 * each depth, a digit no member takes there leads anywhere; a digit some take recurses;
 * ending here is allowed unless a member ends here. */
static int complement(struct sf_buf *re, char (*s)[12], size_t lo, size_t hi, size_t depth)
{
    int any = 0, ends = 0, rc = sf_buf_append(re, "(?:", 3);
    char taken[17] = "";
    size_t nt = 0;

    for (size_t i = lo; rc == 0 && i < hi;) {
        size_t j = i;
        if (s[i][depth] == 0) {
            ends = 1;
            i++;
            continue;
        }
        while (j < hi && s[j][depth] == s[i][depth])
            j++;
        taken[nt++] = s[i][depth];
        rc = sf_buf_printf(re, "%s%c", any ? "|" : "", s[i][depth]);
        any = 1;
        if (rc == 0)
            rc = complement(re, s, i, j, depth + 1);
        i = j;
    }
    if (rc == 0 && nt < 16) { /* the digits nobody takes here, then anything */
        rc = sf_buf_append(re, any ? "|[" : "[", any ? 2 : 1);
        any = 1;
        for (int d = 0; rc == 0 && d < 16; d++)
            if (memchr(taken, HEX[d], nt) == NULL)
                rc = sf_buf_append(re, &HEX[d], 1);
        if (rc == 0)
            rc = sf_buf_append(re, "][0-9A-F]*", 10);
    }
    if (rc == 0 && !ends && depth > 0) /* a token that stops here is no member */
        rc = sf_buf_append(re, "|", 1);
    return rc ? rc : sf_buf_append(re, ")", 1);
}

/* One token of the set, or (invert) one outside it.  Returns 0 or -1. */
static int emit_set(struct sf_buf *re, struct tokset *t, int invert)
{
    int rc = 0;

    if (t->n == 0) /* "G" is no hex digit: an empty set matches nothing */
        return sf_buf_append(re, invert ? "[0-9A-F]+," : "G", invert ? 10 : 1);
    qsort(t->s, t->n, sizeof(*t->s), cmp_hex);
    if (invert) {
        rc = complement(re, t->s, 0, t->n, 0);
    } else if (t->n == 1) {
        rc = sf_buf_append(re, t->s[0], strlen(t->s[0]));
    } else {
        rc = sf_buf_append(re, "(?:", 3);
        for (size_t i = 0; rc == 0 && i < t->n; i++)
            rc = sf_buf_printf(re, "%s%s", i ? "|" : "", t->s[i]);
        if (rc == 0)
            rc = sf_buf_append(re, ")", 1);
    }
    return rc ? rc : sf_buf_append(re, ",", 1);
}

/* A class from p[*i] (just after '['), as matchSet in patternCompare reads it.
 * Returns 1, 0 (never closed) or -1. */
static int emit_class(const unsigned char *p, size_t n, size_t *i, struct sf_buf *re,
                      const char **why)
{
    struct tokset t = {0};
    uint32_t c2, prior = 0;
    int invert = 0, rc = 1;

    if (*i >= n)
        return 0;
    c2 = read_char(p, n, i);
    if (c2 == '^') {
        invert = 1;
        if (*i >= n)
            return 0;
        c2 = read_char(p, n, i);
    }
    if (c2 == ']') {
        if (value_tokens(&t, ']') < 0)
            rc = -1;
        c2 = *i < n ? read_char(p, n, i) : 0;
    }
    while (rc == 1 && c2 && c2 != ']') {
        if (c2 == '-' && *i < n && p[*i] != ']' && prior > 0) {
            uint32_t hi = read_char(p, n, i);
            if (hi >= prior && hi - prior >= SF_GLOB_CH_RANGE_MAX) {
                *why = "a class range of more than 4096 characters";
                rc = -1;
            }
            for (uint64_t v = prior; rc == 1 && v <= hi; v++)
                if (value_tokens(&t, (uint32_t)v) < 0)
                    rc = -1;
            if (prior <= 0xFFFD && hi >= 0xFFFD)
                *why = FFFD_WHY;
            prior = 0;
        } else {
            if (value_tokens(&t, c2) < 0)
                rc = -1;
            if (c2 == 0xFFFD)
                *why = FFFD_WHY;
            prior = c2;
        }
        c2 = *i < n ? read_char(p, n, i) : 0;
    }
    if (rc == 1 && c2 == 0)
        rc = 0; /* SQLite: an unclosed class matches nothing */
    if (rc == 1 && emit_set(re, &t, invert) < 0)
        rc = -1;
    free(t.s);
    return rc;
}

int sf_glob_ch_regex(const char *pat, size_t n, int like, struct sf_buf *re, const char **why)
{
    const unsigned char *p = (const unsigned char *)pat;
    size_t i = 0;
    int rc = 1;

    *why = "pattern too long";
    if (sf_buf_append(re, "^", 1) < 0)
        return -1;
    while (rc == 1 && i < n) {
        uint32_t c = read_char(p, n, &i);

        if (c == (like ? '%' : '*')) {
            rc = sf_buf_append(re, "(?:[0-9A-F]+,)*", 15) < 0 ? -1 : 1;
        } else if (c == (like ? '_' : '?')) {
            rc = sf_buf_append(re, "[0-9A-F]+,", 10) < 0 ? -1 : 1;
        } else if (!like && c == '[') {
            rc = emit_class(p, n, &i, re, why);
        } else {
            struct tokset t = {0};
            if (like && c >= 'A' && c <= 'Z')
                c += 32;
            if (c == 0xFFFD)
                *why = FFFD_WHY;
            if (value_tokens(&t, c) < 0 || emit_set(re, &t, 0) < 0)
                rc = -1;
            free(t.s);
        }
    }
    if (rc == 1 && sf_buf_append(re, "$", 1) < 0)
        rc = -1;
    return rc;
}

void sf_glob_ch_tokens(const unsigned char *s, size_t n, struct sf_buf *out)
{
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        if (s[i] >= 0xC0)
            while (j < n && (s[j] & 0xC0) == 0x80)
                j++;
        for (; i < j; i++) {
            char h[2] = {HEX[s[i] >> 4], HEX[s[i] & 15]};
            sf_buf_append(out, h, 2);
        }
        sf_buf_append(out, ",", 1);
    }
}

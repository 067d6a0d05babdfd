/* Unit tests: the fast paths of lib/sf_tc_fast.h against the general paths beside them.
 *
 *   test_tc_fast [SEED [ROUNDS]]
 *
 * Random inputs, built near the shapes each fast path takes (and just outside them), go to
 * the fast path and to the general one; every answer must be the same: return values,
 * every byte written, and whole contexts for the parsers that have a fast path.  One TAP
 * line per pair, naming the first input that differs.  SEED defaults to a fixed value so a
 * failure repeats; any other seed explores further.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_tc_fast.h"
#include "sf_tc_int.h"
#include "tap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state; /* xorshift64* */

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1du;
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

/* A byte from one of the classes the fast paths treat apart. */
static char any_byte(void)
{
    static const char odd[] = "-_=,;: \t*/@%!~GgFfAaz09\x01\x1f\x7f\x80\xff";

    switch (below(4)) {
    case 0:
        return "0123456789abcdef"[below(16)];
    case 1:
        return odd[below(sizeof(odd) - 1)];
    case 2:
        return (char)(0x20 + below(0x5f)); /* printable */
    default:
        return (char)below(256);
    }
}

/* Change 0 to 3 bytes of s[0..n) at random places. */
static void mutate(char *s, size_t n)
{
    size_t k = below(4);

    for (size_t i = 0; i < k && n > 0; i++)
        s[below(n)] = any_byte();
}

/* The input as C-escaped text for a failure message. */
static const char *shown(const char *s, size_t n)
{
    static char out[4 * 100 + 1];
    size_t o = 0;

    for (size_t i = 0; i < n && i < 100; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b >= 0x20 && b < 0x7f && b != '\\')
            out[o++] = (char)b;
        else
            o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", b);
    }
    out[o] = 0;
    return out;
}

/* One "not ok" line naming the first input on which the two paths differ. */
static void differ(long *bad, long round, const char *what, const char *s, size_t n)
{
    *bad = round;
    TAP_OK(0, "%s: differ at round %ld on '%s'", what, round, shown(s, n));
}

static void hex_ids(long rounds)
{
    char s[48];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        size_t n = below(41);
        int nz1 = -1, nz2 = -1;
        for (size_t i = 0; i < n; i++)
            s[i] = below(3) ? "0123456789abcdef"[below(16)] : below(2) ? '0' : any_byte();
        if (below(2))
            mutate(s, n);
        int fast = sf_tc_lower_hex8(s, n, &nz1), ref = sf_tc_lower_hex_ref(s, n, &nz2);
        /* the fast path answers only for lengths that are multiples of 8 */
        if (n % 8 ? fast != 0 : fast != ref || (ref && nz1 != nz2))
            differ(&bad, r, "lower_hex8 == lower_hex_ref", s, n);
    }
    if (bad < 0)
        TAP_OK(1, "lower_hex8 == lower_hex_ref on %ld random ids", rounds);
}

static void printable_copies(long rounds)
{
    char s[80], d1[80], d2[80];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        size_t k = below(70), l1, l2;
        for (size_t i = 0; i < k; i++)
            s[i] = below(8) ? (char)(0x20 + below(0x5f)) : any_byte();
        if (below(4) == 0 && k > 0)
            s[below(k)] = 0; /* NUL: the _str copy stops there */
        memset(d1, 'x', sizeof(d1));
        memset(d2, 'x', sizeof(d2));
        sf_tc_san_copy(d1, s, k);
        sf_tc_san_bytes(d2, s, 0, k);
        if (memcmp(d1, d2, sizeof(d1)) != 0) {
            differ(&bad, r, "san_copy == san_bytes", s, k);
            break;
        }
        memset(d1, 'x', sizeof(d1));
        memset(d2, 'x', sizeof(d2));
        l1 = sf_tc_san_copy_str(d1, s, k);
        l2 = sf_tc_san_str_bytes(d2, s, 0, k);
        if (l1 != l2 || memcmp(d1, d2, l1) != 0)
            differ(&bad, r, "san_copy_str == san_str_bytes", s, k);
    }
    if (bad < 0)
        TAP_OK(1, "san_copy, san_copy_str == their byte loops on %ld random strings", rounds);
}

static void decimals(long rounds)
{
    static const char *const edge[] = {"18446744073709551615", "18446744073709551616",
                                       "99999999999999999999", "10000000000000000000"};
    char s[24];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        size_t n = 1 + below(20);
        uint64_t v1 = 1, v2 = 2;
        if (below(8) == 0) {
            const char *e = edge[below(4)];
            n = strlen(e);
            memcpy(s, e, n);
        } else {
            for (size_t i = 0; i < n; i++)
                s[i] = (char)('0' + below(10));
        }
        if (below(3) == 0)
            mutate(s, n);
        int fast = sf_tc_dec_u64(s, n, &v1), ref = sf_tc_dec_tail(s, 0, n, 0, &v2);
        if (fast != ref || (fast == 0 && v1 != v2))
            differ(&bad, r, "dec_u64 == dec_tail", s, n);
    }
    if (bad < 0)
        TAP_OK(1, "dec_u64 == dec_tail on %ld random 1-20 digit numbers", rounds);
}

/* The general answer: the header whose lowercase name equals the name ignoring case. */
static int header_ref(const char *name, size_t n)
{
    for (int h = 0; h < SF_TC_H_COUNT; h++)
        if (sf_tc_eq_lit(name, n, sf_tc_headers[h].name))
            return h;
    return -1;
}

static void header_names(long rounds)
{
    char s[40];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        const char *lit = sf_tc_headers[below(SF_TC_H_COUNT)].name;
        size_t n = strlen(lit);
        memcpy(s, lit, n);
        for (size_t i = 0; i < n; i++)
            if (s[i] >= 'a' && s[i] <= 'z' && below(2))
                s[i] = (char)(s[i] - 32);
        if (below(2))
            mutate(s, n);
        if (below(8) == 0) /* one byte more or less */
            n = below(2) && n > 0 ? n - 1 : (s[n] = any_byte(), n + 1);
        if (sf_tracectx_header_id(s, n) != header_ref(s, n))
            differ(&bad, r, "header_id == eq_lit over the table", s, n);
    }
    if (bad < 0)
        TAP_OK(1, "header_id == eq_lit over the table on %ld random names", rounds);
}

/* A parser with a fast path against its general path alone: the same context, byte for
 * byte, and the same return value. */
typedef int (*parse_fn)(struct sf_tracectx *c, const char *v, size_t n);

static int same_ctx(parse_fn fast, parse_fn general, const char *v, size_t n)
{
    static struct sf_tracectx c1, c2;
    int r1, r2;

    memset(&c1, 0xa5, sizeof(c1));
    memset(&c2, 0xa5, sizeof(c2));
    r1 = fast(&c1, v, n);
    r2 = general(&c2, v, n);
    return r1 == r2 && memcmp(&c1, &c2, sizeof(c1)) == 0;
}

static void parsers(long rounds)
{
    static const char *const tp[] = {
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"};
    static const char *const b3[] = {
        "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1",
        "a3ce929d0e0e4736-00f067aa0ba902b7-0-05e3ac9a4f6e3b90",
        "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-d",
        "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90", "d"};
    char s[96];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        int is_tp = below(2);
        const char *t = is_tp ? tp[below(4)] : b3[below(5)];
        size_t n = strlen(t);
        memcpy(s, t, n);
        mutate(s, n);
        if (below(6) == 0) /* cut, or grow by a field */
            n = below(2) ? below(n + 1) : (memcpy(s + n, "-0a", 3), n + 3);
        if (below(8) == 0 && n < sizeof(s) - 1) { /* OWS around */
            memmove(s + 1, s, n++);
            s[0] = below(2) ? ' ' : '\t';
        }
        if (is_tp && !same_ctx(sf_tracectx_parse_traceparent, sf_tc_traceparent_general, s, n))
            differ(&bad, r, "traceparent: fast == general", s, n);
        if (!is_tp && !same_ctx(sf_tracectx_parse_b3_single, sf_tc_b3_single_general, s, n))
            differ(&bad, r, "b3: fast == general", s, n);
    }
    if (bad < 0)
        TAP_OK(1, "traceparent, b3: fast path == general path on %ld random values", rounds);
}

/* A random tracestate list: members of valid and broken keys and values, OWS, empties. */
static size_t random_tracestate(char *s, size_t max)
{
    size_t n = 0, members = below(6);

    for (size_t m = 0; m < members && n + 300 < max; m++) {
        size_t kl = below(10) == 0 ? 250 + below(10) : 1 + below(12);
        size_t vl = below(10) == 0 ? 250 + below(10) : below(40);
        if (m > 0)
            s[n++] = ',';
        if (below(4) == 0)
            s[n++] = below(2) ? ' ' : '\t';
        int clean = below(2); /* long clean keys and values reach the length limits */
        for (size_t i = 0; i < kl; i++)
            s[n++] = clean || below(12) ? "abcz09_-*/@"[below(11)] : any_byte();
        if (below(12))
            s[n++] = '=';
        for (size_t i = 0; i < vl; i++) {
            char c = (char)(0x21 + below(0x5e)); /* printable, no space */
            s[n++] = clean ? (c == ',' || c == '=' ? 'v' : c) : below(16) ? c : any_byte();
        }
        if (below(4) == 0)
            s[n++] = ' ';
    }
    return n;
}

static void tracestate(long rounds)
{
    static char s[2048];
    char why1[96], why2[96], out1[SF_CTX_STATE_MAX], out2[SF_CTX_STATE_MAX];
    long bad = -1;

    for (long r = 0; r < rounds && bad < 0; r++) {
        size_t n = random_tracestate(s, sizeof(s));
        size_t outsz = below(2) ? sizeof(out1) : 16 + below(300), l1 = 0, l2 = 0;
        int m1 = 0, m2 = 0, t1 = 0, t2 = 0, r1, r2;
        memset(why1, 0, sizeof(why1));
        memset(why2, 0, sizeof(why2));
        memset(out1, 'x', sizeof(out1));
        memset(out2, 'x', sizeof(out2));
        r1 = sf_tc_ts_scan(s, n, &m1, why1, sizeof(why1), out1, outsz, &l1, &t1, 1);
        r2 = sf_tc_ts_scan(s, n, &m2, why2, sizeof(why2), out2, outsz, &l2, &t2, 0);
        if (r1 != r2 || m1 != m2 || strcmp(why1, why2) != 0 || l1 != l2 || t1 != t2 ||
            memcmp(out1, out2, sizeof(out1)) != 0)
            differ(&bad, r, "tracestate: fast == general", s, n);
    }
    if (bad < 0)
        TAP_OK(1, "tracestate: next_valid == the general member check on %ld random lists", rounds);
}

int main(int argc, char **argv)
{
    long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 200000;

    if (argc > 1)
        rng_state = strtoull(argv[1], NULL, 0) | 1;
    printf("# seed 0x%llx, %ld rounds\n", (unsigned long long)rng_state, rounds);
    hex_ids(rounds);
    printable_copies(rounds);
    decimals(rounds);
    header_names(rounds);
    parsers(rounds);
    tracestate(rounds / 4);
    return tap_done();
}

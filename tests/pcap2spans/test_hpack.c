/* test_hpack.c - HPACK decoding: RFC 7541 examples, the hpack-test-case stories of
 * four encoders (libnghttp2 and the own decoder, known and tolerant), mid-story
 * starts, Huffman and integer edge cases, table-size rules and caps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../pcap2spans/hpack.h"
#include "sf_hex.h"
#include "tap.h"

/* ---- collecting decoded fields --------------------------------------------------- */

#define MAXF 128

struct got {
    int n;
    char name[MAXF][256];
    char value[MAXF][1024];
    unsigned flags[MAXF];
};

static void collect(void *arg, const struct hpack_field *f)
{
    struct got *g = arg;

    if (g->n >= MAXF)
        return;
    snprintf(g->name[g->n], sizeof(g->name[0]), "%.*s", (int)f->nlen, f->name);
    snprintf(g->value[g->n], sizeof(g->value[0]), "%.*s", (int)f->vlen, (const char *)f->value);
    g->flags[g->n] = f->flags;
    g->n++;
}

static const struct hpack_limits lim_default = {8192, 65536, 65536};

static size_t unhex(uint8_t *out, size_t outsz, const char *hex)
{
    size_t n = strlen(hex);

    if (n % 2 || n / 2 > outsz || sf_hex_decode(out, hex, n) != 0)
        return (size_t)-1;
    return n / 2;
}

/* Decode one hex block; returns the decoder's return code. */
static int dec_hex(struct hpack_dec *d, const char *hex, struct got *g, struct hpack_result *r,
                   struct sf_err *e)
{
    uint8_t buf[4096];
    size_t n = unhex(buf, sizeof(buf), hex);

    memset(g, 0, sizeof(*g));
    sf_err_clear(e);
    if (n == (size_t)-1)
        return -100;
    return hpack_dec_block(d, buf, n, collect, g, r, e);
}

/* ---- a small JSON reader, enough for hpack-test-case stories --------------------- */

struct js {
    const char *p, *end;
    int err;
};

static void js_ws(struct js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int js_lit(struct js *j, char c)
{
    js_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

/* A string into out (UTF-8, \uXXXX below 0x800 only: enough for these files). */
static size_t js_str(struct js *j, char *out, size_t outsz)
{
    size_t o = 0;

    if (!js_lit(j, '"')) {
        j->err = 1;
        return 0;
    }
    while (j->p < j->end && *j->p != '"') {
        unsigned c = (unsigned char)*j->p++;

        if (c == '\\' && j->p < j->end) {
            c = (unsigned char)*j->p++;
            if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c == 'r')
                c = '\r';
            else if (c == 'b')
                c = '\b';
            else if (c == 'f')
                c = '\f';
            else if (c == 'u' && j->end - j->p >= 4) {
                c = 0;
                for (int k = 0; k < 4; k++)
                    c = c << 4 | (unsigned)sf_hex_digit(*j->p++);
                if (c >= 0x80) {
                    if (o + 1 < outsz)
                        out[o++] = (char)(0xc0 | c >> 6);
                    c = 0x80 | (c & 0x3f);
                }
            }
        }
        if (o + 1 < outsz)
            out[o++] = (char)c;
    }
    if (j->p >= j->end)
        j->err = 1;
    else
        j->p++;
    if (outsz)
        out[o < outsz ? o : outsz - 1] = 0;
    return o;
}

static long js_num(struct js *j)
{
    long v = 0;

    js_ws(j);
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        v = v * 10 + (*j->p++ - '0');
    return v;
}

/* Skip any value. */
static void js_skip(struct js *j)
{
    js_ws(j);
    if (j->p >= j->end) {
        j->err = 1;
        return;
    }
    if (*j->p == '"') {
        char tmp[8];

        js_str(j, tmp, sizeof(tmp));
    } else if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';

        j->p++;
        if (js_lit(j, close))
            return;
        do {
            if (close == '}') {
                char k[64];

                js_str(j, k, sizeof(k));
                js_lit(j, ':');
            }
            js_skip(j);
        } while (!j->err && js_lit(j, ','));
        if (!js_lit(j, close))
            j->err = 1;
    } else {
        while (j->p < j->end && *j->p != ',' && *j->p != '}' && *j->p != ']')
            j->p++;
    }
}

#define MAXCASES 64

struct story_case {
    long table_size; /* -1 none */
    char *wire;
    int n;
    char (*name)[256];
    char (*value)[1024];
};

struct story {
    int ncases;
    struct story_case c[MAXCASES];
};

static void story_free(struct story *s)
{
    for (int i = 0; i < s->ncases; i++) {
        free(s->c[i].wire);
        free(s->c[i].name);
        free(s->c[i].value);
    }
    s->ncases = 0;
}

static int read_case(struct js *j, struct story_case *c)
{
    c->table_size = -1;
    c->name = calloc(MAXF, sizeof(*c->name));
    c->value = calloc(MAXF, sizeof(*c->value));
    if (!js_lit(j, '{') || c->name == NULL || c->value == NULL)
        return -1;
    do {
        char key[64];

        js_str(j, key, sizeof(key));
        js_lit(j, ':');
        if (strcmp(key, "wire") == 0) {
            c->wire = malloc(65536);
            if (c->wire == NULL)
                return -1;
            js_str(j, c->wire, 65536);
        } else if (strcmp(key, "header_table_size") == 0) {
            c->table_size = js_num(j);
        } else if (strcmp(key, "headers") == 0) {
            js_lit(j, '[');
            if (!js_lit(j, ']')) {
                do {
                    js_lit(j, '{');
                    if (c->n < MAXF) {
                        js_str(j, c->name[c->n], 256);
                        js_lit(j, ':');
                        js_str(j, c->value[c->n], 1024);
                        c->n++;
                    }
                    js_lit(j, '}');
                } while (!j->err && js_lit(j, ','));
                js_lit(j, ']');
            }
        } else {
            js_skip(j);
        }
    } while (!j->err && js_lit(j, ','));
    return js_lit(j, '}') && !j->err ? 0 : -1;
}

static int story_load(const char *path, struct story *s)
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "rb");
    size_t n;
    struct js j;

    memset(s, 0, sizeof(*s));
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    j = (struct js){buf, buf + n, 0};
    if (!js_lit(&j, '{'))
        return -1;
    do {
        char key[64];

        js_str(&j, key, sizeof(key));
        js_lit(&j, ':');
        if (strcmp(key, "cases") == 0) {
            js_lit(&j, '[');
            do {
                if (s->ncases >= MAXCASES || read_case(&j, &s->c[s->ncases++]) < 0)
                    return -1;
            } while (js_lit(&j, ','));
            js_lit(&j, ']');
        } else {
            js_skip(&j);
        }
    } while (!j.err && js_lit(&j, ','));
    return j.err ? -1 : 0;
}

/* ---- corpus stories ---------------------------------------------------------------- */

static const char *corpus_dir(void)
{
    const char *top = getenv("SF_TOP");
    static char dir[512];

    snprintf(dir, sizeof(dir), "%s/tests/data/corpus", top ? top : ".");
    return dir;
}

/* Decode a whole story with one decoder; 1 if every case matches exactly. */
static int run_story(const struct story *s, int from, int table_known, int use_ng, char *why,
                     size_t whysz)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, table_known, use_ng);
    struct got *g = malloc(sizeof(*g));
    int ok = d != NULL && g != NULL;

    for (int i = from; ok && i < s->ncases; i++) {
        const struct story_case *c = &s->c[i];
        struct hpack_result r;
        struct sf_err e;
        int rc;

        if (c->table_size >= 0)
            hpack_dec_set_bound(d, (uint32_t)c->table_size);
        rc = dec_hex(d, c->wire, g, &r, &e);
        if (rc != 0 || g->n != c->n || r.unknown) {
            snprintf(why, whysz, "case %d: rc %d (%.120s), %d fields of %d, %u unknown", i, rc,
                     e.msg, g->n, c->n, r.unknown);
            ok = 0;
            break;
        }
        for (int k = 0; k < c->n; k++) {
            if (strcmp(g->name[k], c->name[k]) || strcmp(g->value[k], c->value[k])) {
                snprintf(why, whysz, "case %d field %d: got %.30s: %.30s, want %.30s: %.30s", i, k,
                         g->name[k], g->value[k], c->name[k], c->value[k]);
                ok = 0;
                break;
            }
        }
    }
    hpack_dec_free(d);
    free(g);
    return ok;
}

/* Start a tolerant decoder at case `from`: every field is either right or flagged
 * unknown; counts the unknown ones and the known ones. */
static int run_mid_story(const struct story *s, int from, int *known, int *unknown, int *synced_at,
                         char *why, size_t whysz)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 0, 0);
    struct got *g = malloc(sizeof(*g));
    int ok = d != NULL && g != NULL;

    *known = *unknown = 0;
    *synced_at = -1;
    for (int i = from; ok && i < s->ncases; i++) {
        const struct story_case *c = &s->c[i];
        struct hpack_result r;
        struct sf_err e;
        int rc = dec_hex(d, c->wire, g, &r, &e);

        if (rc != 0 || g->n != c->n) {
            snprintf(why, whysz, "case %d: rc %d (%.120s), %d fields of %d", i, rc, e.msg, g->n,
                     c->n);
            ok = 0;
            break;
        }
        for (int k = 0; k < c->n; k++) {
            if (g->flags[k] & (HPACK_F_NAME_UNKNOWN | HPACK_F_VALUE_UNKNOWN)) {
                (*unknown)++;
                if (strncmp(g->name[k], "<unknown:", 9) != 0) {
                    snprintf(why, whysz, "case %d field %d: unknown without placeholder", i, k);
                    ok = 0;
                }
                continue;
            }
            (*known)++;
            if (strcmp(g->name[k], c->name[k]) || strcmp(g->value[k], c->value[k])) {
                snprintf(why, whysz, "case %d field %d: got %.30s: %.30s, want %.30s: %.30s", i, k,
                         g->name[k], g->value[k], c->name[k], c->value[k]);
                ok = 0;
                break;
            }
        }
        if (*synced_at < 0 && hpack_dec_synced(d))
            *synced_at = i;
    }
    hpack_dec_free(d);
    free(g);
    return ok;
}

static void test_corpus(void)
{
    static const char *const enc[] = {"nghttp2", "go-hpack", "python-hpack",
                                      "nghttp2-change-table-size"};
    static const char *const stories[] = {"story_00", "story_01", "story_12"};
    char path[640], why[256];
    int loaded = 0;

    for (size_t e = 0; e < sizeof(enc) / sizeof(enc[0]); e++) {
        for (size_t k = 0; k < sizeof(stories) / sizeof(stories[0]); k++) {
            struct story s;

            snprintf(path, sizeof(path), "%s/hpack/%s/%s.json", corpus_dir(), enc[e], stories[k]);
            if (story_load(path, &s) < 0 || s.ncases == 0) {
                TAP_OK(0, "corpus story %s/%s readable", enc[e], stories[k]);
                story_free(&s);
                continue;
            }
            loaded++;
            why[0] = 0;
            TAP_OK(run_story(&s, 0, 1, 1, why, sizeof(why)), "%s/%s nghttp2: %d cases %s", enc[e],
                   stories[k], s.ncases, why);
            why[0] = 0;
            TAP_OK(run_story(&s, 0, 1, 0, why, sizeof(why)), "%s/%s own decoder: %s", enc[e],
                   stories[k], why);
            why[0] = 0;
            TAP_OK(run_story(&s, 0, 0, 0, why, sizeof(why)),
                   "%s/%s tolerant decoder from case 0 resolves everything %s", enc[e], stories[k],
                   why);
            if (strcmp(stories[k], "story_12") == 0) {
                int known, unknown, synced_at;

                why[0] = 0;
                TAP_OK(run_mid_story(&s, 4, &known, &unknown, &synced_at, why, sizeof(why)),
                       "%s/story_12 from case 4: known fields exact, rest flagged %s", enc[e], why);
                printf("#   %s from case 4: %d known, %d unknown, synced at case %d\n", enc[e],
                       known, unknown, synced_at);
                TAP_OK(known > 0 && (unknown > 0 || strcmp(enc[e], "go-hpack") == 0),
                       "%s/story_12 from case 4: %d fields decoded, %d unresolved", enc[e], known,
                       unknown);
            }
            story_free(&s);
        }
    }
    TAP_OK(loaded == 12, "corpus stories loaded: %d of 12", loaded);
}

/* ---- RFC 7541 Appendix C ------------------------------------------------------------ */

static void test_rfc_examples(void)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 0);
    struct hpack_dec *t = hpack_dec_new(&lim_default, 0, 0);
    struct got g;
    struct hpack_result r;
    struct sf_err e;
    int rc;

    /* C.3.1 - C.3.3: requests without Huffman, one decoder. */
    rc = dec_hex(d, "828684410f7777772e6578616d706c652e636f6d", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 4 && strcmp(g.value[3], "www.example.com") == 0, "C.3.1 decodes (%s)",
           e.msg);
    rc = dec_hex(d, "828684be58086e6f2d6361636865", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 5 && strcmp(g.name[3], ":authority") == 0 &&
               strcmp(g.value[3], "www.example.com") == 0 && strcmp(g.value[4], "no-cache") == 0,
           "C.3.2 dynamic reference 62 resolves");
    rc = dec_hex(d, "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 5 && strcmp(g.value[3], "www.example.com") == 0 &&
               strcmp(g.name[4], "custom-key") == 0 && strcmp(g.value[4], "custom-value") == 0,
           "C.3.3 reference 63 resolves after two insertions");

    /* C.3.3 alone, tolerant: 63 unknown, everything else exact. */
    rc = dec_hex(t, "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 5 && r.unknown == 1 && strcmp(g.name[3], "<unknown:63>") == 0 &&
               (g.flags[3] & HPACK_F_VALUE_UNKNOWN) && strcmp(g.value[2], "/index.html") == 0 &&
               strcmp(g.value[4], "custom-value") == 0 && r.tolerant,
           "C.3.3 mid-connection: <unknown:63>, static and literal fields decoded");
    /* The literal it inserted is now 62 and known. */
    rc = dec_hex(t, "be", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 1 && r.unknown == 0 && strcmp(g.value[0], "custom-value") == 0,
           "tolerant decoder tracks entries inserted since the start");
    rc = dec_hex(t, "bf", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 1 && r.unknown == 1, "older entry stays unknown, no error");

    /* C.4.1: Huffman. */
    hpack_dec_free(d);
    d = hpack_dec_new(&lim_default, 1, 0);
    rc = dec_hex(d, "828684418cf1e3c2e5f23a6ba0ab90f4ff", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 4 && strcmp(g.value[3], "www.example.com") == 0,
           "C.4.1 Huffman authority");
    rc = dec_hex(d, "828684be5886a8eb10649cbf", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 5 && strcmp(g.value[4], "no-cache") == 0, "C.4.2 Huffman no-cache");
    rc = dec_hex(d, "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 5 && strcmp(g.name[4], "custom-key") == 0 &&
               strcmp(g.value[4], "custom-value") == 0,
           "C.4.3 Huffman literal name and value");
    hpack_dec_free(d);
    hpack_dec_free(t);
}

/* ---- Huffman and integers ----------------------------------------------------------- */

static void test_huffman(void)
{
    uint8_t in[256], enc[2048], out[256], b[8];
    size_t n, olen;
    int rc;

    TAP_OK(hpack_huff_selftest() == 0, "derived Huffman tables match RFC 7541 Appendix B");
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    n = hpack_huff_encode(enc, sizeof(enc), in, 256);
    rc = hpack_huff_decode(out, sizeof(out), enc, n, &olen);
    TAP_OK(n > 0 && rc == 0 && olen == 256 && memcmp(in, out, 256) == 0,
           "all 256 byte values round-trip (%zu bytes coded)", n);
    n = hpack_huff_encode(enc, sizeof(enc), (const uint8_t *)"www.example.com", 15);
    TAP_OK(n == 12 && memcmp(enc, "\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff", 12) == 0,
           "encoder gives RFC C.4.1 bytes");

    /* 'a' is 00011: padding "111" is fine, "000" is not, 11 bits is too long. */
    b[0] = 0x1f;
    TAP_OK(hpack_huff_decode(out, sizeof(out), b, 1, &olen) == 0 && olen == 1 && out[0] == 'a',
           "1-bit-ones padding accepted");
    b[0] = 0x18;
    TAP_EQ_INT(hpack_huff_decode(out, sizeof(out), b, 1, &olen), SF_E_MALFORMED,
               "padding not all ones rejected");
    b[0] = 0x1f;
    b[1] = 0xff;
    TAP_EQ_INT(hpack_huff_decode(out, sizeof(out), b, 2, &olen), SF_E_MALFORMED,
               "padding longer than 7 bits rejected");
    memset(b, 0xff, 4);
    TAP_EQ_INT(hpack_huff_decode(out, sizeof(out), b, 4, &olen), SF_E_MALFORMED,
               "EOS symbol in a string rejected");
    b[0] = 0xff;
    TAP_EQ_INT(hpack_huff_decode(out, sizeof(out), b, 1, &olen), SF_E_MALFORMED,
               "a lone byte of ones (8-bit padding) rejected");
    TAP_OK(hpack_huff_decode(out, sizeof(out), b, 0, &olen) == 0 && olen == 0,
           "empty Huffman string");
    n = hpack_huff_encode(enc, sizeof(enc), in, 256);
    rc = hpack_huff_decode(out, 10, enc, n, &olen);
    TAP_OK(rc == SF_E_LIMIT && olen == 256, "output cap: SF_E_LIMIT with the full length");
}

/* hpack_int_read over n bytes of b: its result, the value in *v and the bytes read in *used. */
static int int_read(const void *b, size_t n, int prefix, uint32_t *v, size_t *used)
{
    struct sf_rd rd;
    int rc;

    sf_rd_init(&rd, b, n, 0);
    rc = hpack_int_read(&rd, prefix, v);
    *used = (size_t)sf_rd_off(&rd);
    return rc;
}

static void test_integers(void)
{
    size_t used;
    uint32_t v;

    TAP_OK(int_read("\x0a", 1, 5, &v, &used) == 0 && v == 10 && used == 1, "C.1.1 10, 5-bit");
    TAP_OK(int_read("\x1f\x9a\x0a", 3, 5, &v, &used) == 0 && v == 1337 && used == 3,
           "C.1.2 1337, 5-bit");
    TAP_OK(int_read("\x2a", 1, 8, &v, &used) == 0 && v == 42, "C.1.3 42, 8-bit");
    TAP_EQ_INT(int_read("\x1f\x9a", 2, 5, &v, &used), SF_E_TRUNC, "truncated continuation");
    /* 31 + 0xffffffe0 = 0xffffffff */
    TAP_OK(int_read("\x1f\xe0\xff\xff\xff\x0f", 6, 5, &v, &used) == 0 && v == 0xffffffffu,
           "UINT32_MAX fits");
    TAP_EQ_INT(int_read("\x1f\xe1\xff\xff\xff\x0f", 6, 5, &v, &used), SF_E_MALFORMED,
               "2^32 overflows");
    TAP_EQ_INT(int_read("\x1f\x80\x80\x80\x80\x80\x80\x01", 8, 5, &v, &used), SF_E_MALFORMED,
               "too many continuation bytes");

    {
        struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 0);
        struct got g;
        struct hpack_result r;
        struct sf_err e;
        int rc = dec_hex(d, "82ff80808080808001", &g, &r, &e);

        TAP_OK(rc == SF_E_MALFORMED && g.n == 1 && strstr(e.msg, "overflow") &&
                   strstr(e.msg, "offset 1"),
               "integer overflow in a block reported at its offset: %s", e.msg);
        TAP_OK(!hpack_dec_synced(d), "the table is unknown after a broken block");
        hpack_dec_free(d);
    }
}

/* ---- table size rules, caps, nghttp2 fallback -------------------------------------- */

static void test_table_rules(void)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 0);
    struct got g;
    struct hpack_result r;
    struct sf_err e;
    int rc;

    rc = dec_hex(d, "823f6182", &g, &r, &e); /* field, then update to 128 */
    TAP_OK(rc == SF_E_MALFORMED && strstr(e.msg, "after a field") && g.n == 2,
           "size update after a field rejected, block still decoded: %s", e.msg);
    rc = dec_hex(d, "3fe21f82", &g, &r, &e); /* update to 4096 + 1 */
    TAP_OK(rc == SF_E_MALFORMED && strstr(e.msg, "SETTINGS_HEADER_TABLE_SIZE"),
           "size update above the SETTINGS bound rejected: %s", e.msg);
    hpack_dec_free(d);

    d = hpack_dec_new(&lim_default, 1, 0);
    dec_hex(d, "400361616103626262", &g, &r, &e); /* aaa: bbb inserted (size 38) */
    hpack_dec_set_bound(d, 0);
    rc = dec_hex(d, "82", &g, &r, &e);
    TAP_OK(rc == SF_E_MALFORMED && strstr(e.msg, "no size update"),
           "lowered SETTINGS requires a size update first: %s", e.msg);
    hpack_dec_free(d);

    d = hpack_dec_new(&lim_default, 1, 1); /* nghttp2 enforces the same */
    dec_hex(d, "400361616103626262", &g, &r, &e);
    hpack_dec_set_bound(d, 0);
    rc = dec_hex(d, "2082", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 1 && hpack_dec_uses_nghttp2(d), "nghttp2: update to 0 accepted");
    rc = dec_hex(d, "be", &g, &r, &e);
    TAP_OK(rc != 0 && !hpack_dec_uses_nghttp2(d) && g.n == 1 && r.unknown == 1,
           "nghttp2: evicted index fails, tolerant decoder takes over: %s", e.msg);
    hpack_dec_free(d);

    /* Tolerant start: a size update to 0 resynchronises. */
    d = hpack_dec_new(&lim_default, 0, 0);
    TAP_OK(!hpack_dec_synced(d), "mid-connection decoder starts unsynced");
    rc = dec_hex(d, "203fe11f400361616103626262", &g, &r, &e);
    TAP_OK(rc == 0 && hpack_dec_synced(d), "size update to 0 resynchronises");
    rc = dec_hex(d, "bebf", &g, &r, &e);
    TAP_OK(rc == SF_E_MALFORMED && g.n == 2 && strcmp(g.value[0], "bbb") == 0 &&
               strstr(e.msg, "invalid index 63"),
           "once synced, an index past the table is an error: %s", e.msg);
    hpack_dec_free(d);

    /* Tolerant start with a SETTINGS bound: filling it proves nothing older remains. */
    d = hpack_dec_new(&lim_default, 0, 0);
    hpack_dec_set_bound(d, 100);
    rc = dec_hex(d, "400361616103626262", &g, &r, &e);
    TAP_OK(rc == 0 && !hpack_dec_synced(d), "38 of at most 100 bytes: not yet known");
    rc = dec_hex(d, "400363636303646464400365656503666666", &g, &r, &e);
    TAP_OK(rc == 0 && hpack_dec_synced(d), "76 + 32 > 100: every entry is known (synced)");
    hpack_dec_free(d);

    /* Size update beyond the table cap cannot be followed. */
    {
        struct hpack_limits small = {8192, 65536, 256};

        d = hpack_dec_new(&small, 1, 0);
        hpack_dec_set_bound(d, 65536);
        rc = dec_hex(d, "3fe11f82", &g, &r, &e);
        TAP_OK(rc == SF_E_LIMIT && !hpack_dec_synced(d) && g.n == 1,
               "size update past the table cap: SF_E_LIMIT, table unknown: %s", e.msg);
        hpack_dec_free(d);
    }
}

static void test_caps(void)
{
    struct hpack_limits lim = {4096, 16384, 65536};
    uint8_t blk[8192];
    size_t n = 0;
    struct hpack_dec *d;
    struct got *g = calloc(1, sizeof(*g));
    struct hpack_result r;
    struct sf_err e;
    int rc;

    /* HPACK bomb: one 4000-byte entry, then 200 one-byte references to it. */
    blk[n++] = 0x40;
    blk[n++] = 0x01;
    blk[n++] = 'x';
    blk[n++] = 0x7f; /* value length 4000 = 127 + 3873 */
    blk[n++] = (uint8_t)(0x80 | ((4000 - 127) & 0x7f));
    blk[n++] = (uint8_t)((4000 - 127) >> 7);
    memset(blk + n, 'v', 4000);
    n += 4000;
    memset(blk + n, 0xbe, 200);
    n += 200;
    for (int ng = 0; ng < 2; ng++) {
        d = hpack_dec_new(&lim, 1, ng);
        memset(g, 0, sizeof(*g));
        sf_err_clear(&e);
        rc = hpack_dec_block(d, blk, n, collect, g, &r, &e);
        TAP_OK(rc == SF_E_LIMIT && r.capped && g->n == 4 && strstr(e.msg, "header list") &&
                   e.off == 4006 + 3,
               "%s: HPACK bomb stops at the list cap, offset %llu: %s", ng ? "nghttp2" : "own",
               (unsigned long long)e.off, e.msg);
        rc = hpack_dec_block(d, (const uint8_t *)"\xbe", 1, collect, g, &r, &e);
        TAP_OK(rc == 0 && r.fields == 1, "%s: decoder usable after the bomb",
               ng ? "nghttp2" : "own");
        hpack_dec_free(d);
    }

    /* Field cap. */
    lim.max_field = 1000;
    d = hpack_dec_new(&lim, 1, 0);
    memset(g, 0, sizeof(*g));
    rc = hpack_dec_block(d, blk, 4006, collect, g, &r, &e);
    TAP_OK(rc == SF_E_LIMIT && g->n == 1 && (g->flags[0] & HPACK_F_VALUE_UNKNOWN) &&
               strstr(e.msg, "field of 4001 bytes"),
           "field over the cap reported, value not kept: %s", e.msg);
    rc = hpack_dec_block(d, (const uint8_t *)"\xbe\x82", 2, collect, g, &r, &e);
    TAP_OK(g->n == 3 && strcmp(g->name[1], "x") == 0 && (g->flags[1] & HPACK_F_VALUE_UNKNOWN) &&
               strcmp(g->value[2], "GET") == 0,
           "oversized entry still occupies its table slot");
    hpack_dec_free(d);
    free(g);
}

static void test_bad_huffman_in_block(void)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 1);
    struct got g;
    struct hpack_result r;
    struct sf_err e;
    int rc;

    /* literal name "ab" with a Huffman value of padding 0x00 (bad), then :method GET */
    rc = dec_hex(d,
                 "82400261628100"
                 "82",
                 &g, &r, &e);
    TAP_OK(rc == SF_E_MALFORMED && g.n == 3 && strcmp(g.value[0], "GET") == 0 &&
               (g.flags[1] & HPACK_F_VALUE_UNKNOWN) && strcmp(g.value[2], "GET") == 0 &&
               !hpack_dec_uses_nghttp2(d),
           "bad Huffman: nghttp2 error, field flagged, the rest decoded once: %s", e.msg);
    rc = dec_hex(d, "be", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 1 && strcmp(g.name[0], "ab") == 0 &&
               (g.flags[0] & HPACK_F_VALUE_UNKNOWN),
           "its table entry keeps the slot, value unknown");
    hpack_dec_free(d);
}

static void test_static_table(void)
{
    /* Every static index through nghttp2 and through the table here. */
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 1);
    uint8_t b[61];
    struct got *g = calloc(1, sizeof(*g));
    struct hpack_result r;
    struct sf_err e;
    int same = 1;

    for (int i = 0; i < 61; i++)
        b[i] = (uint8_t)(0x80 | (i + 1));
    hpack_dec_block(d, b, 61, collect, g, &r, &e);
    for (int i = 0; i < 61 && same; i++) {
        const char *nm, *v;

        same = g->n == 61 && hpack_static((uint32_t)i + 1, &nm, &v) && !strcmp(nm, g->name[i]) &&
               !strcmp(v, g->value[i]);
    }
    TAP_OK(same, "static table agrees with libnghttp2 on all 61 entries");
    hpack_dec_free(d);
    free(g);
}

/* A literal whose name is a dynamic entry and which is larger than the table: the
 * insertion empties the table, and the field must still come out whole (a fuzz find). */
static void test_name_of_evicted_entry(void)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 0);
    static uint8_t blk[8192];
    size_t n = 0;
    struct got *g = calloc(1, sizeof(*g));
    struct hpack_result r;
    struct sf_err e;
    int rc;

    memcpy(blk,
           "\x40\x03"
           "aaa"
           "\x03"
           "bbb",
           9);
    n = 9;
    blk[n++] = 0x7e; /* literal, incremental indexing, name = index 62 */
    blk[n++] = 0x7f; /* value length 4100 = 127 + 3973 */
    blk[n++] = 0x85;
    blk[n++] = 0x1f;
    memset(blk + n, 'z', 4100);
    n += 4100;
    sf_err_clear(&e);
    rc = hpack_dec_block(d, blk, n, collect, g, &r, &e);
    TAP_OK(rc == 0 && g->n == 2 && strcmp(g->name[1], "aaa") == 0 && strlen(g->value[1]) == 1023,
           "entry larger than the table empties it; its name (from that table) survives");
    rc = hpack_dec_block(d, (const uint8_t *)"\xbe", 1, collect, g, &r, &e);
    TAP_OK(rc == SF_E_MALFORMED && strstr(e.msg, "invalid index 62"), "and the table is empty");
    hpack_dec_free(d);
    free(g);
}

/* When libnghttp2 fails on one block, the own decoder takes over its table: entries
 * from before the bad block still resolve. */
static void test_fallback_keeps_table(void)
{
    struct hpack_dec *d = hpack_dec_new(&lim_default, 1, 1);
    struct got g;
    struct hpack_result r;
    struct sf_err e;
    int rc;

    dec_hex(d, "400361616103626262", &g, &r, &e); /* aaa: bbb at 62 */
    rc = dec_hex(d,
                 "be"
                 "400261628100"
                 "82",
                 &g, &r, &e);
    TAP_OK(rc == SF_E_MALFORMED && g.n == 3 && strcmp(g.value[0], "bbb") == 0 &&
               (g.flags[1] & HPACK_F_VALUE_UNKNOWN) && strcmp(g.value[2], "GET") == 0 &&
               strstr(e.msg, "invalid Huffman string at block offset 5") &&
               !hpack_dec_uses_nghttp2(d),
           "nghttp2 error mid-block: each field once, the own decoder names it: %s", e.msg);
    rc = dec_hex(d, "bfbe", &g, &r, &e);
    TAP_OK(rc == 0 && g.n == 2 && r.unknown == 1 && strcmp(g.name[0], "aaa") == 0 &&
               strcmp(g.value[0], "bbb") == 0 && strcmp(g.name[1], "ab") == 0 &&
               hpack_dec_synced(d),
           "the table nghttp2 built is kept: an entry from before the error resolves");
    hpack_dec_free(d);
}

int main(void)
{
    test_huffman();
    test_integers();
    test_static_table();
    test_rfc_examples();
    test_table_rules();
    test_caps();
    test_bad_huffman_in_block();
    test_name_of_evicted_entry();
    test_fallback_keeps_table();
    test_corpus();
    return tap_done();
}

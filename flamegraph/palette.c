/* palette.c - frame colours, as flamegraph.pl chooses them.
 *
 * Three sources of the hue values v1..v3 in [0,1):
 *   default   Perl's srand(sum of the name's code points) then rand(): drand48 with the
 *             seed in the high 32 bits of the 48-bit state, low 16 bits 0x330E; all three
 *             values come from the same seed, so they are equal.
 *   --hash    namehash(): a weighted vector of the first three characters (a module
 *             prefix up to the first '`' removed), of the name and of its reverse.
 *   --random  fresh random values per frame.
 * Palettes: hot mem io (three hues), red green blue yellow purple aqua orange (one), and
 * the multi palettes java js perl wakeup chain, which pick one of those by the name and
 * its annotation: _[k] kernel, _[j] JIT, _[i] inlined, _[w] waker.
 * Differential graphs use a red (grew) / blue (shrank) scale of delta / maxdelta.
 * --cp keeps a name -> colour map in a file ("name->rgb(r,g,b)" per line, sorted).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fg.h"

#define DRAND48_MULT 0x5deece66dULL
#define DRAND48_ADD  0xbULL
#define DRAND48_MASK 0xffffffffffffULL

/* Decode one UTF-8 code point at s[i] (invalid bytes stand for themselves, as Latin-1). */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    uint32_t cp;
    size_t need;

    if (c < 0x80 || c < 0xc2 || c > 0xf4) {
        (*i)++;
        return c;
    }
    need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
    cp = c & (0x3f >> need);
    if (*i + need >= len) {
        (*i)++;
        return c;
    }
    for (size_t k = 1; k <= need; k++) {
        if ((s[*i + k] & 0xc0) != 0x80) {
            (*i)++;
            return c;
        }
        cp = cp << 6 | (s[*i + k] & 0x3f);
    }
    *i += need + 1;
    return cp;
}

double palette_seeded_rand(const char *name, size_t len)
{
    uint32_t sum = 0;
    uint64_t x;

    for (size_t i = 0; i < len;)
        sum += utf8_next((const unsigned char *)name, len, &i);
    x = ((uint64_t)sum << 16) + 0x330e;
    x = (x * DRAND48_MULT + DRAND48_ADD) & DRAND48_MASK;
    return (double)x / 281474976710656.0; /* 2^48 */
}

double palette_namehash(const char *name, size_t len)
{
    double vector = 0, weight = 1, max = 1;
    int mod = 10;
    size_t i = 0, start = 0;

    /* drop a "module`" prefix: the first '`' after the first character */
    if (len > 0) {
        utf8_next((const unsigned char *)name, len, &i);
        const char *bt = memchr(name + i, '`', len - i);
        if (bt)
            start = (size_t)(bt - name) + 1;
    }
    for (i = start; i < len;) {
        uint32_t c = utf8_next((const unsigned char *)name, len, &i);
        vector += ((double)(c % (uint32_t)mod) / (mod - 1)) * weight;
        mod++;
        max += weight;
        weight *= 0.70;
        if (mod > 12)
            break;
    }
    return 1 - vector / max;
}

/* The name with its characters in reverse order (Perl's scalar reverse), into buf. */
static size_t reverse_chars(const char *s, size_t len, char *buf)
{
    size_t i = 0;

    while (i < len) {
        size_t j = i;
        utf8_next((const unsigned char *)s, len, &j);
        memcpy(buf + len - j, s + i, j - i);
        i = j;
    }
    return len;
}

static double random01(struct fg_ctx *ctx)
{
    if (!ctx->rand_state)
        ctx->rand_state = ctx->opt.seed ? ctx->opt.seed : (uint64_t)time(NULL) ^ 0x330e;
    ctx->rand_state = (ctx->rand_state * DRAND48_MULT + DRAND48_ADD) & DRAND48_MASK;
    return (double)ctx->rand_state / 281474976710656.0;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static int contains(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(s + i, needle, n) == 0)
            return 1;
    return 0;
}

/* java: annotations first, then Java package prefixes, C++, kernel. */
static const char *java_type(const char *s, size_t len)
{
    static const char *const pkgs[] = {"java/", "javax/", "jdk/", "net/",
                                       "org/",  "com/",   "io/",  "sun/"};
    size_t off = len > 0 && s[0] == 'L' ? 1 : 0;

    if (ends_with(s, len, "_[j]"))
        return "green";
    if (ends_with(s, len, "_[i]"))
        return "aqua";
    for (size_t k = 0; k < sizeof(pkgs) / sizeof(pkgs[0]); k++) {
        size_t n = strlen(pkgs[k]);
        if ((len >= n && memcmp(s, pkgs[k], n) == 0) ||
            (off && len >= n + 1 && memcmp(s + 1, pkgs[k], n) == 0))
            return "green";
    }
    if (contains(s, len, ":::"))
        return "green";
    if (contains(s, len, "::"))
        return "yellow";
    if (ends_with(s, len, "_[k]"))
        return "orange";
    return "red";
}

/* js: JIT frames by path, C++, scripts with a "/...js" path, builtins with ':'. */
static const char *js_type(const char *s, size_t len)
{
    const char *slash;

    if (ends_with(s, len, "_[j]"))
        return memchr(s, '/', len) ? "green" : "aqua";
    if (contains(s, len, "::"))
        return "yellow";
    if ((slash = memchr(s, '/', len)) && contains(slash, len - (size_t)(slash - s), ".js"))
        return "green";
    if (memchr(s, ':', len))
        return "aqua";
    if (len == 1 && s[0] == ' ')
        return "green";
    if (contains(s, len, "_[k]"))
        return "orange";
    return "red";
}

static const char *multi_type(const char *type, const char *s, size_t len)
{
    if (strcmp(type, "java") == 0)
        return java_type(s, len);
    if (strcmp(type, "perl") == 0) {
        if (contains(s, len, "::"))
            return "yellow";
        if (contains(s, len, "Perl") || contains(s, len, ".pl"))
            return "green";
        return ends_with(s, len, "_[k]") ? "orange" : "red";
    }
    if (strcmp(type, "js") == 0)
        return js_type(s, len);
    if (strcmp(type, "wakeup") == 0)
        return "aqua";
    if (strcmp(type, "chain") == 0)
        return contains(s, len, "_[w]") ? "aqua" : "blue";
    return type;
}

/* rgb of a palette for hue values v1..v3; 0 if the palette is unknown. */
static int palette_rgb(const char *type, double v1, double v2, double v3, int rgb[3])
{
    static const struct {
        const char *name;
        int base[3], span[3]; /* channel = base + int(span * v), v from col */
        int col[3];           /* which of v1 v2 v3; 0 = constant base */
    } pals[] = {
        {"hot", {205, 0, 0}, {50, 230, 55}, {3, 1, 2}},
        {"mem", {0, 190, 0}, {0, 50, 210}, {0, 2, 1}},
        {"io", {80, 80, 190}, {60, 60, 55}, {1, 1, 2}},
        {"red", {200, 50, 50}, {55, 80, 80}, {1, 1, 1}},
        {"green", {50, 200, 50}, {60, 55, 60}, {1, 1, 1}},
        {"blue", {80, 80, 205}, {60, 60, 50}, {1, 1, 1}},
        {"yellow", {175, 175, 50}, {55, 55, 20}, {1, 1, 1}},
        {"purple", {190, 80, 190}, {65, 60, 65}, {1, 1, 1}},
        {"aqua", {50, 165, 165}, {60, 55, 55}, {1, 1, 1}},
        {"orange", {190, 90, 0}, {65, 65, 0}, {1, 1, 0}},
    };
    double v[4] = {0, v1, v2, v3};

    for (size_t p = 0; p < sizeof(pals) / sizeof(pals[0]); p++) {
        if (strcmp(type, pals[p].name) != 0)
            continue;
        for (int k = 0; k < 3; k++)
            rgb[k] = pals[p].base[k] + (int)(pals[p].span[k] * v[pals[p].col[k]]);
        return 1;
    }
    return 0;
}

static void color_of(struct fg_ctx *ctx, const char *name, size_t len, char *buf, size_t bufsz)
{
    double v1, v2, v3;
    int rgb[3] = {0, 0, 0};
    const char *type = ctx->opt.colors;

    if (ctx->opt.hash) {
        char *rev = malloc(len + 1);
        v1 = palette_namehash(name, len);
        if (rev) {
            reverse_chars(name, len, rev);
            v2 = v3 = palette_namehash(rev, len);
            free(rev);
        } else {
            v2 = v3 = v1;
        }
    } else if (ctx->opt.random) {
        v1 = random01(ctx);
        v2 = random01(ctx);
        v3 = random01(ctx);
    } else {
        v1 = v2 = v3 = palette_seeded_rand(name, len);
    }
    type = multi_type(type, name, len);
    if (!palette_rgb(type, v1, v2, v3, rgb))
        rgb[0] = rgb[1] = rgb[2] = 0;
    snprintf(buf, bufsz, "rgb(%d,%d,%d)", rgb[0], rgb[1], rgb[2]);
}

void palette_color_scale(const struct fg_opts *opt, double delta, double maxdelta, char *buf,
                         size_t bufsz)
{
    int r = 255, g = 255, b = 255;

    if (opt->negate)
        delta = -delta;
    if (delta > 0)
        g = b = (int)(210 * (maxdelta - delta) / maxdelta);
    else if (delta < 0)
        r = g = (int)(210 * (maxdelta + delta) / maxdelta);
    snprintf(buf, bufsz, "rgb(%d,%d,%d)", r, g, b);
}

/* ---- --cp: the palette map file ---- */

struct fg_palmap {
    struct fg_names names; /* reuses the interning table: id -> colour */
    char **colour;
    uint32_t cap;
};

static int palmap_set(struct fg_palmap *m, const char *name, size_t len, const char *col,
                      size_t clen)
{
    uint32_t id = names_intern(&m->names, name, len);

    if (id == UINT32_MAX)
        return SF_E_NOMEM;
    if (id >= m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 256;
        while (cap <= id)
            cap *= 2;
        char **c = realloc(m->colour, cap * sizeof(*c));
        if (!c)
            return SF_E_NOMEM;
        memset(c + m->cap, 0, (cap - m->cap) * sizeof(*c));
        m->colour = c;
        m->cap = cap;
    }
    free(m->colour[id]);
    m->colour[id] = malloc(clen + 1);
    if (!m->colour[id])
        return SF_E_NOMEM;
    memcpy(m->colour[id], col, clen);
    m->colour[id][clen] = '\0';
    return 0;
}

static struct fg_palmap *palmap_new(void)
{
    struct fg_palmap *m = calloc(1, sizeof(*m));
    struct fg_layout tmp;

    if (!m)
        return NULL;
    /* an empty interning table, set up the way the layout's is */
    if (layout_init(&tmp, 1) < 0) {
        layout_free(&tmp);
        free(m);
        return NULL;
    }
    m->names = tmp.names;
    return m;
}

int palette_map_load(struct fg_ctx *ctx, const char *path, struct sf_err *err)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;

    if (!ctx->palmap && !(ctx->palmap = palmap_new()))
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (!(f = fopen(path, "r")))
        return errno == ENOENT ? 0 : sf_err_set(err, SF_E_IO, UINT64_MAX, "%s", strerror(errno));
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        char *arrow = strstr(line, "->");
        if (!arrow)
            continue;
        char *val = arrow + 2, *end = strstr(val, "->");
        size_t vlen = end ? (size_t)(end - val) : strlen(val);
        rc = palmap_set(ctx->palmap, line, (size_t)(arrow - line), val, vlen);
    }
    free(line);
    fclose(f);
    return rc < 0 ? sf_err_set(err, rc, UINT64_MAX, "out of memory") : 0;
}

struct palent {
    const char *name;
    size_t len;
    const char *colour;
};

static int palent_cmp(const void *pa, const void *pb)
{
    const struct palent *a = pa, *b = pb;
    int r = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

int palette_map_save(struct fg_ctx *ctx, const char *path, struct sf_err *err)
{
    struct fg_palmap *m = ctx->palmap;
    struct palent *ents;
    size_t k = 0;
    FILE *f;

    if (!m)
        return 0;
    if (!(ents = malloc(((size_t)m->names.count + 1) * sizeof(*ents))))
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    for (uint32_t id = 0; id < m->names.count; id++)
        if (id < m->cap && m->colour[id])
            ents[k++] =
                (struct palent){names_get(&m->names, id, NULL), m->names.len[id], m->colour[id]};
    qsort(ents, k, sizeof(*ents), palent_cmp);
    if (!(f = fopen(path, "w"))) {
        free(ents);
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot write: %s", strerror(errno));
    }
    for (size_t i = 0; i < k; i++) {
        fwrite(ents[i].name, 1, ents[i].len, f);
        fprintf(f, "->%s\n", ents[i].colour);
    }
    free(ents);
    if (fclose(f) != 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot write: %s", strerror(errno));
    return 0;
}

void palette_map_free(struct fg_ctx *ctx)
{
    struct fg_palmap *m = ctx->palmap;

    if (!m)
        return;
    for (uint32_t i = 0; i < m->cap; i++)
        free(m->colour[i]);
    free(m->colour);
    names_free(&m->names);
    free(m);
    ctx->palmap = NULL;
}

void palette_color(struct fg_ctx *ctx, const char *name, size_t len, char *buf, size_t bufsz)
{
    if (ctx->palmap) {
        uint32_t id = names_intern(&ctx->palmap->names, name, len);
        if (id != UINT32_MAX && id < ctx->palmap->cap && ctx->palmap->colour[id]) {
            snprintf(buf, bufsz, "%s", ctx->palmap->colour[id]);
            return;
        }
        color_of(ctx, name, len, buf, bufsz);
        if (id != UINT32_MAX)
            palmap_set(ctx->palmap, name, len, buf, strlen(buf));
        return;
    }
    color_of(ctx, name, len, buf, bufsz);
}

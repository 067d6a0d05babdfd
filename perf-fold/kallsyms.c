/* kallsyms.c - the kernel's symbols from a kallsyms file (kallsyms.h).
 *
 * A line is "ADDRESS TYPE NAME[\t[MODULE]]\n", the address in lowercase hex.  A regular
 * file (perf's build-id cache copy, --kallsyms FILE) is read once in pieces through one
 * small buffer, and a line read again from the file when an address is looked up in it:
 * reading a 5 MB file through a mapping cost twice the time here (a page of a mapped file
 * is its own fetch; a read is one long copy).  Another file (/proc/kallsyms, which the
 * kernel formats on each read and cannot be read at an offset) is read whole into memory.
 * The index is the lines kept, by address: their addresses and their offsets in the text,
 * twelve bytes a symbol.  Files whose lines are not in address order (none that the
 * kernel writes; a hand-made copy may be) are sorted once, by address and then in the
 * order read.  A line longer than the buffer (64 KiB; a kernel's are under 600 bytes) is
 * skipped.
 */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sf_arena.h"
#include "sf_hex.h"
#include "sf_prefault.h"

#define PIECE (64u << 10) /* a regular file is read through a buffer this large */

struct pf_kallsyms {
    int fd;           /* a regular file, open: lines are read again from it; else -1 */
    const char *text; /* else the file's bytes, len of them (malloc'd) */
    size_t len;       /* (a regular file: its size, for the index's first size) */
    char *line;       /* fd: a buffer of PIECE bytes to read a line into */
    uint32_t *at;     /* the kept lines' offsets in the file, by address; n of them */
    uint64_t *start;  /* their addresses */
    size_t n, cap;
    uint64_t prev; /* while indexing: the last address kept; whether all came in order */
    int sorted;
    uint64_t lo, hi;    /* the first symbol's start, the last one's end */
    const char **shown; /* per kept line, "NAME\0MODULE\0" once looked up (calloc'd:
                           only the pages of lines looked up are ever touched) */
    struct sf_arena names;
};

/* The address at the start of a line (hex, either case, as perf's hex2u64 reads it),
 * and where it ends. */
static uint64_t hex_at(const char *p, const char *end, const char **stop)
{
    uint64_t a = 0;
    int v;

    for (; p < end && (v = sf_hex_digit((unsigned char)*p)) >= 0; p++)
        a = a << 4 | (uint64_t)v;
    *stop = p;
    return a;
}

/* The line at p (to end) as a symbol perf keeps: its address, or 0 for a line it skips
 * (another type, a hidden address, not a symbol line). */
static uint64_t kept_line(const char *p, const char *end)
{
    const char *q;
    uint64_t a = hex_at(p, end, &q);
    int up;

    if (a == 0 || end - q < 3 || q[0] != ' ' || q[2] != ' ' || q[1] == '\n')
        return 0;
    up = q[1] & ~0x20;
    return up == 'T' || up == 'W' || up == 'D' || up == 'B' ? a : 0;
}

/* ---- the lines as the kernel writes them, eight bytes at a time ------------------------
 * Most of a run that folds kernel frames was this file's index, a line at a time: a
 * 64-bit kernel's lines start with exactly 16 hex digits and a space, which are read
 * here as two words; every other line goes the general way (kept_line). */

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The high bit of each byte of v (all < 0x80) that is in [lo, hi]. */
static inline uint64_t in_range(uint64_t v, unsigned lo, unsigned hi)
{
    return (v + ONES * (0x80 - lo)) & ~(v + ONES * (0x7f - hi)) & HIGHS;
}

/* The eight hex digits at p (either case; p[0] the most significant) as a number in
 * *out, or 0 when one of them is not a hex digit. */
static inline int hex8(const char *p, uint32_t *out)
{
    uint64_t v, n;

    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    if ((v & HIGHS) || (in_range(v, '0', '9') | in_range(v | ONES * 0x20, 'a', 'f')) != HIGHS)
        return 0;
    n = (v & ONES * 0x0f) + 9 * ((v >> 6) & ONES); /* each byte its digit's value */
    n = (n & 0x000f000f000f000full) << 4 | (n >> 8 & 0x000f000f000f000full); /* pairs */
    n = (n & 0x000000ff000000ffull) << 8 | (n >> 16 & 0x000000ff000000ffull);
    *out = (uint32_t)((n & 0xffff) << 16 | (n >> 32 & 0xffff));
    return 1;
}

/* The end of the line at p: its '\n', or end. */
static inline const char *line_end(const char *p, const char *end)
{
    uint64_t v, z;

    for (; end - p >= 8; p += 8) {
        memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        v ^= ONES * '\n';
        if ((z = (v - ONES) & ~v & HIGHS) != 0) /* exact for the first zero byte */
            return p + __builtin_ctzll(z) / 8;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* kept_line for a line "16 HEX DIGITS, T, NAME" (20 bytes at least): its address or 0
 * as kept_line gives it, in *a; 0 when the line is not of that shape. */
static inline int kept_line16(const char *p, const char *end, uint64_t *a)
{
    uint32_t hi, lo;
    int up;

    if (end - p < 20 || p[16] != ' ' || p[18] != ' ' || p[17] == '\n' || !hex8(p, &hi) ||
        !hex8(p + 8, &lo))
        return 0;
    up = p[17] & ~0x20;
    *a = up == 'T' || up == 'W' || up == 'D' || up == 'B' ? (uint64_t)hi << 32 | lo : 0;
    return 1;
}

static int read_all(int fd, struct pf_kallsyms *k)
{
    size_t cap = 1u << 22, len = 0;
    char *b = malloc(cap), *g;
    ssize_t got;

    if (b == NULL)
        return -1;
    for (;;) {
        if (len == cap) {
            if ((g = realloc(b, cap *= 2)) == NULL) {
                free(b);
                return -1;
            }
            b = g;
        }
        if ((got = read(fd, b + len, cap - len)) < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    if (got < 0) {
        free(b);
        return -1;
    }
    k->text = b;
    k->len = len;
    return 0;
}

struct line_at {
    uint64_t start;
    uint32_t at, ord;
};

static int by_start(const void *a, const void *b)
{
    const struct line_at *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Lines not in address order: sorted by address, then as read, and of each address the
 * last one kept.  0, or -1 (no memory). */
static int sort_lines(struct pf_kallsyms *k)
{
    struct line_at *v = malloc(k->n * sizeof(*v));
    size_t kept = 0;

    if (v == NULL)
        return -1;
    for (size_t i = 0; i < k->n; i++)
        v[i] = (struct line_at){k->start[i], k->at[i], (uint32_t)i};
    qsort(v, k->n, sizeof(*v), by_start);
    for (size_t i = 0; i < k->n; i++) {
        if (kept && v[i].start == k->start[kept - 1])
            kept--; /* the later one read at one address is the one named */
        k->start[kept] = v[i].start;
        k->at[kept++] = v[i].at;
    }
    k->n = kept;
    free(v);
    return 0;
}

/* Line p (at offset off in the file) kept at address a. */
static int keep(struct pf_kallsyms *k, uint64_t a, uint64_t off)
{
    /* of a run of lines at one address, the last (perf gives each symbol the next one's
     * start as its end, so only the last of the run has a size, and a sized symbol wins
     * over its unsized aliases) */
    if (k->n && a == k->prev && k->sorted) {
        k->at[k->n - 1] = (uint32_t)off;
        return 0;
    }
    if (k->n == k->cap) {
        size_t nc = k->cap ? 2 * k->cap : k->len / 32 + 1; /* lines of 36 bytes or more */
        uint32_t *g = realloc(k->at, nc * sizeof(*g));
        uint64_t *s = g ? realloc(k->start, nc * sizeof(*s)) : NULL;
        if (g)
            k->at = g;
        if (s == NULL)
            return -1;
        k->start = s;
        sf_prefault(k->at + k->cap, (nc - k->cap) * sizeof(*k->at));
        sf_prefault(k->start + k->cap, (nc - k->cap) * sizeof(*k->start));
        k->cap = nc;
    }
    k->sorted &= k->n == 0 || a > k->prev;
    k->prev = a;
    k->start[k->n] = a;
    k->at[k->n++] = (uint32_t)off;
    return 0;
}

/* The whole lines of [p, end), the bytes at offset off of the file (and the line that
 * ends at end without a newline, when last), into the index.  Returns where the lines
 * it did not take begin (a line cut by end), or NULL: no memory. */
static const char *index_lines(struct pf_kallsyms *k, const char *p, const char *end, uint64_t off,
                               int last)
{
    const char *from = p, *nl;

    for (; p < end; p = nl + 1) {
        uint64_t a;
        if (kept_line16(p, end, &a)) {
            nl = line_end(p + 19, end);
        } else {
            nl = line_end(p, end);
            a = nl < end || last ? kept_line(p, nl) : 0;
        }
        if (nl == end && !last)
            return p; /* the rest of this line is in the next piece */
        if (a && keep(k, a, off + (uint64_t)(p - from)) < 0)
            return NULL;
    }
    return end;
}

/* A regular file through one buffer of PIECE bytes.  0, or -1 with errno set. */
static int index_file(struct pf_kallsyms *k)
{
    char *b = k->line;
    size_t have = 0;
    uint64_t off = 0; /* the file offset of b[0] */
    int skipping = 0; /* inside a line longer than the buffer */

    for (;;) {
        ssize_t got = read(k->fd, b + have, PIECE - have);
        const char *stop;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        have += (size_t)got;
        if (off + have >= UINT32_MAX) { /* offsets are 32-bit: a kallsyms file is some MB */
            errno = EFBIG;
            return -1;
        }
        if (skipping) { /* to the end of the long line */
            const char *nl = memchr(b, '\n', have);
            size_t drop = nl ? (size_t)(nl + 1 - b) : have;
            skipping = nl == NULL;
            memmove(b, b + drop, have - drop);
            off += drop;
            have -= drop;
            if (got > 0)
                continue;
        }
        if ((stop = index_lines(k, b, b + have, off, got == 0)) == NULL) {
            errno = ENOMEM;
            return -1;
        }
        if (got == 0)
            return 0;
        if (stop == b && have == PIECE) { /* one line fills the buffer: skipped */
            skipping = 1;
            stop = b + have;
        }
        memmove(b, stop, have - (size_t)(stop - b));
        off += (uint64_t)(stop - b);
        have -= (size_t)(stop - b);
    }
}

struct pf_kallsyms *pf_ks_load(const char *path)
{
    struct pf_kallsyms *k = calloc(1, sizeof(*k));
    int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
    struct stat st;

    if (k == NULL || fd < 0) {
        e = errno;
        free(k);
        if (fd >= 0)
            close(fd);
        errno = e;
        return NULL;
    }
    sf_arena_init(&k->names, 0, 0);
    k->sorted = 1;
    k->fd = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        k->fd = fd;
        k->len = (size_t)st.st_size; /* for the index's first size */
        if ((k->line = malloc(PIECE)) == NULL || index_file(k) < 0)
            e = k->line ? errno : ENOMEM;
    } else {
        if (read_all(fd, k) < 0 || k->len >= UINT32_MAX)
            e = k->len >= UINT32_MAX ? EFBIG : errno;
        else if (index_lines(k, k->text, k->text + k->len, 0, 1) == NULL)
            e = ENOMEM;
        close(fd);
    }
    if (e == 0 && !k->sorted && sort_lines(k) < 0)
        e = ENOMEM;
    if (e == 0 && k->n && (k->shown = calloc(k->n, sizeof(*k->shown))) == NULL)
        e = ENOMEM;
    if (e) {
        pf_ks_free(k);
        errno = e;
        return NULL;
    }
    if (k->n) {
        k->lo = k->start[0];
        k->hi = ((k->start[k->n - 1] + 4095) & ~(uint64_t)4095) + 4096;
    }
    return k;
}

size_t pf_ks_count(const struct pf_kallsyms *k)
{
    return k->n;
}

/* Kept line i: its bytes, to its newline or the end of the file, in *end. */
static const char *line_of(struct pf_kallsyms *k, size_t i, const char **end)
{
    const char *nl;
    ssize_t got;
    size_t want = 640; /* a kernel's line; a longer one is read again whole */

    if (k->fd < 0) {
        const char *p = k->text + k->at[i], *e = k->text + k->len;
        *end = (nl = memchr(p, '\n', (size_t)(e - p))) ? nl : e;
        return p;
    }
    for (;;) {
        while ((got = pread(k->fd, k->line, want, (off_t)k->at[i])) < 0 && errno == EINTR)
            ;
        if (got < 0)
            return NULL;
        if ((nl = memchr(k->line, '\n', (size_t)got)) != NULL || (size_t)got < want ||
            want == PIECE) {
            *end = nl ? nl : k->line + got;
            return k->line;
        }
        want = PIECE;
    }
}

/* Kept line i's name and module as "NAME\0MODULE\0" (MODULE "" for the kernel). */
static const char *shown(struct pf_kallsyms *k, size_t i)
{
    const char *p, *nl, *tab, *name;
    size_t nlen, mlen = 0;
    char *s;

    if (k->shown[i])
        return k->shown[i];
    if ((p = line_of(k, i, &nl)) == NULL)
        return NULL;
    while (*p != ' ') /* the address, then " T " */
        p++;
    name = p + 3;
    tab = memchr(name, '\t', (size_t)(nl - name));
    nlen = (size_t)((tab ? tab : nl) - name);
    if (tab)
        mlen = (size_t)(nl - tab - 1);
    if ((s = sf_arena_alloc(&k->names, nlen + mlen + 2)) == NULL)
        return NULL;
    memcpy(s, name, nlen);
    s[nlen] = 0;
    memcpy(s + nlen + 1, tab ? tab + 1 : "", mlen);
    s[nlen + 1 + mlen] = 0;
    return k->shown[i] = s;
}

int pf_ks_find(struct pf_kallsyms *k, uint64_t addr, const char **name, const char **module)
{
    size_t lo = 0, hi = k->n;
    const char *s;

    if (k->n == 0 || addr < k->lo || addr >= k->hi)
        return 0;
    while (lo < hi) { /* the first symbol starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (k->start[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) /* below the first: cannot be, addr >= lo */
        return 0;
    if ((s = shown(k, lo - 1)) == NULL)
        return -1;
    *name = s;
    s += strlen(s) + 1;
    *module = *s ? s : NULL;
    return 1;
}

void pf_ks_free(struct pf_kallsyms *k)
{
    if (k == NULL)
        return;
    if (k->fd >= 0)
        close(k->fd);
    free((char *)k->text);
    free(k->line);
    free(k->at);
    free(k->start);
    free(k->shown);
    sf_arena_free(&k->names);
    free(k);
}

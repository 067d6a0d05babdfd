/* sf_perfdata.c - perf.data read directly (sf_perfdata.h).
 *
 * Values are read in the host's order and swapped when the magic says the file was
 * written in the other one ("PERFILE2" read backwards); each field is read at its own
 * width, which is all a swap needs (perf itself swaps u64 words and then fixes up the
 * u32 pairs).  The data section of a regular file is mapped whole, so that records are
 * read where they lie, not copied (sf_pd_stable); a pipe's is read through a buffer that
 * holds at least one whole record (a record is at most 64 KiB: its size is 16 bits).
 */
#include "sf_perfdata.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "sf_rd.h"

#define MAGIC2    UINT64_C(0x32454c4946524550) /* "PERFILE2" little-endian */
#define FILE_HDR  104
#define PIPE_HDR  16
#define BUF_SIZE  (1u << 20)
#define ATTR_MIN  64 /* PERF_ATTR_SIZE_VER0 */
#define FEAT_BITS 256

/* feature numbers (perf's header.h) */
enum {
    F_TRACING_DATA = 1,
    F_BUILD_ID = 2,
    F_HOSTNAME = 3,
    F_OSRELEASE = 4,
    F_VERSION = 5,
    F_ARCH = 6,
    F_NRCPUS = 7,
    F_CMDLINE = 11,
    F_EVENT_DESC = 12
};

#define MISC_COMM_EXEC     (1u << 13)
#define TRACING_DATA_MAX   (64u << 20) /* the tracepoints' formats: some KiB in practice */
#define MISC_MMAP_BUILD_ID (1u << 14)

struct sf_pd {
    FILE *f;
    int own; /* f is ours to close */
    struct sf_pd_info info;
    uint64_t off;    /* input offset of buf[0] */
    uint8_t *buf;    /* mem, or the data section in map */
    size_t len, pos; /* bytes held, next record */
    uint8_t *mem;    /* the buffer a pipe is read through */
    void *map;       /* a regular file, mapped whole (maplen bytes), or NULL */
    size_t maplen;
    uint64_t end; /* file mode: one past the data section; pipe: UINT64_MAX */
    int eof;
    int id_pos;      /* SAMPLE: u64 index of the id when no IDENTIFIER (-1: none) */
    int trailer_id;  /* sample_id trailers end in the id (IDENTIFIER) */
    int attrs_ready; /* attrs_done ran (pipe mode: at the first record after the attrs) */
};

static uint16_t sw16(uint16_t v)
{
    return (uint16_t)(v << 8 | v >> 8);
}

static uint32_t sw32(uint32_t v)
{
    return (v << 24) | ((v << 8) & 0xff0000u) | ((v >> 8) & 0xff00u) | (v >> 24);
}

static uint64_t sw64(uint64_t v)
{
    return (uint64_t)sw32((uint32_t)v) << 32 | sw32((uint32_t)(v >> 32));
}

static inline __attribute__((always_inline)) uint16_t r16(struct sf_rd *rd, int swap)
{
    const uint8_t *p = sf_rd_bytes(rd, 2);
    uint16_t v = 0;

    if (p)
        memcpy(&v, p, 2);
    return swap ? sw16(v) : v;
}

static inline __attribute__((always_inline)) uint32_t r32(struct sf_rd *rd, int swap)
{
    const uint8_t *p = sf_rd_bytes(rd, 4);
    uint32_t v = 0;

    if (p)
        memcpy(&v, p, 4);
    return swap ? sw32(v) : v;
}

static inline __attribute__((always_inline)) uint64_t r64(struct sf_rd *rd, int swap)
{
    const uint8_t *p = sf_rd_bytes(rd, 8);
    uint64_t v = 0;

    if (p)
        memcpy(&v, p, 8);
    return swap ? sw64(v) : v;
}

/* A NUL-padded string field of n bytes into out (cap bytes, cut, NUL-terminated). */
static void rstr(struct sf_rd *rd, size_t n, char *out, size_t cap)
{
    const uint8_t *p = sf_rd_bytes(rd, n);
    size_t l = 0;

    if (p)
        while (l < n && l < cap - 1 && p[l])
            l++;
    if (p)
        memcpy(out, p, l);
    out[l] = 0;
}

int sf_pd_user_reg(const struct sf_pd *pd, const struct sf_pd_sample *s, int reg, uint64_t *v)
{
    uint64_t mask = s->attr ? s->attr->sample_regs_user : 0, x;
    int k;

    if (s->regs == NULL || reg < 0 || reg > 63 || !(mask >> reg & 1))
        return -1;
    k = __builtin_popcountll(mask & ((UINT64_C(1) << reg) - 1));
    memcpy(&x, s->regs + 8 * k, 8);
    *v = pd->info.swapped ? sw64(x) : x;
    return 0;
}

uint64_t sf_pd_chain_ip(const struct sf_pd *pd, const struct sf_pd_sample *s, uint64_t i)
{
    uint64_t v;

    memcpy(&v, s->chain + 8 * i, 8);
    return pd->info.swapped ? sw64(v) : v;
}

const struct sf_pd_info *sf_pd_info(const struct sf_pd *pd)
{
    return &pd->info;
}

/* ---- input ------------------------------------------------------------------------- */

static int read_at(struct sf_pd *pd, uint64_t off, void *dst, size_t n, struct sf_err *err)
{
    if (fseeko(pd->f, (off_t)off, SEEK_SET) != 0 || fread(dst, 1, n, pd->f) != n)
        return sf_err_set(err, ferror(pd->f) ? SF_E_IO : SF_E_TRUNC, off,
                          "perf.data: %zu bytes at offset %llu are not there", n,
                          (unsigned long long)off);
    return 0;
}

/* At least n bytes at pd->pos (fewer only at the end of the data): 0, or SF_E_IO. */
static int fill(struct sf_pd *pd, size_t n, struct sf_err *err)
{
    size_t got, want;

    if (pd->len - pd->pos >= n || pd->eof)
        return 0;
    memmove(pd->buf, pd->buf + pd->pos, pd->len - pd->pos);
    pd->off += pd->pos;
    pd->len -= pd->pos;
    pd->pos = 0;
    want = BUF_SIZE - pd->len;
    if (pd->end != UINT64_MAX && pd->off + pd->len + want > pd->end)
        want = (size_t)(pd->end - pd->off - pd->len);
    got = fread(pd->buf + pd->len, 1, want, pd->f);
    pd->len += got;
    if (got < want || (pd->end != UINT64_MAX && pd->off + pd->len >= pd->end)) {
        if (ferror(pd->f))
            return sf_err_set(err, SF_E_IO, pd->off + pd->len, "perf.data: read: %s",
                              strerror(errno));
        pd->eof = 1;
    }
    return 0;
}

/* ---- attrs and features ----------------------------------------------------------- */

/* One perf_event_attr of size sz (at least ATTR_MIN) from rd into a. */
static void read_attr(struct sf_rd *rd, size_t sz, int swap, struct sf_pd_attr *a)
{
    struct sf_rd r = sf_rd_sub(rd, sz);

    memset(a, 0, sizeof(*a));
    a->type = r32(&r, swap);
    (void)r32(&r, swap); /* size */
    a->config = r64(&r, swap);
    a->sample_period = r64(&r, swap);
    a->sample_type = r64(&r, swap);
    a->read_format = r64(&r, swap);
    a->flags = r64(&r, swap);
    /* bit fields in a u64: a swapped file's are mirrored in each byte, as perf notes; the
     * two read here sit where a swapped reader expects them */
    a->freq = (int)(a->flags >> 10 & 1);
    a->sample_id_all = (int)(a->flags >> 18 & 1);
    if (sf_rd_left(&r) >= 8 + 8 + 8 + 8) {
        (void)r32(&r, swap); /* wakeup_events */
        (void)r32(&r, swap); /* bp_type */
        (void)r64(&r, swap); /* config1 */
        (void)r64(&r, swap); /* config2 */
        a->branch_sample_type = r64(&r, swap);
    }
    if (sf_rd_left(&r) >= 8 + 4) {
        a->sample_regs_user = r64(&r, swap);
        a->sample_stack_user = r32(&r, swap);
    }
    a->use_clockid = (int)(a->flags >> 25 & 1);
    if (sf_rd_left(&r) >= 4)
        a->clockid = (int32_t)r32(&r, swap);
}

static int add_ids(struct sf_pd_attr *a, struct sf_rd *rd, size_t n, int swap)
{
    if (n == 0)
        return 0;
    if (n > SIZE_MAX / 8 || (a->ids = calloc(n, sizeof(*a->ids))) == NULL)
        return SF_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        a->ids[i] = r64(rd, swap);
    a->nids = n;
    return 0;
}

/* A perf_header_string: u32 len, then len bytes (NUL-padded). */
static void feat_string(struct sf_rd *rd, int swap, char *out, size_t cap)
{
    uint32_t len = r32(rd, swap);

    rstr(rd, len, out, cap);
}

static void feat_event_desc(struct sf_pd *pd, struct sf_rd *rd)
{
    int sw = pd->info.swapped;
    uint32_t nr = r32(rd, sw), asz = r32(rd, sw);

    for (uint32_t i = 0; i < nr && !rd->err; i++) {
        struct sf_pd_attr a;
        uint32_t nids;
        char name[128];
        if (asz < ATTR_MIN)
            break;
        read_attr(rd, asz, sw, &a);
        nids = r32(rd, sw);
        feat_string(rd, sw, name, sizeof(name));
        /* the event whose first id is this one's gets its name */
        for (uint32_t k = 0; k < nids && !rd->err; k++) {
            uint64_t id = r64(rd, sw);
            for (size_t e = 0; e < pd->info.nattr; e++)
                for (size_t x = 0; x < pd->info.attr[e].nids; x++)
                    if (pd->info.attr[e].ids[x] == id && !pd->info.attr[e].name[0])
                        snprintf(pd->info.attr[e].name, sizeof(pd->info.attr[e].name), "%s", name);
        }
        if (pd->info.nattr == 1 && !pd->info.attr[0].name[0]) /* no ids in the file */
            snprintf(pd->info.attr[0].name, sizeof(pd->info.attr[0].name), "%s", name);
    }
}

/* Build id records (struct perf_record_header_build_id: header, pid, id[24] whose byte 20
 * is its size when the header's misc has bit 15, the file name NUL-padded to the record's
 * size), one after another in rd. */
static void build_ids(struct sf_pd *pd, struct sf_rd *rd)
{
    int sw = pd->info.swapped;

    while (sf_rd_left(rd) >= 8 + 4 + 24 && !rd->err) {
        struct sf_pd_buildid *b;
        struct sf_rd rec;
        uint16_t misc, size;
        const uint8_t *id;
        size_t nl;
        (void)r32(rd, sw); /* type */
        misc = r16(rd, sw);
        size = r16(rd, sw);
        if (size < 8 + 4 + 24 || size - 8u > sf_rd_left(rd))
            break;
        rec = sf_rd_sub(rd, size - 8u);
        if (pd->info.nbuildids == SF_PD_MAX_BUILDIDS)
            continue;
        if (pd->info.nbuildids % 64 == 0) {
            struct sf_pd_buildid *g =
                realloc(pd->info.buildids, (pd->info.nbuildids + 64) * sizeof(*g));
            if (g == NULL)
                return;
            pd->info.buildids = g;
        }
        b = &pd->info.buildids[pd->info.nbuildids];
        b->pid = (int32_t)r32(&rec, sw);
        if ((id = sf_rd_bytes(&rec, 24)) == NULL)
            break;
        memcpy(b->id, id, 20);
        b->size = (misc & (1u << 15)) && id[20] <= 20 ? id[20] : 20;
        nl = strnlen((const char *)rec.p, sf_rd_left(&rec));
        if ((b->filename = malloc(nl + 1)) == NULL)
            return;
        memcpy(b->filename, rec.p, nl);
        b->filename[nl] = 0;
        pd->info.nbuildids++;
    }
}

/* One feature section's body (file mode) or a HEADER_FEATURE record's (pipe mode). */
static void feature(struct sf_pd *pd, int feat, struct sf_rd *rd)
{
    struct sf_pd_info *in = &pd->info;
    int sw = in->swapped;

    switch (feat) {
    case F_HOSTNAME:
        feat_string(rd, sw, in->hostname, sizeof(in->hostname));
        break;
    case F_OSRELEASE:
        feat_string(rd, sw, in->os_release, sizeof(in->os_release));
        break;
    case F_VERSION:
        feat_string(rd, sw, in->version, sizeof(in->version));
        break;
    case F_ARCH:
        feat_string(rd, sw, in->arch, sizeof(in->arch));
        break;
    case F_NRCPUS:
        in->nrcpus_avail = r32(rd, sw); /* nr_cpus_available, then nr_cpus_online */
        in->nrcpus_online = r32(rd, sw);
        break;
    case F_CMDLINE: {
        uint32_t n = r32(rd, sw);
        size_t used = 0;
        for (uint32_t i = 0; i < n && !rd->err; i++) {
            char arg[1024];
            feat_string(rd, sw, arg, sizeof(arg));
            used += (size_t)snprintf(in->cmdline + used, sizeof(in->cmdline) - used, "%s%s",
                                     i ? " " : "", arg);
            if (used >= sizeof(in->cmdline))
                used = sizeof(in->cmdline) - 1;
        }
        break;
    }
    case F_EVENT_DESC:
        feat_event_desc(pd, rd);
        break;
    case F_BUILD_ID:
        build_ids(pd, rd);
        break;
    default:
        break;
    }
}

static int read_features(struct sf_pd *pd, const uint8_t *bitmap, uint64_t at, struct sf_err *err)
{
    int sw = pd->info.swapped;
    uint64_t bits[FEAT_BITS / 64];

    for (int w = 0; w < FEAT_BITS / 64; w++) {
        memcpy(&bits[w], bitmap + 8 * w, 8);
        if (sw)
            bits[w] = sw64(bits[w]);
    }
    for (int b = 0; b < FEAT_BITS; b++) {
        uint8_t sec[16];
        struct sf_rd rd;
        uint64_t off, size;
        uint8_t *body;
        if (!(bits[b / 64] >> (b % 64) & 1))
            continue;
        if (read_at(pd, at, sec, sizeof(sec), err) < 0) {
            sf_err_clear(err); /* a file cut short: its data is read up to the cut */
            return 0;
        }
        at += sizeof(sec);
        sf_rd_init(&rd, sec, sizeof(sec), 0);
        off = r64(&rd, sw);
        size = r64(&rd, sw);
        if (size == 0 || size > TRACING_DATA_MAX ||
            !(b == F_TRACING_DATA || b == F_BUILD_ID || b == F_HOSTNAME || b == F_OSRELEASE ||
              b == F_VERSION || b == F_ARCH || b == F_NRCPUS || b == F_CMDLINE ||
              b == F_EVENT_DESC))
            continue;
        if ((body = malloc(size)) == NULL)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "perf.data: out of memory");
        if (read_at(pd, off, body, size, err) == 0 && b == F_TRACING_DATA) {
            free(pd->info.tracing);
            pd->info.tracing = body; /* kept whole: the caller parses it */
            pd->info.tracing_size = (size_t)size;
            body = NULL;
        } else if (err->code == 0) {
            sf_rd_init(&rd, body, size, off);
            feature(pd, b, &rd);
        }
        free(body);
        sf_err_clear(err); /* a feature that is not there loses its facts, not the data */
    }
    return 0;
}

/* Where a SAMPLE's id sits when it has no IDENTIFIER: after the fields before ID. */
static int id_pos_of(uint64_t st)
{
    int k = 0;

    if (!(st & SF_PD_S_ID))
        return -1;
    k += !!(st & SF_PD_S_IP) + !!(st & SF_PD_S_TID) + !!(st & SF_PD_S_TIME) + !!(st & SF_PD_S_ADDR);
    return k;
}

static int attrs_done(struct sf_pd *pd, struct sf_err *err)
{
    if (pd->info.nattr == 0)
        return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "perf.data: no events described");
    pd->attrs_ready = 1;
    pd->id_pos = id_pos_of(pd->info.attr[0].sample_type);
    pd->trailer_id = (pd->info.attr[0].sample_type & SF_PD_S_IDENTIFIER) != 0;
    for (size_t i = 1; i < pd->info.nattr; i++)
        if (!(pd->info.attr[i].sample_type & SF_PD_S_IDENTIFIER) &&
            id_pos_of(pd->info.attr[i].sample_type) != pd->id_pos)
            return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX,
                              "perf.data: events whose samples cannot be told apart (no id "
                              "at one place)");
    return 0;
}

/* A regular file's data section read where it lies: the whole file mapped, the buffer
 * its data section (or what of it the file holds: a cut file ends early, as a read
 * would).  Left to the buffered reads when the file cannot be mapped. */
static void map_data(struct sf_pd *pd)
{
    struct stat st;
    uint64_t stop;
    void *m;

    if (fstat(fileno(pd->f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX || pd->off > (uint64_t)st.st_size)
        return;
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(pd->f), 0);
    if (m == MAP_FAILED)
        return;
    (void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    pd->map = m;
    pd->maplen = (size_t)st.st_size;
    pd->buf = (uint8_t *)m + pd->off;
    stop = pd->end >= pd->off && pd->end < (uint64_t)st.st_size ? pd->end : (uint64_t)st.st_size;
    pd->len = (size_t)(stop - pd->off);
    pd->pos = 0;
    pd->eof = 1;
}

int sf_pd_stable(const struct sf_pd *pd)
{
    return pd->map != NULL;
}

static int open_file(struct sf_pd *pd, const uint8_t *h, struct sf_err *err)
{
    struct sf_rd rd;
    int sw = pd->info.swapped;
    uint64_t hsize, asz, aoff, alen, doff, dlen;

    sf_rd_init(&rd, h, FILE_HDR, 0);
    (void)r64(&rd, sw); /* magic */
    hsize = r64(&rd, sw);
    asz = r64(&rd, sw);
    aoff = r64(&rd, sw);
    alen = r64(&rd, sw);
    doff = r64(&rd, sw);
    dlen = r64(&rd, sw);
    if (hsize < FILE_HDR || asz < ATTR_MIN + 16 || asz > 4096 || alen % asz != 0 ||
        alen / asz > SF_PD_MAX_ATTRS)
        return sf_err_set(err, SF_E_MALFORMED, 8, "perf.data: bad file header");
    for (uint64_t i = 0; i < alen / asz; i++) {
        uint8_t a[4096];
        struct sf_pd_attr *at = &pd->info.attr[pd->info.nattr];
        struct sf_rd ar;
        uint64_t ioff, ilen;
        int rc;
        if ((rc = read_at(pd, aoff + i * asz, a, asz, err)) < 0)
            return rc;
        sf_rd_init(&ar, a, asz, aoff + i * asz);
        read_attr(&ar, asz - 16, sw, at);
        ioff = r64(&ar, sw);
        ilen = r64(&ar, sw);
        pd->info.nattr++;
        if (ilen % 8 != 0 || ilen > (8u << 20))
            return sf_err_set(err, SF_E_MALFORMED, aoff + i * asz, "perf.data: bad id list");
        if (ilen) {
            uint8_t *ids = malloc(ilen);
            struct sf_rd ir;
            if (ids == NULL)
                return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "perf.data: out of memory");
            if ((rc = read_at(pd, ioff, ids, ilen, err)) == 0) {
                sf_rd_init(&ir, ids, ilen, ioff);
                rc = add_ids(at, &ir, ilen / 8, sw);
            }
            free(ids);
            if (rc < 0)
                return rc == SF_E_NOMEM ? sf_err_set(err, rc, UINT64_MAX, "out of memory") : rc;
        }
    }
    pd->info.data_offset = doff;
    pd->info.data_size = dlen;
    if (read_features(pd, h + 72, doff + dlen, err) < 0)
        return err->code;
    if (fseeko(pd->f, (off_t)doff, SEEK_SET) != 0)
        return sf_err_set(err, SF_E_IO, doff, "perf.data: seek: %s", strerror(errno));
    pd->off = doff;
    pd->end = doff + dlen;
    map_data(pd);
    return attrs_done(pd, err);
}

static int start(struct sf_pd *pd, struct sf_err *err)
{
    uint8_t h[FILE_HDR];
    uint64_t magic, size;
    size_t got = fread(h, 1, PIPE_HDR, pd->f);

    memcpy(&magic, h, 8);
    if (got < PIPE_HDR || (magic != MAGIC2 && magic != sw64(MAGIC2)))
        return sf_err_set(err, got < 8 ? SF_E_TRUNC : SF_E_MALFORMED, 0,
                          "not a perf.data file (no PERFILE2 magic)");
    pd->info.swapped = magic != MAGIC2;
    memcpy(&size, h + 8, 8);
    if (pd->info.swapped)
        size = sw64(size);
    if (size == PIPE_HDR) {
        pd->info.pipe = 1;
        pd->off = PIPE_HDR;
        pd->end = UINT64_MAX;
        return 0; /* the attrs come as records; attrs_done runs at the first data record */
    }
    if (fread(h + PIPE_HDR, 1, FILE_HDR - PIPE_HDR, pd->f) != FILE_HDR - PIPE_HDR)
        return sf_err_set(err, SF_E_TRUNC, PIPE_HDR, "perf.data: file header cut short");
    return open_file(pd, h, err);
}

static int open_on(struct sf_pd **out, FILE *f, int own, struct sf_err *err)
{
    struct sf_pd *pd = calloc(1, sizeof(*pd));
    int rc;

    *out = NULL;
    if (pd == NULL || (pd->buf = pd->mem = malloc(BUF_SIZE)) == NULL) {
        free(pd);
        if (own)
            fclose(f);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    pd->f = f;
    pd->own = own;
    if ((rc = start(pd, err)) < 0) {
        sf_pd_close(pd);
        return rc;
    }
    *out = pd;
    return 0;
}

int sf_pd_open_stream(struct sf_pd **out, FILE *f, struct sf_err *err)
{
    return open_on(out, f, 0, err);
}

int sf_pd_open(struct sf_pd **out, const char *path, struct sf_err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");

    *out = NULL;
    if (f == NULL)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "%s", strerror(errno));
    return open_on(out, f, f != stdin, err);
}

void sf_pd_close(struct sf_pd *pd)
{
    if (pd == NULL)
        return;
    for (size_t i = 0; i < pd->info.nattr; i++)
        free(pd->info.attr[i].ids);
    free(pd->info.tracing);
    for (size_t i = 0; i < pd->info.nbuildids; i++)
        free(pd->info.buildids[i].filename);
    free(pd->info.buildids);
    if (pd->own && pd->f)
        fclose(pd->f);
    if (pd->map)
        munmap(pd->map, pd->maplen);
    free(pd->mem);
    free(pd);
}

/* ---- records ----------------------------------------------------------------------- */

static const struct sf_pd_attr *attr_of(const struct sf_pd *pd, uint64_t id, int known)
{
    if (!known || pd->info.nattr == 1)
        return &pd->info.attr[0];
    for (size_t e = 0; e < pd->info.nattr; e++)
        for (size_t x = 0; x < pd->info.attr[e].nids; x++)
            if (pd->info.attr[e].ids[x] == id)
                return &pd->info.attr[e];
    return NULL;
}

/* The sample_id trailer at the end of a non-sample record's body rd. */
static void trailer(struct sf_pd *pd, struct sf_rd *rd, struct sf_pd_record *r)
{
    int sw = pd->info.swapped;
    const struct sf_pd_attr *a;
    uint64_t st, id = 0;
    size_t n, left = sf_rd_left(rd);
    struct sf_rd t;

    if (pd->info.nattr == 0 || !pd->info.attr[0].sample_id_all)
        return;
    /* the id, hence the event, is the trailer's last u64 with IDENTIFIER */
    if (pd->trailer_id && left >= 8) {
        struct sf_rd last = *rd;
        sf_rd_skip(&last, left - 8);
        id = r64(&last, sw);
    }
    if ((a = attr_of(pd, id, pd->trailer_id)) == NULL)
        return;
    st = a->sample_type;
    n = 8 * (!!(st & SF_PD_S_TID) + !!(st & SF_PD_S_TIME) + !!(st & SF_PD_S_ID) +
             !!(st & SF_PD_S_STREAM_ID) + !!(st & SF_PD_S_CPU) + !!(st & SF_PD_S_IDENTIFIER));
    if (n == 0 || left < n)
        return;
    t = *rd;
    sf_rd_skip(&t, left - n);
    if (st & SF_PD_S_TID) {
        r->pid = r32(&t, sw);
        r->tid = r32(&t, sw);
    }
    if (st & SF_PD_S_TIME)
        r->time = r64(&t, sw);
    if (st & SF_PD_S_ID)
        r->id = r64(&t, sw);
    if (st & SF_PD_S_STREAM_ID)
        (void)r64(&t, sw);
    if (st & SF_PD_S_CPU) {
        r->cpu = r32(&t, sw);
        (void)r32(&t, sw);
    }
    r->has_id = !t.err;
}

/* *s zeroed with stores: each field's (a compound literal, a memset or a loop became a rep
 * stos, whose start-up was a seventh of the reading of a sample) */
static inline void zero_sample(struct sf_pd_sample *s)
{
    /* a field added to struct sf_pd_sample must be zeroed here too (LP64 size) */
    _Static_assert(sizeof(void *) != 8 || sizeof(*s) == 144, "zero_sample: every field");
    s->id = s->ip = s->time = s->addr = s->period = s->stream_id = 0;
    s->pid = s->tid = s->cpu = 0;
    s->nr = 0;
    s->chain = NULL;
    s->raw_size = 0;
    s->raw = NULL;
    s->regs_abi = 0;
    s->nregs = 0;
    s->regs = s->stack = NULL;
    s->stack_size = 0;
}

static int sample(struct sf_pd *pd, struct sf_rd *rd, struct sf_pd_record *r, struct sf_err *err)
{
    struct sf_pd_sample *s = &r->u.sample;
    int sw = pd->info.swapped;
    const struct sf_pd_attr *a;
    uint64_t st, id = 0;
    int known = 0;

    if (pd->info.attr[0].sample_type & SF_PD_S_IDENTIFIER) {
        struct sf_rd p = *rd;
        id = r64(&p, sw);
        known = !p.err;
    } else if (pd->id_pos >= 0) {
        struct sf_rd p = *rd;
        sf_rd_skip(&p, 8 * (size_t)pd->id_pos);
        id = r64(&p, sw);
        known = !p.err;
    }
    if ((a = attr_of(pd, id, known)) == NULL)
        return sf_err_set(err, SF_E_MALFORMED, r->off, "perf.data: a sample of no event (id %llu)",
                          (unsigned long long)id);
    st = a->sample_type;
    zero_sample(s); /* per sample: stores, not the rep stos a compound literal became */
    s->attr = a;
    if (st & SF_PD_S_IDENTIFIER)
        s->id = r64(rd, sw);
    if (st & SF_PD_S_IP)
        s->ip = r64(rd, sw);
    if (st & SF_PD_S_TID) {
        s->pid = r32(rd, sw);
        s->tid = r32(rd, sw);
    }
    if (st & SF_PD_S_TIME)
        s->time = r64(rd, sw);
    if (st & SF_PD_S_ADDR)
        s->addr = r64(rd, sw);
    if (st & SF_PD_S_ID)
        s->id = r64(rd, sw);
    if (st & SF_PD_S_STREAM_ID)
        s->stream_id = r64(rd, sw);
    if (st & SF_PD_S_CPU) {
        s->cpu = r32(rd, sw);
        (void)r32(rd, sw);
    }
    /* without PERIOD a sample weighs the event's fixed period (perf record -c) */
    s->period = a->freq ? 1 : a->sample_period;
    if (st & SF_PD_S_PERIOD)
        s->period = r64(rd, sw);
    if (st & SF_PD_S_READ) { /* read_format: GROUP 8, TOTAL_TIME_ENABLED 1, RUNNING 2, ID 4,
                                LOST 16 */
        uint64_t rf = a->read_format, one = 8 * (1 + !!(rf & 4) + !!(rf & 16));
        if (rf & 8) {
            uint64_t nr = r64(rd, sw);
            sf_rd_skip(rd, 8 * (!!(rf & 1) + !!(rf & 2)));
            if (nr > 65536 || !sf_rd_skip(rd, (size_t)(nr * one)))
                rd->err = 1;
        } else {
            sf_rd_skip(rd, 8 * (1 + !!(rf & 1) + !!(rf & 2) + !!(rf & 4) + !!(rf & 16)));
        }
    }
    if (st & SF_PD_S_CALLCHAIN) {
        s->nr = r64(rd, sw);
        if (s->nr > 65536 || (s->chain = sf_rd_bytes(rd, (size_t)(8 * s->nr))) == NULL)
            rd->err = 1;
    }
    if (st & SF_PD_S_RAW) {
        s->raw_size = r32(rd, sw);
        s->raw = sf_rd_bytes(rd, s->raw_size);
    }
    if (st & SF_PD_S_BRANCH_STACK) { /* nr, [hw_idx], nr x {from, to, flags} */
        uint64_t nr = r64(rd, sw);
        if (a->branch_sample_type & (1u << 17)) /* PERF_SAMPLE_BRANCH_HW_INDEX */
            (void)r64(rd, sw);
        if (nr > 65536 || !sf_rd_skip(rd, (size_t)(24 * nr)))
            rd->err = 1;
    }
    if (st & SF_PD_S_REGS_USER) { /* abi, then one u64 per bit of sample_regs_user */
        s->regs_abi = r64(rd, sw);
        if (s->regs_abi) {
            s->nregs = (uint32_t)__builtin_popcountll(a->sample_regs_user);
            if ((s->regs = sf_rd_bytes(rd, 8u * s->nregs)) == NULL)
                rd->err = 1;
        }
    }
    if (st & SF_PD_S_STACK_USER) { /* size, the bytes, and when any the bytes used */
        uint64_t size = r64(rd, sw);
        if (size > 65536 * 8 || (size && (s->stack = sf_rd_bytes(rd, (size_t)size)) == NULL))
            rd->err = 1;
        else if (size) {
            uint64_t dyn = r64(rd, sw); /* what the kernel could copy of it */
            s->stack_size = (size_t)(dyn < size ? dyn : size);
        }
    }
    r->has_id = 1;
    r->pid = s->pid;
    r->tid = s->tid;
    r->cpu = s->cpu;
    r->time = s->time;
    r->id = s->id;
    if (rd->err)
        return sf_err_set(err, SF_E_MALFORMED, r->off,
                          "perf.data: a sample longer than its record (%u bytes)", r->size);
    return 0;
}

static int header_attr(struct sf_pd *pd, struct sf_rd *rd, struct sf_pd_record *r,
                       struct sf_err *err)
{
    int sw = pd->info.swapped;
    struct sf_rd p = *rd;
    uint32_t asz;
    struct sf_pd_attr *a;

    (void)r32(&p, sw);
    asz = r32(&p, sw);
    if (asz < ATTR_MIN || asz > sf_rd_left(rd) || pd->info.nattr == SF_PD_MAX_ATTRS)
        return sf_err_set(err, SF_E_MALFORMED, r->off, "perf.data: bad HEADER_ATTR");
    a = &pd->info.attr[pd->info.nattr++];
    read_attr(rd, asz, sw, a);
    if (add_ids(a, rd, sf_rd_left(rd) / 8, sw) < 0)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    return 0;
}

/* Pipe mode's HEADER_TRACING_DATA: its size bytes follow the record, outside its size. */
static int tracing_data(struct sf_pd *pd, uint32_t size, const struct sf_pd_record *r,
                        struct sf_err *err)
{
    uint8_t *t;
    size_t got = 0;
    int rc;

    if (size > TRACING_DATA_MAX || (size_t)size % 8 != 0)
        return sf_err_set(err, SF_E_MALFORMED, r->off,
                          "perf.data: tracing data of %u bytes (at most %u, 8-byte aligned)", size,
                          TRACING_DATA_MAX);
    if ((t = malloc(size ? size : 1)) == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    while (got < size) {
        size_t k;
        if ((rc = fill(pd, 1, err)) < 0) {
            free(t);
            return rc;
        }
        if ((k = pd->len - pd->pos) == 0) {
            free(t);
            return sf_err_set(err, SF_E_TRUNC, pd->off + pd->pos,
                              "perf.data: the data ends inside the tracing data (%u bytes)", size);
        }
        if (k > size - got)
            k = size - got;
        memcpy(t + got, pd->buf + pd->pos, k);
        pd->pos += k;
        got += k;
    }
    free(pd->info.tracing);
    pd->info.tracing = t;
    pd->info.tracing_size = size;
    return 0;
}

int sf_pd_next(struct sf_pd *pd, struct sf_pd_record *r, struct sf_err *err)
{
    int sw = pd->info.swapped;
    struct sf_rd hd, rd;
    uint16_t size;
    int rc;

    if ((rc = fill(pd, 8, err)) < 0)
        return rc;
    if (pd->len - pd->pos == 0)
        return 0;
    if (pd->len - pd->pos < 8)
        return sf_err_set(err, SF_E_TRUNC, pd->off + pd->pos,
                          "perf.data: the data ends inside a record header");
    sf_rd_init(&hd, pd->buf + pd->pos, 8, pd->off + pd->pos);
    memset(r, 0, offsetof(struct sf_pd_record, u));
    r->off = pd->off + pd->pos;
    r->type = r32(&hd, sw);
    r->misc = r16(&hd, sw);
    r->size = size = r16(&hd, sw);
    if (size < 8)
        return sf_err_set(err, SF_E_MALFORMED, r->off, "perf.data: a record of %u bytes", size);
    if ((rc = fill(pd, size, err)) < 0)
        return rc;
    if (pd->len - pd->pos < size)
        return sf_err_set(err, SF_E_TRUNC, r->off,
                          "perf.data: the data ends inside a record (%u bytes)", size);
    sf_rd_init(&rd, pd->buf + pd->pos + 8, size - 8u, r->off + 8);
    pd->pos += size;
    /* the records are read in order: the bytes a few records on asked for now (a mapped
     * file's page is not prefetched by the processor across its boundary) */
    if (pd->len - pd->pos > 1024)
        __builtin_prefetch(pd->buf + pd->pos + 1024);
    /* pipe mode: the events are all described before the first record of the data */
    if (!pd->attrs_ready && r->type < SF_PD_HEADER_ATTR && pd->info.nattr > 0 &&
        (rc = attrs_done(pd, err)) < 0)
        return rc;
    switch (r->type) {
    case SF_PD_SAMPLE:
        if (!pd->attrs_ready)
            return sf_err_set(err, SF_E_MALFORMED, r->off, "perf.data: a sample before its event");
        return sample(pd, &rd, r, err) < 0 ? err->code : 1;
    case SF_PD_MMAP:
    case SF_PD_MMAP2: {
        struct sf_rd name;
        r->u.mmap.pid = r32(&rd, sw);
        r->u.mmap.tid = r32(&rd, sw);
        r->u.mmap.start = r64(&rd, sw);
        r->u.mmap.len = r64(&rd, sw);
        r->u.mmap.pgoff = r64(&rd, sw);
        r->u.mmap.build_id_size = 0;
        if (r->type == SF_PD_MMAP2) {
            if (r->misc & MISC_MMAP_BUILD_ID) {
                const uint8_t *b;
                r->u.mmap.build_id_size = sf_rd_u8(&rd);
                sf_rd_skip(&rd, 3);
                if ((b = sf_rd_bytes(&rd, 20)) != NULL)
                    memcpy(r->u.mmap.build_id, b, 20);
                if (r->u.mmap.build_id_size > 20)
                    r->u.mmap.build_id_size = 20;
            } else {
                sf_rd_skip(&rd, 4 + 4 + 8 + 8); /* maj, min, ino, ino_generation */
            }
            r->u.mmap.prot = r32(&rd, sw);
            r->u.mmap.flags = r32(&rd, sw);
        }
        name = rd;
        rstr(&name, sf_rd_left(&rd), r->u.mmap.filename, sizeof(r->u.mmap.filename));
        /* the name is NUL-padded to 8 bytes; the trailer follows it */
        {
            size_t l = strnlen((const char *)rd.p, sf_rd_left(&rd));
            sf_rd_skip(&rd, (l + 8) & ~(size_t)7);
        }
        trailer(pd, &rd, r);
        break;
    }
    case SF_PD_COMM: {
        size_t l;
        r->u.comm.pid = r32(&rd, sw);
        r->u.comm.tid = r32(&rd, sw);
        r->u.comm.exec = (r->misc & MISC_COMM_EXEC) != 0;
        l = strnlen((const char *)rd.p, sf_rd_left(&rd));
        {
            struct sf_rd c = rd;
            rstr(&c, l, r->u.comm.comm, sizeof(r->u.comm.comm));
        }
        sf_rd_skip(&rd, (l + 8) & ~(size_t)7);
        trailer(pd, &rd, r);
        break;
    }
    case SF_PD_FORK:
    case SF_PD_EXIT:
        r->u.task.pid = r32(&rd, sw);
        r->u.task.ppid = r32(&rd, sw);
        r->u.task.tid = r32(&rd, sw);
        r->u.task.ptid = r32(&rd, sw);
        r->u.task.time = r64(&rd, sw);
        trailer(pd, &rd, r);
        break;
    case SF_PD_LOST:
        r->u.lost.id = r64(&rd, sw);
        r->u.lost.lost = r64(&rd, sw);
        trailer(pd, &rd, r);
        break;
    case SF_PD_HEADER_ATTR:
        if ((rc = header_attr(pd, &rd, r, err)) < 0)
            return rc;
        break;
    case SF_PD_HEADER_TRACING_DATA:
        if ((rc = tracing_data(pd, r32(&rd, sw), r, err)) < 0)
            return rc;
        break;
    case SF_PD_HEADER_BUILD_ID: { /* the whole record, header included, is one entry */
        struct sf_rd whole;
        sf_rd_init(&whole, pd->buf + pd->pos - size, size, r->off);
        build_ids(pd, &whole);
        break;
    }
    case SF_PD_HEADER_FEATURE: {
        uint64_t feat = r64(&rd, sw);
        if (feat < FEAT_BITS)
            feature(pd, (int)feat, &rd);
        break;
    }
    default:
        if (r->type < SF_PD_HEADER_ATTR)
            trailer(pd, &rd, r);
        break;
    }
    if (rd.err)
        return sf_err_set(err, SF_E_MALFORMED, r->off,
                          "perf.data: record type %u longer than its %u bytes", r->type, size);
    return 1;
}

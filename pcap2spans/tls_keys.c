/* tls_keys.c - TLS secrets by ClientHello.random: NSS key log files (--keylog, several
 * allowed) and pcapng Decryption Secrets Blocks.
 *
 * NSS key log line (NSS "Key Log Format"):  LABEL <64 hex client random> <hex secret>
 * Labels used: CLIENT_RANDOM (TLS 1.2 master secret, 48 bytes), CLIENT_EARLY_TRAFFIC_SECRET,
 * CLIENT_HANDSHAKE_TRAFFIC_SECRET, SERVER_HANDSHAKE_TRAFFIC_SECRET, CLIENT_TRAFFIC_SECRET_0,
 * SERVER_TRAFFIC_SECRET_0 (32 or 48 bytes).  Others (EXPORTER_SECRET, RSA, ...) are skipped.
 * A later line for the same random and label replaces the earlier one; when the two
 * secrets differ, that is said with both files and lines (key logs of one client
 * dumped per session overlap, and agree: only a disagreement is news).
 *
 * pcapng (draft-ietf-opsawg-pcapng): blocks are  type(4) total_length(4) body
 * total_length(4), lengths multiples of 4, byte order set by each Section Header Block
 * (type 0x0A0D0D0A, byte-order magic 0x1A2B3C4D right after the length).  A Decryption
 * Secrets Block (type 0x0000000A) holds  secrets_type(4) secrets_length(4) data
 * padded to 4; secrets_type 0x544c534b ("TLSK") is NSS key log text.  libpcap reads
 * pcapng but does not hand DSBs to the caller, so this pre-pass walks the blocks itself
 * over the mapped file, reading each block header with the bounded reader (sf_rd).
 */
#define _FILE_OFFSET_BITS 64
#include "tls_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sf_capmagic.h"
#include "sf_hex.h"
#include "sf_line.h"
#include "sf_map.h"
#include "sf_rd.h"

#define DSB_MAX (16u << 20) /* largest DSB we read (its secrets are text lines) */

struct p2s_tls_keys {
    struct sf_map map; /* sf_hash(random) -> struct tls_keyent */
    size_t secrets;
    size_t conflicts;
    const char *path; /* the file being read, for where each secret came from */
    uint64_t line;
};

int p2s_tls_keys_new(struct p2s_tls_keys **out)
{
    struct p2s_tls_keys *k = calloc(1, sizeof(*k));

    *out = NULL;
    if (k == NULL)
        return SF_E_NOMEM;
    *out = k;
    return 0;
}

void p2s_tls_keys_free(struct p2s_tls_keys *k)
{
    struct sf_map_slot *s;

    if (k == NULL)
        return;
    for (size_t i = 0; (s = sf_map_next(&k->map, &i)) != NULL;)
        free(s->val);
    sf_map_free(&k->map);
    free(k);
}

size_t p2s_tls_keys_conflicts(const struct p2s_tls_keys *k)
{
    return k->conflicts;
}

size_t p2s_tls_keys_count(const struct p2s_tls_keys *k)
{
    return k ? k->secrets : 0;
}

static int random_eq(const void *val, const void *key)
{
    return memcmp(((const struct tls_keyent *)val)->random, key, TLS_RANDOM_LEN) == 0;
}

const struct tls_keyent *p2s_tls_keys_find(const struct p2s_tls_keys *k,
                                           const uint8_t random[TLS_RANDOM_LEN])
{
    if (k == NULL)
        return NULL;
    return sf_map_find(&k->map, sf_hash(random, TLS_RANDOM_LEN), random_eq, random);
}

static const struct {
    const char *label;
    enum tls_sk sk;
} labels[] = {
    {"CLIENT_RANDOM", TLS_SK_MASTER},
    {"CLIENT_EARLY_TRAFFIC_SECRET", TLS_SK_CET},
    {"CLIENT_HANDSHAKE_TRAFFIC_SECRET", TLS_SK_CHT},
    {"SERVER_HANDSHAKE_TRAFFIC_SECRET", TLS_SK_SHT},
    {"CLIENT_TRAFFIC_SECRET_0", TLS_SK_CT0},
    {"SERVER_TRAFFIC_SECRET_0", TLS_SK_ST0},
};

static const char *label_name(enum tls_sk sk)
{
    for (size_t j = 0; j < sizeof(labels) / sizeof(labels[0]); j++)
        if (labels[j].sk == sk)
            return labels[j].label;
    return "?";
}

static int add(struct p2s_tls_keys *k, const uint8_t *random, enum tls_sk sk, const uint8_t *sec,
               size_t slen)
{
    uint64_t h = sf_hash(random, TLS_RANDOM_LEN);
    struct sf_map_slot *slot;
    struct tls_keyent *e;

    if (sf_map_reserve(&k->map, 1) < 0)
        return SF_E_NOMEM;
    slot = sf_map_probe(&k->map, h, random_eq, random);
    if ((e = slot->val) == NULL) {
        if ((e = calloc(1, sizeof(*e))) == NULL)
            return SF_E_NOMEM;
        memcpy(e->random, random, TLS_RANDOM_LEN);
        sf_map_fill(&k->map, slot, h, e);
    }
    if (e->s[sk].len == 0) {
        k->secrets++;
    } else if (e->s[sk].len != slen || memcmp(e->s[sk].b, sec, slen) != 0) {
        if (k->conflicts++ < TLS_KEYS_CONFLICTS_SAID) {
            char hex[17];
            sf_hex_encode(hex, random, 8);
            fprintf(stderr,
                    "pcap2spans: %s:%llu: %s for client random %s... differs from the one "
                    "in %s:%llu; the later is used\n",
                    k->path ? k->path : "?", (unsigned long long)k->line, label_name(sk), hex,
                    e->from[sk] ? e->from[sk] : "?", (unsigned long long)e->line[sk]);
        }
    }
    e->from[sk] = k->path;
    e->line[sk] = k->line;
    e->s[sk].len = (uint8_t)slen;
    memcpy(e->s[sk].b, sec, slen);
    return 0;
}

/* One line (no newline).  1 added, 0 skipped (comment, blank, unused label), -1 bad. */
static int parse_line(struct p2s_tls_keys *k, const char *s, size_t n, const char **why)
{
    uint8_t random[TLS_RANDOM_LEN], sec[TLS_SECRET_MAX];
    size_t i = 0, a, la, ra, rl, sa, sl;
    int which = -1;

    while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == n || s[i] == '#')
        return 0;
    a = i;
    while (i < n && s[i] != ' ')
        i++;
    la = i - a;
    for (size_t j = 0; j < sizeof(labels) / sizeof(labels[0]); j++)
        if (strlen(labels[j].label) == la && memcmp(labels[j].label, s + a, la) == 0)
            which = (int)j;
    if (which < 0)
        return 0;
    while (i < n && s[i] == ' ')
        i++;
    ra = i;
    while (i < n && s[i] != ' ')
        i++;
    rl = i - ra;
    while (i < n && s[i] == ' ')
        i++;
    sa = i;
    while (i < n && s[i] != ' ')
        i++;
    sl = i - sa;
    if (rl != 64 || sf_hex_decode(random, s + ra, rl) < 0) {
        *why = "client random is not 64 hex digits";
        return -1;
    }
    if ((labels[which].sk == TLS_SK_MASTER && sl != 96) ||
        (labels[which].sk != TLS_SK_MASTER && sl != 64 && sl != 96) ||
        sf_hex_decode(sec, s + sa, sl) < 0) {
        *why = "secret is not 64 or 96 hex digits (48 for CLIENT_RANDOM)";
        return -1;
    }
    if (i != n) {
        *why = "text after the secret";
        return -1;
    }
    return add(k, random, labels[which].sk, sec, sl / 2) < 0 ? -1 : 1;
}

int p2s_tls_keys_load_text(struct p2s_tls_keys *k, const char *text, size_t n, uint64_t base,
                           struct sf_err *err)
{
    size_t i = 0, added = 0, bad = 0, lineno = 0;

    while (i < n) {
        const char *nl = memchr(text + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - text) : n;
        const char *why = NULL;
        int rc;
        lineno++;
        k->line = lineno;
        rc = parse_line(k, text + i, e - i, &why);
        if (rc > 0)
            added++;
        else if (rc < 0 && bad++ == 0)
            sf_err_set(err, SF_E_MALFORMED, base + i, "key log line %zu: %s", lineno,
                       why ? why : "out of memory");
        i = e + 1;
    }
    if (added == 0 && bad)
        return SF_E_MALFORMED;
    return (int)(added > 0x7fffffff ? 0x7fffffff : added);
}

int p2s_tls_keys_load_file(struct p2s_tls_keys *k, const char *path, struct sf_err *err)
{
    struct sf_line r;
    char *line;
    size_t len, added = 0, bad = 0;
    int fd = open(path, O_RDONLY), rc;

    if (fd < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot open key log: %s", strerror(errno));
    k->path = path;
    if (sf_line_open(&r, fd, 64u << 10) < 0) {
        close(fd);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    while ((rc = sf_line_next(&r, &line, &len)) != 0) {
        const char *why = NULL;
        if (rc < 0) {
            if (rc == SF_E_IO) {
                rc = sf_err_set(err, SF_E_IO, r.off, "read error: %s", strerror(errno));
                sf_line_close(&r);
                close(fd);
                return rc;
            }
            bad++;
            continue;
        }
        k->line = r.lineno;
        rc = parse_line(k, line, len, &why);
        if (rc > 0)
            added++;
        else if (rc < 0 && bad++ == 0) {
            sf_err_set(err, SF_E_MALFORMED, r.off, "%s", why ? why : "out of memory");
            err->unit = "line";
            err->unit_no = r.lineno;
        }
    }
    sf_line_close(&r);
    close(fd);
    if (added == 0 && bad)
        return SF_E_MALFORMED;
    return (int)(added > 0x7fffffff ? 0x7fffffff : added);
}

/* A 32-bit field in the section's byte order. */
static uint32_t rd_u32(struct sf_rd *rd, int be)
{
    return be ? sf_rd_u32be(rd) : sf_rd_u32le(rd);
}

/* The DSBs of the pcapng blocks in p (n bytes, the whole file); total secrets added. */
static int scan_blocks(struct p2s_tls_keys *k, const uint8_t *p, size_t n, struct sf_err *err)
{
    struct sf_rd rd;
    int be = 0, total = 0;

    sf_rd_init(&rd, p, n, 0);
    while (sf_rd_left(&rd) >= 12) {
        struct sf_rd blk;
        uint32_t type, blen;

        /* 12 bytes are there: type, length and (in a Section Header Block) byte order */
        if (sf_capmagic_is_pcapng(rd.p)) { /* each section sets its byte order */
            if ((be = sf_capmagic_pcapng_be(rd.p + 8)) < 0)
                break;
        } else if (sf_rd_off(&rd) == 0) {
            break; /* not pcapng */
        }
        type = rd_u32(&rd, be);
        blen = rd_u32(&rd, be);
        if (blen < 12 || blen % 4 || blen - 8 > sf_rd_left(&rd) ||
            (type == SF_PCAPNG_SHB_TYPE && blen < 28))
            break;
        blk = sf_rd_sub(&rd, blen - 8); /* the body and the trailing length */
        if (type == 0x0000000a && blen >= 20 && blen - 12 <= DSB_MAX) {
            uint32_t stype = rd_u32(&blk, be), slen = rd_u32(&blk, be);
            if (stype == 0x544c534b && slen <= blen - 20) {
                uint64_t off = sf_rd_off(&blk);
                const char *text = (const char *)sf_rd_bytes(&blk, slen);
                int rc = p2s_tls_keys_load_text(k, text, slen, off, err);
                if (rc > 0)
                    total += rc;
            }
        }
    }
    return total;
}

int p2s_tls_keys_load_dsb(struct p2s_tls_keys *k, const char *path, struct sf_err *err)
{
    struct stat sb;
    void *map;
    int fd, total;

    if (strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0; /* stdin, or the capture reader reports it */
    /* Mapped, not read: the walk touches each block's header and copies nothing (reading
     * the file through stdio for it copied every byte once more; an fseeko per block was
     * an lseek and a 4 KiB read per block).  A pipe is not scanned: that would use it up. */
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size < 12 ||
        (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
        close(fd);
        return 0;
    }
    close(fd);
    k->path = path;
    total = scan_blocks(k, map, (size_t)sb.st_size, err);
    munmap(map, (size_t)sb.st_size);
    return total;
}

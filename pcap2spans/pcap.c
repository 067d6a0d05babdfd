/* pcap.c - capture files through libpcap (pcap and pcapng, µs and ns timestamps).
 *
 * Every input ("-" is stdin) is read through a stdio cookie stream that counts the
 * bytes libpcap consumes, so that every packet has a byte offset for error messages,
 * and with a database hashes them: a file is read once, its sha256 is known at the end
 * (sf_db_source_begin hashes it first only when a source of its size exists):
 *
 *   pcap:    24-byte file header, then per record a 16-byte header + caplen bytes;
 *            the offset of packet N is 24 + sum over earlier records of (16 + caplen).
 *   pcapng:  the offset of packet N is the file position where libpcap started reading
 *            the block that holds it (ftell of the stream before pcap_next_ex), so
 *            it may point at an interface or statistics block just before it.
 *
 * A damaged capture (truncated record, bad block) keeps everything before the damage:
 * connections are flushed, the source row is committed as partial with the error, and
 * the caller exits 2.  Timestamps are asked for in nanoseconds
 * (pcap_fopen_offline_with_tstamp_precision), so µs and ns files both give ns.
 */
#define _GNU_SOURCE
#include "pcap.h"

#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "out.h"
#include "rpc.h"
#include "sf_capmagic.h"
#include "sf_opt.h"
#include "sf_progress.h"
#include "sf_sha256.h"
#include "tcp.h"

struct cookie {
    int fd;
    uint64_t pos;         /* bytes handed to libpcap */
    struct sf_sha256 sha; /* with a database only */
    int hashing;
    uint8_t magic[4]; /* first bytes, to tell pcap from pcapng */
    int io_errno;
};

static ssize_t ck_read(void *v, char *buf, size_t n)
{
    struct cookie *c = v;
    ssize_t r;

    do
        r = read(c->fd, buf, n);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        c->io_errno = errno;
        return -1;
    }
    for (size_t i = 0; i < (size_t)r && c->pos + i < 4; i++)
        c->magic[c->pos + i] = (uint8_t)buf[i];
    if (c->hashing)
        sf_sha256_update(&c->sha, buf, (size_t)r);
    c->pos += (uint64_t)r;
    return r;
}

/* Only "where am I" is supported, which is all ftell needs. */
static int ck_seek(void *v, off64_t *off, int whence)
{
    struct cookie *c = v;

    if (whence == SEEK_CUR && *off == 0) {
        *off = (off64_t)c->pos;
        return 0;
    }
    errno = ESPIPE;
    return -1;
}

static int report_open(struct p2s_ctx *ctx, int code, const char *msg)
{
    struct sf_err err;
    char line[512];

    sf_err_clear(&err);
    sf_err_set(&err, code, UINT64_MAX, "%s", msg);
    sf_err_format(&err, ctx->tool, ctx->file, line, sizeof(line));
    p2s_say(ctx, line);
    ctx->st.errors++;
    return code;
}

/* Open the input; returns the libpcap handle or NULL (reported). */
static pcap_t *open_input(struct p2s_ctx *ctx, const char *path, struct cookie *ck, FILE **fp)
{
    static const cookie_io_functions_t io = {.read = ck_read, .seek = ck_seek};
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *pc;

    ck->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (ck->fd < 0) {
        report_open(ctx, SF_E_IO, strerror(errno));
        return NULL;
    }
    if ((*fp = fopencookie(ck, "r", io)) == NULL) {
        report_open(ctx, SF_E_NOMEM, "out of memory");
        return NULL;
    }
    setvbuf(*fp, NULL, _IOFBF, 1 << 18);
    pc = pcap_fopen_offline_with_tstamp_precision(*fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
    if (pc == NULL) {
        char msg[PCAP_ERRBUF_SIZE + 32];
        snprintf(msg, sizeof(msg), "not a capture file: %s", ebuf);
        report_open(ctx, ck->io_errno ? SF_E_IO : SF_E_MALFORMED, msg);
        fclose(*fp);
        *fp = NULL;
    }
    return pc;
}

/* The packet's capture time in ns into ctx->pkt_ts: 0, or -1 when it is not an int64 of
 * nanoseconds since 1970 (a pcapng timestamp past 2262, or before 1970), reported with the
 * packet's position; the packet is then skipped, as it cannot be placed in time. */
static int packet_time(struct p2s_ctx *ctx, const struct pcap_pkthdr *h)
{
    int64_t sec = (int64_t)h->ts.tv_sec, ns;
    struct sf_err err;

    if (sec >= 0 && h->ts.tv_usec >= 0 && !__builtin_mul_overflow(sec, INT64_C(1000000000), &ns) &&
        !__builtin_add_overflow(ns, (int64_t)h->ts.tv_usec, &ns)) {
        ctx->pkt_ts = ns;
        return 0;
    }
    sf_err_clear(&err);
    sf_err_set(&err, SF_E_MALFORMED, UINT64_MAX,
               "timestamp %lld.%09ld s is outside 1970..2262 (int64 nanoseconds); packet skipped",
               (long long)h->ts.tv_sec, (long)h->ts.tv_usec);
    err.proto = "pcap";
    p2s_report(ctx, &err);
    return -1;
}

/* The read loop; returns 0 at the end of the file or the damage code with *why. */
static int read_packets(struct p2s_ctx *ctx, pcap_t *pc, FILE *fp, struct cookie *ck, char *why,
                        size_t whysz)
{
    int dlt = pcap_datalink(pc), ng = sf_capmagic_is_pcapng(ck->magic);
    uint64_t off = 24, total = 0;
    struct pcap_pkthdr *h;
    const u_char *data;
    struct sf_progress prog;
    struct stat sb;
    int rc;

    if (!link_supported(dlt)) {
        char line[512];
        snprintf(line, sizeof(line),
                 "%s: %s: link type %d (%s) not supported: its packets are counted, not decoded",
                 ctx->tool, ctx->file, dlt,
                 pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?");
        p2s_say(ctx, line);
    }
    if (ck->fd != STDIN_FILENO && fstat(ck->fd, &sb) == 0)
        total = (uint64_t)sb.st_size;
    sf_progress_start(&prog, sf_opt_want_progress(ctx->quiet) ? stderr : NULL, ctx->file, "B",
                      total);
    for (;;) {
        if (ng)
            off = (uint64_t)ftello(fp);
        ctx->pkt_no++;
        ctx->pkt_off = off;
        rc = pcap_next_ex(pc, &h, &data);
        if (rc != 1)
            break;
        ctx->st.packets++;
        ctx->st.bytes += h->caplen;
        if (packet_time(ctx, h) == 0)
            link_decode(ctx, dlt, data, h->caplen, h->len);
        sf_arena_reset(&ctx->pkt);
        off += 16 + (uint64_t)h->caplen;
        if ((ctx->pkt_no & 0xfff) == 0)
            sf_progress_update(&prog, ck->pos);
        if (ctx->stop)
            break;
    }
    sf_progress_end(&prog);
    if (ctx->stop) {
        snprintf(why, whysz, "stopped at the first error (--strict)");
        return SF_E_MALFORMED;
    }
    if (rc == PCAP_ERROR_BREAK) {
        ctx->pkt_no--;
        return 0;
    }
    snprintf(why, whysz, "%s", ck->io_errno ? strerror(ck->io_errno) : pcap_geterr(pc));
    return ck->io_errno ? SF_E_IO : strstr(why, "truncated") ? SF_E_TRUNC : SF_E_MALFORMED;
}

static void report_damage(struct p2s_ctx *ctx, int code, const char *why)
{
    struct sf_err err;

    sf_err_clear(&err);
    err.proto = "pcap";
    sf_err_set(&err, code, UINT64_MAX, "%s (everything before it is kept)", why);
    ctx->stop = 0;
    p2s_report(ctx, &err);
}

int p2s_pcap_read(struct p2s_ctx *ctx, const char *path)
{
    struct cookie ck = {.fd = -1};
    char sha[SF_SHA256_HEX_LEN + 1], why[PCAP_ERRBUF_SIZE + 64] = "";
    const char *sha_arg = NULL;
    uint64_t size = 0;
    struct stat sb;
    struct sf_err err;
    FILE *fp = NULL;
    pcap_t *pc;
    int rc, db = p2s_out_has_db(ctx->out), stdin_in = strcmp(path, "-") == 0;

    ctx->file = stdin_in ? "<stdin>" : path;
    ctx->pkt_no = 0;
    ctx->pkt_off = 0;
    sf_err_clear(&err);
    if (db) {
        if (sf_sha256_init(&ck.sha) < 0)
            return report_open(ctx, SF_E_NOMEM, "out of memory");
        ck.hashing = 1;
    }
    if ((pc = open_input(ctx, path, &ck, &fp)) == NULL) {
        rc = ck.io_errno || ck.fd < 0 ? SF_E_IO : SF_E_MALFORMED;
        goto out;
    }
    if (db && !stdin_in && fstat(ck.fd, &sb) == 0 && S_ISREG(sb.st_mode))
        size = (uint64_t)sb.st_size;
    rc = p2s_out_source_begin(ctx->out, path, sha_arg, size, &err);
    if (rc == SF_E_DUP) {
        if (!ctx->quiet)
            fprintf(stderr, "%s: %s: %s\n", ctx->tool, ctx->file, err.msg);
        goto out;
    }
    if (rc < 0) {
        report_open(ctx, rc, err.msg);
        goto out;
    }
    rc = read_packets(ctx, pc, fp, &ck, why, sizeof(why));
    if (rc < 0)
        report_damage(ctx, rc, why);
    tcp_flush_all(ctx, "eof");
    p2s_rpc_flush(ctx);
    if (ck.hashing) {
        sf_sha256_final_hex(&ck.sha, sha);
        ck.hashing = 0;
        sha_arg = sha;
        size = ck.pos;
    }
    if (p2s_out_source_end(ctx->out, ctx->tool, ctx->file, sha_arg, size, rc < 0 ? why : NULL,
                           ctx->pkt_no, &err) < 0) {
        report_open(ctx, SF_E_DB, err.msg);
        rc = rc < 0 ? rc : SF_E_DB;
    }
out:
    if (ck.hashing)
        sf_sha256_abort(&ck.sha);
    if (pc)
        pcap_close(pc); /* closes fp */
    else if (fp)
        fclose(fp);
    if (ck.fd > STDIN_FILENO)
        close(ck.fd);
    return rc;
}

/* sf_decomp.c - gzip (zlib), xz (liblzma) and zstd (libzstd) behind one reader. */
#include "sf_decomp.h"

#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define IN_SIZE (1 << 16)

struct sf_dz {
    FILE *f;
    enum sf_comp comp;
    unsigned char in[IN_SIZE];
    size_t in_len, in_pos;
    uint64_t in_off; /* compressed bytes consumed before in[] */
    int eof, done;
    int in_frame;          /* zstd: inside a frame */
    struct sf_err pending; /* an error met after some output: given on the next read */
    z_stream zs;
    lzma_stream xs;
    ZSTD_DStream *zd;
};

static int fill(struct sf_dz *z, struct sf_err *err)
{
    size_t n;

    if (z->in_pos < z->in_len || z->eof)
        return 0;
    z->in_off += z->in_len;
    n = fread(z->in, 1, sizeof(z->in), z->f);
    if (n == 0 && ferror(z->f))
        return sf_err_set(err, SF_E_IO, z->in_off, "read failed: %s", strerror(errno));
    if (n == 0)
        z->eof = 1;
    z->in_len = n;
    z->in_pos = 0;
    return 0;
}

int sf_dz_open(struct sf_dz **out, const char *path, struct sf_err *err)
{
    struct sf_dz *z = calloc(1, sizeof(*z));
    int rc = 0;

    *out = NULL;
    if (z == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    sf_err_clear(&z->pending);
    if ((z->f = fopen(path, "rb")) == NULL) {
        rc = sf_err_set(err, SF_E_IO, UINT64_MAX, "%s", strerror(errno));
        free(z);
        return rc;
    }
    if ((rc = fill(z, err)) < 0)
        goto fail;
    z->comp = sf_sniff_compression(z->in, z->in_len);
    switch (z->comp) {
    case SF_COMP_GZIP:
        if (inflateInit2(&z->zs, 15 + 16) != Z_OK)
            rc = sf_err_set(err, SF_E_NOMEM, 0, "gzip: cannot start the decoder");
        break;
    case SF_COMP_XZ:
        if (lzma_stream_decoder(&z->xs, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            rc = sf_err_set(err, SF_E_NOMEM, 0, "xz: cannot start the decoder");
        break;
    case SF_COMP_ZSTD:
        if ((z->zd = ZSTD_createDStream()) == NULL)
            rc = sf_err_set(err, SF_E_NOMEM, 0, "zstd: cannot start the decoder");
        break;
    case SF_COMP_NONE:
        break;
    }
    if (rc < 0)
        goto fail;
    *out = z;
    return 0;
fail:
    fclose(z->f);
    free(z);
    return rc;
}

enum sf_comp sf_dz_comp(const struct sf_dz *z)
{
    return z->comp;
}

static ssize_t read_gzip(struct sf_dz *z, unsigned char *buf, size_t n, struct sf_err *err)
{
    z->zs.next_out = buf;
    z->zs.avail_out = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
    while (z->zs.avail_out > 0 && !z->done) {
        int r;

        if (fill(z, err) < 0)
            return err ? err->code : SF_E_IO;
        if (z->in_pos == z->in_len) { /* the end, but not of a member */
            if (z->zs.avail_out == n)
                return sf_err_set(err, SF_E_TRUNC, z->in_off,
                                  "gzip: the file ends inside a member");
            break; /* what came before first; the error on the next call */
        }
        z->zs.next_in = z->in + z->in_pos;
        z->zs.avail_in = (uInt)(z->in_len - z->in_pos);
        r = inflate(&z->zs, Z_NO_FLUSH);
        z->in_pos = z->in_len - z->zs.avail_in;
        if (r == Z_STREAM_END) {
            /* another member may follow (cat a.gz b.gz) */
            if (fill(z, err) < 0)
                return err ? err->code : SF_E_IO;
            if (z->in_pos == z->in_len)
                z->done = 1;
            else
                inflateReset(&z->zs);
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            return sf_err_set(err, SF_E_MALFORMED, z->in_off + z->in_pos, "gzip: %s",
                              z->zs.msg ? z->zs.msg : "corrupt data");
        }
    }
    return (ssize_t)(n - z->zs.avail_out);
}

static ssize_t read_xz(struct sf_dz *z, unsigned char *buf, size_t n, struct sf_err *err)
{
    z->xs.next_out = buf;
    z->xs.avail_out = n;
    while (z->xs.avail_out > 0 && !z->done) {
        lzma_ret r;

        if (fill(z, err) < 0)
            return err ? err->code : SF_E_IO;
        z->xs.next_in = z->in + z->in_pos;
        z->xs.avail_in = z->in_len - z->in_pos;
        r = lzma_code(&z->xs, z->eof ? LZMA_FINISH : LZMA_RUN);
        z->in_pos = z->in_len - z->xs.avail_in;
        if (r == LZMA_STREAM_END)
            z->done = 1;
        else if (r != LZMA_OK && !(r == LZMA_BUF_ERROR && z->xs.avail_out == 0)) {
            struct sf_err *e = z->xs.avail_out < n ? &z->pending : err;
            int code = sf_err_set(
                e, r == LZMA_BUF_ERROR ? SF_E_TRUNC : SF_E_MALFORMED, z->in_off + z->in_pos,
                "xz: %s", r == LZMA_BUF_ERROR ? "the file ends inside a stream" : "corrupt data");

            if (e == err)
                return code;
            break; /* what came before first */
        }
    }
    return (ssize_t)(n - z->xs.avail_out);
}

static ssize_t read_zstd(struct sf_dz *z, unsigned char *buf, size_t n, struct sf_err *err)
{
    ZSTD_outBuffer o = {buf, n, 0};
    size_t last;

    while (o.pos < o.size) {
        ZSTD_inBuffer i;

        if (fill(z, err) < 0)
            return err ? err->code : SF_E_IO;
        if (z->in_pos == z->in_len) {
            if (z->in_frame && o.pos == 0)
                return sf_err_set(err, SF_E_TRUNC, z->in_off, "zstd: the file ends inside a frame");
            break;
        }
        i.src = z->in + z->in_pos;
        i.size = z->in_len - z->in_pos;
        i.pos = 0;
        last = ZSTD_decompressStream(z->zd, &o, &i);
        z->in_pos += i.pos;
        if (ZSTD_isError(last)) {
            struct sf_err *e = o.pos > 0 ? &z->pending : err;
            int code = sf_err_set(e, SF_E_MALFORMED, z->in_off + z->in_pos, "zstd: %s",
                                  ZSTD_getErrorName(last));

            if (e == err)
                return code;
            break;
        }
        z->in_frame = last != 0;
    }
    return (ssize_t)o.pos;
}

ssize_t sf_dz_read(struct sf_dz *z, unsigned char *buf, size_t n, struct sf_err *err)
{
    size_t got;

    if (z->pending.code != SF_OK) {
        if (err)
            *err = z->pending;
        return z->pending.code;
    }
    switch (z->comp) {
    case SF_COMP_GZIP:
        return read_gzip(z, buf, n, err);
    case SF_COMP_XZ:
        return read_xz(z, buf, n, err);
    case SF_COMP_ZSTD:
        return read_zstd(z, buf, n, err);
    case SF_COMP_NONE:
        break;
    }
    if (fill(z, err) < 0)
        return err ? err->code : SF_E_IO;
    got = z->in_len - z->in_pos;
    if (got > n)
        got = n;
    memcpy(buf, z->in + z->in_pos, got);
    z->in_pos += got;
    return (ssize_t)got;
}

void sf_dz_close(struct sf_dz *z)
{
    if (z == NULL)
        return;
    if (z->comp == SF_COMP_GZIP)
        inflateEnd(&z->zs);
    else if (z->comp == SF_COMP_XZ)
        lzma_end(&z->xs);
    else if (z->comp == SF_COMP_ZSTD)
        ZSTD_freeDStream(z->zd);
    fclose(z->f);
    free(z);
}

ssize_t sf_dz_head(const char *path, unsigned char *buf, size_t cap, enum sf_comp *comp,
                   int *complete, struct sf_err *err)
{
    struct sf_dz *z;
    size_t n = 0;
    ssize_t r = 1;
    unsigned char probe;

    if (sf_dz_open(&z, path, err) < 0)
        return err ? err->code : SF_E_IO;
    *comp = z->comp;
    while (n < cap && (r = sf_dz_read(z, buf + n, cap - n, err)) > 0)
        n += (size_t)r;
    if (r < 0 && n == 0) {
        sf_dz_close(z);
        return r;
    }
    *complete = r == 0 || (n == cap && sf_dz_read(z, &probe, 1, NULL) == 0);
    sf_dz_close(z);
    return (ssize_t)n;
}

int sf_dz_copy(const char *path, int fd, struct sf_err *err)
{
    static unsigned char buf[1 << 16];
    struct sf_dz *z;
    ssize_t r;
    int rc = 0;

    if ((rc = sf_dz_open(&z, path, err)) < 0)
        return rc;
    while ((r = sf_dz_read(z, buf, sizeof(buf), err)) > 0) {
        size_t off = 0;

        while (off < (size_t)r) {
            ssize_t w = write(fd, buf + off, (size_t)r - off);

            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = sf_err_set(err, SF_E_IO, UINT64_MAX, "write failed: %s", strerror(errno));
                goto out;
            }
            off += (size_t)w;
        }
    }
    if (r < 0)
        rc = (int)r;
out:
    sf_dz_close(z);
    return rc;
}

/* sf_http_coding.c - HTTP content codings undone in memory (sf_http_coding.h). */
#include "sf_http_coding.h"

#include <brotli/decode.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

#include "sf_text.h"

enum coding { C_IDENTITY, C_GZIP, C_DEFLATE, C_BR, C_ZSTD, C_UNKNOWN };

#define MAX_CODINGS 8

static enum coding coding_of(const char *t, size_t n)
{
    static const struct {
        const char *name;
        enum coding c;
    } names[] = {{"identity", C_IDENTITY}, {"gzip", C_GZIP}, {"x-gzip", C_GZIP},
                 {"deflate", C_DEFLATE},   {"br", C_BR},     {"zstd", C_ZSTD}};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && strncasecmp(t, names[i].name, n) == 0)
            return names[i].c;
    return C_UNKNOWN;
}

/* The codings of a comma list, in order; the count, or -1 past MAX_CODINGS. */
static int codings(const char *v, size_t n, enum coding *out)
{
    int k = 0;
    size_t pos = 0, l;
    const char *t;

    while (sf_text_list_next(v, n, &pos, &t, &l)) {
        if (k == MAX_CODINGS)
            return -1;
        out[k++] = coding_of(t, l);
    }
    return k;
}

int sf_http_coding_known(const char *v, size_t n)
{
    enum coding c[MAX_CODINGS];
    int k = codings(v, n, c);

    if (k < 0)
        return 0;
    for (int i = 0; i < k; i++)
        if (c[i] == C_UNKNOWN)
            return 0;
    return 1;
}

/* Room for at least one more byte in out, up to its max: the free space, or 0. */
static size_t room(struct sf_buf *out)
{
    size_t want = out->cap - out->len;

    if (want == 0) {
        size_t grow = out->len < 4096 ? 4096 : out->len;
        if (grow > out->max - out->len)
            grow = out->max - out->len;
        if (grow == 0 || sf_buf_reserve(out, grow) < 0)
            return 0;
        want = out->cap - out->len;
    }
    return want > out->max - out->len ? out->max - out->len : want;
}

static int over(struct sf_buf *out, const char *name, struct sf_err *err)
{
    if (out->len >= out->max)
        return sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "%s: decoded body over %zu bytes", name,
                          out->max);
    return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "%s: out of memory", name);
}

/* zlib: gzip (windowBits 16 + 15) or the zlib format (15), else raw deflate (-15). */
static int inflate_all(const uint8_t *in, size_t len, struct sf_buf *out, int wbits,
                       const char *name, struct sf_err *err)
{
    z_stream z;
    int rc;

    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, wbits) != Z_OK)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "%s: out of memory", name);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    do {
        size_t r = room(out);
        if (r == 0) {
            inflateEnd(&z);
            return over(out, name, err);
        }
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)(r > 1u << 30 ? 1u << 30 : r);
        rc = inflate(&z, Z_NO_FLUSH);
        out->len = (size_t)(z.next_out - out->data);
        /* gzip members may follow one another (RFC 1952 2.2) */
        if (rc == Z_STREAM_END && wbits > 15 && z.avail_in > 0)
            rc = inflateReset(&z) == Z_OK ? Z_OK : Z_DATA_ERROR;
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_in > 0 && z.avail_out == 0));
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return sf_err_set(err, SF_E_MALFORMED, len - z.avail_in, "%s: %s at byte %zu", name,
                          z.msg ? z.msg : "truncated", (size_t)(len - z.avail_in));
    return 0;
}

static int unbrotli(const uint8_t *in, size_t len, struct sf_buf *out, struct sf_err *err)
{
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    BrotliDecoderResult r;
    size_t avail_in = len;
    const uint8_t *next_in = in;

    if (s == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "br: out of memory");
    do {
        size_t avail_out = room(out);
        uint8_t *next_out = out->data + out->len;
        if (avail_out == 0) {
            BrotliDecoderDestroyInstance(s);
            return over(out, "br", err);
        }
        r = BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
        out->len = (size_t)(next_out - out->data);
    } while (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT);
    BrotliDecoderDestroyInstance(s);
    if (r != BROTLI_DECODER_RESULT_SUCCESS)
        return sf_err_set(err, SF_E_MALFORMED, len - avail_in, "br: %s at byte %zu",
                          r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT ? "truncated" : "bad data",
                          len - avail_in);
    return 0;
}

static int unzstd(const uint8_t *in, size_t len, struct sf_buf *out, struct sf_err *err)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    ZSTD_inBuffer ib = {in, len, 0};
    size_t r = 1;

    if (d == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "zstd: out of memory");
    ZSTD_initDStream(d);
    while (ib.pos < ib.size || r != 0) {
        size_t avail = room(out);
        ZSTD_outBuffer ob = {out->data + out->len, avail, 0};
        if (avail == 0) {
            ZSTD_freeDStream(d);
            return over(out, "zstd", err);
        }
        r = ZSTD_decompressStream(d, &ob, &ib);
        out->len += ob.pos;
        if (ZSTD_isError(r)) {
            ZSTD_freeDStream(d);
            return sf_err_set(err, SF_E_MALFORMED, ib.pos, "zstd: %s at byte %zu",
                              ZSTD_getErrorName(r), ib.pos);
        }
        if (ib.pos == ib.size && r != 0 && ob.pos < ob.size) {
            ZSTD_freeDStream(d);
            return sf_err_set(err, SF_E_MALFORMED, ib.pos, "zstd: truncated at byte %zu", ib.pos);
        }
    }
    ZSTD_freeDStream(d);
    return 0;
}

static int undo(enum coding c, const uint8_t *in, size_t len, struct sf_buf *out,
                struct sf_err *err)
{
    switch (c) {
    case C_IDENTITY:
        return sf_buf_append(out, in, len) == 0 ? 0 : over(out, "identity", err);
    case C_GZIP:
        return inflate_all(in, len, out, 16 + 15, "gzip", err);
    case C_DEFLATE: {
        int rc = inflate_all(in, len, out, 15, "deflate", err);
        if (rc == SF_E_MALFORMED && out->len == 0) { /* a raw deflate stream */
            sf_err_clear(err);
            rc = inflate_all(in, len, out, -15, "deflate", err);
        }
        return rc;
    }
    case C_BR:
        return unbrotli(in, len, out, err);
    case C_ZSTD:
        return unzstd(in, len, out, err);
    default:
        return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX, "unknown content coding");
    }
}

int sf_http_decode(const char *v, size_t n, const uint8_t *in, size_t len, struct sf_buf *out,
                   struct sf_err *err)
{
    enum coding c[MAX_CODINGS];
    struct sf_buf tmp;
    int k = codings(v, n, c), rc = 0;

    sf_buf_reset(out);
    if (k < 0)
        return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX, "more than %d content codings",
                          MAX_CODINGS);
    for (int i = 0; i < k; i++)
        if (c[i] == C_UNKNOWN)
            return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX, "unknown content coding");
    if (k == 0)
        return undo(C_IDENTITY, in, len, out, err);
    /* last applied, first undone; between codings the bytes live in tmp */
    sf_buf_init(&tmp, out->max);
    for (int i = k - 1; i >= 0 && rc == 0; i--) {
        struct sf_buf *dst = (k - 1 - i) % 2 == 0 ? out : &tmp;
        const struct sf_buf *src = dst == out ? &tmp : out;
        sf_buf_reset(dst);
        rc = i == k - 1 ? undo(c[i], in, len, dst, err) : undo(c[i], src->data, src->len, dst, err);
    }
    if (rc == 0 && k % 2 == 0) { /* the result is in tmp */
        sf_buf_reset(out);
        rc = sf_buf_append(out, tmp.data, tmp.len) == 0 ? 0 : over(out, "decode", err);
    }
    sf_buf_free(&tmp);
    return rc;
}

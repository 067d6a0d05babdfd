/* test_http_coding.c - lib/sf_http_coding: content codings undone in memory. */
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "sf_http_coding.h"
#include "tap.h"

static const char text[] =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"br-tool\"}}";

/* text compressed by libbrotlienc (quality 5, window 22, text mode): this library has no
 * encoder of its own to make it with */
static const unsigned char br[] = {
    0x1b, 0x49, 0x00, 0x00, 0x04, 0x9e, 0xb6, 0xf9, 0xa9, 0xbf, 0x7c, 0x7e, 0xb0, 0x08, 0xd7, 0x9a,
    0x9f, 0x85, 0xc1, 0x6d, 0x0e, 0x5d, 0x13, 0xc1, 0x21, 0x77, 0x01, 0x0e, 0x5b, 0x80, 0xd0, 0x62,
    0x0a, 0x36, 0xc6, 0xf0, 0x1c, 0xc1, 0xd3, 0x38, 0x69, 0xb3, 0xad, 0x32, 0xbf, 0x86, 0x92, 0x7c,
    0x44, 0xb8, 0x3b, 0xc9, 0x42, 0x8d, 0x83, 0x7f, 0x0c, 0x5b, 0xa1, 0x15, 0x33, 0x84, 0xf7, 0xf3,
    0x6b, 0xa1, 0x9b, 0xb7, 0x3c, 0x17, 0x4a, 0x9d, 0x4e, 0x32, 0xe7, 0x00};

/* zlib's deflate with windowBits wb (31 gzip, 15 zlib, -15 raw) of p[0..n). */
static size_t zcomp(const void *p, size_t n, int wb, unsigned char *out, size_t cap)
{
    z_stream z;

    memset(&z, 0, sizeof(z));
    deflateInit2(&z, 6, Z_DEFLATED, wb, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    deflateEnd(&z);
    return cap - z.avail_out;
}

static int decodes(const char *coding, const unsigned char *in, size_t n, size_t max,
                   const char *want, int want_rc)
{
    struct sf_buf out;
    struct sf_err e;
    int rc, ok;

    sf_buf_init(&out, max);
    sf_err_clear(&e);
    rc = sf_http_decode(coding, strlen(coding), in, n, &out, &e);
    ok = rc == want_rc &&
         (want == NULL || (out.len == strlen(want) && memcmp(out.data, want, out.len) == 0));
    if (!ok)
        printf("# %s: rc %d (%s), %zu bytes\n", coding, rc, e.msg, out.len);
    sf_buf_free(&out);
    return ok;
}

int main(void)
{
    unsigned char a[4096], b[4096], bomb[1 << 16];
    static unsigned char zeros[8 << 20];
    size_t na, nb, nbomb;

    na = zcomp(text, strlen(text), 31, a, sizeof(a));
    TAP_OK(decodes("gzip", a, na, 1 << 20, text, 0), "gzip");
    TAP_OK(decodes("x-gzip", a, na, 1 << 20, text, 0), "x-gzip, its old name");
    memcpy(a + na, a, na); /* two members: one stream (RFC 1952 2.2) */
    TAP_OK(decodes("GZip", a, 2 * na, 1 << 20, NULL, 0), "two gzip members, the name in any case");
    na = zcomp(text, strlen(text), 15, a, sizeof(a));
    TAP_OK(decodes("deflate", a, na, 1 << 20, text, 0), "deflate: the zlib format");
    na = zcomp(text, strlen(text), -15, a, sizeof(a));
    TAP_OK(decodes("deflate", a, na, 1 << 20, text, 0),
           "deflate: a raw stream, as some servers send");
    TAP_OK(decodes("br", br, sizeof(br), 1 << 20, text, 0), "br");
    na = ZSTD_compress(a, sizeof(a), text, strlen(text), 3);
    TAP_OK(decodes("zstd", a, na, 1 << 20, text, 0), "zstd");
    nb = zcomp(a, na, 31, b, sizeof(b)); /* zstd first, then gzip */
    TAP_OK(decodes("zstd, gzip", b, nb, 1 << 20, text, 0), "zstd, gzip: undone last to first");
    TAP_OK(decodes("identity", (const unsigned char *)text, strlen(text), 1 << 20, text, 0),
           "identity");
    TAP_OK(decodes("compress", a, na, 1 << 20, NULL, SF_E_UNSUPPORTED), "compress: not known");
    TAP_OK(!sf_http_coding_known("gzip, compress", 14) && sf_http_coding_known("zstd , br", 9),
           "sf_http_coding_known reads the list");
    TAP_OK(decodes("gzip", a, na, 1 << 20, NULL, SF_E_MALFORMED), "zstd data as gzip: malformed");
    na = zcomp(text, strlen(text), 31, a, sizeof(a));
    TAP_OK(decodes("gzip", a, na - 9, 1 << 20, NULL, SF_E_MALFORMED), "a truncated gzip body");
    TAP_OK(decodes("br", br, sizeof(br) - 3, 1 << 20, NULL, SF_E_MALFORMED), "a truncated br body");
    nbomb = zcomp(zeros, sizeof(zeros), 31, bomb, sizeof(bomb));
    TAP_OK(nbomb < sizeof(bomb) && decodes("gzip", bomb, nbomb, 1 << 20, NULL, SF_E_LIMIT),
           "8 MiB of zeros in %zu gzip bytes stop at a 1 MiB bound", nbomb);
    na = ZSTD_compress(bomb, sizeof(bomb), zeros, sizeof(zeros), 3);
    TAP_OK(decodes("zstd", bomb, na, 1 << 20, NULL, SF_E_LIMIT), "  and in zstd");
    return tap_done();
}

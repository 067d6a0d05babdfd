/* sf_sha256.c - SHA-256 via OpenSSL EVP (see sf_sha256.h).
 *
 * libcrypto is loaded the first time a hash is started, not when a tool starts: most runs
 * hash nothing (perf-fold without --db), and loading it at start-up was 3 ms of the 60 of
 * perf-fold reading a 13 MB perf.data (docs/performance.md).  A tool that links it for
 * more (pcap2spans: TLS) gets the copy it already has.
 */
#include "sf_sha256.h"

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "sf_err.h"
#include "sf_hex.h"

#define STR_(x) #x
#define STR(x)  STR_(x)
#if OPENSSL_VERSION_MAJOR >= 3
#define LIBCRYPTO "libcrypto.so." STR(OPENSSL_VERSION_MAJOR)
#else
#define LIBCRYPTO "libcrypto.so.1.1"
#endif

/* the six calls a hash makes, found once (all, or none: ok 0) */
static struct {
    pthread_once_t once;
    int ok;
    __typeof__(EVP_MD_CTX_new) *ctx_new;
    __typeof__(EVP_MD_CTX_free) *ctx_free;
    __typeof__(EVP_sha256) *sha256;
    __typeof__(EVP_DigestInit_ex) *init;
    __typeof__(EVP_DigestUpdate) *update;
    __typeof__(EVP_DigestFinal_ex) *final;
} cr = {.once = PTHREAD_ONCE_INIT};

static void load_crypto(void)
{
    void *l = dlopen(LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);

    if (l == NULL)
        return;
    *(void **)&cr.ctx_new = dlsym(l, "EVP_MD_CTX_new");
    *(void **)&cr.ctx_free = dlsym(l, "EVP_MD_CTX_free");
    *(void **)&cr.sha256 = dlsym(l, "EVP_sha256");
    *(void **)&cr.init = dlsym(l, "EVP_DigestInit_ex");
    *(void **)&cr.update = dlsym(l, "EVP_DigestUpdate");
    *(void **)&cr.final = dlsym(l, "EVP_DigestFinal_ex");
    cr.ok = cr.ctx_new && cr.ctx_free && cr.sha256 && cr.init && cr.update && cr.final;
    /* the library stays loaded for the process's life, as a linked one would */
}

int sf_sha256_init(struct sf_sha256 *h)
{
    EVP_MD_CTX *c;

    h->md = NULL;
    pthread_once(&cr.once, load_crypto);
    if (!cr.ok)
        return SF_E_UNSUPPORTED; /* no libcrypto on this machine */
    if ((c = cr.ctx_new()) == NULL)
        return SF_E_NOMEM;
    if (cr.init(c, cr.sha256(), NULL) != 1) {
        cr.ctx_free(c);
        return SF_E_NOMEM;
    }
    h->md = c;
    return 0;
}

void sf_sha256_update(struct sf_sha256 *h, const void *p, size_t n)
{
    if (h->md)
        cr.update(h->md, p, n);
}

void sf_sha256_final(struct sf_sha256 *h, uint8_t out[SF_SHA256_LEN])
{
    unsigned int n = 0;

    assert(h->md != NULL); /* started by a successful sf_sha256_init */
    cr.final(h->md, out, &n);
    cr.ctx_free(h->md);
    h->md = NULL;
}

void sf_sha256_final_hex(struct sf_sha256 *h, char out[SF_SHA256_HEX_LEN + 1])
{
    uint8_t d[SF_SHA256_LEN];

    sf_sha256_final(h, d);
    sf_hex_encode(out, d, sizeof(d));
}

void sf_sha256_abort(struct sf_sha256 *h)
{
    if (h->md)
        cr.ctx_free(h->md);
    h->md = NULL;
}

int sf_sha256_ready(void)
{
    pthread_once(&cr.once, load_crypto);
    return cr.ok;
}

uint64_t sf_sha256_u64(const void *p, size_t n)
{
    struct sf_sha256 h;
    uint8_t d[SF_SHA256_LEN];
    uint64_t v = 0;

    if (sf_sha256_init(&h) < 0)
        return 0;
    sf_sha256_update(&h, p, n);
    sf_sha256_final(&h, d);
    for (int i = 0; i < 8; i++)
        v = (v << 8) | d[i];
    return v;
}

int sf_sha256_file(const char *path, char out[SF_SHA256_HEX_LEN + 1], uint64_t *bytes)
{
    struct sf_sha256 h;
    uint64_t total = 0;
    size_t bufsz = 1 << 20;
    unsigned char *buf;
    ssize_t n;
    int fd, rc;

    fd = open(path, O_RDONLY);
    if (fd < 0)
        return SF_E_IO;
    buf = malloc(bufsz);
    rc = buf ? sf_sha256_init(&h) : SF_E_NOMEM;
    if (rc) {
        free(buf);
        close(fd);
        return rc;
    }
    while ((n = read(fd, buf, bufsz)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = errno;
            sf_sha256_abort(&h);
            free(buf);
            close(fd);
            errno = rc;
            return SF_E_IO;
        }
        sf_sha256_update(&h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    sf_sha256_final_hex(&h, out);
    free(buf);
    close(fd);
    *bytes = total;
    return 0;
}

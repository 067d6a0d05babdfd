/* sf_sha256.c - SHA-256 via OpenSSL EVP (see sf_sha256.h). */
#include "sf_sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#include "sf_err.h"
#include "sf_hex.h"

int sf_sha256_init(struct sf_sha256 *h)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    h->md = c;
    if (c == NULL)
        return SF_E_NOMEM;
    if (EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        h->md = NULL;
        return SF_E_NOMEM;
    }
    return 0;
}

void sf_sha256_update(struct sf_sha256 *h, const void *p, size_t n)
{
    if (h->md)
        EVP_DigestUpdate(h->md, p, n);
}

void sf_sha256_final(struct sf_sha256 *h, uint8_t out[SF_SHA256_LEN])
{
    unsigned int n = 0;

    EVP_DigestFinal_ex(h->md, out, &n);
    EVP_MD_CTX_free(h->md);
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
    EVP_MD_CTX_free(h->md);
    h->md = NULL;
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

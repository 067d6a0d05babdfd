/* sf_sha256.h - SHA-256 through OpenSSL libcrypto, for source identity
 * (sources.sha256) and the TLS context hash. */
#ifndef SF_SHA256_H
#define SF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SF_SHA256_LEN     32
#define SF_SHA256_HEX_LEN 64

struct sf_sha256 {
    void *md; /* EVP_MD_CTX */
};

/* Start a hash (libcrypto is loaded at the first).  Returns 0, SF_E_NOMEM, or
 * SF_E_UNSUPPORTED where libcrypto cannot be loaded. */
int sf_sha256_init(struct sf_sha256 *h);
/* Add n bytes. */
void sf_sha256_update(struct sf_sha256 *h, const void *p, size_t n);
/* Finish into 32 bytes and free the context. */
void sf_sha256_final(struct sf_sha256 *h, uint8_t out[SF_SHA256_LEN]);
/* Finish into 64 lowercase hex digits + NUL and free the context. */
void sf_sha256_final_hex(struct sf_sha256 *h, char out[SF_SHA256_HEX_LEN + 1]);
/* Release a hash that will not be finished. */
void sf_sha256_abort(struct sf_sha256 *h);
/* 1 when libcrypto is loaded (it is loaded at the first call), 0 where it cannot be. */
int sf_sha256_ready(void);

/* The first 8 bytes of the SHA-256 of p[0..n), read big-endian (what ClickHouse's
 * reinterpretAsUInt64(reverse(substring(SHA256(x), 1, 8))) gives): the stacks' and the
 * sources' keys and the report's samples (sf_thin.h).  0 where libcrypto cannot be
 * loaded. */
uint64_t sf_sha256_u64(const void *p, size_t n);

/* Hash a whole file: hex digest into out and its size into *bytes.  Returns 0,
 * SF_E_IO (errno kept) or SF_E_NOMEM. */
int sf_sha256_file(const char *path, char out[SF_SHA256_HEX_LEN + 1], uint64_t *bytes);

#endif

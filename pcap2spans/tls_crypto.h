/* tls_crypto.h - the TLS key schedule and AEAD record protection through OpenSSL
 * libcrypto 3 (tls_crypto.c): cipher suites, HKDF-Expand-Label, the TLS 1.2 PRF, one
 * direction's record keys, and the connection's context hash.
 *
 * References: RFC 8446 (TLS 1.3), RFC 5246 + RFC 5288 + RFC 7905 (TLS 1.2 AEAD suites).
 */
#ifndef P2S_TLS_CRYPTO_H
#define P2S_TLS_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

enum tls_cipher { TLS_AES_128_GCM = 1, TLS_AES_256_GCM, TLS_CHACHA20_POLY1305 };

struct tls_suite {
    uint16_t id;
    const char *name; /* IANA name */
    enum tls_cipher cipher;
    uint8_t keylen;   /* AEAD key bytes */
    uint8_t hashlen;  /* 32 SHA-256, 48 SHA-384 */
    uint8_t tls12;    /* a TLS 1.2 suite (key block from the master secret) */
    uint8_t fixed_iv; /* TLS 1.2: 4 (GCM salt, 8-byte explicit nonce) or 12 (ChaCha) */
};

/* A suite we can decrypt, or NULL. */
const struct tls_suite *tls_suite_find(uint16_t id);
/* IANA name of any suite id we know the name of (others: NULL). */
const char *tls_suite_name(uint16_t id);

/* HKDF-Expand-Label (RFC 8446 section 7.1) with SHA-256 (hashlen 32) or SHA-384 (48).
 * Returns 0 or -1. */
int tls13_expand_label(int hashlen, const uint8_t *secret, size_t slen, const char *label,
                       const uint8_t *hctx, size_t hctxlen, uint8_t *out, size_t outlen);
/* TLS 1.2 PRF (RFC 5246 section 5) with SHA-256 or SHA-384.  Returns 0 or -1. */
int tls12_prf(int hashlen, const uint8_t *secret, size_t slen, const char *label,
              const uint8_t *seed, size_t seedlen, uint8_t *out, size_t outlen);

/* One direction's record protection under one key. */
struct tls_aead {
    void *c; /* EVP_CIPHER_CTX, NULL when not set up */
    const struct tls_suite *suite;
    uint8_t iv[12]; /* TLS 1.3 / ChaCha: 12-byte iv; TLS 1.2 GCM: salt in iv[0..4) */
    uint64_t seq;   /* next record's sequence number */
    int tls12;
};

/* TLS 1.3: key and iv from a traffic secret (HKDF-Expand-Label "key" / "iv"); seq = 0.
 * Returns 0 or -1 (allocation, or a secret whose length is not the suite's hash). */
int tls13_aead_init(struct tls_aead *a, const struct tls_suite *s, const uint8_t *secret,
                    size_t slen);
/* TLS 1.2: one side's write key and fixed iv from the key block; seq = 0. */
int tls12_aead_init(struct tls_aead *a, const struct tls_suite *s, const uint8_t *key,
                    const uint8_t *iv);
/* Open one record: hdr is its 5-byte header, frag its n payload bytes; out must hold
 * n bytes.  Returns the plaintext length (TLS 1.3: still with its inner type and
 * padding) and advances seq, or -1 if the record is too short or its tag does not
 * verify (seq unchanged). */
long tls_aead_open(struct tls_aead *a, const uint8_t hdr[5], const uint8_t *frag, size_t n,
                   uint8_t *out);
void tls_aead_free(struct tls_aead *a);

/* The context hash (README, pcap2spans section, "TLS"):
 *   ctx_hash = lowercase hex of SHA-256( client_random (32 bytes, from the first
 *              ClientHello) || server_random (32 bytes, from the ServerHello that is not
 *              a HelloRetryRequest; 32 zero bytes if none was seen) || early_data_bytes
 *              as an 8-byte big-endian unsigned integer )
 * early_data_bytes = the connections column: the summed payload lengths (record header
 * excluded, AEAD tag included) of the client's 0-RTT application-data records. */
void tls_ctx_hash(const uint8_t client_random[32], const uint8_t server_random[32],
                  uint64_t early_bytes, char out[65]);

#endif

/* tls.h - the TLS layer of pcap2spans: secrets (tls_keys.c), the key
 * schedule and AEAD through OpenSSL libcrypto 3 (tls_crypto.c), and the record and
 * handshake parser with 0-RTT accounting (tls.c, exported as p2s_tls_ops below).
 *
 * References: RFC 8446 (TLS 1.3), RFC 5246 + RFC 5288 + RFC 7905 (TLS 1.2 AEAD suites),
 * the NSS key log format, pcapng Decryption Secrets Block (draft-ietf-opsawg-pcapng
 * section 4.7).
 */
#ifndef P2S_TLS_H
#define P2S_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

struct p2s_app_ops; /* conn.h */

/* The TLS parser (tls.c): records, handshake facts, decryption with a key log. */
extern const struct p2s_app_ops p2s_tls_ops;

#define TLS_RANDOM_LEN 32
#define TLS_SECRET_MAX 48 /* SHA-384 traffic secrets and the TLS 1.2 master secret */

/* ---- secrets (tls_keys.c) --------------------------------------------------------- */

enum tls_sk {
    TLS_SK_MASTER = 0, /* CLIENT_RANDOM: TLS 1.2 master secret (48 bytes) */
    TLS_SK_CET,        /* CLIENT_EARLY_TRAFFIC_SECRET */
    TLS_SK_CHT,        /* CLIENT_HANDSHAKE_TRAFFIC_SECRET */
    TLS_SK_SHT,        /* SERVER_HANDSHAKE_TRAFFIC_SECRET */
    TLS_SK_CT0,        /* CLIENT_TRAFFIC_SECRET_0 */
    TLS_SK_ST0,        /* SERVER_TRAFFIC_SECRET_0 */
    TLS_SK_N
};

struct tls_secret {
    uint8_t len; /* 0: not logged */
    uint8_t b[TLS_SECRET_MAX];
};

/* Every secret logged for one ClientHello.random. */
struct tls_keyent {
    uint8_t random[TLS_RANDOM_LEN];
    struct tls_secret s[TLS_SK_N];
    /* where each secret was read: file (not copied: it outlives the keys) and line */
    const char *from[TLS_SK_N];
    uint64_t line[TLS_SK_N];
};

struct p2s_tls_keys;

int p2s_tls_keys_new(struct p2s_tls_keys **out);
void p2s_tls_keys_free(struct p2s_tls_keys *k);
/* An NSS key log file.  Comments, blank lines and labels we do not use are skipped;
 * malformed lines are counted and skipped (a key log written while a client ran may
 * end in half a line).  Returns the number of secrets added, or SF_E_IO (unreadable)
 * / SF_E_MALFORMED (no valid line but some invalid ones; err names the first). */
int p2s_tls_keys_load_file(struct p2s_tls_keys *k, const char *path, struct sf_err *err);
/* The same for key log text in memory (a DSB, tests); `base` is the offset of text[0]
 * in its file, for error positions. */
int p2s_tls_keys_load_text(struct p2s_tls_keys *k, const char *text, size_t n, uint64_t base,
                           struct sf_err *err);
/* pcapng pre-pass: every Decryption Secrets Block (block type 0x0000000A) with secrets
 * type 0x544c534b ("TLSK", NSS key log text) in the capture at `path` is added.  A
 * classic pcap, stdin ("-") or a file that ends early add nothing and return 0 (the
 * capture reader reports damage).  Returns the number of secrets added, or SF_E_IO. */
int p2s_tls_keys_load_dsb(struct p2s_tls_keys *k, const char *path, struct sf_err *err);
/* The secrets logged for a client random, or NULL. */
const struct tls_keyent *p2s_tls_keys_find(const struct p2s_tls_keys *k,
                                           const uint8_t random[TLS_RANDOM_LEN]);
size_t p2s_tls_keys_count(const struct p2s_tls_keys *k);
/* Secrets logged twice for one random and label with different values (the later
 * one is kept; the first TLS_KEYS_CONFLICTS_SAID are said on stderr with both files
 * and lines). */
#define TLS_KEYS_CONFLICTS_SAID 10
size_t p2s_tls_keys_conflicts(const struct p2s_tls_keys *k);

/* ---- crypto (tls_crypto.c) -------------------------------------------------------- */

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

/* ---- the record/handshake parser (tls.c): facts, for tests ---------------------- */

/* The context hash (README, pcap2spans section, "TLS"):
 *   ctx_hash = lowercase hex of SHA-256( client_random (32 bytes, from the first
 *              ClientHello) || server_random (32 bytes, from the ServerHello that is not
 *              a HelloRetryRequest; 32 zero bytes if none was seen) || early_data_bytes
 *              as an 8-byte big-endian unsigned integer )
 * early_data_bytes = the connections column: the summed payload lengths (record header
 * excluded, AEAD tag included) of the client's 0-RTT application-data records. */
/* The tls_info JSON of a live parser state (from p2s_conn_switch(conn, &p2s_tls_ops)),
 * malloc'd; for tests. */
char *tls_info(void *tls_state);

void tls_ctx_hash(const uint8_t client_random[32], const uint8_t server_random[32],
                  uint64_t early_bytes, char out[65]);

#endif

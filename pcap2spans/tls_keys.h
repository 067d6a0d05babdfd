/* tls_keys.h - TLS secrets by ClientHello.random (tls_keys.c): NSS key log files and
 * pcapng Decryption Secrets Blocks, looked up by the record parser (tls.c).
 *
 * References: the NSS key log format, pcapng Decryption Secrets Block
 * (draft-ietf-opsawg-pcapng section 4.7).
 */
#ifndef P2S_TLS_KEYS_H
#define P2S_TLS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

#define TLS_RANDOM_LEN 32
#define TLS_SECRET_MAX 48 /* SHA-384 traffic secrets and the TLS 1.2 master secret */

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

#endif

/* tls.h - the TLS layer of pcap2spans as the rest of the tool sees it: secrets
 * (tls_keys.h), the key schedule and AEAD through OpenSSL libcrypto 3 (tls_crypto.h),
 * and the record and handshake parser with 0-RTT accounting (tls.c, tls_hs.c and
 * tls_facts.c behind tls_int.h), exported as p2s_tls_ops below.
 *
 * References: RFC 8446 (TLS 1.3), RFC 5246 + RFC 5288 + RFC 7905 (TLS 1.2 AEAD suites),
 * the NSS key log format, pcapng Decryption Secrets Block (draft-ietf-opsawg-pcapng
 * section 4.7).
 */
#ifndef P2S_TLS_H
#define P2S_TLS_H

#include "tls_crypto.h"
#include "tls_keys.h"

struct p2s_app_ops; /* conn.h */

/* The TLS parser (tls.c): records, handshake facts, decryption with a key log. */
extern const struct p2s_app_ops p2s_tls_ops;

/* ---- the record/handshake parser: facts, for tests ------------------------------- */

/* The tls_info JSON of a live parser state (from p2s_conn_switch(conn, &p2s_tls_ops)),
 * malloc'd; for tests. */
char *tls_info(void *tls_state);

#endif

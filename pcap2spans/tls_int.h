/* tls_int.h - inside the TLS parser: the connection state that its three rooms share.
 *   tls.c        records, decryption and keys, 0-RTT, the inner HTTP parser; p2s_tls_ops
 *   tls_hs.c     handshake messages: ClientHello, ServerHello, EncryptedExtensions,
 *                NewSessionTicket, KeyUpdate, Finished
 *   tls_facts.c  what the writers get: the connection's TLS facts and its tls_info JSON
 * Only these three include it; the rest of the tool sees tls.h.
 */
#ifndef P2S_TLS_INT_H
#define P2S_TLS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "sf_buf.h"
#include "sf_db_net.h"
#include "sf_err.h"
#include "tls_crypto.h"
#include "tls_keys.h"

#define HS_MAX (256u << 10) /* a handshake message over this is skipped */
#define NLIST  32           /* client versions, groups kept (suites: twice as many) */

enum stage { ST_EARLY = 0, ST_HS = 1, ST_APP = 2, ST_N = 3 };
enum verdict { V_NONE = 0, V_ACCEPTED, V_REJECTED };

struct early_chunk {
    struct early_chunk *next;
    int64_t ts;
    size_t n;
    uint8_t d[];
};

struct tdir {
    uint8_t hdr[5]; /* the record header (also the AEAD's additional data) */
    size_t hdr_have;
    uint8_t rtype; /* its content type, decoded by rec_header() */
    uint8_t *frag; /* a record split across segments (REC_MAX12 bytes, on demand) */
    size_t frag_len, frag_have;
    uint64_t off;     /* bytes of this direction consumed */
    uint64_t records; /* records seen (1-based number of the current one) */
    int lost;         /* framing lost (gap or garbage): this direction is ignored */
    struct sf_buf hs; /* the handshake message being reassembled */
    uint32_t hs_skip; /* bytes of an oversized message still to skip */
    int stage;        /* TLS 1.3 key in use: ST_* */
    struct tls_aead k[ST_N];
    int kstate[ST_N];               /* 0 not set up, 1 ready, -1 unavailable */
    uint8_t secret[TLS_SECRET_MAX]; /* application traffic secret (KeyUpdate) */
    size_t slen;
    int ccs;      /* TLS 1.2: change_cipher_spec seen, records are protected */
    int keyed_ok; /* a record opened under a handshake or application key */
    uint64_t opened;
    int key_updates;
};

struct alert {
    uint8_t from, level, desc, enc;
    int64_t ts;
};

struct tls {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
    struct tdir d[2];
    uint8_t *pt; /* plaintext scratch (REC_MAX12), allocated when keys are known */
    int ch_seen, sh_seen, hrr, tls12;
    uint8_t crandom[32], srandom[32];
    uint16_t legacy_version, version, suite_id, hrr_group, selected_group;
    const struct tls_suite *suite;
    char sni[256];
    char alpn[64];
    const char *alpn_from;
    char alpn_offer[8][32];
    int nalpn_offer;
    uint16_t cvers[NLIST], csuites[NLIST * 2], groups[NLIST], kshare[8];
    int ncvers, ncsuites, ngroups, nkshare;
    uint8_t modes[8];
    int nmodes;
    int psk_offered, psk_ids, psk_selected, early_offered;
    uint32_t psk_age;
    enum verdict verdict;
    const char *why;
    uint64_t early_records, early_bytes, early_pt, early_rec_clear, early_bytes_clear;
    struct early_chunk *eh, **et;
    size_t ebuf;
    uint64_t early_dropped;
    const struct tls_keyent *keys;
    const struct tls_suite *early_suite;
    int dead;
    char derr[128];
    struct alert alerts[4];
    int nalerts;
    int tickets;
    int64_t max_early;
    int ee_seen, fin[2];
    int64_t ch_ts; /* the ClientHello's record */
    int hs_noted;  /* the handshake's time was noted (tls_handshake event) */
    const struct p2s_app_ops *inner;
    void *inner_st;
    int inner_none;
    struct sf_net_tls facts;
    char hash[65];
};

static inline const char *tls_dir_name(enum p2s_dir dir)
{
    return dir == P2S_C2S ? "client" : "server";
}

/* ---- tls.c ------------------------------------------------------------------------ */

/* The first decryption error of the connection (later ones are not kept); dead: stop
 * decrypting it. */
void tls_set_derr(struct tls *t, int dead, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The 0-RTT verdict, once: held early data goes to the inner parser (accepted) or
 * becomes an event (rejected); why is a static string. */
void tls_set_verdict(struct tls *t, enum verdict v, const char *why);
/* From the next record on, a direction uses key st (TLS 1.3); earlier keys are freed. */
void tls_set_stage(struct tls *t, enum p2s_dir dir, int st);
/* KeyUpdate: the direction's next application traffic secret and key. */
void tls_key_update(struct tls *t, enum p2s_dir dir);
/* TLS 1.2: both directions' keys from the master secret (or a decrypt_error). */
void tls_derive_tls12(struct tls *t);

/* ---- tls_hs.c --------------------------------------------------------------------- */

/* Handshake bytes of one record (cleartext: st = -1, or decrypted under key st),
 * reassembled into messages across records.  Returns 0 or the last error (err set);
 * a malformed message is reported and skipped. */
int tls_hs_feed(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n, int st, int64_t ts,
                struct sf_err *err);

/* ---- tls_facts.c ------------------------------------------------------------------ */

/* t->facts from the state, for the spans emitted next and the connections row. */
void tls_facts_update(struct tls *t);
/* The tls_info JSON object, malloc'd; NULL on allocation failure. */
char *tls_facts_json(struct tls *t);
/* The name of a TLS alert description (RFC 8446 section 6), "unknown" if none. */
const char *tls_facts_alert_name(int desc);

#endif

/* tls.c - TLS connections: records, handshake facts, 0-RTT, decryption, inner HTTP.
 *
 * References: RFC 8446 (TLS 1.3), RFC 5246 (TLS 1.2), RFC 8448 (example traces), the NSS key log
 * format.
 *
 *   record      type(1) legacy_version(2) length(2) fragment   length <= 2^14 + 256
 *               (TLS 1.2 ciphertext: 2^14 + 2048); 20 change_cipher_spec, 21 alert,
 *               22 handshake, 23 application_data (every protected TLS 1.3 record)
 *   handshake   msg_type(1) length(3) body; messages span records and TCP segments
 *               and are reassembled per direction (a message over 256 KiB is skipped)
 *   TLS 1.3 protected record: AEAD(content || inner type || zero padding), AAD = header
 *
 * Keys come from the key log (tls_keys.c) by the first ClientHello's random.  Order per
 * direction (RFC 8446 section 7.1): client early (CLIENT_EARLY_TRAFFIC_SECRET, only if the
 * ClientHello offered early_data) -> handshake -> application (traffic secret 0, then
 * "traffic upd" after each KeyUpdate).  A record that does not open under the current
 * key is tried under the next one (the tag decides: a rejected 0-RTT client goes from
 * early straight to handshake keys); if neither opens it, decryption of the connection
 * stops with decrypt_error "authentication failed at record N (client|server)", N the
 * 1-based record number in that direction.  Unencrypted change_cipher_spec records are
 * skipped and use no sequence number.  Without the early secret, client records before
 * its first handshake-key record are counted as 0-RTT and skipped.
 *
 * 0-RTT (RFC 8446 sections 2.3, 4.2.10): early_data column
 *   none      the ClientHello has no early_data extension
 *   offered   it has, and no ServerHello was seen
 *   rejected  proven: HelloRetryRequest, a ServerHello without pre_shared_key or with
 *             selected_identity != 0, or (with keys) EncryptedExtensions without early_data
 *   accepted  proven with keys only: early_data in EncryptedExtensions, or an
 *             EndOfEarlyData opened with the client early key
 *   unknown   anything else (never guessed)
 * Decrypted 0-RTT application data is held (up to 256 KiB) until the verdict.  Accepted:
 * it goes to the inner parser with the connection's early-data flag set, so its
 * requests get span.early_data = 1.  Rejected or never decided: the server did not
 * process it, so it is NOT given to the inner parser and yields no span; a
 * connection_events row (kind early_data_rejected / early_data_unknown) records its
 * size and first line instead.
 * early_data_records / early_data_bytes: the client's 0-RTT application-data records
 * and their summed payload lengths (header excluded, AEAD tag included): with the
 * early secret, the records that open under it; without, the client's protected
 * records seen before the ServerHello.
 *
 * Inner protocol: ALPN ("h2", "http/1.1") from EncryptedExtensions (TLS 1.3) or the
 * ServerHello (TLS 1.2); else by content of the client's first plaintext (the HTTP/2
 * preface, or an HTTP/1 request line).  app_proto becomes the inner protocol.
 */
#include "tls.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "ctx.h"
#include "detect.h"
#include "h1.h"
#include "h2.h"
#include "sf_buf.h"
#include "sf_db_net.h"
#include "sf_json.h"
#include "sf_rd.h"

#define REC_MAX13 (16384u + 256u)
#define REC_MAX12 (16384u + 2048u)
#define HS_MAX    (256u << 10)
#define EARLY_MAX (256u << 10)
#define NLIST     32

enum stage { ST_EARLY = 0, ST_HS = 1, ST_APP = 2, ST_N = 3 };
enum verdict { V_NONE = 0, V_ACCEPTED, V_REJECTED };

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

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
    const struct p2s_app_ops *inner;
    void *inner_st;
    int inner_none;
    struct sf_net_tls facts;
    char hash[65];
};

/* ---- small helpers ------------------------------------------------------------------ */

static const char *dir_name(enum p2s_dir dir)
{
    return dir == P2S_C2S ? "client" : "server";
}

static const char *alert_name(int d)
{
    switch (d) {
    case 0:
        return "close_notify";
    case 10:
        return "unexpected_message";
    case 20:
        return "bad_record_mac";
    case 22:
        return "record_overflow";
    case 40:
        return "handshake_failure";
    case 42:
        return "bad_certificate";
    case 43:
        return "unsupported_certificate";
    case 44:
        return "certificate_revoked";
    case 45:
        return "certificate_expired";
    case 46:
        return "certificate_unknown";
    case 47:
        return "illegal_parameter";
    case 48:
        return "unknown_ca";
    case 49:
        return "access_denied";
    case 50:
        return "decode_error";
    case 51:
        return "decrypt_error";
    case 70:
        return "protocol_version";
    case 71:
        return "insufficient_security";
    case 80:
        return "internal_error";
    case 86:
        return "inappropriate_fallback";
    case 90:
        return "user_canceled";
    case 109:
        return "missing_extension";
    case 110:
        return "unsupported_extension";
    case 112:
        return "unrecognized_name";
    case 113:
        return "bad_certificate_status_response";
    case 115:
        return "unknown_psk_identity";
    case 116:
        return "certificate_required";
    case 120:
        return "no_application_protocol";
    default:
        return "unknown";
    }
}

static const char *version_name(uint16_t v)
{
    switch (v) {
    case 0x0304:
        return "TLS 1.3";
    case 0x0303:
        return "TLS 1.2";
    case 0x0302:
        return "TLS 1.1";
    case 0x0301:
        return "TLS 1.0";
    default:
        return NULL;
    }
}

static const char *early_name(const struct tls *t)
{
    if (!t->early_offered)
        return "none";
    if (t->verdict == V_ACCEPTED)
        return "accepted";
    if (t->verdict == V_REJECTED)
        return "rejected";
    return t->sh_seen ? "unknown" : "offered";
}

static void facts_update(struct tls *t)
{
    struct sf_net_tls *f = &t->facts;

    f->version = t->sh_seen ? version_name(t->version) : NULL;
    f->cipher = t->sh_seen ? tls_suite_name(t->suite_id) : NULL;
    f->sni = t->sni[0] ? t->sni : NULL;
    /* TLS 1.3 sends the server's choice encrypted: without it, the client's first
     * offer (tls_info.alpn_from says which) */
    f->alpn = t->alpn[0] ? t->alpn : t->nalpn_offer ? t->alpn_offer[0] : NULL;
    f->early_data = early_name(t);
    if (t->keys && t->keys->s[TLS_SK_CET].len) {
        f->early_data_records = (int64_t)t->early_records;
        f->early_data_bytes = (int64_t)t->early_bytes;
    } else {
        f->early_data_records = (int64_t)t->early_rec_clear;
        f->early_data_bytes = (int64_t)t->early_bytes_clear;
    }
    f->decrypted = !t->dead && (t->d[0].opened || t->d[1].opened);
    f->decrypt_error = t->derr[0] ? t->derr : NULL;
}

static void set_derr(struct tls *t, int dead, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_derr(struct tls *t, int dead, const char *fmt, ...)
{
    va_list ap;

    if (t->derr[0] == 0) {
        va_start(ap, fmt);
        vsnprintf(t->derr, sizeof(t->derr), fmt, ap);
        va_end(ap);
    }
    if (dead)
        t->dead = 1;
}

/* ---- inner application parser ------------------------------------------------------- */

/* The parser for plaintext: the one ALPN names, else the one the client's first bytes
 * select (an HTTP/2 preface or an HTTP/1 request line); NULL for neither. */
static const struct p2s_app_ops *inner_ops(const struct tls *t, enum p2s_dir dir, const uint8_t *p,
                                           size_t n)
{
    const struct det_probe *hit;

    if (strcmp(t->alpn, "h2") == 0)
        return &p2s_h2_ops;
    if (strcmp(t->alpn, "http/1.1") == 0 || strcmp(t->alpn, "http/1.0") == 0)
        return &p2s_h1_ops;
    if (dir == P2S_C2S &&
        det_first(DET_BIT(DET_H2_PREFACE) | DET_BIT(DET_H1_REQUEST), p, n, 1, &hit) == DET_YES)
        return hit->app == DET_APP_H2 ? &p2s_h2_ops : &p2s_h1_ops;
    return NULL;
}

static void inner_choose(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n)
{
    t->inner = inner_ops(t, dir, p, n);
    t->inner_none = t->inner == NULL && dir == P2S_C2S;
    if (t->inner == NULL)
        return;
    t->inner_st = t->inner->open(t->ctx, t->conn);
    if (t->inner_st == NULL) {
        t->inner = NULL;
        t->inner_none = 1;
        return;
    }
    p2s_conn_set_proto(t->conn, t->inner->name);
}

static void app_data(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts)
{
    struct sf_err e;

    if (n == 0 || t->inner_none)
        return;
    if (t->inner == NULL) {
        inner_choose(t, dir, p, n);
        if (t->inner == NULL)
            return;
    }
    sf_err_clear(&e);
    if (t->inner->data(t->inner_st, dir, p, n, ts, &e) < 0) {
        if (e.proto == NULL)
            e.proto = t->inner->name;
        p2s_report(t->ctx, &e);
    }
}

/* ---- 0-RTT ---------------------------------------------------------------------------- */

static void early_free(struct tls *t)
{
    struct early_chunk *c = t->eh, *next;

    for (; c; c = next) {
        next = c->next;
        free(c);
    }
    t->eh = NULL;
    t->et = &t->eh;
    t->ebuf = 0;
}

/* 0-RTT plaintext the server rejected still shows what the client sent, and its retry
 * in 1-RTT may carry the same trace context or another: it goes through a parser of its
 * own (not the connection's, which reads the 1-RTT stream), chosen like the inner one,
 * with the early-data and not-delivered flags set, so its requests become spans with
 * early_data = 1, delivered = 0.  It is closed at once (no response can come); its
 * errors are not the capture's, so they are not reported. */
static void early_parse_rejected(struct tls *t)
{
    const struct p2s_app_ops *ops = inner_ops(t, P2S_C2S, t->eh->d, t->eh->n);
    const char *proto = p2s_conn_info(t->conn)->app_proto;
    struct early_chunk *c;
    int64_t ts = 0;
    void *st;

    if (ops == NULL || (st = ops->open(t->ctx, t->conn)) == NULL)
        return;
    p2s_conn_set_early_data(t->conn, 1);
    p2s_conn_set_undelivered(t->conn, 1);
    for (c = t->eh; c; c = c->next) {
        struct sf_err e;

        sf_err_clear(&e);
        ops->data(st, P2S_C2S, c->d, c->n, c->ts, &e);
        ts = c->ts;
    }
    ops->close(st, ts);
    p2s_conn_set_undelivered(t->conn, 0);
    p2s_conn_set_early_data(t->conn, 0);
    p2s_conn_set_proto(t->conn, proto);
}

/* The held 0-RTT plaintext was not processed by the server (or we cannot tell): an
 * event with its size and first line; rejected data is parsed into spans as well. */
static void early_drop(struct tls *t, const char *kind)
{
    char detail[160];
    size_t k = 0;

    if (t->eh == NULL && !t->early_dropped)
        return;
    if (t->eh && strcmp(kind, "early_data_rejected") == 0)
        early_parse_rejected(t);
    if (t->eh) {
        const uint8_t *p = t->eh->d;
        while (k < t->eh->n && k < 80 && p[k] >= 0x20 && p[k] < 0x7f)
            k++;
    }
    snprintf(detail, sizeof(detail), "%zu plaintext bytes not processed; first line: %.*s",
             t->ebuf + (size_t)t->early_dropped, (int)k, t->eh ? (const char *)t->eh->d : "");
    p2s_note(t->ctx, t->conn, kind, detail, t->eh ? t->eh->ts : 0);
    early_free(t);
    t->early_dropped = 0;
}

static void early_feed(struct tls *t)
{
    struct early_chunk *c;

    p2s_conn_set_early_data(t->conn, 1);
    for (c = t->eh; c; c = c->next)
        app_data(t, P2S_C2S, c->d, c->n, c->ts);
    p2s_conn_set_early_data(t->conn, 0);
    early_free(t);
}

static void set_verdict(struct tls *t, enum verdict v, const char *why)
{
    if (!t->early_offered || t->verdict != V_NONE)
        return;
    t->verdict = v;
    t->why = why;
    facts_update(t); /* spans emitted below carry the verdict */
    if (v == V_ACCEPTED)
        early_feed(t);
    else
        early_drop(t, "early_data_rejected");
    facts_update(t);
}

static void early_data(struct tls *t, const uint8_t *p, size_t n, int64_t ts)
{
    struct early_chunk *c;

    t->early_pt += n;
    if (t->verdict == V_ACCEPTED) {
        p2s_conn_set_early_data(t->conn, 1);
        app_data(t, P2S_C2S, p, n, ts);
        p2s_conn_set_early_data(t->conn, 0);
        return;
    }
    if (t->verdict == V_REJECTED || t->ebuf + n > EARLY_MAX ||
        (c = malloc(sizeof(*c) + n)) == NULL) {
        t->early_dropped += n;
        return;
    }
    c->next = NULL;
    c->ts = ts;
    c->n = n;
    memcpy(c->d, p, n);
    *t->et = c;
    t->et = &c->next;
    t->ebuf += n;
}

/* ---- keys ------------------------------------------------------------------------------ */

static const struct tls_secret *stage_secret(const struct tls *t, enum p2s_dir dir, int st)
{
    static const enum tls_sk c2s[ST_N] = {TLS_SK_CET, TLS_SK_CHT, TLS_SK_CT0};
    static const enum tls_sk s2c[ST_N] = {TLS_SK_CET, TLS_SK_SHT, TLS_SK_ST0};

    if (t->keys == NULL || (dir == P2S_S2C && st == ST_EARLY))
        return NULL;
    return &t->keys->s[dir == P2S_C2S ? c2s[st] : s2c[st]];
}

/* Set up key `st` of a direction (TLS 1.3).  1 ready, -1 unavailable. */
static int key_ready(struct tls *t, enum p2s_dir dir, int st)
{
    struct tdir *d = &t->d[dir];
    const struct tls_secret *s;

    if (d->kstate[st])
        return d->kstate[st];
    s = stage_secret(t, dir, st);
    if (s == NULL || s->len == 0)
        return d->kstate[st] = -1;
    if (st == ST_EARLY) {
        /* before the ServerHello the PSK's suite is unknown: by the secret's length,
         * and for SHA-256 both AES-128-GCM and ChaCha20 are tried on the first record */
        if (t->early_suite == NULL && t->sh_seen && t->suite && t->suite->hashlen == s->len)
            t->early_suite = t->suite;
        if (t->early_suite == NULL)
            return 0; /* decided by trial in open_early */
        if (tls13_aead_init(&d->k[st], t->early_suite, s->b, s->len) < 0)
            return d->kstate[st] = -1;
        return d->kstate[st] = 1;
    }
    if (t->suite == NULL || t->suite->tls12 || s->len != t->suite->hashlen)
        return d->kstate[st] = -1;
    if (tls13_aead_init(&d->k[st], t->suite, s->b, s->len) < 0)
        return d->kstate[st] = -1;
    if (st == ST_APP) {
        memcpy(d->secret, s->b, s->len);
        d->slen = s->len;
    }
    return d->kstate[st] = 1;
}

static long open_early(struct tls *t, const uint8_t *hdr, const uint8_t *frag, size_t n)
{
    struct tdir *d = &t->d[P2S_C2S];
    const struct tls_secret *s = stage_secret(t, P2S_C2S, ST_EARLY);
    static const uint16_t cand[] = {0x1301, 0x1303, 0x1302};
    long r;

    if (key_ready(t, P2S_C2S, ST_EARLY) == 1)
        return tls_aead_open(&d->k[ST_EARLY], hdr, frag, n, t->pt);
    if (d->kstate[ST_EARLY] < 0 || s == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        const struct tls_suite *su = tls_suite_find(cand[i]);
        if (su->hashlen != s->len || tls13_aead_init(&d->k[ST_EARLY], su, s->b, s->len) < 0)
            continue;
        r = tls_aead_open(&d->k[ST_EARLY], hdr, frag, n, t->pt);
        if (r >= 0) {
            t->early_suite = su;
            d->kstate[ST_EARLY] = 1;
            return r;
        }
    }
    tls_aead_free(&d->k[ST_EARLY]);
    return -1;
}

static long open_stage(struct tls *t, enum p2s_dir dir, int st, const uint8_t *hdr,
                       const uint8_t *frag, size_t n)
{
    if (st == ST_EARLY)
        return dir == P2S_C2S ? open_early(t, hdr, frag, n) : -1;
    if (key_ready(t, dir, st) != 1)
        return -1;
    return tls_aead_open(&t->d[dir].k[st], hdr, frag, n, t->pt);
}

static void set_stage(struct tls *t, enum p2s_dir dir, int st)
{
    struct tdir *d = &t->d[dir];

    for (int i = 0; i < st; i++)
        tls_aead_free(&d->k[i]);
    if (st > d->stage)
        d->stage = st;
}

/* KeyUpdate: secret_{N+1} = HKDF-Expand-Label(secret_N, "traffic upd", "", Hash.length). */
static void key_update(struct tls *t, enum p2s_dir dir)
{
    struct tdir *d = &t->d[dir];
    uint8_t next[TLS_SECRET_MAX];

    if (d->slen == 0 || t->suite == NULL)
        return;
    if (tls13_expand_label(t->suite->hashlen, d->secret, d->slen, "traffic upd", NULL, 0, next,
                           d->slen) < 0 ||
        tls13_aead_init(&d->k[ST_APP], t->suite, next, d->slen) < 0) {
        set_derr(t, 1, "KeyUpdate: key derivation failed");
        return;
    }
    memcpy(d->secret, next, d->slen);
}

/* TLS 1.2 key block (RFC 5246 6.3): client_write_key, server_write_key, client_write_IV,
 * server_write_IV (AEAD suites have no MAC keys). */
static void tls12_keys(struct tls *t)
{
    const struct tls_suite *s = t->suite;
    uint8_t seed[64], kb[2 * 32 + 2 * 12];
    size_t kl, il;

    if (t->keys == NULL || s == NULL)
        return;
    if (t->keys->s[TLS_SK_MASTER].len != 48) {
        set_derr(t, 1, "no CLIENT_RANDOM line for this client random");
        return;
    }
    kl = s->keylen;
    il = s->fixed_iv;
    memcpy(seed, t->srandom, 32);
    memcpy(seed + 32, t->crandom, 32);
    if (tls12_prf(s->hashlen, t->keys->s[TLS_SK_MASTER].b, 48, "key expansion", seed, 64, kb,
                  2 * kl + 2 * il) < 0 ||
        tls12_aead_init(&t->d[0].k[ST_APP], s, kb, kb + 2 * kl) < 0 ||
        tls12_aead_init(&t->d[1].k[ST_APP], s, kb + kl, kb + 2 * kl + il) < 0) {
        set_derr(t, 1, "TLS 1.2 key block derivation failed");
        return;
    }
    t->d[0].kstate[ST_APP] = t->d[1].kstate[ST_APP] = 1;
    t->d[0].stage = t->d[1].stage = ST_APP;
}

/* ---- handshake messages ---------------------------------------------------------------- */

static void copy_str(char *out, size_t outsz, const uint8_t *p, size_t n)
{
    size_t k = n < outsz - 1 ? n : outsz - 1;

    memcpy(out, p, k);
    out[k] = 0;
    for (size_t i = 0; i < k; i++)
        if (out[i] == 0)
            out[i] = '?';
}

static int parse_ch(struct tls *t, struct sf_rd *rd)
{
    int first = !t->ch_seen;
    const uint8_t *random;
    struct sf_rd ext;

    t->legacy_version = sf_rd_u16be(rd);
    random = sf_rd_bytes(rd, 32);
    sf_rd_skip(rd, sf_rd_u8(rd));
    for (struct sf_rd s = sf_rd_vec16(rd); sf_rd_left(&s) >= 2;) {
        uint16_t v = sf_rd_u16be(&s);
        if (first && t->ncsuites < NLIST * 2)
            t->csuites[t->ncsuites++] = v;
    }
    sf_rd_skip(rd, sf_rd_u8(rd));
    if (rd->err)
        return -1;
    if (first) {
        memcpy(t->crandom, random, 32);
        t->keys = p2s_tls_keys_find(t->ctx->tls_keys, t->crandom); /* 0-RTT needs them now */
    }
    t->ch_seen = 1;
    if (sf_rd_left(rd) == 0)
        return 0;
    ext = sf_rd_vec16(rd);
    while (!ext.err && sf_rd_left(&ext) >= 4) {
        uint16_t type = sf_rd_u16be(&ext);
        struct sf_rd e = sf_rd_vec16(&ext);
        if (!first && type != 41 && type != 42)
            continue; /* a second ClientHello (after HRR) repeats the first */
        switch (type) {
        case 0: { /* server_name */
            struct sf_rd l = sf_rd_vec16(&e);
            while (!l.err && sf_rd_left(&l) >= 3) {
                uint8_t nt = sf_rd_u8(&l);
                uint16_t nl = sf_rd_u16be(&l);
                const uint8_t *name = sf_rd_bytes(&l, nl);
                if (nt == 0 && name && t->sni[0] == 0)
                    copy_str(t->sni, sizeof(t->sni), name, nl);
            }
            e.err |= l.err;
            break;
        }
        case 10: { /* supported_groups */
            struct sf_rd l = sf_rd_vec16(&e);
            while (sf_rd_left(&l) >= 2) {
                uint16_t g = sf_rd_u16be(&l);
                if (t->ngroups < NLIST)
                    t->groups[t->ngroups++] = g;
            }
            e.err |= l.err;
            break;
        }
        case 16: { /* application_layer_protocol_negotiation */
            struct sf_rd l = sf_rd_vec16(&e);
            while (!l.err && sf_rd_left(&l) >= 1) {
                uint8_t pl = sf_rd_u8(&l);
                const uint8_t *pn = sf_rd_bytes(&l, pl);
                if (pn && t->nalpn_offer < 8) {
                    copy_str(t->alpn_offer[t->nalpn_offer], 32, pn, pl);
                    t->nalpn_offer++;
                }
            }
            e.err |= l.err;
            break;
        }
        case 51: { /* key_share */
            struct sf_rd l = sf_rd_vec16(&e);
            while (!l.err && sf_rd_left(&l) >= 4) {
                uint16_t g = sf_rd_u16be(&l);
                sf_rd_skip(&l, sf_rd_u16be(&l));
                if (!l.err && t->nkshare < 8)
                    t->kshare[t->nkshare++] = g;
            }
            e.err |= l.err;
            break;
        }
        case 42: /* early_data: empty in a ClientHello */
            if (first)
                t->early_offered = 1;
            break;
        case 43: { /* supported_versions */
            struct sf_rd l = sf_rd_vec8(&e);
            while (sf_rd_left(&l) >= 2) {
                uint16_t v = sf_rd_u16be(&l);
                if (t->ncvers < NLIST)
                    t->cvers[t->ncvers++] = v;
            }
            e.err |= l.err;
            break;
        }
        case 45: { /* psk_key_exchange_modes */
            struct sf_rd l = sf_rd_vec8(&e);
            while (sf_rd_left(&l) >= 1) {
                uint8_t m = sf_rd_u8(&l);
                if (t->nmodes < 8)
                    t->modes[t->nmodes++] = m;
            }
            break;
        }
        case 41: { /* pre_shared_key: identities, then binders */
            struct sf_rd l = sf_rd_vec16(&e);
            if (!first)
                break;
            t->psk_offered = 1;
            while (!l.err && sf_rd_left(&l) >= 6) {
                sf_rd_skip(&l, sf_rd_u16be(&l));
                uint32_t age = sf_rd_u32be(&l);
                if (!l.err && t->psk_ids++ == 0)
                    t->psk_age = age;
            }
            e.err |= l.err;
            break;
        }
        default:
            break;
        }
        if (e.err)
            return -1;
    }
    return ext.err ? -1 : 0;
}

static int parse_sh(struct tls *t, struct sf_rd *rd, int64_t ts)
{
    const uint8_t *random;
    uint16_t suite, version = 0;
    int psk = -1, is_hrr;
    struct sf_rd ext;
    char alpn[64] = "";

    t->legacy_version = sf_rd_u16be(rd);
    random = sf_rd_bytes(rd, 32);
    sf_rd_skip(rd, sf_rd_u8(rd));
    suite = sf_rd_u16be(rd);
    sf_rd_u8(rd);
    if (rd->err)
        return -1;
    is_hrr = memcmp(random, hrr_random, 32) == 0;
    if (sf_rd_left(rd)) {
        ext = sf_rd_vec16(rd);
        while (!ext.err && sf_rd_left(&ext) >= 4) {
            uint16_t type = sf_rd_u16be(&ext);
            struct sf_rd e = sf_rd_vec16(&ext);
            if (type == 43)
                version = sf_rd_u16be(&e);
            else if (type == 41)
                psk = sf_rd_u16be(&e);
            else if (type == 51) {
                uint16_t g = sf_rd_u16be(&e);
                if (is_hrr)
                    t->hrr_group = g;
                else
                    t->selected_group = g;
            } else if (type == 16) {
                struct sf_rd l = sf_rd_vec16(&e);
                uint8_t pl = sf_rd_u8(&l);
                const uint8_t *pn = sf_rd_bytes(&l, pl);
                if (pn)
                    copy_str(alpn, sizeof(alpn), pn, pl);
            }
            if (e.err)
                return -1;
        }
        if (ext.err)
            return -1;
    }
    if (is_hrr) {
        char detail[96];
        t->hrr = 1;
        snprintf(detail, sizeof(detail), "HelloRetryRequest: the server asks for group 0x%04x",
                 t->hrr_group);
        p2s_note(t->ctx, t->conn, "hrr", detail, ts);
        set_verdict(t, V_REJECTED, "HelloRetryRequest");
        return 0;
    }
    if (t->sh_seen)
        return 0;
    t->sh_seen = 1;
    memcpy(t->srandom, random, 32);
    t->suite_id = suite;
    t->suite = tls_suite_find(suite);
    t->version = version ? version : t->legacy_version;
    t->tls12 = t->version != 0x0304;
    t->psk_selected = psk;
    if (alpn[0]) {
        snprintf(t->alpn, sizeof(t->alpn), "%s", alpn);
        t->alpn_from = "ServerHello";
    }
    if (!t->tls12) {
        if (psk < 0)
            set_verdict(t, V_REJECTED, "ServerHello has no pre_shared_key (full handshake)");
        else if (psk != 0)
            set_verdict(t, V_REJECTED, "ServerHello selected_identity != 0");
    } else {
        set_verdict(t, V_REJECTED, "TLS 1.2 negotiated");
    }
    /* keys */
    if (p2s_tls_keys_count(t->ctx->tls_keys) == 0)
        set_derr(t, 0, "no key log");
    else if (t->keys == NULL)
        set_derr(t, 0, "no key for this client random");
    else if (t->suite == NULL)
        set_derr(t, 1, "unsupported cipher suite 0x%04x", suite);
    else if (t->tls12 && !t->suite->tls12)
        set_derr(t, 1, "TLS 1.3 suite in a TLS 1.2 handshake");
    else if (!t->tls12 && t->suite->tls12)
        set_derr(t, 1, "TLS 1.2 suite in a TLS 1.3 handshake");
    else if (t->tls12)
        tls12_keys(t);
    facts_update(t);
    return 0;
}

static int parse_ee(struct tls *t, struct sf_rd *rd)
{
    struct sf_rd ext = sf_rd_vec16(rd);
    int early = 0;

    while (!ext.err && sf_rd_left(&ext) >= 4) {
        uint16_t type = sf_rd_u16be(&ext);
        struct sf_rd e = sf_rd_vec16(&ext);
        if (type == 42)
            early = 1;
        else if (type == 16) {
            struct sf_rd l = sf_rd_vec16(&e);
            uint8_t pl = sf_rd_u8(&l);
            const uint8_t *pn = sf_rd_bytes(&l, pl);
            if (pn) {
                copy_str(t->alpn, sizeof(t->alpn), pn, pl);
                t->alpn_from = "EncryptedExtensions";
            }
        }
    }
    if (ext.err)
        return -1;
    t->ee_seen = 1;
    if (early)
        set_verdict(t, V_ACCEPTED, "EncryptedExtensions has early_data");
    else
        set_verdict(t, V_REJECTED, "EncryptedExtensions without early_data");
    facts_update(t);
    return 0;
}

static int parse_nst(struct tls *t, struct sf_rd *rd)
{
    struct sf_rd ext;

    sf_rd_u32be(rd);                 /* ticket_lifetime */
    sf_rd_u32be(rd);                 /* ticket_age_add */
    sf_rd_skip(rd, sf_rd_u8(rd));    /* ticket_nonce */
    sf_rd_skip(rd, sf_rd_u16be(rd)); /* ticket */
    ext = sf_rd_vec16(rd);
    while (!ext.err && sf_rd_left(&ext) >= 4) {
        uint16_t type = sf_rd_u16be(&ext);
        struct sf_rd e = sf_rd_vec16(&ext);
        if (type == 42)
            t->max_early = sf_rd_u32be(&e);
    }
    if (rd->err || ext.err)
        return -1;
    t->tickets++;
    return 0;
}

/* One complete handshake message.  `st` is the key it came under (-1 cleartext). */
static int hs_msg(struct tls *t, enum p2s_dir dir, uint8_t type, const uint8_t *b, size_t n, int st,
                  int64_t ts, struct sf_err *err)
{
    struct sf_rd rd;
    const char *what = NULL;
    int rc = 0;

    sf_rd_init(&rd, b, n, 0);
    switch (type) {
    case 1:
        if (dir == P2S_C2S && st < 0 && (rc = parse_ch(t, &rd)) < 0)
            what = "ClientHello";
        break;
    case 2:
        if (dir == P2S_S2C && st < 0 && (rc = parse_sh(t, &rd, ts)) < 0)
            what = "ServerHello";
        break;
    case 4: /* NewSessionTicket (TLS 1.2's has another layout, RFC 5077) */
        if (dir == P2S_S2C && !t->tls12 && (rc = parse_nst(t, &rd)) < 0)
            what = "NewSessionTicket";
        break;
    case 5: /* EndOfEarlyData: sent only after the server accepted 0-RTT */
        if (dir == P2S_C2S && st == ST_EARLY) {
            set_verdict(t, V_ACCEPTED, "EndOfEarlyData under the early key");
            set_stage(t, dir, ST_HS);
        }
        break;
    case 8:
        if (dir == P2S_S2C && (rc = parse_ee(t, &rd)) < 0)
            what = "EncryptedExtensions";
        break;
    case 20: /* Finished: the next records use the application key */
        t->fin[dir] = 1;
        if (!t->tls12 && st == ST_HS)
            set_stage(t, dir, ST_APP);
        break;
    case 24: { /* KeyUpdate */
        char detail[64];
        uint8_t req = sf_rd_u8(&rd);
        if (rd.err) {
            what = "KeyUpdate";
            rc = -1;
            break;
        }
        t->d[dir].key_updates++;
        snprintf(detail, sizeof(detail), "%s, %s", dir_name(dir),
                 req ? "update_requested" : "update_not_requested");
        p2s_note(t->ctx, t->conn, "key_update", detail, ts);
        if (st == ST_APP)
            key_update(t, dir);
        break;
    }
    default:
        break;
    }
    if (rc < 0)
        return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX,
                          "malformed %s (%zu bytes) in the %s stream", what, n, dir_name(dir));
    return 0;
}

/* The handshake message header (RFC 8446 section 4: type, uint24 length) at the start of
 * b; 0 while fewer than its 4 bytes are there. */
static int hs_header(const struct sf_buf *b, uint8_t *type, uint32_t *len)
{
    struct sf_rd rd;

    if (b->data == NULL) /* nothing appended yet: no storage */
        return 0;
    sf_rd_init(&rd, b->data, b->len, 0);
    *type = sf_rd_u8(&rd);
    *len = sf_rd_u24be(&rd);
    return !rd.err;
}

/* Handshake bytes of one record (cleartext, or decrypted under key st). */
/* A whole handshake message at in (the usual case: one record holds it), of at most
 * HS_MAX bytes: its body, read in place, and in advanced past it; NULL (in unmoved) when
 * it is cut or oversized and takes the copying path of hs_feed. */
static const uint8_t *hs_whole(struct sf_rd *in, uint8_t *type, uint32_t *len)
{
    struct sf_rd m = *in;
    const uint8_t *body;

    *type = sf_rd_u8(&m);
    *len = sf_rd_u24be(&m);
    if (m.err || *len > HS_MAX - 4 || (body = sf_rd_bytes(&m, *len)) == NULL)
        return NULL;
    *in = m;
    return body;
}

/* Handshake bytes of one record (cleartext, or decrypted under key st). */
static int hs_feed(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n, int st, int64_t ts,
                   struct sf_err *err)
{
    struct tdir *d = &t->d[dir];
    struct sf_rd in;
    int rc = 0, r;

    sf_rd_init(&in, p, n, 0);
    while (sf_rd_left(&in)) {
        size_t take, need;
        uint32_t len;
        uint8_t type;
        const uint8_t *body;
        if (d->hs_skip) {
            take = sf_rd_left(&in) < d->hs_skip ? sf_rd_left(&in) : d->hs_skip;
            d->hs_skip -= (uint32_t)take;
            sf_rd_skip(&in, take);
            continue;
        }
        if (d->hs.len == 0 && (body = hs_whole(&in, &type, &len)) != NULL) {
            if ((r = hs_msg(t, dir, type, body, len, st, ts, err)) < 0)
                rc = r;
            continue;
        }
        if (hs_header(&d->hs, &type, &len))
            need = 4 + len - d->hs.len;
        else
            need = 4 - d->hs.len;
        take = sf_rd_left(&in) < need ? sf_rd_left(&in) : need;
        if (sf_buf_append(&d->hs, sf_rd_bytes(&in, take), take) < 0)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        if (!hs_header(&d->hs, &type, &len))
            break;
        if (len > HS_MAX - 4) {
            d->hs_skip = len - (uint32_t)(d->hs.len - 4);
            sf_buf_reset(&d->hs);
            if (type == 1 || type == 2 || type == 8)
                rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX,
                                "handshake message type %u of %u bytes in the %s stream "
                                "exceeds %u bytes; skipped",
                                type, len, dir_name(dir), HS_MAX);
            continue;
        }
        if (d->hs.len == 4 + (size_t)len) {
            if ((r = hs_msg(t, dir, type, d->hs.data + 4, len, st, ts, err)) < 0)
                rc = r;
            sf_buf_reset(&d->hs);
        }
    }
    return rc;
}

static void alert(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n, int enc, int64_t ts)
{
    char detail[128];
    struct sf_rd rd;
    uint8_t level, desc;

    sf_rd_init(&rd, p, n, 0);
    level = sf_rd_u8(&rd);
    desc = sf_rd_u8(&rd);
    if (rd.err)
        return;
    snprintf(detail, sizeof(detail), "%s %s (%u) from the %s%s",
             level == 2   ? "fatal"
             : level == 1 ? "warning"
                          : "level?",
             alert_name(desc), desc, dir_name(dir), enc ? ", encrypted" : "");
    p2s_note(t->ctx, t->conn, "tls_alert", detail, ts);
    if (t->nalerts < 4) {
        struct alert *a = &t->alerts[t->nalerts++];
        a->from = (uint8_t)dir;
        a->level = level;
        a->desc = desc;
        a->enc = (uint8_t)enc;
    }
}

/* ---- records ---------------------------------------------------------------------------- */

/* A protected record.  Returns 0 or a negative SF_E_* with err set. */
static int protected_record(struct tls *t, enum p2s_dir dir, const uint8_t *hdr,
                            const uint8_t *frag, size_t n, int64_t ts, struct sf_err *err)
{
    struct tdir *d = &t->d[dir];
    long r = -1;
    int st = d->stage, used = -1;
    uint8_t type;

    if (dir == P2S_C2S && !t->sh_seen && t->early_offered) {
        t->early_rec_clear++;
        t->early_bytes_clear += n;
    }
    if (t->dead || t->keys == NULL)
        return 0;
    if (t->pt == NULL && (t->pt = malloc(REC_MAX12)) == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (t->tls12) {
        if ((r = tls_aead_open(&d->k[ST_APP], hdr, frag, n, t->pt)) >= 0)
            used = ST_APP;
    } else {
        if (dir == P2S_C2S && st == ST_EARLY && !t->early_offered)
            st = ST_HS;
        if (dir == P2S_S2C && st == ST_EARLY)
            st = ST_HS;
        for (int s = st; s < ST_N && s <= st + 1; s++) {
            if (s != ST_EARLY && !t->sh_seen)
                break;
            if ((r = open_stage(t, dir, s, hdr, frag, n)) >= 0) {
                used = s;
                break;
            }
        }
    }
    if (used < 0) {
        if (dir == P2S_C2S && !t->tls12 && t->early_offered && !d->keyed_ok &&
            t->keys->s[TLS_SK_CET].len == 0)
            return 0; /* 0-RTT we cannot open (no early secret): counted, skipped */
        set_derr(t, 1, "authentication failed at record %llu (%s)", (unsigned long long)d->records,
                 dir_name(dir));
        facts_update(t);
        return 0;
    }
    d->opened++;
    if (used != ST_EARLY)
        d->keyed_ok = 1;
    set_stage(t, dir, used);
    if (t->tls12) {
        type = d->rtype;
    } else {
        while (r > 0 && t->pt[r - 1] == 0)
            r--;
        if (r == 0) {
            set_derr(t, 1, "record %llu (%s) has no content type", (unsigned long long)d->records,
                     dir_name(dir));
            return 0;
        }
        type = t->pt[--r];
    }
    if (used == ST_EARLY && type == 23) {
        t->early_records++;
        t->early_bytes += n;
    }
    facts_update(t);
    switch (type) {
    case 22:
        return hs_feed(t, dir, t->pt, (size_t)r, used, ts, err);
    case 21:
        alert(t, dir, t->pt, (size_t)r, 1, ts);
        return 0;
    case 23:
        if (used == ST_EARLY)
            early_data(t, t->pt, (size_t)r, ts);
        else
            app_data(t, dir, t->pt, (size_t)r, ts);
        return 0;
    default:
        return 0;
    }
}

static int record(struct tls *t, enum p2s_dir dir, const uint8_t *hdr, const uint8_t *frag,
                  size_t n, int64_t ts, struct sf_err *err)
{
    struct tdir *d = &t->d[dir];
    uint8_t type = d->rtype;

    d->records++;
    if (type == 20) { /* change_cipher_spec: no sequence number */
        if (t->tls12 && t->sh_seen)
            d->ccs = 1;
        return 0;
    }
    if ((type == 23 && !t->tls12) || (t->tls12 && d->ccs))
        return protected_record(t, dir, hdr, frag, n, ts, err);
    if (type == 22)
        return hs_feed(t, dir, frag, n, -1, ts, err);
    if (type == 21)
        alert(t, dir, frag, n, 0, ts);
    return 0;
}

/* The record header in d->hdr (RFC 8446 section 5.1: type, legacy version 3.x, uint16
 * length; complete, so read at fixed offsets): d->rtype and d->frag_len, or an error (and the
 * direction lost) when it is no TLS record or longer than the version allows. */
static int rec_header(struct tls *t, struct tdir *d, enum p2s_dir dir, struct sf_err *err)
{
    size_t max = t->tls12 ? REC_MAX12 : REC_MAX13;
    uint16_t version = sf_rd_get_u16be(d->hdr, 1);

    d->rtype = sf_rd_get_u8(d->hdr, 0);
    d->frag_len = sf_rd_get_u16be(d->hdr, 3);
    d->frag_have = 0;
    if (d->rtype >= 20 && d->rtype <= 24 && version >> 8 == 3 && d->frag_len <= max)
        return 0;
    d->lost = 1;
    return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX,
                      "bad record header %02x %02x %02x %02x %02x at byte %llu of the %s stream "
                      "(length cap %zu); this direction is no longer parsed",
                      d->hdr[0], d->hdr[1], d->hdr[2], d->hdr[3], d->hdr[4],
                      (unsigned long long)(d->off - sizeof(d->hdr)), dir_name(dir), max);
}

static int tls_data(void *st, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts,
                    struct sf_err *err)
{
    struct tls *t = st;
    struct tdir *d = &t->d[dir];
    struct sf_rd in;
    int rc = 0, r;

    sf_rd_init(&in, p, n, d->off);
    while (sf_rd_left(&in) && !d->lost) {
        if (d->hdr_have < sizeof(d->hdr)) {
            d->hdr_have = sf_rd_fill(&in, d->hdr, d->hdr_have, sizeof(d->hdr));
            d->off = sf_rd_off(&in);
            if (d->hdr_have < sizeof(d->hdr))
                break;
            if ((r = rec_header(t, d, dir, err)) < 0)
                return r;
            if (sf_rd_left(&in) >= d->frag_len) { /* the whole record is in this segment */
                const uint8_t *frag = sf_rd_bytes(&in, d->frag_len);
                if ((r = record(t, dir, d->hdr, frag, d->frag_len, ts, err)) < 0)
                    rc = r;
                d->off = sf_rd_off(&in);
                d->hdr_have = 0;
                continue;
            }
        }
        if (d->frag == NULL && (d->frag = malloc(REC_MAX12)) == NULL)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        d->frag_have = sf_rd_fill(&in, d->frag, d->frag_have, d->frag_len);
        d->off = sf_rd_off(&in);
        if (d->frag_have == d->frag_len) {
            if ((r = record(t, dir, d->hdr, d->frag, d->frag_len, ts, err)) < 0)
                rc = r;
            d->hdr_have = 0;
        }
    }
    return rc;
}

static void tls_gap(void *st, enum p2s_dir dir, uint64_t len, int64_t ts)
{
    struct tls *t = st;

    t->d[dir].lost = 1; /* record boundaries and sequence numbers are gone */
    if (t->inner && t->inner->gap)
        t->inner->gap(t->inner_st, dir, len, ts);
}

static void *tls_open(struct p2s_ctx *ctx, struct p2s_conn *conn)
{
    struct tls *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->ctx = ctx;
    t->conn = conn;
    t->et = &t->eh;
    t->psk_selected = -1;
    t->max_early = -1;
    for (int i = 0; i < 2; i++) {
        sf_buf_init(&t->d[i].hs, HS_MAX);
        t->d[i].stage = i == P2S_C2S ? ST_EARLY : ST_HS;
    }
    facts_update(t);
    p2s_conn_set_tls(conn, &t->facts);
    return t;
}

/* tls_info: the JSON object of the connections row. */
static char *info_json(struct tls *t)
{
    char *buf = NULL, hex[8];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct sf_jw w;

    if (f == NULL)
        return NULL;
    sf_jw_init(&w, f);
    sf_jw_obj(&w, NULL);
    sf_jw_str(&w, "handshake",
              !t->ch_seen              ? "no ClientHello"
              : !t->sh_seen            ? "no ServerHello"
              : t->fin[0] && t->fin[1] ? "complete"
              : t->fin[1]              ? "server finished"
                                       : "started");
    sf_jw_arr(&w, "client_versions");
    for (int i = 0; i < t->ncvers; i++) {
        snprintf(hex, sizeof(hex), "0x%04x", t->cvers[i]);
        sf_jw_str(&w, NULL, hex);
    }
    sf_jw_end(&w);
    sf_jw_arr(&w, "client_suites");
    for (int i = 0; i < t->ncsuites; i++) {
        const char *nm = tls_suite_name(t->csuites[i]);
        snprintf(hex, sizeof(hex), "0x%04x", t->csuites[i]);
        sf_jw_str(&w, NULL, nm ? nm : hex);
    }
    sf_jw_end(&w);
    sf_jw_arr(&w, "groups");
    for (int i = 0; i < t->ngroups; i++)
        sf_jw_int(&w, NULL, t->groups[i]);
    sf_jw_end(&w);
    sf_jw_arr(&w, "key_share_groups");
    for (int i = 0; i < t->nkshare; i++)
        sf_jw_int(&w, NULL, t->kshare[i]);
    sf_jw_end(&w);
    sf_jw_arr(&w, "alpn_offered");
    for (int i = 0; i < t->nalpn_offer; i++)
        sf_jw_str(&w, NULL, t->alpn_offer[i]);
    sf_jw_end(&w);
    sf_jw_str(&w, "alpn_from",
              t->alpn_from     ? t->alpn_from
              : t->nalpn_offer ? "client offer (first; the server's answer is encrypted)"
                               : NULL);
    sf_jw_bool(&w, "psk_offered", t->psk_offered);
    if (t->psk_offered) {
        sf_jw_int(&w, "psk_identities", t->psk_ids);
        sf_jw_int(&w, "obfuscated_ticket_age", t->psk_age);
    }
    sf_jw_arr(&w, "psk_modes");
    for (int i = 0; i < t->nmodes; i++)
        sf_jw_str(&w, NULL, t->modes[i] == 0 ? "psk_ke" : t->modes[i] == 1 ? "psk_dhe_ke" : "?");
    sf_jw_end(&w);
    sf_jw_bool(&w, "early_data_offered", t->early_offered);
    sf_jw_str(&w, "early_data_why", t->why);
    sf_jw_int(&w, "early_data_plaintext_bytes", (int64_t)t->early_pt);
    sf_jw_bool(&w, "hrr", t->hrr);
    if (t->hrr)
        sf_jw_int(&w, "hrr_group", t->hrr_group);
    if (t->sh_seen) {
        sf_jw_int(&w, "selected_group", t->selected_group);
        sf_jw_bool(&w, "resumed", t->psk_selected >= 0);
        if (t->psk_selected >= 0)
            sf_jw_int(&w, "selected_identity", t->psk_selected);
    }
    sf_jw_arr(&w, "alerts");
    for (int i = 0; i < t->nalerts; i++) {
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "from", dir_name((enum p2s_dir)t->alerts[i].from));
        sf_jw_str(&w, "level", t->alerts[i].level == 2 ? "fatal" : "warning");
        sf_jw_str(&w, "description", alert_name(t->alerts[i].desc));
        sf_jw_int(&w, "code", t->alerts[i].desc);
        sf_jw_bool(&w, "encrypted", t->alerts[i].enc);
        sf_jw_end(&w);
    }
    sf_jw_end(&w);
    sf_jw_int(&w, "key_updates_client", t->d[0].key_updates);
    sf_jw_int(&w, "key_updates_server", t->d[1].key_updates);
    sf_jw_int(&w, "tickets", t->tickets);
    if (t->max_early >= 0)
        sf_jw_int(&w, "max_early_data_size", t->max_early);
    sf_jw_int(&w, "records_client", (int64_t)t->d[0].records);
    sf_jw_int(&w, "records_server", (int64_t)t->d[1].records);
    sf_jw_int(&w, "records_opened", (int64_t)(t->d[0].opened + t->d[1].opened));
    sf_jw_end(&w);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void tls_close(void *st, int64_t ts)
{
    struct tls *t = st;
    char *info;

    if (t->eh || t->early_dropped)
        early_drop(t, t->verdict == V_REJECTED ? "early_data_rejected" : "early_data_unknown");
    if (t->inner)
        t->inner->close(t->inner_st, ts);
    if (t->ch_seen && !t->sh_seen)
        p2s_note(t->ctx, t->conn, "tls_handshake", "no ServerHello in the capture", ts);
    facts_update(t);
    tls_ctx_hash(t->crandom, t->srandom, (uint64_t)t->facts.early_data_bytes, t->hash);
    t->facts.ctx_hash = t->ch_seen && t->hash[0] ? t->hash : NULL;
    info = info_json(t);
    t->facts.info = info;
    if (t->ch_seen || t->sh_seen)
        p2s_conn_tls_done(t->ctx, t->conn, &t->facts);
    p2s_conn_set_tls(t->conn, NULL);
    free(info);
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < ST_N; k++)
            tls_aead_free(&t->d[i].k[k]);
        sf_buf_free(&t->d[i].hs);
        free(t->d[i].frag);
    }
    early_free(t);
    free(t->pt);
    free(t);
}

char *tls_info(void *st)
{
    return info_json(st);
}

const struct p2s_app_ops p2s_tls_ops = {
    .name = "tls",
    .open = tls_open,
    .data = tls_data,
    .gap = tls_gap,
    .close = tls_close,
};

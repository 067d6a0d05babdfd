/* tls.c - TLS connections: records, 0-RTT, decryption, inner HTTP (handshake messages in
 * tls_hs.c, the facts the writers get in tls_facts.c; tls_int.h holds the state they share).
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

#include "ctx.h"
#include "detect.h"
#include "h1.h"
#include "h2.h"
#include "sf_rd.h"
#include "tls_int.h"

#define REC_MAX13 (16384u + 256u)
#define REC_MAX12 (16384u + 2048u)
#define EARLY_MAX (256u << 10)

/* ---- decryption errors ------------------------------------------------------------ */

void tls_set_derr(struct tls *t, int dead, const char *fmt, ...)
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

void tls_set_verdict(struct tls *t, enum verdict v, const char *why)
{
    if (!t->early_offered || t->verdict != V_NONE)
        return;
    t->verdict = v;
    t->why = why;
    tls_facts_update(t); /* spans emitted below carry the verdict */
    if (v == V_ACCEPTED)
        early_feed(t);
    else
        early_drop(t, "early_data_rejected");
    tls_facts_update(t);
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

void tls_set_stage(struct tls *t, enum p2s_dir dir, int st)
{
    struct tdir *d = &t->d[dir];

    for (int i = 0; i < st; i++)
        tls_aead_free(&d->k[i]);
    if (st > d->stage)
        d->stage = st;
}

/* KeyUpdate: secret_{N+1} = HKDF-Expand-Label(secret_N, "traffic upd", "", Hash.length). */
void tls_key_update(struct tls *t, enum p2s_dir dir)
{
    struct tdir *d = &t->d[dir];
    uint8_t next[TLS_SECRET_MAX];

    if (d->slen == 0 || t->suite == NULL)
        return;
    if (tls13_expand_label(t->suite->hashlen, d->secret, d->slen, "traffic upd", NULL, 0, next,
                           d->slen) < 0 ||
        tls13_aead_init(&d->k[ST_APP], t->suite, next, d->slen) < 0) {
        tls_set_derr(t, 1, "KeyUpdate: key derivation failed");
        return;
    }
    memcpy(d->secret, next, d->slen);
}

/* TLS 1.2 key block (RFC 5246 6.3): client_write_key, server_write_key, client_write_IV,
 * server_write_IV (AEAD suites have no MAC keys). */
void tls_derive_tls12(struct tls *t)
{
    const struct tls_suite *s = t->suite;
    uint8_t seed[64], kb[2 * 32 + 2 * 12];
    size_t kl, il;

    if (t->keys == NULL || s == NULL)
        return;
    if (t->keys->s[TLS_SK_MASTER].len != 48) {
        tls_set_derr(t, 1, "no CLIENT_RANDOM line for this client random");
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
        tls_set_derr(t, 1, "TLS 1.2 key block derivation failed");
        return;
    }
    t->d[0].kstate[ST_APP] = t->d[1].kstate[ST_APP] = 1;
    t->d[0].stage = t->d[1].stage = ST_APP;
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
             tls_facts_alert_name(desc), desc, tls_dir_name(dir), enc ? ", encrypted" : "");
    p2s_note(t->ctx, t->conn, "tls_alert", detail, ts);
    if (t->nalerts < 4) {
        struct alert *a = &t->alerts[t->nalerts++];
        a->from = (uint8_t)dir;
        a->level = level;
        a->desc = desc;
        a->enc = (uint8_t)enc;
        a->ts = ts;
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
        tls_set_derr(t, 1, "authentication failed at record %llu (%s)",
                     (unsigned long long)d->records, tls_dir_name(dir));
        tls_facts_update(t);
        return 0;
    }
    d->opened++;
    if (used != ST_EARLY)
        d->keyed_ok = 1;
    tls_set_stage(t, dir, used);
    if (t->tls12) {
        type = d->rtype;
    } else {
        while (r > 0 && t->pt[r - 1] == 0)
            r--;
        if (r == 0) {
            tls_set_derr(t, 1, "record %llu (%s) has no content type",
                         (unsigned long long)d->records, tls_dir_name(dir));
            return 0;
        }
        type = t->pt[--r];
    }
    if (used == ST_EARLY && type == 23) {
        t->early_records++;
        t->early_bytes += n;
    }
    tls_facts_update(t);
    switch (type) {
    case 22:
        return tls_hs_feed(t, dir, t->pt, (size_t)r, used, ts, err);
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

/* The handshake's time: from the ClientHello to the client's first protected record after
 * the ServerHello (its Finished; TLS 1.2: the first record after its change_cipher_spec).
 * connection_events: kind "tls_handshake_done", detail "ns=N". */
static void handshake_time(struct tls *t, int64_t ts)
{
    char detail[48];

    t->hs_noted = 1;
    snprintf(detail, sizeof(detail), "ns=%lld", (long long)(ts > t->ch_ts ? ts - t->ch_ts : 0));
    p2s_note(t->ctx, t->conn, "tls_handshake_done", detail, ts);
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
    if ((type == 23 && !t->tls12) || (t->tls12 && d->ccs)) {
        if (dir == P2S_C2S && t->sh_seen && t->ch_ts && !t->hs_noted)
            handshake_time(t, ts);
        return protected_record(t, dir, hdr, frag, n, ts, err);
    }
    if (type == 22 && dir == P2S_C2S && !t->ch_seen && !t->ch_ts)
        t->ch_ts = ts;
    if (type == 22)
        return tls_hs_feed(t, dir, frag, n, -1, ts, err);
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
                      (unsigned long long)(d->off - sizeof(d->hdr)), tls_dir_name(dir), max);
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
    tls_facts_update(t);
    p2s_conn_set_tls(conn, &t->facts);
    return t;
}

/* A connection that never completed its handshake is a failed span of its own, so
 * that a certificate an upstream refuses shows as errors of an endpoint "tls:HOST"
 * (the SNI, else the server's address): a fatal alert seen (in the clear, or opened
 * with the key log) or a ClientHello never answered, on a connection that carried no
 * request.  Without keys a TLS 1.3 alert is encrypted and nothing is claimed. */
static void handshake_failed(struct tls *t, int64_t ts)
{
    const struct p2s_conn_info *ci = p2s_conn_info(t->conn);
    const struct alert *a = NULL;
    char why[160];

    if (!t->ch_seen || ci->spans)
        return;
    for (int i = 0; i < t->nalerts && a == NULL; i++)
        if (t->alerts[i].level == 2)
            a = &t->alerts[i];
    if (a == NULL && t->sh_seen)
        return;
    if (a)
        snprintf(why, sizeof(why), "handshake failed: fatal alert %s (%u) from the %s",
                 tls_facts_alert_name(a->desc), a->desc, tls_dir_name((enum p2s_dir)a->from));
    else
        snprintf(why, sizeof(why), "handshake failed: no ServerHello (the server never answered)");
    p2s_emit_failed_handshake(t->ctx, t->conn, "tls", t->sni[0] ? t->sni : ci->server_addr,
                              t->sni[0] ? t->sni : NULL, a ? a->ts : ts, why);
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
    handshake_failed(t, ts);
    tls_facts_update(t);
    tls_ctx_hash(t->crandom, t->srandom, (uint64_t)t->facts.early_data_bytes, t->hash);
    t->facts.ctx_hash = t->ch_seen && t->hash[0] ? t->hash : NULL;
    info = tls_facts_json(t);
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

const struct p2s_app_ops p2s_tls_ops = {
    .name = "tls",
    .open = tls_open,
    .data = tls_data,
    .gap = tls_gap,
    .close = tls_close,
};

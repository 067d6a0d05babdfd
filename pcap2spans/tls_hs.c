/* tls_hs.c - TLS handshake messages: the facts of ClientHello, ServerHello (and
 * HelloRetryRequest), EncryptedExtensions, NewSessionTicket, EndOfEarlyData, Finished
 * and KeyUpdate, from messages reassembled across records and segments.
 *
 * References: RFC 8446 section 4 (TLS 1.3 handshake), RFC 5246 section 7.4 (TLS 1.2).
 *
 *   handshake   msg_type(1) length(3) body; messages span records and TCP segments
 *               and are reassembled per direction (a message over 256 KiB is skipped)
 *   extension   type(2) length(2) data, in a vector<0..2^16-1> after the fixed fields
 */
#include <stdio.h>
#include <string.h>

#include "ctx.h"
#include "sf_rd.h"
#include "tls_int.h"

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

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
        tls_set_verdict(t, V_REJECTED, "HelloRetryRequest");
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
            tls_set_verdict(t, V_REJECTED, "ServerHello has no pre_shared_key (full handshake)");
        else if (psk != 0)
            tls_set_verdict(t, V_REJECTED, "ServerHello selected_identity != 0");
    } else {
        tls_set_verdict(t, V_REJECTED, "TLS 1.2 negotiated");
    }
    /* keys */
    if (p2s_tls_keys_count(t->ctx->tls_keys) == 0)
        tls_set_derr(t, 0, "no key log");
    else if (t->keys == NULL)
        tls_set_derr(t, 0, "no key for this client random");
    else if (t->suite == NULL)
        tls_set_derr(t, 1, "unsupported cipher suite 0x%04x", suite);
    else if (t->tls12 && !t->suite->tls12)
        tls_set_derr(t, 1, "TLS 1.3 suite in a TLS 1.2 handshake");
    else if (!t->tls12 && t->suite->tls12)
        tls_set_derr(t, 1, "TLS 1.2 suite in a TLS 1.3 handshake");
    else if (t->tls12)
        tls_derive_tls12(t);
    tls_facts_update(t);
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
        tls_set_verdict(t, V_ACCEPTED, "EncryptedExtensions has early_data");
    else
        tls_set_verdict(t, V_REJECTED, "EncryptedExtensions without early_data");
    tls_facts_update(t);
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
            tls_set_verdict(t, V_ACCEPTED, "EndOfEarlyData under the early key");
            tls_set_stage(t, dir, ST_HS);
        }
        break;
    case 8:
        if (dir == P2S_S2C && (rc = parse_ee(t, &rd)) < 0)
            what = "EncryptedExtensions";
        break;
    case 20: /* Finished: the next records use the application key */
        t->fin[dir] = 1;
        if (!t->tls12 && st == ST_HS)
            tls_set_stage(t, dir, ST_APP);
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
        snprintf(detail, sizeof(detail), "%s, %s", tls_dir_name(dir),
                 req ? "update_requested" : "update_not_requested");
        p2s_note(t->ctx, t->conn, "key_update", detail, ts);
        if (st == ST_APP)
            tls_key_update(t, dir);
        break;
    }
    default:
        break;
    }
    if (rc < 0)
        return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX,
                          "malformed %s (%zu bytes) in the %s stream", what, n, tls_dir_name(dir));
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
int tls_hs_feed(struct tls *t, enum p2s_dir dir, const uint8_t *p, size_t n, int st, int64_t ts,
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
                                type, len, tls_dir_name(dir), HS_MAX);
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

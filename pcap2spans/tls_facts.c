/* tls_facts.c - what the TLS parser tells the writers: the connection's facts
 * (struct sf_net_tls: version, suite, SNI, ALPN, 0-RTT verdict and counts, decryption)
 * and the tls_info JSON object of its connections row.
 *
 * References: RFC 8446 section 6 (alert descriptions), RFC 8446 and RFC 5246 (versions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_json.h"
#include "tls.h"
#include "tls_int.h"

const char *tls_facts_alert_name(int desc)
{
    switch (desc) {
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

void tls_facts_update(struct tls *t)
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

/* tls_info: the JSON object of the connections row. */
char *tls_facts_json(struct tls *t)
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
        sf_jw_str(&w, "from", tls_dir_name((enum p2s_dir)t->alerts[i].from));
        sf_jw_str(&w, "level", t->alerts[i].level == 2 ? "fatal" : "warning");
        sf_jw_str(&w, "description", tls_facts_alert_name(t->alerts[i].desc));
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

char *tls_info(void *st)
{
    return tls_facts_json(st);
}

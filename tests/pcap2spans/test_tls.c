/* Unit tests: pcap2spans TLS layer (tls.c, tls_keys.c, tls_crypto.c) on RFC 8448.
 *
 * The vectors are tests/data/corpus/tls/ (under $SF_TOP, else the current folder):
 *   rfc8448_s4_0rtt_keylog.txt   NSS key log + the 10 records of section 4 in wire order
 *                                with the label and sequence number that open each
 *   rfc8448_all_values.txt       every value of sections 3-7 (records, traffic secrets)
 * Every record is opened directly (key schedule + AEAD), then every section is replayed
 * through the parser as a connection and its facts are checked.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../pcap2spans/p2s.h"
#include "../../pcap2spans/tls.h"
#include "sf_db_net.h"
#include "sf_hex.h"
#include "tap.h"

#define MAXREC 16

struct rec {
    int c2s;
    char label[40];
    long seq;
    int type;
    uint8_t *b;
    size_t n;
};

struct vec {
    struct rec r[MAXREC];
    int nrec;
    char keylog[4096];
};

static const char *corpus_dir(void)
{
    const char *top = getenv("SF_TOP");
    static char dir[512];

    snprintf(dir, sizeof(dir), "%s/tests/data/corpus", top ? top : ".");
    return dir;
}

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/tls/%s", corpus_dir(), name);
    if ((f = fopen(path, "rb")) == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static uint8_t *unhex(const char *h, size_t hl, size_t *n)
{
    uint8_t *b = malloc(hl / 2 + 1);

    if (b == NULL || sf_hex_decode(b, h, hl) < 0) {
        free(b);
        return NULL;
    }
    *n = hl / 2;
    return b;
}

static void vec_free(struct vec *v)
{
    for (int i = 0; i < v->nrec; i++)
        free(v->r[i].b);
    v->nrec = 0;
}

/* Section 4: the key log file with its "# RECORD" lines. */
static int load_s4(struct vec *v)
{
    size_t len, kl = 0;
    char *text = slurp("rfc8448_s4_0rtt_keylog.txt", &len), *line, *save = NULL;

    memset(v, 0, sizeof(*v));
    if (text == NULL)
        return -1;
    for (line = text; line && *line; line = save) {
        char *nl = strchr(line, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        if (strncmp(line, "# RECORD ", 9) == 0 && v->nrec < MAXREC) {
            struct rec *r = &v->r[v->nrec];
            char dir[4], seq[8], hex[2048];
            /* "# RECORD C LABEL SEQ TYPE HEX" split by hand (no sscanf) */
            char *f[6], *p = line + 9;
            int k = 0;
            while (k < 6 && p && *p) {
                f[k++] = p;
                p = strchr(p, ' ');
                if (p)
                    *p++ = 0;
            }
            if (k < 5)
                continue;
            snprintf(dir, sizeof(dir), "%s", f[0]);
            snprintf(r->label, sizeof(r->label), "%s", f[1]);
            snprintf(seq, sizeof(seq), "%s", f[2]);
            snprintf(hex, sizeof(hex), "%s", f[4]);
            r->c2s = dir[0] == 'C';
            r->seq = seq[0] == '-' ? -1 : strtol(seq, NULL, 10);
            r->type = (int)strtol(f[3], NULL, 10);
            r->b = unhex(hex, strlen(hex), &r->n);
            if (r->b)
                v->nrec++;
        } else if (line[0] != '#' && line[0] && kl + strlen(line) + 2 < sizeof(v->keylog)) {
            kl += (size_t)snprintf(v->keylog + kl, sizeof(v->keylog) - kl, "%s\n", line);
        }
    }
    free(text);
    return v->nrec == 10 ? 0 : -1;
}

/* Sections 3, 5, 6, 7 of the all-values file: records ("complete record") in order and a
 * key log built from the traffic secrets the RFC derives. */
static int load_section(struct vec *v, char sec)
{
    static const struct {
        const char *step, *label;
    } secrets[] = {
        {"\"tls13 c hs traffic\"", "CLIENT_HANDSHAKE_TRAFFIC_SECRET"},
        {"\"tls13 s hs traffic\"", "SERVER_HANDSHAKE_TRAFFIC_SECRET"},
        {"\"tls13 c ap traffic\"", "CLIENT_TRAFFIC_SECRET_0"},
        {"\"tls13 s ap traffic\"", "SERVER_TRAFFIC_SECRET_0"},
    };
    char sv[4][100] = {{0}};
    size_t len, kl = 0;
    char *text = slurp("rfc8448_all_values.txt", &len), *line, *save;
    char crandom[65] = "";

    memset(v, 0, sizeof(*v));
    if (text == NULL)
        return -1;
    for (line = text; line && *line; line = save) {
        char *nl = strchr(line, '\n'), *f[5], *p = line;
        int k = 0;
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        if (line[0] != sec || line[1] != ' ')
            continue;
        while (k < 5 && p) {
            f[k++] = p;
            p = strstr(p, " | ");
            if (p) {
                *p = 0;
                p += 3;
            }
        }
        if (k < 5)
            continue;
        if (strcmp(f[2], "complete record") == 0 && v->nrec < MAXREC) {
            struct rec *r = &v->r[v->nrec];
            r->c2s = strstr(f[1], "{client}") != NULL;
            r->b = unhex(f[4], strlen(f[4]), &r->n);
            if (r->b == NULL)
                continue;
            /* the first ClientHello's random: record bytes 11..43 */
            if (r->c2s && crandom[0] == 0 && r->b[0] == 22 && r->n > 43)
                sf_hex_encode(crandom, r->b + 11, 32);
            v->nrec++;
        }
        for (int i = 0; i < 4; i++)
            if (strstr(f[1], secrets[i].step) && strcmp(f[2], "expanded") == 0)
                snprintf(sv[i], sizeof(sv[i]), "%s", f[4]); /* the last one wins (HRR) */
    }
    free(text);
    for (int i = 0; i < 4; i++)
        if (sv[i][0])
            kl += (size_t)snprintf(v->keylog + kl, sizeof(v->keylog) - kl, "%s %s %s\n",
                                   secrets[i].label, crandom, sv[i]);
    return v->nrec > 0 && crandom[0] ? 0 : -1;
}

/* ---- direct record opening ---------------------------------------------------------- */

static int secret_of(const char *keylog, const char *label, uint8_t *out)
{
    const char *p = keylog;
    size_t ll = strlen(label);

    while ((p = strstr(p, label)) != NULL) {
        if ((p == keylog || p[-1] == '\n') && p[ll] == ' ') {
            const char *s = p + ll + 1 + 64 + 1, *e = strchr(s, '\n');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            return sf_hex_decode(out, s, n) < 0 ? -1 : (int)(n / 2);
        }
        p += ll;
    }
    return -1;
}

static void test_expand_label(void)
{
    static const char early[] = "3fbbe6a60deb66c30a32795aba0eff7eaa10105586e7be5c09678d63b6caab62";
    uint8_t sec[32], key[16], iv[12];
    char hk[33], hi[25];

    sf_hex_decode(sec, early, 64);
    TAP_OK(tls13_expand_label(32, sec, 32, "key", NULL, 0, key, 16) == 0 &&
               tls13_expand_label(32, sec, 32, "iv", NULL, 0, iv, 12) == 0,
           "HKDF-Expand-Label runs");
    sf_hex_encode(hk, key, 16);
    sf_hex_encode(hi, iv, 12);
    TAP_EQ_STR(hk, "920205a5b7bf2115e6fc5c2942834f54", "RFC 8448 s4 early key");
    TAP_EQ_STR(hi, "6d475f0993c8e564610db2b9", "RFC 8448 s4 early iv");
}

static void test_s4_records(void)
{
    struct vec v;
    uint8_t pt[2048], sec[48];
    int opened = 0, protected = 0;

    if (load_s4(&v) < 0) {
        TAP_OK(0, "RFC 8448 s4 vectors readable (%s/tls)", corpus_dir());
        return;
    }
    for (int i = 0; i < v.nrec; i++) {
        struct rec *r = &v.r[i];
        struct tls_aead a;
        int sl;
        long n;
        if (strcmp(r->label, "PLAINTEXT") == 0)
            continue;
        protected++;
        memset(&a, 0, sizeof(a));
        sl = secret_of(v.keylog, r->label, sec);
        if (sl != 32 || tls13_aead_init(&a, tls_suite_find(0x1301), sec, 32) < 0) {
            TAP_OK(0, "record %d: key for %s", i + 1, r->label);
            continue;
        }
        a.seq = (uint64_t)r->seq;
        n = tls_aead_open(&a, r->b, r->b + 5, r->n - 5, pt);
        while (n > 0 && pt[n - 1] == 0)
            n--;
        TAP_OK(n > 0 && pt[n - 1] == r->type, "s4 record %d (%s, seq %ld) opens, inner type %d",
               i + 1, r->label, r->seq, r->type);
        if (n > 0 && pt[n - 1] == r->type)
            opened++;
        if (i == 1)
            TAP_OK(n == 7 && memcmp(pt, "ABCDEF", 6) == 0, "s4 0-RTT record is \"ABCDEF\"");
        /* the same record under the next sequence number must not open */
        a.seq = (uint64_t)r->seq + 1;
        TAP_OK(tls_aead_open(&a, r->b, r->b + 5, r->n - 5, pt) < 0,
               "s4 record %d: wrong sequence number fails authentication", i + 1);
        tls_aead_free(&a);
    }
    TAP_EQ_INT(opened, 8, "all 8 protected s4 records open");
    TAP_EQ_INT(protected, 8, "8 protected records in s4");
    vec_free(&v);
}

/* ---- through the parser ------------------------------------------------------------- */

struct run {
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    void *st;
    int errors;
    char last_err[256];
};

static void run_open(struct run *u, const char *keylog)
{
    struct sf_err err;

    memset(u, 0, sizeof(*u));
    p2s_ctx_init(&u->ctx);
    u->ctx.quiet = 1;
    u->ctx.errors_printed = 1000;
    p2s_tls_keys_new(&u->ctx.tls_keys);
    sf_err_clear(&err);
    if (keylog)
        p2s_tls_keys_load_text(u->ctx.tls_keys, keylog, strlen(keylog), 0, &err);
    u->conn = tcp_conn_new_detached(&u->ctx);
    u->st = p2s_conn_switch(u->conn, &p2s_tls_ops);
}

static void run_feed(struct run *u, const struct vec *v, size_t step)
{
    for (int i = 0; i < v->nrec; i++) {
        const struct rec *r = &v->r[i];
        for (size_t o = 0; o < r->n;) {
            size_t k = step && r->n - o > step ? step : r->n - o;
            struct sf_err err;
            sf_err_clear(&err);
            if (p2s_tls_ops.data(u->st, r->c2s ? P2S_C2S : P2S_S2C, r->b + o, k, 1000 + i, &err) <
                0) {
                u->errors++;
                snprintf(u->last_err, sizeof(u->last_err), "%s", err.msg);
            }
            o += k;
        }
    }
}

static const struct sf_net_tls *facts(struct run *u)
{
    return p2s_conn_info(u->conn)->tls;
}

static void run_close(struct run *u)
{
    tcp_conn_free_detached(u->conn);
    p2s_tls_keys_free(u->ctx.tls_keys);
    p2s_ctx_free(&u->ctx);
}

static int has(const char *info, const char *s)
{
    return info && strstr(info, s) != NULL;
}

static void test_s4_parser(size_t step)
{
    struct vec v;
    struct run u;
    const struct sf_net_tls *f;
    char *info;

    if (load_s4(&v) < 0)
        return;
    run_open(&u, v.keylog);
    run_feed(&u, &v, step);
    f = facts(&u);
    info = tls_info(u.st);
    TAP_EQ_INT(u.errors, 0, "s4 (step %zu): no parser error %s", step, u.last_err);
    TAP_EQ_STR(f->version, "TLS 1.3", "s4 (step %zu): version", step);
    TAP_EQ_STR(f->cipher, "TLS_AES_128_GCM_SHA256", "s4 (step %zu): suite", step);
    TAP_EQ_STR(f->sni ? f->sni : "(null)", "server", "s4 (step %zu): SNI", step);
    TAP_EQ_STR(f->early_data, "accepted", "s4 (step %zu): 0-RTT accepted (EE)", step);
    TAP_EQ_INT(f->decrypted, 1, "s4 (step %zu): decrypted", step);
    TAP_OK(f->decrypt_error == NULL, "s4 (step %zu): no decrypt error (%s)", step,
           f->decrypt_error ? f->decrypt_error : "");
    TAP_EQ_INT(f->early_data_records, 1, "s4 (step %zu): one 0-RTT record", step);
    TAP_EQ_INT(f->early_data_bytes, 0x17, "s4 (step %zu): 0-RTT record payload 23 bytes", step);
    TAP_OK(has(info, "\"groups\":[29,23,24,25,256,257,258,259,260]"),
           "s4: supported_groups x25519 P-256 P-384 P-521 ffdhe2048..8192 (%s)", info ? info : "");
    TAP_OK(has(info, "\"key_share_groups\":[29]"), "s4: key share x25519");
    TAP_OK(has(info, "\"psk_identities\":1"), "s4: one PSK identity");
    TAP_OK(has(info, "\"obfuscated_ticket_age\":4208372427"),
           "s4: obfuscated_ticket_age 0xfad6aacb");
    TAP_OK(has(info, "\"psk_modes\":[\"psk_dhe_ke\"]"), "s4: psk_key_exchange_modes psk_dhe_ke");
    TAP_OK(has(info, "\"early_data_offered\":true"), "s4: early_data offered");
    TAP_OK(has(info, "\"resumed\":true") && has(info, "\"selected_identity\":0"),
           "s4: resumed with identity 0");
    TAP_OK(has(info, "\"early_data_plaintext_bytes\":6"), "s4: 6 bytes of 0-RTT plaintext");
    TAP_OK(has(info, "\"records_opened\":8"), "s4: 8 records opened");
    TAP_OK(has(info, "\"alerts\":[{\"from\":\"client\",\"level\":\"warning\","
                     "\"description\":\"close_notify\",\"code\":0,\"encrypted\":true}"),
           "s4: the client's encrypted close_notify");
    free(info);
    run_close(&u);
    vec_free(&v);
}

/* A wrong secret (one byte changed): decrypt_error, no crash, nothing decrypted after. */
static void test_s4_wrong_key(const char *label, const char *want)
{
    struct vec v;
    struct run u;
    const struct sf_net_tls *f;
    char *p;

    if (load_s4(&v) < 0)
        return;
    p = strstr(v.keylog, label);
    if (p) {
        p += strlen(label) + 1 + 64 + 1 + 10; /* a hex digit inside the secret */
        *p = *p == '0' ? '1' : '0';
    }
    run_open(&u, v.keylog);
    run_feed(&u, &v, 0);
    f = facts(&u);
    TAP_EQ_INT(f->decrypted, 0, "%s changed: not decrypted", label);
    TAP_EQ_STR(f->decrypt_error ? f->decrypt_error : "(null)", want, "%s changed: error", label);
    run_close(&u);
    vec_free(&v);
}

static void test_section(char sec, const char *name, int hrr)
{
    struct vec v;
    struct run u;
    const struct sf_net_tls *f;
    char *info, want[64];
    int nprot = 0;

    if (load_section(&v, sec) < 0) {
        TAP_OK(0, "RFC 8448 s%c vectors readable", sec);
        return;
    }
    for (int i = 0; i < v.nrec; i++)
        nprot += v.r[i].b[0] == 23;
    run_open(&u, v.keylog);
    run_feed(&u, &v, 7);
    f = facts(&u);
    info = tls_info(u.st);
    TAP_EQ_INT(u.errors, 0, "s%c %s: no parser error %s", sec, name, u.last_err);
    TAP_OK(f->decrypted == 1 && f->decrypt_error == NULL, "s%c %s: decrypted (%s)", sec, name,
           f->decrypt_error ? f->decrypt_error : "ok");
    snprintf(want, sizeof(want), "\"records_opened\":%d", nprot);
    TAP_OK(nprot >= 4 && has(info, want), "s%c %s: all %d protected records open (%s)", sec, name,
           nprot, info ? strstr(info, "\"records_") : "");
    TAP_EQ_STR(f->early_data, "none", "s%c %s: no 0-RTT", sec, name);
    TAP_EQ_INT((int)p2s_note_count(&u.ctx, "hrr"), hrr, "s%c %s: HelloRetryRequest events", sec,
               name);
    free(info);
    run_close(&u);
    vec_free(&v);
}

/* ---- smaller pieces ------------------------------------------------------------------ */

static void test_ctx_hash(void)
{
    uint8_t cr[32], sr[32], buf[72], md[32];
    char got[65], want[65];
    unsigned int ml = 0;

    for (int i = 0; i < 32; i++) {
        cr[i] = (uint8_t)i;
        sr[i] = (uint8_t)(0xa0 + i);
    }
    memcpy(buf, cr, 32);
    memcpy(buf + 32, sr, 32);
    memcpy(buf + 64, "\x00\x00\x00\x00\x00\x01\x02\x03", 8);
    EVP_Digest(buf, 72, md, &ml, EVP_sha256(), NULL);
    sf_hex_encode(want, md, 32);
    tls_ctx_hash(cr, sr, 0x010203, got);
    TAP_EQ_STR(got, want, "ctx_hash = sha256(client_random || server_random || u64be(bytes))");
    tls_ctx_hash(cr, sr, 0x010204, got);
    TAP_OK(strcmp(got, want) != 0, "ctx_hash changes with the early-data length");
}

static void test_keylog(void)
{
    struct p2s_tls_keys *k;
    struct sf_err err;
    uint8_t r[32];
    const struct tls_keyent *e;
    static const char good[] =
        "# comment\n"
        "\n"
        "CLIENT_RANDOM 0101010101010101010101010101010101010101010101010101010101010101 "
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        "202122232425262728292a2b2c2d2e2f\r\n"
        "EXPORTER_SECRET 0101010101010101010101010101010101010101010101010101010101010101 "
        "00000000000000000000000000000000000000000000000000000000000000ff\n"
        "CLIENT_TRAFFIC_SECRET_0 0101010101010101010101010101010101010101010101010101010101010101 "
        "abababababababababababababababababababababababababababababababab\n"
        "SERVER_TRAFFIC_SECRET_0 0101 short\n"
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET 02020202";
    static const char bad[] = "CLIENT_RANDOM zz\nSERVER_TRAFFIC_SECRET_0 11 22\n";

    p2s_tls_keys_new(&k);
    sf_err_clear(&err);
    TAP_EQ_INT(p2s_tls_keys_load_text(k, good, strlen(good), 0, &err), 2,
               "key log: 2 secrets used, comments/unused labels/bad lines skipped");
    memset(r, 1, 32);
    e = p2s_tls_keys_find(k, r);
    TAP_OK(e && e->s[TLS_SK_MASTER].len == 48 && e->s[TLS_SK_MASTER].b[47] == 0x2f,
           "CLIENT_RANDOM master secret (48 bytes)");
    TAP_OK(e && e->s[TLS_SK_CT0].len == 32 && e->s[TLS_SK_CT0].b[0] == 0xab,
           "CLIENT_TRAFFIC_SECRET_0 (32 bytes)");
    memset(r, 2, 32);
    TAP_OK(p2s_tls_keys_find(k, r) == NULL, "unknown random: no entry");
    sf_err_clear(&err);
    TAP_EQ_INT(p2s_tls_keys_load_text(k, bad, strlen(bad), 100, &err), SF_E_MALFORMED,
               "only bad lines: an error");
    TAP_OK(strstr(err.msg, "line 1") != NULL && err.off == 100, "the error names line 1 (%s)",
           err.msg);
    p2s_tls_keys_free(k);
}

/* The pre-pass on the first bytes of a capture with a DSB: every cut short of the
 * DSB's end finds none and reads nothing past the file (its block length claims more). */
static void dsb_cut(void)
{
    static uint8_t buf[1 << 16];
    char path[64];
    FILE *f = fopen("samples/pcap/tls-nginx-dsb.pcapng", "rb");
    size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0, bad = 0, full = 0;
    struct p2s_tls_keys *k;
    struct sf_err err;

    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "/tmp/test_tls_dsb_%d.pcapng", (int)getpid());
    for (size_t cut = 0; cut <= n && n > 0; cut += 4) {
        FILE *o = fopen(path, "wb");
        int got;
        if (o == NULL)
            break;
        fwrite(buf, 1, cut, o);
        fclose(o);
        p2s_tls_keys_new(&k);
        sf_err_clear(&err);
        got = p2s_tls_keys_load_dsb(k, path, &err);
        bad += got != 0 && got != 16;
        full += got == 16;
        p2s_tls_keys_free(k);
    }
    unlink(path);
    TAP_OK(n > 0 && bad == 0 && full > 0,
           "DSB pre-pass on %zu cuts of the file: all or none of its 16 secrets (%zu whole)",
           n / 4 + 1, full);
}

static void test_dsb(void)
{
    struct p2s_tls_keys *k;
    struct sf_err err;
    int n;

    p2s_tls_keys_new(&k);
    sf_err_clear(&err);
    n = p2s_tls_keys_load_dsb(k, "samples/pcap/tls-nginx-dsb.pcapng", &err);
    TAP_EQ_INT(n, 16, "DSB of tls-nginx-dsb.pcapng: 16 secrets used (4 connections x 4)");
    TAP_EQ_INT(p2s_tls_keys_load_dsb(k, "samples/pcap/tls-nginx.pcap", &err), 0,
               "classic pcap: no DSB");
    TAP_EQ_INT(p2s_tls_keys_load_dsb(k, "-", &err), 0, "stdin: no pre-pass");
    p2s_tls_keys_free(k);
    dsb_cut();
}

/* Garbage after a good handshake: a bad record header stops that direction only. */
static void test_bad_header(void)
{
    struct run u;
    struct sf_err err;
    static const uint8_t junk[] = {0x17, 0x03, 0x03, 0x48, 0x01, 0, 0, 0};
    static const uint8_t notls[] = {0x99, 0x03, 0x03, 0x00, 0x01, 0};

    run_open(&u, NULL);
    sf_err_clear(&err);
    TAP_OK(p2s_tls_ops.data(u.st, P2S_C2S, junk, sizeof(junk), 1, &err) == SF_E_MALFORMED &&
               strstr(err.msg, "length cap") != NULL,
           "record longer than 2^14+256: error (%s)", err.msg);
    sf_err_clear(&err);
    TAP_EQ_INT(p2s_tls_ops.data(u.st, P2S_C2S, junk, sizeof(junk), 2, &err), 0,
               "that direction is then ignored");
    sf_err_clear(&err);
    TAP_OK(p2s_tls_ops.data(u.st, P2S_S2C, notls, sizeof(notls), 3, &err) == SF_E_MALFORMED,
           "content type 0x99: error (%s)", err.msg);
    run_close(&u);
}

/* Inside TLS an HTTP/1.1 "Upgrade: h2c" + 101 must not hand the connection to HTTP/2
 * (h2c is cleartext only): the TLS layer owns the connection and its inner parser. */
static void test_no_h2c_in_tls(void)
{
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    struct sf_net_tls facts;
    struct sf_err err;
    void *st;
    static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                              "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n";
    static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                               "Upgrade: h2c\r\n\r\n";

    memset(&facts, 0, sizeof(facts));
    p2s_ctx_init(&ctx);
    ctx.quiet = 1;
    conn = tcp_conn_new_detached(&ctx);
    st = p2s_conn_switch(conn, &p2s_h1_ops);
    p2s_conn_set_tls(conn, &facts);
    sf_err_clear(&err);
    p2s_h1_ops.data(st, P2S_C2S, (const uint8_t *)req, sizeof(req) - 1, 1, &err);
    p2s_h1_ops.data(st, P2S_S2C, (const uint8_t *)resp, sizeof(resp) - 1, 2, &err);
    TAP_EQ_STR(p2s_conn_info(conn)->app_proto, "http/1.1",
               "h2c upgrade inside TLS: the connection stays with its parser");
    p2s_conn_set_tls(conn, NULL);
    tcp_conn_free_detached(conn);
    p2s_ctx_free(&ctx);
}

int main(void)
{
    test_expand_label();
    test_s4_records();
    test_s4_parser(0);
    test_s4_parser(1);
    test_s4_parser(13);
    test_s4_wrong_key("SERVER_HANDSHAKE_TRAFFIC_SECRET",
                      "authentication failed at record 2 (server)");
    test_s4_wrong_key("CLIENT_EARLY_TRAFFIC_SECRET", "authentication failed at record 2 (client)");
    test_s4_wrong_key("SERVER_TRAFFIC_SECRET_0", "authentication failed at record 3 (server)");
    test_section('3', "simple 1-RTT", 0);
    test_section('5', "HelloRetryRequest", 1);
    test_section('6', "client authentication", 0);
    test_section('7', "compatibility mode (CCS)", 0);
    test_ctx_hash();
    test_keylog();
    test_dsb();
    test_bad_header();
    test_no_h2c_in_tls();
    return tap_done();
}

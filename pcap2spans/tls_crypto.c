/* tls_crypto.c - TLS key schedule and record protection through OpenSSL libcrypto 3.
 *
 * Nothing here is hand-written crypto: HKDF-Expand (EVP_KDF "HKDF", expand-only mode),
 * the TLS 1.2 PRF (EVP_KDF "TLS1-PRF") and the AEADs (EVP_aes_128_gcm, EVP_aes_256_gcm,
 * EVP_chacha20_poly1305).  What is ours is the framing (RFC 8446 section 5.2-5.3, 7.1-7.3;
 * RFC 5288 for TLS 1.2 GCM, RFC 7905 for TLS 1.2 ChaCha20-Poly1305):
 *
 *   HkdfLabel = uint16 length || uint8 len("tls13 " + label) || "tls13 " || label
 *               || uint8 len(context) || context
 *   TLS 1.3:  key = HKDF-Expand-Label(secret, "key", "", keylen)
 *             iv  = HKDF-Expand-Label(secret, "iv", "", 12)
 *             nonce = iv XOR (0^4 || seq as 64-bit big-endian); AAD = the record header
 *   TLS 1.2 GCM:    nonce = fixed_iv(4) || explicit_nonce(8, first bytes of the record)
 *   TLS 1.2 ChaCha: nonce = fixed_iv(12) XOR (0^4 || seq)
 *             AAD = seq(8) || type(1) || version(2) || plaintext length(2)
 */
#include "tls_crypto.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <string.h>

#include "sf_hex.h"
#include "sf_sha256.h"

#define TAG_LEN 16

static const struct tls_suite suites[] = {
    {0x1301, "TLS_AES_128_GCM_SHA256", TLS_AES_128_GCM, 16, 32, 0, 12},
    {0x1302, "TLS_AES_256_GCM_SHA384", TLS_AES_256_GCM, 32, 48, 0, 12},
    {0x1303, "TLS_CHACHA20_POLY1305_SHA256", TLS_CHACHA20_POLY1305, 32, 32, 0, 12},
    {0x009c, "TLS_RSA_WITH_AES_128_GCM_SHA256", TLS_AES_128_GCM, 16, 32, 1, 4},
    {0x009d, "TLS_RSA_WITH_AES_256_GCM_SHA384", TLS_AES_256_GCM, 32, 48, 1, 4},
    {0x009e, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", TLS_AES_128_GCM, 16, 32, 1, 4},
    {0x009f, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", TLS_AES_256_GCM, 32, 48, 1, 4},
    {0xc02b, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", TLS_AES_128_GCM, 16, 32, 1, 4},
    {0xc02c, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", TLS_AES_256_GCM, 32, 48, 1, 4},
    {0xc02f, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", TLS_AES_128_GCM, 16, 32, 1, 4},
    {0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", TLS_AES_256_GCM, 32, 48, 1, 4},
    {0xcca8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", TLS_CHACHA20_POLY1305, 32, 32, 1, 12},
    {0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", TLS_CHACHA20_POLY1305, 32, 32, 1, 12},
    {0xccaa, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", TLS_CHACHA20_POLY1305, 32, 32, 1, 12},
};

const struct tls_suite *tls_suite_find(uint16_t id)
{
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
        if (suites[i].id == id)
            return &suites[i];
    return NULL;
}

const char *tls_suite_name(uint16_t id)
{
    const struct tls_suite *s = tls_suite_find(id);

    if (s)
        return s->name;
    switch (id) {
    case 0x1304:
        return "TLS_AES_128_CCM_SHA256";
    case 0x1305:
        return "TLS_AES_128_CCM_8_SHA256";
    default:
        return NULL;
    }
}

static const char *md_name(int hashlen)
{
    return hashlen == 48 ? "SHA384" : "SHA256";
}

static int kdf_run(const char *alg, OSSL_PARAM *params, uint8_t *out, size_t outlen)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, alg, NULL);
    EVP_KDF_CTX *kc;
    int ok;

    if (kdf == NULL)
        return -1;
    kc = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (kc == NULL)
        return -1;
    ok = EVP_KDF_derive(kc, out, outlen, params) > 0;
    EVP_KDF_CTX_free(kc);
    return ok ? 0 : -1;
}

int tls13_expand_label(int hashlen, const uint8_t *secret, size_t slen, const char *label,
                       const uint8_t *hctx, size_t hctxlen, uint8_t *out, size_t outlen)
{
    uint8_t info[2 + 1 + 255 + 1 + 255];
    size_t ll = strlen(label), n = 0;
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    OSSL_PARAM p[5];

    if (6 + ll > 255 || hctxlen > 255 || outlen > 0xffff)
        return -1;
    info[n++] = (uint8_t)(outlen >> 8);
    info[n++] = (uint8_t)outlen;
    info[n++] = (uint8_t)(6 + ll);
    memcpy(info + n, "tls13 ", 6);
    n += 6;
    memcpy(info + n, label, ll);
    n += ll;
    info[n++] = (uint8_t)hctxlen;
    if (hctxlen)
        memcpy(info + n, hctx, hctxlen);
    n += hctxlen;
    p[0] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    p[1] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md_name(hashlen), 0);
    p[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, slen);
    p[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n);
    p[4] = OSSL_PARAM_construct_end();
    return kdf_run("HKDF", p, out, outlen);
}

int tls12_prf(int hashlen, const uint8_t *secret, size_t slen, const char *label,
              const uint8_t *seed, size_t seedlen, uint8_t *out, size_t outlen)
{
    uint8_t buf[256];
    size_t ll = strlen(label);
    OSSL_PARAM p[4];

    if (ll + seedlen > sizeof(buf))
        return -1;
    memcpy(buf, label, ll);
    memcpy(buf + ll, seed, seedlen);
    p[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md_name(hashlen), 0);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, (void *)secret, slen);
    p[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, buf, ll + seedlen);
    p[3] = OSSL_PARAM_construct_end();
    return kdf_run("TLS1-PRF", p, out, outlen);
}

static const EVP_CIPHER *evp_cipher(enum tls_cipher c)
{
    switch (c) {
    case TLS_AES_128_GCM:
        return EVP_aes_128_gcm();
    case TLS_AES_256_GCM:
        return EVP_aes_256_gcm();
    case TLS_CHACHA20_POLY1305:
        return EVP_chacha20_poly1305();
    }
    return NULL;
}

static int aead_setup(struct tls_aead *a, const struct tls_suite *s, const uint8_t *key)
{
    EVP_CIPHER_CTX *c = a->c;

    if (c == NULL && (c = EVP_CIPHER_CTX_new()) == NULL)
        return -1;
    a->c = c;
    a->suite = s;
    a->seq = 0;
    if (EVP_DecryptInit_ex(c, evp_cipher(s->cipher), NULL, NULL, NULL) <= 0 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) <= 0 ||
        EVP_DecryptInit_ex(c, NULL, NULL, key, NULL) <= 0) {
        tls_aead_free(a);
        return -1;
    }
    return 0;
}

int tls13_aead_init(struct tls_aead *a, const struct tls_suite *s, const uint8_t *secret,
                    size_t slen)
{
    uint8_t key[32];
    int rc;

    if (slen != s->hashlen)
        return -1;
    if (tls13_expand_label(s->hashlen, secret, slen, "key", NULL, 0, key, s->keylen) < 0 ||
        tls13_expand_label(s->hashlen, secret, slen, "iv", NULL, 0, a->iv, 12) < 0)
        return -1;
    a->tls12 = 0;
    rc = aead_setup(a, s, key);
    memset(key, 0, sizeof(key));
    return rc;
}

int tls12_aead_init(struct tls_aead *a, const struct tls_suite *s, const uint8_t *key,
                    const uint8_t *iv)
{
    memset(a->iv, 0, sizeof(a->iv));
    memcpy(a->iv, iv, s->fixed_iv);
    a->tls12 = 1;
    return aead_setup(a, s, key);
}

long tls_aead_open(struct tls_aead *a, const uint8_t hdr[5], const uint8_t *frag, size_t n,
                   uint8_t *out)
{
    EVP_CIPHER_CTX *c = a->c;
    uint8_t nonce[12], aad[13];
    const uint8_t *ct = frag;
    size_t ctlen, aadlen = 5;
    int len, fin;

    if (c == NULL)
        return -1;
    memcpy(nonce, a->iv, 12);
    if (a->tls12 && a->suite->fixed_iv == 4) {
        if (n < 8 + TAG_LEN)
            return -1;
        memcpy(nonce + 4, frag, 8);
        ct = frag + 8;
        ctlen = n - 8 - TAG_LEN;
    } else {
        if (n < TAG_LEN)
            return -1;
        for (int i = 0; i < 8; i++)
            nonce[4 + i] ^= (uint8_t)(a->seq >> (56 - 8 * i));
        ctlen = n - TAG_LEN;
    }
    if (a->tls12) {
        for (int i = 0; i < 8; i++)
            aad[i] = (uint8_t)(a->seq >> (56 - 8 * i));
        aad[8] = hdr[0];
        aad[9] = hdr[1];
        aad[10] = hdr[2];
        aad[11] = (uint8_t)(ctlen >> 8);
        aad[12] = (uint8_t)ctlen;
        aadlen = 13;
    } else {
        memcpy(aad, hdr, 5);
    }
    if (EVP_DecryptInit_ex(c, NULL, NULL, NULL, nonce) <= 0 ||
        EVP_DecryptUpdate(c, NULL, &len, aad, (int)aadlen) <= 0)
        return -1;
    if (ctlen && EVP_DecryptUpdate(c, out, &len, ct, (int)ctlen) <= 0)
        return -1;
    if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, (void *)(ct + ctlen)) <= 0)
        return -1;
    fin = EVP_DecryptFinal_ex(c, out + ctlen, &len);
    if (fin <= 0)
        return -1;
    a->seq++;
    return (long)ctlen;
}

void tls_aead_free(struct tls_aead *a)
{
    if (a->c)
        EVP_CIPHER_CTX_free(a->c);
    a->c = NULL;
}

void tls_ctx_hash(const uint8_t client_random[32], const uint8_t server_random[32],
                  uint64_t early_bytes, char out[65])
{
    struct sf_sha256 h;
    uint8_t len[8];

    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(early_bytes >> (56 - 8 * i));
    if (sf_sha256_init(&h) < 0) {
        out[0] = 0;
        return;
    }
    sf_sha256_update(&h, client_random, 32);
    sf_sha256_update(&h, server_random, 32);
    sf_sha256_update(&h, len, 8);
    sf_sha256_final_hex(&h, out);
}

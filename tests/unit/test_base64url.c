/* Unit tests: lib/sf_base64 base64url decoding (RFC 4648 section 5), as HTTP2-Settings
 * uses it (RFC 7540 3.2.1: the SETTINGS payload, trailing '=' omitted). */
#include <string.h>

#include "sf_base64.h"
#include "sf_err.h"
#include "tap.h"

static long url(uint8_t *out, size_t outsz, const char *s)
{
    return sf_base64url_decode(out, outsz, s, strlen(s));
}

static void test_settings_payloads(void)
{
    uint8_t out[64];
    /* curl 7.88's HTTP2-Settings (samples/pcap/h2c.pcap): three settings. */
    static const uint8_t curl[18] = {0, 3, 0, 0, 0, 100, 0, 4, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0};
    static const uint8_t maxf[6] = {0, 5, 0, 0xff, 0xff, 0xff};
    static const uint8_t dashes[3] = {0xfb, 0xef, 0xbe};

    TAP_EQ_INT(url(out, sizeof(out), "AAMAAABkAAQCAAAAAAIAAAAA"), 18, "curl's value: 18 bytes");
    TAP_OK(memcmp(out, curl, sizeof(curl)) == 0, "curl's value decodes to its three settings");
    TAP_EQ_INT(url(out, sizeof(out), "AAUA____"), 6, "'_' is 63 in base64url");
    TAP_OK(memcmp(out, maxf, sizeof(maxf)) == 0, "MAX_FRAME_SIZE 16777215");
    TAP_EQ_INT(url(out, sizeof(out), "----"), 3, "'-' is 62 in base64url");
    TAP_OK(memcmp(out, dashes, sizeof(dashes)) == 0, "---- is fb ef be");
    TAP_EQ_INT(url(out, sizeof(out), ""), 0, "empty value: an empty SETTINGS payload");
}

static void test_errors(void)
{
    uint8_t out[64];

    TAP_EQ_INT(url(out, sizeof(out), "AAUA////"), SF_E_MALFORMED, "'/' is not base64url");
    TAP_EQ_INT(url(out, sizeof(out), "AAUA++++"), SF_E_MALFORMED, "'+' is not base64url");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "AAUA____", 8), SF_E_MALFORMED,
               "and the standard decoder still refuses '_'");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "----", 4), SF_E_MALFORMED, "and '-'");
    TAP_EQ_INT(url(out, sizeof(out), "AAMA*AAB"), SF_E_MALFORMED, "bad character");
    TAP_EQ_INT(url(out, sizeof(out), "AAMA AAB"), SF_E_MALFORMED, "inner space");
    TAP_EQ_INT(url(out, sizeof(out), "AAEAAQAAA"), SF_E_MALFORMED, "impossible length (9)");
    TAP_EQ_INT(url(out, sizeof(out), "AAEAAQB"), SF_E_MALFORMED, "non-zero trailing bits");
    TAP_EQ_INT(url(out, sizeof(out), "AAEAAQA"), 5,
               "5 bytes decode (the caller checks the multiple of 6)");
    TAP_EQ_INT(url(out, sizeof(out), "AAEAAQA="), 5, "padded form accepted as in base64");
    TAP_EQ_INT(url(out, sizeof(out), "AA=A"), SF_E_MALFORMED, "misplaced padding");
    TAP_EQ_INT(url(out, 5, "AAEAAQAA"), SF_E_LIMIT, "output too small");
}

int main(void)
{
    test_settings_payloads();
    test_errors();
    return tap_done();
}

/* Unit tests: lib/sf_hex, sf_base64, sf_clock, sf_opt, sf_sha256. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_base64.h"
#include "sf_clock.h"
#include "sf_err.h"
#include "sf_hex.h"
#include "sf_opt.h"
#include "sf_sha256.h"
#include "tap.h"

static void test_hex(void)
{
    uint8_t b[4];
    char s[40];
    uint64_t v;

    sf_hex_encode(s, (const uint8_t *)"\x00\xf0\x67\xaa", 4);
    TAP_EQ_STR(s, "00f067aa", "encode is lowercase");
    TAP_OK(sf_hex_decode(b, "00F067aa", 8) == 0 && b[1] == 0xf0 && b[3] == 0xaa,
           "decode either case");
    TAP_EQ_INT(sf_hex_decode(b, "0g", 2), SF_E_MALFORMED, "decode rejects non-hex");
    TAP_EQ_INT(sf_hex_decode(b, "abc", 3), SF_E_MALFORMED, "decode rejects odd length");
    TAP_OK(sf_hex_is_lower("00f067aa", 8) && !sf_hex_is_lower("00F0", 4), "is_lower");
    TAP_OK(sf_hex_is_zero("0000", 4) && !sf_hex_is_zero("0001", 4), "is_zero");
    TAP_OK(sf_hex_pad_lower(s, 32, "8448EB211C80319C", 16) == 0 &&
               strcmp(s, "00000000000000008448eb211c80319c") == 0,
           "pad 64-bit trace id to 32 lowercase");
    TAP_EQ_INT(sf_hex_pad_lower(s, 16, "12345678901234567", 17), SF_E_MALFORMED,
               "pad refuses too long");
    TAP_OK(sf_hex_u64("ffffffffffffffff", 16, &v) == 0 && v == UINT64_MAX, "u64 max");
    TAP_EQ_INT(sf_hex_u64("", 0, &v), SF_E_MALFORMED, "u64 empty");
}

static void test_base64(void)
{
    /* grpc-trace-bin example of the OpenCensus BinaryEncoding spec */
    static const char unpadded[] = "AABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE";
    static const char padded[] = "AABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE=";
    uint8_t out[64];
    char enc[64];
    long n;

    n = sf_base64_decode(out, sizeof(out), unpadded, strlen(unpadded));
    TAP_EQ_INT(n, 29, "unpadded grpc-trace-bin decodes to 29 bytes");
    TAP_OK(n == 29 && out[0] == 0 && out[1] == 0 && out[2] == 0x4b && out[18] == 1 &&
               out[27] == 2 && out[28] == 1,
           "field ids at bytes 1, 18, 27");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), padded, strlen(padded)), 29, "padded form too");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "AB=C", 4), SF_E_MALFORMED, "misplaced padding");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "A", 1), SF_E_MALFORMED, "impossible length");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "AB*D", 4), SF_E_MALFORMED, "bad character");
    TAP_EQ_INT(sf_base64_decode(out, sizeof(out), "AB==", 4), SF_E_MALFORMED,
               "non-zero trailing bits");
    TAP_EQ_INT(sf_base64_decode(out, 3, "AAAAAAAA", 8), SF_E_LIMIT, "output too small");
    sf_base64_encode(enc, out, (size_t)sf_base64_decode(out, sizeof(out), padded, strlen(padded)),
                     0);
    TAP_EQ_STR(enc, unpadded, "encode unpadded round-trips");
    sf_base64_encode(enc, (const uint8_t *)"ab", 2, 1);
    TAP_EQ_STR(enc, "YWI=", "encode padded");
}

static void test_clock(void)
{
    int64_t ns;
    char buf[40];

    TAP_OK(sf_clock_parse_ts("6544038.708352", 14, &ns) == 0 && ns == 6544038708352000LL,
           "secs.usecs parsed exactly");
    TAP_OK(sf_clock_parse_ts("94564.109216123", 15, &ns) == 0 && ns == 94564109216123LL,
           "ns digits");
    TAP_OK(sf_clock_parse_ts("590", 3, &ns) == 0 && ns == 590000000000LL, "integer seconds");
    TAP_EQ_INT(sf_clock_parse_ts("1.1234567890", 12, &ns), SF_E_MALFORMED,
               "10 fraction digits refused");
    TAP_EQ_INT(sf_clock_parse_ts("1.", 2, &ns), SF_E_MALFORMED, "empty fraction refused");
    TAP_EQ_INT(sf_clock_parse_ts("99999999999999999999", 20, &ns), SF_E_MALFORMED,
               "overflow refused");
    TAP_EQ_STR(sf_clock_format_ts(buf, sizeof(buf), 1500000001), "1.500000001", "format");
    TAP_EQ_STR(sf_clock_domain("mono", 4), SF_CLOCK_MONOTONIC, "tracefs mono is monotonic");
    TAP_EQ_STR(sf_clock_domain("monotonic (1)", 13), SF_CLOCK_MONOTONIC, "perf clockid line");
    TAP_EQ_STR(sf_clock_domain("whatever", 8), SF_CLOCK_UNKNOWN, "unknown clock");
}

static void test_opt(void)
{
    int64_t v;
    double d;

    TAP_OK(sf_opt_i64("42", 0, 100, &v) == 0 && v == 42, "i64");
    TAP_EQ_INT(sf_opt_i64("42x", 0, 100, &v), SF_E_USAGE, "i64 trailing junk");
    TAP_EQ_INT(sf_opt_i64("101", 0, 100, &v), SF_E_USAGE, "i64 out of range");
    TAP_EQ_INT(sf_opt_i64("", 0, 100, &v), SF_E_USAGE, "i64 empty");
    TAP_OK(sf_opt_double("2.5", &d) == 0 && d == 2.5, "double");
    TAP_EQ_INT(sf_opt_double("nan", &d), SF_E_USAGE, "double refuses nan");
    TAP_OK(sf_opt_duration_ns("10s", &v) == 0 && v == 10000000000LL, "10s");
    TAP_OK(sf_opt_duration_ns("250ms", &v) == 0 && v == 250000000LL, "250ms");
    TAP_OK(sf_opt_duration_ns("1.5m", &v) == 0 && v == 90000000000LL, "1.5m");
    TAP_OK(sf_opt_duration_ns("7", &v) == 0 && v == 7000000000LL, "bare number is seconds");
    TAP_EQ_INT(sf_opt_duration_ns("10 parsecs", &v), SF_E_USAGE, "unknown unit");
    TAP_EQ_INT(sf_opt_duration_ns("-1s", &v), SF_E_USAGE, "negative duration");
}

static void test_sha256(void)
{
    struct sf_sha256 h;
    char hex[65];
    char path[] = "/tmp/sf_sha_testXXXXXX";
    uint64_t bytes = 0;
    int fd;

    sf_sha256_init(&h);
    sf_sha256_update(&h, "abc", 3);
    sf_sha256_final_hex(&h, hex);
    TAP_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
               "sha256(abc) (FIPS 180-2 vector)");
    fd = mkstemp(path);
    TAP_OK(write(fd, "abc", 3) == 3, "temp file written");
    close(fd);
    TAP_OK(sf_sha256_file(path, hex, &bytes) == 0 && bytes == 3 &&
               strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
           "sha256 of a file");
    unlink(path);
    TAP_EQ_INT(sf_sha256_file("/nonexistent/x", hex, &bytes), SF_E_IO, "missing file is SF_E_IO");
}

int main(void)
{
    test_hex();
    test_base64();
    test_clock();
    test_opt();
    test_sha256();
    return tap_done();
}

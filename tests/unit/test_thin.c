/* Unit tests: lib/sf_thin.h, the sample of the requests a file and a cluster draw alike. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sf_thin.h"
#include "tap.h"

int main(void)
{
    /* SHA-256("abc") begins ba7816bf8f01cfea (FIPS 180-2, appendix B.1) */
    const uint64_t abc = UINT64_C(0xba7816bf8f01cfea) >> 11;
    const double at = (double)abc / 0x1p53; /* 0.7284... */
    char sql[1024], key[32];
    int n = 0;

    TAP_OK(sf_thin_share(10, 20) == 1.0, "10 requests fit in 20: all kept");
    TAP_OK(sf_thin_share(10, -1) == 1.0, "no bound: all kept");
    TAP_OK(sf_thin_share(1000, 250) == 0.25, "1000 past 250: a quarter");
    TAP_OK(sf_thin_bound(1.0) == UINT64_C(1) << 53, "share 1: every 53-bit hash below the bound");
    TAP_OK(sf_thin_bound(0.5) == UINT64_C(1) << 52, "share 1/2: half of them");
    TAP_OK(sf_thin_hash("abc", 3) == abc, "the hash is SHA-256's first 8 bytes, big-endian, >> 11");
    TAP_OK(sf_thin_kept("abc", at + 1e-9) && !sf_thin_kept("abc", at - 1e-9),
           "a key is kept exactly above its hash's share");
    TAP_OK(sf_thin_kept("abc", 1.0), "share 1 keeps every key");
    TAP_OK(sf_thin_request("t", "0123456789abcdefXYZ", 7, 0.5) ==
                   sf_thin_kept("0123456789abcdef", 0.5) &&
               sf_thin_request("t", "0123456789abcdefXYZ", 7, 0.3) ==
                   sf_thin_kept("0123456789abcdef", 0.3),
           "a request's key is its span id cut to 16 bytes");
    TAP_OK(sf_thin_request("t1", "", 7, 0.5) == sf_thin_kept("t1", 0.5) &&
               sf_thin_request("t1", NULL, 7, 0.9) == sf_thin_kept("t1", 0.9),
           "without a span id, its trace id");
    TAP_OK(sf_thin_request(NULL, "", -42, 0.5) == sf_thin_kept("-42", 0.5) &&
               sf_thin_request("", NULL, -42, 0.2) == sf_thin_kept("-42", 0.2),
           "without either, its start in decimal");
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        n += sf_thin_kept(key, 0.1);
    }
    TAP_OK(n > 910 && n < 1090, "share 0.1 keeps about a tenth of 10,000 keys (%d)", n);
    TAP_OK(sf_thin_sql_ch(1.0, 1, sql, sizeof(sql)) == 0 && strcmp(sql, "1") == 0,
           "share 1 on the cluster: every row");
    TAP_OK(sf_thin_sql_ch(0.5, 0, sql, sizeof(sql)) == 0 && strstr(sql, "< 4503599627370496") &&
               strstr(sql, "SHA256") && !strstr(sql, "parent_span_id"),
           "share 1/2 on the cluster: the hash below 2^52");
    TAP_OK(sf_thin_sql_ch(0.5, 1, sql, sizeof(sql)) == 0 && strstr(sql, "parent_span_id"),
           "with children: also the rows whose parent is kept");
    TAP_OK(sf_thin_sql_ch(0.5, 1, sql, 10) == -1, "a condition that does not fit is refused");
    return tap_done();
}

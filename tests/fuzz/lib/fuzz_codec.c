/* fuzz_codec.c - libFuzzer target for lib/ decoders: base64, hex, timestamps,
 * option parsing, and the bounded reader.  Asserts round-trip invariants. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sf_base64.h"
#include "sf_clock.h"
#include "sf_hex.h"
#include "sf_opt.h"
#include "sf_rd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t out[4096], back[4096];
    char enc[8192], s[256];
    int64_t v;
    long n;

    if (size > 3000)
        return 0;
    n = sf_base64_decode(out, sizeof(out), (const char *)data, size);
    if (n >= 0) {
        /* a canonical decode re-encodes to the input minus padding */
        size_t e = sf_base64_encode(enc, out, (size_t)n, 0);
        size_t in = size;
        while (in > 0 && data[in - 1] == '=')
            in--;
        if (e != in || memcmp(enc, data, e) != 0)
            abort();
    }
    if (size % 2 == 0 && size / 2 <= sizeof(back) &&
        sf_hex_decode(back, (const char *)data, size) == 0) {
        sf_hex_encode(enc, back, size / 2);
        for (size_t i = 0; i < size; i++)
            if ((enc[i] | 0x20) != (data[i] | 0x20))
                abort();
    }
    if (sf_clock_parse_ts((const char *)data, size, &v) == 0 && v < 0)
        abort();
    if (size < sizeof(s)) {
        memcpy(s, data, size);
        s[size] = 0;
        sf_opt_duration_ns(s, &v);
        sf_opt_i64(s, INT64_MIN, INT64_MAX, &v);
    }
    {
        struct sf_rd rd;
        sf_rd_init(&rd, data, size, 0);
        while (!rd.err) {
            uint8_t k = sf_rd_u8(&rd);
            if (k & 1)
                sf_rd_bytes(&rd, sf_rd_u16be(&rd) & 0xff);
            else
                sf_rd_u32be(&rd);
        }
        if (rd.p > rd.end)
            abort();
    }
    return 0;
}

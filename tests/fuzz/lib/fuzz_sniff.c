/* Fuzz target: lib/sf_sniff and lib/sf_decomp on any bytes.
 *
 * The input is written to a temporary file and read back through sf_dz (any of gzip,
 * xz, zstd or plain, whatever its first bytes say) in odd-sized steps; the head it gives
 * is classified with and without `complete`.  Nothing may crash, a read never returns
 * more than asked, a plain file reads back unchanged, and a kind is always one of the
 * enum's values with a name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz.h"
#include "sf_decomp.h"
#include "sf_sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char out[1 << 20];
    char path[] = "/tmp/fuzz_sniff.XXXXXX", why[200];
    struct sf_dz *z;
    struct sf_err err;
    size_t n = 0;
    ssize_t r;
    int fd = mkstemp(path);
    enum sf_kind k;

    if (fd < 0)
        return 0;
    CHECK(write(fd, data, size) == (ssize_t)size);
    close(fd);
    if (sf_dz_open(&z, path, &err) == 0) {
        enum sf_comp comp = sf_dz_comp(z);

        while (n < sizeof(out) && (r = sf_dz_read(z, out + n, 777, &err)) > 0) {
            CHECK(r <= 777);
            n += (size_t)r;
        }
        sf_dz_close(z);
        if (comp == SF_COMP_NONE)
            CHECK(n == (size > sizeof(out) ? sizeof(out) : size) && memcmp(out, data, n) == 0);
    }
    unlink(path);
    for (int complete = 0; complete < 2; complete++) {
        k = sf_sniff_kind(out, n, complete, why, sizeof(why));
        CHECK(k >= SF_KIND_UNKNOWN && k <= SF_KIND_TRACEFS && sf_kind_name(k) != NULL);
        CHECK(memchr(why, 0, sizeof(why)) != NULL);
        k = sf_sniff_kind(data, size, complete, NULL, 0);
        CHECK(k >= SF_KIND_UNKNOWN && k <= SF_KIND_TRACEFS);
    }
    return 0;
}

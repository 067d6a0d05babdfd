/* fuzz_perfdata.c - libFuzzer target for lib/sf_perfdata, the perf.data reader.
 *
 * The input is the file (file mode or pipe mode, either byte order by its magic).
 * Every record is read until the end or the first error; properties: no crash or
 * overrun (the sanitizers), records inside the input, an error's offset inside it,
 * callchains whose entries are all readable, strings NUL-terminated in their fields. */
#define _GNU_SOURCE /* fmemopen */
#include <stdio.h>
#include <string.h>

#include "../fuzz.h"
#include "sf_perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f;
    struct sf_pd *pd;
    struct sf_pd_record r;
    struct sf_err err;
    uint64_t sum = 0;
    int rc, k = 0;

    if (size == 0 || size > (1u << 20) || (f = fmemopen((void *)data, size, "rb")) == NULL)
        return 0;
    sf_err_clear(&err);
    if (sf_pd_open_stream(&pd, f, &err) == 0) {
        const struct sf_pd_info *in = sf_pd_info(pd);
        CHECK(memchr(in->hostname, 0, sizeof(in->hostname)) && in->nattr <= SF_PD_MAX_ATTRS);
        while (k++ < 100000 && (rc = sf_pd_next(pd, &r, &err)) > 0) {
            CHECK(r.off + r.size <= size);
            if (r.type == SF_PD_SAMPLE)
                for (uint64_t i = 0; i < r.u.sample.nr; i++)
                    sum += sf_pd_chain_ip(pd, &r.u.sample, i);
            if (r.type == SF_PD_COMM)
                CHECK(memchr(r.u.comm.comm, 0, sizeof(r.u.comm.comm)) != NULL);
            if (r.type == SF_PD_MMAP || r.type == SF_PD_MMAP2)
                CHECK(memchr(r.u.mmap.filename, 0, sizeof(r.u.mmap.filename)) != NULL);
        }
        if (rc < 0)
            CHECK(err.off == UINT64_MAX || err.off <= size);
        sf_pd_close(pd);
    }
    fclose(f);
    (void)sum;
    return 0;
}

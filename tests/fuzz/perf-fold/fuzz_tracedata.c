/* fuzz_tracedata.c - libFuzzer target: a perf.data's tracing data (the tracepoints'
 * format files) and one tracepoint record printed through it (perf-fold/tracedata.c).
 *
 *   u32 id | u16 raw size | raw | tracing data
 *
 * A record whose fields the formats place anywhere (past its end, 16-bit dynamic
 * offsets) prints inertly; whatever the formats say, parsing stays bounded.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../../perf-fold/perf_fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pf_tp *tp;
    struct sf_buf out;
    char why[160];
    uint32_t id;
    size_t raw;

    if (size < 6)
        return 0;
    id = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
         (uint32_t)data[3] << 24;
    raw = (size_t)data[4] | (size_t)data[5] << 8;
    if (raw > size - 6)
        raw = size - 6;
    if (pf_tp_open(&tp, data + 6 + raw, size - 6 - raw, why, sizeof(why)) < 0)
        return 0;
    sf_buf_init(&out, 1 << 20);
    (void)pf_tp_print(tp, id, data + 6, raw, 0, 0, &out);
    sf_buf_free(&out);
    pf_tp_close(tp);
    return 0;
}

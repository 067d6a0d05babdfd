/* fuzz_gate.c - libFuzzer target for lib/sf_gate: any text parses or fails with a
 * column inside it (or just past its end); a parsed gate checks, evaluates and is
 * written to Markdown and JUnit without fault; an interval holds its estimate. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sf_gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[SF_GATE_TEXT_MAX + 8];
    struct sf_gate g;
    struct sf_err err;
    struct sf_gate_res r;
    struct sf_gate_obs o = {0.25, 0.5, 400, 300};
    struct sf_gate_entry e;
    struct sf_gate_run run = {"fuzz", "a → b", 1, 0.99, &e, 1};
    FILE *f;

    if (size >= sizeof(text))
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    if (sf_gate_parse(&g, text, &err) < 0) {
        assert((err.col >= 1 && err.col <= strlen(text) + 1) || err.col == SF_GATE_TEXT_MAX);
        return 0;
    }
    for (int k = SF_GATE_K_SHARE; k <= SF_GATE_K_ANY; k++)
        if (sf_gate_check(&g, (enum sf_gate_kind)k, &err) < 0)
            assert(err.col >= 1 && err.col <= strlen(text) + 1);
    e.gate = g.text;
    e.verdict = sf_gate_eval(&g, &o, 0.99, &r);
    if (r.has_ci && isfinite(r.est))
        assert(r.lo <= r.est + 1e-12 && r.est <= r.hi + 1e-12);
    sf_gate_format(&g, &r, e.detail, sizeof(e.detail));
    if ((f = fopen("/dev/null", "w")) != NULL) {
        sf_gate_write_md(f, &run);
        sf_gate_write_junit(f, &run);
        sf_gate_write_log(f, &run);
        fclose(f);
    }
    return 0;
}

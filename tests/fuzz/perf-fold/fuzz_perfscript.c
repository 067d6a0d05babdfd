/* fuzz_perfscript.c - libFuzzer target: arbitrary bytes as `perf script` text.
 *
 * The first byte picks options (--pid/--tid/--kernel/--jit/--addrs/--srcline/
 * --eof); the rest is split into lines and fed to the parser and folder exactly
 * as perfscript_file() does, then the fold is printed to /dev/null.  --inline is
 * left out: it runs addr2line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../perf-fold/perf_fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct perf_fold_ctx c;
    char *buf;
    size_t i, start;
    FILE *null;

    if (size == 0)
        return 0;
    memset(&c, 0, sizeof(c));
    c.o.pid = data[0] & 1;
    c.o.tid = (data[0] >> 1) & 1;
    c.o.kernel = (data[0] >> 2) & 1;
    c.o.jit = (data[0] >> 3) & 1;
    c.o.addrs = (data[0] >> 4) & 1;
    c.o.srcline = (data[0] >> 5) & 1;
    c.o.eof = (data[0] >> 6) & 1;
    c.o.quiet = 1;
    c.file = "fuzz";
    if (fold_init(&c))
        return 0;
    /* a private copy: lines are NUL-terminated in place, as sf_line does */
    buf = malloc(size);
    if (buf == NULL) {
        fold_free(&c);
        return 0;
    }
    memcpy(buf, data + 1, size - 1);
    for (i = start = 0; i <= size - 1; i++) {
        if (i == size - 1 || buf[i] == '\n') {
            if (i == size - 1 && i == start)
                break;
            buf[i] = 0;
            c.lineno++;
            if (perfscript_line(&c, buf + start, i - start))
                break;
            start = i + 1;
        }
    }
    perfscript_finish(&c);
    null = fopen("/dev/null", "w");
    if (null) {
        fold_table_print(&c.stacks, null);
        fclose(null);
    }
    fold_free(&c);
    free(buf);
    return 0;
}

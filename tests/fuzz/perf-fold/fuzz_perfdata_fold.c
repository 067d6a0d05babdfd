/* fuzz_perfdata_fold.c - libFuzzer target: arbitrary bytes as a perf.data file, folded as
 * `perf-fold FILE` folds one (perfdata.c: records held and handed on in time order a round
 * late, as perf's ordered_events does; mappings, comms, symbols), then the fold printed to
 * /dev/null.  The first byte picks --pid/--tid/--kernel/--addrs; the rest is the file,
 * written to a private temporary file.  Symbols come from no file of this machine:
 * --symfs names an empty folder and --kallsyms an empty file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../perf-fold/perf_fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64], empty[64], dir[64];

/* the private files gone when libFuzzer exits (they were left in /tmp, one pair a run) */
static void remove_files(void)
{
    unlink(path);
    unlink(empty);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct perf_fold_ctx c;
    FILE *f, *null;

    if (size < 2)
        return 0;
    if (path[0] == 0) {
        snprintf(path, sizeof(path), "/tmp/fuzz-perfdata-%d.data", (int)getpid());
        snprintf(empty, sizeof(empty), "/tmp/fuzz-perfdata-%d.kallsyms", (int)getpid());
        snprintf(dir, sizeof(dir), "/tmp/fuzz-perfdata-%d.symfs", (int)getpid());
        if ((f = fopen(empty, "w")) != NULL)
            fclose(f);
        atexit(remove_files);
    }
    if ((f = fopen(path, "wb")) == NULL)
        return 0;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    memset(&c, 0, sizeof(c));
    c.o.pid = data[0] & 1;
    c.o.tid = (data[0] >> 1) & 1;
    c.o.kernel = (data[0] >> 2) & 1;
    c.o.addrs = (data[0] >> 3) & 1;
    c.o.quiet = 1;
    c.o.symfs = dir;
    c.o.kallsyms = empty;
    c.file = path;
    if (fold_init(&c))
        return 0;
    if (perfdata_is(path))
        perfdata_file(&c, path);
    perfscript_finish(&c);
    null = fopen("/dev/null", "w");
    if (null) {
        fold_table_print(&c.stacks, null);
        fclose(null);
    }
    fold_free(&c);
    return 0;
}

/* replay.c - run a libFuzzer target's inputs without libFuzzer.
 *
 * Linked with one tests/fuzz/<tool>/fuzz_*.c under gcc for `make check`, so every
 * seed and every crash a fuzzer ever found (kept in tests/fuzz/corpus/<target>/)
 * is replayed on each test run, under ASan with `make SAN=1 check`.
 * Usage: replay NAME DIR|FILE...   Prints one TAP line per argument.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int tn = 0, failed = 0;

    for (int i = 2; i < argc; i++) {
        struct stat st;
        long count = 0;
        int bad = 0;

        if (stat(argv[i], &st) != 0) {
            printf("ok %d - %s: %s # SKIP no such corpus\n", ++tn, argv[1], argv[i]);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            char path[4096];

            while (d && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                /* print the name first: if it crashes, the log says which input */
                fprintf(stderr, "replay %s\n", path);
                if (run_file(path) != 0)
                    bad++;
                count++;
            }
            if (d)
                closedir(d);
        } else {
            bad = run_file(argv[i]) != 0;
            count = 1;
        }
        if (bad)
            failed++;
        printf("%sok %d - %s replays %ld inputs from %s\n", bad ? "not " : "", ++tn, argv[1], count,
               argv[i]);
    }
    printf("1..%d\n", tn);
    return failed ? 1 : 0;
}

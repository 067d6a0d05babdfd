/* Fuzz target: lib/sf_line against a plain reference splitter.
 *
 * Input: byte 0 picks max_line (1..256), byte 1 how often the rest is repeated
 * (bit 7 set: until the stream passes 600 KiB, so the buffer is compacted and
 * refilled across its 256 KiB read blocks; else once).  The stream goes through
 * a temporary file; every line, its number, offset and end-of-input flag, and
 * every over-long line (SF_E_LIMIT) must be what splitting at '\n' gives.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz.h"
#include "sf_err.h"
#include "sf_line.h"

/* The stream the reader sees: body repeated reps times. */
static uint8_t *make_stream(const uint8_t *body, size_t n, size_t reps, size_t *total)
{
    uint8_t *s = malloc(n * reps + 1);

    if (s == NULL)
        return NULL;
    for (size_t i = 0; i < reps; i++)
        memcpy(s + i * n, body, n);
    *total = n * reps;
    return s;
}

/* Compare the reader's output over fd with a split of s[0..n) at '\n'. */
static void compare(int fd, const uint8_t *s, size_t n, size_t max_line)
{
    struct sf_line r;
    size_t at = 0;
    uint64_t lineno = 0;
    char *line;
    size_t len;
    int rc;

    CHECK(sf_line_open(&r, fd, max_line) == 0);
    while (at < n) {
        const uint8_t *nl = memchr(s + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - s) : n;
        size_t want = end - at;

        rc = sf_line_next(&r, &line, &len);
        lineno++;
        CHECK(r.lineno == lineno);
        CHECK(r.off == at);
        if (want > max_line) {
            CHECK(rc == SF_E_LIMIT);
        } else {
            CHECK(rc == 1);
            CHECK(len == want);
            CHECK(memcmp(line, s + at, want) == 0);
            CHECK(line[len] == 0);
            CHECK(r.unterminated == (nl == NULL));
        }
        at = nl ? end + 1 : n;
    }
    CHECK(sf_line_next(&r, &line, &len) == 0);
    CHECK(r.bytes_read == n);
    sf_line_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz_line_XXXXXX";
    size_t max_line, reps = 1, total;
    uint8_t *s;
    int fd;

    if (size < 2)
        return 0;
    max_line = (size_t)data[0] + 1;
    if (data[1] & 0x80 && size > 2)
        reps = 600 * 1024 / (size - 2) + 1;
    data += 2, size -= 2;
    if ((s = make_stream(data, size, reps, &total)) == NULL)
        return 0;
    fd = mkstemp(path);
    if (fd < 0) {
        free(s);
        return 0;
    }
    unlink(path);
    if (write(fd, s, total) == (ssize_t)total && lseek(fd, 0, SEEK_SET) == 0)
        compare(fd, s, total, max_line);
    close(fd);
    free(s);
    return 0;
}

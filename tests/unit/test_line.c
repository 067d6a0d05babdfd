/* Unit tests: lib/sf_line line reader over pipes and files. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sf_err.h"
#include "sf_line.h"
#include "tap.h"

/* Write `data` to a pipe and return the read end (small inputs only). */
static int pipe_of(const char *data, size_t n)
{
    int fd[2];

    if (pipe(fd) != 0)
        return -1;
    if (write(fd[1], data, n) != (ssize_t)n)
        return -1;
    close(fd[1]);
    return fd[0];
}

static void test_basic(void)
{
    static const char in[] = "one\ntwo\n\nfour";
    struct sf_line r;
    char *s;
    size_t n;
    int fd = pipe_of(in, sizeof(in) - 1);

    sf_line_open(&r, fd, 0);
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && n == 3 && strcmp(s, "one") == 0, "first line");
    TAP_EQ_INT(r.lineno, 1, "line number 1");
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && strcmp(s, "two") == 0 && r.off == 4,
           "second line at offset 4");
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && n == 0, "empty line");
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && strcmp(s, "four") == 0 && r.unterminated,
           "last line without newline is returned and flagged");
    TAP_EQ_INT(sf_line_next(&r, &s, &n), 0, "then end of input");
    TAP_EQ_INT(r.bytes_read, sizeof(in) - 1, "bytes_read counts the input");
    sf_line_close(&r);
    close(fd);
}

static void test_long_line(void)
{
    char *in = malloc(300);
    struct sf_line r;
    char *s;
    size_t n;
    int fd;

    memcpy(in, "ok\n", 3);
    memset(in + 3, 'x', 200);
    memcpy(in + 203, "\nafter\n", 7);
    fd = pipe_of(in, 210);
    sf_line_open(&r, fd, 64);
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && strcmp(s, "ok") == 0, "line before the long one");
    TAP_EQ_INT(sf_line_next(&r, &s, &n), SF_E_LIMIT, "a line over max_line is refused");
    TAP_OK(r.lineno == 2 && r.off == 3, "the refusal names line 2 at offset 3");
    TAP_OK(sf_line_next(&r, &s, &n) == 1 && strcmp(s, "after") == 0 && r.lineno == 3,
           "reading goes on after the long line");
    TAP_EQ_INT(sf_line_next(&r, &s, &n), 0, "end");
    sf_line_close(&r);
    close(fd);
    free(in);
}

/* Lines spanning many reads through a temp file bigger than the read block. */
static void test_many(void)
{
    char path[] = "/tmp/sf_line_testXXXXXX";
    int fd = mkstemp(path), ok = 1;
    struct sf_line r;
    char *s, buf[64];
    size_t n, want = 200000, got = 0;

    for (size_t i = 0; i < want; i++) {
        int k = snprintf(buf, sizeof(buf), "line %zu\n", i);
        if (write(fd, buf, (size_t)k) != k)
            ok = 0;
    }
    lseek(fd, 0, SEEK_SET);
    sf_line_open(&r, fd, 0);
    while (sf_line_next(&r, &s, &n) == 1) {
        snprintf(buf, sizeof(buf), "line %zu", got);
        if (strcmp(s, buf) != 0)
            ok = 0;
        got++;
    }
    TAP_OK(ok && got == want, "200000 lines across read blocks come back in order (%zu)", got);
    sf_line_close(&r);
    close(fd);
    unlink(path);
}

/* Line i of test_chunks: (i * 37) % 200 copies of 'a' + i % 26. */
static size_t chunk_line(size_t i, char *out)
{
    size_t n = (i * 37) % 200;

    memset(out, 'a' + (int)(i % 26), n);
    return n;
}

/* Lines of 0..199 bytes, some over max_line, arriving through a pipe in 61-byte
 * writes: line ends fall on every position of the 64-byte newline scan and of
 * the reads. */
static void test_chunks(int (*next)(struct sf_line *, char **, size_t *), const char *name)
{
    enum { LINES = 3000, MAXL = 128 };
    struct sf_line r;
    char *s, want[256];
    size_t n, i = 0, off = 0;
    int fd[2], ok = 1, rc, status;
    pid_t pid;

    if (pipe(fd) != 0 || (pid = fork()) < 0) {
        TAP_OK(0, "pipe and fork for the chunked reader test");
        return;
    }
    if (pid == 0) {
        static char all[LINES * 201];
        size_t len = 0;
        close(fd[0]);
        for (size_t k = 0; k < LINES; k++) {
            len += chunk_line(k, all + len);
            all[len++] = '\n';
        }
        for (size_t p = 0; p < len; p += 61)
            if (write(fd[1], all + p, len - p < 61 ? len - p : 61) < 0)
                _exit(1);
        _exit(0);
    }
    close(fd[1]);
    sf_line_open(&r, fd[0], MAXL);
    while ((rc = next(&r, &s, &n)) != 0 && ok) {
        size_t wn = chunk_line(i, want);
        if (r.lineno != i + 1 || r.off != off)
            ok = 0;
        else if (wn > MAXL)
            ok = rc == SF_E_LIMIT;
        else
            ok = rc == 1 && n == wn && memcmp(s, want, n) == 0 && s[n] == 0;
        off += wn + 1;
        i++;
    }
    TAP_OK(ok && i == LINES,
           "%s: 3000 lines in 61-byte pipe writes: text, number, offset, limit (%zu)", name, i);
    sf_line_close(&r);
    close(fd[0]);
    waitpid(pid, &status, 0);
}

int main(void)
{
    test_basic();
    test_long_line();
    test_many();
    test_chunks(sf_line_next, "sf_line_next");
    test_chunks(sf_line_get, "sf_line_get");
    return tap_done();
}

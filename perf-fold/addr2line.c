/* addr2line.c - inline frames from binutils' addr2line (addr2line.h).
 *
 * The exchange is perf's: the address as 16 hex digits, then a line holding "," that
 * addr2line cannot read as an address.  It answers the address with one record (a
 * function name line, a FILE:LINE line) per function, innermost first, then the comma
 * with the record "??" / "??:0", which ends the answer.  As perf reads them, a record
 * whose second line is "??:0" ends it wherever it comes (a first record like that means
 * no answer: the comma's record is read too), and the names are trimmed of blanks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include "addr2line.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "a2l_dw.h"
#include "perf_fold.h"
#include "sf_arena.h"
#include "sf_map.h"

#define A2L_NEST_MAX 1024 /* perf's MAX_INLINE_NEST: more records are read and dropped */
#define A2L_WAIT_MS                                                                                \
    30000 /* an answer not begun or not ended in this long: the child is stopped                   \
           */
#define A2L_LINE_MAX (1u << 20) /* a longer line: the child is stopped */
#define A2L_LIVE_MAX                                                                               \
    64 /* children running at once; the least recently asked one stops                             \
          for another (its answers are kept, and it starts again if asked) */

struct answer {
    uint64_t addr;
    const char **names; /* n of them, in mem */
    size_t n;
};

struct pf_a2l {
    char *file;
    struct pf_a2l_dw *dw; /* the answers computed here (a2l_dw.h); NULL: from the child */
    int in_process;       /* try dw first */
    pid_t pid;
    int to, from; /* its standard input and output */
    char *buf;    /* what was read of its output: [bpos, blen) not yet taken */
    size_t blen, bcap, bpos;
    uint64_t used;      /* when it was last asked (live's clock) */
    int broken;         /* it could not be started, or stopped answering: no more questions */
    struct sf_map seen; /* struct answer by address */
    const char **names; /* the answer being read */
    size_t nnames, capnames;
    struct sf_arena mem; /* the answers and their names */
};

struct pf_a2l *pf_a2l_new(const char *file, int in_process)
{
    struct pf_a2l *a = calloc(1, sizeof(*a));

    if (a == NULL || (a->file = strdup(file)) == NULL) {
        free(a);
        return NULL;
    }
    a->pid = -1;
    a->to = a->from = -1;
    a->in_process = in_process;
    sf_arena_init(&a->mem, 1u << 14, 0);
    return a;
}

/* The children running, to keep their number (and their pipes) bounded. */
static struct pf_a2l *live[A2L_LIVE_MAX];
static uint64_t live_clock;

/* a's child stopped: its input closed (addr2line ends at the end of its input), then
 * killed, which a child that does not end at once needs, and waited for. */
static void stop(struct pf_a2l *a)
{
    for (size_t i = 0; i < A2L_LIVE_MAX; i++)
        if (live[i] == a)
            live[i] = NULL;
    if (a->to >= 0)
        close(a->to);
    if (a->from >= 0)
        close(a->from);
    if (a->pid > 0) {
        kill(a->pid, SIGKILL);
        waitpid(a->pid, NULL, 0);
    }
    a->to = a->from = -1;
    a->pid = -1;
    a->blen = a->bpos = 0;
}

/* a place among the live children for a: a free one, else the least recently asked
 * one's, which stops. */
static void make_room(struct pf_a2l *a)
{
    size_t pick = 0;

    for (size_t i = 0; i < A2L_LIVE_MAX; i++) {
        if (live[i] == NULL) {
            pick = i;
            break;
        }
        if (live[i]->used < live[pick]->used)
            pick = i;
    }
    if (live[pick])
        stop(live[pick]);
    live[pick] = a;
}

extern char **environ;

/* The child, started with posix_spawn (no copy of this process's memory, which a fork
 * of a large run would make). */
static int start(struct pf_a2l *a)
{
    char fbuf[4096];
    const char *file = binutils_file_arg(a->file, fbuf, sizeof(fbuf));
    char *argv[] = {"addr2line", "-e", (char *)file, "-i", "-f", NULL};
    posix_spawn_file_actions_t fa;
    int in[2], out[2], rc;

    if (file == NULL)
        return -1;
    make_room(a);
    if (pipe2(in, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        rc = posix_spawnp(&a->pid, "addr2line", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(in[0]);
    close(out[1]);
    a->to = in[1];
    a->from = out[0];
    if (rc != 0) {
        a->pid = -1;
        stop(a);
        return -1;
    }
    return 0;
}

/* All of s to the child, a closed pipe (the child gone) an error, not a signal. */
static int send_all(int fd, const char *s, size_t n)
{
    sigset_t pipe_only, old;
    int rc = 0;

    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = -1;
            break;
        }
        s += k;
        n -= (size_t)k;
    }
    if (rc < 0 && errno == EPIPE) { /* take the signal the write raised before unblocking */
        struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &now) == SIGPIPE)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The child's next line (its newline cut off) at *line, valid until the next call: 1, or
 * -1 when its output ended, a line passed A2L_LINE_MAX, or nothing came for A2L_WAIT_MS
 * (a child that never answers must not hang the run). */
static int next_line(struct pf_a2l *a, char **line)
{
    for (;;) {
        char *nl = memchr(a->buf + a->bpos, '\n', a->blen - a->bpos);
        struct pollfd pf = {a->from, POLLIN, 0};
        ssize_t k;
        if (nl) {
            *nl = 0;
            *line = a->buf + a->bpos;
            a->bpos = (size_t)(nl - a->buf) + 1;
            return 1;
        }
        memmove(a->buf, a->buf + a->bpos, a->blen - a->bpos);
        a->blen -= a->bpos;
        a->bpos = 0;
        if (a->blen == a->bcap) {
            size_t nc = a->bcap ? 2 * a->bcap : 4096;
            char *g = nc <= A2L_LINE_MAX ? realloc(a->buf, nc) : NULL;
            if (g == NULL)
                return -1;
            a->buf = g;
            a->bcap = nc;
        }
        if (poll(&pf, 1, A2L_WAIT_MS) <= 0)
            return -1;
        if ((k = read(a->from, a->buf + a->blen, a->bcap - a->blen)) < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        a->blen += (size_t)k;
    }
}

/* One record: 1 with *fn its function (blanks trimmed, as perf's strim), 0 for a record
 * that ends the answer (its place "??:0", or not FILE:LINE), -1 when the child is gone. */
static int record(struct pf_a2l *a, char **fn, size_t *fncap)
{
    char *line, *s, *e;
    size_t l;

    if (next_line(a, &line) < 0)
        return -1;
    for (s = line; isspace((unsigned char)*s);)
        s++;
    for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
        e--;
    l = (size_t)(e - s);
    if (l + 1 > *fncap) { /* kept apart: the next line may move the buffer */
        char *g = realloc(*fn, l + 1);
        if (g == NULL)
            return -1;
        *fn = g;
        *fncap = l + 1;
    }
    memcpy(*fn, s, l);
    (*fn)[l] = 0;
    if (next_line(a, &line) < 0)
        return -1;
    return strcmp(line, "??:0") == 0 || strchr(line, ':') == NULL ? 0 : 1;
}

static int keep_name(struct pf_a2l *a, const char *name)
{
    size_t l = strlen(name);
    char *c = sf_arena_alloc(&a->mem, l + 1);

    if (c == NULL)
        return -1;
    memcpy(c, name, l + 1);
    if (a->nnames == a->capnames) {
        size_t nc = a->capnames ? 2 * a->capnames : 256;
        const char **g = realloc(a->names, nc * sizeof(*g));
        if (g == NULL)
            return -1;
        a->names = g;
        a->capnames = nc;
    }
    a->names[a->nnames++] = c;
    return 0;
}

/* Ask the child about addr; its names into a->names.  -1: the child is gone. */
static int ask(struct pf_a2l *a, uint64_t addr, size_t *count)
{
    char q[40], *fn = NULL;
    size_t fncap = 0, n = 0;
    int rc;

    *count = 0;
    a->used = ++live_clock;
    snprintf(q, sizeof(q), "%016llx\n,\n", (unsigned long long)addr);
    if (send_all(a->to, q, strlen(q)) < 0)
        return -1;
    rc = record(a, &fn, &fncap);
    if (rc == 0) /* no answer: the comma's record is still to come */
        rc = record(a, &fn, &fncap) < 0 ? -1 : 0;
    else
        while (rc == 1) {
            if (n++ < A2L_NEST_MAX + 1 && keep_name(a, fn) < 0) {
                rc = -1;
                break;
            }
            rc = record(a, &fn, &fncap);
        }
    free(fn);
    if (rc < 0)
        return -1;
    *count = n > A2L_NEST_MAX + 1 ? A2L_NEST_MAX + 1 : n;
    return 0;
}

static int answer_eq(const void *val, const void *key)
{
    return ((const struct answer *)val)->addr == *(const uint64_t *)key;
}

/* Whether the names a2l_dw.c computes are the ones this machine's addr2line gives: its
 * rules are binutils 2.40's (Debian 12's, which Debian's perf 6.1 runs).  Another
 * binutils is asked itself; none at all gives no inline frames, as perf shows none
 * without it.  Asked once a run. */
static int rules_known(void)
{
    static int known = -1;

    if (known < 0) {
        char *argv[] = {"addr2line", "--version", NULL}, *out = pf_run(argv);
        char *nl = out ? strchr(out, '\n') : NULL;
        if (nl)
            *nl = 0;
        known = out && strlen(out) > 5 && strcmp(out + strlen(out) - 5, " 2.40") == 0 &&
                strncmp(out, "GNU addr2line", 13) == 0;
        free(out);
    }
    return known;
}

size_t pf_a2l_names(struct pf_a2l *a, uint64_t addr, const char *const **names)
{
    uint64_t h = sf_hash_u64(addr);
    struct sf_map_slot *s;
    struct answer *an;
    size_t n = 0;

    if ((an = sf_map_find(&a->seen, h, answer_eq, &addr)) != NULL) {
        *names = an->names;
        return an->n;
    }
    a->nnames = 0;
    if (a->in_process && a->dw == NULL &&
        (!rules_known() || (a->dw = pf_a2l_dw_open(a->file)) == NULL))
        a->in_process = 0; /* binutils knows something this file needs: ask it */
    if (a->dw) {
        const char *dn[A2L_NEST_MAX + 1];
        long k = pf_a2l_dw_names(a->dw, addr, dn, A2L_NEST_MAX + 1);
        for (long i = 0; i < k; i++)
            if (keep_name(a, dn[i]) < 0)
                return 0;
        if (k >= 0)
            n = (size_t)k;
        else { /* DWARF not read here: from now on binutils answers */
            pf_a2l_dw_free(a->dw);
            a->dw = NULL;
            a->in_process = 0;
        }
    }
    if (a->dw == NULL && a->to < 0 && !a->broken && start(a) < 0) /* not started yet, or stopped */
        a->broken = 1;
    if (a->dw == NULL && !a->broken && ask(a, addr, &n) < 0) {
        stop(a);
        a->broken = 1; /* as perf: no inline frames from here on */
        n = 0;
    }
    if (sf_map_reserve(&a->seen, 1) < 0 || (an = sf_arena_alloc(&a->mem, sizeof(*an))) == NULL ||
        (an->names = sf_arena_alloc(&a->mem, (n ? n : 1) * sizeof(*an->names))) == NULL)
        return 0;
    memcpy(an->names, a->names, n * sizeof(*an->names));
    an->addr = addr;
    an->n = n;
    s = sf_map_probe(&a->seen, h, answer_eq, &addr);
    sf_map_fill(&a->seen, s, h, an);
    *names = an->names;
    return n;
}

int pf_a2l_computed(const struct pf_a2l *a)
{
    return a->dw != NULL && a->pid < 0 && !a->broken;
}

void pf_a2l_free(struct pf_a2l *a)
{
    if (a == NULL)
        return;
    stop(a);
    pf_a2l_dw_free(a->dw);
    sf_map_free(&a->seen);
    free(a->buf);
    free(a->names);
    sf_arena_free(&a->mem);
    free(a->file);
    free(a);
}

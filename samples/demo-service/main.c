/* main.c - spanfold-demo-service: options, the listening socket, a fixed pool of
 * worker threads that each serve one connection at a time (so a span's begin and
 * end markers and its CPU work share a thread, and the threads live as long as the
 * profile: perf's frequency-adjusted sampling of -F is unbiased only on threads
 * that last; a thread per connection lost about half the samples of short ones).
 *
 *   spanfold-demo-service [--port N] [--rate R] [--scale X] [--trace-marker FILE]
 *                         [--breaker-latency-ms MS] [--breaker-errors SHARE] [--slow]
 *                         [--slow-kind cpu|lock|downstream|mixed] [--backend PORT]
 *                         [--threads N] [--admin-port N]
 *
 * Prints "listening on 127.0.0.1:PORT[ (admin 127.0.0.1:APORT)], N workers" on
 * stdout once it accepts; the admin commands work on both ports.  Stops on SIGINT
 * or SIGTERM.  Binds 127.0.0.1 only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "demo.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

#define QCAP 256

/* Accepted connections waiting for a worker. */
struct conn_queue {
    struct demo_ctx *c;
    pthread_mutex_t lock;
    pthread_cond_t ready;
    int fd[QCAP];
    unsigned head, n;
};

static void serve(struct demo_ctx *c, int fd)
{
    char pre[24];
    size_t n = 0;

    /* enough bytes to tell the HTTP/2 preface from a request line */
    while (n < sizeof(pre)) {
        ssize_t k = read(fd, pre + n, sizeof(pre) - n);
        if (k <= 0)
            break;
        n += (size_t)k;
        if (memcmp(pre, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", n < 3 ? n : 3) != 0)
            break;
    }
    if (n == 0)
        close(fd);
    else if (n == sizeof(pre) && memcmp(pre, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24) == 0)
        demo_serve_h2(c, fd, pre, n);
    else
        demo_serve_h1(c, fd, pre, n);
}

static void *worker(void *p)
{
    struct conn_queue *q = p;

    for (;;) {
        int fd;
        pthread_mutex_lock(&q->lock);
        while (q->n == 0)
            pthread_cond_wait(&q->ready, &q->lock);
        fd = q->fd[q->head];
        q->head = (q->head + 1) % QCAP;
        q->n--;
        pthread_mutex_unlock(&q->lock);
        serve(q->c, fd);
    }
    return NULL;
}

/* Queue an accepted connection; a full queue closes it (the client sees a reset). */
static void enqueue(struct conn_queue *q, int fd)
{
    pthread_mutex_lock(&q->lock);
    if (q->n == QCAP) {
        close(fd);
    } else {
        q->fd[(q->head + q->n) % QCAP] = fd;
        q->n++;
        pthread_cond_signal(&q->ready);
    }
    pthread_mutex_unlock(&q->lock);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: spanfold-demo-service [--port N] [--rate R] [--scale X]\n"
               "         [--trace-marker FILE] [--breaker-latency-ms MS] [--breaker-errors SHARE]\n"
               "         [--slow] [--slow-kind cpu|lock|downstream|mixed] [--backend PORT]\n"
               "         [--threads N] [--admin-port N]\n"
               "         [--drop-baggage KEY=VALUE] [--rate-header NAME=R]\n"
               "HTTP/1.1 and h2c (prior knowledge) demo service on 127.0.0.1 with gRPC-style\n"
               "calls, a head sampler and span markers (USDT spanfold:span_begin/span_end).\n"
               "  --port N              port (default 0: any free one, printed on stdout)\n"
               "  --rate R              keep probability for deferred decisions (0.5)\n"
               "  --scale X             CPU work multiplier (1)\n"
               "  --trace-marker FILE   also write markers to this tracefs trace_marker\n"
               "  --breaker-latency-ms  breaker opens above this mean latency (250)\n"
               "  --breaker-errors S    breaker opens above this error share (0.25)\n"
               "  --slow                start in slow mode\n"
               "  --slow-kind K         what slow mode does to /api/search: cpu (burns CPU in\n"
               "                        slow_regex_backtrack, the default) or lock (waits for\n"
               "                        a pool of one connection, then 15 ms for its answer)\n"
               "                        or downstream (every search calls the backend, which\n"
               "                        slow mode asks to be slow), or mixed (downstream and\n"
               "                        cpu at once)\n"
               "  --backend PORT        the search backend on 127.0.0.1 (--slow-kind downstream)\n"
               "  --threads N           worker threads, each serving one connection (16)\n"
               "  --admin-port N        also listen here (0: any free port), e.g. to keep the\n"
               "                        admin commands out of a capture of the main port\n"
               "  --drop-baggage K=V    drop every deferred request whose baggage has K=V\n"
               "  --rate-header H=R     keep deferred requests without header H at rate R\n"
               "Endpoints: GET /api/checkout, GET /api/search, gRPC /demo.Catalog/Lookup,\n"
               "POST /admin/slow?on=1|0, POST /admin/rate?r=R.\n");
}

static int parse(struct demo_ctx *c, int argc, char **argv)
{
    static const struct option lo[] = {{"port", 1, 0, 'p'},
                                       {"rate", 1, 0, 'r'},
                                       {"scale", 1, 0, 's'},
                                       {"trace-marker", 1, 0, 'm'},
                                       {"breaker-latency-ms", 1, 0, 'L'},
                                       {"breaker-errors", 1, 0, 'E'},
                                       {"slow", 0, 0, 'S'},
                                       {"slow-kind", 1, 0, 'K'},
                                       {"backend", 1, 0, 'b'},
                                       {"threads", 1, 0, 't'},
                                       {"admin-port", 1, 0, 'a'},
                                       {"drop-baggage", 1, 0, 'B'},
                                       {"rate-header", 1, 0, 'H'},
                                       {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    int o;
    char *end;

    while ((o = getopt_long(argc, argv, "p:", lo, NULL)) != -1) {
        /* every option with a value takes a number, except --trace-marker, --slow-kind
           and the two rules */
        int num = optarg && o != 'm' && o != 'K' && o != 'B' && o != 'H';
        double v = num ? strtod(optarg, &end) : 0;
        if (num && (end == optarg || *end || v < 0))
            return fprintf(stderr, "demo-service: bad value '%s'\n", optarg), -1;
        switch (o) {
        case 'p':
            c->port = (int)v;
            break;
        case 'r':
            c->s.rate = v > 1 ? 1 : v;
            break;
        case 's':
            c->scale = v;
            break;
        case 'L':
            c->s.lat_ms = v;
            break;
        case 'E':
            c->s.err_share = v;
            break;
        case 'S':
            c->slow = 1;
            break;
        case 'K':
            if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "lock") != 0 &&
                strcmp(optarg, "downstream") != 0 && strcmp(optarg, "mixed") != 0)
                return fprintf(stderr,
                               "demo-service: --slow-kind cpu, lock, downstream or mixed\n"),
                       -1;
            c->slow_kind = strcmp(optarg, "lock") == 0         ? DEMO_SLOW_LOCK
                           : strcmp(optarg, "downstream") == 0 ? DEMO_SLOW_DOWNSTREAM
                           : strcmp(optarg, "mixed") == 0      ? DEMO_SLOW_MIXED
                                                               : DEMO_SLOW_CPU;
            break;
        case 'b':
            if (v < 1 || v > 65535)
                return fprintf(stderr, "demo-service: --backend 1..65535\n"), -1;
            c->backend_port = (int)v;
            break;
        case 'a':
            c->admin_port = (int)v;
            break;
        case 'B':
        case 'H':
            if (demo_sampler_rule(&c->s, o == 'B' ? "drop-baggage" : "rate-header", optarg) < 0)
                return fprintf(stderr, "demo-service: bad rule '%s' (NAME=VALUE)\n", optarg), -1;
            break;
        case 't':
            if (v < 1 || v > 256)
                return fprintf(stderr, "demo-service: --threads 1..256\n"), -1;
            c->threads = (int)v;
            break;
        case 'm':
            if ((c->marker_fd = open(optarg, O_WRONLY)) < 0)
                return fprintf(stderr, "demo-service: %s: %s\n", optarg, strerror(errno)), -1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if ((c->slow_kind == DEMO_SLOW_DOWNSTREAM || c->slow_kind == DEMO_SLOW_MIXED) !=
        (c->backend_port != 0))
        return fprintf(stderr, "demo-service: --slow-kind downstream or mixed, and --backend, "
                               "go together\n"),
               -1;
    return optind == argc ? 0 : -1;
}

/* Listen on 127.0.0.1:*port (0: any free port, written back). */
static int listen_on(int *port, int *fd)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
    socklen_t sl = sizeof(sa);
    int one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((*fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(*fd, 128) < 0 ||
        getsockname(*fd, (struct sockaddr *)&sa, &sl) < 0) {
        fprintf(stderr, "demo-service: failed to listen on 127.0.0.1:%d: %s\n", *port,
                strerror(errno));
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return 0;
}

int main(int argc, char **argv)
{
    struct demo_ctx c = {.marker_fd = -1,
                         .scale = 1,
                         .threads = 16,
                         .admin_port = -1,
                         .admin_fd = -1,
                         .slow_kind = DEMO_SLOW_CPU};
    struct conn_queue q = {.c = &c};
    struct sigaction sa = {.sa_handler = on_signal};
    pthread_attr_t at;

    demo_sampler_init(&c.s, 0.5);
    pthread_mutex_init(&c.lock, NULL);
    if (parse(&c, argc, argv) < 0 || listen_on(&c.port, &c.listen_fd) < 0 ||
        (c.admin_port >= 0 && listen_on(&c.admin_port, &c.admin_fd) < 0))
        return 2;
    sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: accept returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.ready, NULL);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < c.threads; i++) {
        pthread_t t;
        if (pthread_create(&t, &at, worker, &q) != 0) {
            fprintf(stderr, "demo-service: failed to start worker %d: %s\n", i, strerror(errno));
            return 1;
        }
    }
    printf("listening on 127.0.0.1:%d", c.port);
    if (c.admin_port >= 0)
        printf(" (admin 127.0.0.1:%d)", c.admin_port);
    printf(", %d workers\n", c.threads);
    fflush(stdout);
    while (!stop) {
        struct pollfd pf[2] = {{c.listen_fd, POLLIN, 0}, {c.admin_fd, POLLIN, 0}};
        if (poll(pf, c.admin_fd >= 0 ? 2 : 1, -1) <= 0)
            continue; /* EINTR: look at stop */
        for (int i = 0; i < 2; i++) {
            int fd = pf[i].revents & POLLIN ? accept(pf[i].fd, NULL, NULL) : -1;
            if (fd >= 0)
                enqueue(&q, fd);
        }
    }
    pthread_mutex_lock(&c.lock);
    fprintf(stderr, "demo-service: stopping (rate %g, breaker opened %u times)\n", c.s.rate,
            c.s.opened);
    pthread_mutex_unlock(&c.lock);
    return 0;
}

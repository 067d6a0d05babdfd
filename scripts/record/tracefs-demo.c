/* tracefs-demo.c - a small instrumented HTTP/1.1 service and its client, on loopback,
 * for scripts/record-tracefs-sample.sh.
 *
 *   tracefs-demo MARKER_FILE PORT REQUESTS MANIFEST_OUT
 *
 * Two client threads send REQUESTS requests in all over two keep-alive connections, each
 * with a W3C traceparent header carrying a fresh span id.  The server runs a thread
 * per connection; for each request it writes "span:<id> trace:<id> begin" to the trace
 * marker file (a tracefs trace_marker), does real CPU work (a few ms of hashing), writes
 * "span:<id> end", and answers.  So the span id is in the packets (pcap), in the
 * kernel trace (tracefs, clock mono) and the work is in the perf samples of that thread.
 *
 * The manifest records CLOCK_REALTIME - CLOCK_MONOTONIC, measured before and after
 * the run: the tightest of 2000 back-to-back (mono, real, mono) reads, i.e. the one
 * whose two mono reads are closest; offset = real - midpoint of the two.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct run {
    int marker_fd;
    int port;
    int requests_per_client;
    int listen_fd;
    pthread_mutex_t lock;
    uint64_t rng;
};

static int64_t now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The true realtime - monotonic offset, and the uncertainty (half the tightest window). */
static void true_offset(int64_t *offset, int64_t *window)
{
    int64_t best = INT64_MAX;

    for (int i = 0; i < 2000; i++) {
        int64_t m1 = now(CLOCK_MONOTONIC), r = now(CLOCK_REALTIME), m2 = now(CLOCK_MONOTONIC);
        if (m2 - m1 < best) {
            best = m2 - m1;
            *offset = r - (m1 + (m2 - m1) / 2);
        }
    }
    *window = best;
}

static uint64_t next_id(struct run *r)
{
    uint64_t x;

    pthread_mutex_lock(&r->lock);
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    x = r->rng;
    pthread_mutex_unlock(&r->lock);
    return x ? x : 1;
}

static void mark(struct run *r, const char *span, const char *trace, const char *what)
{
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "span:%s%s%s %s", span, trace ? " trace:" : "",
                     trace ? trace : "", what);
    if (write(r->marker_fd, buf, (size_t)n) != n)
        perror("tracefs-demo: write trace_marker");
}

/* Real CPU work that perf can see: a few ms of an FNV-style hash chain. */
static uint64_t __attribute__((noinline)) handle_work(uint64_t seed, int rounds)
{
    uint64_t h = seed ^ 1469598103934665603ull;
    for (int i = 0; i < rounds; i++) {
        h ^= (uint64_t)i;
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static int read_request(int fd, char *buf, size_t cap)
{
    size_t n = 0;

    while (n + 1 < cap) {
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k <= 0)
            return -1;
        n += (size_t)k;
        buf[n] = 0;
        if (strstr(buf, "\r\n\r\n"))
            return (int)n;
    }
    return -1;
}

static void *serve_conn(void *arg)
{
    struct run *r = ((void **)arg)[0];
    int fd = (int)(intptr_t)((void **)arg)[1];
    char req[4096], resp[256], span[17], trace[33];

    free(arg);
    while (read_request(fd, req, sizeof(req)) > 0) {
        /* traceparent: 00-<32 hex trace>-<16 hex span>-<2 hex flags> */
        char *tp = strcasestr(req, "\r\ntraceparent: 00-");
        uint64_t h = 0, seed;
        if (tp) {
            tp += strlen("\r\ntraceparent: 00-");
            memcpy(trace, tp, 32);
            trace[32] = 0;
            memcpy(span, tp + 33, 16);
            span[16] = 0;
            mark(r, span, trace, "begin");
            seed = strtoull(span, NULL, 16);
            h = handle_work(seed, 1500000 + (int)(seed % 7) * 200000);
            mark(r, span, NULL, "end");
        }
        int n = snprintf(resp, sizeof(resp),
                         "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n"
                         "\r\n%016llx\n",
                         (unsigned long long)h);
        if (write(fd, resp, (size_t)n) != n)
            break;
    }
    close(fd);
    return NULL;
}

static void *server(void *arg)
{
    struct run *r = arg;

    for (int i = 0; i < 2; i++) {
        int fd = accept(r->listen_fd, NULL, NULL);
        pthread_t t;
        void **a = malloc(2 * sizeof(void *));
        if (fd < 0 || a == NULL)
            return NULL;
        a[0] = r;
        a[1] = (void *)(intptr_t)fd;
        pthread_create(&t, NULL, serve_conn, a);
        pthread_detach(t);
    }
    return NULL;
}

static void *client(void *arg)
{
    struct run *r = arg;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port)};
    char req[512], resp[512];
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        perror("tracefs-demo: connect");
        return NULL;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (int i = 0; i < r->requests_per_client; i++) {
        uint64_t t1 = next_id(r), t2 = next_id(r), s = next_id(r);
        int n = snprintf(req, sizeof(req),
                         "GET /work/%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                         "traceparent: 00-%016llx%016llx-%016llx-01\r\n\r\n",
                         i, r->port, (unsigned long long)t1, (unsigned long long)t2,
                         (unsigned long long)s);
        if (write(fd, req, (size_t)n) != n || read(fd, resp, sizeof(resp)) <= 0)
            break;
        usleep(3000 + (unsigned)(s % 5000)); /* idle time between requests */
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    struct run r = {.lock = PTHREAD_MUTEX_INITIALIZER, .rng = 0x9e3779b97f4a7c15ull};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int64_t off0, win0, off1, win1;
    pthread_t srv, cl[2];
    int one = 1;
    FILE *m;

    if (argc != 5) {
        fprintf(stderr, "usage: tracefs-demo MARKER_FILE PORT REQUESTS MANIFEST_OUT\n");
        return 2;
    }
    r.port = (int)strtol(argv[2], NULL, 10);
    r.requests_per_client = (int)strtol(argv[3], NULL, 10) / 2;
    r.rng ^= (uint64_t)now(CLOCK_REALTIME);
    if ((r.marker_fd = open(argv[1], O_WRONLY)) < 0) {
        fprintf(stderr, "tracefs-demo: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    r.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(r.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sa.sin_port = htons((uint16_t)r.port);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (bind(r.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(r.listen_fd, 4) < 0) {
        perror("tracefs-demo: bind");
        return 2;
    }
    true_offset(&off0, &win0);
    pthread_create(&srv, NULL, server, &r);
    for (int i = 0; i < 2; i++)
        pthread_create(&cl[i], NULL, client, &r);
    for (int i = 0; i < 2; i++)
        pthread_join(cl[i], NULL);
    pthread_join(srv, NULL);
    usleep(20000); /* let the server threads see the close */
    true_offset(&off1, &win1);
    if ((m = fopen(argv[4], "w")) == NULL) {
        perror(argv[4]);
        return 2;
    }
    fprintf(m,
            "{\"realtime_minus_monotonic_ns_before\": %lld, \"window_ns_before\": %lld,\n"
            " \"realtime_minus_monotonic_ns_after\": %lld, \"window_ns_after\": %lld,\n"
            " \"requests\": %d, \"port\": %d}\n",
            (long long)off0, (long long)win0, (long long)off1, (long long)win1,
            2 * r.requests_per_client, r.port);
    fclose(m);
    return 0;
}

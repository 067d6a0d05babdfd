/* backend.c - the search backend's client (--slow-kind downstream): one blocking
 * HTTP/1.1 request per search on a connection of its own, as a service calls a
 * dependency, carrying the trace on (B3 headers: the backend's span is a child of the
 * search's).  The backend is another program (scripts/record/backend.py); slow mode
 * asks it to be slow, so the search gets slow by waiting on it, off CPU.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "demo.h"

#define NOINLINE __attribute__((noinline))

/* Read the whole answer (the backend closes); its status, or -1. */
static NOINLINE int backend_read(int fd)
{
    char buf[4096];
    size_t have = 0;
    ssize_t n;
    int status = -1;

    while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
        have += (size_t)n;
        if (have == sizeof(buf) - 1) { /* the status line is read: keep draining */
            buf[have] = 0;
            if (status < 0 && strncmp(buf, "HTTP/1.", 7) == 0)
                status = (int)strtol(buf + 9, NULL, 10);
            have = 0;
        }
    }
    buf[have] = 0;
    if (status < 0 && have > 12 && strncmp(buf, "HTTP/1.", 7) == 0)
        status = (int)strtol(buf + 9, NULL, 10);
    return status;
}

int demo_backend_call(int port, const char *trace_id, uint64_t parent_span, int slow)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    uint64_t child = parent_span * 0x9e3779b97f4a7c15ULL ^ 0x5bd1e995ULL;
    char req[512], trace[33];
    int fd, n, status;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (trace_id && strlen(trace_id) == 32)
        snprintf(trace, sizeof(trace), "%s", trace_id);
    else
        snprintf(trace, sizeof(trace), "%016llx%016llx", (unsigned long long)parent_span,
                 (unsigned long long)child);
    n = snprintf(req, sizeof(req),
                 "GET /api/backend HTTP/1.1\r\nX-Demo-Slow: %d\r\nHost: 127.0.0.1:%d\r\n"
                 "X-B3-TraceId: %s\r\nX-B3-SpanId: %016llx\r\nX-B3-ParentSpanId: %016llx\r\n"
                 "X-B3-Sampled: 1\r\nConnection: close\r\n\r\n",
                 slow, port, trace, (unsigned long long)(child ? child : 1),
                 (unsigned long long)parent_span);
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || n <= 0 ||
        write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    status = backend_read(fd);
    close(fd);
    return status;
}

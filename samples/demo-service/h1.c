/* h1.c - HTTP/1.1 for the demo service (RFC 9112): keep-alive requests with an
 * optional Content-Length body, one at a time per connection.
 *
 *   GET /api/search?q=x HTTP/1.1\r\n
 *   traceparent: 00-<trace>-<span>-01\r\n      (any header sf_tracectx reads)
 *   \r\n
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "demo.h"

#define H1_MAX 16384

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static const char *reason(int status)
{
    return status == 200   ? "OK"
           : status == 404 ? "Not Found"
           : status == 400 ? "Bad Request"
                           : "Internal Server Error";
}

/* Parse the head in buf[0..n) (NUL-terminated, ends with CRLFCRLF).  Returns the
 * Content-Length (0 when absent), -1 on a bad request line; *close_after set for
 * "Connection: close" or HTTP/1.0. */
static long parse_head(char *buf, struct demo_req *rq, int *close_after)
{
    char *line = buf, *eol, *sp1, *sp2;
    long clen = 0;

    if ((eol = strstr(line, "\r\n")) == NULL)
        return -1;
    *eol = 0;
    sp1 = strchr(line, ' ');
    sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || (size_t)(sp1 - line) >= sizeof(rq->method) ||
        (size_t)(sp2 - sp1 - 1) >= sizeof(rq->path))
        return -1;
    memcpy(rq->method, line, (size_t)(sp1 - line));
    rq->method[sp1 - line] = 0;
    memcpy(rq->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
    rq->path[sp2 - sp1 - 1] = 0;
    *close_after = strcmp(sp2 + 1, "HTTP/1.0") == 0;
    sf_tracectx_set_init(&rq->tc);
    for (line = eol + 2; (eol = strstr(line, "\r\n")) != NULL && eol != line; line = eol + 2) {
        char *colon = memchr(line, ':', (size_t)(eol - line)), *v;
        if (colon == NULL)
            continue;
        for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
            ;
        if ((size_t)(colon - line) == 14 && strncasecmp(line, "content-length", 14) == 0)
            clen = strtol(v, NULL, 10);
        else if ((size_t)(colon - line) == 10 && strncasecmp(line, "connection", 10) == 0)
            *close_after |= strncasecmp(v, "close", 5) == 0;
        else if (sf_tracectx_header_id(line, (size_t)(colon - line)) >= 0)
            sf_tracectx_set_add(&rq->tc, line, (size_t)(colon - line), (const uint8_t *)v,
                                (size_t)(eol - v));
        else /* for the sampler's header rule */
            sf_tracectx_set_keep(&rq->tc, line, (size_t)(colon - line), (const uint8_t *)v,
                                 (size_t)(eol - v));
    }
    sf_tracectx_set_finish(&rq->tc);
    return clen;
}

static int respond(int fd, const struct demo_resp *rs, int close_after)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n%s\r\n",
                     rs->status, reason(rs->status), rs->len,
                     close_after ? "Connection: close\r\n" : "");
    if (write_all(fd, head, (size_t)n) < 0)
        return -1;
    return write_all(fd, rs->body, rs->len);
}

void demo_serve_h1(struct demo_ctx *c, int fd, const char *pre, size_t npre)
{
    char *buf = malloc(H1_MAX + 1);
    struct demo_req *rq = malloc(sizeof(*rq));
    struct demo_resp rs;
    size_t n = npre;

    if (buf == NULL || rq == NULL)
        goto out;
    memcpy(buf, pre, npre);
    for (;;) {
        char *end;
        long clen;
        int close_after = 0;
        size_t head, need;

        buf[n] = 0;
        while ((end = strstr(buf, "\r\n\r\n")) == NULL) {
            ssize_t k;
            if (n >= H1_MAX || (k = read(fd, buf + n, H1_MAX - n)) <= 0)
                goto out;
            n += (size_t)k;
            buf[n] = 0;
        }
        head = (size_t)(end - buf) + 4;
        memset(rq, 0, sizeof(*rq));
        rq->proto = "h1";
        if ((clen = parse_head(buf, rq, &close_after)) < 0 || clen > H1_MAX)
            goto out;
        /* the body is read and ignored: no endpoint needs it */
        need = head + (size_t)clen;
        while (n < need) {
            ssize_t k = read(fd, buf + n, H1_MAX - n);
            if (k <= 0)
                goto out;
            n += (size_t)k;
        }
        demo_handle(c, rq, &rs);
        if (respond(fd, &rs, close_after) < 0 || close_after)
            goto out;
        memmove(buf, buf + need, n - need);
        n -= need;
    }
out:
    free(rq);
    free(buf);
    close(fd);
}

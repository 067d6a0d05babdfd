/* grpc.c - gRPC facts from HTTP/2 header fields (grpc/grpc doc/PROTOCOL-HTTP2.md).
 *
 *   Request:  :method POST, :path /package.Service/Method, content-type
 *             application/grpc[+proto|+json|;...], grpc-timeout 1*8DIGIT unit
 *             (H hours, M minutes, S seconds, m ms, u us, n ns), metadata
 *   Response: :status 200, content-type, ... DATA ..., trailers: grpc-status (decimal),
 *             grpc-message (percent-encoded UTF-8); or a single "trailers-only"
 *             HEADERS carrying :status and grpc-status together.
 *   DATA:     +---------------+-------------------------------+-----------+
 *             | compressed(8) | length (32, big-endian)       | message   |
 *             +---------------+-------------------------------+-----------+
 */
#include "grpc.h"

#include <string.h>
#include <strings.h>

#include "sf_hex.h"
#include "sf_rd.h"

int grpc_is_content_type(const uint8_t *v, size_t n)
{
    static const char ct[] = "application/grpc";
    size_t k = sizeof(ct) - 1;

    if (n < k || strncasecmp((const char *)v, ct, k) != 0)
        return 0;
    return n == k || v[k] == '+' || v[k] == ';';
}

int grpc_split_path(const char *path, size_t n, const char **svc, size_t *svclen, const char **meth,
                    size_t *methlen)
{
    const char *slash;

    if (n < 4 || path[0] != '/')
        return -1;
    slash = memchr(path + 1, '/', n - 1);
    if (slash == NULL || slash == path + 1 || slash == path + n - 1)
        return -1;
    if (memchr(slash + 1, '/', (size_t)(path + n - slash - 1)) != NULL ||
        memchr(path, '?', n) != NULL)
        return -1;
    *svc = path + 1;
    *svclen = (size_t)(slash - path - 1);
    *meth = slash + 1;
    *methlen = (size_t)(path + n - slash - 1);
    return 0;
}

int64_t grpc_parse_timeout(const uint8_t *v, size_t n)
{
    int64_t val = 0, mul;

    if (n < 2 || n > 9)
        return -1;
    for (size_t i = 0; i + 1 < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        val = val * 10 + (v[i] - '0');
    }
    switch (v[n - 1]) {
    case 'H':
        mul = INT64_C(3600000000000);
        break;
    case 'M':
        mul = INT64_C(60000000000);
        break;
    case 'S':
        mul = INT64_C(1000000000);
        break;
    case 'm':
        mul = 1000000;
        break;
    case 'u':
        mul = 1000;
        break;
    case 'n':
        mul = 1;
        break;
    default:
        return -1;
    }
    /* 8 digits of hours overflow int64 nanoseconds: saturate. */
    if (val > INT64_MAX / mul)
        return INT64_MAX;
    return val * mul;
}

int grpc_parse_status(const uint8_t *v, size_t n)
{
    long s = 0;

    if (n == 0 || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        s = s * 10 + (v[i] - '0');
    }
    return s > 0x7fffffffL ? -1 : (int)s;
}

size_t grpc_percent_decode(char *out, size_t outsz, const uint8_t *v, size_t n)
{
    size_t o = 0;

    if (outsz == 0)
        return 0;
    for (size_t i = 0; i < n && o + 1 < outsz; i++) {
        int hi, lo;

        if (v[i] == '%' && i + 2 < n && (hi = sf_hex_digit(v[i + 1])) >= 0 &&
            (lo = sf_hex_digit(v[i + 2])) >= 0) {
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = (char)v[i];
        }
    }
    out[o] = 0;
    return o;
}

void grpc_msgs_feed(struct grpc_msgs *m, const uint8_t *p, size_t n)
{
    struct sf_rd rd;

    sf_rd_init(&rd, p, n, 0);
    while (sf_rd_left(&rd) > 0) {
        const uint8_t *h = m->hdr;

        if (m->need > 0) {
            size_t k = sf_rd_left(&rd) < m->need ? sf_rd_left(&rd) : m->need;

            sf_rd_skip(&rd, k);
            m->need -= (uint32_t)k;
            continue;
        }
        if (m->have == 0 && sf_rd_left(&rd) >= sizeof(m->hdr)) /* the whole prefix is here */
            h = sf_rd_bytes(&rd, sizeof(m->hdr));
        else if ((m->have = (uint8_t)sf_rd_fill(&rd, m->hdr, m->have, sizeof(m->hdr))) <
                 sizeof(m->hdr))
            break;
        m->count++;
        m->need = sf_rd_get_u32be(h, 1); /* after the compressed flag */
        m->have = 0;
    }
}

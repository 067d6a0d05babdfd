/* grpc.h - gRPC over HTTP/2 facts for spans (grpc/grpc doc/PROTOCOL-HTTP2.md). */
#ifndef GRPC_H
#define GRPC_H

#include <stddef.h>
#include <stdint.h>

/* 1 if a content-type value marks gRPC ("application/grpc", "application/grpc+proto",
 * "application/grpc;..."), else 0. */
int grpc_is_content_type(const uint8_t *v, size_t n);

/* Split a ":path" of the form "/package.Service/Method" into service and method
 * (pointers into path).  Returns 0, or -1 when the path has not that form. */
int grpc_split_path(const char *path, size_t n, const char **svc, size_t *svclen, const char **meth,
                    size_t *methlen);

/* grpc-timeout: 1 to 8 ASCII digits and a unit H M S m u n.  Returns the value in
 * nanoseconds (saturated at INT64_MAX), or -1 when malformed. */
int64_t grpc_parse_timeout(const uint8_t *v, size_t n);

/* grpc-status: a decimal integer 0..(2^31-1).  Returns it, or -1 when malformed. */
int grpc_parse_status(const uint8_t *v, size_t n);

/* Percent-decode a grpc-message value into out (NUL-terminated, truncated to
 * outsz - 1 bytes); malformed escapes are copied literally, as the spec asks.
 * Returns the length written. */
size_t grpc_percent_decode(char *out, size_t outsz, const uint8_t *v, size_t n);

/* Length-prefixed message framing (1-byte compressed flag, 4-byte big-endian
 * length, message) counted across DATA frames of one direction. */
struct grpc_msgs {
    uint64_t count; /* messages whose 5-byte prefix was seen */
    uint32_t need;  /* message bytes still to skip */
    uint8_t hdr[5];
    uint8_t have; /* prefix bytes collected */
};

/* Feed DATA payload bytes of one direction. */
void grpc_msgs_feed(struct grpc_msgs *m, const uint8_t *p, size_t n);

#endif

/* h2.h - HTTP/2 helpers shared beyond h2.c (tests, tcp.c detection). */
#ifndef H2_H
#define H2_H

#include <stddef.h>
#include <stdint.h>

/* Does p[0..n) start with a plausible HTTP/2 frame header (known type, flags and
 * stream id that fit the type, sane length), followed by another one when the
 * bytes reach that far?  1 yes, 0 no, -1 need more bytes.  For finding frame
 * boundaries mid-connection (after a gap, or a capture without the preface). */
int h2_plausible_frames(const uint8_t *p, size_t n, uint32_t max_frame);

/* Name of an HTTP/2 error code (RFC 9113 section 7), "UNKNOWN" otherwise. */
const char *h2_error_name(uint32_t code);

#endif

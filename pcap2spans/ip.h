/* ip.h - IPv4 and IPv6 (ip.c), above TCP. */
#ifndef P2S_IP_H
#define P2S_IP_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* One IPv4 or IPv6 packet (version from its first nibble); caplen may be less than the
 * IP length (snap length), which is counted as truncated. */
void ip_decode(struct p2s_ctx *ctx, const uint8_t *p, size_t caplen);

#endif

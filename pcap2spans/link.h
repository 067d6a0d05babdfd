/* link.h - link layers (link.c): Ethernet, 802.1Q, SLL, SLL2, NULL/LOOP, raw IP, PPP,
 * PPP in HDLC framing, Cisco HDLC, ARCnet (BSD and Linux). */
#ifndef P2S_LINK_H
#define P2S_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* One captured frame of link type `dlt` (DLT_* / LINKTYPE_* value). */
void link_decode(struct p2s_ctx *ctx, int dlt, const uint8_t *p, size_t caplen, size_t len);
/* 1 if link_decode understands this link type. */
int link_supported(int dlt);
/* The i-th link type link_decode understands (its DLT value; *name, if name is not NULL,
 * the name its messages use), or -1 when i is past the last. */
int link_type_at(size_t i, const char **name);

#endif

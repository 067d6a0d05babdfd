/* pcap.h - capture files (pcap.c), the top of the packet path. */
#ifndef P2S_PCAP_H
#define P2S_PCAP_H

#include "ctx.h"

/* Read one capture file ("-" = stdin) through libpcap into the layers below, with its
 * own sources row.  Returns 0, or SF_E_TRUNC / SF_E_MALFORMED (damaged capture: what
 * came before is kept), SF_E_IO (unreadable), SF_E_DB, SF_E_DUP (already ingested);
 * errors are reported before returning. */
int p2s_pcap_read(struct p2s_ctx *ctx, const char *path);

#endif

/* p2s.h - the whole of pcap2spans, for its driver (main.c, par.c) and the tests: a run context
 * with its flow table.
 *
 * Layers (docs/architecture.md), each including only what is below it:
 *
 *   main.c (CLI, -j workers)
 *     pcap.c (libpcap offline) -> link.c -> ip.c -> tcp.c (flows, reassembly, detection)
 *       -> tls.c (records, decryption) -> h1.c -> h2.c -> h2_stream.c -> hpack.c, grpc.c
 *         (the parsers see a connection through conn.h only)
 *   ctx.c  the run context: limits, counters, notes, errors, the writer
 *   out.c  the writers: out_db.c (SQLite via lib/sf_db_net.c), out_ndjson.c (lib/sf_json)
 *
 * Application parsers never see packets: tcp.c hands them the new in-order bytes of
 * each segment with that segment's timestamp, reports holes as gaps, and calls close
 * once.  pcap2spans checks the include graph for cycles (tests/scripts/t_p2s_layers.sh).
 */
#ifndef P2S_H
#define P2S_H

#include "conn.h"
#include "ctx.h"
#include "h1.h"
#include "h2.h"
#include "ip.h"
#include "link.h"
#include "out.h"
#include "pcap.h"
#include "tcp.h"
#include "tls.h"

/* A context with default limits, an empty flow table, no writer.  Returns 0 or
 * SF_E_NOMEM.  p2s_ctx_free closes every open connection (as "eof") and frees
 * everything but the writer and the TLS secrets. */
int p2s_ctx_init(struct p2s_ctx *ctx);
void p2s_ctx_free(struct p2s_ctx *ctx);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int pcap2spans_main(int argc, char **argv);

#endif

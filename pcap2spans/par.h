/* par.h - pcap2spans -j N (par.c): N worker threads read the inputs, one writer (the
 * calling thread) writes their records in input order. */
#ifndef P2S_PAR_H
#define P2S_PAR_H

#include "ctx.h"

#define P2S_MAX_JOBS 64

/* Read paths[0..n) with `jobs` workers, each with a context configured as ctx (limits,
 * --strict, the TLS secrets, read-only), into ctx's writer; their counters and notes
 * are added to ctx.  Returns the exit status so far, as the sequential loop does:
 * SF_EXIT_USAGE when an input was unreadable, damaged or failed the database. */
int p2s_par_read(struct p2s_ctx *ctx, char **paths, int n, int jobs);

#endif

/* rundb.c - the --db mode. */
#include <stdio.h>

#include "run.h"
#include "sf_err.h"

int run_db(const struct inflect_ctx *ctx)
{
    (void)ctx;
    fprintf(stderr, "inflect: --db: not yet\n");
    return SF_EXIT_USAGE;
}

/* ingest.c - spanfold ingest (being built; see spanfold.h). */
#include <stdio.h>

#include "sf_err.h"
#include "spanfold.h"

int sf_cmd_ingest(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "spanfold ingest: not built yet\n");
    return SF_EXIT_USAGE;
}

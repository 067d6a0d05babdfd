/* gate.c - spanfold gate (being built; see spanfold.h). */
#include <stdio.h>
#include <string.h>

#include "sf_err.h"
#include "spanfold.h"

int sf_cmd_gate(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        puts("usage: spanfold gate (being built)");
        return SF_EXIT_OK;
    }
    fprintf(stderr, "spanfold gate: not built yet\n");
    return SF_EXIT_USAGE;
}

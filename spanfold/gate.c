/* gate.c - spanfold gate (being built; see spanfold.h). */
#include <stdio.h>

#include "sf_err.h"
#include "spanfold.h"

int sf_cmd_gate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "spanfold gate: not built yet\n");
    return SF_EXIT_USAGE;
}

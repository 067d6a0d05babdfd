/* stacks.c - spanfold stacks (being built; see spanfold.h). */
#include <stdio.h>

#include "sf_err.h"
#include "spanfold.h"

int sf_cmd_stacks(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "spanfold stacks: not built yet\n");
    return SF_EXIT_USAGE;
}

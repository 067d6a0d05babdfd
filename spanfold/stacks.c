/* stacks.c - spanfold stacks (being built; see spanfold.h). */
#include <stdio.h>
#include <string.h>

#include "sf_err.h"
#include "spanfold.h"

int sf_cmd_stacks(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        puts("usage: spanfold stacks (being built)");
        return SF_EXIT_OK;
    }
    fprintf(stderr, "spanfold stacks: not built yet\n");
    return SF_EXIT_USAGE;
}

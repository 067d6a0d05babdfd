/* run.c - calling a linked-in tool's command line from the front end. */
#include <getopt.h>
#include <stddef.h>

#include "spanfold.h"

int sf_run_tool(int (*tool_main)(int, char **), char **argv)
{
    int argc = 0;

    while (argv[argc] != NULL)
        argc++;
    optind = 0; /* glibc: 0 re-initialises getopt, including its internal state */
    opterr = 1;
    return tool_main(argc, argv);
}

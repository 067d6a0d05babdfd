/* run.c - calling a linked-in tool's command line from the front end. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "sf_err.h"
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

int sf_cmd_usage_error(const char *cmd, const char *msg, const char *arg)
{
    fprintf(stderr, "spanfold %s: %s%s%s\nTry 'spanfold %s --help'.\n", cmd, msg, arg ? ": " : "",
            arg ? arg : "", cmd);
    return SF_EXIT_USAGE;
}

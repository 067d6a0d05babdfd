/* main.c - spanfold: the incident workflow as one command, in the git style.
 *
 *   spanfold ingest --db FILE PATH...      every artefact, recognised by content
 *   spanfold stacks --db FILE [SELECTION]  folded stacks / flame graph of chosen spans
 *   spanfold report --db FILE --out DIR    one self-contained report.html + findings.json
 *   spanfold gate ...                      CI gates over a database or two profiles
 *   spanfold push --clickhouse URL --db F  the sources into ClickHouse, once each
 *   spanfold TOOL ...                      any single tool, linked in (pcap2spans, ...)
 *
 * cmds[] is the one list of commands: --help, `spanfold help`, the man page's sections
 * (the Makefile asks `spanfold --list-commands`) and the completion are all made from it.
 */
#include <stdio.h>
#include <string.h>

#include "../inflect/run.h"
#include "ch_series.h"
#include "sf_err.h"
#include "sf_opt.h"
#include "spanfold.h"

struct cmd {
    const char *name;
    int (*fn)(int, char **);
    int tool; /* 1: a single tool's main, linked in */
    const char *summary;
};

static const struct cmd cmds[] = {
    {"ingest", sf_cmd_ingest, 0,
     "read captures, profiles, key logs and trace logs into a database"},
    {"stacks", sf_cmd_stacks, 0, "folded stacks or a flame graph of exactly the selected spans"},
    {"report", sf_cmd_report, 0, "one self-contained HTML page and findings.json for an incident"},
    {"gate", sf_cmd_gate, 0, "evaluate CI gates over a database or two folded profiles"},
    {"push", sf_cmd_push, 0, "push a database's sources into ClickHouse (docs/scale.md)"},
    {"pcap2spans", pcap2spans_main, 1, "packet captures to spans"},
    {"perf-fold", perf_fold_main, 1, "perf script to folded stacks; diff"},
    {"tracefs2spans", tracefs2spans_main, 1, "tracefs text to span markers, clock fits"},
    {"flamegraph", flamegraph_main, 1, "folded stacks to an SVG flame graph"},
    {"inflect", inflect_main, 1, "change points, sampling drift, clock drift"},
    {"export", spanfold_export_main, 1, "OTLP, Zipkin, Chrome trace, speedscope, pprof"},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
    size_t i;

    fputs("usage: spanfold COMMAND [ARGS]\n"
          "       spanfold help [COMMAND]    (or: spanfold COMMAND --help)\n"
          "\n"
          "The incident workflow:\n",
          f);
    for (i = 0; i < NCMDS; i++) {
        if (i > 0 && cmds[i].tool && !cmds[i - 1].tool)
            fputs("\nThe single tools, linked in (each also a program of its own):\n", f);
        fprintf(f, "  %-14s %s\n", cmds[i].name, cmds[i].summary);
    }
    fputs("\nTypical use:\n"
          "  spanfold ingest --db incident.db capture.pcap perf.txt markers.txt\n"
          "  spanfold report --db incident.db --out report/\n"
          "  spanfold stacks --db incident.db --where 'duration > p95' -o slow.svg\n"
          "\nExit: 0 ok, 1 a gate failed or input records were skipped, 2 usage or input error.\n",
          f);
}

static const struct cmd *find(const char *name)
{
    size_t i;

    for (i = 0; i < NCMDS; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    const struct cmd *c;

    inflect_ch_windows = ch_series_inflect; /* inflect --clickhouse, in-process */
    if (argc < 2) {
        usage(stderr);
        return SF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return SF_EXIT_OK;
    }
    if (strcmp(argv[1], "--list-commands") == 0) {
        /* hidden: the workflow commands, one a line, for the man page (Makefile) */
        size_t i;

        for (i = 0; i < NCMDS; i++)
            if (!cmds[i].tool)
                printf("%s\n", cmds[i].name);
        return SF_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        sf_opt_print_version(stdout, "spanfold");
        return SF_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        char *hargv[] = {NULL, "--help", NULL};

        if (argc < 3) {
            usage(stdout);
            return SF_EXIT_OK;
        }
        if ((c = find(argv[2])) == NULL) {
            fprintf(stderr, "spanfold: '%s' is not a spanfold command (see 'spanfold help')\n",
                    argv[2]);
            return SF_EXIT_USAGE;
        }
        hargv[0] = (char *)c->name;
        return sf_run_tool(c->fn, hargv);
    }
    if ((c = find(argv[1])) == NULL) {
        fprintf(stderr, "spanfold: '%s' is not a spanfold command (see 'spanfold help')\n",
                argv[1]);
        return SF_EXIT_USAGE;
    }
    argv[1] = (char *)c->name;
    return sf_run_tool(c->fn, argv + 1);
}

/* spanfold.h - the front end's commands.
 *
 * Each command is a function with a command line of its own, as the tools are:
 * argv[0] is the command's name ("stacks"), options follow.  It returns the exit
 * status (0 ok, 1 a gate failed or input records were skipped, 2 usage or input error).
 */
#ifndef SPANFOLD_H
#define SPANFOLD_H

int sf_cmd_ingest(int argc, char **argv); /* ingest.c */
int sf_cmd_stacks(int argc, char **argv); /* stacks.c */
int sf_cmd_report(int argc, char **argv); /* report.c */
int sf_cmd_gate(int argc, char **argv);   /* gate.c */
int sf_cmd_push(int argc, char **argv);   /* push.c */

/* The tools, linked in: `spanfold pcap2spans ...` is `pcap2spans ...`. */
int pcap2spans_main(int argc, char **argv);
int perf_fold_main(int argc, char **argv);
int tracefs2spans_main(int argc, char **argv);
int flamegraph_main(int argc, char **argv);
int inflect_main(int argc, char **argv);
int spanfold_export_main(int argc, char **argv);
int diff_main(int argc, char **argv); /* perf-fold diff (perf-fold/diff.c), for spanfold gate */

/* A usage error of command cmd ("stacks"): "spanfold CMD: MSG[: ARG]" and the hint to
 * its --help on stderr.  Returns the exit status 2 (run.c). */
int sf_cmd_usage_error(const char *cmd, const char *msg, const char *arg);

/* Run a tool's main in-process with argv (NULL-terminated); getopt is reset first. */
int sf_run_tool(int (*tool_main)(int, char **), char **argv);

#endif

/* sf_opt.h - command-line helpers shared by every tool.
 *
 * Tools parse their options with getopt_long; these helpers give them one
 * behaviour for --version, for number and duration arguments, and for deciding
 * whether to show progress.
 */
#ifndef SF_OPT_H
#define SF_OPT_H

#include <stdint.h>
#include <stdio.h>

/* The version string every tool prints ("0.1.0-<git>" style). */
const char *sf_version(void);

/* Print "TOOL (spanfold) VERSION" and the linked library versions line to f. */
void sf_opt_print_version(FILE *f, const char *tool);

/* Parse a whole decimal string into *v within [min, max].  Returns 0 or
 * SF_E_USAGE (empty, trailing junk, out of range).  Replaces atoi/sscanf. */
int sf_opt_i64(const char *s, int64_t min, int64_t max, int64_t *v);

/* Parse a whole floating-point string into *v.  Returns 0 or SF_E_USAGE. */
int sf_opt_double(const char *s, double *v);

/* Parse a duration ("10s", "250ms", "1.5m", "30us", "100ns", "2h"; a bare number is
 * seconds) into nanoseconds.  Returns 0 or SF_E_USAGE. */
int sf_opt_duration_ns(const char *s, int64_t *ns);

/* 1 when progress should be shown: stderr is a terminal, CI is not set and quiet
 * is 0. */
int sf_opt_want_progress(int quiet);

#endif

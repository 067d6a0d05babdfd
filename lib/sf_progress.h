/* sf_progress.h - progress line for long runs.
 *
 * Long runs show progress on stderr when stderr is a terminal (done of
 * total, rate, time left) and stay silent in pipes, in CI and with --quiet.  The
 * tool decides (sf_opt_want_progress) and passes the stream; this module only
 * formats and rate-limits (at most ~4 updates a second).
 */
#ifndef SF_PROGRESS_H
#define SF_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct sf_progress {
    FILE *out;         /* NULL = disabled */
    const char *label; /* e.g. file name */
    const char *unit;  /* "B" for bytes (shown as MB), or e.g. "packets" */
    uint64_t total;    /* 0 = unknown */
    double t0, t_last; /* monotonic seconds */
    int shown;         /* a line is on screen */
};

/* Start; out NULL disables every later call. */
void sf_progress_start(struct sf_progress *p, FILE *out, const char *label, const char *unit,
                       uint64_t total);
/* Report `done` units so far (cheap: checks the clock only every 64k calls' worth
 * of work is up to the caller; it reads CLOCK_MONOTONIC each call). */
void sf_progress_update(struct sf_progress *p, uint64_t done);
/* Erase the progress line. */
void sf_progress_end(struct sf_progress *p);

#endif

/* sf_db_perf.h - perf samples and interned folded stacks in the spanfold database.
 *
 * Writers of `stacks` and `samples` (schema.sql).  A stack is interned once by its
 * text ("comm;root;...;leaf"): sf_db_perf_stack() looks it up and inserts it when
 * new; callers keep the returned id in their own table of distinct stacks so that
 * each distinct stack costs one lookup per run.  Rows go through sf_db's batches.
 */
#ifndef SF_DB_PERF_H
#define SF_DB_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "sf_db.h"

/* One sample; integer fields SF_DB_NULL when unknown, strings NULL when unknown. */
struct sf_perf_sample {
    int64_t ts_ns; /* in the source's clock */
    int64_t pid, tid, cpu;
    const char *comm;
    size_t comm_len;
    const char *event;
    size_t event_len;
    int64_t period; /* what the sample weighs in the fold */
    int64_t stack_id;
    const char *span_id; /* attributed span (16 hex) or NULL */
};

/* The id of stack `frames` (n bytes), inserted if new.  Returns 0 with *id, or
 * SF_E_DB with err filled. */
int sf_db_perf_stack(struct sf_db *db, const char *frames, size_t n, int64_t *id,
                     struct sf_err *err);

/* Insert one sample of source source_id (batched).  Returns 0 or SF_E_DB. */
int sf_db_perf_sample(struct sf_db *db, int64_t source_id, const struct sf_perf_sample *s,
                      struct sf_err *err);

/* One off-CPU interval (the offcpu table); integers SF_DB_NULL, strings NULL when
 * unknown; stack ids 0 when unknown. */
struct sf_offcpu {
    int64_t ts_ns, end_ns;
    const char *end_rule; /* "switch-in" or "next-event" */
    int64_t pid, tid;
    const char *comm, *state, *reason, *frame;
    int64_t stack_id, waker_tid, waker_stack_id;
};

/* The offcpu.reason of an interval (one rule for every writer: perf-fold's sched_switch
 * records, tracefs2spans' spantrace_offcpu lines) into out (n bytes, NUL-terminated,
 * "" when none): "preempted" when state (prev_state as the kernel prints it; NULL when
 * unknown) starts with R, the thread left runnable; else the kernel function that
 * blocked, the first frame of stack ("comm;root;...;leaf", len bytes) from the leaf
 * that is neither the tracepoint's nor the scheduler's own (__schedule, schedule,
 * schedule_timeout, ...: every name that starts so), without its +0x offset.  The comm
 * is never a reason. */
void sf_offcpu_reason(const char *state, const char *stack, size_t len, char *out, size_t n);

/* Whether a file (a path or its base name, n bytes) is the C runtime's (libc, libpthread,
 * ld-linux, libstdc++, libgcc_s, libm, ld-musl): offcpu.frame, the program's innermost own
 * frame, is the first from the leaf in no such file (one rule for perf-fold and spantrace). */
int sf_offcpu_runtime_file(const char *file, size_t n);

/* Insert one off-CPU interval of source source_id (batched).  Returns 0 or SF_E_DB. */
int sf_db_perf_offcpu(struct sf_db *db, int64_t source_id, const struct sf_offcpu *o,
                      struct sf_err *err);

/* Record that source source_id held `records` records of event (n bytes), a
 * tracepoint or a sampling event, and whether they went into samples (stored).
 * Once per event and source.  Returns 0 or SF_E_DB. */
int sf_db_perf_event(struct sf_db *db, int64_t source_id, const char *event, size_t n,
                     int tracepoint, uint64_t records, int stored, struct sf_err *err);

#endif

/* sf_db_trace.h - writers for the tracefs side of the database, and the one rule
 * that attributes perf samples to span intervals.
 *
 * Tables: span_events, losses, span_intervals, clock_fits (lib/schema.sql), and the
 * UPDATE of samples.span_id and offcpu.span_id (an off-CPU interval is attributed by the
 * moment its thread left the CPU, as a sample is by its time stamp).  Rows go through sf_db's
 * batches (sf_db_exec_stmt). tracefs2spans and perf-fold --db both call sf_db_attribute_samples()
 * after they have written their rows, so the attribution is the same whichever ran first.
 */
#ifndef SF_DB_TRACE_H
#define SF_DB_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "sf_db.h"

/* One span_events row.  Integers use SF_DB_NULL for unknown; strings NULL. */
struct sf_trace_event {
    int64_t ts_ns;
    int64_t cpu, pid, tid;
    const char *comm; /* comm_len bytes, need not be NUL-terminated */
    size_t comm_len;
    const char *kind;     /* begin, end, decision, mark, raw */
    const char *span_id;  /* 16 hex, NUL-terminated, or NULL */
    const char *trace_id; /* 32 hex, NUL-terminated, or NULL */
    int64_t decision;     /* 0, 1 or SF_DB_NULL */
    const char *message;  /* message_len bytes */
    size_t message_len;
    uint64_t line;      /* 1-based line in the source, 0 unknown */
    const char *source; /* NULL (marker) or "socket": made from socket events */
};

/* Insert one span event.  Returns 0 or SF_E_DB. */
int sf_db_trace_event(struct sf_db *db, int64_t source_id, const struct sf_trace_event *ev,
                      struct sf_err *err);

/* Insert one losses row: cpu SF_DB_NULL for the overwritten total of the whole buffer,
 * events SF_DB_NULL when the kernel did not say how many, ts_ns SF_DB_NULL unknown.
 * Returns 0 or SF_E_DB. */
int sf_db_trace_loss(struct sf_db *db, int64_t source_id, int64_t cpu, int64_t ts_ns,
                     int64_t events, uint64_t line, struct sf_err *err);

/* One span_intervals row. */
struct sf_trace_interval {
    const char *span_id;  /* 16 hex */
    const char *trace_id; /* 32 hex or NULL */
    int64_t pid, tid;     /* pid SF_DB_NULL when unknown */
    int64_t start_ns, end_ns;
    int depth;
    int64_t decision;     /* 0, 1 or SF_DB_NULL */
    const char *end_rule; /* end-marker, next-marker, parent-end, eof, socket */
    const char *source;   /* NULL (marker) or "socket": time the span owns alone */
};

/* Insert one span interval.  Returns 0 or SF_E_DB. */
int sf_db_trace_interval(struct sf_db *db, int64_t source_id, const struct sf_trace_interval *iv,
                         struct sf_err *err);

/* One shared_intervals row: [start_ns, end_ns] of thread tid is claimed by n spans,
 * span_ids their ids ','-separated.  Returns 0 or SF_E_DB. */
int sf_db_trace_shared(struct sf_db *db, int64_t source_id, int64_t pid, int64_t tid,
                       int64_t start_ns, int64_t end_ns, int64_t n, const char *span_ids,
                       struct sf_err *err);

/* Delete what an earlier join of socket events made for source_id (span_events and
 * span_intervals with source 'socket', shared_intervals), before a new one.
 * Returns 0 or SF_E_DB. */
int sf_db_trace_clear_socket(struct sf_db *db, int64_t source_id, struct sf_err *err);

/* One clock_fits row: t_to = t_from + offset_ns + skew_ppm*1e-6*(t_from - ref_ns), for
 * t_from in [valid_from_ns, valid_to_ns] (SF_DB_NULL = unbounded). */
struct sf_clock_fit_row {
    const char *from_clock, *to_clock;
    int64_t from_source, to_source; /* SF_DB_NULL when not tied to one source */
    int64_t offset_ns;
    double skew_ppm;
    int64_t ref_ns;
    int64_t valid_from_ns, valid_to_ns;
    int64_t points, residual_ns, residual_max_ns; /* residuals SF_DB_NULL when unknown */
    const char *method;                           /* e.g. theil-sen+trim+lower-envelope, manual */
};

/* Delete the clock_fits rows whose from_source is source_id (before writing a new
 * fit for it).  Returns 0 or SF_E_DB. */
int sf_db_trace_clear_fits(struct sf_db *db, int64_t source_id, struct sf_err *err);

/* Insert one clock fit; *id gets its rowid when non-NULL.  Returns 0 or SF_E_DB. */
int sf_db_trace_clock_fit(struct sf_db *db, const struct sf_clock_fit_row *f, int64_t *id,
                          struct sf_err *err);

struct sf_attr_stats {
    uint64_t samples;    /* samples visited (with tid and ts_ns) */
    uint64_t attributed; /* of them, inside some span interval */
    uint64_t changed;    /* rows whose span_id was written */
    uint64_t unmapped;   /* (perf source, tracefs source) pairs with no clock relation */
};

/* Attribute every perf sample to a span: samples.span_id = the span of the innermost
 * span interval (largest depth, then latest start) on the sample's thread
 * (samples.tid = span_intervals.tid) whose [start_ns, end_ns] holds the sample's time,
 * else NULL.  Interval times are first put into the sample source's clock:
 * the same domain (sources.clock) or either one 'unknown' -> as they are; otherwise
 * through clock_fits (from the interval clock to the sample clock, the fits of that
 * interval source preferred; or the inverse of a fit the other way); a pair of
 * sources with no relation is skipped and counted in stats->unmapped.
 *
 * Recomputes all samples (idempotent; only changed rows are written), in one sorted
 * merge per perf source inside one transaction: O(samples + intervals), memory =
 * the intervals open at one time on one thread.  Commits what is pending first.
 * stats may be NULL.  Returns 0, SF_E_DB or SF_E_NOMEM (the transaction is rolled
 * back: no partial attribution is ever visible). */
int sf_db_attribute_samples_stats(struct sf_db *db, struct sf_attr_stats *stats,
                                  struct sf_err *err);

/* The same without statistics: what perf-fold --db and tracefs2spans call last. */
int sf_db_attribute_samples(struct sf_db *db, struct sf_err *err);

#endif

/* t2s.h - what the files of tracefs2spans share.
 *
 * Data flow (one file per step):
 *
 *   sf_line -> tracefs.c  (one text line -> struct tf_line: header, loss, event, frame, bad)
 *           -> markers.c  (an event's message -> span id, trace id, decision, begin/end)
 *           -> intervals.c (markers per thread -> nested span intervals)
 *           -> lib/sf_db_trace.c (span_events, losses, span_intervals) or NDJSON
 *   or        offcpu.c    (a spantrace_offcpu line's fields -> struct oc_event)
 *           -> lib/sf_db_perf.c (offcpu rows, their stacks interned) or NDJSON
 *   then      clockfit.c  (matched (tracefs, pcap) pairs -> offset, skew, steps)
 *           -> attribute.c (pairs from the database, clock_fits rows, samples.span_id and
 *                           offcpu.span_id)
 *
 * The parsers know nothing of the database or of printing; main.c drives them.
 */
#ifndef T2S_H
#define T2S_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_err.h"

/* ---- tracefs.c: one line of `trace` / `trace_pipe` text ------------------------ */

enum tf_kind {
    TF_BLANK = 0, /* empty or whitespace only */
    TF_COMMENT,   /* a '#' line with nothing we use (legend, column titles) */
    TF_TRACER,    /* "# tracer: NAME"                       -> text */
    TF_ENTRIES,   /* "# entries-in-buffer/entries-written: E/W   #P:N" -> entries, written, ncpu */
    TF_CLOCK,     /* "# trace_clock: NAME", "# clock: NAME" -> text (spantrace and our recorder) */
    TF_ANNOTATE,  /* "##### CPU N buffer started ####"       -> cpu */
    TF_LOST,      /* "CPU:N [LOST M EVENTS]" / "CPU:N [LOST EVENTS]" -> cpu, lost (-1 unknown) */
    TF_FRAME,     /* " => func+0x1f/0x40" (stacktrace option) */
    TF_EVENT,     /* an event line: every field below */
    TF_BAD,       /* none of the above: err says where it went wrong */
};

struct tf_line {
    enum tf_kind kind;
    /* event fields; pointers into the caller's line (not NUL-terminated) */
    const char *comm;
    size_t comm_len;
    int64_t pid;       /* the task the kernel printed (a thread id) */
    int64_t tgid;      /* -1 when absent or "(-------)" */
    int64_t cpu;       /* also for TF_ANNOTATE and TF_LOST */
    const char *flags; /* NULL when the irq-info column is absent */
    size_t flags_len;
    const char *ts; /* timestamp text as printed */
    size_t ts_len;
    int64_t ts_ns;     /* nanoseconds, or the raw counter value when ts_raw */
    int ts_raw;        /* no decimal point: counter/uptime/x86-tsc clocks */
    const char *event; /* NULL for function-tracer lines ("func <-parent") */
    size_t event_len;
    const char *msg; /* payload after "event: " (or the whole text after the timestamp) */
    size_t msg_len;
    /* header / loss fields */
    const char *text; /* TF_TRACER, TF_CLOCK */
    size_t text_len;
    int64_t entries, written, ncpu; /* TF_ENTRIES */
    int64_t lost;                   /* TF_LOST; -1 when the kernel did not say */
};

/* Parse one line (without its '\n').  Always fills *out; returns 0, or for a line
 * that is none of the kinds above SF_E_MALFORMED with err->col and err->msg
 * naming the first field that did not parse (out->kind is TF_BAD). */
int tracefs_parse_line(const char *s, size_t n, struct tf_line *out, struct sf_err *err);

/* 1 when an event's text may carry a span marker: bpf_trace_printk, tracing_mark_write,
 * and the pre-5.9 trace_printk form whose "event" is a number ("0: msg"). */
int tracefs_is_marker_event(const struct tf_line *l);

/* ---- markers.c: the configurable marker grammar ---------------------------------- */

enum mk_field { MK_SPAN, MK_TRACE, MK_DECISION, MK_BEGIN, MK_END };

#define MK_MAX_KEYS   32
#define MK_MAX_PREFIX 32

struct mk_key {
    enum mk_field field;
    char prefix[MK_MAX_PREFIX + 1];
    size_t len;
};

struct mk_grammar {
    struct mk_key keys[MK_MAX_KEYS];
    int n;
};

struct mk_result {
    int has_span;
    char span_id[17]; /* 16 lowercase hex */
    int has_trace;
    char trace_id[33]; /* 32 lowercase hex */
    int decision;      /* 0, 1, or -1 when absent */
    int begin, end;    /* keywords seen */
    int bad_values;    /* keys present with an unusable value */
};

/* The default grammar (README: span:, trace:, decision:, begin, end ...). */
void markers_default(struct mk_grammar *g);

/* Add one key from a spec "FIELD=PREFIX" (FIELD: span, trace, decision, begin, end).
 * Returns 0, or SF_E_USAGE with err->msg saying why. */
int markers_add_key(struct mk_grammar *g, const char *spec, struct sf_err *err);

/* Scan a message for marker keys.  Returns 1 when a span id was found, else 0;
 * *out is always filled. */
int markers_parse(const struct mk_grammar *g, const char *msg, size_t n, struct mk_result *out);

/* ---- intervals.c: span intervals per thread --------------------------------------- */

enum iv_kind { IV_BEGIN, IV_END, IV_DECISION, IV_MARK };

struct iv_interval {
    char span_id[17];
    char trace_id[33]; /* "" when unknown */
    int64_t pid, tid;  /* pid -1 when unknown */
    int64_t start_ns, end_ns;
    int depth;
    int decision;         /* -1 unknown */
    const char *end_rule; /* "end-marker", "next-marker", "parent-end", "eof" */
};

struct iv_stats {
    uint64_t intervals, orphan_ends, too_deep, threads_max;
};

/* Called for every closed interval; a negative return stops and is passed back. */
typedef int (*iv_emit_fn)(void *ctx, const struct iv_interval *iv);

struct iv_state;

/* Create the per-thread state: at most max_depth open spans per thread (0 = 64).
 * Returns NULL when out of memory. */
struct iv_state *intervals_new(int max_depth, iv_emit_fn emit, void *ctx);

/* Feed one marker (in input order).  Returns 0 or what emit returned. */
int intervals_marker(struct iv_state *st, enum iv_kind kind, int64_t pid, int64_t tid,
                     int64_t ts_ns, const struct mk_result *m);

/* Close every open span at end_ns (end_rule "eof").  Returns 0 or emit's error. */
int intervals_finish(struct iv_state *st, int64_t end_ns);

/* Counters so far. */
void intervals_stats(const struct iv_state *st, struct iv_stats *out);

/* Free everything (open spans are dropped, not emitted). */
void intervals_free(struct iv_state *st);

/* ---- clockfit.c: robust offset/skew between two clocks ---------------------------- */

struct cf_pair {
    int64_t x; /* time in the source clock (tracefs) */
    int64_t y; /* time of the same span in the target clock (pcap) */
};

#define CF_MAX_SEGMENTS 16

struct cf_segment {
    size_t first, count;  /* index range in the sorted pairs */
    int64_t x_from, x_to; /* source-clock range covered */
    int64_t offset_ns;    /* y = x + offset + skew_ppm*1e-6*(x - ref_ns) */
    double skew_ppm;
    int64_t ref_ns;
    size_t inliers;          /* points kept after trimming */
    int64_t residual_ns;     /* median |residual| of the inliers */
    int64_t residual_max_ns; /* max |residual| of the inliers */
    int upper;               /* 1: delays were one-sided negative, upper envelope used */
    int skew_fitted;         /* 0: skew fixed (given, or too little data to fit) */
};

struct cf_opts {
    int fit_skew; /* 1 fit, 0 fix to fixed_skew_ppm, -1 auto (span >= 60 s, n >= 20) */
    double fixed_skew_ppm;
    int detect_steps;    /* look for offset steps (change points on residuals) */
    int64_t min_step_ns; /* smallest step reported (default 200 us) */
    uint64_t seed;       /* PRNG seed for Theil-Sen subsampling */
};

struct cf_result {
    int nseg;
    struct cf_segment seg[CF_MAX_SEGMENTS];
    size_t dropped; /* pairs trimmed as outliers, all segments */
};

/* Default options (skew auto, steps on, 200 us, fixed seed). */
void clockfit_defaults(struct cf_opts *o);

/* Fit y against x.  Sorts pairs by x in place.  Returns 0, SF_E_USAGE for n == 0,
 * or SF_E_NOMEM. */
int clockfit_fit(struct cf_pair *p, size_t n, const struct cf_opts *o, struct cf_result *r,
                 struct sf_err *err);

/* Median of pairwise slopes (Theil-Sen), exact for n <= 1500, else over a seeded
 * sample of pairs.  x and y in any consistent units.  Exposed for the tests. */
double clockfit_theil_sen(const double *x, const double *y, size_t n, uint64_t seed);

/* ---- sockjoin.c: socket events joined to spans by TCP sequence range -------------- */

#define SJ_NONE INT64_MIN /* no such time */

/* One socket event (a send or recv call of a thread), from its message text; or one
 * readiness wait of such a thread (wait: it was called at from_ns and returned at ts_ns:
 * an event loop's iteration begins). */
struct sj_event {
    int64_t ts_ns, pid, tid;
    int wait;
    int64_t from_ns; /* a wait: when it was called, in the events' clock */
    int go;          /* a Go thread began running goroutine g ("go g=0x...") */
    int spawn;       /* goroutine parent started goroutine g ("spawn g=0x... parent=0x...") */
    uint64_t g, parent;
    uint64_t conn;     /* sockjoin_conn_key(local, remote): the server's view */
    uint64_t conn_rev; /* sockjoin_conn_key(remote, local): the client's view */
    int send;          /* on the server's socket: 1 send (response bytes), 0 recv (request
                          bytes); on the client's, the other way round */
    uint32_t seq, len; /* the bytes copied: [seq, seq + len) modulo 2^32 */
};

/* One span of the capture: its connection and the TCP bytes of its two messages. */
struct sj_span {
    uint64_t conn; /* sockjoin_conn_key(server, client) */
    uint32_t req_start, req_end, resp_start, resp_end;
    int has_req, has_resp;
};

/* What the events say of one span (tids -1 and times SJ_NONE when unknown). */
struct sj_result {
    int64_t reader_tid, reader_pid;              /* recv of the request's last byte */
    int64_t writer_tid, writer_pid;              /* send of the response's first byte */
    int64_t req_first_ts, req_last_ts, req_a_ts; /* first recv; the last byte's; first byte's */
    int64_t req_a_tid;                           /* whose recv copied the first byte */
    int64_t resp_first_ts, resp_last_ts;         /* send of the first byte; of the last */
    /* the client's side, where its socket is traced too (a downstream call) */
    int64_t caller_tid, caller_pid;     /* send of the request's first byte */
    int64_t call_start_ts, call_end_ts; /* that send; recv of the response's last byte */
};

/* A span's claim on a thread's time. */
struct sj_claim {
    size_t span; /* index into the spans given to sockjoin_match */
    int64_t pid, tid, start_ns, end_ns;
};

/* Called per piece of a thread's claimed time, in time order per thread: spans[0..n)
 * are the spans whose claims cover [start, end) (n == 1: that span owns it alone).
 * A negative return stops the split and is passed back. */
typedef int (*sj_piece_fn)(void *ctx, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns,
                           const size_t *spans, size_t n);

/* The key of a connection seen from its server: both addresses as text (as inet_ntop
 * prints them, IPv6 without brackets), ports as numbers.  Never 0. */
uint64_t sockjoin_conn_key(const char *server, size_t sn, unsigned sport, const char *client,
                           size_t cn, unsigned cport);

/* Parse an event's message ("recv 10.0.0.1:8080 10.0.0.2:5123 seq=1000 len=200", or
 * "wait from=12345.678901234 ready=2"; the event's times and threads are the caller's).
 * Returns 0, or SF_E_MALFORMED with err->col at the field that did not parse. */
int sockjoin_parse(const char *msg, size_t n, struct sj_event *ev, struct sf_err *err);

#define SJ_NOSPAN SIZE_MAX       /* an event on no span's bytes (or a wait) */
#define SJ_SPANS  (SIZE_MAX - 1) /* an event on the bytes of several spans */

/* Join: res[i] for sp[i] (spans in capture order, so that offsets within a connection
 * grow across a sequence wrap), from the events in input order (the first event to
 * cover a byte keeps it).  *hits counts event/message overlaps.  ev_span (NULL: not
 * wanted), room for ne: per event on a server's socket the span whose bytes it copied,
 * SJ_NOSPAN or SJ_SPANS.  Returns 0 or SF_E_NOMEM. */
int sockjoin_match(const struct sj_span *sp, size_t ns, const struct sj_event *ev, size_t ne,
                   struct sj_result *res, uint64_t *hits, size_t *ev_span);

/* The claims of the results into out (room for 2 * ns); returns how many. */
size_t sockjoin_claims(const struct sj_result *res, size_t ns, struct sj_claim *out);

/* Split the claims' time per thread into exclusive and shared pieces (emit).  Returns 0,
 * SF_E_NOMEM, or what emit returned. */
int sockjoin_split(const struct sj_claim *cl, size_t n, sj_piece_fn emit, void *ctx);

/* sockjoin_split, then the shared pieces of threads whose readiness waits were traced
 * taken apart by the event loop's rules (sockjoin.c, "event loops"), from the events and
 * ev_span of sockjoin_match: what the rules give one span goes to loop_emit (n == 1),
 * the rest to emit as sockjoin_split gives it.  Returns 0, SF_E_NOMEM, or what a
 * callback returned. */
int sockjoin_split_loops(const struct sj_claim *cl, size_t n, const struct sj_event *ev,
                         const size_t *ev_span, size_t ne, sj_piece_fn emit, sj_piece_fn loop_emit,
                         void *ctx);

/* ---- goroutines.c: Go's goroutines as the socket join's threads ----------------- */

/* A goroutine's id in place of a thread's: GO_VTID | (its g's address), above every tid. */
#define GO_VTID (1ll << 62)

/* Which goroutine each thread of a Go program ran when ("go g=0x..." events: one at each
 * runtime.execute; it runs until the thread's next).  Built from the events of a source;
 * empty (n == 0) where there are none. */
struct go_map {
    struct go_run *runs; /* by goroutine, then time */
    size_t n;
    struct go_run *by_tid; /* the same, by thread, then time */
};

/* Build m from ev[0..ne).  Returns 0 or SF_E_NOMEM. */
int go_map_build(struct go_map *m, const struct sj_event *ev, size_t ne);
void go_map_free(struct go_map *m);

/* The socket calls of threads m knows move to their goroutine: tid becomes a goroutine's
 * id (2^62 and up, never a thread's) where the thread was running one at the call. */
void go_map_events(const struct go_map *m, struct sj_event *ev, size_t ne);

/* The thread that ran goroutine id vtid (go_map_events) at time t, or -1. */
int64_t go_map_thread(const struct go_map *m, int64_t vtid, int64_t t);

/* The claims of goroutines started for a request into out (room for ns; returns how
 * many): a goroutine that read a request's first byte and then started one, before
 * reading on, started it for that request (a server that runs each HTTP/2 stream on a
 * goroutine of its own: grpc-go, Go's net/http), from its start to the response's last
 * byte; goroutines.c says the rule.  res from sockjoin_match over events go_map_events
 * has mapped; sp the spans given to it. */
size_t go_map_spawn_claims(const struct go_map *m, const struct sj_event *ev, size_t ne,
                           const struct sj_span *sp, const struct sj_result *res, size_t ns,
                           struct sj_claim *out);

/* A piece [a, b) of goroutine vtid's time as pieces of the threads that ran it then,
 * each to emit.  A thread's tid (below 2^62) is emitted as it is. */
int go_map_pieces(const struct go_map *m, int64_t pid, int64_t vtid, int64_t a, int64_t b,
                  const size_t *spans, size_t n, sj_piece_fn emit, void *ctx);

/* ---- offcpu.c: spantrace --offcpu lines ----------------------------------------- */

#define OC_STATE_MAX 7 /* offcpu.state as perf-fold keeps it */

/* One off-CPU interval of the line's thread, from the line's time to end_ns; pointers
 * into the message (not NUL-terminated). */
struct oc_event {
    int64_t end_ns;
    const char *state; /* prev_state as given: 1..OC_STATE_MAX characters */
    size_t state_len;
    int64_t waker_tid; /* -1: unknown ("waker=-") */
    const char *frame; /* the frame "frame=K" names, without "+0x..."; NULL for "frame=-" */
    size_t frame_len;
    const char *stack; /* "comm;root;...;leaf", every frame non-empty */
    size_t stack_len;
};

/* 1 when l is a spantrace_offcpu event line. */
int offcpu_is_event(const struct tf_line *l);

/* Parse an off-CPU event's message ("end=SEC.NSEC state=S waker=TID|- frame=K|-
 * stack=FRAMES") of a line stamped start_ns (raw: the line's time is a count, and so
 * must end= be).  Returns 0, or SF_E_MALFORMED with err->col (1-based, in the message)
 * at the field that did not parse: a missing field, end= before start_ns, an empty
 * frame, frame=K past the stack's frames. */
int offcpu_parse(const char *msg, size_t n, int64_t start_ns, int raw, struct oc_event *ev,
                 struct sf_err *err);

/* ---- main.c / ingest.c / attribute.c: the run ------------------------------------ */

struct sf_db;

struct t2s_ctx {
    /* options */
    const char *db_path;
    int ndjson;            /* NDJSON on stdout (default without --db) */
    int raw_db;            /* store non-marker events as kind raw (default 1) */
    int raw_out;           /* print them in NDJSON (--raw) */
    const char *clock_opt; /* --clock NAME, or NULL */
    struct mk_grammar grammar;
    int quiet, strict, attribute;
    int wait;              /* --wait: wait for another process ingesting the same input */
    int fields;            /* --fields: print each line's parsed columns, nothing else */
    int max_report;        /* bad lines shown per file before the summary */
    const char *pair_with; /* spans column paired with the marker time */
    int have_offset, have_skew;
    int64_t offset_ns;
    double skew_ppm;
    struct cf_opts fit;
    /* run state */
    struct sf_db *db;
    FILE *out;
    uint64_t bad_total, files_failed;
};

/* Read one tracefs text file ("-" = stdin) into the database and/or NDJSON, building
 * its span intervals.  Errors are printed here.  Returns 0 (bad lines are counted in
 * ctx->bad_total), or SF_EXIT_USAGE for an unreadable input or a database failure. */
int ingest_file(struct t2s_ctx *ctx, const char *path);

/* ---- tracedat.c: trace-cmd's trace.dat as tracefs text ------------------------- */

/* 1 when the file open as fd starts as a trace.dat does ("\027\010Dtracing"). */
int tracedat_is(int fd);
/* Write the tracefs text of the trace.dat at path to out (converted in a child
 * process).  Returns 0, or SF_E_* with err: offset 0 when nothing could be read, else
 * the lines written before the failure are good. */
int tracedat_text(const char *path, int out, struct sf_err *err);

/* sockets.c: join the socket events of tracefs source src to the capture's spans
 * (replacing an earlier join): span markers and exclusive intervals with source
 * socket, shared_intervals, and *pairs (malloc'd, the caller frees) of (event time,
 * capture time) of the same bytes, for the capture clock to_clock.  Returns 0,
 * SF_E_DB or SF_E_NOMEM with err filled. */
int sockets_run(struct t2s_ctx *ctx, int64_t src, struct cf_pair **pairs, size_t *npairs,
                char *to_clock, size_t to_len, struct sf_err *err);

/* Per traced service, the share of its samples attributed to one span and the share in
 * time that several spans share (stderr).  Returns 0 or SF_E_DB. */
int sockets_report_cpu(struct t2s_ctx *ctx, struct sf_err *err);

/* After every input: fit the clocks of each tracefs source against the pcap spans
 * (or store the --clock-offset by hand), report steps, then attribute samples.
 * Returns 0 or SF_EXIT_USAGE (database failure, printed). */
int attribute_run(struct t2s_ctx *ctx);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int tracefs2spans_main(int argc, char **argv);

#endif

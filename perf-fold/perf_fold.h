/* perf_fold.h - what the files of perf-fold share: options, the run context, the
 * parsed forms of `perf script` lines, and each file's entry points.
 *
 *   perfscript.c  line parsers (event header, frame) and the streaming state
 *                 machine that replays stackcollapse-perf.pl's main loop
 *   fold.c        frame tidying/annotation, the table of distinct stacks, output
 *   inline.c      --inline: addr2line/nm lookups, cached
 *   diff.c        `perf-fold diff`: difffolded.pl output, regressions, CI gate
 *   spans.c       --group-by: folding samples from the database per span/trace/...
 *   offcpu.c      --db: off-CPU intervals from sched_switch / sched_wakeup records
 */
#ifndef PERF_FOLD_H
#define PERF_FOLD_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_arena.h"
#include "sf_buf.h"
#include "sf_db.h"
#include "sf_err.h"
#include "sf_map.h"
#include "sf_sha256.h"

#define PF_TOOL        "perf-fold"
#define PF_SHOW_ERRORS 5             /* bad lines printed before only counting */
#define PF_RECORD_MAX  (64u << 20)   /* bytes of frames in one sample */
#define PF_TABLE_MAX   (16ull << 30) /* bytes of distinct stack keys */
#define PF_EVENTS_MAX  32            /* distinct events counted per source (--db) */

struct pf_opts {
    int pid, tid, inline_, context, srcline, kernel, jit, addrs;
    int eof;     /* count a final sample with no blank line after it */
    int samples; /* --samples: count samples, not summed periods */
    int strict;  /* stop at the first bad line (exit 2) */
    int quiet;
    const char *event_filter; /* NULL or "" = first event type seen */
    const char *db_path;
    const char *clock; /* --clock: clock domain when the input has no header */
    const char *group_by, *span, *trace, *grpc_method;
    int complete_only;    /* --complete-only: read only complete sources */
    int wait;             /* --wait: wait for another process ingesting the same input */
    const char *symfs;    /* --symfs DIR: perf.data's files under DIR */
    const char *kallsyms; /* --kallsyms FILE: the kernel's symbols, not /proc/kallsyms */
};

/* A piece of a line: not NUL-terminated. */
struct pf_str {
    const char *p;
    size_t n;
};

/* An event header line ("comm pid/tid [cpu] time: period event:"). */
struct pf_header {
    struct pf_str comm; /* as printed, spaces kept */
    struct pf_str pid;  /* n == 0 when only a tid is printed */
    struct pf_str tid;
    struct pf_str num1, num2; /* the numbers as printed (num2.n == 0: one number) */
    int has_event;            /* the line ends in "[period] event:" */
    struct pf_str period;     /* n == 0 when not printed */
    struct pf_str event;
    size_t ev_from; /* index of the ':' where the event regex's match starts */
    /* filled by perfscript_header_detail() */
    int64_t ts_ns;      /* -1 when absent */
    int cpu;            /* -1 when absent */
    int tp_args;        /* text follows the event (a tracepoint's fields): event is set
                         * from the middle of the line, has_event stays 0 */
    struct pf_str args; /* those fields (tp_args) */
};

/* --db: one event of the current source, and what became of its records. */
struct pf_event_count {
    char name[128];
    size_t len;
    int tracepoint, stored;
    uint64_t records;
};

/* A callchain line ("\t ip sym+off (dso)"). */
struct pf_frame {
    struct pf_str pc, func, mod;
    const char *line, *end; /* the whole line: 16-byte loads stay inside it */
};

/* One distinct folded stack; lives in the table's arena with its key right
 * after it (one cache line region per lookup), so pointers stay valid. */
struct pf_entry {
    char *key;
    size_t len;
    uint64_t count;
    int64_t db_id; /* stacks.id, 0 until looked up (diff.c: its own index) */
};

struct pf_table {
    struct sf_map map; /* sf_hash(key) -> struct pf_entry */
    struct sf_arena keys;
};

/* One frame line's output: the pieces it adds to the stack, joined with ';'. */
struct pf_seg {
    size_t off, len;
};

struct pf_inline; /* inline.c */

/* The last event header parsed in full, to recognise the next one by its bytes:
 * headers of one thread differ only in the time stamp.  The header regex reads
 * no further than the white space after the pid/tid (pre[0, plen)), the event
 * regex no further left than the ':' before the period (the last tlen bytes),
 * so a line with the same bytes there parses the same.  Lines of 32+ bytes. */
struct pf_hcache {
    unsigned char pre[32], tail[32]; /* the line's first and last 32 bytes */
    uint32_t pmask, tmask;           /* the bytes that must match */
    int valid, pass;                 /* pass: not filtered out by the event */
    uint64_t period;
};

struct perf_fold_ctx {
    struct pf_opts o;
    struct pf_table stacks;
    struct pf_entry *last_entry; /* the previous sample's stack */
    FILE *out;

    /* the sample being assembled (stackcollapse-perf.pl's $pname and @stack) */
    int have_pname, is_java;
    struct sf_buf pname, last_id; /* last_id: header bytes pname was made from */
    uint64_t period;
    struct pf_hcache hc;
    struct sf_buf frames; /* scratch: one frame line's pieces */
    /* The stack is written backwards from the end of stk: each frame line adds
     * ";pieces" in front, so at the end of the sample "pname;root;...;leaf" is
     * stk[stk_pos..stk_cap) without a second copy. */
    char *stk;
    size_t stk_cap, stk_pos;
    /* --srcline: pieces of one frame line waiting for their source lines */
    struct sf_buf pend;
    struct pf_seg pend_piece[64], pend_src[64];
    size_t npend, pend_need, pend_done;

    /* first event type (stackcollapse keeps only that one) */
    struct sf_buf event_filter;
    int event_set, event_defaulted, event_warned;

    /* --db: the current source's events (sample_events); the header's event
     * descriptions as "\n" then "T" (tracepoint) or "S", the name and "\n" each */
    struct pf_event_count evs[PF_EVENTS_MAX];
    size_t nevs, ev_last;
    uint64_t evs_more; /* records of events past PF_EVENTS_MAX */
    struct sf_buf hdr_events;

    /* --db: a scheduler record being read (its stack goes to offcpu.c, not the fold) */
    int side; /* 0, or enum offcpu_side */
    struct pf_offcpu *off;

    /* metadata of the current sample, for --db */
    struct sf_buf comm, event;
    int64_t ts_ns, pid, tid, cpu;

    struct pf_inline *inl;

    /* database */
    struct sf_db *db;
    int64_t source_id;
    uint64_t samples_db;

    /* errors */
    const char *file;
    uint64_t lineno;
    uint64_t lines, bad_lines, samples;
    uint64_t total_bad; /* over every input */
    int failed;         /* a fatal error happened (--strict or I/O/DB) */
    char errbuf[512];
};

/* ---- perfscript.c ---------------------------------------------------------- */

/* 1 if line is an event header as stackcollapse-perf.pl's regexes see it, filling
 * h (comm, pid, tid, period, event); 0 otherwise. */
int perfscript_header(const char *s, size_t n, struct pf_header *h);

/* Parse the cpu ("[002]") and time ("123.456789:") fields of a header line that
 * perfscript_header() accepted into h->cpu and h->ts_ns (-1 when absent); when the
 * event regex did not match (a tracepoint printed with its fields), the event after
 * the time stamp into h->event, with h->tp_args set. */
void perfscript_header_detail(const char *s, size_t n, struct pf_header *h);

/* 1 if line is a callchain frame as stackcollapse-perf.pl's regex sees it. */
int perfscript_frame(const char *s, size_t n, struct pf_frame *f);

/* Feed one input line (without '\n') to the state machine. Returns 0, or -1 when
 * the run must stop (--strict, database error); the message has been printed. */
int perfscript_line(struct perf_fold_ctx *c, char *s, size_t n);

/* Fold one input file ("-" = stdin) into c.  Returns 0, or -1 on a fatal error
 * (printed). */
int perfscript_file(struct perf_fold_ctx *c, const char *path);

/* One input file as a source of the database (--db), perf script text or perf.data. */
struct pf_hash_tap {
    struct sf_sha256 sha;
    int on;
    int sized; /* a file of known size: a source that stopped early keeps no hash (a
                * prefix's), so that a re-run finds it by size and path (sf_db.h) */
};
struct pf_source {
    struct pf_hash_tap tap; /* fed by the caller with the file's bytes as they are read */
    struct sf_db *db;       /* c->db, restored by perf_source_end */
};
/* Begin path (open as fd, 0 for stdin) as a source: the per-source counts reset and,
 * with --db, its sources row begun.  Returns 0; 1 when it is stored already (c->db is
 * NULL until perf_source_end: folded, not stored); -1 on an error (printed). */
int perf_source_begin(struct perf_fold_ctx *c, const char *path, int fd, struct pf_source *src);
/* End it: bad lines summed, open off-CPU intervals said, the row ended with the hash
 * of its bytes (error: why it stopped early, or NULL).  Returns 0 or -1 (printed). */
int perf_source_end(struct perf_fold_ctx *c, const char *path, struct pf_source *src,
                    uint64_t bytes, const char *error);

/* ---- perfdata.c: perf.data read directly -------------------------------------- */

/* 1 when path holds perf.data (its magic, either byte order). */
int perfdata_is(const char *path);
/* Fold the perf.data file path into c as its `perf script -F comm,pid,tid,time,period,
 * event,ip,sym,dso` text would be; with --db, as `perf script --header -F comm,pid,tid,
 * cpu,time,period,event,ip,sym,dso,trace` (the clock and the events described, the
 * tracepoints' fields).  Returns 0 (a damaged file: what came before the damage, said
 * and counted as bad), or -1 (no memory, --strict stop, not readable). */
int perfdata_file(struct perf_fold_ctx *c, const char *path);
struct sf_pd_info;
/* 1 when perfdata_file unwinds the user stacks of a --call-graph dwarf recording
 * described by in (recorded on x86-64 in this host's byte order, read on x86-64); the
 * others stop it, and are folded from perf script's text instead. */
int perfdata_unwinds(const struct sf_pd_info *in);

/* ---- tracedata.c: tracepoint records printed as perf script -F trace ----------- */

struct pf_tp;
/* Parse a perf.data's tracing data (n bytes).  Returns 0, or -1 with why. */
int pf_tp_open(struct pf_tp **tp, const unsigned char *data, size_t n, char *why, size_t cap);
/* Append to out what perf prints for the raw data of a record of tracepoint id (its
 * attr's config): nothing for an event of no format.  Returns 0, or -1 (no memory). */
int pf_tp_print(struct pf_tp *tp, uint64_t id, const unsigned char *raw, size_t n, int cpu,
                uint64_t ts, struct sf_buf *out);
void pf_tp_close(struct pf_tp *tp);

/* End of all input: with --eof, count the open sample. */
int perfscript_finish(struct perf_fold_ctx *c);

/* Report a bad line (first few printed, all counted).  Returns -1 with --strict. */
int perfscript_bad(struct perf_fold_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- offcpu.c --------------------------------------------------------------- */

/* A thread that left its CPU (sched:sched_switch, prev) is off CPU until its switch
 * in (next) or, where that was not recorded (perf record -p), its next record of any
 * event; the first sched:sched_wakeup of it names the waker.  Called in --db mode. */
enum offcpu_side { OFFCPU_SWITCH = 1, OFFCPU_WAKEUP };

/* Every event header of the source (h: the detail parsed; event its name): closes the
 * intervals it ends; returns 0 or the enum offcpu_side of a scheduler record whose
 * stack must be handed to offcpu_commit, or -1 (no memory). */
int offcpu_header(struct perf_fold_ctx *c, const struct pf_header *h);

/* Each frame line of that record, leaf first: finds the innermost frame of the
 * program (not the kernel's, not the C runtime's) that led to the switch. */
void offcpu_frame(struct perf_fold_ctx *c, const struct pf_frame *f);

/* The stack ("comm;root;...;leaf") of the scheduler record offcpu_header announced.
 * Returns 0 or -1 (fatal, printed). */
int offcpu_commit(struct perf_fold_ctx *c, const char *stack, size_t len);

/* End of a source: intervals still open are dropped (counted); state freed.
 * *stored gets the intervals written. */
void offcpu_finish(struct perf_fold_ctx *c, uint64_t *stored, uint64_t *open);

/* ---- fold.c ---------------------------------------------------------------- */

/* Set up / free the context's buffers and table. Returns 0 or SF_E_NOMEM. */
int fold_init(struct perf_fold_ctx *c);
void fold_free(struct perf_fold_ctx *c);

/* Turn one frame line into stack pieces (tidy, annotate) and add them in front of
 * the sample's stack.  Returns 0, or -1 on a fatal error. */
int fold_frame(struct perf_fold_ctx *c, const struct pf_frame *f);

/* A --srcline source line for the oldest waiting piece. */
int fold_srcline(struct perf_fold_ctx *c, const char *s, size_t n);

/* Input ended while pieces waited for source lines: add them as they are. */
int fold_srcline_flush(struct perf_fold_ctx *c);

/* End of a sample (blank line): count pname;stack.  Returns 0 or -1 (fatal). */
int fold_commit(struct perf_fold_ctx *c);
/* One more sample of stack e, which an earlier sample folded into: its weight added as
 * fold_commit adds it (period, or 1 with --samples).  Without --db only, outside a
 * scheduler record.  0, or -1 (fatal, printed). */
int fold_again(struct perf_fold_ctx *c, struct pf_entry *e, uint64_t period);

/* Add count to key in the table; *e gets the entry.  Returns 0, SF_E_NOMEM /
 * SF_E_LIMIT, or SF_E_RANGE when the entry's count would pass SF_COUNT_MAX (the
 * entry is made, its count unchanged). */
int fold_table_add(struct pf_table *t, const char *key, size_t len, uint64_t count,
                   struct pf_entry **e);
void fold_table_free(struct pf_table *t);

/* The entry for key, or NULL. */
struct pf_entry *fold_table_find(const struct pf_table *t, const char *key, size_t len);

/* The sum of the counts. */
uint64_t fold_table_total(const struct pf_table *t);

/* The next entry in slot order at or after *i (advancing *i), or NULL at the end. */
static inline struct pf_entry *fold_table_next(const struct pf_table *t, size_t *i)
{
    struct sf_map_slot *s = sf_map_next(&t->map, i);

    return s ? s->val : NULL;
}

/* A malloc'd array of the t->n entries in byte order of their keys.  Returns 0 or
 * SF_E_NOMEM. */
int fold_table_sorted(const struct pf_table *t, struct pf_entry ***out);

/* Print the table as "stack count" lines in byte order.  Returns 0 or SF_E_IO. */
int fold_table_print(struct pf_table *t, FILE *out);

/* ---- inline.c -------------------------------------------------------------- */

/* --inline: the inline chain of pc in mod ("outer;inner", as addr2line -i reports
 * it), "" when unknown.  Returns a string owned by the cache, or NULL (no memory). */
const char *inline_lookup(struct perf_fold_ctx *c, const struct pf_str *pc,
                          const struct pf_str *rawfunc, const struct pf_str *mod);
void inline_free(struct perf_fold_ctx *c);
/* file as an argument binutils parses as no option (it reads "@FILE" as more options from
 * FILE, and "-x" is one; a name from a recording is anyone's) into buf[0..n): file, or
 * "./" before it; NULL when file is not a regular file.  For --inline's addr2line and nm
 * and for addr2line.c's children. */
const char *binutils_file_arg(const char *file, char *buf, size_t n);
/* Run argv (found on PATH), return its standard output (NUL-terminated, malloc'd): ""
 * when it cannot be started, NULL when out of memory.  Its standard error goes to ours,
 * as with Perl's backticks. */
char *pf_run(char *const argv[]);

/* ---- perfdata.c: an ELF file's notes ------------------------------------------- */

/* e's section named want, its header into *sh; NULL when there is none. */
Elf_Scn *pf_section_named(Elf *e, const char *want, GElf_Shdr *sh);
/* e's GNU build id as hex into out (41 bytes): 0, or -1 when it has none. */
int pf_build_id(Elf *e, char *out);
/* The .gnu_debuglink file name of e into out[0..cap), or "". */
void pf_debuglink(Elf *e, char *out, size_t cap);

/* ---- diff.c ---------------------------------------------------------------- */

/* `perf-fold diff ...`; argv[0] is "diff".  Returns the exit status. */
int diff_main(int argc, char **argv);

/* ---- spans.c --------------------------------------------------------------- */

/* --group-by: fold the database's samples with a root frame per group.  Returns
 * the exit status. */
int spans_fold(struct perf_fold_ctx *c);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int perf_fold_main(int argc, char **argv);

struct sf_select;

/* What spans_fold_table folds: CPU samples, off-CPU intervals (ns by the stack that
 * blocked), or both (wall-clock time; off-CPU stacks end in "[off-CPU: REASON]"). */
enum pf_rows { PF_ROWS_CPU, PF_ROWS_OFFCPU, PF_ROWS_WALL };

/* Which of the database's samples spans_fold_table folds. */
struct spans_filter {
    enum pf_rows rows;
    const char *span, *trace, *grpc_method; /* --span, --trace, --grpc-method; NULL = any */
    const struct sf_select *sel;            /* NULL, or only samples of the spans it selects */
    int rest;       /* with sel: the attributed samples of every other span */
    int attributed; /* only samples attributed to some span */
    int samples;    /* count samples (1 each), not the sum of their periods */
};

/* Fold the samples that pass f into t (counted by period, or 1 each with f->samples): each stack
 * under a root frame naming its group (group_by as --group-by takes it), or as stored when group_by
 * is NULL, which is what `perf-fold --db` printed for them.  Returns 0, or SF_E_DB / SF_E_NOMEM
 * with err filled. */
/* The attribution of spans_fold_table as a WITH clause: its last table, b, has one
 * row per sample (row_id = samples.id, stack_id, period, span_id = the attributed
 * span or NULL, itrace, idec), for a query that goes on with " SELECT ... FROM b". */
extern const char spans_attrib_cte[];
/* The same over the off-CPU intervals (row_id = offcpu.id, period = its length in ns). */
extern const char spans_attrib_offcpu_cte[];

int spans_fold_table(sqlite3 *h, const struct spans_filter *f, const char *group_by,
                     struct pf_table *t, struct sf_err *err);

/* Four folds of the CPU samples in one pass of the attribution: all of them; those of
 * the spans sel selects (in) and of the other attributed spans (out); and the
 * attributed ones per span (keys "[span ID METHOD PATH];frames", group_by "span").
 * Each table equals what spans_fold_table gives for the same filter (the report's
 * slow and rest sets: four queries were four attributions of every sample).  0, or
 * an SF_E_* with err set. */
int spans_fold_sets(sqlite3 *h, const struct sf_select *sel, struct pf_table *all,
                    struct pf_table *in, struct pf_table *out, struct pf_table *per_span,
                    struct sf_err *err);

#endif

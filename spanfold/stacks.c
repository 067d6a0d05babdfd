/* stacks.c - spanfold stacks: folded stacks or a flame graph of exactly the selected
 * spans' CPU samples.
 *
 *   spanfold stacks --db FILE [SELECTION] [--vs rest|all|EXPR [SELECTION]] [-o OUT.svg | --folded]
 *   spanfold stacks --clickhouse URL [--cluster NAME] [--database DB] [SELECTION] ...
 *
 * The selection is lib/sf_select's language (docs/spanfold.md, "Selecting spans");
 * the samples of the selected spans are folded by perf-fold's one attribution query
 * (perf-fold/spans.c, spans_fold_table), so the lines are those perf-fold --db
 * printed for the same samples; the SVG is drawn by the flamegraph code linked in
 * (flamegraph/render.c).  With --vs the output is the differential form ("stack
 * BEFORE AFTER", the --vs side before, normalised as difffolded.pl -n).  With
 * --clickhouse the selection compiles to ClickHouse's dialect and the join runs
 * there (stacks_ch.c); everything after the fold is the same code.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../flamegraph/fg.h"
#include "../perf-fold/perf_fold.h"
#include "ch_pull.h"
#include "sf_db.h"
#include "sf_err.h"
#include "sf_select.h"
#include "spanfold.h"
#include "stacks_ch.h"

#define TOOL    "spanfold stacks"
#define MAX_SEL 64 /* selection options on one command line */

enum { SEL_WHERE, SEL_TRACE, SEL_SPAN, SEL_DURING, SEL_STATUS, SEL_GRPC, SEL_SLOWEST };

struct sel_opt {
    int kind;
    const char *arg;
    int side;         /* 0: the selection, 1: the --vs side */
    const char *name; /* the option, for messages */
};

struct stacks_opts {
    const char *db, *out, *tz, *title, *countname;
    struct ch_opts cho;
    int folded, vs, vs_rest, complete_only;
    int weight_samples; /* --weight samples: 1 a sample, not the sum of periods */
    int rows;           /* enum pf_rows: --offcpu, --wall, else CPU samples */
    struct sel_opt sel[MAX_SEL];
    int nsel;
};

static const char *const sel_names[] = {"--where",  "--trace-id",    "--span-id", "--during",
                                        "--status", "--grpc-method", "--slowest"};

static void usage(FILE *f)
{
    fputs("usage: spanfold stacks --db FILE [SELECTION] [--vs rest|all|EXPR [SELECTION]]\n"
          "                       [-o OUT.svg | --folded] [--weight ns|samples] [--title T]\n"
          "                       [--countname N] [--offcpu | --wall]\n"
          "       spanfold stacks --clickhouse URL [--cluster NAME] [--database DB] ...\n"
          "\n"
          "Folded stacks (FlameGraph's format, as perf-fold --db prints them) or an SVG flame\n"
          "graph of the CPU samples of exactly the selected spans; with --offcpu their off-CPU\n"
          "time by the stack that blocked, with --wall both (wall-clock time).\n"
          "\n"
          "Selection (every option given must hold; none: every span):\n"
          "  --where EXPR        e.g. 'endpoint = \"/api/search\" and duration > p95'\n"
          "  --trace-id ID       --span-id ID\n"
          "  --during A..B       request start in [A, B): 12:03:10..12:03:40, ISO 8601 dates,\n"
          "                      +10s..+40s after the capture start; either end may be empty\n"
          "  --tz TZ             zone of times written without one: UTC (default), local, +HH:MM\n"
          "  --status S          5xx, 404, or a list: 4xx,503\n"
          "  --grpc-method M     Method or package.Service/Method\n"
          "  --slowest N%|N      the slowest N % (or N) spans by duration\n"
          "Columns of EXPR: ",
          f);
    fputs(sf_select_columns(), f);
    fputs(
        "\n  (language: docs/spanfold.md, \"Selecting spans\")\n"
        "\n"
        "ClickHouse (what spanfold push wrote; docs/scale.md):\n"
        "  --clickhouse URL    run the join there, not on --db (http://HOST:8123/)\n"
        "  --cluster NAME      over the Distributed tables of every shard\n"
        "  --database DB       the ClickHouse database (default spanfold)\n"
        "\n"
        "Output:\n"
        "  --vs rest           differential against every other span's samples\n"
        "  --vs EXPR|all       differential against the spans EXPR selects (all: every span);\n"
        "                      selection options after --vs narrow that side\n"
        "  -o FILE             write an SVG flame graph to FILE (with --folded: the lines);\n"
        "                      frames past 1024 of a stack drawn as one, said on stderr\n"
        "  --folded            folded lines (the default without -o); with --vs the three-\n"
        "                      column form of difffolded.pl -n (the --vs side first); the\n"
        "                      first line says the weight: '# weight: ns' or '# weight: samples'\n"
        "  --weight W          ns (default): each sample weighs its period (cpu-clock: ns\n"
        "                      of CPU); samples: each counts 1 — what a gate's confidence\n"
        "                      interval needs (spanfold gate refuses ns with --confidence)\n"
        "  --offcpu            the time the spans' threads were off CPU (ns), by the stack\n"
        "                      they left the CPU in (kernel frames down to the scheduler):\n"
        "                      an off-CPU flame graph; needs sched_switch records\n"
        "                      (docs/recording.md)\n"
        "  --wall              on-CPU and off-CPU time together (ns; needs a clock event\n"
        "                      as the CPU profile), each off-CPU stack ending in a frame\n"
        "                      [off-CPU: REASON] (futex_wait_queue, do_epoll_wait, preempted)\n"
        "  --title T, --countname N   the graph's title and unit (default ns for cpu-clock)\n"
        "  --complete-only     leave out sources that are not complete (interrupted, failed,\n"
        "                      being ingested); without it they are used and named on stderr\n"
        "\n"
        "Exit: 0 ok; 2 usage error, bad selection, or nothing to show (the reason is printed:\n"
        "no samples, no span markers, no span selected, no sample in the selected spans).\n",
        f);
}

enum {
    O_DB = 256,
    O_WHERE,
    O_TRACE,
    O_SPAN,
    O_DURING,
    O_STATUS,
    O_GRPC,
    O_SLOWEST,
    O_TZ,
    O_VS,
    O_FOLDED,
    O_TITLE,
    O_COUNTNAME,
    O_COMPLETE,
    O_WEIGHT,
    O_OFFCPU,
    O_WALL
};

static const struct option longopts[] = {
    {"db", required_argument, NULL, O_DB},
    {"where", required_argument, NULL, O_WHERE},
    {"trace-id", required_argument, NULL, O_TRACE},
    {"span-id", required_argument, NULL, O_SPAN},
    {"during", required_argument, NULL, O_DURING},
    {"status", required_argument, NULL, O_STATUS},
    {"grpc-method", required_argument, NULL, O_GRPC},
    {"slowest", required_argument, NULL, O_SLOWEST},
    {"tz", required_argument, NULL, O_TZ},
    {"vs", required_argument, NULL, O_VS},
    {"folded", no_argument, NULL, O_FOLDED},
    {"title", required_argument, NULL, O_TITLE},
    {"countname", required_argument, NULL, O_COUNTNAME},
    {"complete-only", no_argument, NULL, O_COMPLETE},
    {"weight", required_argument, NULL, O_WEIGHT},
    {"offcpu", no_argument, NULL, O_OFFCPU},
    {"wall", no_argument, NULL, O_WALL},
    CH_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 to go on, or an exit status. */
static int parse_opts(struct stacks_opts *o, int argc, char **argv)
{
    int ch;

    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
        if (ch_opt(&o->cho, ch, optarg))
            continue;
        if (ch >= O_WHERE && ch <= O_SLOWEST) {
            if (o->nsel == MAX_SEL)
                return sf_cmd_usage_error("stacks", "too many selection options", NULL);
            o->sel[o->nsel++] = (struct sel_opt){ch - O_WHERE, optarg, o->vs && !o->vs_rest,
                                                 sel_names[ch - O_WHERE]};
            continue;
        }
        switch (ch) {
        case O_DB:
            o->db = optarg;
            break;
        case O_TZ:
            o->tz = optarg;
            break;
        case O_VS:
            if (o->vs)
                return sf_cmd_usage_error("stacks", "--vs is given once", NULL);
            o->vs = 1;
            if (strcmp(optarg, "rest") == 0)
                o->vs_rest = 1;
            else if (strncmp(optarg, "--", 2) == 0)
                return sf_cmd_usage_error(
                    "stacks",
                    "--vs takes rest, all or an expression (selection options "
                    "for that side follow it: --vs all --during ..12:03:14)",
                    NULL);
            else if (strcmp(optarg, "all") == 0)
                ; /* every span, narrowed by the options that follow */
            else if (o->nsel == MAX_SEL)
                return sf_cmd_usage_error("stacks", "too many selection options", NULL);
            else
                o->sel[o->nsel++] = (struct sel_opt){SEL_WHERE, optarg, 1, "--vs"};
            break;
        case O_FOLDED:
            o->folded = 1;
            break;
        case O_TITLE:
            o->title = optarg;
            break;
        case O_COUNTNAME:
            o->countname = optarg;
            break;
        case O_WEIGHT:
            if (strcmp(optarg, "samples") != 0 && strcmp(optarg, "ns") != 0)
                return sf_cmd_usage_error("stacks", "--weight takes ns or samples", optarg);
            o->weight_samples = strcmp(optarg, "samples") == 0;
            break;
        case O_COMPLETE:
            o->complete_only = 1;
            break;
        case O_OFFCPU:
        case O_WALL:
            if (o->rows != PF_ROWS_CPU)
                return sf_cmd_usage_error("stacks", "--offcpu and --wall are one choice", NULL);
            o->rows = ch == O_OFFCPU ? PF_ROWS_OFFCPU : PF_ROWS_WALL;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'h':
            usage(stdout);
            return SF_EXIT_OK;
        default:
            return sf_cmd_usage_error("stacks", "unknown option or missing argument",
                                      argv[optind - 1]);
        }
    }
    if (optind < argc)
        return sf_cmd_usage_error(
            "stacks", "stacks takes no file arguments (the database is --db FILE)", NULL);
    if (o->db == NULL && o->cho.url == NULL)
        return sf_cmd_usage_error("stacks", "--db FILE (or --clickhouse URL) is required", NULL);
    if (o->db && o->cho.url)
        return sf_cmd_usage_error("stacks", "--db and --clickhouse: one source of data at a time",
                                  NULL);
    if ((o->cho.cluster || o->cho.database) && o->cho.url == NULL)
        return sf_cmd_usage_error("stacks", "--cluster and --database go with --clickhouse URL",
                                  NULL);
    return -1;
}

/* Compile side's options into s; print the error with a caret.  Returns 0 or 2. */
static int compile(const struct stacks_opts *o, int side, sqlite3 *h, struct sf_select *s)
{
    static int (*const fn[])(struct sf_select *, const char *, struct sf_err *) = {
        sf_select_where,  sf_select_trace_id,    sf_select_span_id, NULL,
        sf_select_status, sf_select_grpc_method, sf_select_slowest};
    struct sf_err err;
    char caret[2 * SF_SELECT_EXPR_MAX + 64];

    for (int i = 0; i < o->nsel; i++) {
        const struct sel_opt *so = &o->sel[i];
        int rc;
        if (so->side != side)
            continue;
        sf_err_clear(&err);
        rc = so->kind == SEL_DURING ? sf_select_during(s, h, so->arg, o->tz, &err)
                                    : fn[so->kind](s, so->arg, &err);
        if (rc < 0) {
            sf_select_format_error(so->arg, &err, caret, sizeof(caret));
            fprintf(stderr, "%s: %s%s: column %u: %s\n%s", TOOL, so->name,
                    side && strcmp(so->name, "--vs") != 0 ? " (of --vs)" : "", err.col, err.msg,
                    caret);
            return SF_EXIT_USAGE;
        }
    }
    return 0;
}

static int64_t count(sqlite3 *h, const char *sql, const struct sf_select *s)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if ((s == NULL || sf_select_bind(s, st, 1) >= 0) && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void clocks(sqlite3 *h, const char *kind, char *out, size_t n)
{
    sqlite3_stmt *st;

    snprintf(out, n, "unknown");
    if (sqlite3_prepare_v2(h, "SELECT group_concat(DISTINCT clock) FROM sources WHERE kind = ?", -1,
                           &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* Nothing to show for one side: say why (the first missing piece).  Returns 2. */
static int explain_empty(sqlite3 *h, const char *db, const struct sf_select *s, const char *what,
                         const struct stacks_ch *chs)
{
    struct spans_filter all = {.attributed = 1};
    struct pf_table t;
    struct sf_err err;
    struct sf_buf sql;
    char pc[64], tc[64];
    int64_t nsel;
    int attributed;

    if (chs) {
        fprintf(stderr,
                "%s: %s: %sno CPU sample attributed to the selected spans in %s (or no span "
                "matches the selection)\n",
                TOOL, db, what, chs->samples);
        return SF_EXIT_USAGE;
    }
    memset(&t, 0, sizeof(t));
    sf_arena_init(&t.keys, 1 << 20, PF_TABLE_MAX);
    attributed = spans_fold_table(h, &all, NULL, &t, &err) == 0 && t.map.n > 0;
    fold_table_free(&t);
    if (count(h, "SELECT count(*) FROM samples", NULL) <= 0) {
        fprintf(stderr,
                "%s: %s: no CPU samples in the database: ingest `perf script` output first "
                "(spanfold ingest, or perf-fold --db %s perf.txt)\n",
                TOOL, db, db);
    } else if (!attributed && count(h, "SELECT count(*) FROM span_intervals", NULL) <= 0) {
        fprintf(stderr,
                "%s: %s: no span markers: samples cannot be attributed to spans; record them "
                "with spantrace, see docs/recording.md\n",
                TOOL, db);
    } else if (!attributed) {
        clocks(h, "perf", pc, sizeof(pc));
        clocks(h, "tracefs", tc, sizeof(tc));
        fprintf(stderr,
                "%s: %s: no sample falls inside a span interval on its thread: the samples' "
                "clock is %s, the span markers' %s (they must be the same; record with "
                "perf record -k mono, see docs/recording.md)\n",
                TOOL, db, pc, tc);
    } else if (count(h, "SELECT count(*) FROM spans", NULL) <= 0) {
        fprintf(stderr,
                "%s: %s: no spans: a selection is over a packet capture's spans; ingest one "
                "(spanfold ingest, or pcap2spans --db %s capture.pcap)\n",
                TOOL, db, db);
    } else {
        sf_buf_init(&sql, SF_SELECT_SQL_MAX + 64);
        sf_buf_printf(&sql, "SELECT count(*) FROM spans WHERE %s", sf_select_sql(s));
        nsel = sql.data ? count(h, (const char *)sql.data, s) : -1;
        sf_buf_free(&sql);
        if (nsel <= 0)
            fprintf(stderr, "%s: %s: %sno span matches the selection\n", TOOL, db, what);
        else
            fprintf(stderr,
                    "%s: %s: %s%lld span%s match%s the selection, but no CPU sample is "
                    "attributed to %s\n",
                    TOOL, db, what, (long long)nsel, nsel == 1 ? "" : "s", nsel == 1 ? "es" : "",
                    nsel == 1 ? "it" : "them");
    }
    return SF_EXIT_USAGE;
}

/* Fold one side: sel's samples (rest: every other span's), or every attributed sample
 * when sel is NULL.  Returns 0 or 2 (printed). */
static int fold_side(const struct stacks_opts *o, sqlite3 *h, const char *db,
                     const struct sf_select *sel, int rest, struct pf_table *t,
                     const struct stacks_ch *chs)
{
    struct spans_filter f = {.rows = (enum pf_rows)o->rows,
                             .sel = sel,
                             .rest = rest,
                             .attributed = 1,
                             .samples = o->weight_samples};
    struct sf_err err;
    char msg[600];

    sf_err_clear(&err);
    sf_arena_init(&t->keys, 1 << 20, PF_TABLE_MAX);
    if ((chs ? stacks_ch_fold(chs, sel, rest, t, &err) : spans_fold_table(h, &f, NULL, t, &err)) ==
        0)
        return 0;
    sf_err_format(&err, TOOL, db, msg, sizeof(msg));
    fprintf(stderr, "%s\n", msg);
    return SF_EXIT_USAGE;
}

/* One output line, "stack count" or "stack before after", into b. */
static int line(struct sf_buf *b, const struct pf_entry *e, int diff, uint64_t c0, uint64_t c1)
{
    sf_buf_reset(b);
    if (sf_buf_append(b, e->key, e->len))
        return -1;
    if (diff)
        return sf_buf_printf(b, " %llu %llu\n", (unsigned long long)c0, (unsigned long long)c1);
    return sf_buf_printf(b, " %llu\n", (unsigned long long)c1);
}

/* The stacks of a (and, with b, of both: the differential form, b's counts scaled to
 * a's total as difffolded.pl -n does) in byte order, each line passed to put(). */
static int emit_lines(const struct pf_table *a, const struct pf_table *b,
                      int (*put)(void *, struct sf_buf *), void *arg)
{
    struct pf_entry **va = NULL, **vb = NULL;
    size_t i = 0, j = 0, nb = b ? b->map.n : 0;
    long double ta = (long double)fold_table_total(a),
                tb = b ? (long double)fold_table_total(b) : 0;
    struct sf_buf buf;
    int rc = 0;

    sf_buf_init(&buf, PF_RECORD_MAX + 64);
    if (fold_table_sorted(a, &va) || (b && fold_table_sorted(b, &vb))) {
        free(va);
        return -1;
    }
    while (rc == 0 && (i < a->map.n || j < nb)) {
        const struct pf_entry *x = i < a->map.n ? va[i] : NULL, *y = j < nb ? vb[j] : NULL;
        int c = 0;
        uint64_t c0 = 0, c1 = 0;
        if (x && y) {
            size_t n = x->len < y->len ? x->len : y->len;
            c = memcmp(x->key, y->key, n);
            c = c ? c : (x->len > y->len) - (x->len < y->len);
        }
        if (y == NULL || (x && c <= 0))
            c1 = va[i++]->count;
        if (x == NULL || (y && c >= 0)) {
            long double v = (long double)vb[j++]->count;
            c0 = (uint64_t)(tb > 0 && ta != tb ? v * ta / tb : v); /* int(c1 * t2 / t1) */
        }
        rc =
            line(&buf, x && (y == NULL || c <= 0) ? x : y, b != NULL, c0, c1) ? -1 : put(arg, &buf);
    }
    free(va);
    free(vb);
    sf_buf_free(&buf);
    return rc;
}

static int put_file(void *arg, struct sf_buf *b)
{
    return fwrite(b->data, 1, b->len, (FILE *)arg) == b->len ? 0 : -1;
}

static int put_graph(void *arg, struct sf_buf *b)
{
    struct fg_ctx *ctx = arg;
    struct sf_err err;

    sf_err_clear(&err);
    return folded_add_line(ctx, (char *)b->data, b->len - 1, &err) < 0 ? -1 : 0;
}

/* The unit of the counts: ns for the clock events (and off-CPU time), else the event's
 * name. */
static const char *unit(const struct stacks_opts *o, sqlite3 *h, char *buf, size_t n)
{
    if (o->rows != PF_ROWS_CPU)
        return "ns";
    sqlite3_stmt *st;
    const char *u = "samples";

    if (sqlite3_prepare_v2(h, "SELECT min(event), count(DISTINCT event) FROM samples", -1, &st,
                           NULL) != SQLITE_OK)
        return u;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 1) == 1) {
        const char *ev = (const char *)sqlite3_column_text(st, 0);
        if (ev && (strncmp(ev, "cpu-clock", 9) == 0 || strncmp(ev, "task-clock", 10) == 0))
            u = "ns";
        else if (ev) {
            snprintf(buf, n, "%s", ev);
            u = buf;
        }
    }
    sqlite3_finalize(st);
    return u;
}

/* The options of one side as written, or "every span". */
static void describe(const struct stacks_opts *o, int side, struct sf_buf *b)
{
    size_t len0 = b->len;

    for (int i = 0; i < o->nsel; i++)
        if (o->sel[i].side == side)
            sf_buf_printf(b, "%s%s %s", b->len > len0 ? " " : "",
                          strcmp(o->sel[i].name, "--vs") ? o->sel[i].name : "--where",
                          o->sel[i].arg);
    if (b->len == len0)
        sf_buf_printf(b, "every span");
}

static int write_graph(const struct stacks_opts *o, sqlite3 *h, const struct pf_table *a,
                       const struct pf_table *b, FILE *out, const struct stacks_ch *chs)
{
    struct fg_ctx ctx;
    struct fg_opts opt;
    struct sf_buf title;
    char ubuf[64] = "";
    char *fgargv[] = {"flamegraph", "--title", NULL, "--countname", NULL, "--quiet", NULL};
    int rc;

    sf_buf_init(&title, 4 * SF_SELECT_EXPR_MAX);
    if (o->title == NULL) {
        sf_buf_printf(&title, o->rows == PF_ROWS_OFFCPU ? "Off-CPU time of "
                              : o->rows == PF_ROWS_WALL ? "Wall-clock time of "
                                                        : "CPU of ");
        describe(o, 0, &title);
        if (o->vs_rest)
            sf_buf_printf(&title, " vs the other spans");
        if (o->vs && !o->vs_rest) {
            sf_buf_printf(&title, " vs ");
            describe(o, 1, &title);
        }
        if (o->vs)
            sf_buf_printf(&title, " (red grew, blue shrank; normalised)");
    }
    /* flamegraph's own option parser fills the defaults that follow from the others */
    fgargv[2] = (char *)(o->title ? o->title : (const char *)title.data);
    if (chs && o->countname == NULL)
        stacks_ch_unit(chs, ubuf, sizeof(ubuf));
    fgargv[4] = (char *)(o->countname        ? o->countname
                         : o->weight_samples ? "samples"
                         : chs               ? ubuf
                                             : unit(o, h, ubuf, sizeof(ubuf)));
    fg_opts_defaults(&opt);
    optind = 0;
    if (opts_parse(6, fgargv, &opt) < 0) {
        sf_buf_free(&title);
        return SF_EXIT_USAGE;
    }
    if (fg_ctx_init(&ctx, &opt, out) < 0 || emit_lines(a, b, put_graph, &ctx) < 0) {
        fprintf(stderr, "%s: out of memory\n", TOOL);
        rc = SF_EXIT_USAGE;
    } else {
        rc = fg_render(&ctx, "spanfold stacks");
        /* flamegraph's own limit, said here since --quiet keeps flamegraph's note off */
        fg_note_cut(&ctx, TOOL, NULL, " (--folded keeps every frame)");
    }
    fg_ctx_free(&ctx);
    sf_buf_free(&title);
    return rc;
}

/* Fold and print; h is the SQLite file, or NULL with chs (ClickHouse). */
/* --offcpu and --wall need off-CPU intervals in the database, weights in ns, and for
 * --wall a clock event as the CPU profile (so that both parts are ns).  Returns 0 or 2
 * (printed). */
static int offcpu_ready(const struct stacks_opts *o, sqlite3 *h, const char *db,
                        const struct stacks_ch *chs)
{
    char ubuf[64] = "ns", ev[64];
    const char *flag = o->rows == PF_ROWS_WALL ? "--wall" : "--offcpu";
    struct stacks_opts cpu = *o;
    int64_t noff = 0, nsmp = 0;

    if (o->rows == PF_ROWS_CPU)
        return 0;
    if (o->weight_samples) {
        fprintf(stderr, "%s: %s: %s weighs time (ns); --weight samples counts CPU samples\n", TOOL,
                db, flag);
        return SF_EXIT_USAGE;
    }
    cpu.rows = PF_ROWS_CPU;
    if (chs) { /* the same counts and unit, of the cluster's tables */
        struct stacks_ch c = *chs;
        struct sf_err err;
        char sql[CH_TABLE_MAX + 64];
        uint64_t v[2] = {0, 0};
        c.rows = PF_ROWS_CPU;
        for (int i = 0; i < 2; i++) {
            snprintf(sql, sizeof(sql), "SELECT count() FROM %s", i ? chs->samples : chs->offcpu);
            if (ch_scalar(chs->ch, sql, &v[i], &err) != 0) {
                fprintf(stderr, "%s: %s: %s\n", TOOL, db, err.msg);
                return SF_EXIT_USAGE;
            }
        }
        noff = (int64_t)v[0];
        nsmp = (int64_t)v[1];
        if (o->rows == PF_ROWS_WALL && nsmp > 0)
            stacks_ch_unit(&c, ubuf, sizeof(ubuf));
    } else {
        noff = count(h, "SELECT count(*) FROM offcpu", NULL);
        nsmp = o->rows == PF_ROWS_WALL ? count(h, "SELECT count(*) FROM samples", NULL) : 0;
        if (nsmp > 0)
            snprintf(ubuf, sizeof(ubuf), "%s", unit(&cpu, h, ev, sizeof(ev)));
    }
    if (noff <= 0) {
        fprintf(stderr,
                "%s: %s: %s: no off-CPU intervals in the database: record them with "
                "spantrace --offcpu -p PID, or sched:sched_switch beside the CPU profile "
                "(docs/recording.md, \"Several events\"), and ingest them\n",
                TOOL, db, flag);
        return SF_EXIT_USAGE;
    }
    if (o->rows == PF_ROWS_WALL && nsmp > 0 && strcmp(ubuf, "ns") != 0) {
        fprintf(stderr,
                "%s: %s: --wall adds CPU samples to off-CPU ns, and the samples are of %s, not a "
                "clock event (cpu-clock, task-clock): use --offcpu\n",
                TOOL, db, ubuf);
        return SF_EXIT_USAGE;
    }
    return 0;
}

static int run(const struct stacks_opts *o, sqlite3 *h, const struct stacks_ch *chs)
{
    char shown[256];
    const char *db = o->db;

    if (chs) {
        ch_url_shown(o->cho.url, shown, sizeof(shown));
        db = shown;
    }
    struct sf_select sel[2];
    struct pf_table t[2];
    int rc, any0 = 0, any1 = 0;
    FILE *out = stdout;

    memset(t, 0, sizeof(t));
    sf_select_init(&sel[0]);
    sf_select_init(&sel[1]);
    for (int i = 0; chs && i < 2; i++) { /* percentiles asked of the servers */
        sf_select_dialect(&sel[i], SF_SELECT_CLICKHOUSE, chs->spans);
        sf_select_ch_ask(&sel[i], ch_select_ask, chs->ch);
    }
    for (int i = 0; i < o->nsel; i++)
        *(o->sel[i].side ? &any1 : &any0) = 1;
    if ((rc = offcpu_ready(o, h, db, chs)) != 0)
        return rc;
    rc = compile(o, 0, h, &sel[0]);
    if (rc == 0)
        rc = compile(o, 1, h, &sel[1]);
    /* no selection: every attributed sample, also of spans the capture did not see */
    if (rc == 0)
        rc = fold_side(o, h, db, any0 ? &sel[0] : NULL, 0, &t[0], chs);
    if (rc == 0 && t[0].map.n == 0)
        rc = explain_empty(h, db, &sel[0], "", chs);
    if (rc == 0 && o->vs) {
        rc = fold_side(o, h, db,
                       o->vs_rest ? &sel[0]
                       : any1     ? &sel[1]
                                  : NULL,
                       o->vs_rest, &t[1], chs);
        if (rc == 0 && t[1].map.n == 0)
            rc = explain_empty(h, db, o->vs_rest ? &sel[0] : &sel[1],
                               o->vs_rest ? "--vs rest: " : "--vs: ", chs);
    }
    if (rc == 0 && o->out && (out = fopen(o->out, "w")) == NULL) {
        fprintf(stderr, "%s: %s: cannot write: %s\n", TOOL, o->out, strerror(errno));
        rc = SF_EXIT_USAGE;
    }
    if (rc == 0 && (o->folded || o->out == NULL)) {
        char ubuf[64] = "";
        const char *w = o->weight_samples ? "samples"
                        : chs             ? (stacks_ch_unit(chs, ubuf, sizeof(ubuf)), ubuf)
                                          : unit(o, h, ubuf, sizeof(ubuf));
        /* what the counts are, for a gate to tell samples from ns (flamegraph.pl ignores
         * the line; spanfold's readers take it); "samples" from unit() would be a lie */
        if (fprintf(out, "# weight: %s\n",
                    o->weight_samples || strcmp(w, "samples") != 0 ? w : "period") < 0 ||
            emit_lines(&t[0], o->vs ? &t[1] : NULL, put_file, out) < 0) {
            fprintf(stderr, "%s: %s: write error\n", TOOL, o->out ? o->out : "stdout");
            rc = SF_EXIT_USAGE;
        }
    } else if (rc == 0) {
        rc = write_graph(o, h, &t[0], o->vs ? &t[1] : NULL, out, chs);
    }
    if (out != stdout && out != NULL && fclose(out) != 0 && rc == 0) {
        fprintf(stderr, "%s: %s: write error\n", TOOL, o->out);
        rc = SF_EXIT_USAGE;
    }
    for (int i = 0; i < 2; i++) {
        fold_table_free(&t[i]);
        sf_select_free(&sel[i]);
    }
    return rc;
}

/* --during on ClickHouse: the sources, clock fits and first times read back into a
 * temporary file (ch_pull.c), where sf_select_during places the window as on a file. */
static int during_db(const struct stacks_opts *o, struct ch *c, char *dir, char *tmp, size_t n,
                     struct sf_db **db, struct sf_err *err)
{
    int during = 0;

    for (int i = 0; i < o->nsel; i++)
        during |= o->sel[i].kind == SEL_DURING;
    if (!during)
        return 0;
    if (ch_tmpdb_make("during", dir, tmp, n) < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot make a temporary folder: %s",
                          strerror(errno));
    if (ch_pull(c, o->cho.cluster, CH_PULL_CLOCKS, NULL, tmp, err) != 0)
        return err->code;
    return sf_db_open_mode(db, tmp, SF_DB_READ, err);
}

static int run_clickhouse(const struct stacks_opts *o)
{
    struct stacks_ch chs;
    struct ch *c = NULL;
    struct sf_db *db = NULL;
    struct sf_err err;
    char msg[600], shown[256], dir[4096] = "", tmp[4096];
    int rc;

    sf_err_clear(&err);
    ch_url_shown(o->cho.url, shown, sizeof(shown));
    struct ch_shards shards;

    if (ch_connect(&c, &o->cho, &shards, &err) < 0 ||
        during_db(o, c, dir, tmp, sizeof(tmp), &db, &err) != 0) {
        sf_err_format(&err, TOOL, shown, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        ch_close(c);
        if (dir[0])
            ch_tmpdb_remove(dir, tmp);
        return SF_EXIT_USAGE;
    }
    if (shards.missing[0]) /* a partial answer, never a silent one */
        fprintf(stderr, "%s: note: %s: the stacks are those of the shards that answered\n", TOOL,
                shards.missing);
    if (stacks_ch_tables(&chs, c, o->cho.cluster != NULL) != 0) {
        fprintf(stderr, "%s: %s: too many shards answered to name them in a query\n", TOOL, shown);
        sf_db_close(db, NULL);
        if (dir[0])
            ch_tmpdb_remove(dir, tmp);
        ch_close(c);
        return SF_EXIT_USAGE;
    }
    chs.count_samples = o->weight_samples;
    chs.rows = o->rows;
    rc = run(o, db ? sf_db_handle(db) : NULL, &chs);
    sf_db_close(db, NULL);
    if (dir[0])
        ch_tmpdb_remove(dir, tmp);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "%s: writing output failed\n", TOOL);
        rc = SF_EXIT_USAGE;
    }
    ch_close(c);
    return rc;
}

int sf_cmd_stacks(int argc, char **argv)
{
    struct stacks_opts o;
    struct sf_db *db = NULL;
    struct sf_err err;
    char msg[600];
    int rc;

    memset(&o, 0, sizeof(o));
    if ((rc = parse_opts(&o, argc, argv)) >= 0)
        return rc;
    if (o.cho.url)
        return run_clickhouse(&o);
    /* a reader: a typo must not give an empty database, and nothing is migrated */
    if (access(o.db, R_OK) != 0) {
        fprintf(stderr, "%s: %s: %s\n", TOOL, o.db, strerror(errno));
        return SF_EXIT_USAGE;
    }
    sf_err_clear(&err);
    if (sf_db_open_mode(&db, o.db, SF_DB_READ, &err) < 0) {
        sf_err_format(&err, TOOL, o.db, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        return SF_EXIT_USAGE;
    }
    {
        char note[700];

        /* partial or interrupted sources are said (and left out with --complete-only) */
        if (sf_db_partial_note(db, o.complete_only, note, sizeof(note), &err) < 0) {
            sf_err_format(&err, TOOL, o.db, msg, sizeof(msg));
            fprintf(stderr, "%s\n", msg);
            sf_db_close(db, NULL);
            return SF_EXIT_USAGE;
        }
        if (note[0])
            fprintf(stderr, "%s: %s: warning: %s\n", TOOL, o.db, note);
    }
    rc = run(&o, sf_db_handle(db), NULL);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "%s: writing output failed\n", TOOL);
        rc = SF_EXIT_USAGE;
    }
    sf_db_close(db, &err);
    return rc;
}

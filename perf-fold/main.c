/* main.c - perf-fold: `perf script` text to folded stacks (stackcollapse-perf.pl
 * compatible), samples into the spanfold database, per-span folding, and
 * `perf-fold diff` for differential profiles and CI gates. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "perf_fold.h"
#include "sf_clock.h"
#include "sf_db_trace.h"
#include "sf_opt.h"

static const char usage_text[] =
    "usage: perf-fold [OPTIONS] [FILE...|-]         perf script text -> folded stacks\n"
    "                                               (a FILE of perf.data is read directly)\n"
    "       perf-fold --db DB --group-by G [FILTER]  fold the database's samples per group\n"
    "       perf-fold diff [OPTIONS] BASE NEW        two-column diff, regressions, CI gate\n"
    "\n"
    "stackcollapse-perf.pl options (same meaning, same output):\n"
    "  --pid              include the PID with the process name\n"
    "  --tid              include the PID and TID with the process name\n"
    "  --inline           un-inline with addr2line (binutils)\n"
    "  --context          with --inline: add source file:line\n"
    "  --srcline          input has `perf script -F+srcline` lines; append them\n"
    "  --kernel           annotate kernel frames with _[k]\n"
    "  --jit              annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
    "  --all              --kernel and --jit\n"
    "  --addrs            raw addresses where a symbol is unknown\n"
    "  --event-filter=EV  fold only event EV (default: the first event type seen)\n"
    "perf-fold options:\n"
    "  --eof              count a final sample that has no blank line after it\n"
    "  --samples          count samples (1 each) instead of summing their periods\n"
    "                     (stackcollapse-perf.pl drops it; default: compatible)\n"
    "  --strict           stop at the first bad line (exit 2)\n"
    "  --db FILE          also store samples and stacks in the spanfold database;\n"
    "                     run `perf script --header` so that its clock is known\n"
    "  --clock NAME       clock of the input when it has no `# clockid:` header\n"
    "  --group-by G       with --db: span|trace|grpc_method|path|sampled; prints the\n"
    "                     database's samples (after ingesting FILEs) under a root\n"
    "                     frame per group; [unattributed] for samples outside spans\n"
    "  --span ID  --trace ID  --grpc-method M   only these samples (imply --group-by span)\n"
    "  --complete-only    with --group-by: leave out sources that are partial (interrupted,\n"
    "                     failed or still being ingested); without it they are used and\n"
    "                     named in a warning\n"
    "  --wait             with --db FILE...: when another process is ingesting the same\n"
    "                     input, wait for it (default: say so and exit 2)\n"
    "perf.data input (as perf script takes them):\n"
    "  --symfs DIR        look for the recorded files under DIR (a copy of the\n"
    "                     recording machine's root)\n"
    "  --kallsyms FILE    the kernel's symbols from FILE (a copy of the recording\n"
    "                     machine's /proc/kallsyms), not this machine's\n"
    "  -q, --quiet        no notes or progress on stderr\n"
    "  -h, --help         this text        --version   version\n"
    "exit status: 0 ok, 1 bad lines skipped (reported as FILE:LINE:, counted),\n"
    "2 usage error or unreadable input.\n";

enum {
    OPT_PID = 256,
    OPT_TID,
    OPT_INLINE,
    OPT_CONTEXT,
    OPT_SRCLINE,
    OPT_KERNEL,
    OPT_JIT,
    OPT_ALL,
    OPT_ADDRS,
    OPT_EVENT,
    OPT_EOF,
    OPT_STRICT,
    OPT_DB,
    OPT_CLOCK,
    OPT_GROUP,
    OPT_SPAN,
    OPT_TRACE,
    OPT_GRPC,
    OPT_VERSION,
    OPT_SAMPLES,
    OPT_COMPLETE,
    OPT_WAIT,
    OPT_SYMFS,
    OPT_KALLSYMS,
};

static const struct option longopts[] = {
    {"pid", no_argument, NULL, OPT_PID},
    {"tid", no_argument, NULL, OPT_TID},
    {"inline", no_argument, NULL, OPT_INLINE},
    {"context", no_argument, NULL, OPT_CONTEXT},
    {"srcline", no_argument, NULL, OPT_SRCLINE},
    {"kernel", no_argument, NULL, OPT_KERNEL},
    {"jit", no_argument, NULL, OPT_JIT},
    {"all", no_argument, NULL, OPT_ALL},
    {"addrs", no_argument, NULL, OPT_ADDRS},
    {"event-filter", required_argument, NULL, OPT_EVENT},
    {"eof", no_argument, NULL, OPT_EOF},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"db", required_argument, NULL, OPT_DB},
    {"clock", required_argument, NULL, OPT_CLOCK},
    {"group-by", required_argument, NULL, OPT_GROUP},
    {"span", required_argument, NULL, OPT_SPAN},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"grpc-method", required_argument, NULL, OPT_GRPC},
    {"complete-only", no_argument, NULL, OPT_COMPLETE},
    {"wait", no_argument, NULL, OPT_WAIT},
    {"symfs", required_argument, NULL, OPT_SYMFS},
    {"kallsyms", required_argument, NULL, OPT_KALLSYMS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int usage_error(const char *msg)
{
    fprintf(stderr, "%s: %s\nTry 'perf-fold --help'.\n", PF_TOOL, msg);
    return SF_EXIT_USAGE;
}

/* Returns -1 to go on, or an exit status. */
static int parse_opts(struct pf_opts *o, int argc, char **argv)
{
    char msg[256];
    int ch;

    opterr = 0;
    while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_PID:
            o->pid = 1;
            break;
        case OPT_TID:
            o->tid = 1;
            break;
        case OPT_INLINE:
            o->inline_ = 1;
            break;
        case OPT_CONTEXT:
            o->context = 1;
            break;
        case OPT_SRCLINE:
            o->srcline = 1;
            break;
        case OPT_KERNEL:
            o->kernel = 1;
            break;
        case OPT_JIT:
            o->jit = 1;
            break;
        case OPT_ALL:
            o->kernel = o->jit = 1;
            break;
        case OPT_ADDRS:
            o->addrs = 1;
            break;
        case OPT_EVENT:
            o->event_filter = optarg;
            break;
        case OPT_EOF:
            o->eof = 1;
            break;
        case OPT_SAMPLES:
            o->samples = 1;
            break;
        case OPT_STRICT:
            o->strict = 1;
            break;
        case OPT_DB:
            o->db_path = optarg;
            break;
        case OPT_CLOCK:
            o->clock = optarg;
            break;
        case OPT_COMPLETE:
            o->complete_only = 1;
            break;
        case OPT_WAIT:
            o->wait = 1;
            break;
        case OPT_SYMFS:
            o->symfs = optarg;
            break;
        case OPT_KALLSYMS:
            o->kallsyms = optarg;
            break;
        case OPT_GROUP:
            o->group_by = optarg;
            break;
        case OPT_SPAN:
            o->span = optarg;
            break;
        case OPT_TRACE:
            o->trace = optarg;
            break;
        case OPT_GRPC:
            o->grpc_method = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return SF_EXIT_OK;
        case OPT_VERSION:
            sf_opt_print_version(stdout, PF_TOOL);
            return SF_EXIT_OK;
        default:
            snprintf(msg, sizeof(msg), "unknown option or missing argument: %s", argv[optind - 1]);
            return usage_error(msg);
        }
    }
    if (o->clock) {
        const char *dom = sf_clock_domain(o->clock, strlen(o->clock));
        if (strcmp(dom, SF_CLOCK_UNKNOWN) == 0 && strcmp(o->clock, SF_CLOCK_UNKNOWN) != 0)
            return usage_error("--clock: unknown clock (monotonic, realtime, perf, boot, ...)");
        o->clock = dom;
    }
    if ((o->span || o->trace || o->grpc_method) && o->group_by == NULL)
        o->group_by = "span";
    if (o->group_by) {
        static const char *const ok[] = {"span", "trace", "grpc_method", "path", "sampled"};
        int found = 0;
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
            found |= strcmp(o->group_by, ok[i]) == 0;
        if (!found)
            return usage_error("--group-by takes span, trace, grpc_method, path or sampled");
        if (o->db_path == NULL)
            return usage_error("--group-by needs --db FILE");
    }
    if (o->complete_only && o->group_by == NULL)
        return usage_error("--complete-only goes with --group-by (it filters what is read)");
    return -1;
}

/* Ingesting (files or stdin) opens and creates the database; --group-by without
 * FILE only reads it. */
static int open_db(struct perf_fold_ctx *c, int nfiles)
{
    int reading = c->o.group_by && nfiles == 0;
    struct sf_err err;

    sf_err_clear(&err);
    sf_db_one_thread(); /* perf-fold has no other thread */
    if (sf_db_open_mode(&c->db, c->o.db_path, reading ? SF_DB_READ : SF_DB_CREATE, &err)) {
        sf_err_format(&err, PF_TOOL, c->o.db_path, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        return -1;
    }
    sf_db_set_wait(c->db, c->o.wait);
    return 0;
}

/* New samples: the shared rule (lib/sf_db_trace.c, also run by tracefs2spans)
 * puts them in the spans whose intervals are already in the database. */
static int attribute(struct perf_fold_ctx *c)
{
    struct sf_err err;

    sf_err_clear(&err);
    if (sf_db_attribute_samples(c->db, &err) == 0)
        return 0;
    sf_err_format(&err, PF_TOOL, c->o.db_path, c->errbuf, sizeof(c->errbuf));
    fprintf(stderr, "%s\n", c->errbuf);
    return -1;
}

static int fold_inputs(struct perf_fold_ctx *c, int nfiles, char **files)
{
    static char dash[] = "-";
    char *std[] = {dash};

    if (nfiles == 0) {
        files = std;
        nfiles = 1;
    }
    if (c->o.event_filter && c->o.event_filter[0]) {
        sf_buf_append(&c->event_filter, c->o.event_filter, strlen(c->o.event_filter) + 1);
        c->event_filter.len--;
        c->event_set = 1;
    }
    for (int i = 0; i < nfiles; i++)
        if (perfdata_is(files[i]) ? perfdata_file(c, files[i]) : perfscript_file(c, files[i]))
            return -1;
    return perfscript_finish(c);
}

int perf_fold_main(int argc, char **argv)
{
    struct perf_fold_ctx c;
    int rc, nfiles;
    static char outbuf[1 << 16];

    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return diff_main(argc - 1, argv + 1);
    memset(&c, 0, sizeof(c));
    if ((rc = parse_opts(&c.o, argc, argv)) >= 0)
        return rc;
    nfiles = argc - optind;
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    c.out = stdout;
    if (fold_init(&c)) {
        fprintf(stderr, "%s: out of memory\n", PF_TOOL);
        return SF_EXIT_USAGE;
    }
    rc = 0;
    if (c.o.db_path && open_db(&c, nfiles))
        rc = -1;
    /* With --group-by and no FILE, fold what the database holds. */
    if (rc == 0 && !(c.o.group_by && nfiles == 0))
        rc = fold_inputs(&c, nfiles, argv + optind);
    if (rc == 0 && c.db && c.samples_db)
        rc = attribute(&c);
    if (rc == 0 && c.o.group_by)
        rc = spans_fold(&c) == SF_EXIT_OK ? 0 : -1;
    else if (rc == 0 && fold_table_print(&c.stacks, stdout))
        rc = -1;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: writing output failed\n", PF_TOOL);
        rc = -1;
    }
    if (c.db) {
        struct sf_err err;
        sf_err_clear(&err);
        if (sf_db_close(c.db, &err)) {
            sf_err_format(&err, PF_TOOL, c.o.db_path, c.errbuf, sizeof(c.errbuf));
            fprintf(stderr, "%s\n", c.errbuf);
            rc = -1;
        }
    }
    fold_free(&c);
    if (rc)
        return SF_EXIT_USAGE;
    if (c.total_bad) { /* docs/exit-status.md: skipped records are 1, and counted */
        fprintf(stderr, "%s: %llu bad line%s skipped\n", PF_TOOL, (unsigned long long)c.total_bad,
                c.total_bad == 1 ? "" : "s");
        return SF_EXIT_FINDINGS;
    }
    return SF_EXIT_OK;
}

/* main.c - tracefs2spans: tracefs text -> span events, span intervals, clock fits,
 * and perf samples attributed to spans.
 *
 *   tracefs2spans [--db FILE] [--ndjson] [options] FILE... | -
 *
 * Parse -> (per input) ingest_file() -> (with --db) attribute_run().  See README,
 * section tracefs2spans, for the marker grammar and the interval rule.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "sf_clock.h"
#include "sf_db.h"
#include "sf_opt.h"
#include "t2s.h"

static void usage(FILE *f)
{
    fputs("usage: tracefs2spans [--db FILE] [--ndjson] [options] FILE... | -\n"
          "Read tracefs trace / trace_pipe text, or trace-cmd's trace.dat (read with\n"
          "libtracecmd, by its content): span markers (bpf_trace_printk, trace_marker)\n"
          "become span events and per-thread span intervals; with --db the clocks are\n"
          "fitted against the pcap spans and perf samples get their span.\n"
          "\n"
          "  --db FILE             write span_events, losses, span_intervals, clock_fits\n"
          "                        into FILE, then attribute samples (samples.span_id)\n"
          "  --ndjson              NDJSON on stdout (the default without --db)\n"
          "  --raw                 also print non-marker events in NDJSON\n"
          "  --no-raw              do not store non-marker events in the database\n"
          "  --clock NAME          trace_clock of the input (mono, local, global, perf, boot,\n"
          "                        ...); default: a '# trace_clock:' header, else local\n"
          "  --marker-key F=PREFIX marker grammar key (F: span, trace, decision, begin, end);\n"
          "                        the first one replaces the default grammar\n"
          "  --pair-with COLUMN    spans time paired with the marker: req_start (default),\n"
          "                        req_end, resp_start, resp_end\n"
          "  --clock-offset NS     set offset tracefs->realtime by hand (method manual)\n"
          "  --clock-skew-ppm PPM  fix the skew (with --clock-offset, or for the fit)\n"
          "  --fit-skew            always fit skew (default: when pairs span >= 60 s)\n"
          "  --no-steps            do not look for clock steps\n"
          "  --min-step NS         smallest clock step reported (default 200000)\n"
          "  --refit               no input: refit clocks and re-attribute (needs --db of an\n"
          "                        existing database)\n"
          "  --wait                when another process is ingesting the same input into\n"
          "                        the database, wait for it (default: say so, exit 2)\n"
          "  --no-attribute        do not touch samples.span_id\n"
          "  --fields              print the parsed columns of every line as NDJSON (only)\n"
          "  --strict              stop at the first unparseable line\n"
          "  --quiet               no summaries (errors still go to stderr)\n"
          "  --help, --version\n"
          "Exit: 0 ok, 1 unparseable lines were found (kept raw), 2 usage/unreadable input.\n",
          f);
}

enum {
    O_DB = 256,
    O_NDJSON,
    O_RAW,
    O_NO_RAW,
    O_CLOCK,
    O_KEY,
    O_PAIR,
    O_OFFSET,
    O_SKEW,
    O_FIT_SKEW,
    O_NO_STEPS,
    O_MIN_STEP,
    O_REFIT,
    O_NO_ATTR,
    O_FIELDS,
    O_STRICT,
    O_QUIET,
    O_HELP,
    O_VERSION,
    O_WAIT
};

static const struct option longopts[] = {
    {"db", required_argument, NULL, O_DB},
    {"ndjson", no_argument, NULL, O_NDJSON},
    {"raw", no_argument, NULL, O_RAW},
    {"no-raw", no_argument, NULL, O_NO_RAW},
    {"clock", required_argument, NULL, O_CLOCK},
    {"marker-key", required_argument, NULL, O_KEY},
    {"pair-with", required_argument, NULL, O_PAIR},
    {"clock-offset", required_argument, NULL, O_OFFSET},
    {"clock-skew-ppm", required_argument, NULL, O_SKEW},
    {"fit-skew", no_argument, NULL, O_FIT_SKEW},
    {"no-steps", no_argument, NULL, O_NO_STEPS},
    {"min-step", required_argument, NULL, O_MIN_STEP},
    {"refit", no_argument, NULL, O_REFIT},
    {"no-attribute", no_argument, NULL, O_NO_ATTR},
    {"fields", no_argument, NULL, O_FIELDS},
    {"strict", no_argument, NULL, O_STRICT},
    {"quiet", no_argument, NULL, O_QUIET},
    {"wait", no_argument, NULL, O_WAIT},
    {"help", no_argument, NULL, O_HELP},
    {"version", no_argument, NULL, O_VERSION},
    {NULL, 0, NULL, 0},
};

static int bad_usage(const char *what, const char *arg)
{
    if (arg)
        fprintf(stderr, "tracefs2spans: %s: '%s' (see --help)\n", what, arg);
    else
        fprintf(stderr, "tracefs2spans: %s (see --help)\n", what);
    return SF_EXIT_USAGE;
}

static int pair_column(const char *s, const char **col)
{
    static const char *const ok[][2] = {{"req_start", "req_start_ns"},
                                        {"req_end", "req_end_ns"},
                                        {"resp_start", "resp_start_ns"},
                                        {"resp_end", "resp_end_ns"}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (strcmp(s, ok[i][0]) == 0 || strcmp(s, ok[i][1]) == 0) {
            *col = ok[i][1];
            return 0;
        }
    }
    return -1;
}

/* Parse the command line into c; returns -1 to go on, else an exit status. */
static int parse_args(struct t2s_ctx *c, int argc, char **argv, int *refit)
{
    struct sf_err err;
    int opt, keys = 0;

    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_DB:
            c->db_path = optarg;
            break;
        case O_NDJSON:
            c->ndjson = 1;
            break;
        case O_RAW:
            c->raw_out = 1;
            break;
        case O_NO_RAW:
            c->raw_db = 0;
            break;
        case O_CLOCK:
            c->clock_opt = optarg;
            if (strcmp(sf_clock_domain(optarg, strlen(optarg)), SF_CLOCK_UNKNOWN) == 0)
                return bad_usage("--clock wants a trace_clock name (mono, local, global, perf, "
                                 "boot, tai, mono_raw, counter, uptime, x86-tsc)",
                                 optarg);
            break;
        case O_KEY:
            if (keys++ == 0)
                c->grammar.n = 0;
            if (markers_add_key(&c->grammar, optarg, &err))
                return bad_usage(err.msg, NULL);
            break;
        case O_PAIR:
            if (pair_column(optarg, &c->pair_with))
                return bad_usage("--pair-with wants req_start, req_end, resp_start or resp_end",
                                 optarg);
            break;
        case O_OFFSET:
            if (sf_opt_i64(optarg, INT64_MIN + 1, INT64_MAX, &c->offset_ns))
                return bad_usage("--clock-offset wants integer nanoseconds", optarg);
            c->have_offset = 1;
            break;
        case O_SKEW:
            if (sf_opt_double(optarg, &c->skew_ppm) || c->skew_ppm < -1e5 || c->skew_ppm > 1e5)
                return bad_usage("--clock-skew-ppm wants a number of ppm", optarg);
            c->have_skew = 1;
            c->fit.fit_skew = 0;
            c->fit.fixed_skew_ppm = c->skew_ppm;
            break;
        case O_FIT_SKEW:
            c->fit.fit_skew = 1;
            break;
        case O_NO_STEPS:
            c->fit.detect_steps = 0;
            break;
        case O_MIN_STEP:
            if (sf_opt_i64(optarg, 0, INT64_MAX, &c->fit.min_step_ns))
                return bad_usage("--min-step wants integer nanoseconds", optarg);
            break;
        case O_REFIT:
            *refit = 1;
            break;
        case O_NO_ATTR:
            c->attribute = 0;
            break;
        case O_FIELDS:
            c->fields = 1;
            break;
        case O_STRICT:
            c->strict = 1;
            break;
        case O_QUIET:
            c->quiet = 1;
            break;
        case O_WAIT:
            c->wait = 1;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return SF_EXIT_OK;
        case O_VERSION:
            sf_opt_print_version(stdout, "tracefs2spans");
            return SF_EXIT_OK;
        default:
            return bad_usage("unknown option or missing argument", NULL);
        }
    }
    if (*refit && (c->db_path == NULL || optind < argc))
        return bad_usage("--refit needs --db and no input files", NULL);
    return -1;
}

int tracefs2spans_main(int argc, char **argv)
{
    struct t2s_ctx c = {.raw_db = 1, .attribute = 1, .max_report = 5, .pair_with = "req_start_ns"};
    struct sf_err err;
    int refit = 0, rc, status = SF_EXIT_OK;

    sf_err_clear(&err);
    markers_default(&c.grammar);
    clockfit_defaults(&c.fit);
    if ((rc = parse_args(&c, argc, argv, &refit)) >= 0)
        return rc;
    if (c.fields && c.db_path)
        return bad_usage("--fields prints only; it does not take --db", NULL);
    if (c.db_path == NULL || c.ndjson || c.fields)
        c.out = stdout;
    /* --refit works on what is there: it never creates a database */
    if (c.db_path)
        sf_db_one_thread(); /* tracefs2spans has no other thread */
    if (c.db_path && sf_db_open_mode(&c.db, c.db_path, refit ? SF_DB_WRITE : SF_DB_CREATE, &err)) {
        char msg[600];
        sf_err_format(&err, "tracefs2spans", c.db_path, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        return SF_EXIT_USAGE;
    }
    if (c.db)
        sf_db_set_wait(c.db, c.wait);
    if (!refit) {
        if (optind == argc)
            status = ingest_file(&c, "-");
        for (int i = optind; i < argc && status != SF_EXIT_USAGE; i++)
            status = ingest_file(&c, argv[i]);
    }
    if (c.db && status != SF_EXIT_USAGE && attribute_run(&c))
        status = SF_EXIT_USAGE;
    if (c.db && sf_db_close(c.db, &err) && status == SF_EXIT_OK)
        status = SF_EXIT_USAGE;
    if (c.out && fflush(c.out) != 0)
        status = SF_EXIT_USAGE;
    if (status == SF_EXIT_OK && c.bad_total)
        status = SF_EXIT_FINDINGS;
    return status;
}

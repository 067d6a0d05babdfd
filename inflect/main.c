/* main.c - inflect: inflection points, sampling drift and clock drift from spans.
 *
 *   inflect --series FILE.csv [--column NAME] [--json OUT.json] [--out DIR] [--gate G]...
 *   inflect --db FILE [--out DIR] [--window 10s] [--by service|endpoint|grpc_method|all]
 *           [--expect-rate R] [--tiers K] [--explain-drift] [--gate G]... [--json OUT]
 *
 * Parse the command line into struct inflect_ctx, then hand it to run.c.  Exit
 * status: 0 ok, 1 a gate failed, 2 usage or unreadable/damaged input.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inflect.h"
#include "run.h"
#include "sf_err.h"
#include "sf_opt.h"

static const char usage_text[] =
    "usage: inflect --series FILE [--column NAME] [--json OUT] [--out DIR] [--gate G]...\n"
    "       inflect --db FILE [--out DIR] [--window 10s] [--by service|endpoint|grpc_method|all]\n"
    "               [--expect-rate R] [--tiers K] [--gate G]... [--json OUT]\n"
    "       gates: [--allow-missing] [--summary FILE] [--junit FILE]\n"
    "\n"
    "Finds when performance turned (change points: step, spike, ramp), whether the\n"
    "sampling rate drifted from its configuration, and how capture clocks drifted.\n"
    "\n"
    "  --series FILE      CSV (header; first column time: number or ISO-8601) or NDJSON\n"
    "  --column NAME      analyse only this value column of --series\n"
    "  --db FILE          spanfold database (spans, contexts, clock_fits)\n"
    "  --clickhouse URL   instead of --db (spanfold inflect only): the spans spanfold push\n"
    "                     wrote there, windowed by the cluster; --cluster NAME (every\n"
    "                     shard), --database DB (default spanfold); no clock report\n"
    "  --out DIR          write report.md, report.html, charts (gnuplot) and data there\n"
    "  --json OUT         write the JSON summary to OUT ('-' = stdout; default stdout\n"
    "                     when neither --out nor --json is given)\n"
    "  --window DUR       window length for --db (250ms, 10s, 1m, ...; default: adapted\n"
    "                     to span density, 16 spans a window for the median group)\n"
    "  --by KEY           group spans by service, endpoint, grpc_method or all (default all)\n"
    "  --expect-rate R    configured sampling rate per tier (0 < R <= 1); GROUP=R for one\n"
    "                     group of --by (repeatable)\n"
    "  --tiers K          sampling tiers: end-to-end keep probability R^K (default 1)\n"
    "  --gate G           exit 1 when G holds (docs/ci.md): 'p99>+20%' (a step or ramp\n"
    "                     raised p99 by more than 20 %), 'p99>+50ms' (by more than 50 ms),\n"
    "                     'p99>250ms' (a segment's level above 250 ms), 'error_rate>1pt'\n"
    "                     (above 1 %), 'GROUP/p99>...' (one group), 'drift' (sampling drift\n"
    "                     alarm; needs --expect-rate or ot=th), 'sampled_share where\n"
    "                     baggage.env = \"prod\" < 10pt' (the kept share of those traces)\n"
    "  --explain-drift    with --db: for each drift alarm, the request attribute that\n"
    "                     explains it (baggage.KEY, header.NAME, client, ...; as\n"
    "                     spanfold report does, docs/spanfold.md)\n"
    "  --allow-missing    a gate on a group or column that does not exist passes\n"
    "  --summary FILE     append the gates as Markdown to FILE\n"
    "  --junit FILE       write the gates as JUnit XML to FILE\n"
    "  --detector NAME    default detector: pelt (default), pelt_mbic, binseg, cusum,\n"
    "                     baseline\n"
    "  --cost NAME        segment cost of pelt and binseg: auto (default: chosen by\n"
    "                     penalised likelihood; a rate of --db: binomial), mean,\n"
    "                     meanvar, linear, poisson, binomial\n"
    "  --penalty C        penalty C / 2 * ln n per parameter (default 2: BIC)\n"
    "  --rho-max R        cap on the AR(1) coefficient that scales the costs (0.99)\n"
    "  --min-confidence P drop change points whose confidence is below P (0..1)\n"
    "  --no-charts        skip gnuplot charts in --out\n"
    "  --complete-only    with --db: leave out sources that are not complete (interrupted,\n"
    "                     failed, being ingested); without it they are used, with a warning\n"
    "  --quiet            no progress or notes on stderr\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 ok, 1 a gate failed, 2 usage error, unreadable input or a gate\n"
    "that cannot be evaluated.\n";

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "inflect: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "Try 'inflect --help'.\n");
    return SF_EXIT_USAGE;
}

/* --expect-rate R (every group) or GROUP=R (one group; the last '=' splits). */
static int parse_rate(struct inflect_ctx *ctx, const char *arg)
{
    const char *eq = strrchr(arg, '=');
    double r;

    if (sf_opt_double(eq ? eq + 1 : arg, &r) < 0 || !(r > 0) || r > 1)
        return -1;
    if (eq == NULL) {
        ctx->expect_rate = r;
        return 0;
    }
    if (eq == arg || (size_t)(eq - arg) >= sizeof(ctx->rates[0].group) ||
        ctx->nrates >= INFLECT_MAX_RATES)
        return -1;
    memcpy(ctx->rates[ctx->nrates].group, arg, (size_t)(eq - arg));
    ctx->rates[ctx->nrates].group[eq - arg] = 0;
    ctx->rates[ctx->nrates++].rate = r;
    return 0;
}

enum {
    O_SERIES = 256,
    O_COLUMN,
    O_DB,
    O_OUT,
    O_JSON,
    O_WINDOW,
    O_BY,
    O_RATE,
    O_TIERS,
    O_GATE,
    O_DETECTOR,
    O_COST,
    O_PENALTY,
    O_MINCONF,
    O_RHOMAX,
    O_NOCHARTS,
    O_QUIET,
    O_HELP,
    O_VERSION,
    O_ALLOW_MISSING,
    O_SUMMARY,
    O_JUNIT,
    O_COMPLETE,
    O_EXPLAIN,
    O_CH_URL,
    O_CH_CLUSTER,
    O_CH_DATABASE
};

static const struct option longopts[] = {
    {"series", required_argument, NULL, O_SERIES},
    {"column", required_argument, NULL, O_COLUMN},
    {"db", required_argument, NULL, O_DB},
    {"out", required_argument, NULL, O_OUT},
    {"json", required_argument, NULL, O_JSON},
    {"window", required_argument, NULL, O_WINDOW},
    {"by", required_argument, NULL, O_BY},
    {"expect-rate", required_argument, NULL, O_RATE},
    {"tiers", required_argument, NULL, O_TIERS},
    {"gate", required_argument, NULL, O_GATE},
    {"detector", required_argument, NULL, O_DETECTOR},
    {"cost", required_argument, NULL, O_COST},
    {"penalty", required_argument, NULL, O_PENALTY},
    {"min-confidence", required_argument, NULL, O_MINCONF},
    {"rho-max", required_argument, NULL, O_RHOMAX},
    {"no-charts", no_argument, NULL, O_NOCHARTS},
    {"complete-only", no_argument, NULL, O_COMPLETE},
    {"explain-drift", no_argument, NULL, O_EXPLAIN},
    {"clickhouse", required_argument, NULL, O_CH_URL},
    {"cluster", required_argument, NULL, O_CH_CLUSTER},
    {"database", required_argument, NULL, O_CH_DATABASE},
    {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, O_HELP},
    {"version", no_argument, NULL, O_VERSION},
    {"allow-missing", no_argument, NULL, O_ALLOW_MISSING},
    {"summary", required_argument, NULL, O_SUMMARY},
    {"junit", required_argument, NULL, O_JUNIT},
    {NULL, 0, NULL, 0},
};

/* One option into ctx.  Returns 0, or an exit status to stop with. */
static int apply_opt(struct inflect_ctx *ctx, int c, const char *arg)
{
    struct sf_err err;
    int64_t k;
    int d;

    switch (c) {
    case O_SERIES:
        ctx->series_path = arg;
        break;
    case O_COLUMN:
        ctx->column = arg;
        break;
    case O_DB:
        ctx->db_path = arg;
        break;
    case O_CH_URL:
        ctx->ch.url = arg;
        break;
    case O_CH_CLUSTER:
        ctx->ch.cluster = arg;
        break;
    case O_CH_DATABASE:
        ctx->ch.database = arg;
        break;
    case O_OUT:
        ctx->out_dir = arg;
        break;
    case O_JSON:
        ctx->json_path = arg;
        break;
    case O_NOCHARTS:
        ctx->no_charts = 1;
        break;
    case O_EXPLAIN:
        ctx->explain_drift = 1;
        break;
    case O_COMPLETE:
        ctx->complete_only = 1;
        break;
    case O_QUIET:
        ctx->quiet = 1;
        break;
    case O_WINDOW:
        if (sf_opt_duration_ns(arg, &ctx->window_ns) < 0 || ctx->window_ns < 1000)
            return usage_error("bad --window (e.g. 10s, 250ms; at least 1us)", arg);
        break;
    case O_BY:
        if (strcmp(arg, "service") && strcmp(arg, "endpoint") && strcmp(arg, "grpc_method") &&
            strcmp(arg, "all"))
            return usage_error("--by takes service, endpoint, grpc_method or all", arg);
        ctx->by = arg;
        break;
    case O_RATE:
        if (parse_rate(ctx, arg) < 0)
            return usage_error("--expect-rate takes R or GROUP=R, R in (0, 1]", arg);
        break;
    case O_TIERS:
        if (sf_opt_i64(arg, 1, 16, &k) < 0)
            return usage_error("--tiers takes 1..16", arg);
        ctx->tiers = (int)k;
        break;
    case O_GATE:
        if (ctx->ngates >= INFLECT_MAX_GATES)
            return usage_error("too many --gate options (16 at most)", NULL);
        if (sf_gate_parse(&ctx->gates[ctx->ngates].g, arg, &err) < 0) {
            char msg[700];
            sf_gate_errfmt("inflect", arg, &err, msg, sizeof(msg));
            fprintf(stderr, "%s\nTry 'inflect --help'.\n", msg);
            return SF_EXIT_USAGE;
        }
        ctx->ngates++;
        break;
    case O_ALLOW_MISSING:
        ctx->allow_missing = 1;
        break;
    case O_SUMMARY:
        ctx->summary = arg;
        break;
    case O_JUNIT:
        ctx->junit = arg;
        break;
    case O_DETECTOR:
        if ((d = cp_detector_by_name(arg)) < 0)
            return usage_error("unknown --detector", arg);
        ctx->detector = d;
        break;
    case O_COST:
        if ((d = cp_cost_by_name(arg)) < 0)
            return usage_error("--cost takes auto, mean, meanvar, linear, poisson or binomial",
                               arg);
        ctx->cp.cost = d;
        break;
    case O_PENALTY:
        if (sf_opt_double(arg, &ctx->cp.pen_mult) < 0 || !(ctx->cp.pen_mult > 0) ||
            ctx->cp.pen_mult > 1000)
            return usage_error("--penalty takes a number in (0, 1000]", arg);
        break;
    case O_RHOMAX:
        if (sf_opt_double(arg, &ctx->cp.rho_max) < 0 || !(ctx->cp.rho_max >= 0) ||
            ctx->cp.rho_max > 0.999)
            return usage_error("--rho-max takes a number in [0, 0.999]", arg);
        break;
    case O_MINCONF:
        if (sf_opt_double(arg, &ctx->min_confidence) < 0 || !(ctx->min_confidence >= 0) ||
            ctx->min_confidence > 1)
            return usage_error("--min-confidence takes a number in [0, 1]", arg);
        break;
    case 'h':
    case O_HELP:
        fputs(usage_text, stdout);
        return -1;
    case O_VERSION:
        sf_opt_print_version(stdout, "inflect");
        return -1;
    default:
        return usage_error("unknown option", NULL);
    }
    return 0;
}

int inflect_main(int argc, char **argv)
{
    struct inflect_ctx ctx;
    int c, rc;

    memset(&ctx, 0, sizeof(ctx));
    ctx.tool = "inflect";
    ctx.by = "all";
    ctx.window_ns = 0; /* adapted to the spans (window.h) unless --window is given */
    ctx.tiers = 1;
    ctx.detector = CP_PELT;
    cp_defaults(&ctx.cp);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == '?')
            return usage_error("unknown option or missing argument", argv[optind - 1]);
        if ((rc = apply_opt(&ctx, c, optarg)) != 0)
            return rc < 0 ? SF_EXIT_OK : rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (!!ctx.series_path + !!ctx.db_path + !!ctx.ch.url != 1)
        return usage_error("give exactly one of --series FILE, --db FILE or --clickhouse URL",
                           NULL);
    if ((ctx.ch.cluster || ctx.ch.database) && !ctx.ch.url)
        return usage_error("--cluster and --database go with --clickhouse URL", NULL);
    if (ctx.ch.url && inflect_ch_windows == NULL)
        return usage_error("--clickhouse: this inflect has no ClickHouse client; run "
                           "spanfold inflect --clickhouse ...",
                           NULL);
    if (ctx.ch.url && ctx.explain_drift)
        return usage_error("--explain-drift needs --db: the requests' attributes are read "
                           "from the file",
                           NULL);
    if (ctx.ch.url) /* the --db mode, its windows from the cluster (run_db) */
        ctx.db_path = ctx.ch.url;
    if (ctx.column && !ctx.series_path)
        return usage_error("--column goes with --series", NULL);
    if ((rc = run_gates_prepare(&ctx)) != 0)
        return rc;
    /* gnuplot may die early; a write to its pipe must fail, not kill us */
    signal(SIGPIPE, SIG_IGN);
    return ctx.series_path ? run_series(&ctx) : run_db(&ctx);
}

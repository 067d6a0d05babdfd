/* report.c - spanfold report --db FILE --out DIR [--tz ZONE] [--window DUR]
 *            spanfold report --clickhouse URL [--cluster NAME] [--database DB] --out DIR ...
 *
 * One self-contained page, DIR/report.html (verdict, timelines, regressions, inline
 * interactive flame graphs, tables, TLS facts; no external fetch), and the same
 * findings for machines, DIR/findings.json, and the series behind the timelines,
 * DIR/windows.csv.  The analysis is report_data.c, the outputs report_json.c,
 * report_html.c and report_svg.c (see report.h).  With --clickhouse the windows per
 * endpoint are computed by the cluster (ch_series.c), and so are the CPU sets, the
 * folded stacks of the slowest 5 % and of the rest (ch_sets.c); the tables spanfold push
 * wrote are read back into a temporary SQLite file for the rest (ch_pull.c), whose
 * queries are the ones the report runs on a file.
 */
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../inflect/run.h"
#include "ch_pull.h"
#include "ch_series.h"
#include "ch_sets.h"
#include "sf_err.h"
#include "sf_opt.h"
#include "sf_thin.h"
#include "spanfold.h"

static const char usage_text[] =
    "usage: spanfold report --db FILE --out DIR [--tz ZONE] [--window DUR] [--expect-rate R]\n"
    "       spanfold report --clickhouse URL [--cluster NAME] [--database DB] --out DIR ...\n"
    "\n"
    "Writes DIR/report.html, one self-contained page (open it from disk or mail it):\n"
    "the verdict in plain words, a timeline per endpoint (latency p50/p95/p99, error rate,\n"
    "kept share of traces) with inflection points and sampling-drift alarms marked,\n"
    "the slowest requests' CPU against the rest, interactive flame graphs (all, slowest\n"
    "5 %, differential), per-endpoint tables, clock fits, TLS and 0-RTT facts; and\n"
    "DIR/findings.json, the same findings for machines; DIR/windows.csv, the numbers\n"
    "behind the timelines (per endpoint and window, as inflect --db --out writes them).\n"
    "\n"
    "  --db FILE         spanfold database (spanfold ingest writes it)\n"
    "  --clickhouse URL  instead of --db: what spanfold push wrote there (http://HOST:8123/);\n"
    "                    the windows computed by the cluster, the rest read back into a\n"
    "                    temporary file; the same report as from the file\n"
    "  --cluster NAME    with --clickhouse: every shard's data (the Distributed tables)\n"
    "  --database DB     with --clickhouse: the ClickHouse database (default spanfold)\n"
    "  --name TEXT       what the page and findings.json call the data (default: the\n"
    "                    --db path, or the URL and database)\n"
    "  --out DIR         output directory (created)\n"
    "  --tz ZONE         times shown in ZONE: UTC (default), local, or a zoneinfo name\n"
    "                    such as Europe/Berlin; findings.json keeps time_utc as well\n"
    "  --window DUR      window of the timelines and detectors (default: adapted to span\n"
    "                    density, see docs/inflect.md)\n"
    "  --expect-rate R   the configured sampling rate (0 < R <= 1); without it the\n"
    "                    tracestate ot=th rate, else the first regime's kept share\n"
    "  --complete-only   leave out sources that are not complete (interrupted, failed,\n"
    "                    being ingested); without it they are used and named in a note\n"
    "  --page-samples N  at most N CPU samples in the page's explorer (default 2000000,\n"
    "                    ~3 MB of page); past it the explorer carries a uniform sample of\n"
    "                    the requests, and says so (docs/spanfold.md, \"The report page\")\n"
    "  --spans-max N     at most N requests analysed one by one (default 500000, or all):\n"
    "                    past it a uniform sample of the requests gives the heat maps,\n"
    "                    percentiles, causes, slowest list and explorer, and the page says\n"
    "                    so; windows, slow cuts and flame graphs stay over every request;\n"
    "                    with --clickhouse only the sample is read back (docs/scale.md)\n"
    "  --quiet           no notes on stderr\n"
    "  -h, --help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error or unreadable database.\n";

/* --tz: UTC, local, or a zone name with a zoneinfo file (glibc silently falls back to
 * UTC for a name it does not know; say so instead). */
static int set_tz(struct rp_opts *o, const char *arg)
{
    char path[512];

    if (strcmp(arg, "UTC") == 0 || strcmp(arg, "utc") == 0 || strcmp(arg, "Z") == 0) {
        o->tz = NULL;
        return 0;
    }
    if (strcmp(arg, "local") == 0) {
        o->tz = "local";
        tzset();
        return 0;
    }
    snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", arg);
    if (arg[0] == 0 || arg[0] == '/' || strstr(arg, "..") || access(path, R_OK) != 0)
        return -1;
    if (setenv("TZ", arg, 1) != 0)
        return -1;
    tzset();
    o->tz = arg;
    return 0;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        errno = ENOTDIR;
    }
    fprintf(stderr, "spanfold report: %s: cannot create directory: %s\n", dir, strerror(errno));
    return -1;
}

enum {
    O_DB = 256,
    O_OUT,
    O_TZ,
    O_WINDOW,
    O_RATE,
    O_COMPLETE,
    O_QUIET,
    O_HELP,
    O_NAME,
    O_PAGE,
    O_SPANS
};

static const struct option longopts[] = {
    {"db", required_argument, NULL, O_DB},
    {"out", required_argument, NULL, O_OUT},
    {"tz", required_argument, NULL, O_TZ},
    {"window", required_argument, NULL, O_WINDOW},
    {"expect-rate", required_argument, NULL, O_RATE},
    {"complete-only", no_argument, NULL, O_COMPLETE},
    {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, O_HELP},
    CH_LONGOPTS,
    {"name", required_argument, NULL, O_NAME},
    {"page-samples", required_argument, NULL, O_PAGE},
    {"spans-max", required_argument, NULL, O_SPANS},
    {NULL, 0, NULL, 0},
};

/* Options into o.  Returns 0, -1 after --help, or the exit status of a usage error. */
static int parse(int argc, char **argv, struct rp_opts *o)
{
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (ch_opt(&o->cho, c, optarg))
            continue;
        switch (c) {
        case O_DB:
            o->db = optarg;
            break;
        case O_OUT:
            o->out = optarg;
            break;
        case O_TZ:
            if (set_tz(o, optarg) < 0)
                return sf_cmd_usage_error("report", "unknown --tz (UTC, local or a zoneinfo name)",
                                          optarg);
            break;
        case O_WINDOW:
            if (sf_opt_duration_ns(optarg, &o->window_ns) < 0 || o->window_ns < 1000)
                return sf_cmd_usage_error("report", "bad --window (e.g. 2s, 500ms; at least 1us)",
                                          optarg);
            break;
        case O_RATE:
            if (sf_opt_double(optarg, &o->expect_rate) < 0 || !(o->expect_rate > 0) ||
                o->expect_rate > 1)
                return sf_cmd_usage_error("report", "--expect-rate takes R in (0, 1]", optarg);
            break;
        case O_COMPLETE:
            o->complete_only = 1;
            break;
        case O_QUIET:
            o->quiet = 1;
            break;
        case O_NAME:
            o->name = optarg;
            break;
        case O_PAGE:
            if (sf_opt_i64(optarg, 0, INT64_MAX, &o->page_samples) < 0)
                return sf_cmd_usage_error("report", "bad --page-samples (a count, 0 or more)",
                                          optarg);
            break;
        case O_SPANS:
            if (strcmp(optarg, "all") == 0)
                o->spans_max = -1;
            else if (sf_opt_i64(optarg, 1, INT64_MAX, &o->spans_max) < 0)
                return sf_cmd_usage_error("report", "bad --spans-max (a count, 1 or more, or all)",
                                          optarg);
            break;
        case 'h':
        case O_HELP:
            fputs(usage_text, stdout);
            return -1;
        default:
            return sf_cmd_usage_error("report", "unknown option or missing argument",
                                      argv[optind - 1]);
        }
    }
    if (optind < argc)
        return sf_cmd_usage_error("report", "unexpected argument", argv[optind]);
    if ((o->db == NULL) == (o->cho.url == NULL) || o->out == NULL)
        return sf_cmd_usage_error(
            "report", "--out DIR and one of --db FILE and --clickhouse URL are required", NULL);
    if ((o->cho.cluster || o->cho.database) && o->cho.url == NULL)
        return sf_cmd_usage_error("report", "--cluster and --database go with --clickhouse URL",
                                  NULL);
    return 0;
}

/* --clickhouse: the windows gathered by the cluster into c->sw, the database read back
 * into tmp (in dir), named in name.  Returns 0 or 2 (printed). */
static int pull(struct rp_ctx *c, char *dir, char *tmp, size_t n, char *name, size_t nn)
{
    struct rp_opts *o = &c->o;
    struct ch_series_cost cost = {0};
    struct sf_err err;
    char shown[256], msg[700];
    int rc, windows;

    sf_err_clear(&err);
    ch_url_shown(o->cho.url, shown, sizeof(shown));
    ch_data_name(&o->cho, name, nn);
    if (ch_tmpdb_make("report", dir, tmp, n) < 0) {
        fprintf(stderr, "spanfold report: cannot make a temporary folder: %s\n", strerror(errno));
        return SF_EXIT_USAGE;
    }
    rc = ch_connect(&c->ch, &o->cho, &o->shards, &err);
    if (rc == 0)
        rc = ch_series(c->ch, o->cho.cluster, "endpoint", &o->window_ns, &c->sw, &cost, &c->chq,
                       &err);
    windows = rc == 0;
    if (rc == 0 && !o->quiet)
        fprintf(stderr,
                "spanfold report: %s: the windows gathered by the cluster: %u queries, %llu "
                "bytes, %.2f s\n",
                shown, cost.queries, (unsigned long long)cost.bytes, cost.seconds);
    if (rc == 0) {                   /* past --spans-max, only the requests analysed one by one */
        char own[512], family[1024]; /* the sample; and with its downstream calls */
        c->thin = sf_thin_share(c->sw.nspans, o->spans_max);
        rc = sf_thin_sql_ch(c->thin, 0, own, sizeof(own)) != 0 ||
                     sf_thin_sql_ch(c->thin, 1, family, sizeof(family)) != 0
                 ? sf_err_set(&err, SF_E_LIMIT, UINT64_MAX, "the sample's condition is too long")
                 : ch_pull(c->ch, o->cho.cluster, CH_PULL_NO_SAMPLES, c->thin < 1.0 ? family : NULL,
                           tmp, &err);
        if (rc == 0) /* and the per-span CPU and off-CPU time only for the sample */
            rc = ch_sets_only(c->chq, c->thin < 1.0 ? own : NULL, &err);
    }
    if (rc != 0) {
        sf_err_format(&err, "spanfold report", shown, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        if (rc == SF_E_LIMIT && windows) /* the windows came, the rows did not */
            fprintf(stderr, "spanfold report: the report reads the cluster's rows back beside "
                            "its windows; the fleet's change points, drift and gates need only "
                            "the windows: spanfold inflect --clickhouse, spanfold gate "
                            "--clickhouse (docs/scale.md)\n");
        return SF_EXIT_USAGE;
    }
    o->db = tmp;
    return 0;
}

int sf_cmd_report(int argc, char **argv)
{
    struct rp_ctx *c = calloc(1, sizeof(*c));
    char path[4096], dir[4096] = "", tmp[4096], name[600];
    int rc;

    if (c == NULL) {
        fprintf(stderr, "spanfold report: out of memory\n");
        return SF_EXIT_USAGE;
    }
    c->o.page_samples = RP_PAGE_SAMPLES;
    c->o.spans_max = RP_SPANS_MAX;
    if ((rc = parse(argc, argv, &c->o)) != 0) {
        free(c);
        return rc < 0 ? SF_EXIT_OK : rc;
    }
    if (c->o.cho.url && (rc = pull(c, dir, tmp, sizeof(tmp), name, sizeof(name))) != 0) {
        if (dir[0])
            ch_tmpdb_remove(dir, tmp);
        sf_spans_free(&c->sw);
        ch_spanq_free(c->chq);
        ch_close(c->ch);
        free(c);
        return rc;
    }
    if (c->o.name == NULL)
        c->o.name = c->o.cho.url ? name : c->o.db;
    if ((rc = rp_analyse(c)) == 0 && make_dir(c->o.out) < 0)
        rc = SF_EXIT_USAGE;
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/findings.json", c->o.out);
        if (rp_write_json(c, path) < 0)
            rc = SF_EXIT_USAGE;
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/report.html", c->o.out);
        if (rp_write_html(c, path) < 0)
            rc = SF_EXIT_USAGE;
    }
    if (rc == 0) { /* the series the detectors read, as inflect --db writes them */
        snprintf(path, sizeof(path), "%s/windows.csv", c->o.out);
        if (run_windows_csv(path, "spanfold report", &c->sw, c->dres,
                            (const double *const *)c->pi) < 0)
            rc = SF_EXIT_USAGE;
    }
    if (rc == 0 && !c->o.quiet) {
        char v[2048];
        rp_verdict(c, v, sizeof(v));
        fprintf(stderr, "spanfold report: %s (window %gs)\n", v, (double)c->sw.window_ns / 1e9);
        for (int i = 0; i < c->nnotes; i++)
            fprintf(stderr, "spanfold report: note: %s\n", c->notes[i]);
        if (c->ch) {
            unsigned long q;
            unsigned long long b;
            ch_received(c->ch, &q, &b);
            fprintf(stderr, "spanfold report: from the cluster in all: %lu queries, %llu bytes\n",
                    q, b);
        }
        fprintf(stderr, "spanfold report: wrote %s/report.html, findings.json and windows.csv\n",
                c->o.out);
    }
    rp_free(c);
    ch_spanq_free(c->chq);
    ch_close(c->ch);
    if (dir[0])
        ch_tmpdb_remove(dir, tmp);
    free(c);
    return rc;
}

/* gate.c - spanfold gate: CI gates over two folded profiles or a database, in the
 * one gate language (lib/sf_gate.h, docs/ci.md).
 *
 *   spanfold gate [OPTIONS] --gate G... BASE.folded NEW.folded   perf-fold diff's gates
 *   spanfold gate [OPTIONS] --gate G... --db FILE                inflect's gates
 *
 * The gates are evaluated by the tools' own code, linked in (perf-fold diff with
 * --no-diff, inflect with its JSON discarded), so that a gate gives the same
 * verdict through every command: the shared golden test holds them to it.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sf_err.h"
#include "spanfold.h"

#define GATE_ARGV_MAX 160

static const char usage_text[] =
    "usage: spanfold gate [OPTIONS] --gate G... BASE.folded NEW.folded\n"
    "       spanfold gate [OPTIONS] --gate G... --db FILE [--window DUR] [--by KEY]\n"
    "       spanfold gate [OPTIONS] --gate G... --clickhouse URL [--cluster NAME] ...\n"
    "                     [--expect-rate R]... [--tiers K]\n"
    "\n"
    "Evaluates CI gates (docs/ci.md) over two folded profiles (as perf-fold diff) or a\n"
    "database (as inflect).\n"
    "\n"
    "  --gate G              a gate, repeatable: 'frame>+5pt', 'total>+10%', 'p99>+20%',\n"
    "                        'error_rate>1pt', 'drift'\n"
    "  --allow-missing       a gate on a frame, group or column that matches nothing passes\n"
    "  --confidence C        profiles: fail only when the change is significant at C\n"
    "  --on-inconclusive fail|pass   profiles: what a not significant crossing counts as\n"
    "                        (default pass; it is reported either way)\n"
    "  --summary FILE        append the gates as Markdown (e.g. $GITHUB_STEP_SUMMARY)\n"
    "  --junit FILE          write the gates as JUnit XML, one test case per gate\n"
    "  --db FILE, --window, --by, --expect-rate, --tiers   as inflect\n"
    "  --clickhouse URL [--cluster NAME] [--database DB]   instead of --db: the gates on\n"
    "                        the windows a ClickHouse cluster computes (docs/scale.md)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit: 0 every gate passed, 1 a gate failed (or input lines were skipped),\n"
    "2 usage error, unreadable or empty input, or a gate that cannot be evaluated.\n";

struct gate_args {
    char *argv[GATE_ARGV_MAX];
    int argc;
    int profile_only; /* --confidence or --on-inconclusive given */
    int db_only;      /* --window, --by, --expect-rate or --tiers given */
    int ngates;
    const char *db, *db_opt; /* --db FILE or --clickhouse URL */
};

/* Append "--name", value to the tool's command line. */
static int push(struct gate_args *a, const char *opt, const char *val)
{
    if (a->argc + 3 > GATE_ARGV_MAX)
        return -1;
    a->argv[a->argc++] = (char *)opt;
    if (val)
        a->argv[a->argc++] = (char *)val;
    return 0;
}

enum {
    G_GATE = 256,
    G_DB,
    G_ALLOW,
    G_CONF,
    G_INCONC,
    G_SUMMARY,
    G_JUNIT,
    G_WINDOW,
    G_BY,
    G_RATE,
    G_TIERS,
    G_CH_URL,
    G_CH_CLUSTER,
    G_CH_DATABASE,
    G_HELP
};

static const struct option gate_opts[] = {
    {"gate", required_argument, NULL, G_GATE},
    {"db", required_argument, NULL, G_DB},
    {"allow-missing", no_argument, NULL, G_ALLOW},
    {"confidence", required_argument, NULL, G_CONF},
    {"on-inconclusive", required_argument, NULL, G_INCONC},
    {"summary", required_argument, NULL, G_SUMMARY},
    {"junit", required_argument, NULL, G_JUNIT},
    {"window", required_argument, NULL, G_WINDOW},
    {"by", required_argument, NULL, G_BY},
    {"expect-rate", required_argument, NULL, G_RATE},
    {"tiers", required_argument, NULL, G_TIERS},
    {"clickhouse", required_argument, NULL, G_CH_URL},
    {"cluster", required_argument, NULL, G_CH_CLUSTER},
    {"database", required_argument, NULL, G_CH_DATABASE},
    {"help", no_argument, NULL, G_HELP},
    {NULL, 0, NULL, 0},
};

/* The options common to both engines keep their names; each engine spells a gate
 * its own way (--fail-if, --gate). */
static int collect(struct gate_args *a, int c, const char *arg, const char *gate_opt)
{
    static const char *const names[] = {
        [G_ALLOW - G_GATE] = "--allow-missing",
        [G_CONF - G_GATE] = "--confidence",
        [G_INCONC - G_GATE] = "--on-inconclusive",
        [G_SUMMARY - G_GATE] = "--summary",
        [G_JUNIT - G_GATE] = "--junit",
        [G_WINDOW - G_GATE] = "--window",
        [G_BY - G_GATE] = "--by",
        [G_RATE - G_GATE] = "--expect-rate",
        [G_TIERS - G_GATE] = "--tiers",
        [G_CH_CLUSTER - G_GATE] = "--cluster",
        [G_CH_DATABASE - G_GATE] = "--database",
    };

    if (c == G_GATE)
        return a->ngates++, push(a, gate_opt, arg);
    if (c == G_DB || c == G_CH_URL)
        return 0;
    a->profile_only |= c == G_CONF || c == G_INCONC;
    a->db_only |= c == G_WINDOW || c == G_BY || c == G_RATE || c == G_TIERS || c == G_CH_CLUSTER ||
                  c == G_CH_DATABASE;
    return push(a, names[c - G_GATE], arg);
}

/* Two passes over argv: the first finds --db (which decides the engine and how a
 * gate is spelt), the second builds the engine's command line. */
static int scan(struct gate_args *a, int argc, char **argv, const char *gate_opt)
{
    int c;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", gate_opts, NULL)) != -1) {
        if (c == '?')
            return sf_cmd_usage_error("gate", "unknown option or missing argument",
                                      argv[optind - 1]);
        if (c == G_HELP || c == 'h') {
            fputs(usage_text, stdout);
            return SF_EXIT_OK;
        }
        if (gate_opt == NULL && (c == G_DB || c == G_CH_URL)) { /* the first pass */
            if (a->db)
                return sf_cmd_usage_error("gate", "give one of --db FILE or --clickhouse URL",
                                          optarg);
            a->db = optarg;
            a->db_opt = c == G_DB ? "--db" : "--clickhouse";
        }
        if (gate_opt && collect(a, c, optarg, gate_opt) < 0)
            return sf_cmd_usage_error("gate", "too many options", NULL);
    }
    return -1;
}

int sf_cmd_gate(int argc, char **argv)
{
    struct gate_args a;
    int rc;

    memset(&a, 0, sizeof(a));
    if ((rc = scan(&a, argc, argv, NULL)) >= 0)
        return rc;
    if (a.db) {
        char *head[] = {"inflect", (char *)a.db_opt, (char *)a.db,
                        "--json",  "/dev/null",      "--quiet"};
        for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
            a.argv[a.argc++] = head[i];
    } else {
        a.argv[a.argc++] = "diff";
        a.argv[a.argc++] = "--no-diff";
        a.argv[a.argc++] = "-q";
    }
    if ((rc = scan(&a, argc, argv, a.db ? "--gate" : "--fail-if")) >= 0)
        return rc;
    if (a.ngates == 0)
        return sf_cmd_usage_error("gate", "no --gate given: nothing to check", NULL);
    if (a.db && a.profile_only)
        return sf_cmd_usage_error("gate",
                                  "--confidence and --on-inconclusive apply to two profiles (a "
                                  "database's gates have no sample-count interval)",
                                  NULL);
    if (a.db && optind != argc)
        return sf_cmd_usage_error("gate", "--db takes no profiles", argv[optind]);
    if (!a.db && a.db_only)
        return sf_cmd_usage_error("gate",
                                  "--window, --by, --expect-rate, --tiers, --cluster and "
                                  "--database go with --db or --clickhouse",
                                  NULL);
    if (!a.db && argc - optind != 2)
        return sf_cmd_usage_error("gate", "needs BASE.folded and NEW.folded, or --db FILE", NULL);
    for (int i = optind; i < argc && a.argc + 1 < GATE_ARGV_MAX; i++)
        a.argv[a.argc++] = argv[i];
    a.argv[a.argc] = NULL;
    return sf_run_tool(a.db ? inflect_main : diff_main, a.argv);
}

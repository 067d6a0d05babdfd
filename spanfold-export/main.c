/* main.c - spanfold-export: write a spanfold database's spans and span-attributed
 * samples in the formats of the tools people already use.
 *
 *   spanfold-export --db spans.db --format otlp > spans.jsonl       (Jaeger UI, collectors)
 *   spanfold-export --db spans.db --format zipkin > spans.json
 *   spanfold-export --db spans.db --format chrome > trace.json      (Perfetto, chrome://tracing)
 *   spanfold-export --db spans.db --format speedscope > prof.json   (one profile per span)
 *   spanfold-export --db spans.db --format pprof -o cpu.pb.gz       (span_id/trace_id labels)
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "sf_clock.h"
#include "sf_hex.h"
#include "sf_opt.h"

#define TOOL "spanfold-export"

/* The one list of formats: --format looks names up here, --help and the unknown-format
 * message list them from it (a "\n" in help continues on an indented line), and the
 * hidden --list-formats prints the names for the tests. */
static const struct ex_format {
    const char *name;
    int (*write)(struct ex_ctx *);
    const char *help;
} formats[] = {
    {"otlp", otlp_write, "OTLP/JSON traces, one {\"resourceSpans\":...} per line (JSON Lines)"},
    {"zipkin", zipkin_write, "Zipkin v2 JSON array (POST /api/v2/spans)"},
    {"chrome", chrome_write,
     "Chrome Trace Event / Perfetto JSON: spans as async events, samples as\n"
     "instant events on their threads, one clock (the capture clock)"},
    {"speedscope", speedscope_write,
     "speedscope JSON, one sampled profile per span (+ unattributed)"},
    {"pprof", pprof_write,
     "gzip-compressed pprof protobuf, samples labelled span_id, trace_id,\n"
     "span_name (the labels Pyroscope links traces to profiles by)"},
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

static void usage(FILE *f)
{
    fputs("usage: spanfold-export --db FILE --format FORMAT [filters] [-o FILE]\n"
          "Write spans and span-attributed perf samples from a spanfold database.\n\n"
          "Formats:\n",
          f);
    for (size_t i = 0; i < N_FORMATS; i++) {
        fprintf(f, "  %-12s", formats[i].name);
        for (const char *h = formats[i].help; *h; h++)
            fputs(*h == '\n' ? "\n              " : (char[]){*h, 0}, f);
        fputc('\n', f);
    }
    fprintf(f,
            "\n"
            "Filters (all formats; samples follow the spans they are attributed to):\n"
            "  --trace ID          trace id (32 hex, or the low 16 of a 64-bit id)\n"
            "  --span ID           span id (16 hex)\n"
            "  --from T, --to T    request start within [T, T): epoch seconds[.frac]\n"
            "  --service NAME      service (see --service-map; default the authority's host)\n"
            "  --grpc-method M     Method or package.Service/Method\n"
            "  --sampled 0|1       sampling decision of the span's context\n"
            "  --all               also spans without trace context (deterministic synthetic ids,\n"
            "                      attribute spanfold.synthetic_ids)\n"
            "  --service-map MAP   \"authority=name,...\", e.g. \"127.0.0.1:8080=checkout\"\n"
            "  --complete-only     leave out sources that are not complete (interrupted, failed,\n"
            "                      or being ingested now); without it they are exported and\n"
            "                      named in a warning on stderr\n"
            "  -o, --output FILE   write here (default stdout)\n"
            "  --help, --version\n"
            "Exit status: 0 ok, 2 usage error or unreadable database.\n");
}

static int parse_time(const char *s, int64_t *ns)
{
    return sf_clock_parse_ts(s, strlen(s), ns);
}

static int lower_hex(const char *s, size_t want1, size_t want2)
{
    size_t n = strlen(s);

    return (n == want1 || n == want2) && sf_hex_is_lower(s, n);
}

static int parse_args(struct ex_ctx *c, const char **format, const char **out, int argc,
                      char **argv)
{
    enum {
        O_DB = 256,
        O_FORMAT,
        O_TRACE,
        O_SPAN,
        O_FROM,
        O_TO,
        O_SERVICE,
        O_GRPC,
        O_SAMPLED,
        O_ALL,
        O_MAP,
        O_COMPLETE,
        O_HELP,
        O_VERSION
    };
    static const struct option opts[] = {
        {"db", required_argument, 0, O_DB},           {"format", required_argument, 0, O_FORMAT},
        {"trace", required_argument, 0, O_TRACE},     {"span", required_argument, 0, O_SPAN},
        {"from", required_argument, 0, O_FROM},       {"to", required_argument, 0, O_TO},
        {"service", required_argument, 0, O_SERVICE}, {"grpc-method", required_argument, 0, O_GRPC},
        {"sampled", required_argument, 0, O_SAMPLED}, {"all", no_argument, 0, O_ALL},
        {"service-map", required_argument, 0, O_MAP}, {"complete-only", no_argument, 0, O_COMPLETE},
        {"output", required_argument, 0, 'o'},        {"help", no_argument, 0, O_HELP},
        {"version", no_argument, 0, O_VERSION},       {0, 0, 0, 0}};
    int o;

    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case O_DB:
            c->db_path = optarg;
            break;
        case O_FORMAT:
            *format = optarg;
            break;
        case O_TRACE:
            if (!lower_hex(optarg, 32, 16))
                return ex_fail("--trace takes 32 (or 16) lowercase hex digits, not '%s'", optarg);
            c->flt.trace_id = optarg;
            break;
        case O_SPAN:
            if (!lower_hex(optarg, 16, 16))
                return ex_fail("--span takes 16 lowercase hex digits, not '%s'", optarg);
            c->flt.span_id = optarg;
            break;
        case O_FROM:
        case O_TO:
            if (parse_time(optarg, o == O_FROM ? &c->flt.from_ns : &c->flt.to_ns))
                return ex_fail("bad time '%s' (epoch seconds, e.g. 1795946504.5)", optarg);
            break;
        case O_SERVICE:
            c->flt.service = optarg;
            break;
        case O_GRPC:
            c->flt.grpc_method = optarg;
            break;
        case O_SAMPLED:
            if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0)
                return ex_fail("--sampled takes 0 or 1");
            c->flt.sampled = optarg[0] - '0';
            break;
        case O_ALL:
            c->flt.all = 1;
            break;
        case O_MAP:
            c->service_map = optarg;
            break;
        case O_COMPLETE:
            c->complete_only = 1;
            break;
        case 'o':
            *out = optarg;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            exit(0);
        case O_VERSION:
            sf_opt_print_version(stdout, TOOL);
            exit(0);
        default:
            usage(stderr);
            return 2;
        }
    }
    if (c->db_path == NULL || *format == NULL || optind != argc) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* The error for a --format not in formats[], naming those that are. */
static int unknown_format(const char *format)
{
    char names[256];
    size_t len = 0;

    names[0] = 0;
    for (size_t i = 0; i < N_FORMATS && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
                                formats[i].name);
    return ex_fail("unknown format '%s' (%s)", format, names);
}

int spanfold_export_main(int argc, char **argv)
{
    struct ex_ctx c = {.flt = {.from_ns = SF_DB_NULL, .to_ns = SF_DB_NULL, .sampled = -1}};
    const char *format = NULL, *out = NULL;
    int (*write)(struct ex_ctx *) = NULL;
    struct sf_err err;
    char note[700];
    int rc;

    if (argc == 2 && strcmp(argv[1], "--list-formats") == 0) {
        /* hidden: the format names, one a line (tests/spanfold-export/t_formats.sh) */
        for (size_t i = 0; i < N_FORMATS; i++)
            printf("%s\n", formats[i].name);
        return 0;
    }
    if ((rc = parse_args(&c, &format, &out, argc, argv)))
        return rc;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(format, formats[i].name) == 0)
            write = formats[i].write;
    if (write == NULL)
        return unknown_format(format);
    sf_err_clear(&err);
    if (access(c.db_path, R_OK) != 0)
        return ex_fail("%s: cannot read the database", c.db_path);
    if (sf_db_open_mode(&c.db, c.db_path, SF_DB_READ, &err))
        return ex_fail("%s: %s", c.db_path, err.msg);
    if (sf_db_partial_note(c.db, c.complete_only, note, sizeof(note), &err)) {
        sf_db_close(c.db, NULL);
        return ex_fail("%s: %s", c.db_path, err.msg);
    }
    if (note[0])
        fprintf(stderr, TOOL ": %s: warning: %s\n", c.db_path, note);
    c.out = out ? fopen(out, "wb") : stdout;
    if (c.out == NULL) {
        sf_db_close(c.db, NULL);
        return ex_fail("failed to open %s for writing", out);
    }
    rc = write(&c);
    if (fflush(c.out) != 0 || (out && fclose(c.out) != 0))
        rc = ex_fail("failed to write %s", out ? out : "stdout");
    sf_db_close(c.db, NULL);
    fprintf(stderr, TOOL ": %s: %llu spans, %llu samples", format, (unsigned long long)c.spans,
            (unsigned long long)c.samples);
    if (c.skipped)
        fprintf(stderr, "; %llu spans without trace context left out (--all includes them)",
                (unsigned long long)c.skipped);
    fputc('\n', stderr);
    return rc;
}

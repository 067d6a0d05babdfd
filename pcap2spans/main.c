/* main.c - pcap2spans: packet captures to spans (CLI and driver only).
 *
 * pcap.c reads each capture through link.c, ip.c and tcp.c into the application
 * parsers (tls.c, h1.c, h2.c); out.c writes spans to the database and/or NDJSON.
 */
#include <assert.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2s.h"
#include "par.h"
#include "sf_opt.h"
#include "tls.h"

static void usage(FILE *f)
{
    fputs(
        "usage: pcap2spans [--db FILE] [--ndjson] [--keylog FILE]... [-j N] [--strict]\n"
        "                  [--quiet] [limits] FILE... | -\n"
        "\n"
        "Reads pcap/pcapng captures (\"-\" is stdin), reassembles TCP, parses HTTP/1.1,\n"
        "HTTP/2 and gRPC, in the clear or inside TLS, and writes one span per exchange with\n"
        "every trace context found.  TLS connections get their handshake facts (version,\n"
        "suite, SNI, ALPN, 0-RTT verdict, alerts) and are decrypted with a key log.\n"
        "\n"
        "  --db FILE          write sources, connections, spans and contexts to the spanfold\n"
        "                     database FILE (created or migrated)\n"
        "  --wait             when another process is ingesting the same capture into FILE,\n"
        "                     wait for it to end (default: say so and exit 2)\n"
        "  --ndjson           one JSON object per span on stdout (the default without --db)\n"
        "  --keylog FILE      TLS key log (NSS SSLKEYLOGFILE format), several allowed; secrets in\n"
        "                     a pcapng Decryption Secrets Block are used as well\n"
        "  -j, --jobs N       read N inputs at a time, one thread each (1..64) [1]; one\n"
        "                     writer keeps input order: output as with -j 1\n"
        "  --keep-header NAME keep this request header for the sampling attributes\n"
        "                     (docs/pcap2spans.md#attributes), repeatable; NAME* keeps a\n"
        "                     prefix; beside the default list (user-agent, x-envoy-*, ...)\n"
        "  --strict           stop at the first error\n"
        "  --quiet            no progress and no summary on stderr\n"
        "  --help, --version\n"
        "limits (caps on memory; defaults in brackets):\n"
        "  --max-flows N          open TCP connections; the idlest is closed first [100000]\n"
        "  --max-ooo-bytes N      out-of-order bytes buffered per direction [1048576]\n"
        "  --max-ooo-segments N   out-of-order segments buffered per direction [131072]\n"
        "  --max-header-bytes N   one HTTP/1 header section / HTTP/2 header block [1048576]\n"
        "  --max-streams N        open HTTP/2 streams per connection [1000]\n"
        "  --max-field-bytes N    one decoded header field [1048576]\n"
        "  --max-hpack-table N    largest HPACK dynamic table accepted [65536]\n"
        "  --max-rpc-bytes N      one JSON-RPC body or SSE event read for its calls [16777216]\n"
        "  --idle-timeout DUR     close flows idle this long in capture time [300s]\n"
        "\n"
        "Exit status: 0 ok; 1 errors were reported on some packets (they were skipped);\n"
        "2 usage error, unreadable or damaged capture (what came before the damage is kept).\n",
        f);
}

enum {
    OPT_DB = 256,
    OPT_NDJSON,
    OPT_KEYLOG,
    OPT_STRICT,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION,
    OPT_FLOWS,
    OPT_OOO,
    OPT_HDR,
    OPT_OOO_SEGS,
    OPT_STREAMS,
    OPT_FIELD,
    OPT_HPACK,
    OPT_RPC,
    OPT_IDLE,
    OPT_WAIT,
    OPT_KEEP,
    OPT_JOBS = 'j',
};

static const struct option opts[] = {
    {"db", required_argument, NULL, OPT_DB},
    {"ndjson", no_argument, NULL, OPT_NDJSON},
    {"keylog", required_argument, NULL, OPT_KEYLOG},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"max-flows", required_argument, NULL, OPT_FLOWS},
    {"max-ooo-bytes", required_argument, NULL, OPT_OOO},
    {"max-ooo-segments", required_argument, NULL, OPT_OOO_SEGS},
    {"max-header-bytes", required_argument, NULL, OPT_HDR},
    {"max-streams", required_argument, NULL, OPT_STREAMS},
    {"max-field-bytes", required_argument, NULL, OPT_FIELD},
    {"max-hpack-table", required_argument, NULL, OPT_HPACK},
    {"max-rpc-bytes", required_argument, NULL, OPT_RPC},
    {"idle-timeout", required_argument, NULL, OPT_IDLE},
    {"wait", no_argument, NULL, OPT_WAIT},
    {"keep-header", required_argument, NULL, OPT_KEEP},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {NULL, 0, NULL, 0},
};

static int size_opt(const char *name, const char *arg, size_t *out)
{
    int64_t v;

    if (sf_opt_i64(arg, 1, INT64_C(1) << 40, &v) < 0) {
        fprintf(stderr, "pcap2spans: --%s: expected a positive number, got '%s'\n", name, arg);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* What the command line sets beside the context. */
struct args {
    struct p2s_out_opts so;
    const char **keylogs; /* as many as given: per-session key log dumps are common */
    int nkeylogs;
    int jobs;
};

/* Parse the command line into ctx and a; returns 0, 1 (exit 0 now) or -1. */
static int parse_args(struct p2s_ctx *ctx, struct args *a, int argc, char **argv)
{
    struct p2s_limits *l = &ctx->lim;
    struct p2s_out_opts *so = &a->so;
    int64_t v;
    int c, bad = 0;

    while ((c = getopt_long(argc, argv, "hj:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            so->db_path = optarg;
            break;
        case OPT_NDJSON:
            so->ndjson = 1;
            break;
        case OPT_WAIT:
            so->wait = 1;
            break;
        case OPT_KEYLOG:
            if (a->keylogs == NULL &&
                (a->keylogs = calloc((size_t)argc, sizeof(*a->keylogs))) == NULL) {
                fprintf(stderr, "pcap2spans: out of memory\n");
                return -1;
            }
            assert(a->nkeylogs < argc); /* each --keylog takes an argument of argv */
            a->keylogs[a->nkeylogs++] = optarg;
            break;
        case OPT_JOBS:
            if (sf_opt_i64(optarg, 1, P2S_MAX_JOBS, &v) < 0) {
                fprintf(stderr, "pcap2spans: -j: expected 1..%d, got '%s'\n", P2S_MAX_JOBS, optarg);
                bad = -1;
            }
            a->jobs = (int)v;
            break;
        case OPT_KEEP:
            if (sf_attrs_keep_add(&l->keep, optarg) < 0) {
                fprintf(stderr,
                        "pcap2spans: --keep-header: '%s' is not a header name (or NAME*) of "
                        "1..63 characters, or more than %d names\n",
                        optarg, SF_ATTR_KEEP_MAX);
                bad = -1;
            }
            break;
        case OPT_STRICT:
            ctx->strict = 1;
            break;
        case OPT_QUIET:
            ctx->quiet = 1;
            break;
        case 'h':
        case OPT_HELP:
            usage(stdout);
            return 1;
        case OPT_VERSION:
            sf_opt_print_version(stdout, "pcap2spans");
            return 1;
        case OPT_FLOWS:
            bad |= size_opt("max-flows", optarg, &l->max_flows);
            break;
        case OPT_OOO:
            bad |= size_opt("max-ooo-bytes", optarg, &l->max_ooo_bytes);
            break;
        case OPT_OOO_SEGS:
            bad |= size_opt("max-ooo-segments", optarg, &l->max_ooo_segments);
            break;
        case OPT_HDR:
            bad |= size_opt("max-header-bytes", optarg, &l->max_header_bytes);
            break;
        case OPT_STREAMS:
            bad |= size_opt("max-streams", optarg, &l->max_streams);
            break;
        case OPT_FIELD:
            bad |= size_opt("max-field-bytes", optarg, &l->max_field_bytes);
            break;
        case OPT_HPACK:
            bad |= size_opt("max-hpack-table", optarg, &l->max_hpack_table);
            break;
        case OPT_RPC:
            bad |= size_opt("max-rpc-bytes", optarg, &l->max_rpc_bytes);
            break;
        case OPT_IDLE:
            if (sf_opt_duration_ns(optarg, &l->idle_timeout_ns) < 0 || l->idle_timeout_ns <= 0) {
                fprintf(stderr, "pcap2spans: --idle-timeout: bad duration '%s'\n", optarg);
                bad = -1;
            }
            break;
        default:
            bad = -1;
            break;
        }
    }
    if (bad)
        return -1;
    if (optind >= argc) {
        fprintf(stderr, "pcap2spans: no input (give capture files, or - for stdin)\n");
        return -1;
    }
    if (so->db_path == NULL)
        so->ndjson = 1;
    return 0;
}

/* An error about a key log or a capture's secrets, on stderr. */
static void print_file_error(const struct sf_err *err, const char *file)
{
    char line[SF_ERR_MSG_MAX + 256];

    sf_err_format(err, "pcap2spans", file, line, sizeof(line));
    fprintf(stderr, "%s\n", line);
}

/* --keylog files into the context's secrets; returns 0 or -1 (reported). */
static int load_keylogs(struct p2s_ctx *ctx, const char *const *keylogs, int n)
{
    struct sf_err err;

    if (p2s_tls_keys_new(&ctx->tls_keys) < 0) {
        fprintf(stderr, "pcap2spans: out of memory\n");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        sf_err_clear(&err);
        if (p2s_tls_keys_load_file(ctx->tls_keys, keylogs[i], &err) < 0) {
            print_file_error(&err, keylogs[i]);
            return -1;
        }
    }
    if (p2s_tls_keys_conflicts(ctx->tls_keys) > TLS_KEYS_CONFLICTS_SAID)
        fprintf(stderr,
                "pcap2spans: %zu secrets in the key logs differ from an earlier one "
                "for the same client random and label (the first %d said above)\n",
                p2s_tls_keys_conflicts(ctx->tls_keys), TLS_KEYS_CONFLICTS_SAID);
    return 0;
}

/* pcapng Decryption Secrets Blocks of every input, before any is read (libpcap does not
 * expose them): the secrets are the same for every input, whatever -j. */
static void load_dsbs(struct p2s_ctx *ctx, char **paths, int n)
{
    struct sf_err err;

    for (int i = 0; i < n; i++) {
        sf_err_clear(&err);
        if (p2s_tls_keys_load_dsb(ctx->tls_keys, paths[i], &err) < 0) {
            print_file_error(&err, paths[i]);
            ctx->st.errors++;
        }
    }
}

/* Every input in order; returns the exit status so far. */
static int read_inputs(struct p2s_ctx *ctx, char **paths, int n)
{
    int status = SF_EXIT_OK, rc;

    for (int i = 0; i < n; i++) {
        rc = p2s_pcap_read(ctx, paths[i]);
        if (rc < 0 && rc != SF_E_DUP)
            status = SF_EXIT_USAGE;
        if (rc == SF_E_DB || (ctx->strict && ctx->st.errors))
            break;
        ctx->stop = 0;
    }
    return status;
}

int pcap2spans_main(int argc, char **argv)
{
    static char outbuf[1 << 16]; /* stdout buffer: must outlive main for exit() */
    struct args a = {.jobs = 1};
    struct p2s_ctx ctx;
    struct sf_err err;
    int rc, status = SF_EXIT_USAGE;

    if (p2s_ctx_init(&ctx) < 0) {
        fprintf(stderr, "pcap2spans: out of memory\n");
        goto out;
    }
    rc = parse_args(&ctx, &a, argc, argv);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "Try 'pcap2spans --help'.\n");
        status = rc < 0 ? SF_EXIT_USAGE : SF_EXIT_OK;
        goto out;
    }
    if (load_keylogs(&ctx, a.keylogs, a.nkeylogs) < 0)
        goto out;
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    /* Exchanges allocate and free trace-context sets (~24 KiB) at a high rate: keep
     * freed memory instead of returning it to the kernel and faulting it back in. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    sf_err_clear(&err);
    if (p2s_out_open(&ctx.out, &a.so, &err) < 0) {
        fprintf(stderr, "pcap2spans: %s: %s\n", a.so.db_path, err.msg);
        goto out;
    }
    load_dsbs(&ctx, argv + optind, argc - optind);
    if (a.jobs > 1 && argc - optind > 1)
        status = p2s_par_read(&ctx, argv + optind, argc - optind, a.jobs);
    else
        status = read_inputs(&ctx, argv + optind, argc - optind);
    if (status == SF_EXIT_OK && ctx.st.errors)
        status = SF_EXIT_FINDINGS;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "pcap2spans: writing stdout failed\n");
        status = SF_EXIT_USAGE;
    }
    if (!ctx.quiet)
        p2s_summary(&ctx, stderr);
out:
    p2s_ctx_free(&ctx);
    p2s_tls_keys_free(ctx.tls_keys);
    free(a.keylogs);
    if (p2s_out_close(ctx.out, &err) < 0) {
        fprintf(stderr, "pcap2spans: database: %s\n", err.msg);
        status = SF_EXIT_USAGE;
    }
    return status;
}

/* ingest.c - spanfold ingest: every artefact of an incident into one database.
 *
 *   spanfold ingest --db FILE [--quiet] [-j N] PATH...
 *   spanfold ingest --clickhouse URL [--cluster NAME] [--database DB] [--db FILE] PATH...
 *
 * Each PATH is a file or a folder (walked, in name order).  Every file is recognised by
 * its content (lib/sf_sniff), through gzip, xz or zstd (lib/sf_decomp), never by its
 * name, and handed to the tool that reads it, linked in: captures to pcap2spans (with
 * every key log found as --keylog), perf script text and perf.data to perf-fold (which
 * reads perf.data itself, --call-graph dwarf stacks unwound; one recorded on another
 * architecture or byte order goes through `perf script`), tracefs and spantrace text to
 * tracefs2spans, which fits the clocks and attributes the samples to spans.  Then one
 * line per input says what it gave, and what is still missing for the join is said in
 * words.  With --clickhouse the database is then pushed (spanfold push, linked in);
 * without --db it is a temporary file, removed afterwards.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../perf-fold/perf_fold.h"
#include "ch_pull.h"
#include "sf_db.h"
#include "sf_decomp.h"
#include "sf_err.h"
#include "sf_opt.h"
#include "sf_perfdata.h"
#include "sf_sniff.h"
#include "spanfold.h"

#define HEAD_BYTES (64 * 1024)

struct input {
    char *path; /* as the user named it (or as found in a walked folder) */
    char *feed; /* what the tool reads: path itself, or a decompressed temporary file */
    enum sf_kind kind;
    enum sf_comp comp;
    int named;  /* given on the command line, not found in a folder */
    int broken; /* could not be read or decompressed at all */
    int stream; /* a FIFO, pipe or device: spooled to a file once, then read from it */
    int skip;   /* found in a folder but not a file to read: note says why */
    int plain;  /* feed holds the input decompressed (decompress ran) */
    int text;   /* a perf.data read as perf script's text (--call-graph dwarf) */
    char note[SF_ERR_MSG_MAX + 128]; /* why it was skipped, or what went wrong on the way */
};

struct ingest {
    const char *db;
    int quiet;
    const char *jobs; /* -j N, handed to pcap2spans (checked there); NULL: 1 */
    struct input *in;
    size_t n, cap;
    char tmpdir[64]; /* short: TMPDIR is used only when under 32 bytes */
    int status;
    int64_t stream_wait_s; /* --stream-wait: a stream silent this long is an error */
    int64_t stream_max;    /* --stream-max: the most bytes spooled from one stream */
};

#define STREAM_WAIT_S 60
#define STREAM_MAX    (INT64_C(4) << 30)

static void usage(FILE *f)
{
    fputs("usage: spanfold ingest --db FILE [--quiet] [-j N] PATH...\n"
          "\n"
          "Reads every artefact of an incident into one database: each PATH is a file or\n"
          "a folder (walked), and every file is recognised by its content, never its name,\n"
          "also when compressed with gzip, xz or zstd.\n"
          "\n"
          "  --db FILE          the spanfold database (created when missing)\n"
          "  --quiet            only errors and what is missing on stderr\n"
          "  -j, --jobs N       read N captures at a time (pcap2spans -j N); the database is\n"
          "                     the same as with -j 1\n"
          "  --clickhouse URL   then push the database to ClickHouse (spanfold push; without\n"
          "                     --db through a temporary file); --cluster NAME, --database DB\n"
          "                     as spanfold push takes them (docs/scale.md)\n"
          "  --stream-wait S    a FIFO, pipe or device named as PATH is read once into a\n"
          "                     temporary file; no data for S seconds is an error (60)\n"
          "  --stream-max BYTES the most read from one such stream (4G; K, M, G suffixes)\n"
          "  -h, --help         this text\n"
          "\n"
          "What it reads, and with which tool (linked in, same code as the tool):\n"
          "  pcap, pcapng       pcap2spans: spans, connections, trace contexts\n"
          "  NSS key log        pcap2spans --keylog: TLS decryption of the captures\n"
          "  perf script text   perf-fold --db: samples and stacks\n"
          "  perf.data          perf-fold --db, read directly (--call-graph dwarf stacks\n"
          "                     unwound; another architecture's: through perf script)\n"
          "  tracefs, spantrace tracefs2spans --db: span markers, clock fits, attribution\n"
          "  trace.dat          the same, read with libtracecmd (trace-cmd record/extract)\n"
          "Then one line per input (kind, counts, clock), the clock fits, and what is still\n"
          "missing for the join (docs/recording.md says how to record each piece).\n"
          "\n"
          "Exit status: 0 ok; 1 some records of an input were skipped (said above);\n"
          "2 usage error, an unreadable or damaged input, a named file of no known kind,\n"
          "or nothing to ingest at all.\n",
          f);
}

static int add_input(struct ingest *g, const char *path, int named)
{
    struct input *in;

    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        struct input *p = realloc(g->in, cap * sizeof(*p));

        if (p == NULL)
            return -1;
        g->in = p;
        g->cap = cap;
    }
    in = &g->in[g->n++];
    memset(in, 0, sizeof(*in));
    if ((in->path = strdup(path)) == NULL)
        return -1;
    in->named = named;
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walk a folder in name order; hidden entries and symbolic links to folders are skipped
 * (a link loop must not hang an ingest). */
static int walk(struct ingest *g, const char *dir, int depth)
{
    DIR *d;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (depth > 32) {
        fprintf(stderr, "spanfold ingest: %s: folders nested too deep, not walked\n", dir);
        return 0;
    }
    if ((d = opendir(dir)) == NULL) {
        fprintf(stderr, "spanfold ingest: %s: %s\n", dir, strerror(errno));
        g->status = SF_EXIT_USAGE;
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **p = realloc(names, (cap = cap ? 2 * cap : 32) * sizeof(*p));

            if (p == NULL) {
                rc = -1;
                break;
            }
            names = p;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;

        if ((names[n] = malloc(len)) == NULL) {
            rc = -1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (rc == 0)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        struct stat st, lst;
        const char *why = NULL;

        if (rc != 0 || lstat(names[i], &lst) != 0) {
            free(names[i]);
            continue;
        }
        if (stat(names[i], &st) != 0)
            why = errno == ELOOP ? "a symbolic link loop" : "a symbolic link to nothing";
        else if (S_ISDIR(st.st_mode) && S_ISLNK(lst.st_mode))
            why = "a symbolic link to a folder, not followed (name the folder to walk it)";
        else if (S_ISDIR(st.st_mode))
            rc = walk(g, names[i], depth + 1);
        else if (S_ISREG(st.st_mode))
            rc = add_input(g, names[i], 0);
        else
            /* reading one could wait forever (a FIFO with no writer) or never end */
            why = S_ISFIFO(st.st_mode) ? "a FIFO, not read in a walked folder (name it to read it)"
                  : S_ISSOCK(st.st_mode) ? "a socket, not a file"
                                         : "a device, not read in a walked folder (name it to "
                                           "read it)";
        if (rc == 0 && why && (rc = add_input(g, names[i], 0)) == 0) {
            g->in[g->n - 1].skip = 1;
            snprintf(g->in[g->n - 1].note, sizeof(g->in[g->n - 1].note), "%s", why);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* The run's temporary folder, made on first use. */
static int make_tmpdir(struct ingest *g, struct input *in)
{
    const char *t = getenv("TMPDIR");

    if (g->tmpdir[0])
        return 0;
    snprintf(g->tmpdir, sizeof(g->tmpdir), "%s/spanfold-ingest.XXXXXX",
             t && strlen(t) < 32 ? t : "/tmp");
    if (mkdtemp(g->tmpdir) == NULL) {
        g->tmpdir[0] = 0;
        snprintf(in->note, sizeof(in->note), "no temporary folder: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Decompress in->path into a temporary file that the tool reads instead.  A damaged
 * stream keeps what came before the damage, and says where. */
static int decompress(struct ingest *g, struct input *in)
{
    struct sf_err err;
    char tmpl[160];
    int fd, rc;

    if (make_tmpdir(g, in) < 0)
        return -1;
    /* named after the input, so that a tool's message about it can be told apart */
    {
        const char *base = strrchr(in->path, '/');

        snprintf(tmpl, sizeof(tmpl), "%s/%.48s.XXXXXX", g->tmpdir, base ? base + 1 : in->path);
    }
    if ((fd = mkstemp(tmpl)) < 0) {
        snprintf(in->note, sizeof(in->note), "temporary file: %s", strerror(errno));
        return -1;
    }
    sf_err_clear(&err);
    rc = sf_dz_copy(in->feed ? in->feed : in->path, fd, &err);
    close(fd);
    if (in->feed)
        unlink(in->feed); /* a spooled stream: the decompressed copy replaces it */
    free(in->feed);
    if ((in->feed = strdup(tmpl)) == NULL)
        return -1;
    in->plain = 1;
    if (rc < 0) {
        snprintf(in->note, sizeof(in->note),
                 "%s at compressed byte %llu (the data before it is ingested)", err.msg,
                 (unsigned long long)err.off);
        g->status = SF_EXIT_USAGE;
    }
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A FIFO, pipe or device, read once into a temporary file: sniffing its head and the
 * tool reading it must see the same bytes, and a stream can be read only once.  Never
 * waits forever: no data for --stream-wait seconds (a FIFO nobody opened for writing,
 * a silent pipe) is an error, and so is more than --stream-max bytes (/dev/zero).
 * Returns 0 (in->feed is the file) or -1 (in->note says why). */
static int spool(struct ingest *g, struct input *in)
{
    char tmpl[160], buf[1 << 16];
    const char *base = strrchr(in->path, '/');
    int64_t total = 0, deadline;
    int fd, out, rc = -1;

    if (make_tmpdir(g, in) < 0)
        return -1;
    if ((fd = open(in->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
        snprintf(in->note, sizeof(in->note), "cannot open: %s", strerror(errno));
        return -1;
    }
    snprintf(tmpl, sizeof(tmpl), "%s/%.48s.XXXXXX", g->tmpdir, base ? base + 1 : in->path);
    if ((out = mkstemp(tmpl)) < 0) {
        snprintf(in->note, sizeof(in->note), "temporary file: %s", strerror(errno));
        close(fd);
        return -1;
    }
    deadline = now_ms() + g->stream_wait_s * 1000;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t left = deadline - now_ms();
        ssize_t n;

        if (left <= 0) {
            snprintf(in->note, sizeof(in->note),
                     "no data for %lld s%s (--stream-wait): %lld bytes read",
                     (long long)g->stream_wait_s, total ? "" : " (no writer?)", (long long)total);
            break;
        }
        if (poll(&p, 1, left > 1000000 ? 1000000 : (int)left) < 0 && errno != EINTR) {
            snprintf(in->note, sizeof(in->note), "poll: %s", strerror(errno));
            break;
        }
        if (p.revents == 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0) {
            snprintf(in->note, sizeof(in->note), "read error after %lld bytes: %s",
                     (long long)total, strerror(errno));
            break;
        }
        if (n == 0) { /* the writer closed it: the whole stream is here */
            rc = 0;
            break;
        }
        if (total + n > g->stream_max) {
            snprintf(in->note, sizeof(in->note),
                     "more than %lld bytes (--stream-max): not read to its end",
                     (long long)g->stream_max);
            break;
        }
        if (write(out, buf, (size_t)n) != n) {
            snprintf(in->note, sizeof(in->note), "temporary file: %s", strerror(errno));
            break;
        }
        total += n;
        deadline = now_ms() + g->stream_wait_s * 1000; /* a slow writer is no silent one */
    }
    close(fd);
    if (close(out) != 0 && rc == 0) {
        snprintf(in->note, sizeof(in->note), "temporary file: %s", strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        unlink(tmpl);
        return -1;
    }
    return (in->feed = strdup(tmpl)) ? 0 : -1;
}

/* perf.data: perf script with the fields perf-fold reads, into a temporary file. */
static const char perf_fields[] = "comm,pid,tid,cpu,time,period,event,ip,sym,dso";

/* Run perf script with args (NULL-terminated, after "perf script"), stdout into path
 * and stderr into errpath.  Returns 0 when it exited 0. */
static int run_perf_script(const char *path, const char *errpath, const char *const *args)
{
    const char *argv[20] = {"perf", "script"};
    pid_t pid;
    int fd, efd, st, k = 2;

    while (*args && k < 19)
        argv[k++] = *args++;
    argv[k] = NULL;
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
        return -1;
    if ((efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
        close(fd);
        return -1;
    }
    fflush(NULL);
    if ((pid = fork()) == 0) {
        dup2(fd, 1);
        dup2(efd, 2);
        execvp("perf", (char *const *)argv);
        _exit(127);
    }
    close(fd);
    close(efd);
    return pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ? -1 : 0;
}

/* perf's messages: all of them after a failure, else all but the notice that the
 * tracepoints' own -F replaced the general one (which this file asks for). */
static void perf_messages(const char *errpath, int failed)
{
    char line[1024];
    FILE *f = fopen(errpath, "r");

    while (f && fgets(line, sizeof(line), f))
        if (failed || strncmp(line, "Overriding previous field request", 33) != 0)
            fprintf(stderr, "perf: %s", line);
    if (f)
        fclose(f);
    unlink(errpath);
}

/* The fields to ask perf script for: perf stops ("Samples for 'cpu-clock' event do
 * not have CPU attribute set") when one is asked that an event did not record, so a
 * field whose sample_type bit some event lacks (cpu without -a or --sample-cpu, time
 * without -T) is left out, as the header's event descriptions say.  *tracepoints is
 * set when an event is one (type 2): their fields (trace) are asked for them alone. */
static void perf_fields_for(const char *header, char *fields, size_t n, int *tracepoints)
{
    static const struct {
        const char *field, *bit;
    } need[] = {{"cpu,", "CPU"}, {"time,", "TIME"}, {"pid,", "TID"}, {"tid,", "TID"}};
    int lacks[sizeof(need) / sizeof(need[0])] = {0};
    char line[4096], *p;
    FILE *f = fopen(header, "r");

    *tracepoints = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *st = strstr(line, "sample_type = "), *e;
        if (strncmp(line, "# event : ", 10) != 0 || st == NULL)
            continue;
        if ((p = strstr(line, ", type = 2,")) != NULL && p < st)
            *tracepoints = 1;
        st += 14;
        e = st + strcspn(st, ", \n");
        *e = 0;
        for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
            size_t bl = strlen(need[i].bit);
            int has = 0;
            for (p = st; p && *p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
                if (strncmp(p, need[i].bit, bl) == 0 && (p[bl] == '|' || p[bl] == 0))
                    has = 1;
            lacks[i] |= !has;
        }
    }
    if (f)
        fclose(f);
    snprintf(fields, n, "%s,", perf_fields);
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        if (lacks[i] && (p = strstr(fields, need[i].field)))
            memmove(p, p + strlen(need[i].field), strlen(p + strlen(need[i].field)) + 1);
    }
    fields[strlen(fields) - 1] = 0; /* the ',' added above */
}

static int perf_script(struct ingest *g, struct input *in)
{
    char out[160], hdr[160], errs[160], fields[sizeof(perf_fields) + 1];
    char tpf[sizeof(perf_fields) + 16];
    const char *src;
    int tracepoints, rc;

    if (in->comp != SF_COMP_NONE && !in->plain && decompress(g, in) < 0)
        return -1;
    if (system("command -v perf >/dev/null 2>&1") != 0) {
        snprintf(in->note, sizeof(in->note),
                 "perf is not installed (Debian: linux-perf); run  perf script --header --ns "
                 "-F %s -i FILE > perf.txt  where it is (leave out cpu for a recording made "
                 "without -a or --sample-cpu), and ingest perf.txt",
                 perf_fields);
        return -1;
    }
    if (make_tmpdir(g, in) < 0)
        return -1;
    src = in->feed ? in->feed : in->path;
    snprintf(out, sizeof(out), "%s/%zu.perf.txt", g->tmpdir, (size_t)(in - g->in));
    snprintf(hdr, sizeof(hdr), "%s/%zu.perf.hdr", g->tmpdir, (size_t)(in - g->in));
    snprintf(errs, sizeof(errs), "%s/%zu.perf.err", g->tmpdir, (size_t)(in - g->in));
    rc = run_perf_script(hdr, errs, (const char *[]){"--header-only", "-i", src, NULL});
    perf_messages(errs, rc < 0);
    if (rc < 0) {
        snprintf(in->note, sizeof(in->note),
                 "perf script --header-only failed (see its message above)");
        return -1;
    }
    perf_fields_for(hdr, fields, sizeof(fields), &tracepoints);
    unlink(hdr);
    /* tracepoints also with their fields (sched_switch's prev/next: off-CPU intervals) */
    snprintf(tpf, sizeof(tpf), "trace:%s,trace", fields);
    rc = run_perf_script(
        out, errs,
        tracepoints ? (const char *[]){"--header", "--ns", "-F", fields, "-F", tpf, "-i", src, NULL}
                    : (const char *[]){"--header", "--ns", "-F", fields, "-i", src, NULL});
    perf_messages(errs, rc < 0);
    if (rc < 0) {
        snprintf(in->note, sizeof(in->note), "perf script -F %s failed (see its message above)",
                 fields);
        return -1;
    }
    free(in->feed);
    in->feed = strdup(out);
    return in->feed ? 0 : -1;
}

/* A perf.data whose samples carry user stacks to unwind (perf record --call-graph
 * dwarf) that perf-fold cannot unwind (perfdata_unwinds: another architecture or byte
 * order), which perf script then reads.  Decompressed first. */
static int dwarf_recording(struct ingest *g, struct input *in)
{
    struct sf_pd *pd;
    struct sf_pd_record r;
    struct sf_err err;
    const struct sf_pd_info *info;
    int dwarf = 0;

    if (in->comp != SF_COMP_NONE && !in->plain && decompress(g, in) < 0)
        return 1; /* perf_script says why */
    sf_err_clear(&err);
    if (sf_pd_open(&pd, in->feed ? in->feed : in->path, &err) < 0)
        return 0; /* perf-fold says why */
    /* pipe mode: the events are described in the records before the data */
    while (sf_pd_next(pd, &r, &err) > 0 && r.type >= SF_PD_HEADER_ATTR)
        ;
    info = sf_pd_info(pd);
    for (size_t i = 0; i < info->nattr; i++)
        dwarf |= (info->attr[i].sample_type & SF_PD_S_STACK_USER) != 0;
    dwarf &= !perfdata_unwinds(info);
    sf_pd_close(pd);
    return dwarf;
}

static void classify(struct input *in)
{
    static unsigned char head[HEAD_BYTES];
    struct sf_err err;
    ssize_t n;
    int complete = 0;
    char why[200];

    sf_err_clear(&err);
    n = sf_dz_head(in->feed ? in->feed : in->path, head, sizeof(head), &in->comp, &complete, &err);
    if (n < 0) {
        in->kind = SF_KIND_UNKNOWN;
        in->broken = 1;
        if (err.off != UINT64_MAX)
            snprintf(in->note, sizeof(in->note), "%s (byte %llu)", err.msg,
                     (unsigned long long)err.off);
        else
            snprintf(in->note, sizeof(in->note), "%s", err.msg);
        return;
    }
    in->kind = sf_sniff_kind(head, (size_t)n, complete, why, sizeof(why));
    if (in->kind == SF_KIND_UNKNOWN)
        snprintf(in->note, sizeof(in->note), "%s", why);
}

/* Run a linked-in tool with stdout sent to /dev/null (perf-fold writes its fold there). */
static int run_quiet_stdout(int (*tool)(int, char **), char **argv)
{
    int saved, null, rc;

    fflush(stdout);
    saved = dup(1);
    null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0)
        return SF_EXIT_USAGE;
    dup2(null, 1);
    close(null);
    rc = sf_run_tool(tool, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

static void worst(struct ingest *g, int rc)
{
    if (rc > g->status)
        g->status = rc;
}

/* ---- what the database now holds ------------------------------------------------------ */

static int64_t q_int(sqlite3 *db, const char *sql, const char *arg)
{
    sqlite3_stmt *st;
    int64_t v = -1;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* "N samples of EVENT (not CPU samples: M sched:sched_switch, ...), K off-CPU
 * intervals" for perf source id. */
static void perf_counts(sqlite3 *db, const char *id, char *out, size_t n)
{
    int64_t off = q_int(db, "SELECT count(*) FROM offcpu WHERE source_id = ?1", id);
    sqlite3_stmt *st;
    size_t k;

    k = (size_t)snprintf(
        out, n, "%lld samples",
        (long long)q_int(db, "SELECT count(*) FROM samples WHERE source_id = ?1", id));
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT group_concat(event, ', ') FROM sample_events WHERE "
                           "source_id = ?1 AND stored), (SELECT group_concat(records || ' ' || "
                           "event, ', ') FROM sample_events WHERE source_id = ?1 AND NOT stored)",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && k < n) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL)
            k += (size_t)snprintf(out + k, n - k, " of %.60s", sqlite3_column_text(st, 0));
        if (sqlite3_column_type(st, 1) != SQLITE_NULL && k < n)
            k += (size_t)snprintf(out + k, n - k, " (not CPU samples, kept out: %.100s)",
                                  sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    if (off > 0 && k < n)
        snprintf(out + k, n - k, ", %lld off-CPU intervals", (long long)off);
}

/* The newest source row for a path: its id, status, clock and units. */
static void source_line(sqlite3 *db, const struct input *in)
{
    const char *shown = in->path;
    sqlite3_stmt *st;
    char counts[320] = "";
    int64_t id;

    if (sqlite3_prepare_v2(db,
                           "SELECT id, kind, status, clock, units, bad_units, coalesce(error, '')"
                           " FROM sources WHERE path = ?1 ORDER BY id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, in->feed ? in->feed : in->path, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        fprintf(stderr, "  %-11s %s: nothing stored%s%s\n", sf_kind_name(in->kind), shown,
                in->note[0] ? ": " : "", in->note);
        return;
    }
    id = sqlite3_column_int64(st, 0);
    {
        const char *kind = (const char *)sqlite3_column_text(st, 1);
        char idbuf[32];

        snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
        if (strcmp(kind, "pcap") == 0)
            snprintf(counts, sizeof(counts), "%lld spans on %lld connections (%lld partial)",
                     (long long)q_int(db, "SELECT count(*) FROM spans WHERE source_id = ?1", idbuf),
                     (long long)q_int(db, "SELECT count(*) FROM connections WHERE source_id = ?1",
                                      idbuf),
                     (long long)q_int(
                         db, "SELECT count(*) FROM spans WHERE source_id = ?1 AND partial", idbuf));
        else if (strcmp(kind, "perf") == 0)
            perf_counts(db, idbuf, counts, sizeof(counts));
        else {
            int64_t off = q_int(db, "SELECT count(*) FROM offcpu WHERE source_id = ?1", idbuf);
            int n =
                snprintf(counts, sizeof(counts), "%lld span events",
                         (long long)q_int(
                             db, "SELECT count(*) FROM span_events WHERE source_id = ?1", idbuf));
            if (off > 0 && n > 0 && (size_t)n < sizeof(counts)) /* spantrace --offcpu's lines */
                snprintf(counts + n, sizeof(counts) - (size_t)n, ", %lld off-CPU intervals",
                         (long long)off);
        }
    }
    fprintf(stderr, "  %-11s %s%s%s: %s, %lld of %lld %s skipped, clock %s, %s%s%s%s\n",
            sf_kind_name(in->kind), shown, in->comp ? " via " : "",
            in->comp ? sf_comp_name(in->comp) : "", counts, (long long)sqlite3_column_int64(st, 5),
            (long long)sqlite3_column_int64(st, 4),
            in->kind == SF_KIND_PCAP || in->kind == SF_KIND_PCAPNG ? "packets"
            : in->kind == SF_KIND_PERF_DATA && !in->text           ? "records"
                                                                   : "lines",
            (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 2),
            sqlite3_column_bytes(st, 6) ? " (" : "", (const char *)sqlite3_column_text(st, 6),
            sqlite3_column_bytes(st, 6) ? ")" : "");
    if (in->note[0])
        fprintf(stderr, "              note: %s\n", in->note);
    sqlite3_finalize(st);
}

/* Per process with a span's samples, what gave them their span (sf_db_coverage): how
 * far a flame graph of requests can be trusted. */
static void signals(const char *path)
{
    struct sf_db *db = NULL;
    struct sf_err err;

    sf_err_clear(&err);
    if (sf_db_open_mode(&db, path, SF_DB_READ, &err) == 0)
        sf_db_coverage_say(db, stderr, "              ", &err);
    if (db)
        sf_db_close(db, NULL);
}

static void missing_pieces(sqlite3 *db, const char *path, int nkeylogs, int quiet)
{
    int64_t spans = q_int(db, "SELECT count(*) FROM spans", NULL);
    int64_t samples = q_int(db, "SELECT count(*) FROM samples", NULL);
    int64_t markers = q_int(db, "SELECT count(*) FROM span_intervals", NULL);
    int64_t attributed = q_int(db, "SELECT count(*) FROM samples WHERE span_id IS NOT NULL", NULL);
    int64_t tls = q_int(db,
                        "SELECT count(*) FROM connections WHERE tls_version IS NOT NULL AND "
                        "NOT coalesce(decrypted, 0)",
                        NULL);
    sqlite3_stmt *st;

    if (!quiet &&
        sqlite3_prepare_v2(db,
                           "SELECT from_clock, to_clock, offset_ns, skew_ppm, points, residual_ns,"
                           " method FROM clock_fits ORDER BY id",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            fprintf(stderr,
                    "  clock fit   %s -> %s: offset %lld ns, skew %.3f ppm, %lld points, "
                    "residual %lld ns (%s)\n",
                    (const char *)sqlite3_column_text(st, 0),
                    (const char *)sqlite3_column_text(st, 1),
                    (long long)sqlite3_column_int64(st, 2), sqlite3_column_double(st, 3),
                    (long long)sqlite3_column_int64(st, 4), (long long)sqlite3_column_int64(st, 5),
                    (const char *)sqlite3_column_text(st, 6));
        sqlite3_finalize(st);
    }
    if (spans <= 0)
        fprintf(stderr, "missing: no capture, so no spans: record one with tcpdump or dumpcap "
                        "(docs/recording.md)\n");
    if (samples <= 0)
        fprintf(stderr, "missing: no CPU samples: record them with perf record -k mono -g "
                        "(docs/recording.md)\n");
    if (spans > 0 && samples > 0 && markers <= 0)
        fprintf(stderr, "missing: no span markers: samples cannot be attributed to spans; record "
                        "them with spantrace, see docs/recording.md\n");
    if (!quiet && samples > 0 && markers > 0)
        fprintf(stderr, "  attributed  %lld of %lld samples (%.1f %%) fall inside a span\n",
                (long long)attributed, (long long)samples,
                samples ? 100.0 * (double)attributed / (double)samples : 0.0);
    if (!quiet && samples > 0 && markers > 0)
        signals(path);
    if (tls > 0)
        fprintf(stderr,
                "missing: %lld TLS connections were not decrypted%s: give their key log "
                "(SSLKEYLOGFILE, docs/recording.md)\n",
                (long long)tls, nkeylogs ? " with the key logs given" : "");
}

/* ---- the run -------------------------------------------------------------------------- */

static char **argv_new(size_t cap)
{
    return calloc(cap + 1, sizeof(char *));
}

/* A file found in a walked folder and not read: its line with the reason. */
static void say_ignored(const struct input *in)
{
    fprintf(stderr, "  %-11s %s: ignored (%s)\n", sf_kind_name(in->kind), in->path,
            in->note[0] ? in->note : "no data");
}

static int run(struct ingest *g)
{
    size_t i, k, npcap = 0, nkeys = 0;
    char **av;
    int rc;

    for (i = 0; i < g->n; i++) {
        struct input *in = &g->in[i];

        if (in->skip) {
            in->kind = SF_KIND_UNKNOWN;
            if (!g->quiet)
                say_ignored(in);
            continue;
        }
        if (in->stream && spool(g, in) < 0) {
            in->broken = 1;
            in->kind = SF_KIND_UNKNOWN;
        } else {
            classify(in);
        }
        if (in->kind == SF_KIND_PERF_DATA && (in->text = dwarf_recording(g, in)) != 0) {
            if (perf_script(g, in) < 0) {
                fprintf(stderr, "spanfold ingest: %s: %s\n", in->path, in->note);
                worst(g, SF_EXIT_USAGE);
                in->kind = SF_KIND_UNKNOWN;
                in->named = 0; /* said already */
            }
        } else if (in->comp != SF_COMP_NONE && !in->plain && in->kind != SF_KIND_UNKNOWN &&
                   in->kind != SF_KIND_EMPTY) {
            if (decompress(g, in) < 0) {
                fprintf(stderr, "spanfold ingest: %s: %s\n", in->path, in->note);
                worst(g, SF_EXIT_USAGE);
                in->kind = SF_KIND_UNKNOWN;
                in->named = 0;
            }
        }
        if (in->broken) {
            fprintf(stderr, "spanfold ingest: %s: %s\n", in->path, in->note);
            worst(g, SF_EXIT_USAGE);
        } else if (in->kind == SF_KIND_UNKNOWN || in->kind == SF_KIND_EMPTY) {
            if (in->named) {
                fprintf(stderr,
                        "spanfold ingest: %s: not a capture, key log, perf output or trace "
                        "log: %s\n",
                        in->path, in->note[0] ? in->note : sf_kind_name(in->kind));
                worst(g, SF_EXIT_USAGE);
            } else if (!g->quiet) {
                say_ignored(in);
            }
        }
        npcap += in->kind == SF_KIND_PCAP || in->kind == SF_KIND_PCAPNG;
        nkeys += in->kind == SF_KIND_KEYLOG;
    }
    if ((av = argv_new(6 + 2 * nkeys + npcap + g->n)) == NULL)
        return -1;
    /* captures, with every key log */
    if (npcap > 0) {
        k = 0;
        av[k++] = "pcap2spans";
        av[k++] = "--quiet";
        av[k++] = "--db";
        av[k++] = (char *)g->db;
        if (g->jobs) {
            av[k++] = "-j";
            av[k++] = (char *)g->jobs;
        }
        for (i = 0; i < g->n; i++)
            if (g->in[i].kind == SF_KIND_KEYLOG) {
                av[k++] = "--keylog";
                av[k++] = g->in[i].feed ? g->in[i].feed : g->in[i].path;
            }
        for (i = 0; i < g->n; i++)
            if (g->in[i].kind == SF_KIND_PCAP || g->in[i].kind == SF_KIND_PCAPNG)
                av[k++] = g->in[i].feed ? g->in[i].feed : g->in[i].path;
        av[k] = NULL;
        worst(g, sf_run_tool(pcap2spans_main, av));
    }
    /* profiles, one at a time (perf-fold folds several files as one) */
    for (i = 0; i < g->n; i++) {
        struct input *in = &g->in[i];

        if (in->kind != SF_KIND_PERF_SCRIPT && in->kind != SF_KIND_PERF_DATA)
            continue;
        k = 0;
        av[k++] = "perf-fold";
        av[k++] = "--quiet";
        av[k++] = "--db";
        av[k++] = (char *)g->db;
        av[k++] = in->feed ? in->feed : in->path;
        av[k] = NULL;
        worst(g, run_quiet_stdout(perf_fold_main, av));
    }
    /* trace logs last: tracefs2spans fits the clocks against the spans and attributes the
     * samples; with no new trace log but markers already stored, refit and re-attribute */
    k = 0;
    av[k++] = "tracefs2spans";
    av[k++] = "--quiet";
    av[k++] = "--db";
    av[k++] = (char *)g->db;
    for (i = 0; i < g->n; i++)
        if (g->in[i].kind == SF_KIND_TRACEFS || g->in[i].kind == SF_KIND_TRACE_DAT)
            av[k++] = g->in[i].feed ? g->in[i].feed : g->in[i].path;
    if (k == 4) {
        sqlite3 *db;
        int64_t ev = -1;

        if (sqlite3_open_v2(g->db, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
            ev = q_int(db, "SELECT count(*) FROM span_events", NULL);
        sqlite3_close(db);
        if (ev > 0)
            av[k++] = "--refit";
    }
    av[k] = NULL;
    rc = k > 4 ? sf_run_tool(tracefs2spans_main, av) : 0;
    worst(g, rc);
    free(av);
    return 0;
}

static void summary(struct ingest *g)
{
    sqlite3 *db;
    size_t i, nkeys = 0;

    if (sqlite3_open_v2(g->db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "spanfold ingest: %s: %s\n", g->db, sqlite3_errmsg(db));
        sqlite3_close(db);
        worst(g, SF_EXIT_USAGE);
        return;
    }
    /* a decompressed input is known to the database by its temporary path: name it by
     * the user's path instead */
    for (i = 0; i < g->n; i++)
        nkeys += g->in[i].kind == SF_KIND_KEYLOG;
    if (!g->quiet)
        fprintf(stderr, "spanfold ingest: %s\n", g->db);
    for (i = 0; i < g->n; i++) {
        struct input *in = &g->in[i];

        if (in->kind == SF_KIND_KEYLOG) {
            if (!g->quiet)
                fprintf(stderr, "  %-11s %s: TLS secrets for the captures\n", "keylog", in->path);
        } else if (in->kind != SF_KIND_UNKNOWN && in->kind != SF_KIND_EMPTY && !g->quiet) {
            source_line(db, in);
        }
    }
    missing_pieces(db, g->db, (int)nkeys, g->quiet);
    sqlite3_close(db);
}

/* Nothing was stored: say where we looked, how many files, and why each recognised one
 * was of no use (a key log only decrypts a capture); exit 2, so that `ingest && report`
 * stops here, since no input is no evidence. */
static void nothing_ingested(struct ingest *g, char **paths, int npaths)
{
    size_t i;

    assert(npaths > 0);
    if (npaths == 1)
        fprintf(stderr, "spanfold ingest: nothing to ingest in %s", paths[0]);
    else
        fprintf(stderr, "spanfold ingest: nothing to ingest in the %d paths given", npaths);
    fprintf(stderr, ": %zu file%s, none usable; %s was not created\n", g->n, g->n == 1 ? "" : "s",
            g->db);
    for (i = 0; i < g->n; i++) {
        const struct input *in = &g->in[i];

        if (in->kind == SF_KIND_KEYLOG)
            fprintf(stderr, "  %-11s %s: not used (a key log decrypts a capture; none given)\n",
                    "keylog", in->path);
        else if (g->quiet && !in->named && !in->broken &&
                 (in->kind == SF_KIND_UNKNOWN || in->kind == SF_KIND_EMPTY))
            say_ignored(in); /* --quiet kept these back, but they are the why */
    }
    g->status = SF_EXIT_USAGE;
}

/* Sources of decompressed inputs carry the temporary path; give them the user's. */
static void rename_sources(struct ingest *g)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    size_t i;

    if (sqlite3_open_v2(g->db, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    sqlite3_busy_timeout(db, 10000);
    if (sqlite3_prepare_v2(db, "UPDATE sources SET path = ?1 WHERE path = ?2", -1, &st, NULL) ==
        SQLITE_OK) {
        for (i = 0; i < g->n; i++) {
            if (g->in[i].feed == NULL)
                continue;
            sqlite3_bind_text(st, 1, g->in[i].path, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, g->in[i].feed, -1, SQLITE_STATIC);
            sqlite3_step(st);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    for (i = 0; i < g->n; i++) { /* the summary looks sources up by the user's path now */
        if (g->in[i].feed) {
            unlink(g->in[i].feed);
            free(g->in[i].feed);
            g->in[i].feed = NULL;
        }
    }
}

/* --clickhouse: push g->db with spanfold push's code.  Returns push's exit status. */
static int push_to(const struct ingest *g, const char *url, const char *cluster,
                   const char *database)
{
    char *av[12];
    int k = 0;

    av[k++] = "push";
    av[k++] = "--clickhouse";
    av[k++] = (char *)url;
    if (cluster) {
        av[k++] = "--cluster";
        av[k++] = (char *)cluster;
    }
    if (database) {
        av[k++] = "--database";
        av[k++] = (char *)database;
    }
    av[k++] = "--db";
    av[k++] = (char *)g->db;
    av[k] = NULL;
    return sf_run_tool(sf_cmd_push, av);
}

/* "4G", "512M", "100K" or a plain number of bytes, at least 1. */
static int byte_count(const char *s, int64_t *v)
{
    char num[32];
    size_t n = strlen(s);
    int shift = 0;

    if (n == 0 || n >= sizeof(num))
        return -1;
    memcpy(num, s, n + 1);
    switch (num[n - 1]) {
    case 'K':
    case 'k':
        shift = 10;
        break;
    case 'M':
    case 'm':
        shift = 20;
        break;
    case 'G':
    case 'g':
        shift = 30;
        break;
    }
    if (shift)
        num[n - 1] = 0;
    if (sf_opt_i64(num, 1, INT64_MAX >> shift, v) < 0)
        return -1;
    *v <<= shift;
    return 0;
}

int sf_cmd_ingest(int argc, char **argv)
{
    enum { O_CH = 256, O_CLUSTER, O_DATABASE, O_WAIT, O_MAX };
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"clickhouse", required_argument, NULL, O_CH},
                                         {"cluster", required_argument, NULL, O_CLUSTER},
                                         {"database", required_argument, NULL, O_DATABASE},
                                         {"stream-wait", required_argument, NULL, O_WAIT},
                                         {"stream-max", required_argument, NULL, O_MAX},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct ingest g = {.stream_wait_s = STREAM_WAIT_S, .stream_max = STREAM_MAX};
    const char *url = NULL, *cluster = NULL, *database = NULL;
    char tmpdb_dir[64] = "", tmpdb[96];
    int64_t jobs;
    int c, i;

    while ((c = getopt_long(argc, argv, "hqj:", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            g.db = optarg;
            break;
        case 'q':
            g.quiet = 1;
            break;
        case 'j':
            if (sf_opt_i64(optarg, 1, 64, &jobs) < 0)
                return sf_cmd_usage_error("ingest", "-j: expected 1..64", optarg);
            g.jobs = optarg;
            break;
        case O_CH:
            url = optarg;
            break;
        case O_CLUSTER:
            cluster = optarg;
            break;
        case O_DATABASE:
            database = optarg;
            break;
        case O_WAIT:
            if (sf_opt_i64(optarg, 1, 86400, &g.stream_wait_s) < 0)
                return sf_cmd_usage_error("ingest", "--stream-wait: expected 1..86400 seconds",
                                          optarg);
            break;
        case O_MAX:
            if (byte_count(optarg, &g.stream_max) < 0)
                return sf_cmd_usage_error("ingest", "--stream-max: expected bytes, e.g. 512M",
                                          optarg);
            break;
        case 'h':
            usage(stdout);
            return SF_EXIT_OK;
        default:
            fprintf(stderr, "Try 'spanfold ingest --help'.\n");
            return SF_EXIT_USAGE;
        }
    }
    if ((cluster || database) && url == NULL)
        return sf_cmd_usage_error("ingest", "--cluster and --database go with --clickhouse URL",
                                  NULL);
    if (g.db == NULL && url != NULL && optind < argc) {
        /* straight to ClickHouse: the tools write SQLite, so a temporary file in between */
        snprintf(tmpdb_dir, sizeof(tmpdb_dir), "/tmp/spanfold-push.XXXXXX");
        if (mkdtemp(tmpdb_dir) == NULL) {
            fprintf(stderr, "spanfold ingest: cannot make a temporary folder: %s\n",
                    strerror(errno));
            return SF_EXIT_USAGE;
        }
        snprintf(tmpdb, sizeof(tmpdb), "%s/ingest.db", tmpdb_dir);
        g.db = tmpdb;
    }
    if (g.db == NULL || optind >= argc)
        return sf_cmd_usage_error(
            "ingest", g.db == NULL ? "--db FILE is required" : "no input (give files or folders)",
            NULL);
    for (i = optind; i < argc; i++) {
        struct stat st;

        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "spanfold ingest: %s: %s\n", argv[i], strerror(errno));
            g.status = SF_EXIT_USAGE;
        } else if (S_ISDIR(st.st_mode) ? walk(&g, argv[i], 0) < 0 : add_input(&g, argv[i], 1) < 0) {
            fprintf(stderr, "spanfold ingest: out of memory\n");
            return SF_EXIT_USAGE;
        } else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
            g.in[g.n - 1].stream = 1; /* named: a FIFO, a pipe (/dev/stdin), a device */
        }
    }
    if (run(&g) < 0) {
        fprintf(stderr, "spanfold ingest: out of memory\n");
        g.status = SF_EXIT_USAGE;
    }
    rename_sources(&g);
    if (access(g.db, F_OK) == 0) {
        summary(&g);
        if (url) {
            int prc = push_to(&g, url, cluster, database);
            g.status = prc > g.status ? prc : g.status;
        }
    } else {
        nothing_ingested(&g, argv + optind, argc - optind);
    }
    if (tmpdb_dir[0])
        ch_tmpdb_remove(tmpdb_dir, tmpdb);
    if (g.tmpdir[0])
        rmdir(g.tmpdir);
    for (size_t k = 0; k < g.n; k++)
        free(g.in[k].path);
    free(g.in);
    return g.status;
}

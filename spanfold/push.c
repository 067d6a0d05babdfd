/* push.c - spanfold push: a host's SQLite file into ClickHouse, source by source.
 *
 *   spanfold push --clickhouse URL [--cluster NAME] [--database DB] [--kind K,...] --db FILE
 *   spanfold push --print-schema [--cluster NAME] [--database DB]
 *
 * The tables are ch_schema.c's, created when missing (and with --cluster their
 * Distributed tables NAME_d over that cluster); a table there with other columns is
 * a schema mismatch and stops the push.  Rows go to the local tables of the server
 * at URL: the host's own shard.  Each source is pushed as
 *
 *   sources row 'started' -> its rows, table by table, in RowBinary batches -> 'complete'
 *
 * so that a source whose 'complete' row is present (on any shard, with --cluster) is
 * skipped, and one left 'started' by an interrupted push is deleted (ALTER TABLE ...
 * DELETE, waited for in system.mutations) and pushed again.  An INSERT whose answer
 * is lost is sent again only when its rows are not there (ch_insert, landed below):
 * a batch holds the rows of one table and source with SQLite ids first..last, so
 * counting them in ClickHouse tells all from none.  Check-before-insert, because the
 * tables are plain MergeTree (ClickHouse dedupes inserts only into Replicated tables,
 * and 18.16 has no insert_deduplication_token) and a ReplacingMergeTree would make
 * every read pay for FINAL.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../perf-fold/perf_fold.h"
#include "ch.h"
#include "sf_db.h"
#include "sf_err.h"
#include "spanfold.h"

#define TOOL "spanfold push"

struct push_opts {
    const char *db, *kinds;
    struct ch_opts cho;
    int print_schema;
};

/* The batch being built, as landed() asks ClickHouse about it. */
struct batch_keys {
    const struct ch_table *t;
    const char *path, *state; /* the source's; the push_state of a sources row */
    uint64_t skey, rows;
    int64_t first, last; /* SQLite ids of its first and last row */
};

struct push {
    struct push_opts o;
    sqlite3 *h;
    struct ch *ch;
    struct sf_buf batch, sql;
    uint64_t rows, bytes; /* pushed in this run */
    int local_only;       /* sources_d could not be read: look on this server only */
    struct batch_keys keys;
    struct sf_err err;
};

static void usage(FILE *f)
{
    fputs("usage: spanfold push --clickhouse URL [--cluster NAME] [--database DB]\n"
          "                     [--kind pcap,perf,tracefs] --db FILE\n"
          "       spanfold push --print-schema [--cluster NAME] [--database DB]\n"
          "\n"
          "Pushes the sources of a spanfold database into ClickHouse (its HTTP interface,\n"
          "RowBinary), each source once: one already there (by sha256) is skipped, one an\n"
          "interrupted push left half there is replaced.  docs/scale.md has the layout.\n"
          "\n"
          "  --clickhouse URL   http://HOST:8123/ of the server that holds this host's shard\n"
          "  --cluster NAME     also create the Distributed tables NAME_d over the cluster\n"
          "                     (remote_servers) and look for pushed sources on every shard\n"
          "  --database DB      the ClickHouse database (default spanfold)\n"
          "  --kind K,...       only sources of these kinds (pcap, perf, tracefs)\n"
          "  --print-schema     print the tables' DDL and exit\n"
          "\n"
          "Exit: 0 ok; 1 a source was not pushed because its ingest did not complete;\n"
          "2 usage error, a schema mismatch, or ClickHouse refused (the reason is printed).\n",
          f);
}

/* Returns -1 to go on, or an exit status. */
static int parse_opts(struct push_opts *o, int argc, char **argv)
{
    enum { O_DB = 256, O_KIND, O_SCHEMA };
    static const struct option longopts[] = {
        {"db", required_argument, NULL, O_DB},     CH_LONGOPTS,
        {"kind", required_argument, NULL, O_KIND}, {"print-schema", no_argument, NULL, O_SCHEMA},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int ch;

    opterr = 0;
    o->cho.database = "spanfold";
    while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (ch_opt(&o->cho, ch, optarg))
            continue;
        switch (ch) {
        case O_DB:
            o->db = optarg;
            break;
        case O_KIND:
            o->kinds = optarg;
            break;
        case O_SCHEMA:
            o->print_schema = 1;
            break;
        case 'h':
            usage(stdout);
            return SF_EXIT_OK;
        default:
            return sf_cmd_usage_error("push", "unknown option or missing argument",
                                      argv[optind - 1]);
        }
    }
    if (optind < argc)
        return sf_cmd_usage_error("push",
                                  "push takes no file arguments (the database is --db FILE)", NULL);
    if (!ch_ident_ok(o->cho.database))
        return sf_cmd_usage_error("push", "--database: letters, digits and '_' only", NULL);
    if (o->cho.cluster && !ch_ident_ok(o->cho.cluster))
        return sf_cmd_usage_error("push", "--cluster: letters, digits and '_' only", NULL);
    if (o->print_schema)
        return -1;
    if (o->cho.url == NULL)
        return sf_cmd_usage_error("push", "--clickhouse URL is required", NULL);
    if (o->db == NULL)
        return sf_cmd_usage_error("push", "--db FILE is required", NULL);
    return -1;
}

/* Run each ";\n"-separated statement of the DDL (the HTTP interface takes one). */
static int create_schema(struct push *p)
{
    struct sf_buf ddl;
    int rc;

    sf_buf_init(&ddl, 1u << 20);
    rc = ch_schema_sql(&ddl, p->o.cho.database, p->o.cho.cluster);
    for (char *s = (char *)ddl.data, *e; rc == 0 && s && *s; s = e + 2) {
        if ((e = strstr(s, ";\n")) == NULL)
            break;
        *e = '\0';
        rc = ch_query(p->ch, s, NULL, 0, NULL, &p->err);
    }
    sf_buf_free(&ddl);
    return rc ? rc : ch_schema_check(p->ch, p->o.cho.cluster, &p->err);
}

/* ch_landed_fn for the batch in p->keys: are its rows in ClickHouse?  1 all, 0 none,
 * SF_E_DB some (the source stays 'started': the next push replaces it). */
static int landed(void *arg, struct sf_err *err)
{
    struct push *p = arg;
    const struct batch_keys *k = &p->keys;
    char sql[512];
    uint64_t got = 0;
    int rc;

    snprintf(sql, sizeof(sql),
             "SELECT count() FROM %s.%s WHERE skey = %llu AND id BETWEEN %lld AND %lld%s%s%s",
             p->o.cho.database, k->t->name, (unsigned long long)k->skey, (long long)k->first,
             (long long)k->last, k->t == &ch_tables[0] ? " AND push_state = '" : "",
             k->t == &ch_tables[0] ? k->state : "", k->t == &ch_tables[0] ? "'" : "");
    if ((rc = ch_scalar(p->ch, sql, &got, err)) != 0)
        return rc;
    if (got != 0 && got != k->rows)
        return sf_err_set(err, SF_E_DB, UINT64_MAX,
                          "%llu of its %llu rows are there: push again to replace the source",
                          (unsigned long long)got, (unsigned long long)k->rows);
    fprintf(stderr, "%s: %s: the answer to an INSERT of %llu %s row(s) was lost: %s\n", TOOL,
            k->path, (unsigned long long)k->rows, k->t->name,
            got ? "they are there, not sent again" : "they are not there, sent again");
    return got != 0;
}

static int flush(struct push *p, const struct ch_table *t)
{
    int rc;

    if (p->batch.len == 0)
        return 0;
    sf_buf_reset(&p->sql);
    sf_buf_printf(&p->sql, "INSERT INTO %s.%s FORMAT RowBinary", p->o.cho.database, t->name);
    /* stacks are keyed by content: a second copy of a row is merged on read */
    rc = ch_insert(p->ch, (const char *)p->sql.data, p->batch.data, p->batch.len,
                   t->cols[0].type == CH_KEY ? landed : NULL, p, &p->err);
    p->bytes += p->batch.len;
    p->keys.rows = 0;
    sf_buf_reset(&p->batch);
    return rc;
}

/* One SQLite row as RowBinary, the columns of t in order. */
static int encode_row(struct push *p, const struct ch_table *t, sqlite3_stmt *st, uint64_t skey)
{
    struct sf_buf *b = &p->batch;
    int rc = 0, i = 0;

    for (size_t k = 0; k < t->ncols && rc == 0; k++) {
        enum ch_type ty = t->cols[k].type;
        int null;
        if (ty == CH_KEY) {
            rc = ch_put_u64(b, skey);
            continue;
        }
        null = sqlite3_column_type(st, i) == SQLITE_NULL;
        if (ty == CH_NSTR || ty == CH_NI64 || ty == CH_NF64)
            rc = ch_put_null(b, null);
        if (rc || (null && ty != CH_STR && ty != CH_I64 && ty != CH_HASH)) {
            i++;
            continue;
        }
        if (ty == CH_STR || ty == CH_NSTR || ty == CH_HASH) {
            const unsigned char *s = sqlite3_column_text(st, i);
            size_t n = (size_t)sqlite3_column_bytes(st, i);
            rc = ty == CH_HASH ? ch_put_u64(b, s ? ch_hash(s, n) : 0)
                               : ch_put_str(b, s ? s : (const unsigned char *)"", s ? n : 0);
        } else if (ty == CH_NF64) {
            rc = ch_put_f64(b, sqlite3_column_double(st, i));
        } else {
            rc = ch_put_u64(b, (uint64_t)sqlite3_column_int64(st, i));
        }
        i++;
    }
    if (rc == SF_E_LIMIT)
        return sf_err_set(&p->err, rc, UINT64_MAX,
                          "a row of %s does not fit in a batch of %u bytes", t->name, CH_BATCH_MAX);
    return rc ? sf_err_set(&p->err, rc, UINT64_MAX, "out of memory") : 0;
}

/* The SQLite query of t's rows (samples and off-CPU intervals: with their attributed
 * span, perf-fold's rule). */
static const char *select_sql(const struct ch_table *t, struct sf_buf *b)
{
    if (t->select)
        return t->select;
    sf_buf_reset(b);
    if (strcmp(t->name, "offcpu") == 0) {
        sf_buf_printf(b,
                      "%s SELECT o.id, o.ts_ns, o.end_ns, o.end_rule, o.pid, o.tid, o.comm,"
                      " o.state, o.reason, o.frame, (SELECT frames FROM stacks WHERE id ="
                      " o.stack_id), o.waker_tid, b.span_id FROM b JOIN offcpu o ON o.id ="
                      " b.row_id WHERE o.source_id = ?1 ORDER BY o.id",
                      spans_attrib_offcpu_cte);
        return (const char *)b->data;
    }
    assert(strcmp(t->name, "samples") == 0);
    sf_buf_printf(b,
                  "%s SELECT smp.id, smp.ts_ns, smp.pid, smp.tid, smp.cpu, smp.comm, smp.event,"
                  " smp.period, (SELECT frames FROM stacks WHERE id = smp.stack_id), b.span_id"
                  " FROM b JOIN samples smp ON smp.id = b.row_id WHERE smp.source_id = ?1"
                  " ORDER BY smp.id",
                  spans_attrib_cte);
    return (const char *)b->data;
}

static int push_table(struct push *p, const struct ch_table *t, int64_t id, uint64_t skey,
                      const char *state)
{
    struct sf_buf q;
    sqlite3_stmt *st;
    int rc = 0, s;

    sf_buf_init(&q, 1u << 16);
    if (sqlite3_prepare_v2(p->h, select_sql(t, &q), -1, &st, NULL) != SQLITE_OK) {
        rc = sf_err_set(&p->err, SF_E_DB, UINT64_MAX, "%s: %s", t->name, sqlite3_errmsg(p->h));
        sf_buf_free(&q);
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
    p->keys.t = t;
    p->keys.skey = skey;
    p->keys.state = state;
    p->keys.rows = 0;
    while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        /* the rows come in the order of their id (column 0): a batch is one range */
        int64_t rid = sqlite3_column_int64(st, 0);
        if (p->keys.rows++ == 0)
            p->keys.first = rid;
        assert(rid >= p->keys.first);
        p->keys.last = rid;
        rc = encode_row(p, t, st, skey);
        p->rows++;
        if (rc == 0 && p->batch.len >= CH_BATCH_MAX - (1u << 20))
            rc = flush(p, t);
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = sf_err_set(&p->err, SF_E_DB, UINT64_MAX, "%s: %s", t->name, sqlite3_errmsg(p->h));
    if (rc == 0)
        rc = flush(p, t);
    sqlite3_finalize(st);
    sf_buf_free(&q);
    return rc;
}

/* Wait until the database's mutations are done (ALTER ... DELETE is asynchronous). */
static int wait_mutations(struct push *p)
{
    uint64_t left = 1;
    int rc = 0;

    sf_buf_reset(&p->sql);
    sf_buf_printf(&p->sql,
                  "SELECT count() FROM system.mutations WHERE database = '%s'"
                  " AND is_done = 0",
                  p->o.cho.database);
    for (int i = 0; i < 600 && rc == 0 && left; i++) {
        struct timespec ts = {0, 100000000L};
        if ((rc = ch_scalar(p->ch, (const char *)p->sql.data, &left, &p->err)) == 0 && left)
            nanosleep(&ts, NULL);
    }
    if (rc == 0 && left)
        rc = sf_err_set(&p->err, SF_E_DB, UINT64_MAX, "mutations not done after 60 s");
    return rc;
}

/* Delete what an interrupted push of skey left on this server. */
static int drop_partial(struct push *p, uint64_t skey)
{
    int rc = 0;

    for (size_t i = 0; i < ch_ntables && rc == 0; i++) {
        if (ch_tables[i].cols[0].type != CH_KEY)
            continue; /* stacks: by content, shared */
        sf_buf_reset(&p->sql);
        sf_buf_printf(&p->sql, "ALTER TABLE %s.%s DELETE WHERE skey = %llu", p->o.cho.database,
                      ch_tables[i].name, (unsigned long long)skey);
        rc = ch_query(p->ch, (const char *)p->sql.data, NULL, 0, NULL, &p->err);
    }
    return rc ? rc : wait_mutations(p);
}

/* 'complete' pushes of skey seen (on every shard with --cluster) into *done, and the
 * sources rows of an unfinished push of skey on this server into *here. */
static int state_of(struct push *p, uint64_t skey, uint64_t *done, uint64_t *here)
{
    int rc = 0;

    for (int d = p->o.cho.cluster != NULL && !p->local_only; d >= 0; d--) {
        char name[CH_TABLE_MAX];
        if (ch_table(p->ch, d, "sources", name, sizeof(name)) != 0)
            return sf_err_set(&p->err, SF_E_LIMIT, UINT64_MAX, "too many shards to name");
        sf_buf_reset(&p->sql);
        sf_buf_printf(&p->sql,
                      "SELECT count() FROM %s WHERE skey = %llu AND push_state = 'complete'", name,
                      (unsigned long long)skey);
        if ((rc = ch_scalar(p->ch, (const char *)p->sql.data, done, &p->err)) == 0 || !d)
            break;
        /* a shard without the tables yet (its host has not pushed): not an error */
        fprintf(stderr,
                "%s: note: cannot read %s.sources_d on every shard (%s): looking for "
                "pushed sources on this server only\n",
                TOOL, p->o.cho.database, p->err.msg);
        p->local_only = 1;
        sf_err_clear(&p->err);
    }
    sf_buf_reset(&p->sql);
    sf_buf_printf(&p->sql,
                  "SELECT if(countIf(push_state = 'complete') > 0, 0, count()) FROM %s.sources"
                  " WHERE skey = %llu",
                  p->o.cho.database, (unsigned long long)skey);
    return rc ? rc : ch_scalar(p->ch, (const char *)p->sql.data, here, &p->err);
}

static int kind_wanted(const char *kinds, const char *kind)
{
    size_t n = strlen(kind);

    for (const char *s = kinds; s && *s;) {
        const char *e = strchr(s, ',');
        size_t k = e ? (size_t)(e - s) : strlen(s);
        if (k == n && memcmp(s, kind, n) == 0)
            return 1;
        s = e ? e + 1 : s + k;
    }
    return kinds == NULL;
}

/* Push one source.  Returns 0 (pushed or skipped, said on stderr), 1 (not complete
 * in the file: not pushed), or an error. */
static int push_source(struct push *p, int64_t id, const char *kind, const char *path,
                       const char *sha, const char *started, const char *status)
{
    uint64_t skey = ch_source_key(sha, path, started), done = 0, here = 0;
    int rc;

    if (strcmp(status, "complete") != 0) {
        fprintf(stderr, "%s: %s: source %lld (%s) is '%s' in %s: not pushed\n", TOOL, path,
                (long long)id, kind, status, p->o.db);
        return 1;
    }
    p->keys.path = path;
    if ((rc = state_of(p, skey, &done, &here)) != 0)
        return rc;
    /* what an interrupted push left here goes, also when another shard has it complete */
    if (here && (rc = drop_partial(p, skey)) != 0)
        return rc;
    if (here)
        fprintf(stderr, "%s: %s: an interrupted push left %llu source row(s) here: %s\n", TOOL,
                path, (unsigned long long)here, done ? "removed" : "replaced");
    if (done) {
        fprintf(stderr, "%s: %s: already in ClickHouse (sha256 %.16s...), skipped\n", TOOL, path,
                sha ? sha : "-");
        return 0;
    }
    rc = push_table(p, &ch_tables[0], id, skey, "started");
    for (size_t i = 1; i < ch_ntables && rc == 0; i++)
        rc = push_table(p, &ch_tables[i], id, skey, "started");
    return rc ? rc : push_table(p, &ch_tables[0], id, skey, "complete");
}

static int push_all(struct push *p)
{
    static const char sql[] = "SELECT id, kind, path, sha256, started_at, status FROM sources"
                              " ORDER BY id";
    sqlite3_stmt *st;
    int rc = 0, s, skipped = 0, n = 0;

    if (sqlite3_prepare_v2(p->h, sql, -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(&p->err, SF_E_DB, UINT64_MAX, "sources: %s", sqlite3_errmsg(p->h));
    while (rc >= 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 1);
        if (!kind_wanted(p->o.kinds, kind ? kind : ""))
            continue;
        rc = push_source(
            p, sqlite3_column_int64(st, 0), kind ? kind : "?",
            (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
            (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5));
        skipped += rc == 1;
        n++;
    }
    sqlite3_finalize(st);
    if (rc >= 0 && n == 0)
        return sf_err_set(&p->err, SF_E_USAGE, UINT64_MAX, "no source%s%s to push",
                          p->o.kinds ? " of kind " : "", p->o.kinds ? p->o.kinds : "");
    return rc < 0 ? rc : skipped ? 1 : 0;
}

int sf_cmd_push(int argc, char **argv)
{
    struct push p;
    struct sf_db *db = NULL;
    struct timespec t0, t1;
    char msg[1400], shown[256];
    struct ch_shards shards = {0};
    int rc;

    memset(&p, 0, sizeof(p));
    if ((rc = parse_opts(&p.o, argc, argv)) >= 0)
        return rc;
    sf_err_clear(&p.err);
    sf_buf_init(&p.batch, CH_BATCH_MAX);
    sf_buf_init(&p.sql, 1u << 16);
    if (p.o.print_schema) {
        rc = ch_schema_sql(&p.sql, p.o.cho.database, p.o.cho.cluster);
        fputs(rc ? "" : (const char *)p.sql.data, stdout);
        sf_buf_free(&p.sql);
        return rc ? SF_EXIT_USAGE : SF_EXIT_OK;
    }
    /* a reader: a typo must not push an empty database, and nothing is migrated */
    if (access(p.o.db, R_OK) != 0) {
        fprintf(stderr, "%s: %s: %s\n", TOOL, p.o.db, strerror(errno));
        return SF_EXIT_USAGE;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((rc = sf_db_open_mode(&db, p.o.db, SF_DB_READ, &p.err)) == 0 &&
        (rc = ch_open(&p.ch, p.o.cho.url, p.o.cho.database, &p.err)) == 0) {
        p.h = sf_db_handle(db);
        rc = create_schema(&p);
        /* a shard without the database holds no source yet; one that does not answer
         * may hold any: pushing past it could store a source twice */
        if (rc == 0 && p.o.cho.cluster &&
            (rc = ch_cluster(p.ch, p.o.cho.cluster, &shards, &p.err)) == 0 && shards.down)
            rc = sf_err_set(&p.err, SF_E_DB, UINT64_MAX,
                            "%s: a source may be stored there already; push when every "
                            "shard answers (or without --cluster: this server only)",
                            shards.missing);
        else if (rc == 0 && shards.missing[0])
            fprintf(stderr, "%s: note: %s (nothing pushed there yet)\n", TOOL, shards.missing);
        if (rc == 0)
            rc = push_all(&p);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc < 0) {
        ch_url_shown(p.o.cho.url ? p.o.cho.url : "", shown, sizeof(shown));
        sf_err_format(&p.err, TOOL, p.ch ? shown : p.o.db, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
    } else {
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "%s: %llu rows, %llu bytes of RowBinary in %.3f s\n", TOOL,
                (unsigned long long)p.rows, (unsigned long long)p.bytes, s);
    }
    ch_close(p.ch);
    if (db)
        sf_db_close(db, &p.err);
    sf_buf_free(&p.batch);
    sf_buf_free(&p.sql);
    return rc < 0 ? SF_EXIT_USAGE : rc;
}

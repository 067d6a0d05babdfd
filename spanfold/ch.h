/* ch.h - ClickHouse for the front end: an HTTP client (libcurl), the RowBinary
 * encoding, and the tables spanfold keeps there (ch_schema.c).
 *
 * ClickHouse's HTTP interface (https://clickhouse.com/docs/en/interfaces/http): the
 * query is the URL's `query` parameter, the data (INSERT) or the query (SELECT) the
 * POST body; 200 is success, anything else carries "Code: N, e.displayText() = ..."
 * in the body.  Everything here works on ClickHouse 18.16 (Debian 12) and on current
 * releases: RowBinary, Nullable, MergeTree with ORDER BY, Distributed, GLOBAL IN,
 * ANY INNER JOIN ... USING, ALTER TABLE ... DELETE and system.mutations.
 *
 * RowBinary, one row after another, the columns in table order:
 *
 *   UInt64 / Int64   8 bytes little-endian       Float64  IEEE 754, little-endian
 *   String           LEB128 length, the bytes    Nullable(T)  1 byte: 1 NULL, 0 then T
 */
#ifndef SPANFOLD_CH_H
#define SPANFOLD_CH_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "sf_buf.h"
#include "sf_err.h"

#define CH_BODY_MAX            (256u << 20) /* bytes of one response */
#define CH_BATCH_MAX           (8u << 20)   /* bytes of RowBinary in one INSERT */
#define CH_RETRIES             5            /* attempts of one request on a transient error */
#define CH_IDENT_MAX           64           /* a database or cluster name is shorter than this */
#define CH_QUERY_PARSE_DEFAULT (256u << 10) /* max_query_size a server parses by default */

struct ch;

/* The options of every command that reads or writes ClickHouse: their long options
 * include CH_LONGOPTS, and what getopt_long returns goes to ch_opt first. */
struct ch_opts {
    const char *url, *cluster, *database; /* --clickhouse, --cluster, --database */
};

enum { CH_O_URL = 0x4000, CH_O_CLUSTER, CH_O_DATABASE };

#define CH_LONGOPTS                                                                                \
    {"clickhouse", required_argument, NULL, CH_O_URL},                                             \
        {"cluster", required_argument, NULL, CH_O_CLUSTER},                                        \
    {                                                                                              \
        "database", required_argument, NULL, CH_O_DATABASE                                         \
    }

#define CH_DATABASE_DEFAULT "spanfold"

/* The span ids of the spans rows of the sources skey IN (keys) that meet a condition, a
 * subquery for GLOBAL IN: its printf arguments are the spans table, the keys and the
 * condition.  The report's sample reads its rows (ch_pull.c) and asks its per-span
 * answers (ch_sets.c) through it.  A NULL id in the set is no member of it (a set skips
 * NULLs), so the subquery has no "span_id IS NOT NULL": with it, 18.16 ran the GLOBAL IN
 * past 1 GB at 100 million spans within 2 s, whatever the rest of the condition. */
#define CH_SPAN_IDS_WHERE "(SELECT " CH_SPAN_ID_SET " FROM %s WHERE skey IN (%s) AND (%s))"

/* The span id as the subquery of a GLOBAL IN selects it: a value computed after the
 * subquery's filter.  18.16 keeps each filtered block of such a subquery as large as the
 * block it was cut from: 500,000 ids out of 50 million spans went past 1 GB; computed,
 * they took 145 MB (docs/scale.md, "The whole report"). */
#define CH_SPAN_ID_SET "concat(span_id, '')"

/* The bytes one span id of a GLOBAL IN set is budgeted on the server asked (its set, the
 * table sent to the shards, with room; 2.5 million took 577 MB): SPANFOLD_CH_ID_BYTES
 * replaces it, as SPANFOLD_CH_GROUP_BYTES does the leaves' groups (ch_env_bytes). */
#define CH_ID_BYTES 400u

/* The bytes env names (a positive integer), else dflt. */
uint64_t ch_env_bytes(const char *env, uint64_t dflt);

/* How many questions to split items into, each a share by hash, so that one question's
 * items at bytes each fit limit (a server's max_memory_usage; 0: no limit, 1 question):
 * 1 to 4096. */
unsigned ch_buckets(uint64_t items, uint64_t bytes, uint64_t limit);

/* 1 when opt is one of CH_LONGOPTS (arg stored in o), else 0. */
int ch_opt(struct ch_opts *o, int opt, const char *arg);

/* 1 when s may stand as a ClickHouse database or cluster name in SQL as it is: 1 to
 * CH_IDENT_MAX - 1 letters, digits and '_'. */
int ch_ident_ok(const char *s);

/* Connect to the server at url (http://host:port/, user and password as curl takes
 * them in the URL), database db (an identifier: letters, digits, '_').  Returns 0
 * or SF_E_USAGE (bad name) / SF_E_NOMEM with err filled; *out is NULL on failure. */
int ch_open(struct ch **out, const char *url, const char *db, struct sf_err *err);
void ch_close(struct ch *c);

/* url as messages may show it: without the user and password of "http://u:p@host/",
 * into out (always NUL-terminated, cut at n - 1 bytes). */
void ch_url_shown(const char *url, char *out, size_t n);

/* What messages and reports call the data o names: "URL DB[ on cluster NAME]", the
 * URL as ch_url_shown shows it, into out (n bytes). */
void ch_data_name(const struct ch_opts *o, char *out, size_t n);

/* The database name, checked. */
const char *ch_db(const struct ch *c);

/* Run sql (a statement, or for INSERT its head "INSERT INTO t FORMAT RowBinary")
 * with body (NULL: the query goes in the body) and, when out is not NULL, the
 * response into out (reset first).  Transient failures (no connection, timeouts,
 * HTTP 502-504, server codes for overload) are retried CH_RETRIES times with
 * doubling pauses from 100 ms.  Returns 0, or SF_E_DB with err->msg holding the
 * server's first line (or curl's reason).  For tests, SF_CH_FAIL_AT=N makes the
 * Nth request (1-based, counted per process) and the SF_CH_FAIL_COUNT-1 (default 0)
 * after it fail as transient errors before they are sent. */
int ch_query(struct ch *c, const char *sql, const void *body, size_t n, struct sf_buf *out,
             struct sf_err *err);

/* Whether an INSERT whose answer was lost is in the table: 1 (every row of it), 0
 * (none), or a negative SF_E_* with err filled (part of it, or the question failed). */
typedef int (*ch_landed_fn)(void *arg, struct sf_err *err);

/* ch_query for an INSERT (sql its head, body its RowBinary rows), written once
 * whatever the retries: when an attempt fails after the request may have reached the
 * server (the connection broke, a timeout, HTTP 502-504, the server's "unknown status
 * of insert"), the server is first asked whether the rows are there, through landed
 * (NULL: rows whose duplicates do no harm, sent again).  Every attempt carries one
 * query_id, and landed is asked only once no query of that id runs on the server, so
 * a slow first attempt cannot land after its retry.  Returns as ch_query. */
int ch_insert(struct ch *c, const char *sql, const void *body, size_t n, ch_landed_fn landed,
              void *arg, struct sf_err *err);

/* The shards of a cluster as ch_cluster found them. */
struct ch_shards {
    unsigned total, up, no_db, down; /* up + no_db + down = total */
    char missing[600]; /* "" when every shard answers, else "1 of 3 shards of cluster NAME
                        * answered; missing: shard 2 (127.0.0.1:9001): no database; shard
                        * 3 (127.0.0.1:9002): did not answer (...)" */
};

/* --cluster NAME: from here on every query of c answers with the shards that can
 * (skip_unavailable_shards: ClickHouse 18.16 skips a shard that is down and one
 * without the database alike), and each shard is asked once whether it has the
 * database, into *s, which the caller says (a partial answer is never a silent one).
 * Returns 0, or SF_E_DB when the cluster is unknown or no shard answers. */
int ch_cluster(struct ch *c, const char *cluster, struct ch_shards *s, struct sf_err *err);

/* What the commands that read ClickHouse do first: ch_open at o->url, database
 * o->database (CH_DATABASE_DEFAULT when NULL), then with o->cluster ch_cluster into *s
 * (zeroed first; the caller says what is missing).  Returns as they do; *out is NULL on
 * failure. */
int ch_connect(struct ch **out, const struct ch_opts *o, struct ch_shards *s, struct sf_err *err);

#define CH_TABLE_MAX 2304 /* ch_table's names: remote() over some 100 shards at most */

/* The name a query reads table by, into out: db.table; with cluster db.table_d (the
 * Distributed table) or, when ch_cluster found shards missing, remote('the shards
 * that answered', db, table), so that the answer is the same whichever server is
 * asked, one without the database included.  Returns 0 or SF_E_LIMIT. */
int ch_table(const struct ch *c, int cluster, const char *table, char *out, size_t n);
/* 1 when ch_cluster found shards missing (queries read the others through remote()). */
int ch_partial(const struct ch *c);

/* The first unsigned number of the response to sql (a SELECT of one value in
 * TabSeparated): 0 and *v set, or SF_E_DB. */
int ch_scalar(struct ch *c, const char *sql, uint64_t *v, struct sf_err *err);
/* The server's max_memory_usage for a query (0: none), asked once. */
int ch_mem_limit(struct ch *c, uint64_t *limit, struct sf_err *err);
/* A selection's asker (sf_select_ch_ask(s, ch_select_ask, c)): arg is the struct ch;
 * its sorts spill to disk past half of the server's memory limit for a query. */
int ch_select_ask(void *arg, const char *sql, char *out, size_t n, struct sf_err *err);
/* What c's queries received so far: their number and the answers' bytes. */
void ch_received(const struct ch *c, unsigned long *queries, unsigned long long *bytes);

/* ---- RowBinary writers (each returns 0 or SF_E_LIMIT / SF_E_NOMEM from sf_buf) ---- */
int ch_put_u64(struct sf_buf *b, uint64_t v);
int ch_put_f64(struct sf_buf *b, double v);
int ch_put_str(struct sf_buf *b, const void *s, size_t n);
int ch_put_null(struct sf_buf *b, int is_null);

/* RowBinary readers over [*p, end): 0 and *p advanced, or -1 when truncated. */
int ch_get_u64(const unsigned char **p, const unsigned char *end, uint64_t *v);
int ch_get_str(const unsigned char **p, const unsigned char *end, const unsigned char **s,
               size_t *n);

/* ---- the tables (ch_schema.c) --------------------------------------------------------- */

enum ch_type {
    CH_KEY,  /* UInt64: the source key (first column of every table but stacks) */
    CH_HASH, /* UInt64: first 8 bytes of sha256 of the SQLite column's text, 0 for NULL */
    CH_STR,  /* String (NULL written as '') */
    CH_NSTR, /* Nullable(String) */
    CH_I64,  /* Int64 (NULL written as 0) */
    CH_NI64, /* Nullable(Int64) */
    CH_NF64  /* Nullable(Float64) */
};

struct ch_col {
    const char *name;
    enum ch_type type;
};

/* One table: its columns, its MergeTree order, the sharding key of its Distributed
 * table, and the SQLite query that yields its rows for one source (?1 the source's
 * id), one column per ch_col after the CH_KEY. */
struct ch_table {
    const char *name;
    const char *engine; /* MergeTree or ReplacingMergeTree */
    const char *order_by;
    const char *shard_by;
    const char *select;
    const struct ch_col *cols;
    size_t ncols;
};

extern const struct ch_table ch_tables[];
extern const size_t ch_ntables;

/* The source key: the first 16 hex digits of sources.sha256 as a number (a file's
 * identity on every host), or of sha256(path '\0' started_at) without one. */
uint64_t ch_source_key(const char *sha256_hex, const char *path, const char *started);

/* The first 8 bytes of sha256(s[0..n)), big-endian; 0 for s NULL. */
uint64_t ch_hash(const void *s, size_t n);

/* The DDL: CREATE DATABASE and every local table, and with cluster (NULL: none) the
 * Distributed tables NAME_d over it, into b, statements separated by ";\n". */
int ch_schema_sql(struct sf_buf *b, const char *db, const char *cluster);

/* Check that every table exists in c's database with exactly spanfold's columns
 * and types (and, with cluster, its Distributed table).  Returns 0, 1 when no
 * table exists yet, or SF_E_DB with the first difference in err. */
int ch_schema_check(struct ch *c, const char *cluster, struct sf_err *err);

#endif

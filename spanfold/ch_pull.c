/* ch_pull.c - ClickHouse's tables back into a SQLite file (see ch_pull.h).
 *
 * The inverse of push.c, from the same description of the tables (ch_schema.c):
 *
 *   SELECT <columns> FROM db.T[_d] WHERE skey IN (<complete sources>) FORMAT RowBinary
 *
 * each row inserted into the spanfold table of the same name.  SQLite ids are per
 * file, so the ClickHouse rows carry skey, their source; on the way back
 *
 *   skey                the source's id in the new file (sources.id: the file's id
 *                       unless a source ingested earlier took it, then the next free)
 *   id                  the file's id, moved up by an offset per (table, skey) when
 *                       its range [min, max] meets a range placed before it (in the
 *                       sources' order)
 *   connection_id,      the offset of the row it refers to (connections, spans)
 *   span_row
 *   stack_key           stacks.id and samples.stack_id (the 64-bit key as an integer)
 *   from_/to_sha256     clock_fits.from_/to_source: the source with that sha256
 *
 * so the data of one file comes back with that file's ids, and the same queries
 * give the same rows in the same order.  Only sources ClickHouse has complete
 * (push_state 'complete') come back.
 */
#include "ch_pull.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ch.h"
#include "sf_db.h"

#define PULL_SOURCES_MAX 4096 /* complete sources read back */
#define COMPLETE         "push_state = 'complete'"

enum act {
    A_PLAIN,  /* the value as it is */
    A_SKIP,   /* not a SQLite column (push_state; skey where there is no source_id) */
    A_SOURCE, /* skey -> source_id */
    A_SRCID,  /* sources.id: the id the source got */
    A_ID,     /* id + this table's offset */
    A_CONN,   /* + connections' offset */
    A_SPAN,   /* + spans' offset */
    A_STACK,  /* stack_key as an integer id */
    A_SHA     /* a source's sha256 -> its id */
};

struct src {
    uint64_t skey;
    int64_t id;
    char sha[65];
};

struct off {
    uint64_t skey;
    size_t order; /* its source's place in the sources' order */
    int64_t lo, hi, off;
};

struct pull {
    struct ch *ch;
    struct sf_db *db;
    int cluster; /* read the tables as ch_table names them with --cluster */
    enum ch_pull_what what;
    struct sf_err *err;
    struct src *src;
    size_t nsrc;
    struct off *off[16]; /* per ch_tables index */
    size_t noff[16];
    struct sf_buf keys; /* "k1, k2, ..." of the complete sources */
    struct sf_buf sql, r;
    const char *thin; /* the spans kept (a condition on their columns), NULL: all */
};

static size_t table_index(const char *name)
{
    for (size_t i = 0; i < ch_ntables; i++)
        if (strcmp(ch_tables[i].name, name) == 0)
            return i;
    return 0;
}

/* What column k of table t becomes in SQLite, and its name there (*name). */
static enum act act_of(const struct ch_table *t, size_t k, const char **name)
{
    const char *cn = t->cols[k].name, *tn = t->name;

    *name = cn;
    if (t->cols[k].type == CH_KEY) {
        *name = "source_id";
        /* the tables with no source_id in SQLite: the key is there for the ids */
        return strcmp(tn, "sources") == 0 || strcmp(tn, "contexts") == 0 ||
                       strcmp(tn, "span_headers") == 0 || strcmp(tn, "clock_fits") == 0 ||
                       strcmp(tn, "connection_events") == 0
                   ? A_SKIP
                   : A_SOURCE;
    }
    if (strcmp(cn, "push_state") == 0)
        return A_SKIP;
    if (strcmp(cn, "id") == 0)
        return strcmp(tn, "sources") == 0 ? A_SRCID : A_ID;
    if (strcmp(cn, "connection_id") == 0)
        return A_CONN;
    if (strcmp(cn, "span_row") == 0)
        return A_SPAN;
    if (strcmp(cn, "stack_key") == 0) {
        *name = strcmp(tn, "stacks") == 0 ? "id" : "stack_id";
        return A_STACK;
    }
    if (strcmp(cn, "from_sha256") == 0 || strcmp(cn, "to_sha256") == 0) {
        *name = cn[0] == 'f' ? "from_source" : "to_source";
        return A_SHA;
    }
    return A_PLAIN;
}

static const struct src *src_of(const struct pull *p, uint64_t skey)
{
    for (size_t i = 0; i < p->nsrc; i++)
        if (p->src[i].skey == skey)
            return &p->src[i];
    return NULL;
}

static int64_t off_of(const struct pull *p, size_t ti, uint64_t skey)
{
    for (size_t i = 0; i < p->noff[ti]; i++)
        if (p->off[ti][i].skey == skey)
            return p->off[ti][i].off;
    return 0;
}

static int truncated(struct pull *p)
{
    return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                      "ClickHouse's RowBinary answer ends inside a row");
}

/* SELECT what FROM db.T[_d] (or remote(...), ch_table) WHERE cond [AND skey IN (the complete
 * sources)] tail for table t, its RowBinary answer into p->r; what NULL: t's columns. */
static int ask(struct pull *p, const struct ch_table *t, const char *what, const char *cond,
               int in_keys, const char *tail)
{
    char name[CH_TABLE_MAX];
    int rc;

    sf_buf_reset(&p->sql);
    rc = sf_buf_printf(&p->sql, "SELECT %s", what ? what : "");
    for (size_t k = 0; what == NULL && k < t->ncols; k++)
        rc |= sf_buf_printf(&p->sql, "%s%s", k ? ", " : "", t->cols[k].name);
    if (ch_table(p->ch, p->cluster, t->name, name, sizeof(name)) != 0)
        return sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "too many shards to name");
    rc |= sf_buf_printf(&p->sql, " FROM %s WHERE (%s)", name, cond);
    if (in_keys)
        rc |= sf_buf_printf(&p->sql, " AND skey IN (%s)", (const char *)p->keys.data);
    if (rc || sf_buf_printf(&p->sql, " %s FORMAT RowBinary", tail))
        return sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "query too long (%zu sources)", p->nsrc);
    return ch_query(p->ch, (const char *)p->sql.data, NULL, 0, &p->r, p->err);
}

/* One value of type ty at *q into column col of st (1-based), as act says. */
static int bind_value(struct pull *p, sqlite3_stmt *st, int col, enum ch_type ty, enum act a,
                      size_t ti, uint64_t skey, const unsigned char **q, const unsigned char *end)
{
    const unsigned char *s;
    size_t n;
    uint64_t v;

    if (ty == CH_NSTR || ty == CH_NI64 || ty == CH_NF64) {
        if (*q >= end)
            return -1;
        if (*(*q)++) {
            if (a != A_SKIP)
                sqlite3_bind_null(st, col);
            return 0;
        }
    }
    if (ty == CH_STR || ty == CH_NSTR) {
        const struct src *so;
        if (ch_get_str(q, end, &s, &n) < 0)
            return -1;
        if (a == A_SHA && (so = NULL, n == 64)) {
            for (size_t i = 0; i < p->nsrc && so == NULL; i++)
                so = memcmp(p->src[i].sha, s, 64) == 0 ? &p->src[i] : NULL;
            if (so)
                sqlite3_bind_int64(st, col, so->id);
            else
                sqlite3_bind_null(st, col);
        } else if (a == A_SHA) {
            sqlite3_bind_null(st, col);
        } else if (a != A_SKIP) {
            sqlite3_bind_text(st, col, (const char *)s, (int)n, SQLITE_TRANSIENT);
        }
        return 0;
    }
    if (ch_get_u64(q, end, &v) < 0)
        return -1;
    if (a == A_SKIP)
        return 0;
    if (ty == CH_NF64) {
        double d;
        memcpy(&d, &v, sizeof(d));
        sqlite3_bind_double(st, col, d);
    } else if (a == A_SOURCE || a == A_SRCID) {
        const struct src *so = src_of(p, skey);
        sqlite3_bind_int64(st, col, so ? so->id : 0);
    } else {
        int64_t x = (int64_t)v;
        x += a == A_ID     ? off_of(p, ti, skey)
             : a == A_CONN ? off_of(p, table_index("connections"), skey)
             : a == A_SPAN ? off_of(p, table_index("spans"), skey)
                           : 0;
        sqlite3_bind_int64(st, col, x);
    }
    return 0;
}

/* "INSERT INTO T (columns) VALUES (?, ...)" for t's columns that SQLite has. */
static int insert_sql(const struct ch_table *t, struct sf_buf *b)
{
    int rc = sf_buf_printf(b, "INSERT INTO %s (", t->name), n = 0;

    for (size_t k = 0; k < t->ncols; k++) {
        const char *name;
        if (act_of(t, k, &name) != A_SKIP)
            rc |= sf_buf_printf(b, "%s%s", n++ ? ", " : "", name);
    }
    rc |= sf_buf_printf(b, ") VALUES (");
    for (int i = 0; i < n; i++)
        rc |= sf_buf_printf(b, "%s?", i ? ", " : "");
    return rc | sf_buf_printf(b, ")");
}

/* Insert the rows of p->r (t's columns in order) into SQLite.  Returns 0 or an error. */
static int insert_rows(struct pull *p, const struct ch_table *t)
{
    const unsigned char *q = p->r.data, *end = p->r.data + p->r.len;
    struct sf_buf ins;
    sqlite3_stmt *st = NULL;
    size_t ti = table_index(t->name);
    int rc = 0;

    sf_buf_init(&ins, 1u << 16);
    if (insert_sql(t, &ins) ||
        sqlite3_prepare_v2(sf_db_handle(p->db), (const char *)ins.data, -1, &st, NULL) != SQLITE_OK)
        rc = sf_err_set(p->err, SF_E_DB, UINT64_MAX, "%s: %s", t->name,
                        sqlite3_errmsg(sf_db_handle(p->db)));
    while (rc == 0 && q < end) {
        uint64_t skey = 0;
        int col = 1;
        if (t->cols[0].type == CH_KEY && ch_get_u64(&(const unsigned char *){q}, end, &skey) < 0)
            return truncated(p);
        for (size_t k = 0; k < t->ncols && rc == 0; k++) {
            const char *name;
            enum act a = act_of(t, k, &name);
            if (bind_value(p, st, col, t->cols[k].type, a, ti, skey, &q, end) < 0)
                rc = truncated(p);
            col += a != A_SKIP;
        }
        if (rc == 0)
            rc = sf_db_exec_stmt(p->db, st, NULL, p->err);
    }
    sqlite3_finalize(st);
    sf_buf_free(&ins);
    return rc;
}

/* 1 when a source already read back has id. */
static int id_taken(const struct pull *p, int64_t id)
{
    for (size_t i = 0; i < p->nsrc - 1; i++)
        if (p->src[i].id == id)
            return 1;
    return 0;
}

static int cmp_off(const void *a, const void *b)
{
    const struct off *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* The complete sources, their ids in the new file, and p->keys. */
static int read_sources(struct pull *p)
{
    const struct ch_table *t = &ch_tables[0];
    const unsigned char *q, *end;
    int64_t next = 1;
    int rc;

    /* in the order they were ingested, as a file holding them all would have them */
    if ((rc = ask(p, t, "skey, id, sha256", COMPLETE, 0, "ORDER BY started_at, id, skey")) != 0)
        return rc;
    if ((p->src = calloc(PULL_SOURCES_MAX, sizeof(*p->src))) == NULL)
        return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        uint64_t skey, id;
        const unsigned char *s;
        size_t n;
        struct src *so;
        if (ch_get_u64(&q, end, &skey) < 0 || ch_get_u64(&q, end, &id) < 0 ||
            ch_get_str(&q, end, &s, &n) < 0)
            return truncated(p);
        if (src_of(p, skey))
            continue; /* complete on two shards: once */
        if (p->nsrc == PULL_SOURCES_MAX)
            return sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "more than %d sources",
                              PULL_SOURCES_MAX);
        so = &p->src[p->nsrc++];
        so->skey = skey;
        /* the file's id unless an earlier source took it */
        so->id = p->what == CH_PULL_CLOCKS  ? (int64_t)skey
                 : id_taken(p, (int64_t)id) ? next
                                            : (int64_t)id;
        next = so->id + 1 > next ? so->id + 1 : next;
        snprintf(so->sha, sizeof(so->sha), "%.*s", (int)(n < 64 ? n : 64), (const char *)s);
        sf_buf_printf(&p->keys, "%s%llu", p->nsrc > 1 ? ", " : "", (unsigned long long)skey);
    }
    if (p->nsrc == 0)
        return sf_err_set(p->err, SF_E_USAGE, UINT64_MAX,
                          "no complete source in ClickHouse database %s (spanfold push)",
                          ch_db(p->ch));
    return 0;
}

/* The complete sources into the new file. */
static int pull_sources(struct pull *p)
{
    int rc = read_sources(p);

    if (rc == 0)
        rc = ask(p, &ch_tables[0], NULL, COMPLETE, 0, "LIMIT 1 BY skey");
    return rc ? rc : insert_rows(p, &ch_tables[0]);
}

/* The offsets of t's ids per source, in the sources' order: a range that meets one
 * placed before moves up past every range placed. */
static int pull_offsets(struct pull *p, size_t ti)
{
    const unsigned char *q, *end;
    struct off *o;
    int64_t top = 0;
    int rc;

    if ((rc = ask(p, &ch_tables[ti], "skey, min(id) AS lo, max(id) AS hi", "1", 1,
                  "GROUP BY skey ORDER BY lo, skey")) != 0)
        return rc;
    if ((p->off[ti] = calloc(p->nsrc, sizeof(*p->off[ti]))) == NULL)
        return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    for (q = p->r.data, end = q + p->r.len; q < end && p->noff[ti] < p->nsrc;) {
        uint64_t lo, hi;
        o = &p->off[ti][p->noff[ti]++];
        if (ch_get_u64(&q, end, &o->skey) < 0 || ch_get_u64(&q, end, &lo) < 0 ||
            ch_get_u64(&q, end, &hi) < 0)
            return truncated(p);
        o->order = src_of(p, o->skey) ? (size_t)(src_of(p, o->skey) - p->src) : p->nsrc;
        o->lo = (int64_t)lo;
        o->hi = (int64_t)hi;
    }
    qsort(p->off[ti], p->noff[ti], sizeof(*o), cmp_off);
    for (size_t i = 0; i < p->noff[ti]; i++) {
        int meets = 0;
        o = &p->off[ti][i];
        for (size_t k = 0; k < i; k++)
            meets |= o->lo <= p->off[ti][k].hi + p->off[ti][k].off &&
                     p->off[ti][k].lo + p->off[ti][k].off <= o->hi;
        o->off = meets ? top + 1 - o->lo : 0;
        top = o->hi + o->off > top ? o->hi + o->off : top;
    }
    return 0;
}

/* CH_PULL_CLOCKS: one row per source in t (spans, connections) with col, its first
 * time there, as --during reads it. */
static int pull_first(struct pull *p, const struct ch_table *t, const char *col)
{
    const unsigned char *q, *end;
    struct sf_buf ins;
    sqlite3_stmt *st = NULL;
    char what[96], cond[64];
    int rc;

    snprintf(what, sizeof(what), "skey, assumeNotNull(min(%s))", col);
    snprintf(cond, sizeof(cond), "%s IS NOT NULL", col);
    if ((rc = ask(p, t, what, cond, 1, "GROUP BY skey")) != 0)
        return rc;
    sf_buf_init(&ins, 4096);
    sf_buf_printf(&ins, "INSERT INTO %s (source_id, %s) VALUES (?, ?)", t->name, col);
    if (sqlite3_prepare_v2(sf_db_handle(p->db), (const char *)ins.data, -1, &st, NULL) != SQLITE_OK)
        rc = sf_err_set(p->err, SF_E_DB, UINT64_MAX, "%s: %s", t->name,
                        sqlite3_errmsg(sf_db_handle(p->db)));
    for (q = p->r.data, end = q + p->r.len; rc == 0 && q < end;) {
        uint64_t skey, v;
        const struct src *so;
        if (ch_get_u64(&q, end, &skey) < 0 || ch_get_u64(&q, end, &v) < 0) {
            rc = truncated(p);
            break;
        }
        if ((so = src_of(p, skey)) == NULL)
            continue;
        sqlite3_bind_int64(st, 1, so->id);
        sqlite3_bind_int64(st, 2, (int64_t)v);
        rc = sf_db_exec_stmt(p->db, st, NULL, p->err);
    }
    sqlite3_finalize(st);
    sf_buf_free(&ins);
    return rc;
}

/* The tables CH_PULL_NO_SAMPLES leaves on the cluster: those that grow with the
 * profile (the samples, the off-CPU intervals, the event loops' shared time, and the
 * stacks they name). */
static int stays(const struct ch_table *t)
{
    static const char *const names[] = {"samples", "offcpu", "shared_intervals", "stacks"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(t->name, names[i]) == 0)
            return 1;
    return 0;
}

/* Into cond the rows of t that a thinned pull keeps: the spans p->thin meets, the rows
 * that hang on them (contexts and headers by span row, markers and intervals by span id,
 * those without one kept), every row of the other tables; "1" without p->thin. */
static int cond_of(struct pull *p, const struct ch_table *t, struct sf_buf *cond)
{
    char spans[CH_TABLE_MAX];
    int by_row = strcmp(t->name, "contexts") == 0 || strcmp(t->name, "span_headers") == 0,
        by_id = strcmp(t->name, "span_events") == 0 || strcmp(t->name, "span_intervals") == 0;

    if (p->thin == NULL || !(by_row || by_id || strcmp(t->name, "spans") == 0))
        return sf_buf_printf(cond, "1");
    if (strcmp(t->name, "spans") == 0)
        return sf_buf_printf(cond, "%s", p->thin);
    if (ch_table(p->ch, p->cluster, "spans", spans, sizeof(spans)) != 0)
        return -1;
    return by_row ? sf_buf_printf(cond,
                                  "(skey, span_row) GLOBAL IN (SELECT skey, id FROM %s WHERE skey "
                                  "IN (%s) AND (%s))",
                                  spans, (const char *)p->keys.data, p->thin)
                  : sf_buf_printf(cond, "span_id IS NULL OR span_id GLOBAL IN " CH_SPAN_IDS_WHERE,
                                  spans, (const char *)p->keys.data, p->thin);
}

/* One table's rows (CH_PULL_CLOCKS: the clock fits, and the first times). */
static int pull_table(struct pull *p, size_t ti)
{
    const struct ch_table *t = &ch_tables[ti];
    struct sf_buf cond;
    int rc;

    if (p->what == CH_PULL_CLOCKS && strcmp(t->name, "clock_fits") != 0)
        return strcmp(t->name, "spans") == 0         ? pull_first(p, t, "req_start_ns")
               : strcmp(t->name, "connections") == 0 ? pull_first(p, t, "first_ns")
                                                     : 0;
    if (p->what == CH_PULL_NO_SAMPLES && stays(t))
        return 0;
    if (t->cols[0].type != CH_KEY) /* stacks: by content, one row per key */
        rc = ask(p, t, "stack_key, any(frames)", "1", 0, "GROUP BY stack_key");
    else if ((rc = pull_offsets(p, ti)) == 0) {
        sf_buf_init(&cond, (size_t)1 << 30); /* the source keys, and the condition */
        rc = cond_of(p, t, &cond) != 0 ? sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX,
                                                    "query too long (%zu sources)", p->nsrc)
                                       : ask(p, t, NULL, (const char *)cond.data, 1, "");
        sf_buf_free(&cond);
    }
    return rc ? rc : insert_rows(p, t);
}

/* The schema's indexes set aside while the tables fill (into ddl: their CREATE
 * statements, ';'-separated), then built once from the rows: an index kept up to date
 * row by row was most of the read-back's time. */
static int drop_indexes(struct pull *p, struct sf_buf *ddl)
{
    sqlite3 *h = sf_db_handle(p->db);
    sqlite3_stmt *st;
    struct sf_buf drop;
    int rc = 0;

    if (sqlite3_prepare_v2(h,
                           "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
                           "sql IS NOT NULL",
                           -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(p->err, SF_E_DB, UINT64_MAX, "indexes: %s", sqlite3_errmsg(h));
    sf_buf_init(&drop, 1u << 20);
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
        if (sf_buf_printf(&drop, "DROP INDEX \"%s\";", sqlite3_column_text(st, 0)) ||
            sf_buf_printf(ddl, "%s;", sqlite3_column_text(st, 1)))
            rc = sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    sqlite3_finalize(st);
    if (rc == 0 && drop.len)
        rc = sf_db_exec(p->db, (const char *)drop.data, p->err);
    sf_buf_free(&drop);
    return rc;
}

/* A pull's buffers for its queries and answers; pull_free releases them and what the
 * pull read. */
static void pull_init(struct pull *p)
{
    sf_buf_init(&p->keys, 1u << 20);
    sf_buf_init(&p->sql, 2u << 20);
    sf_buf_init(&p->r, CH_BODY_MAX);
}

static void pull_free(struct pull *p)
{
    for (size_t i = 0; i < ch_ntables; i++)
        free(p->off[i]);
    free(p->src);
    sf_buf_free(&p->keys);
    sf_buf_free(&p->sql);
    sf_buf_free(&p->r);
}

int ch_pull_check(struct ch *c, const char *cluster, struct sf_err *err)
{
    int rc;

    /* the tables as spanfold writes them, or a clear difference; a server without the
     * database, asked for the shards that answered (ch_cluster), reads theirs */
    if ((rc = ch_schema_check(c, cluster, err)) == 1 && ch_partial(c))
        rc = 0;
    if (rc == 1)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "no spanfold tables in ClickHouse database %s (spanfold push)", ch_db(c));
    return rc;
}

int ch_pull(struct ch *c, const char *cluster, enum ch_pull_what what, const char *thin,
            const char *path, struct sf_err *err)
{
    struct sf_buf ddl;
    struct pull p = {.ch = c, .cluster = cluster != NULL, .what = what, .err = err, .thin = thin};
    int rc;

    if ((rc = ch_pull_check(c, cluster, err)) != 0)
        return rc;
    pull_init(&p);
    if ((rc = sf_db_open_mode(&p.db, path, SF_DB_CREATE, err)) == 0)
        /* rows come table by table (samples before stacks); every reference is kept */
        rc = sf_db_exec(p.db, "PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF", err);
    sf_buf_init(&ddl, 1u << 20);
    if (rc == 0)
        rc = drop_indexes(&p, &ddl);
    if (rc == 0)
        rc = pull_sources(&p);
    for (size_t i = 1; i < ch_ntables && rc == 0; i++)
        rc = pull_table(&p, i);
    if (rc == 0 && ddl.len && (rc = sf_db_commit(p.db, err)) == 0)
        rc = sf_db_exec(p.db, (const char *)ddl.data, err);
    sf_buf_free(&ddl);
    if (p.db && sf_db_close(p.db, rc ? NULL : err) < 0 && rc == 0)
        rc = SF_E_DB;
    pull_free(&p);
    return rc;
}

int ch_pull_samples(struct ch *c, const char *cluster, const char *where, const char *path,
                    struct sf_err *err)
{
    static const char *const rows[] = {"samples", "offcpu"}; /* those with a span and a stack */
    struct pull p = {.ch = c, .cluster = cluster != NULL, .what = CH_PULL_ALL, .err = err};
    size_t st = table_index("stacks");
    char name[CH_TABLE_MAX];
    struct sf_buf cond;
    int rc;

    pull_init(&p);
    sf_buf_init(&cond, (size_t)1 << 30); /* the keys and where, once per table */
    if ((rc = sf_db_open_mode(&p.db, path, SF_DB_WRITE, err)) == 0)
        rc = sf_db_exec(p.db, "PRAGMA synchronous = OFF", err);
    /* the sources and the rows' offsets as the whole pull finds them */
    if (rc == 0)
        rc = read_sources(&p);
    for (size_t i = 0; rc == 0 && i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t ti = table_index(rows[i]);
        if ((rc = pull_offsets(&p, ti)) == 0 &&
            (rc = ask(&p, &ch_tables[ti], NULL, where, 1, "")) == 0)
            rc = insert_rows(&p, &ch_tables[ti]);
        /* and the stacks they name */
        if (rc == 0 && (ch_table(c, p.cluster, rows[i], name, sizeof(name)) ||
                        sf_buf_printf(&cond,
                                      /* each key once: a few hundred, not a row a
                                         sample (CH_SPAN_ID_SET: what rows cost) */
                                      "%sstack_key GLOBAL IN (SELECT DISTINCT stack_key FROM %s "
                                      "WHERE (%s) AND skey IN (%s))",
                                      i ? " OR " : "", name, where, (const char *)p.keys.data)))
            rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "query too long");
    }
    if (rc == 0 && (rc = ask(&p, &ch_tables[st], "stack_key, any(frames)", (const char *)cond.data,
                             0, "GROUP BY stack_key")) == 0)
        rc = insert_rows(&p, &ch_tables[st]);
    sf_buf_free(&cond);
    if (p.db && sf_db_close(p.db, rc ? NULL : err) < 0 && rc == 0)
        rc = SF_E_DB;
    pull_free(&p);
    return rc;
}

int ch_pull_span_order(struct ch *c, const char *cluster, struct sf_buf *keys, struct sf_buf *ord,
                       struct sf_err *err)
{
    struct pull p = {.ch = c, .cluster = cluster != NULL, .what = CH_PULL_ALL, .err = err};
    size_t ti = table_index("spans");
    int rc, bad = 0;

    pull_init(&p);
    if ((rc = ch_pull_check(c, cluster, err)) == 0)
        rc = read_sources(&p);
    if (rc == 0)
        rc = pull_offsets(&p, ti);
    sf_buf_reset(keys);
    sf_buf_reset(ord);
    if (rc == 0) {
        /* id + transform(skey, [the sources that moved], [their offsets], 0) */
        struct sf_buf from, to;
        sf_buf_init(&from, 1u << 20);
        sf_buf_init(&to, 1u << 20);
        bad |= sf_buf_printf(keys, "%s", (const char *)p.keys.data);
        for (size_t i = 0; i < p.noff[ti]; i++) {
            const struct off *o = &p.off[ti][i];
            if (o->off == 0)
                continue;
            bad |=
                sf_buf_printf(&from, "%s%llu", from.len ? ", " : "", (unsigned long long)o->skey);
            bad |= sf_buf_printf(&to, "%stoInt64(%lld)", to.len ? ", " : "", (long long)o->off);
        }
        if (from.len)
            bad |= sf_buf_printf(ord, "id + transform(skey, [%s], [%s], toInt64(0))",
                                 (const char *)from.data, (const char *)to.data);
        else
            bad |= sf_buf_printf(ord, "id");
        sf_buf_free(&from);
        sf_buf_free(&to);
        if (bad)
            rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "too many sources (%zu)", p.nsrc);
    }
    pull_free(&p);
    return rc;
}

int ch_tmpdb_make(const char *tag, char *dir, char *db, size_t n)
{
    const char *t = getenv("TMPDIR");

    snprintf(dir, n, "%s/spanfold-%s.XXXXXX", t && *t ? t : "/tmp", tag);
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(db, n, "%s/%s.db", dir, tag);
    return 0;
}

void ch_tmpdb_remove(const char *dir, const char *db)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal", SF_DB_OWNER_SUFFIX};
    char path[4200];

    for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", db, sfx[i]);
        unlink(path);
    }
    rmdir(dir);
}

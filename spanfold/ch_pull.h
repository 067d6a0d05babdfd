/* ch_pull.h - what spanfold push wrote to ClickHouse, back into a SQLite file
 * (ch_pull.c), so that the commands that read a database run their one set of
 * queries on it: spanfold report --clickhouse, and the clock placement of
 * spanfold stacks --during --clickhouse. */
#ifndef SPANFOLD_CH_PULL_H
#define SPANFOLD_CH_PULL_H

#include <stddef.h>

#include "ch.h"
#include "sf_err.h"

enum ch_pull_what {
    /* every table push writes, the sources ClickHouse has complete; row ids are the
       files' own unless two sources' ranges collide (then the later one moves up) */
    CH_PULL_ALL,
    /* what --during reads: sources (sources.id is the source's skey as int64), the
       clock fits, and one row per source in spans and connections with its first
       req_start_ns / first_ns */
    CH_PULL_CLOCKS,
    /* CH_PULL_ALL but what grows with the profile: samples, off-CPU intervals, shared
       intervals and stacks stay on the cluster (spanfold report: ch_sets.c asks it;
       ch_pull_samples brings back a few) */
    CH_PULL_NO_SAMPLES
};

/* Write the tables of c's database (the Distributed NAME_d tables with cluster) into
 * a new spanfold database at path; with thin (a ClickHouse condition on a spans row,
 * sf_thin_sql_ch: the requests a report analyses one by one) only the spans it meets and
 * the rows that hang on them (contexts, headers, markers, intervals), NULL: all.  Returns 0, or
 * SF_E_DB (ClickHouse or SQLite refused; a schema mismatch), SF_E_MALFORMED (an answer ends inside
 * a row), SF_E_USAGE (no complete source), SF_E_NOMEM / SF_E_LIMIT with err filled. */
int ch_pull(struct ch *c, const char *cluster, enum ch_pull_what what, const char *thin,
            const char *path, struct sf_err *err);

/* The samples and off-CPU intervals of c's database that meet where (a ClickHouse
 * condition over the columns they share: span_id) and the stacks they name, into the file at path
 * that ch_pull(CH_PULL_NO_SAMPLES) wrote, with the ids CH_PULL_ALL would have given them.  Returns
 * as ch_pull. */
int ch_pull_samples(struct ch *c, const char *cluster, const char *where, const char *path,
                    struct sf_err *err);

/* ch_pull's first step: 0 when c's database has spanfold's tables with spanfold's
 * columns, or SF_E_USAGE (none: nothing pushed) / SF_E_DB (a schema mismatch, said in
 * err). */
int ch_pull_check(struct ch *c, const char *cluster, struct sf_err *err);

/* How ch_pull would order the spans, for queries that stay on the cluster
 * (ch_series.c), the tables checked first (ch_pull_check): into keys the complete sources' keys
 * ("K1, K2", the skey IN list of every query), into ord an expression over a spans row's skey and
 * id that is the id ch_pull gives it.  Returns as ch_pull. */
int ch_pull_span_order(struct ch *c, const char *cluster, struct sf_buf *keys, struct sf_buf *ord,
                       struct sf_err *err);

/* A temporary folder ${TMPDIR:-/tmp}/spanfold-TAG.XXXXXX (dir, n bytes) and the
 * database path in it (db, n bytes).  Returns 0 or -1 (errno set). */
int ch_tmpdb_make(const char *tag, char *dir, char *db, size_t n);

/* Remove the database db (and its journal, WAL and lock files) and the folder dir. */
void ch_tmpdb_remove(const char *dir, const char *db);

#endif

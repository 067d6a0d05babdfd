/* sf_db_read.c - what readers must know about sources (see sf_db.h, "for readers"):
 * which are not complete and why, and a view of only the complete ones. */
#include <stdio.h>
#include <string.h>

#include "sf_db.h"

static int read_fail(struct sf_db *db, struct sf_err *err)
{
    return sf_err_set(err, SF_E_DB, UINT64_MAX, "reading sources: %s",
                      sqlite3_errmsg(sf_db_handle(db)));
}

int sf_db_health(struct sf_db *db, struct sf_db_health *h, struct sf_err *err)
{
    static const char sql[] = "SELECT id, path, COALESCE(error, ''), status = 'complete' "
                              "FROM main.sources ORDER BY id";
    sqlite3_stmt *st;
    size_t len = 0;
    int64_t shown = 0;
    int rc;

    memset(h, 0, sizeof(*h));
    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return read_fail(db, err);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        h->sources++;
        if (sqlite3_column_int(st, 3))
            continue;
        int64_t id = sqlite3_column_int64(st, 0);
        const char *path = (const char *)sqlite3_column_text(st, 1);
        const char *e = (const char *)sqlite3_column_text(st, 2);
        const char *what;
        if (sf_db_source_owned(db, id)) {
            h->running++;
            what = "being ingested now";
        } else if (strcmp(e, "interrupted") == 0) {
            h->interrupted++;
            what = "interrupted (its writer is gone)";
        } else {
            h->failed++;
            what = e;
        }
        if (shown++ < 3 && len + 1 < sizeof(h->text)) {
            int k = snprintf(h->text + len, sizeof(h->text) - len, "%ssource %lld %.80s: %.80s",
                             len ? "; " : "", (long long)id, path ? path : "?", what);
            len = k < 0 ? len : len + (size_t)k;
            len = len < sizeof(h->text) ? len : sizeof(h->text) - 1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return read_fail(db, err);
    if (shown > 3 && len + 1 < sizeof(h->text))
        snprintf(h->text + len, sizeof(h->text) - len, "; and %lld more", (long long)shown - 3);
    return 0;
}

int sf_db_complete_only(struct sf_db *db, struct sf_err *err)
{
    /* Unqualified names resolve to temp before main, so these shadow the tables. */
    static const char views[] =
        "CREATE TEMP VIEW sources AS SELECT * FROM main.sources WHERE status = 'complete';"
        "CREATE TEMP VIEW connections AS SELECT * FROM main.connections "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW connection_events AS SELECT * FROM main.connection_events "
        "  WHERE connection_id IN (SELECT id FROM temp.connections);"
        "CREATE TEMP VIEW spans AS SELECT * FROM main.spans "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW contexts AS SELECT * FROM main.contexts "
        "  WHERE span_row IN (SELECT id FROM temp.spans);"
        "CREATE TEMP VIEW span_headers AS SELECT * FROM main.span_headers "
        "  WHERE span_row IN (SELECT id FROM temp.spans);"
        "CREATE TEMP VIEW span_events AS SELECT * FROM main.span_events "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW losses AS SELECT * FROM main.losses "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW span_intervals AS SELECT * FROM main.span_intervals "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW samples AS SELECT * FROM main.samples "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW sample_events AS SELECT * FROM main.sample_events "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW offcpu AS SELECT * FROM main.offcpu "
        "  WHERE source_id IN (SELECT id FROM temp.sources);"
        "CREATE TEMP VIEW clock_fits AS SELECT * FROM main.clock_fits "
        "  WHERE (from_source IS NULL OR from_source IN (SELECT id FROM temp.sources)) "
        "  AND (to_source IS NULL OR to_source IN (SELECT id FROM temp.sources));";

    return sf_db_exec(db, views, err);
}

int sf_db_partial_note(struct sf_db *db, int complete_only, char *note, size_t n,
                       struct sf_err *err)
{
    struct sf_db_health h;
    int64_t bad;
    int rc;

    note[0] = 0;
    if ((rc = sf_db_health(db, &h, err)))
        return rc;
    if (complete_only && (rc = sf_db_complete_only(db, err)))
        return rc;
    bad = h.running + h.interrupted + h.failed;
    if (bad == 0)
        return 0;
    snprintf(note, n, "%lld of %lld sources %s not complete and %s: %s", (long long)bad,
             (long long)h.sources, bad == 1 ? "is" : "are",
             complete_only
                 ? (bad == 1 ? "is left out (--complete-only)" : "are left out (--complete-only)")
                 : (bad == 1 ? "is used as it is (--complete-only leaves it out)"
                             : "are used as they are (--complete-only leaves them out)"),
             h.text);
    return 0;
}

int sf_db_coverage_say(struct sf_db *db, FILE *f, const char *prefix, struct sf_err *err)
{
    struct sf_db_coverage cov[16];
    size_t n = 0;
    int rc = sf_db_coverage(db, cov, sizeof(cov) / sizeof(cov[0]), &n, err);

    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct sf_db_coverage *r = &cov[i];
        double t = r->samples ? (double)r->samples : 1;
        if (r->markers + r->sockets + r->loop + r->go + r->shared == 0)
            continue; /* nothing of it in a span */
        fprintf(f,
                "%s%s (%lld): %lld samples: %.1f %% by span markers, %.1f %% by socket events, "
                "%.1f %% by an event loop's waits, %.1f %% by goroutines, %.1f %% shared by "
                "spans (not attributed), %.1f %% outside every span\n",
                prefix, r->comm, (long long)r->pid, (long long)r->samples,
                100.0 * (double)r->markers / t, 100.0 * (double)r->sockets / t,
                100.0 * (double)r->loop / t, 100.0 * (double)r->go / t,
                100.0 * (double)r->shared / t, 100.0 * (double)r->none / t);
    }
    return rc;
}

int sf_db_coverage(struct sf_db *db, struct sf_db_coverage *rows, size_t max, size_t *n,
                   struct sf_err *err)
{
    /* a sample's signal: the source of the interval that gave it its span (found by the
     * span id, so one lookup each), or the shared interval it falls in (the latest one
     * starting before it: they do not nest on a thread) */
    static const char sql[] =
        "SELECT s.pid, MAX(s.comm), count(*),"
        " sum(s.span_id IS NOT NULL AND EXISTS (SELECT 1 FROM span_intervals i WHERE"
        "  i.span_id = s.span_id AND i.tid = s.tid AND i.start_ns <= s.ts_ns AND"
        "  i.end_ns >= s.ts_ns AND i.source = 'socket')),"
        " sum(s.span_id IS NOT NULL),"
        " sum(s.span_id IS NULL AND EXISTS (SELECT 1 FROM (SELECT h.end_ns FROM"
        "  shared_intervals h WHERE h.tid = s.tid AND h.start_ns <= s.ts_ns ORDER BY"
        "  h.start_ns DESC LIMIT 1) WHERE end_ns >= s.ts_ns)),"
        " sum(s.span_id IS NOT NULL AND EXISTS (SELECT 1 FROM span_intervals i WHERE"
        "  i.span_id = s.span_id AND i.tid = s.tid AND i.start_ns <= s.ts_ns AND"
        "  i.end_ns >= s.ts_ns AND i.source = 'socket' AND i.end_rule = 'loop')),"
        " sum(s.span_id IS NOT NULL AND EXISTS (SELECT 1 FROM span_intervals i WHERE"
        "  i.span_id = s.span_id AND i.tid = s.tid AND i.start_ns <= s.ts_ns AND"
        "  i.end_ns >= s.ts_ns AND i.source = 'socket' AND i.end_rule = 'goroutine'))"
        " FROM samples s GROUP BY s.pid ORDER BY count(*) DESC, s.pid LIMIT ?1";
    sqlite3_stmt *st;
    int rc;

    *n = 0;
    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return read_fail(db, err);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max) {
        struct sf_db_coverage *r = &rows[(*n)++];
        const char *comm = (const char *)sqlite3_column_text(st, 1);
        int64_t attributed = sqlite3_column_int64(st, 4);
        r->pid = sqlite3_column_int64(st, 0);
        snprintf(r->comm, sizeof(r->comm), "%s", comm ? comm : "");
        r->samples = sqlite3_column_int64(st, 2);
        r->loop = sqlite3_column_int64(st, 6);
        r->go = sqlite3_column_int64(st, 7);
        r->sockets = sqlite3_column_int64(st, 3) - r->loop - r->go;
        r->markers = attributed - r->sockets - r->loop - r->go;
        r->shared = sqlite3_column_int64(st, 5);
        r->none = r->samples - attributed - r->shared;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : read_fail(db, err);
}

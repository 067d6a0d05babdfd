/* Unit tests: lib/sf_db_read - which sources are not complete and why
 * (sf_db_health, sf_db_partial_note), and --complete-only's shadow views. */
#include <string.h>
#include <unistd.h>

#include "db_test.h"
#include "sf_db.h"
#include "sf_err.h"
#include "tap.h"

static int add_span(struct sf_db *db, int64_t src, struct sf_err *err)
{
    static const char sql[] = "INSERT INTO spans (source_id, proto, req_start_ns) VALUES (?1, "
                              "'h1', 1)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, src);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int main(void)
{
    struct sf_source_info in = {"pcap", "done.pcap", "a1", 1, NULL, "test_db_read"};
    struct sf_db *w, *live, *r;
    struct sf_db_health h;
    struct sf_err err;
    char path[200], note[700];
    int64_t id[4], dup;

    snprintf(path, sizeof(path), "/tmp/sf_db_read_test_%d.db", (int)getpid());
    db_cleanup(path);
    sf_err_clear(&err);
    sf_db_open(&w, path, &err);
    sf_db_open(&live, path, &err);
    /* 1 complete, 2 failed (an error), 3 killed (interrupted, no owner), 4 running */
    sf_db_source_begin(w, &in, &id[0], &dup, &err);
    add_span(w, id[0], &err);
    sf_db_source_end(w, id[0], NULL, 1, 0, &err);
    in.path = "bad.pcap", in.sha256 = "a2";
    sf_db_source_begin(w, &in, &id[1], &dup, &err);
    add_span(w, id[1], &err);
    sf_db_source_end(w, id[1], "packet 7: truncated", 7, 1, &err);
    in.path = "killed.pcap", in.sha256 = "a3";
    sf_db_source_begin(w, &in, &id[2], &dup, &err);
    add_span(w, id[2], &err);
    sf_db_commit(w, &err);
    sf_db_close(w, &err); /* the "kill": its owner lock goes with it */
    in.path = "running.pcap", in.sha256 = "a4";
    sf_db_source_begin(live, &in, &id[3], &dup, &err);
    add_span(live, id[3], &err);
    sf_db_commit(live, &err);

    TAP_EQ_INT(sf_db_open_mode(&r, path, SF_DB_READ, &err), 0, "a reader opens it");
    TAP_EQ_INT(sf_db_health(r, &h, &err), 0, "health");
    TAP_EQ_INT(h.sources, 4, "4 sources");
    TAP_EQ_INT(h.failed, 1, "1 failed");
    TAP_EQ_INT(h.interrupted, 1, "1 interrupted");
    TAP_EQ_INT(h.running, 1, "1 being ingested now");
    TAP_OK(strstr(h.text, "bad.pcap: packet 7: truncated") != NULL, "the failed one's error");
    TAP_OK(strstr(h.text, "killed.pcap: interrupted") != NULL, "the killed one");
    TAP_OK(strstr(h.text, "running.pcap: being ingested now") != NULL, "the live one");
    TAP_EQ_INT(sf_db_partial_note(r, 0, note, sizeof(note), &err), 0, "note");
    TAP_OK(strstr(note, "3 of 4 sources are not complete and are used as they are") == note,
           "note: %.200s", note);
    TAP_EQ_INT(db_count(r, "SELECT count(*) FROM spans"), 4, "all spans are read by default");
    TAP_EQ_INT(sf_db_partial_note(r, 1, note, sizeof(note), &err), 0, "--complete-only");
    TAP_OK(strstr(note, "are left out (--complete-only)") != NULL, "note: %.200s", note);
    TAP_EQ_INT(db_count(r, "SELECT count(*) FROM spans"), 1, "only the complete source's span");
    TAP_EQ_INT(db_count(r, "SELECT count(*) FROM sources"), 1, "and only its source row");
    TAP_EQ_INT(db_count(r, "SELECT count(*) FROM main.spans"), 4, "main.* still sees all");
    sf_db_close(r, &err);
    sf_db_source_end(live, id[3], NULL, 1, 0, &err);
    TAP_EQ_INT(sf_db_open_mode(&r, path, SF_DB_READ, &err), 0, "reopen");
    sf_db_health(r, &h, &err);
    TAP_EQ_INT(h.running, 0, "the live one ended");
    sf_db_close(r, &err);
    sf_db_close(live, &err);
    db_cleanup(path);
    return tap_done();
}

/* Unit tests: lib/sf_db_net - sf_db_net_contexts (up to four contexts rows per INSERT)
 * writes exactly the rows that one sf_db_net_context call per context writes: same
 * columns, same order, for 1 to 9 contexts (one, two and three statements), with NULL
 * and non-NULL optional columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_test.h"
#include "sf_db.h"
#include "sf_db_net.h"
#include "sf_err.h"
#include "sf_tracectx.h"
#include "tap.h"

/* Nine different contexts: valid and invalid, with and without tracestate, ids, flags. */
static void make_contexts(struct sf_tracectx *c)
{
    static const char *const tp[] = {
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01", /* invalid */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
    };
    static const char *const b3[] = {
        "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90",
        "a3ce929d0e0e4736-00f067aa0ba902b7-d", "x", /* invalid */
    };
    static const char *const uber[] = {"abc:1:0:1", "0:e457b5a2e4d86bd1:0:1", "ABC%3a1%3A2:08"};

    for (int i = 0; i < 3; i++) {
        sf_tracectx_parse_traceparent(&c[i], tp[i], strlen(tp[i]));
        sf_tracectx_parse_b3_single(&c[3 + i], b3[i], strlen(b3[i]));
        sf_tracectx_parse_uber(&c[6 + i], uber[i], strlen(uber[i]));
    }
    strcpy(c[0].tracestate, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    strcpy(c[2].error, "tracestate discarded: a note");
}

int main(void)
{
    struct sf_source_info in = {"pcap", "x.pcap", "bb", 10, "realtime", "test_db_net"};
    struct sf_net_conn conn = {0};
    struct sf_net_span sp = {0};
    struct sf_tracectx ctx[9];
    struct sf_db *db;
    struct sf_err err;
    char path[200], q[1024];
    int64_t src = 0, dup = 0, cid = 0, one = 0, multi = 0;

    snprintf(path, sizeof(path), "/tmp/sf_db_net_test_%d.db", (int)getpid());
    db_cleanup(path);
    sf_err_clear(&err);
    make_contexts(ctx);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "create a database");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &src, &dup, &err), 0, "register a source");
    conn.source_id = src;
    conn.client_addr = conn.server_addr = "127.0.0.1";
    conn.app_proto = "h2";
    TAP_EQ_INT(sf_db_net_conn_insert(db, &conn, &cid, &err), 0, "a connection row");
    sp.source_id = src;
    sp.connection_id = cid;
    sp.proto = "h2";
    /* n contexts in one call (1 to 9: up to 3 statements) against n single inserts. */
    for (int n = 1; n <= 9; n++) {
        sp.stream_id = 100 + 2 * n;
        TAP_EQ_INT(sf_db_net_span(db, &sp, &one, &err), 0, "span A (%d)", n);
        for (int i = 0; i < n; i++)
            sf_db_net_context(db, one, "request", &ctx[i], &err);
        sp.stream_id = 101 + 2 * n;
        TAP_EQ_INT(sf_db_net_span(db, &sp, &multi, &err), 0, "span B (%d)", n);
        TAP_EQ_INT(sf_db_net_contexts(db, multi, "request", ctx, n, &err), 0,
                   "%d contexts in one call", n);
        TAP_EQ_INT(sf_db_commit(db, &err), 0, "commit");
        /* same columns row by row, in id order: number rows per span and compare */
        snprintf(q, sizeof(q),
                 "WITH a AS (SELECT row_number() OVER (ORDER BY id) AS k, direction, format, "
                 "raw, trace_id, span_id, parent_span_id, sampled, debug, flags, trace_id_64, "
                 "tracestate, valid, error FROM contexts WHERE span_row = %lld), "
                 "b AS (SELECT row_number() OVER (ORDER BY id) AS k, direction, format, raw, "
                 "trace_id, span_id, parent_span_id, sampled, debug, flags, trace_id_64, "
                 "tracestate, valid, error FROM contexts WHERE span_row = %lld) "
                 "SELECT (SELECT count(*) FROM (SELECT * FROM a EXCEPT SELECT * FROM b)) + "
                 "(SELECT count(*) FROM (SELECT * FROM b EXCEPT SELECT * FROM a)) + "
                 "abs((SELECT count(*) FROM a) - %d) + abs((SELECT count(*) FROM b) - %d)",
                 (long long)one, (long long)multi, n, n);
        TAP_EQ_INT(db_count(db, q), 0, "%d contexts: the same rows in the same order", n);
    }
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM contexts WHERE tracestate IS NOT NULL AND "
                            "error IS NOT NULL AND valid = 0"),
               0, "no row mixes columns of different contexts");
    TAP_OK(db_count(db, "SELECT count(*) FROM contexts WHERE valid = 0") > 0 &&
               db_count(db, "SELECT count(*) FROM contexts WHERE tracestate IS NOT NULL") > 0,
           "invalid contexts and tracestates were among the rows");
    TAP_EQ_INT(sf_db_close(db, &err), 0, "close");
    db_cleanup(path);
    return tap_done();
}

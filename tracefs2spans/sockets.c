/* sockets.c - the socket events of one tracefs source (spantrace --sockets) joined to
 * the capture's spans, in the database.
 *
 *   span_events kind 'sock' ----+
 *                               +--> sockjoin.c --> span_events begin/end  (source socket)
 *   spans (req_seq_*, resp_seq_*)                   span_intervals          (source socket:
 *     JOIN connections (4-tuple)                      time one span owns alone on a thread)
 *                                                   shared_intervals        (the rest)
 *                                                   clock pairs (event, packet of its bytes)
 *                                                   spans.parent_span_id of a call the
 *                                                     traced process made (its client side)
 *
 * Every run replaces what an earlier one made for the source, so the join can run
 * again when a capture arrives later (tracefs2spans --refit).  Only spans with a span
 * id get thread time: samples.span_id and span_intervals.span_id name spans by it.  A
 * call the traced process made (a downstream request, seen on its client socket) needs
 * none: the span its thread was serving when it sent the request becomes its parent,
 * where the request's trace context named none (spans.parent_source = this source).
 */
#include <stdlib.h>
#include <string.h>

#include "sf_db.h"
#include "sf_db_trace.h"
#include "t2s.h"

#define MAX_ROWS     4000000 /* events or spans read for one source */
#define SHARED_IDS   32      /* span ids listed in one shared_intervals row */
#define SPAN_ID_SIZE 17

struct span_meta {
    int64_t row;                /* spans.id */
    char span_id[SPAN_ID_SIZE]; /* "": the request carried no context */
    char trace_id[33];
    int64_t req_start_ns, resp_start_ns;
    int pair_clock; /* its capture has the clock the pairs are for */
};

struct run {
    struct t2s_ctx *c;
    int64_t src;
    struct sj_event *ev;
    size_t ne;
    struct sj_span *sp;
    struct span_meta *meta;
    size_t ns;
    char to_clock[64];
    int64_t exclusive_ns, shared_ns, loop_ns;
    uint64_t loop;
    int in_loop;      /* on_piece: the event loop's rules gave it */
    int in_go;        /* on_piece: a goroutine's claim, on the threads that ran it */
    struct go_map go; /* a Go program's goroutines, as the join's threads */
    uint64_t exclusive, shared, calls, linked;
    struct sf_err *err;
};

static void *grow(void *p, size_t *cap, size_t size)
{
    size_t n = *cap ? 2 * *cap : 1024;
    void *q = realloc(p, n * size);

    if (q)
        *cap = n;
    return q;
}

static int load_events(struct run *r)
{
    sqlite3_stmt *st;
    size_t cap = 0;

    if (sqlite3_prepare_v2(sf_db_handle(r->c->db),
                           "SELECT ts_ns, pid, tid, message FROM span_events WHERE source_id = ?1 "
                           "AND kind = 'sock' ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(r->err, SF_E_DB, UINT64_MAX, "reading socket events");
    sqlite3_bind_int64(st, 1, r->src);
    while (sqlite3_step(st) == SQLITE_ROW && r->ne < MAX_ROWS) {
        const char *m = (const char *)sqlite3_column_text(st, 3);
        struct sj_event e;
        if (m == NULL || sockjoin_parse(m, strlen(m), &e, NULL) < 0)
            continue; /* checked when ingested; a hand-edited row is skipped */
        e.ts_ns = sqlite3_column_int64(st, 0);
        e.pid = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
        e.tid = sqlite3_column_int64(st, 2);
        if (r->ne == cap) {
            struct sj_event *q = grow(r->ev, &cap, sizeof(*q));
            if (q == NULL) {
                sqlite3_finalize(st);
                return sf_err_set(r->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
            }
            r->ev = q;
        }
        r->ev[r->ne++] = e;
    }
    sqlite3_finalize(st);
    return 0;
}

static void text_into(char *dst, size_t n, sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);

    snprintf(dst, n, "%s", t ? t : "");
}

static void span_row(struct run *r, sqlite3_stmt *st, struct sj_span *s, struct span_meta *m)
{
    const char *sa = (const char *)sqlite3_column_text(st, 2);
    const char *ca = (const char *)sqlite3_column_text(st, 4);
    const char *clock = (const char *)sqlite3_column_text(st, 12);

    m->row = sqlite3_column_int64(st, 13);
    text_into(m->span_id, sizeof(m->span_id), st, 0);
    text_into(m->trace_id, sizeof(m->trace_id), st, 1);
    s->conn =
        sockjoin_conn_key(sa ? sa : "", sa ? strlen(sa) : 0, (unsigned)sqlite3_column_int(st, 3),
                          ca ? ca : "", ca ? strlen(ca) : 0, (unsigned)sqlite3_column_int(st, 5));
    s->has_req =
        sqlite3_column_type(st, 6) != SQLITE_NULL && sqlite3_column_type(st, 7) != SQLITE_NULL;
    s->req_start = (uint32_t)sqlite3_column_int64(st, 6);
    s->req_end = (uint32_t)sqlite3_column_int64(st, 7);
    s->has_resp =
        sqlite3_column_type(st, 8) != SQLITE_NULL && sqlite3_column_type(st, 9) != SQLITE_NULL;
    s->resp_start = (uint32_t)sqlite3_column_int64(st, 8);
    s->resp_end = (uint32_t)sqlite3_column_int64(st, 9);
    m->req_start_ns =
        sqlite3_column_type(st, 10) == SQLITE_NULL ? SJ_NONE : sqlite3_column_int64(st, 10);
    m->resp_start_ns =
        sqlite3_column_type(st, 11) == SQLITE_NULL ? SJ_NONE : sqlite3_column_int64(st, 11);
    /* pairs are for one capture clock: the first one met */
    if (r->to_clock[0] == 0 && clock)
        snprintf(r->to_clock, sizeof(r->to_clock), "%s", clock);
    m->pair_clock = clock && strcmp(clock, r->to_clock) == 0;
}

/* The capture's spans that know their bytes, in capture order per connection (those
 * without a span id too: they can be a traced process's calls). */
static int load_spans(struct run *r)
{
    sqlite3_stmt *st;
    size_t cap = 0;

    if (sqlite3_prepare_v2(
            sf_db_handle(r->c->db),
            "SELECT s.span_id, s.trace_id, c.server_addr, c.server_port, c.client_addr, "
            "c.client_port, s.req_seq_start, s.req_seq_end, s.resp_seq_start, s.resp_seq_end, "
            "s.req_start_ns, s.resp_start_ns, so.clock, s.id FROM spans s JOIN connections c ON "
            "c.id = s.connection_id JOIN sources so ON so.id = s.source_id WHERE so.kind = 'pcap' "
            "AND (s.req_seq_start IS NOT NULL OR s.resp_seq_start IS NOT NULL) ORDER BY "
            "s.connection_id, s.id",
            -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(r->err, SF_E_DB, UINT64_MAX, "reading spans: %s",
                          sqlite3_errmsg(sf_db_handle(r->c->db)));
    while (sqlite3_step(st) == SQLITE_ROW && r->ns < MAX_ROWS) {
        if (r->ns == cap) {
            size_t c2 = cap;
            struct sj_span *q = grow(r->sp, &cap, sizeof(*q));
            struct span_meta *m = q ? grow(r->meta, &c2, sizeof(*m)) : NULL;
            if (q)
                r->sp = q;
            if (m == NULL) {
                sqlite3_finalize(st);
                return sf_err_set(r->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
            }
            r->meta = m;
        }
        span_row(r, st, &r->sp[r->ns], &r->meta[r->ns]);
        r->ns++;
    }
    sqlite3_finalize(st);
    return 0;
}

/* The begin and end markers of one claim, as a USDT probe would have made them. */
static int write_markers(struct run *r, const struct sj_claim *cl, const struct sj_result *res)
{
    const struct span_meta *m = &r->meta[cl->span];
    const char *role = res->reader_tid == cl->tid && res->writer_tid == cl->tid ? "read+write"
                       : res->reader_tid == cl->tid                             ? "read"
                                                                                : "write";
    struct sf_trace_event ev = {.cpu = SF_DB_NULL,
                                .pid = cl->pid >= 0 ? cl->pid : SF_DB_NULL,
                                .tid = cl->tid,
                                .span_id = m->span_id,
                                .trace_id = m->trace_id[0] ? m->trace_id : NULL,
                                .decision = SF_DB_NULL,
                                .message = role,
                                .message_len = strlen(role),
                                .source = "socket"};
    int rc;

    /* a goroutine's claim: the markers on the threads that ran it then */
    ev.ts_ns = cl->start_ns;
    ev.kind = "begin";
    ev.tid = go_map_thread(&r->go, cl->tid, cl->start_ns);
    if (ev.tid >= 0 && (rc = sf_db_trace_event(r->c->db, r->src, &ev, r->err)))
        return rc;
    ev.ts_ns = cl->end_ns;
    ev.kind = "end";
    ev.tid = go_map_thread(&r->go, cl->tid, cl->end_ns);
    return ev.tid >= 0 ? sf_db_trace_event(r->c->db, r->src, &ev, r->err) : 0;
}

static int on_piece(void *ctx, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns,
                    const size_t *spans, size_t n)
{
    struct run *r = ctx;
    char ids[SHARED_IDS * SPAN_ID_SIZE + 8];
    size_t k, off = 0;

    if (n == 1) {
        const struct span_meta *m = &r->meta[spans[0]];
        struct sf_trace_interval iv = {m->span_id,
                                       m->trace_id[0] ? m->trace_id : NULL,
                                       pid >= 0 ? pid : SF_DB_NULL,
                                       tid,
                                       start_ns,
                                       end_ns,
                                       0,
                                       SF_DB_NULL,
                                       r->in_loop ? "loop"
                                       : r->in_go ? "goroutine"
                                                  : "socket",
                                       "socket"};
        r->exclusive++;
        r->exclusive_ns += end_ns - start_ns;
        if (r->in_loop) {
            r->loop++;
            r->loop_ns += end_ns - start_ns;
        }
        return sf_db_trace_interval(r->c->db, r->src, &iv, r->err);
    }
    for (k = 0; k < n && k < SHARED_IDS; k++)
        off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%s", k ? "," : "",
                                r->meta[spans[k]].span_id);
    if (k < n)
        snprintf(ids + off, sizeof(ids) - off, ",...");
    r->shared++;
    r->shared_ns += end_ns - start_ns;
    return sf_db_trace_shared(r->c->db, r->src, pid >= 0 ? pid : SF_DB_NULL, tid, start_ns, end_ns,
                              (int64_t)n, ids, r->err);
}

/* (event time, capture time) of the same bytes: the first byte of each message. */
static int make_pairs(struct run *r, const struct sj_result *res, struct cf_pair **out, size_t *n)
{
    struct cf_pair *p = malloc((2 * r->ns + 1) * sizeof(*p));

    *n = 0;
    if (p == NULL)
        return sf_err_set(r->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    for (size_t i = 0; i < r->ns; i++) {
        const struct span_meta *m = &r->meta[i];
        if (!m->pair_clock || m->span_id[0] == 0)
            continue;
        if (res[i].req_a_ts != SJ_NONE && m->req_start_ns != SJ_NONE)
            p[(*n)++] = (struct cf_pair){res[i].req_a_ts, m->req_start_ns};
        if (res[i].writer_tid >= 0 && m->resp_start_ns != SJ_NONE)
            p[(*n)++] = (struct cf_pair){res[i].resp_first_ts, m->resp_start_ns};
    }
    *out = p;
    return 0;
}

/* The calls the traced process made (their client side in the events): each one's
 * parent is the span whose interval on the calling thread (markers or socket events,
 * the innermost) holds the send of its request, unless its trace context named one. */
static int link_calls(struct run *r, const struct sj_result *res)
{
    static const char find_sql[] =
        "SELECT i.span_id FROM span_intervals i JOIN sources si ON si.id = i.source_id "
        "WHERE i.tid = ?1 AND i.start_ns <= ?2 AND i.end_ns >= ?2 AND i.span_id <> ?3 AND "
        "si.clock = (SELECT clock FROM sources WHERE id = ?4) "
        "ORDER BY i.depth DESC, i.start_ns DESC, i.id DESC LIMIT 1";
    static const char set_sql[] = "UPDATE spans SET parent_span_id = ?1, parent_source = ?2 "
                                  "WHERE id = ?3 AND parent_span_id IS NULL";
    int rc = 0;

    for (size_t i = 0; i < r->ns && rc == 0; i++) {
        sqlite3_stmt *find, *set;
        char parent[SPAN_ID_SIZE];
        if (res[i].caller_tid < 0)
            continue;
        r->calls++;
        if ((find = sf_db_stmt(r->c->db, find_sql, r->err)) == NULL)
            return SF_E_DB;
        sqlite3_bind_int64(find, 1, go_map_thread(&r->go, res[i].caller_tid, res[i].call_start_ts));
        sqlite3_bind_int64(find, 2, res[i].call_start_ts);
        sqlite3_bind_text(find, 3, r->meta[i].span_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(find, 4, r->src);
        if (sqlite3_step(find) != SQLITE_ROW) {
            sqlite3_reset(find);
            continue; /* the thread served no span then: a call of its own */
        }
        text_into(parent, sizeof(parent), find, 0);
        sqlite3_reset(find);
        if ((set = sf_db_stmt(r->c->db, set_sql, r->err)) == NULL)
            return SF_E_DB;
        sqlite3_bind_text(set, 1, parent, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(set, 2, r->src);
        sqlite3_bind_int64(set, 3, r->meta[i].row);
        rc = sf_db_exec_stmt(r->c->db, set, NULL, r->err);
        r->linked += sqlite3_changes(sf_db_handle(r->c->db)) > 0;
    }
    return rc;
}

/* A piece of a thread's or a goroutine's time: a goroutine's goes to the threads that
 * ran it then (goroutines.c), end_rule "goroutine". */
static int on_join_piece(void *ctx, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns,
                         const size_t *spans, size_t n)
{
    struct run *r = ctx;
    int rc;

    r->in_go = tid >= GO_VTID;
    rc = go_map_pieces(&r->go, pid, tid, start_ns, end_ns, spans, n, on_piece, ctx);
    r->in_go = 0;
    return rc;
}

/* A piece the event loop's rules gave one span (sockjoin.c): end_rule "loop". */
static int on_loop_piece(void *ctx, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns,
                         const size_t *spans, size_t n)
{
    struct run *r = ctx;
    int rc;

    r->in_loop = 1;
    rc = on_join_piece(ctx, pid, tid, start_ns, end_ns, spans, n);
    r->in_loop = 0;
    return rc;
}

static void report(const struct run *r, const struct sj_result *res, uint64_t hits)
{
    uint64_t placed = 0, one = 0, handoff = 0;

    for (size_t i = 0; i < r->ns; i++) {
        if (res[i].reader_tid < 0 && res[i].writer_tid < 0)
            continue;
        placed++;
        if (res[i].reader_tid >= 0 && res[i].reader_tid == res[i].writer_tid)
            one++;
        else if (res[i].reader_tid >= 0 && res[i].writer_tid >= 0)
            handoff++;
    }
    if (r->c->quiet)
        return;
    fprintf(stderr,
            "tracefs2spans: source %lld: %zu socket events, %llu on the bytes of %llu of %zu "
            "spans (%llu read and answered on one thread, %llu handed off); thread time: "
            "%llu exclusive pieces (%.3f ms; %llu of them, %.3f ms, by an event loop's waits), "
            "%llu shared (%.3f ms); %llu calls made by traced "
            "threads, %llu given the span their thread served as parent\n",
            (long long)r->src, r->ne, (unsigned long long)hits, (unsigned long long)placed, r->ns,
            (unsigned long long)one, (unsigned long long)handoff, (unsigned long long)r->exclusive,
            (double)r->exclusive_ns / 1e6, (unsigned long long)r->loop, (double)r->loop_ns / 1e6,
            (unsigned long long)r->shared, (double)r->shared_ns / 1e6, (unsigned long long)r->calls,
            (unsigned long long)r->linked);
}

int sockets_run(struct t2s_ctx *c, int64_t src, struct cf_pair **pairs, size_t *npairs,
                char *to_clock, size_t to_len, struct sf_err *err)
{
    struct run r = {.c = c, .src = src, .err = err};
    struct sj_result *res = NULL;
    struct sj_claim *cl = NULL;
    size_t *ev_span = NULL;
    uint64_t hits = 0;
    size_t nc = 0;
    int rc;

    *pairs = NULL;
    *npairs = 0;
    if ((rc = sf_db_trace_clear_socket(c->db, src, err)) || (rc = load_events(&r)) ||
        (rc = load_spans(&r)) || (rc = go_map_build(&r.go, r.ev, r.ne)))
        goto out;
    go_map_events(&r.go, r.ev, r.ne);
    res = malloc((r.ns + 1) * sizeof(*res));
    cl = malloc((3 * r.ns + 1) * sizeof(*cl));
    ev_span = malloc((r.ne + 1) * sizeof(*ev_span));
    if (res == NULL || cl == NULL || ev_span == NULL) {
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        goto out;
    }
    if ((rc = sockjoin_match(r.sp, r.ns, r.ev, r.ne, res, &hits, ev_span)))
        goto out;
    for (size_t i = 0; i < r.ns; i++)
        if (r.meta[i].span_id[0] == 0) /* no id to give thread time to: a call, at most */
            res[i].reader_tid = res[i].writer_tid = res[i].req_a_tid = -1;
    nc = sockjoin_claims(res, r.ns, cl);
    nc += go_map_spawn_claims(&r.go, r.ev, r.ne, r.sp, res, r.ns, cl + nc);
    for (size_t i = 0; i < nc && rc == 0; i++)
        rc = write_markers(&r, &cl[i], &res[cl[i].span]);
    if (rc == 0)
        rc = sockjoin_split_loops(cl, nc, r.ev, ev_span, r.ne, on_join_piece, on_loop_piece, &r);
    if (rc == 0)
        rc = link_calls(&r, res);
    if (rc == 0)
        rc = make_pairs(&r, res, pairs, npairs);
    if (rc == 0) {
        snprintf(to_clock, to_len, "%s", r.to_clock);
        report(&r, res, hits);
    }
out:
    if (rc == SF_E_NOMEM && err->code == 0)
        sf_err_set(err, rc, UINT64_MAX, "out of memory");
    free(res);
    free(cl);
    free(ev_span);
    go_map_free(&r.go);
    free(r.ev);
    free(r.sp);
    free(r.meta);
    return rc;
}

int sockets_report_cpu(struct t2s_ctx *c, struct sf_err *err)
{
    /* per process, what gave its samples their span: markers, socket events, an event
     * loop's waits, or nothing (shared) -- one summary with spanfold ingest's */
    return c->quiet ? 0 : sf_db_coverage_say(c->db, stderr, "tracefs2spans: ", err);
}

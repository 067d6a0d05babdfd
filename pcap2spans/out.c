/* out.c - the writers' lifetime and dispatch (out.h): the database (out_db.c) and/or
 * NDJSON (out_ndjson.c), the sources rows, and the ids the records get. */
#include "out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sf_db.h"
#include "sf_db_net.h"

struct p2s_out {
    struct sf_db *db;
    struct p2s_ndjson *nj;
    struct p2s_tape *tape; /* -j worker: records go onto the tape (out_tape.c) */
    int64_t source_id;     /* the sources row, or the input's 1-based position without one */
    int64_t conn_seq;
    int failed; /* a database write failed: nothing more is written */
    struct sf_err db_err;
};

int p2s_out_open(struct p2s_out **outp, const struct p2s_out_opts *o, struct sf_err *err)
{
    struct p2s_out *out = calloc(1, sizeof(*out));
    int rc;

    if (out == NULL || (o->ndjson && (out->nj = p2s_ndjson_new(stdout)) == NULL)) {
        free(out);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    if (o->db_path) {
        /* one thread uses SQLite here: the writer's (-j workers never do) */
        sf_db_one_thread();
        rc = sf_db_open(&out->db, o->db_path, err);
        if (rc < 0) {
            p2s_ndjson_free(out->nj);
            free(out);
            return rc;
        }
        sf_db_set_wait(out->db, o->wait);
    }
    *outp = out;
    return 0;
}

int p2s_out_tape(struct p2s_out **outp, struct p2s_tape *t)
{
    struct p2s_out *out = calloc(1, sizeof(*out));

    if (out == NULL)
        return SF_E_NOMEM;
    out->tape = t;
    if (t->lines && (out->nj = p2s_ndjson_new(NULL)) == NULL) {
        free(out);
        return SF_E_NOMEM;
    }
    *outp = out;
    return 0;
}

int p2s_out_lines(const struct p2s_out *out)
{
    return out->nj && !out->db;
}

void p2s_out_line(struct p2s_out *out, int64_t conn_id, const char *line, size_t n, size_t src_at)
{
    p2s_ndjson_line(out->nj, conn_id, out->source_id, line, n, src_at);
}

/* A span onto the tape: as its NDJSON line when the run writes NDJSON only. */
static int tape_span(struct p2s_out *out, const struct p2s_conn_info *i, const struct p2s_span *s,
                     const struct sf_tracectx *pref)
{
    const char *line;
    size_t n, at;

    if (out->nj == NULL || !p2s_ndjson_fits(out->nj, i, s))
        return p2s_tape_span(out->tape, i, s, pref);
    at = p2s_ndjson_span(out->nj, i, s, pref, 0);
    p2s_ndjson_take(out->nj, &line, &n);
    return p2s_tape_line(out->tape, i->id, line, n, at);
}

int p2s_out_say(struct p2s_out *out, int capped, const char *line)
{
    if (out == NULL || out->tape == NULL)
        return 0;
    p2s_tape_say(out->tape, capped, line);
    return 1;
}

int p2s_out_close(struct p2s_out *out, struct sf_err *err)
{
    int rc = 0;

    if (out == NULL)
        return 0;
    if (out->db)
        rc = sf_db_close(out->db, err);
    p2s_ndjson_free(out->nj);
    free(out);
    return rc;
}

int p2s_out_has_db(const struct p2s_out *out)
{
    return out && (out->db || (out->tape && out->tape->has_db));
}

int p2s_out_failed(const struct p2s_out *out)
{
    return out->failed || (out->tape && out->tape->nomem);
}

/* A tape record that could not be made: the input fails. */
static int tape_rc(int rc, struct sf_err *err)
{
    return rc < 0 ? sf_err_set(err, rc, UINT64_MAX, "out of memory (parallel ingest)") : 0;
}

/* Keep the first database failure; returns rc. */
static int fail(struct p2s_out *out, int rc, const struct sf_err *err)
{
    if (rc < 0 && !out->failed) {
        out->failed = 1;
        out->db_err = *err;
    }
    return rc;
}

/* 1 when database rows are written. */
static int db_on(const struct p2s_out *out)
{
    return out->db && !out->failed;
}

int p2s_out_source_begin(struct p2s_out *out, const char *path, const char *sha256, uint64_t bytes,
                         struct sf_err *err)
{
    struct sf_source_info in = {"pcap", path, sha256, bytes, "realtime", "pcap2spans"};
    int64_t dup = 0;
    int rc;

    if (out == NULL)
        return 0;
    if (out->tape)
        return tape_rc(p2s_tape_source_begin(out->tape, path, sha256, bytes), err);
    out->source_id++;
    if (!out->db)
        return 0;
    rc = sf_db_source_begin(out->db, &in, &out->source_id, &dup, err);
    if (rc == SF_E_DUP)
        sf_err_set(err, SF_E_DUP, UINT64_MAX, "already ingested as source %" PRId64 "; skipped",
                   dup);
    return rc;
}

int p2s_out_source_end(struct p2s_out *out, const char *tool, const char *file, const char *sha256,
                       uint64_t bytes, const char *error, uint64_t packets, struct sf_err *err)
{
    int64_t dup = 0;
    int rc;

    if (out == NULL)
        return 0;
    if (out->tape)
        return tape_rc(p2s_tape_source_end(out->tape, tool, file, sha256, bytes, error, packets),
                       err);
    if (out->nj)
        p2s_ndjson_flush(out->nj);
    if (!out->db)
        return 0;
    if (out->failed)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "%s", out->db_err.msg);
    if (sha256 && bytes && !error) {
        rc = sf_db_source_set_hash(out->db, out->source_id, sha256, bytes, &dup, err);
        if (rc == SF_E_DUP) {
            fprintf(stderr, "%s: %s: already ingested as source %" PRId64 "; this copy dropped\n",
                    tool, file, dup);
            return 0;
        }
        if (rc < 0)
            return rc;
    }
    return sf_db_source_end(out->db, out->source_id, error, packets, 0, err);
}

int p2s_out_conn_open(struct p2s_out *out, struct p2s_conn_info *i, struct sf_err *err)
{
    if (out->tape)
        return tape_rc(p2s_tape_conn(out->tape, 1, i), err);
    i->id = ++out->conn_seq;
    if (!db_on(out))
        return 0;
    return fail(out, p2s_db_conn(out->db, out->source_id, i, 1, &i->id, err), err);
}

int p2s_out_conn_close(struct p2s_out *out, const struct p2s_conn_info *i, struct sf_err *err)
{
    if (out->tape) {
        struct p2s_conn_info c = *i;
        return tape_rc(p2s_tape_conn(out->tape, 0, &c), err);
    }
    if (!db_on(out))
        return 0;
    return fail(out, p2s_db_conn(out->db, out->source_id, i, 0, NULL, err), err);
}

int p2s_out_conn_tls(struct p2s_out *out, int64_t conn_id, const struct sf_net_tls *tls,
                     struct sf_err *err)
{
    if (out->tape)
        return tape_rc(p2s_tape_conn_tls(out->tape, conn_id, tls), err);
    if (!db_on(out))
        return 0;
    return fail(out, sf_db_net_conn_tls(out->db, conn_id, tls, err), err);
}

int p2s_out_event(struct p2s_out *out, int64_t conn_id, int64_t ts_ns, const char *kind,
                  const char *detail, struct sf_err *err)
{
    if (out->tape)
        return tape_rc(p2s_tape_event(out->tape, conn_id, ts_ns, kind, detail), err);
    if (!db_on(out))
        return 0;
    return fail(out, sf_db_net_event(out->db, conn_id, ts_ns, kind, detail, err), err);
}

int p2s_out_span(struct p2s_out *out, const struct p2s_conn_info *i, const struct p2s_span *s,
                 const struct sf_tracectx *pref, struct sf_err *err)
{
    if (out->tape)
        return tape_rc(tape_span(out, i, s, pref), err);
    if (out->nj)
        p2s_ndjson_span(out->nj, i, s, pref, out->source_id);
    if (!db_on(out))
        return 0;
    return fail(out, p2s_db_span(out->db, out->source_id, i->id, s, pref, err), err);
}

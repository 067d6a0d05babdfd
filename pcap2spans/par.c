/* par.c - parallel ingest (-j N): threads, one context each, one writer.
 *
 * Workers take the inputs in order (the next one not taken) and read each with its own
 * run context whose writer is a tape (out.h): records and stderr lines in chunks of
 * about 1 MiB, queued on the input's job.  The calling thread is the only writer: it
 * replays the jobs' chunks in input order into the real writer (the database through
 * SQLite, single-threaded, and NDJSON), so ids, rows and lines are those of -j 1.  A
 * job holds at most JOB_QUEUE bytes of chunks not yet replayed; its worker waits for the
 * writer beyond that, so memory stays bounded while the writer is behind.
 */
#include "par.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "p2s.h"
#include "pcap.h"

#define JOB_QUEUE (32u << 20)

struct job {
    const char *path;
    struct p2s_chunk *head, *tail; /* shipped, not replayed yet */
    size_t queued;                 /* their bytes */
    int done, rc;
    struct p2s_stats st;
    struct p2s_note_count notes[P2S_NOTE_KINDS];
};

struct par {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a chunk was queued, replayed, or a job is done */
    struct job *jobs;
    int n, next;
    const struct p2s_ctx *conf;
};

struct ship_arg {
    struct par *p;
    struct job *j;
};

/* A worker's full chunk onto its job (waits while the job holds JOB_QUEUE bytes). */
static void ship(void *arg, struct p2s_chunk *c)
{
    struct ship_arg *a = arg;
    struct job *j = a->j;

    pthread_mutex_lock(&a->p->mu);
    c->next = NULL;
    if (j->tail)
        j->tail->next = c;
    else
        j->head = c;
    j->tail = c;
    j->queued += c->len;
    pthread_cond_broadcast(&a->p->cv);
    while (j->queued > JOB_QUEUE)
        pthread_cond_wait(&a->p->cv, &a->p->mu);
    pthread_mutex_unlock(&a->p->mu);
}

/* One input in a worker: its own context, the run's configuration, a tape writer. */
static void run_job(struct par *p, struct job *j)
{
    struct ship_arg a = {p, j};
    struct p2s_tape tape = {.has_db = p2s_out_has_db(p->conf->out),
                            .lines = p2s_out_lines(p->conf->out),
                            .ship = ship,
                            .arg = &a};
    struct p2s_ctx ctx;
    struct sf_err err;
    int rc;

    rc = p2s_ctx_init(&ctx);
    ctx.lim = p->conf->lim;
    ctx.strict = p->conf->strict;
    ctx.quiet = 1; /* no progress bars from threads; what is said goes on the tape */
    ctx.tls_keys = p->conf->tls_keys;
    if (rc == 0)
        rc = p2s_out_tape(&ctx.out, &tape);
    if (rc == 0)
        rc = p2s_pcap_read(&ctx, j->path);
    p2s_ctx_free(&ctx); /* every connection was closed at the end of the input */
    if (p2s_tape_end(&tape) < 0 || rc == SF_E_NOMEM)
        rc = SF_E_NOMEM;
    p2s_out_close(ctx.out, &err);
    pthread_mutex_lock(&p->mu);
    j->rc = rc;
    j->st = ctx.st;
    memcpy(j->notes, ctx.notes, sizeof(j->notes));
    j->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    struct par *p = arg;
    int i;

    for (;;) {
        pthread_mutex_lock(&p->mu);
        i = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (i < 0)
            return NULL;
        run_job(p, &p->jobs[i]);
    }
}

/* The next chunk of job j, NULL when it is done; frees room for its worker. */
static struct p2s_chunk *next_chunk(struct par *p, struct job *j)
{
    struct p2s_chunk *c;

    pthread_mutex_lock(&p->mu);
    while (j->head == NULL && !j->done)
        pthread_cond_wait(&p->cv, &p->mu);
    if ((c = j->head) != NULL) {
        j->head = c->next;
        if (j->head == NULL)
            j->tail = NULL;
        j->queued -= c->len;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return c;
}

/* A replayed stderr line: error lines count against the run's cap. */
static void say(void *arg, int capped, const char *line)
{
    struct p2s_ctx *ctx = arg;

    if (capped)
        p2s_print_error(ctx, line);
    else
        fprintf(stderr, "%s\n", line);
}

/* Replay job j (or only drain it: drop), then add its counters; returns its code as
 * p2s_pcap_read's. */
static int replay_job(struct p2s_ctx *ctx, struct par *p, struct job *j, int drop)
{
    struct p2s_replay r = {.out = ctx->out, .tool = ctx->tool, .quiet = ctx->quiet};
    struct p2s_chunk *c;
    int nomem = 0;

    r.say = say;
    r.arg = ctx;
    r.skip = drop;
    while ((c = next_chunk(p, j)) != NULL) {
        if (!drop && !nomem && p2s_replay_chunk(&r, c) < 0)
            nomem = 1;
        p2s_chunk_free(c);
    }
    p2s_replay_free(&r);
    if (drop)
        return 0;
    if (r.rc == SF_E_DUP)
        return SF_E_DUP;
    p2s_ctx_merge(ctx, &j->st, j->notes);
    if (nomem || j->rc == SF_E_NOMEM) {
        fprintf(stderr, "%s: %s: out of memory\n", ctx->tool, j->path);
        ctx->st.errors++;
        return SF_E_NOMEM;
    }
    if (r.rc == SF_E_DB) {
        ctx->st.errors++;
        return SF_E_DB;
    }
    return j->rc;
}

int p2s_par_read(struct p2s_ctx *ctx, char **paths, int n, int jobs)
{
    struct par p = {.n = n, .conf = ctx};
    pthread_t th[P2S_MAX_JOBS];
    int nth = 0, status = SF_EXIT_OK, stop = 0, rc;

    if ((p.jobs = calloc((size_t)n, sizeof(*p.jobs))) == NULL) {
        fprintf(stderr, "%s: out of memory\n", ctx->tool);
        return SF_EXIT_USAGE;
    }
    for (int i = 0; i < n; i++)
        p.jobs[i].path = paths[i];
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    while (nth < jobs && nth < n && pthread_create(&th[nth], NULL, worker, &p) == 0)
        nth++;
    if (nth == 0) {
        fprintf(stderr, "%s: -j: no thread could be started\n", ctx->tool);
        stop = 1;
        status = SF_EXIT_USAGE;
        p.next = n; /* nothing is read: every job is done empty */
        for (int i = 0; i < n; i++)
            p.jobs[i].done = 1;
    }
    for (int i = 0; i < n; i++) {
        rc = replay_job(ctx, &p, &p.jobs[i], stop);
        if (stop)
            continue;
        if (rc < 0 && rc != SF_E_DUP)
            status = SF_EXIT_USAGE;
        if (rc == SF_E_DB || (ctx->strict && ctx->st.errors))
            stop = 1; /* as -j 1 stops: the later inputs are read but not written */
    }
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    free(p.jobs);
    return status;
}

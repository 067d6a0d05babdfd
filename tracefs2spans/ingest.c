/* ingest.c - one tracefs text input: lines -> span events, losses, intervals.
 *
 * Every line is parsed on its own (tracefs.c), so a bad line never costs its
 * neighbours: it is counted, reported as FILE:LINE:COL (the first few, then a
 * summary), and kept in span_events as kind raw with the whole line as message.
 * Rows go to the database (lib/sf_db_trace.c) and/or to stdout as NDJSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sf_clock.h"
#include "sf_db.h"
#include "sf_db_perf.h"
#include "sf_db_trace.h"
#include "sf_json.h"
#include "sf_line.h"
#include "sf_map.h"
#include "sf_opt.h"
#include "sf_progress.h"
#include "sf_sha256.h"
#include "t2s.h"

struct file_state {
    struct t2s_ctx *c;
    const char *path;
    int64_t src; /* sources.id, 0 without --db */
    const char *clock;
    int64_t last_ts, max_ts;
    int have_ts;
    uint64_t lines, events, markers, sock, offcpu, raw, bad, losses, frames, backwards;
    int64_t back_max;
    uint64_t bytes;
    struct iv_state *iv;
    struct sf_map stacks; /* the off-CPU lines' distinct stacks -> struct stack_id */
    struct sf_err err;
};

/* A stack of this file's off-CPU lines and its stacks.id: one database lookup per
 * distinct stack (up to MAX_STACKS of them, then one per line). */
struct stack_id {
    int64_t id;
    size_t len;
    char text[];
};

#define MAX_STACKS 65536

struct stack_key {
    const char *s;
    size_t n;
};

/* NDJSON goes through lib/sf_json: one object per line, SF_DB_NULL and absent text as null. */
static void jw_opt_int(struct sf_jw *w, const char *key, int64_t v)
{
    if (v == SF_DB_NULL)
        sf_jw_null(w, key);
    else
        sf_jw_int(w, key, v);
}

static void jw_text(struct sf_jw *w, const char *key, const char *s, size_t n)
{
    if (s)
        sf_jw_strn(w, key, s, n);
    else
        sf_jw_null(w, key);
}

static void jw_line_end(struct sf_jw *w)
{
    sf_jw_end(w);
    putc('\n', w->f);
}

static int emit_event(struct file_state *fs, const struct sf_trace_event *ev, int is_marker)
{
    struct t2s_ctx *c = fs->c;

    if (c->out && (is_marker || c->raw_out)) {
        struct sf_jw w;

        sf_jw_init(&w, c->out);
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "type", "event");
        sf_jw_int(&w, "line", (int64_t)ev->line);
        sf_jw_int(&w, "ts_ns", ev->ts_ns);
        jw_opt_int(&w, "cpu", ev->cpu);
        jw_opt_int(&w, "pid", ev->pid);
        jw_opt_int(&w, "tid", ev->tid);
        jw_text(&w, "comm", ev->comm, ev->comm_len);
        sf_jw_str(&w, "kind", ev->kind);
        sf_jw_str(&w, "span_id", ev->span_id);
        sf_jw_str(&w, "trace_id", ev->trace_id);
        jw_opt_int(&w, "decision", ev->decision);
        sf_jw_strn(&w, "message", ev->message, ev->message_len);
        jw_line_end(&w);
    }
    if (c->db && (is_marker || c->raw_db))
        return sf_db_trace_event(c->db, fs->src, ev, &fs->err);
    return 0;
}

static int emit_interval(void *ctx, const struct iv_interval *iv)
{
    struct file_state *fs = ctx;
    struct t2s_ctx *c = fs->c;
    struct sf_trace_interval row = {iv->span_id,
                                    iv->trace_id[0] ? iv->trace_id : NULL,
                                    iv->pid >= 0 ? iv->pid : SF_DB_NULL,
                                    iv->tid,
                                    iv->start_ns,
                                    iv->end_ns,
                                    iv->depth,
                                    iv->decision >= 0 ? iv->decision : SF_DB_NULL,
                                    iv->end_rule,
                                    NULL};

    if (c->out) {
        struct sf_jw w;

        sf_jw_init(&w, c->out);
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "type", "interval");
        sf_jw_str(&w, "span_id", row.span_id);
        sf_jw_str(&w, "trace_id", row.trace_id);
        jw_opt_int(&w, "pid", row.pid);
        sf_jw_int(&w, "tid", row.tid);
        sf_jw_int(&w, "start_ns", row.start_ns);
        sf_jw_int(&w, "end_ns", row.end_ns);
        sf_jw_int(&w, "depth", row.depth);
        jw_opt_int(&w, "decision", row.decision);
        sf_jw_str(&w, "end_rule", row.end_rule);
        jw_line_end(&w);
    }
    return c->db ? sf_db_trace_interval(c->db, fs->src, &row, &fs->err) : 0;
}

static int emit_loss(struct file_state *fs, int64_t cpu, int64_t events, uint64_t line)
{
    fs->losses++;
    if (fs->c->out) {
        struct sf_jw w;

        sf_jw_init(&w, fs->c->out);
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "type", "loss");
        sf_jw_int(&w, "line", (int64_t)line);
        jw_opt_int(&w, "cpu", cpu);
        jw_opt_int(&w, "events", events);
        jw_line_end(&w);
    }
    if (fs->c->db)
        return sf_db_trace_loss(fs->c->db, fs->src, cpu, SF_DB_NULL, events, line, &fs->err);
    return 0;
}

static void report_bad(struct file_state *fs, struct sf_err *e, uint64_t lineno)
{
    char msg[512];

    fs->bad++;
    if (fs->bad > (uint64_t)fs->c->max_report)
        return;
    e->unit = "line";
    e->unit_no = lineno;
    sf_err_format(e, "tracefs2spans", fs->path, msg, sizeof(msg));
    fprintf(stderr, "%s\n", msg);
}

static void set_clock(struct file_state *fs, const char *name, size_t n)
{
    const char *d = sf_clock_domain(name, n);

    if (fs->c->clock_opt || d == fs->clock)
        return;
    fs->clock = d;
    if (fs->c->db)
        sf_db_source_set_clock(fs->c->db, fs->src, d, NULL);
}

static void note_time(struct file_state *fs, const struct tf_line *l)
{
    if (fs->have_ts && l->ts_ns < fs->last_ts) {
        int64_t back = fs->last_ts - l->ts_ns;
        fs->backwards++;
        fs->back_max = back > fs->back_max ? back : fs->back_max;
    }
    if (!fs->have_ts || l->ts_ns > fs->max_ts)
        fs->max_ts = l->ts_ns;
    fs->last_ts = l->ts_ns;
    fs->have_ts = 1;
    if (l->ts_raw && !fs->c->clock_opt && fs->events == 0)
        set_clock(fs, "counter", 7);
}

/* An off-CPU line is written when its interval ends but stamped with its start, so the
 * lines of several threads come out of order by their stamps, which is no clock step:
 * its time counts only for the input's extent (up to end_ns) and the clock's kind. */
static void note_offcpu_time(struct file_state *fs, const struct tf_line *l, int64_t end_ns)
{
    if (!fs->have_ts || end_ns > fs->max_ts)
        fs->max_ts = end_ns;
    if (!fs->have_ts)
        fs->last_ts = l->ts_ns;
    fs->have_ts = 1;
    if (l->ts_raw && !fs->c->clock_opt && fs->events == 0)
        set_clock(fs, "counter", 7);
}

/* The span_events row of trace line l (line lineno): its time, cpu, thread and message. */
static struct sf_trace_event event_of(const struct tf_line *l, const char *kind, uint64_t lineno)
{
    struct sf_trace_event ev = {.ts_ns = l->ts_ns,
                                .cpu = l->cpu,
                                .pid = l->tgid >= 0 ? l->tgid : SF_DB_NULL,
                                .tid = l->pid,
                                .comm = l->comm,
                                .comm_len = l->comm_len,
                                .kind = kind,
                                .decision = SF_DB_NULL,
                                .message = l->msg,
                                .message_len = l->msg_len,
                                .line = lineno};
    return ev;
}

static int on_event(struct file_state *fs, const struct tf_line *l, uint64_t lineno)
{
    struct mk_result m;
    struct sf_trace_event ev = event_of(l, "raw", lineno);
    int marker =
        tracefs_is_marker_event(l) && markers_parse(&fs->c->grammar, l->msg, l->msg_len, &m);
    enum iv_kind k = IV_MARK;
    int rc;

    note_time(fs, l);
    fs->events++;
    if (marker) {
        k = m.end ? IV_END : m.begin ? IV_BEGIN : m.decision >= 0 ? IV_DECISION : IV_MARK;
        static const char *const names[] = {"begin", "end", "decision", "mark"};
        ev.kind = names[k];
        ev.span_id = m.span_id;
        ev.trace_id = m.has_trace ? m.trace_id : NULL;
        ev.decision = m.decision >= 0 ? m.decision : SF_DB_NULL;
        fs->markers++;
    } else {
        fs->raw++;
        if (l->event) {
            /* a raw event keeps its name: message = "event: payload" */
            ev.message = l->event;
            ev.message_len = (size_t)(l->msg + l->msg_len - l->event);
        }
    }
    if ((rc = emit_event(fs, &ev, marker)))
        return rc;
    if (!marker)
        return 0;
    rc = intervals_marker(fs->iv, k, l->tgid, l->pid, l->ts_ns, &m);
    if (rc == SF_E_NOMEM)
        sf_err_set(&fs->err, rc, UINT64_MAX, "out of memory");
    return rc;
}

static int is_sock_event(const struct tf_line *l)
{
    return l->event && l->event_len == 14 && memcmp(l->event, "spantrace_sock", 14) == 0;
}

/* A socket event of spantrace --sockets: checked here, kept as kind sock; the join with
 * the capture's spans runs after every input (sockets.c).  A bad one is reported at
 * its column and kept raw. */
static int on_sock(struct file_state *fs, const struct tf_line *l, const char *line,
                   uint64_t lineno)
{
    struct sf_trace_event ev = event_of(l, "sock", lineno);
    struct sj_event sj;
    struct sf_err e;

    note_time(fs, l);
    fs->events++;
    sf_err_clear(&e);
    if (sockjoin_parse(l->msg, l->msg_len, &sj, &e) < 0) {
        e.col += (uint32_t)(l->msg - line);
        report_bad(fs, &e, lineno);
        ev.kind = "raw";
        ev.message = l->event;
        ev.message_len = (size_t)(l->msg + l->msg_len - l->event);
        return emit_event(fs, &ev, 0);
    }
    fs->sock++;
    return emit_event(fs, &ev, 1);
}

static int stack_eq(const void *val, const void *key)
{
    const struct stack_id *v = val;
    const struct stack_key *k = key;

    return v->len == k->n && memcmp(v->text, k->s, k->n) == 0;
}

/* The stacks.id of stack s[0..n), interned when new.  0 or SF_E_DB / SF_E_NOMEM. */
static int stack_of(struct file_state *fs, const char *s, size_t n, int64_t *id)
{
    struct stack_key key = {s, n};
    uint64_t h = sf_hash(s, n);
    struct sf_map_slot *slot = NULL;
    struct stack_id *v;

    if (fs->stacks.n < MAX_STACKS && sf_map_reserve(&fs->stacks, 1) == 0) {
        slot = sf_map_probe(&fs->stacks, h, stack_eq, &key);
        if (slot->val) {
            *id = ((struct stack_id *)slot->val)->id;
            return 0;
        }
    }
    if (sf_db_perf_stack(fs->c->db, s, n, id, &fs->err))
        return SF_E_DB;
    if (slot && (v = malloc(sizeof(*v) + n)) != NULL) {
        v->id = *id;
        v->len = n;
        memcpy(v->text, s, n);
        sf_map_fill(&fs->stacks, slot, h, v);
    }
    return 0;
}

static void stacks_free(struct file_state *fs)
{
    size_t it = 0;
    struct sf_map_slot *s;

    while ((s = sf_map_next(&fs->stacks, &it)) != NULL)
        free(s->val);
    sf_map_free(&fs->stacks);
}

/* "%.*s" of s[0..n) into out (size bytes): the NUL-terminated text a row binds. */
static const char *cstr(char *out, size_t size, const char *s, size_t n)
{
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), s);
    return out;
}

/* The offcpu row of a good off-CPU line: NDJSON and/or the database. */
static int emit_offcpu(struct file_state *fs, const struct tf_line *l, const struct oc_event *oc,
                       uint64_t lineno)
{
    char comm[64], state[OC_STATE_MAX + 1], frame[128], reason[64];
    struct sf_offcpu row = {
        .ts_ns = l->ts_ns,
        .end_ns = oc->end_ns,
        .end_rule = "switch-in",
        .pid = l->tgid >= 0 ? l->tgid : SF_DB_NULL,
        .tid = l->pid,
        .comm = cstr(comm, sizeof(comm), l->comm, l->comm_len),
        .state = cstr(state, sizeof(state), oc->state, oc->state_len),
        .frame = oc->frame ? cstr(frame, sizeof(frame), oc->frame, oc->frame_len) : NULL,
        .waker_tid = oc->waker_tid >= 0 ? oc->waker_tid : SF_DB_NULL};

    sf_offcpu_reason(state, oc->stack, oc->stack_len, reason, sizeof(reason));
    row.reason = reason[0] ? reason : NULL;
    fs->offcpu++;
    if (fs->c->out) {
        struct sf_jw w;

        sf_jw_init(&w, fs->c->out);
        sf_jw_obj(&w, NULL);
        sf_jw_str(&w, "type", "offcpu");
        sf_jw_int(&w, "line", (int64_t)lineno);
        sf_jw_int(&w, "ts_ns", row.ts_ns);
        sf_jw_int(&w, "end_ns", row.end_ns);
        sf_jw_str(&w, "end_rule", row.end_rule);
        jw_opt_int(&w, "pid", row.pid);
        sf_jw_int(&w, "tid", row.tid);
        sf_jw_str(&w, "comm", row.comm);
        sf_jw_str(&w, "state", row.state);
        sf_jw_str(&w, "reason", row.reason);
        sf_jw_str(&w, "frame", row.frame);
        jw_opt_int(&w, "waker_tid", row.waker_tid);
        sf_jw_strn(&w, "stack", oc->stack, oc->stack_len);
        jw_line_end(&w);
    }
    if (fs->c->db == NULL)
        return 0;
    if (stack_of(fs, oc->stack, oc->stack_len, &row.stack_id))
        return SF_E_DB;
    return sf_db_perf_offcpu(fs->c->db, fs->src, &row, &fs->err);
}

/* An off-CPU line of spantrace --offcpu: an offcpu row (offcpu.c has the format).  A
 * bad one is reported at its column and kept raw, as a bad socket event is. */
static int on_offcpu(struct file_state *fs, const struct tf_line *l, const char *line,
                     uint64_t lineno)
{
    struct oc_event oc;
    struct sf_err e;

    sf_err_clear(&e);
    if (offcpu_parse(l->msg, l->msg_len, l->ts_ns, l->ts_raw, &oc, &e) < 0) {
        struct sf_trace_event ev = event_of(l, "raw", lineno);
        note_offcpu_time(fs, l, l->ts_ns);
        fs->events++;
        e.col += (uint32_t)(l->msg - line);
        report_bad(fs, &e, lineno);
        ev.message = l->event;
        ev.message_len = (size_t)(l->msg + l->msg_len - l->event);
        return emit_event(fs, &ev, 0);
    }
    note_offcpu_time(fs, l, oc.end_ns);
    fs->events++;
    return emit_offcpu(fs, l, &oc, lineno);
}

/* Keep an unparseable line as a raw event at the last good time. */
static int keep_bad(struct file_state *fs, const char *s, size_t n, uint64_t lineno)
{
    struct sf_trace_event ev = {.ts_ns = fs->last_ts,
                                .cpu = SF_DB_NULL,
                                .pid = SF_DB_NULL,
                                .tid = SF_DB_NULL,
                                .kind = "raw",
                                .decision = SF_DB_NULL,
                                .message = s,
                                .message_len = n,
                                .line = lineno};
    return emit_event(fs, &ev, 0);
}

/* --fields: the columns of every line as parsed, for checking the parser. */
static void print_fields(FILE *f, const struct tf_line *l, const struct sf_err *e, uint64_t no)
{
    static const char *const kinds[] = {"blank",    "comment", "tracer", "entries", "clock",
                                        "annotate", "lost",    "frame",  "event",   "bad"};
    struct sf_jw w;

    sf_jw_init(&w, f);
    sf_jw_obj(&w, NULL);
    sf_jw_int(&w, "line", (int64_t)no);
    sf_jw_str(&w, "kind", kinds[l->kind]);
    switch (l->kind) {
    case TF_EVENT:
        jw_text(&w, "comm", l->comm, l->comm_len);
        sf_jw_int(&w, "pid", l->pid);
        jw_opt_int(&w, "tgid", l->tgid >= 0 ? l->tgid : SF_DB_NULL);
        sf_jw_int(&w, "cpu", l->cpu);
        jw_text(&w, "flags", l->flags, l->flags_len);
        jw_text(&w, "ts", l->ts, l->ts_len);
        sf_jw_int(&w, "ts_ns", l->ts_ns);
        sf_jw_int(&w, "ts_raw", l->ts_raw);
        jw_text(&w, "event", l->event, l->event_len);
        jw_text(&w, "msg", l->msg, l->msg_len);
        break;
    case TF_LOST:
        sf_jw_int(&w, "cpu", l->cpu);
        jw_opt_int(&w, "lost", l->lost >= 0 ? l->lost : SF_DB_NULL);
        break;
    case TF_ANNOTATE:
        sf_jw_int(&w, "cpu", l->cpu);
        break;
    case TF_ENTRIES:
        sf_jw_int(&w, "entries", l->entries);
        sf_jw_int(&w, "written", l->written);
        sf_jw_int(&w, "ncpu", l->ncpu);
        break;
    case TF_TRACER:
    case TF_CLOCK:
        jw_text(&w, "text", l->text, l->text_len);
        break;
    case TF_BAD:
        sf_jw_int(&w, "col", e->col);
        sf_jw_str(&w, "error", e->msg);
        break;
    default:
        break;
    }
    jw_line_end(&w);
}

static int on_line(struct file_state *fs, const char *s, size_t n, uint64_t lineno)
{
    struct tf_line l;
    struct sf_err e;

    sf_err_clear(&e);
    fs->lines++;
    if (fs->c->fields) {
        if (tracefs_parse_line(s, n, &l, &e) < 0)
            fs->bad++;
        print_fields(fs->c->out ? fs->c->out : stdout, &l, &e, lineno);
        return 0;
    }
    if (tracefs_parse_line(s, n, &l, &e) < 0) {
        report_bad(fs, &e, lineno);
        return keep_bad(fs, s, n, lineno);
    }
    switch (l.kind) {
    case TF_EVENT:
        if (is_sock_event(&l))
            return on_sock(fs, &l, s, lineno);
        if (offcpu_is_event(&l))
            return on_offcpu(fs, &l, s, lineno);
        return on_event(fs, &l, lineno);
    case TF_CLOCK:
        set_clock(fs, l.text, l.text_len);
        return 0;
    case TF_ENTRIES:
        return l.written > l.entries ? emit_loss(fs, SF_DB_NULL, l.written - l.entries, lineno) : 0;
    case TF_LOST:
        return emit_loss(fs, l.cpu, l.lost >= 0 ? l.lost : SF_DB_NULL, lineno);
    case TF_FRAME:
        fs->frames++;
        return 0;
    default:
        return 0;
    }
}

static void hash_block(void *ctx, const void *p, size_t n)
{
    sf_sha256_update(ctx, p, n);
}

/* Register the source; its lines are hashed as they are read (read_lines) and the
 * hash set at the end, a file's size lets sf_db_source_begin tell a re-run first. */
static int begin_source(struct file_state *fs, int fd, struct sf_sha256 *h)
{
    struct t2s_ctx *c = fs->c;
    struct sf_source_info in = {"tracefs", fs->path, NULL, 0, fs->clock, "tracefs2spans"};
    int64_t dup = 0;
    struct stat sb;
    int rc;

    if (c->db == NULL)
        return 0;
    if (strcmp(fs->path, "-") != 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
        in.bytes = (uint64_t)sb.st_size;
    rc = sf_db_source_begin(c->db, &in, &fs->src, &dup, &fs->err);
    if (rc == SF_E_DUP && !c->quiet)
        fprintf(stderr, "tracefs2spans: %s: already ingested as source %lld, skipped\n", fs->path,
                (long long)dup);
    if (rc == 0 && sf_sha256_init(h))
        rc = sf_err_set(&fs->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    return rc;
}

static void summary(const struct file_state *fs, const struct iv_stats *st)
{
    if (fs->bad > (uint64_t)fs->c->max_report)
        fprintf(stderr, "tracefs2spans: %s: %llu unparseable lines kept raw (first %d shown)\n",
                fs->path, (unsigned long long)fs->bad, fs->c->max_report);
    if (fs->backwards)
        fprintf(stderr,
                "tracefs2spans: %s: time goes back %llu times (at most %lld ns): a clock step, "
                "or per-CPU clocks that are not synchronised (trace_clock local)\n",
                fs->path, (unsigned long long)fs->backwards, (long long)fs->back_max);
    if (fs->c->quiet)
        return;
    if (fs->sock)
        fprintf(stderr, "tracefs2spans: %s: %llu socket events (joined to the spans with --db)\n",
                fs->path, (unsigned long long)fs->sock);
    /* off-CPU intervals are counted when there are any (spantrace --offcpu) */
    char off[48] = "";
    if (fs->offcpu)
        snprintf(off, sizeof(off), ", %llu off-CPU intervals", (unsigned long long)fs->offcpu);
    fprintf(stderr,
            "tracefs2spans: %s: %llu lines, %llu events, %llu markers, %llu intervals, %llu "
            "orphan ends, %llu loss records, %llu bad lines%s; clock %s\n",
            fs->path, (unsigned long long)fs->lines, (unsigned long long)fs->events,
            (unsigned long long)fs->markers, (unsigned long long)st->intervals,
            (unsigned long long)st->orphan_ends, (unsigned long long)fs->losses,
            (unsigned long long)fs->bad, off, fs->clock);
}

static int read_lines(struct file_state *fs, int fd, struct sf_sha256 *h, int hashing)
{
    struct sf_line r;
    char *s;
    size_t n;
    int rc;

    if (sf_line_open(&r, fd, 0))
        return sf_err_set(&fs->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (hashing) {
        r.on_read = hash_block;
        r.on_read_ctx = h;
    }
    struct sf_progress pr;
    struct stat sb;
    sf_progress_start(&pr, sf_opt_want_progress(fs->c->quiet) ? stderr : NULL, fs->path, "B",
                      fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0);
    while ((rc = sf_line_next(&r, &s, &n)) != 0) {
        if ((r.lineno & 0xffff) == 0)
            sf_progress_update(&pr, r.bytes_read);
        if (rc == SF_E_LIMIT) {
            struct sf_err e;
            sf_err_clear(&e);
            sf_err_set(&e, SF_E_LIMIT, r.off, "line longer than %zu bytes, skipped", r.max_line);
            fs->lines++;
            report_bad(fs, &e, r.lineno);
            continue;
        }
        if (rc < 0) {
            sf_err_set(&fs->err, SF_E_IO, UINT64_MAX, "read error: %s", strerror(errno));
            break;
        }
        if ((rc = on_line(fs, s, n, r.lineno)))
            break;
        if (fs->c->strict && fs->bad)
            break;
    }
    sf_progress_end(&pr);
    fs->bytes = r.bytes_read;
    sf_line_close(&r);
    return rc;
}

int ingest_file(struct t2s_ctx *c, const char *path)
{
    struct file_state fs = {.c = c, .path = path};
    struct sf_sha256 h = {0};
    struct iv_stats st = {0};
    struct sf_err conv;
    int stdin_in = strcmp(path, "-") == 0, fd, rc, hashing, conv_rc = 0;
    const char *fail = NULL;
    char msg[600];

    fs.clock = c->clock_opt ? sf_clock_domain(c->clock_opt, strlen(c->clock_opt)) : "local";
    sf_err_clear(&fs.err);
    fd = stdin_in ? 0 : open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "tracefs2spans: %s: cannot open: %s\n", path, strerror(errno));
        return SF_EXIT_USAGE;
    }
    /* trace-cmd's trace.dat: read as the tracefs text it holds (tracedat.c), from an
     * unnamed temporary file; what a damaged file gave before the damage is read too */
    sf_err_clear(&conv);
    if (!stdin_in && tracedat_is(fd)) {
        FILE *tf = tmpfile();
        int tfd = tf ? dup(fileno(tf)) : -1;
        if (tf)
            fclose(tf);
        close(fd);
        if (tfd < 0) {
            fprintf(stderr, "tracefs2spans: %s: temporary file: %s\n", path, strerror(errno));
            return SF_EXIT_USAGE;
        }
        conv_rc = tracedat_text(path, tfd, &conv);
        fd = tfd;
        if (lseek(fd, 0, SEEK_SET) != 0 || (conv_rc && conv.off == 0)) { /* nothing read */
            sf_err_format(&conv, "tracefs2spans", path, msg, sizeof(msg));
            fprintf(stderr, "%s\n", msg);
            close(fd);
            return SF_EXIT_USAGE;
        }
    }
    rc = begin_source(&fs, fd, &h);
    if (rc == SF_E_DUP || rc == SF_E_BUSY) {
        if (rc == SF_E_BUSY)
            fprintf(stderr, "tracefs2spans: %s: %s\n", path, fs.err.msg);
        if (!stdin_in)
            close(fd);
        return rc == SF_E_BUSY ? SF_EXIT_USAGE : 0;
    }
    hashing = c->db != NULL && rc == 0; /* begin_source started h */
    fs.iv = intervals_new(64, emit_interval, &fs);
    if (rc == 0 && fs.iv == NULL)
        rc = sf_err_set(&fs.err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (rc == 0)
        rc = read_lines(&fs, fd, &h, hashing);
    if (rc == 0 && conv_rc) { /* the lines before the damage are in; the rest is lost */
        fs.err = conv;
        rc = conv_rc;
    }
    if (rc == 0 && fs.err.code == 0)
        rc = intervals_finish(fs.iv, fs.max_ts);
    if (rc == 0 && fs.err.code)
        rc = fs.err.code;
    intervals_stats(fs.iv, &st);
    intervals_free(fs.iv);
    stacks_free(&fs);
    if (!stdin_in)
        close(fd);
    if (rc) {
        sf_err_format(&fs.err, "tracefs2spans", path, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        fail = fs.err.msg[0] ? fs.err.msg : "failed";
    } else if (c->strict && fs.bad) {
        fail = "stopped at the first bad line (--strict)";
        rc = SF_E_MALFORMED; /* exit 2: the input was not read to its end */
    }
    summary(&fs, &st);
    c->bad_total += fs.bad;
    if (c->db) {
        char hex[SF_SHA256_HEX_LEN + 1];
        int64_t dup;
        /* a file that stopped early keeps no hash (a prefix's): a re-run finds its
         * source by size and path (sf_db.h) */
        if (hashing && rc != SF_E_DB && (stdin_in || fail == NULL)) {
            sf_sha256_final_hex(&h, hex);
            int hr = sf_db_source_set_hash(c->db, fs.src, hex, fs.bytes, &dup, &fs.err);
            if (hr == SF_E_DUP) {
                fprintf(stderr, "tracefs2spans: %s: already ingested as source %lld, skipped\n",
                        path, (long long)dup);
                return 0;
            }
            if (hr) { /* its last batch of rows may be lost too: not complete */
                sf_err_format(&fs.err, "tracefs2spans", path, msg, sizeof(msg));
                fprintf(stderr, "%s\n", msg);
                return SF_EXIT_USAGE;
            }
        } else if (hashing) {
            sf_sha256_abort(&h);
        }
        /* bad lines are in bad_units; the source is complete when all of it was read */
        if (rc != SF_E_DB && sf_db_source_end(c->db, fs.src, fail, fs.lines, fs.bad, &fs.err) == 0)
            return rc ? SF_EXIT_USAGE : 0;
        if (rc != SF_E_DB) {
            sf_err_format(&fs.err, "tracefs2spans", path, msg, sizeof(msg));
            fprintf(stderr, "%s\n", msg);
        }
        return SF_EXIT_USAGE;
    }
    return rc ? SF_EXIT_USAGE : 0;
}

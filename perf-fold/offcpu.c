/* offcpu.c - off-CPU intervals from a perf recording's scheduler tracepoints (--db).
 *
 * A sched:sched_switch record is taken in the context of the thread leaving its CPU
 * (prev_pid), with that thread's stack: the user frames that called into the kernel
 * and the kernel frames down to __schedule.  The interval ends at the thread's switch
 * in (a sched_switch whose next_pid is the thread: recorded with -a, or when the
 * previous thread is traced too) or, where that was not recorded (perf record -p
 * traces only its own threads' switches out), at the thread's next record of any
 * event, which comes at most one sampling period after it ran again.  The first
 * sched:sched_wakeup (or sched_waking) of a thread that is off CPU names its waker:
 * the thread that record was taken in, and its stack.
 *
 *   sh 5971/5971 65023.439701892: 1 sched:sched_switch: prev_comm=sh prev_pid=5971
 *       prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
 *   (libtraceevent's plugin prints "sh:5971 [120] D ==> swapper/0:0 [120]"; both read)
 *   kworker/0:1 26/26 65023.44: 1 sched:sched_wakeup: comm=sh pid=5971 prio=120 ...
 *
 * Without the fields (perf script -F without trace) a switch record still says which
 * thread left (the record's own thread), in an unknown state.
 *
 * reason (sf_offcpu_reason, lib/sf_db_perf.h, which tracefs2spans applies too): the
 * kernel function that blocked, the first frame from the leaf that is not the
 * tracepoint's or the scheduler's own (__schedule, schedule*, ...), without its +0x
 * offset; "preempted" when the thread left runnable (state R: it waited for a CPU, it
 * did not block).  frame: the innermost frame of the program itself, the
 * first from the leaf whose module is neither the kernel ("[kernel.kallsyms]", any
 * "[...]") nor the C runtime (libc, libpthread, ld-linux, libstdc++, libgcc_s, libm):
 * pool_acquire above futex_wait, not pthread_mutex_lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <stdlib.h>
#include <string.h>

#include "perf_fold.h"
#include "sf_db_perf.h"

/* One thread that is off CPU now. */
struct pending {
    int64_t tid, pid, ts_ns, stack_id, waker_tid, waker_stack_id;
    char comm[64], state[8], reason[64], frame[128];
    int open;
};

struct pf_offcpu {
    struct sf_map by_tid;   /* sf_hash_u64(tid) -> struct pending (owned) */
    struct pf_table stacks; /* the scheduler records' distinct stacks, each with its
                             * stacks.id (db_id): one database lookup per stack, as the
                             * CPU samples' table does (sf_db_perf.h) */
    /* the scheduler record being read */
    int64_t rec_tid, rec_ts, target; /* target: the thread that left, or was woken */
    char state[8], frame[128];
    uint64_t stored, dropped;
};

static int tid_eq(const void *val, const void *key)
{
    return ((const struct pending *)val)->tid == *(const int64_t *)key;
}

static struct pending *find(struct pf_offcpu *o, int64_t tid, int add)
{
    uint64_t h = sf_hash_u64((uint64_t)tid);
    struct sf_map_slot *s;
    struct pending *p;

    if (o->by_tid.n == 0 && !add)
        return NULL;
    if (sf_map_reserve(&o->by_tid, 1) < 0)
        return NULL;
    s = sf_map_probe(&o->by_tid, h, tid_eq, &tid);
    if (s->val || !add)
        return s->val;
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return NULL;
    p->tid = tid;
    sf_map_fill(&o->by_tid, s, h, p);
    return p;
}

/* The integer after "key=" in the fields, or -1. */
static int64_t field_int(const struct pf_str *a, const char *key)
{
    size_t kl = strlen(key);

    for (size_t i = 0; i + kl < a->n; i++) {
        if ((i == 0 || a->p[i - 1] == ' ') && memcmp(a->p + i, key, kl) == 0) {
            int64_t v = 0;
            size_t j = i + kl, d = 0;
            for (; j < a->n && a->p[j] >= '0' && a->p[j] <= '9' && d < 18; j++, d++)
                v = v * 10 + (a->p[j] - '0');
            return d ? v : -1;
        }
    }
    return -1;
}

/* The word after "key=" into out ("" when absent). */
static void field_word(const struct pf_str *a, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key), k = 0;

    out[0] = 0;
    for (size_t i = 0; i + kl < a->n; i++) {
        if ((i == 0 || a->p[i - 1] == ' ') && memcmp(a->p + i, key, kl) == 0) {
            for (size_t j = i + kl; j < a->n && a->p[j] != ' ' && k + 1 < n; j++)
                out[k++] = a->p[j];
            out[k] = 0;
            return;
        }
    }
}

/* libtraceevent's form "prev:PID [PRIO] STATE ==> next:PID [PRIO]": the pid before the
 * " [" of side 0 (prev) or 1 (next), and prev's state. */
static int64_t plugin_pid(const struct pf_str *a, int side, char *state, size_t n)
{
    const char *arrow = memmem(a->p, a->n, " ==> ", 5), *p, *end, *br;
    int64_t v = 0;

    if (arrow == NULL)
        return -1;
    p = side ? arrow + 5 : a->p;
    end = side ? a->p + a->n : arrow;
    br = memmem(p, (size_t)(end - p), " [", 2);
    if (br == NULL)
        return -1;
    if (!side && state) { /* "] STATE" before the arrow */
        const char *q = memchr(br, ']', (size_t)(end - br));
        size_t k = 0;
        for (q = q ? q + 1 : end; q < end && *q == ' '; q++)
            ;
        for (; q < end && *q != ' ' && k + 1 < n; q++)
            state[k++] = *q;
        state[k] = 0;
    }
    const char *c = br;
    while (c > p && c[-1] >= '0' && c[-1] <= '9')
        c--;
    if (c == br || c == p || c[-1] != ':')
        return -1;
    for (; c < br; c++)
        v = v * 10 + (*c - '0');
    return v;
}

static int close_one(struct perf_fold_ctx *c, struct pending *p, int64_t end, const char *rule)
{
    struct sf_offcpu row = {
        .ts_ns = p->ts_ns,
        .end_ns = end,
        .end_rule = rule,
        .pid = p->pid,
        .tid = p->tid,
        .comm = p->comm,
        .state = p->state[0] ? p->state : NULL,
        .reason = p->reason[0] ? p->reason : NULL,
        .frame = p->frame[0] ? p->frame : NULL,
        .stack_id = p->stack_id,
        .waker_tid = p->waker_tid ? p->waker_tid : SF_DB_NULL,
        .waker_stack_id = p->waker_stack_id,
    };
    struct sf_err err;

    p->open = 0;
    if (end < p->ts_ns)
        return 0; /* out of order: no interval */
    sf_err_clear(&err);
    if (sf_db_perf_offcpu(c->db, c->source_id, &row, &err)) {
        sf_err_format(&err, PF_TOOL, c->file, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        c->failed = 1;
        return -1;
    }
    c->off->stored++;
    return 0;
}

static int is_switch(const struct pf_str *e)
{
    return e->n == 18 && memcmp(e->p, "sched:sched_switch", 18) == 0;
}

static int is_wakeup(const struct pf_str *e)
{
    return (e->n == 18 && memcmp(e->p, "sched:sched_wakeup", 18) == 0) ||
           (e->n == 18 && memcmp(e->p, "sched:sched_waking", 18) == 0);
}

int offcpu_header(struct perf_fold_ctx *c, const struct pf_header *h)
{
    struct pf_offcpu *o = c->off;
    struct pending *p;
    int64_t tid, ts = h->ts_ns, next;

    if (ts < 0 || h->tid.n == 0)
        return 0;
    if (o == NULL) {
        if ((o = c->off = calloc(1, sizeof(*o))) == NULL)
            return -1;
        sf_arena_init(&o->stacks.keys, 1 << 20, PF_TABLE_MAX);
    }
    tid = 0;
    for (size_t i = 0; i < h->tid.n && i < 18; i++)
        tid = tid * 10 + (h->tid.p[i] - '0');
    /* the thread runs again: its interval (if any) ends here */
    if ((p = find(o, tid, 0)) && p->open && close_one(c, p, ts, "next-event"))
        return -1;
    o->rec_tid = tid;
    o->rec_ts = ts;
    o->state[0] = o->frame[0] = 0;
    if (is_switch(&h->event)) {
        o->target = tid;
        if (h->tp_args) {
            int64_t prev = field_int(&h->args, "prev_pid=");
            field_word(&h->args, "prev_state=", o->state, sizeof(o->state));
            next = field_int(&h->args, "next_pid=");
            if (prev < 0) {
                prev = plugin_pid(&h->args, 0, o->state, sizeof(o->state));
                next = plugin_pid(&h->args, 1, NULL, 0);
            }
            if (prev >= 0)
                o->target = prev;
            if (next > 0 && (p = find(o, next, 0)) && p->open && close_one(c, p, ts, "switch-in"))
                return -1;
        }
        return OFFCPU_SWITCH;
    }
    if (is_wakeup(&h->event) && h->tp_args) {
        int64_t w = field_int(&h->args, "pid=");
        if (w > 0 && (p = find(o, w, 0)) && p->open && p->waker_tid == 0) {
            o->target = w;
            return OFFCPU_WAKEUP;
        }
    }
    return 0;
}

void offcpu_frame(struct perf_fold_ctx *c, const struct pf_frame *f)
{
    struct pf_offcpu *o = c->off;
    size_t k;

    if (o == NULL || c->side != OFFCPU_SWITCH || o->frame[0] || f->mod.n == 0 ||
        f->mod.p[0] == '[' || f->func.n == 0 || f->func.p[0] == '[' ||
        sf_offcpu_runtime_file(f->mod.p, f->mod.n))
        return;
    for (k = 0; k < f->func.n && f->func.p[k] != '+';)
        k++;
    snprintf(o->frame, sizeof(o->frame), "%.*s", (int)k, f->func.p);
}

/* The stack without the tracepoint's own frames at its leaf (__traceiter_sched_switch,
 * perf_trace_sched_switch, ...): they are how it was recorded, not where it blocked. */
static size_t without_tracing(const char *stack, size_t len)
{
    static const char *const tracing[] = {"__traceiter_", "perf_trace_", "trace_event_raw_",
                                          "__bpf_trace_", "__perf_event_overflow"};

    for (;;) {
        const char *semi = memrchr(stack, ';', len);
        size_t b = semi ? (size_t)(semi - stack) + 1 : 0, i;
        if (semi == NULL)
            return len;
        for (i = 0; i < sizeof(tracing) / sizeof(tracing[0]); i++)
            if (len - b >= strlen(tracing[i]) &&
                memcmp(stack + b, tracing[i], strlen(tracing[i])) == 0)
                break;
        if (i == sizeof(tracing) / sizeof(tracing[0]))
            return len;
        len = b - 1;
    }
}

int offcpu_commit(struct perf_fold_ctx *c, const char *stack, size_t len)
{
    struct pf_offcpu *o = c->off;
    struct pf_entry *e = NULL;
    struct pending *p;
    struct sf_err err;
    int64_t id;
    int side = c->side;

    c->side = 0;
    if (o == NULL)
        return 0;
    len = without_tracing(stack, len);
    if (fold_table_add(&o->stacks, stack, len, 1, &e) == SF_E_NOMEM) {
        fprintf(stderr, "%s: out of memory\n", PF_TOOL);
        c->failed = 1;
        return -1;
    }
    sf_err_clear(&err);
    if (e->db_id == 0 && sf_db_perf_stack(c->db, stack, len, &e->db_id, &err)) {
        sf_err_format(&err, PF_TOOL, c->file, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        c->failed = 1;
        return -1;
    }
    id = e->db_id;
    if (side == OFFCPU_WAKEUP) {
        if ((p = find(o, o->target, 0)) && p->open && p->waker_tid == 0) {
            p->waker_tid = o->rec_tid;
            p->waker_stack_id = id;
        }
        return 0;
    }
    if ((p = find(o, o->target, 1)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", PF_TOOL);
        c->failed = 1;
        return -1;
    }
    if (p->open && close_one(c, p, o->rec_ts, "next-event"))
        return -1;
    p->open = 1;
    p->ts_ns = o->rec_ts;
    p->pid = c->pid;
    p->stack_id = id;
    p->waker_tid = p->waker_stack_id = 0;
    snprintf(p->comm, sizeof(p->comm), "%s", c->comm.len ? (const char *)c->comm.data : "");
    snprintf(p->state, sizeof(p->state), "%s", o->state);
    snprintf(p->frame, sizeof(p->frame), "%s", o->frame);
    sf_offcpu_reason(o->state, stack, len, p->reason, sizeof(p->reason));
    return 0;
}

void offcpu_finish(struct perf_fold_ctx *c, uint64_t *stored, uint64_t *open)
{
    struct pf_offcpu *o = c->off;
    size_t it = 0;
    struct sf_map_slot *s;

    *stored = *open = 0;
    if (o == NULL)
        return;
    while ((s = sf_map_next(&o->by_tid, &it)) != NULL) {
        struct pending *p = s->val;
        *open += p->open;
        free(p);
    }
    sf_map_free(&o->by_tid);
    fold_table_free(&o->stacks);
    *stored = o->stored;
    free(o);
    c->off = NULL;
}

/* report_cause.c - where the slow requests' time went: each latency inflection's spans
 * before and after it, their wall-clock time taken apart.
 *
 * A span's duration (request first byte to response last byte, on the wire) is given
 * out in this order, each part at most what is left, so that the parts add up to it:
 *
 *   cpu          its attributed samples of a clock event (cpu-clock, task-clock): ns
 *   downstream   the union of its child spans (parent_span_id = its span id, in the
 *                same database) within it: time spent waiting on a call it made
 *   blocked      its off-CPU intervals (offcpu rows attributed to it: its thread left
 *                the CPU while serving it) beyond the downstream time, since a thread
 *                waiting on a call it made is off CPU too; by reason (the kernel
 *                function that blocked, or preempted)
 *   network      request first to last byte plus response first to last byte: the
 *                transfer as the capture saw it; and between the two, the time the
 *                request's bytes waited for a retransmission (pcap2spans' stall of a
 *                request-direction "retransmit": the server could not have had them),
 *                which a capture on the sending side sees as server time
 *   unaccounted  the rest: queued before a thread took it, or work nobody sampled
 *
 * Without off-CPU intervals in the database blocked is not measured: it stays inside
 * unaccounted and the JSON says null.  For an inflection of endpoint g at time T the "normal" set
 * is g's spans that started before T, the "slow" set those from T on; the cause is the measured
 * part whose mean per span grew the most, and its share is that growth over the
 * growth of the mean duration; unaccounted is named only when no measured part
 * explains RP_CAUSE_MIN_SHARE of it, and its share is said beside the cause.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch_sets.h"
#include "report.h"

const char *rp_cause_name(enum rp_cause k)
{
    static const char *const names[] = {"none",    "cpu",        "blocked",
                                        "network", "downstream", "unaccounted"};
    assert((size_t)k < sizeof(names) / sizeof(names[0]));
    return names[k];
}

/* A span id with a number of ns: CPU of a span, or a child's interval. */
struct id_ns {
    char id[17];
    int64_t a, b; /* cpu: a = ns; child: its [a, b) */
    size_t ep;    /* child: index of its endpoint in the downstream names */
};

static int cmp_id(const void *x, const void *y)
{
    const struct id_ns *p = x, *q = y;
    int c = strcmp(p->id, q->id);
    return c ? c : p->a < q->a ? -1 : p->a > q->a;
}

/* The first entry of id in v[0..n) (sorted by id, then a), or n. */
static size_t first_of(const struct id_ns *v, size_t n, const char *id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(v[mid].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(v[lo].id, id) == 0 ? lo : n;
}

/* A retransmission or a zero window on a connection: when, and how long the stream
 * waited for it. */
struct retx {
    int64_t conn, ts, stall;
    int kind; /* EV_* */
    int req;  /* the request direction's (retransmit, zero_window) */
};
enum { EV_RETRANSMIT, EV_ZERO_WINDOW, EV_HANDSHAKE };

/* The first span's start on a connection: a new connection's handshake is its wait. */
struct conn_first {
    int64_t conn, start;
};

struct cause_data {
    struct id_ns *cpu, *kids, *blk; /* blk: a = ns off CPU, ep = its reason */
    size_t ncpu, nkids, nblk;
    struct retx *retx; /* by connection, then time */
    size_t nretx;
    struct conn_first *firsts; /* by connection */
    size_t nfirsts;
    char (*eps)[RP_NAME_MAX]; /* the children's endpoints */
    size_t neps;
    char (*reasons)[RP_NAME_MAX]; /* why threads were off CPU */
    size_t nreasons;
    int offcpu;        /* the database has off-CPU intervals */
    const char **kept; /* past --spans-max: the analysed spans' ids, sorted (NULL: all) */
    size_t nkept;
};

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Past --spans-max, the ids of the spans analysed one by one into d->kept: the rows of
 * the others (their CPU, off-CPU time, children) are left out of a file as the cluster
 * leaves them out (ch_sets_only, ch_pull's thin), so that what the rows name (reasons,
 * endpoints) is named in the same order.  Returns 0 or -1. */
static int kept_ids(struct cause_data *d, const struct rp_ctx *c)
{
    if (c->thin >= 1.0)
        return 0;
    if ((d->kept = malloc((c->nkept ? c->nkept : 1) * sizeof(*d->kept))) == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        if (c->spans[i].kept)
            d->kept[d->nkept++] = c->spans[i].id;
    assert(d->nkept == c->nkept);
    qsort(d->kept, d->nkept, sizeof(*d->kept), cmp_str);
    return 0;
}

/* Whether the rows of span id (cut as the spans' are) are read. */
static int wanted(const struct cause_data *d, const char *id)
{
    char one[17];
    const char *key = one;

    if (d->kept == NULL)
        return 1;
    snprintf(one, sizeof(one), "%s", id);
    return bsearch(&key, d->kept, d->nkept, sizeof(*d->kept), cmp_str) != NULL;
}

static int push(struct id_ns **v, size_t *n, size_t *cap, const char *id, int64_t a, int64_t b)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        struct id_ns *p = realloc(*v, nc * sizeof(*p));
        if (p == NULL)
            return -1;
        *v = p;
        *cap = nc;
    }
    snprintf((*v)[*n].id, sizeof((*v)[*n].id), "%s", id);
    (*v)[*n].a = a;
    (*v)[*n].b = b;
    (*v)[*n].ep = 0;
    (*n)++;
    return 0;
}

/* Index of name in names[0..*n), added when new (RP_CAUSE_EPS at most; the rest
 * share the last, "(other)"): a child's endpoint, a reason to be off CPU. */
static size_t name_index(char (*names)[RP_NAME_MAX], size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    if (*n == RP_CAUSE_EPS - 1) {
        snprintf(names[*n], RP_NAME_MAX, "(other)");
        (*n)++;
    }
    if (*n >= RP_CAUSE_EPS)
        return RP_CAUSE_EPS - 1;
    snprintf(names[*n], RP_NAME_MAX, "%s", name);
    return (*n)++;
}

/* A span's CPU from the cluster (ch_sets_span_cpu), as a row of the file's query. */
struct cpu_rows {
    struct cause_data *d;
    size_t cap;
};

static int cpu_row(void *arg, const char *id, size_t n, int64_t ns)
{
    struct cpu_rows *r = arg;
    char one[17];

    n = strnlen(id, n); /* a C string, as the file's text is read */
    snprintf(one, sizeof(one), "%.*s", (int)n, id);
    return wanted(r->d, one) ? push(&r->d->cpu, &r->d->ncpu, &r->cap, one, ns, 0) : 0;
}

/* CPU ns per span id: of the clock samples, from the database or, where the samples stay
 * on the cluster, from there. */
static int load_cpu(struct cause_data *d, const struct rp_ctx *c, sqlite3 *h)
{
    struct cpu_rows r = {d, 0};
    sqlite3_stmt *st;
    int rc;

    if (c->chq) {
        struct sf_err err;
        if (ch_sets_span_cpu(c->chq, cpu_row, &r, NULL, &err) != 0) {
            fprintf(stderr, "spanfold report: %s: the spans' CPU from the cluster: %s\n", c->o.name,
                    err.msg);
            return -1;
        }
    } else {
        if (sqlite3_prepare_v2(h,
                               "SELECT span_id, sum(period) FROM samples WHERE span_id IS NOT "
                               "NULL AND (event LIKE 'cpu-clock%' OR event LIKE 'task-clock%') "
                               "GROUP BY span_id",
                               -1, &st, NULL) != SQLITE_OK)
            return -1;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *id = (const char *)sqlite3_column_text(st, 0);
            if (id && cpu_row(&r, id, strlen(id), sqlite3_column_int64(st, 1)) < 0)
                break;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return -1;
    }
    if (d->ncpu)
        qsort(d->cpu, d->ncpu, sizeof(*d->cpu), cmp_id);
    return 0;
}

/* Every child span's interval, off-CPU time and connection events, from the database. */
static int load(struct cause_data *d, sqlite3 *h)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    char sql[1024];
    int rc;

    snprintf(sql, sizeof(sql),
             "SELECT s.parent_span_id, s.req_start_ns, COALESCE(s.resp_end_ns, s.resp_start_ns), "
             "%s FROM spans s WHERE s.parent_span_id IS NOT NULL AND s.req_start_ns IS NOT NULL "
             "AND COALESCE(s.resp_end_ns, s.resp_start_ns) > s.req_start_ns",
             sf_spans_group_expr("endpoint"));
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *ep = (const char *)sqlite3_column_text(st, 3);
        if (id == NULL || !wanted(d, id))
            continue;
        if (push(&d->kids, &d->nkids, &cap, id, sqlite3_column_int64(st, 1),
                 sqlite3_column_int64(st, 2)) < 0)
            break;
        d->kids[d->nkids - 1].ep = name_index(d->eps, &d->neps, ep ? ep : "");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return -1;
    if (d->nkids)
        qsort(d->kids, d->nkids, sizeof(*d->kids), cmp_id);
    /* retransmissions (pcap2spans): "stall_ns=S ..." */
    cap = 0;
    if (sqlite3_prepare_v2(h,
                           "SELECT connection_id, ts_ns, CAST(substr(detail, instr(detail, "
                           "'=') + 1) AS INTEGER), CASE kind WHEN 'zero_window' THEN 1 WHEN "
                           "'retransmit' THEN 0 ELSE 2 END, instr(detail, ' request') > 0 "
                           "FROM connection_events WHERE (kind "
                           "= 'retransmit' OR kind = 'zero_window' OR kind = "
                           "'tcp_handshake_done' OR kind = 'tls_handshake_done') AND ts_ns IS "
                           "NOT NULL ORDER BY connection_id, ts_ns",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (d->nretx == cap) {
                size_t nc = cap ? 2 * cap : 256;
                struct retx *p = realloc(d->retx, nc * sizeof(*p));
                if (p == NULL)
                    break;
                d->retx = p;
                cap = nc;
            }
            d->retx[d->nretx++] = (struct retx){
                sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4)};
        }
        sqlite3_finalize(st);
    }
    return 0;
}

/* One span's off-CPU time for a reason, in the order the reasons are first seen. */
static int blocked_row(void *arg, const char *id, size_t n, const char *why, size_t wn, int64_t ns)
{
    struct cpu_rows *r = arg;
    char one[17], w[RP_NAME_MAX];

    n = strnlen(id, n); /* C strings, as the file's text is read */
    wn = strnlen(why, wn);
    snprintf(one, sizeof(one), "%.*s", (int)n, id);
    snprintf(w, sizeof(w), "%.*s", (int)wn, why);
    if (!wanted(r->d, one))
        return 0;
    if (push(&r->d->blk, &r->d->nblk, &r->cap, one, ns, 0) < 0)
        return -1;
    r->d->blk[r->d->nblk - 1].ep = name_index(r->d->reasons, &r->d->nreasons, w);
    return 0;
}

/* Off CPU per span and reason, in (span, reason) order, and whether there is any off-CPU
 * interval: from the database (one older than the table has none) or the cluster. */
static int load_blocked(struct cause_data *d, const struct rp_ctx *c, sqlite3 *h)
{
    struct cpu_rows r = {d, 0};
    sqlite3_stmt *st;
    int rc;

    if (c->chq) {
        struct sf_err err;
        if (ch_sets_blocked(c->chq, blocked_row, &r, &d->offcpu, NULL, &err) != 0) {
            fprintf(stderr, "spanfold report: %s: the off-CPU time from the cluster: %s\n",
                    c->o.name, err.msg);
            return -1;
        }
    } else {
        if (sqlite3_prepare_v2(h,
                               "SELECT span_id, coalesce(reason, state, '?') || coalesce(' under "
                               "' || frame, ''), sum(end_ns - ts_ns) FROM offcpu WHERE span_id IS "
                               "NOT NULL GROUP BY 1, 2 ORDER BY 1, 2",
                               -1, &st, NULL) != SQLITE_OK)
            return 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *id = (const char *)sqlite3_column_text(st, 0);
            const char *why = (const char *)sqlite3_column_text(st, 1);
            if (blocked_row(&r, id, strlen(id), why ? why : "?", why ? strlen(why) : 1,
                            sqlite3_column_int64(st, 2)) < 0)
                break;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return -1;
        if (sqlite3_prepare_v2(h, "SELECT EXISTS (SELECT 1 FROM offcpu)", -1, &st, NULL) ==
            SQLITE_OK) {
            d->offcpu = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
            sqlite3_finalize(st);
        }
    }
    if (d->nblk)
        qsort(d->blk, d->nblk, sizeof(*d->blk), cmp_id);
    return 0;
}

static int cmp_first(const void *x, const void *y)
{
    const struct conn_first *a = x, *b = y;
    return (a->conn > b->conn) - (a->conn < b->conn);
}

/* The earliest start of a span analysed one by one (kept) on each connection. */
static int load_firsts(struct cause_data *d, const struct rp_ctx *c)
{
    if ((d->firsts = malloc((c->nspans ? c->nspans : 1) * sizeof(*d->firsts))) == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        if (c->spans[i].conn && c->spans[i].kept)
            d->firsts[d->nfirsts++] = (struct conn_first){c->spans[i].conn, c->spans[i].start_ns};
    qsort(d->firsts, d->nfirsts, sizeof(*d->firsts), cmp_first);
    size_t k = 0;
    for (size_t i = 0; i < d->nfirsts; i++) {
        if (k && d->firsts[k - 1].conn == d->firsts[i].conn) {
            if (d->firsts[i].start < d->firsts[k - 1].start)
                d->firsts[k - 1].start = d->firsts[i].start;
        } else {
            d->firsts[k++] = d->firsts[i];
        }
    }
    d->nfirsts = k;
    return 0;
}

/* Span sp is the first on its connection. */
static int is_first(const struct cause_data *d, const struct rp_span *sp)
{
    struct conn_first key = {sp->conn, 0};
    const struct conn_first *f = bsearch(&key, d->firsts, d->nfirsts, sizeof(key), cmp_first);
    return f && f->start == sp->start_ns;
}

/* The first event of connection conn at or after ts in d->retx (by connection, then
 * time), or d->nretx. */
static size_t retx_from(const struct cause_data *d, int64_t conn, int64_t ts)
{
    size_t lo = 0, hi = d->nretx;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct retx *r = &d->retx[mid];
        if (r->conn < conn || (r->conn == conn && r->ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The time within [a, b) that span sp's request waited for retransmitted bytes: the union
 * of its connection's request-direction retransmissions' stalls [ts - stall, ts). */
static double request_stalls(const struct cause_data *d, const struct rp_span *sp, int64_t a,
                             int64_t b)
{
    int64_t covered = a;
    double ns = 0;

    if (sp->conn == 0 || b <= a)
        return 0;
    /* the stalls end in time order, so the part of each past the last end is new */
    for (size_t k = retx_from(d, sp->conn, a); k < d->nretx && d->retx[k].conn == sp->conn; k++) {
        const struct retx *r = &d->retx[k];
        int64_t from = r->ts - r->stall, to = r->ts < b ? r->ts : b;
        if (r->kind != EV_RETRANSMIT || !r->req)
            continue;
        if (from < covered)
            from = covered;
        if (to > from) {
            ns += (double)(to - from);
            covered = to;
        }
        if (r->ts >= b)
            break;
    }
    return ns;
}

/* Add span sp's parts to b (sums, divided into means later). */
static void add_span(const struct cause_data *d, const struct rp_span *sp, struct rp_breakdown *b)
{
    double dur = sp->lat_ms * 1e6, left, part, net = 0, ds = 0;
    int64_t t0 = sp->start_ns, t1 = sp->start_ns + (int64_t)llround(dur), covered = t0;
    size_t k = first_of(d->cpu, d->ncpu, sp->id);
    double ds_ep[RP_CAUSE_EPS] = {0}, blk = 0, blk_r[RP_CAUSE_EPS] = {0};

    left = dur;
    part = k < d->ncpu ? fmin((double)d->cpu[k].a, left) : 0;
    b->cpu_ns += part;
    left -= part;
    /* the children, in start order: their union within [t0, t1) */
    for (k = first_of(d->kids, d->nkids, sp->id); k < d->nkids && !strcmp(d->kids[k].id, sp->id);
         k++) {
        int64_t a = d->kids[k].a > covered ? d->kids[k].a : covered;
        int64_t e = d->kids[k].b < t1 ? d->kids[k].b : t1;
        if (e > a) {
            ds += (double)(e - a);
            ds_ep[d->kids[k].ep] += (double)(e - a);
            covered = e;
        }
    }
    part = fmin(ds, left);
    b->downstream_ns += part;
    for (size_t e = 0; ds > 0 && e < RP_CAUSE_EPS; e++)
        b->downstream_by[e] += ds_ep[e] * part / ds;
    left -= part;
    /* off CPU beyond the wait on its calls (the thread is off CPU during those too) */
    for (k = first_of(d->blk, d->nblk, sp->id); k < d->nblk && !strcmp(d->blk[k].id, sp->id); k++) {
        blk += (double)d->blk[k].a;
        blk_r[d->blk[k].ep] += (double)d->blk[k].a;
    }
    part = fmin(fmax(0, blk - ds), left);
    b->blocked_ns += part;
    for (size_t e = 0; blk > 0 && e < RP_CAUSE_EPS; e++)
        b->blocked_by[e] += blk_r[e] * part / blk;
    left -= part;
    if (sp->req_end_ns != INT64_MIN && sp->req_end_ns >= t0)
        net += (double)(sp->req_end_ns - t0);
    if (sp->resp_start_ns != INT64_MIN && sp->resp_start_ns <= t1)
        net += (double)(t1 - sp->resp_start_ns);
    if (sp->req_end_ns != INT64_MIN && sp->resp_start_ns != INT64_MIN)
        net += request_stalls(d, sp, sp->req_end_ns > t0 ? sp->req_end_ns : t0,
                              sp->resp_start_ns < t1 ? sp->resp_start_ns : t1);
    part = fmin(net, left);
    b->network_ns += part;
    left -= part;
    b->unaccounted_ns += left;
    b->dur_ns += dur;
    b->spans++;
    /* the retransmissions and zero windows on its connection while it ran (a stall ends
     * at or after t0: its event's time) */
    {
        size_t lo = retx_from(d, sp->conn, t0);
        for (; sp->conn && lo < d->nretx && d->retx[lo].conn == sp->conn && d->retx[lo].ts <= t1;
             lo++) {
            if (d->retx[lo].kind == EV_ZERO_WINDOW) {
                b->zero_windows += 1;
                b->zero_window_stall_ns += (double)d->retx[lo].stall;
            } else if (d->retx[lo].kind == EV_RETRANSMIT) {
                b->retransmits += 1;
                b->retransmit_stall_ns += (double)d->retx[lo].stall;
            }
        }
    }
    /* the first request on a new connection waited for its TCP and TLS handshakes */
    if (sp->conn && is_first(d, sp)) {
        size_t lo = retx_from(d, sp->conn, INT64_MIN);
        for (; lo < d->nretx && d->retx[lo].conn == sp->conn; lo++)
            if (d->retx[lo].kind == EV_HANDSHAKE)
                b->handshake_ns += (double)d->retx[lo].stall;
    }
}

static void mean(struct rp_breakdown *b)
{
    double n = b->spans ? (double)b->spans : 1;

    b->dur_ns /= n;
    b->cpu_ns /= n;
    b->blocked_ns /= n;
    b->retransmits /= n;
    b->retransmit_stall_ns /= n;
    b->zero_windows /= n;
    b->zero_window_stall_ns /= n;
    b->handshake_ns /= n;
    b->downstream_ns /= n;
    b->network_ns /= n;
    b->unaccounted_ns /= n;
    for (size_t e = 0; e < RP_CAUSE_EPS; e++) {
        b->downstream_by[e] /= n;
        b->blocked_by[e] /= n;
    }
}

/* The cause of the growth from normal to slow, and its share of it. */
static void name_cause(struct rp_why *y)
{
    const double grew[] = {
        y->slow.cpu_ns - y->normal.cpu_ns, y->slow.blocked_ns - y->normal.blocked_ns,
        y->slow.network_ns - y->normal.network_ns, y->slow.downstream_ns - y->normal.downstream_ns,
        y->slow.unaccounted_ns - y->normal.unaccounted_ns};
    double added = y->slow.dur_ns - y->normal.dur_ns, best = 0;

    y->cause = RP_CAUSE_NONE;
    if (!(added > 0) || y->slow.spans == 0 || y->normal.spans == 0)
        return;
    /* a measured part first: unaccounted is what the recording cannot see (off CPU,
     * run-queue waits that CPU demand causes, unsampled work), not a cause of its own,
     * so it is named only when no measured part explains a tenth of the growth */
    for (int k = 0; k < 4; k++)
        if (grew[k] > best) {
            best = grew[k];
            y->cause = (enum rp_cause)(RP_CAUSE_CPU + k);
        }
    if (best < RP_CAUSE_MIN_SHARE * added && grew[4] > best) {
        best = grew[4];
        y->cause = RP_CAUSE_UNACCOUNTED;
    }
    y->share = fmin(1, best / added);
    y->unaccounted_share = fmin(1, fmax(0, grew[4] / added));
    /* a mixed slowdown: a second measured part that explains a good share too */
    y->cause2 = RP_CAUSE_NONE;
    y->share2 = 0;
    for (int k = 0; k < 4 && y->cause != RP_CAUSE_UNACCOUNTED; k++)
        if ((enum rp_cause)(RP_CAUSE_CPU + k) != y->cause &&
            grew[k] >= RP_CAUSE_SECOND_SHARE * added && grew[k] / added > y->share2) {
            y->share2 = fmin(1, grew[k] / added);
            y->cause2 = (enum rp_cause)(RP_CAUSE_CPU + k);
        }
    y->ep = y->reason = SIZE_MAX;
    best = 0;
    for (size_t e = 0;
         (y->cause == RP_CAUSE_DOWNSTREAM || y->cause2 == RP_CAUSE_DOWNSTREAM) && e < RP_CAUSE_EPS;
         e++)
        if (y->slow.downstream_by[e] - y->normal.downstream_by[e] > best) {
            best = y->slow.downstream_by[e] - y->normal.downstream_by[e];
            y->ep = e;
        }
    best = 0;
    for (size_t e = 0;
         (y->cause == RP_CAUSE_BLOCKED || y->cause2 == RP_CAUSE_BLOCKED) && e < RP_CAUSE_EPS; e++)
        if (y->slow.blocked_by[e] - y->normal.blocked_by[e] > best) {
            best = y->slow.blocked_by[e] - y->normal.blocked_by[e];
            y->reason = e;
        }
}

int rp_causes(struct rp_ctx *c, sqlite3 *h)
{
    struct cause_data d = {0};
    int rc = -1;

    if ((d.eps = calloc(RP_CAUSE_EPS, sizeof(*d.eps))) == NULL ||
        (d.reasons = calloc(RP_CAUSE_EPS, sizeof(*d.reasons))) == NULL || kept_ids(&d, c) < 0 ||
        load_cpu(&d, c, h) < 0 || load(&d, h) < 0 || load_blocked(&d, c, h) < 0 ||
        load_firsts(&d, c) < 0)
        goto out;
    if ((c->whys = calloc(c->ncps ? c->ncps : 1, sizeof(*c->whys))) == NULL)
        goto out;
    for (size_t i = 0; i < c->nspans; i++) { /* each span's CPU, for report_cpuq.c */
        size_t k = first_of(d.cpu, d.ncpu, c->spans[i].id);
        c->spans[i].cpu_ns = k < d.ncpu ? (double)d.cpu[k].a : 0;
    }
    c->have_cpu = d.ncpu > 0;
    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        struct rp_why *y = &c->whys[c->nwhys];
        const size_t *ix = c->by_group + c->group_at[p->group];
        size_t n = c->group_at[p->group + 1] - c->group_at[p->group];
        if (p->metric != SF_M_P50 && p->metric != SF_M_P95 && p->metric != SF_M_P99)
            continue;
        memset(y, 0, sizeof(*y));
        y->cp = i;
        y->ep = y->reason = SIZE_MAX;
        y->offcpu = d.offcpu;
        for (size_t k = 0; k < n; k++) {
            const struct rp_span *sp = &c->spans[ix[k]];
            if (!sp->kept || !(isfinite(sp->lat_ms) && sp->lat_ms >= 0))
                continue;
            add_span(&d, sp, rp_realtime(c, sp->start_ns) < p->time_ns ? &y->normal : &y->slow);
        }
        mean(&y->normal);
        mean(&y->slow);
        name_cause(y);
        c->nwhys++;
    }
    c->cause_eps = d.eps;
    d.eps = NULL;
    c->ncause_eps = d.neps;
    c->cause_reasons = d.reasons;
    d.reasons = NULL;
    c->ncause_reasons = d.nreasons;
    rc = 0;
out:
    free(d.cpu);
    free(d.kids);
    free(d.blk);
    free(d.retx);
    free(d.firsts);
    free(d.kept);
    free(d.eps);
    free(d.reasons);
    return rc;
}

const struct rp_why *rp_why_of(const struct rp_ctx *c, size_t cp)
{
    for (size_t i = 0; i < c->nwhys; i++)
        if (c->whys[i].cp == cp)
            return &c->whys[i];
    return NULL;
}

size_t rp_slowest(const struct rp_ctx *c, size_t *idx)
{
    size_t n = 0;

    for (size_t i = 0; i < c->nspans; i++) { /* insertion into the top RP_SLOWEST */
        double lat = c->spans[i].lat_ms;
        size_t k;
        if (!c->spans[i].kept || !isfinite(lat) ||
            (n == RP_SLOWEST && lat <= c->spans[idx[n - 1]].lat_ms))
            continue;
        k = n < RP_SLOWEST ? n++ : n - 1;
        while (k > 0 && c->spans[idx[k - 1]].lat_ms < lat) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
    return n;
}

void rp_phases(const struct rp_span *sp, double *req_ms, double *server_ms, double *resp_ms)
{
    int64_t end = sp->start_ns + llround(sp->lat_ms * 1e6);
    int req = sp->req_end_ns != INT64_MIN, resp = sp->resp_start_ns != INT64_MIN;

    *req_ms = req ? (double)(sp->req_end_ns - sp->start_ns) / 1e6 : NAN;
    *server_ms = req && resp ? (double)(sp->resp_start_ns - sp->req_end_ns) / 1e6 : NAN;
    *resp_ms = resp ? (double)(end - sp->resp_start_ns) / 1e6 : NAN;
}

/* sockjoin.c - socket events (spantrace --sockets) joined to the capture's spans by
 * 4-tuple and TCP sequence range, and the thread time each span owns alone.
 *
 * Reference: RFC 9293 section 3.4 (sequence numbers, compared modulo 2^32).  One
 * event is one tcp_sendmsg / tcp_recvmsg / tcp_splice_read call of a thread:
 *
 *   spantrace_sock: recv 10.0.0.1:8080 10.0.0.2:51234 seq=1000 len=200
 *                   |dir |local       |remote         |first byte |bytes copied
 *
 * (IPv6 addresses in brackets: [::1]:8080).  A span knows its request bytes
 * [req_start, req_end) client to server and its response bytes server to client
 * (pcap2spans).  On the server's socket, a recv copies request bytes and a send
 * writes response bytes, so:
 *
 *   reader  = the thread whose recv copied the request's last byte (it has it all)
 *   writer  = the thread whose send wrote the response's first byte
 *   claim   = reader == writer: [that recv, the send of the response's last byte];
 *             else one claim on each thread over its own events (a hand-off)
 *
 * Claims of different spans that overlap on one thread (an event loop, HTTP/2
 * streams, a pipelined connection) are never split by guess: sockjoin_split gives
 * the time one span owns alone to that span and the rest, with its candidates, as
 * shared.  Retransmitted or duplicated events cover bytes already placed: the first
 * event (in input order) that covers a byte keeps it.
 */
#include <stdlib.h>
#include <string.h>

#include "t2s.h"

/* ---- the event text ----------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

uint64_t sockjoin_conn_key(const char *server, size_t sn, unsigned sport, const char *client,
                           size_t cn, unsigned cport)
{
    uint64_t h = 0xcbf29ce484222325ull;

    h = fnv(h, server, sn);
    h = (h ^ sport) * 0x100000001b3ull;
    h = fnv(h, "|", 1);
    h = fnv(h, client, cn);
    h = (h ^ cport) * 0x100000001b3ull;
    return h ? h : 1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "ADDR:PORT" or "[ADDR6]:PORT" at s[*i], up to a blank. */
static int endpoint(const char *s, size_t n, size_t *i, const char **a, size_t *al, unsigned *port)
{
    size_t k = *i, e = k, colon;
    uint64_t v = 0;

    while (e < n && s[e] != ' ')
        e++;
    if (e == k)
        return -1;
    for (colon = e; colon > k && s[colon - 1] != ':'; colon--)
        ;
    if (colon == k || colon == e)
        return -1;
    for (size_t j = colon; j < e; j++) {
        if (!is_digit(s[j]) || (v = v * 10 + (uint64_t)(s[j] - '0')) > 65535)
            return -1;
    }
    *a = s + k;
    *al = colon - 1 - k;
    if (*al >= 2 && s[k] == '[' && s[colon - 2] == ']') {
        *a = s + k + 1;
        *al -= 2;
    }
    if (*al == 0 || *al > 45)
        return -1;
    for (size_t j = 0; j < *al; j++) {
        char c = (*a)[j];
        if (!(is_digit(c) || c == '.' || c == ':' || (c >= 'a' && c <= 'f') ||
              (c >= 'A' && c <= 'F')))
            return -1;
    }
    *port = (unsigned)v;
    *i = e;
    return 0;
}

/* "KEY=digits" at s[*i]. */
static int number(const char *s, size_t n, size_t *i, const char *key, uint64_t max, uint64_t *out)
{
    size_t k = *i, kl = strlen(key);
    uint64_t v = 0;

    if (n - k < kl + 1 || memcmp(s + k, key, kl) != 0)
        return -1;
    k += kl;
    if (k >= n || !is_digit(s[k]))
        return -1;
    for (; k < n && is_digit(s[k]); k++) {
        v = v * 10 + (uint64_t)(s[k] - '0');
        if (v > max)
            return -1;
    }
    *out = v;
    *i = k;
    return 0;
}

/* "KEY" and 1 to 16 lowercase hex digits at s[*i], ending the text or at a blank. */
static int hex(const char *s, size_t n, size_t *i, const char *key, uint64_t *out)
{
    size_t kl = strlen(key), k;
    uint64_t v = 0;

    if (n - *i <= kl || memcmp(s + *i, key, kl) != 0)
        return -1;
    for (k = *i + kl; k < n && k - *i - kl < 16 && s[k] != ' '; k++) {
        char c = s[k];
        int d = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (k == *i + kl || (k < n && s[k] != ' '))
        return -1;
    *out = v;
    *i = k;
    return 0;
}

static int skip_blank(const char *s, size_t n, size_t *i)
{
    size_t k = *i;

    while (k < n && s[k] == ' ')
        k++;
    if (k == *i)
        return -1;
    *i = k;
    return 0;
}

int sockjoin_parse(const char *s, size_t n, struct sj_event *ev, struct sf_err *err)
{
    const char *la, *ra;
    size_t i = 0, ll, rl;
    unsigned lp, rp;
    uint64_t seq, len;
    const char *what = "expected send, recv, wait, go or spawn";

    memset(ev, 0, sizeof(*ev));
    if (n >= 5 && memcmp(s, "wait ", 5) == 0) {
        uint64_t sec, ns, ready;
        size_t k;
        i = 4;
        what = "expected from=SECONDS.NANOSECONDS";
        if (skip_blank(s, n, &i) || number(s, n, &i, "from=", 1ull << 33, &sec) || i >= n ||
            s[i] != '.')
            goto bad;
        k = ++i;
        if (number(s, n, &i, "", 999999999, &ns) || i - k != 9)
            goto bad;
        what = "expected ready=N";
        if (skip_blank(s, n, &i) || number(s, n, &i, "ready=", INT32_MAX, &ready))
            goto bad;
        if (i < n && s[i] != ' ')
            goto bad;
        ev->wait = 1;
        ev->from_ns = (int64_t)(sec * 1000000000ull + ns);
        ev->len = (uint32_t)ready;
        return 0;
    }
    if (n >= 3 && memcmp(s, "go ", 3) == 0) {
        i = 2;
        what = "expected g=0xHEX";
        if (skip_blank(s, n, &i) || hex(s, n, &i, "g=0x", &ev->g))
            goto bad;
        ev->go = 1;
        return 0;
    }
    if (n >= 6 && memcmp(s, "spawn ", 6) == 0) {
        i = 5;
        what = "expected g=0xHEX";
        if (skip_blank(s, n, &i) || hex(s, n, &i, "g=0x", &ev->g))
            goto bad;
        what = "expected parent=0xHEX";
        if (skip_blank(s, n, &i) || hex(s, n, &i, "parent=0x", &ev->parent))
            goto bad;
        ev->spawn = 1;
        return 0;
    }
    if (n >= 5 && memcmp(s, "send ", 5) == 0)
        ev->send = 1;
    else if (!(n >= 5 && memcmp(s, "recv ", 5) == 0))
        goto bad;
    i = 4;
    what = "expected the local ADDR:PORT";
    if (skip_blank(s, n, &i) || endpoint(s, n, &i, &la, &ll, &lp))
        goto bad;
    what = "expected the remote ADDR:PORT";
    if (skip_blank(s, n, &i) || endpoint(s, n, &i, &ra, &rl, &rp))
        goto bad;
    what = "expected seq=N (0..4294967295)";
    if (skip_blank(s, n, &i) || number(s, n, &i, "seq=", UINT32_MAX, &seq))
        goto bad;
    what = "expected len=N (0..2147483647)";
    if (skip_blank(s, n, &i) || number(s, n, &i, "len=", INT32_MAX, &len))
        goto bad;
    /* later fields (a future kernel-side addition) are ignored */
    if (i < n && s[i] != ' ')
        goto bad;
    /* on the server's socket local is the server: the key of the capture's connection */
    ev->conn = sockjoin_conn_key(la, ll, lp, ra, rl, rp);
    /* on the client's socket (a call the traced process made) remote is the server */
    ev->conn_rev = sockjoin_conn_key(ra, rl, rp, la, ll, lp);
    ev->seq = (uint32_t)seq;
    ev->len = (uint32_t)len;
    return 0;
bad:
    sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "socket event: %s", what);
    if (err)
        err->col = (uint32_t)i + 1;
    return SF_E_MALFORMED;
}

/* ---- the sequence-range join -------------------------------------------------------- */

/* One message of one span in the index: its bytes relative to the group's base. */
struct entry {
    uint64_t conn;
    int send; /* 1: a response (the server sends it) */
    uint32_t a, len;
    uint32_t rel; /* a - base of its (conn, send) group */
    size_t span;
};

struct group {
    size_t first, n;
    uint32_t base, maxlen;
};

static int cmp_entry(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;

    if (a->conn != b->conn)
        return a->conn < b->conn ? -1 : 1;
    if (a->send != b->send)
        return a->send - b->send;
    if (a->rel != b->rel)
        return a->rel < b->rel ? -1 : 1;
    return a->span < b->span ? -1 : a->span > b->span;
}

/* byte x in [s, s + len), modulo 2^32 */
static int covers(uint32_t s, uint32_t len, uint32_t x)
{
    return (uint32_t)(x - s) < len;
}

static void note(struct sj_result *r, const struct entry *e, const struct sj_event *ev)
{
    uint32_t last = e->a + e->len - 1;

    if (!e->send) {
        if (r->req_first_ts == SJ_NONE || ev->ts_ns < r->req_first_ts)
            r->req_first_ts = ev->ts_ns;
        if (r->req_a_ts == SJ_NONE && covers(ev->seq, ev->len, e->a)) {
            r->req_a_ts = ev->ts_ns;
            r->req_a_tid = ev->tid;
        }
        if (r->reader_tid < 0 && covers(ev->seq, ev->len, last)) {
            r->reader_tid = ev->tid;
            r->reader_pid = ev->pid;
            r->req_last_ts = ev->ts_ns;
        }
        return;
    }
    if (r->writer_tid < 0 && covers(ev->seq, ev->len, e->a)) {
        r->writer_tid = ev->tid;
        r->writer_pid = ev->pid;
        r->resp_first_ts = ev->ts_ns;
    }
    if (r->resp_last_ts == SJ_NONE && covers(ev->seq, ev->len, last))
        r->resp_last_ts = ev->ts_ns;
}

/* An event on the client's socket: its send wrote request bytes, its recv read
 * response bytes.  The thread that sent the request's first byte made the call, until
 * the recv of the response's last byte. */
static void note_client(struct sj_result *r, const struct entry *e, const struct sj_event *ev)
{
    if (!e->send) {
        if (r->caller_tid < 0 && covers(ev->seq, ev->len, e->a)) {
            r->caller_tid = ev->tid;
            r->caller_pid = ev->pid;
            r->call_start_ts = ev->ts_ns;
        }
    } else if (r->call_end_ts == SJ_NONE && covers(ev->seq, ev->len, e->a + e->len - 1))
        r->call_end_ts = ev->ts_ns;
}

/* Entries of group g whose bytes overlap the event's (client: the event is on the
 * client's socket). */
static void match_event(const struct entry *en, const struct group *g, const struct sj_event *ev,
                        int client, struct sj_result *res, uint64_t *hits, size_t *span)
{
    uint64_t rs = ev->seq - g->base, re = rs + ev->len;
    size_t lo = 0, hi = g->n;

    /* an event that starts before the group's first message and runs into it (the
     * HTTP/2 preface read with the first request): only its part from the base on */
    if (re > (1ull << 32)) {
        rs = 0;
        re -= 1ull << 32;
    }
    /* first entry that starts at or after the event's end: everything before it may
     * overlap, back to maxlen before the event's start */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uint64_t)en[g->first + mid].rel < re)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0) {
        const struct entry *e = &en[g->first + --lo];
        if ((uint64_t)e->rel + g->maxlen <= rs)
            break;
        if ((uint64_t)e->rel + e->len > rs) {
            if (client)
                note_client(&res[e->span], e, ev);
            else
                note(&res[e->span], e, ev);
            (*hits)++;
            if (span && !client)
                *span = *span == SJ_NOSPAN || *span == e->span ? e->span : SJ_SPANS;
        }
    }
}

static void result_init(struct sj_result *r)
{
    r->reader_tid = r->writer_tid = r->reader_pid = r->writer_pid = r->req_a_tid = -1;
    r->req_first_ts = r->req_last_ts = r->req_a_ts = SJ_NONE;
    r->resp_first_ts = r->resp_last_ts = SJ_NONE;
    r->caller_tid = r->caller_pid = -1;
    r->call_start_ts = r->call_end_ts = SJ_NONE;
}

static int cmp_capture(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;

    if (a->conn != b->conn)
        return a->conn < b->conn ? -1 : 1;
    if (a->send != b->send)
        return a->send - b->send;
    return a->span < b->span ? -1 : a->span > b->span;
}

static int cmp_group_key(uint64_t conn, int send, const struct entry *e)
{
    if (conn != e->conn)
        return conn < e->conn ? -1 : 1;
    return send - e->send;
}

/* The group of (conn, send), or NULL. */
static const struct group *find_group(const struct entry *en, const struct group *gr, size_t ng,
                                      uint64_t conn, int send)
{
    size_t lo = 0, hi = ng;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp_group_key(conn, send, &en[gr[mid].first]);
        if (c == 0)
            return &gr[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Entries grouped by (connection, direction), each group sorted by offset from its base:
 * its lowest message.  Spans come in capture order, which is not the order of their
 * bytes where streams share a connection (HTTP/2 spans end in any order), but each lies
 * within 2 GiB of the one before: the place of each is the one before's plus their
 * difference taken as signed, so offsets hold across a wrap of the sequence space. */
static size_t build_groups(struct entry *en, size_t n, struct group *gr)
{
    size_t ng = 0;
    int64_t pos = 0, low = 0;

    qsort(en, n, sizeof(*en), cmp_capture);
    for (size_t i = 0; i <= n; i++) {
        if (i == n || i == 0 || cmp_group_key(en[i].conn, en[i].send, &en[i - 1]) != 0) {
            if (ng > 0) { /* the group before: offsets from its lowest message */
                struct group *g = &gr[ng - 1];
                g->base = en[g->first].a + (uint32_t)low;
                for (size_t k = g->first; k < g->first + g->n; k++)
                    en[k].rel = en[k].a - g->base;
            }
            if (i == n)
                break;
            gr[ng++] = (struct group){i, 0, en[i].a, 0};
            pos = low = 0;
        } else {
            pos += (int32_t)(en[i].a - en[i - 1].a);
            low = pos < low ? pos : low;
        }
        struct group *g = &gr[ng - 1];
        g->n++;
        if (en[i].len > g->maxlen)
            g->maxlen = en[i].len;
    }
    for (size_t k = 0; k < ng; k++)
        qsort(en + gr[k].first, gr[k].n, sizeof(*en), cmp_entry);
    return ng;
}

int sockjoin_match(const struct sj_span *sp, size_t ns, const struct sj_event *ev, size_t ne,
                   struct sj_result *res, uint64_t *hits, size_t *ev_span)
{
    struct entry *en = malloc((2 * ns + 1) * sizeof(*en));
    struct group *gr = malloc((2 * ns + 1) * sizeof(*gr));
    size_t n = 0, ng;

    *hits = 0;
    if (en == NULL || gr == NULL) {
        free(en);
        free(gr);
        return SF_E_NOMEM;
    }
    for (size_t i = 0; i < ns; i++) {
        result_init(&res[i]);
        if (sp[i].has_req && sp[i].req_end != sp[i].req_start)
            en[n++] = (struct entry){
                sp[i].conn, 0, sp[i].req_start, sp[i].req_end - sp[i].req_start, 0, i};
        if (sp[i].has_resp && sp[i].resp_end != sp[i].resp_start)
            en[n++] = (struct entry){
                sp[i].conn, 1, sp[i].resp_start, sp[i].resp_end - sp[i].resp_start, 0, i};
    }
    ng = build_groups(en, n, gr);
    for (size_t j = 0; j < ne; j++) {
        const struct group *g;
        size_t *span = ev_span ? &ev_span[j] : NULL;
        if (span)
            *span = SJ_NOSPAN;
        if (ev[j].len == 0 || ev[j].wait || ev[j].go || ev[j].spawn)
            continue;
        /* the server's socket; else the client's, whose send carries the request */
        if ((g = find_group(en, gr, ng, ev[j].conn, ev[j].send)) != NULL)
            match_event(en, g, &ev[j], 0, res, hits, span);
        else if ((g = find_group(en, gr, ng, ev[j].conn_rev, !ev[j].send)) != NULL)
            match_event(en, g, &ev[j], 1, res, hits, span);
    }
    free(en);
    free(gr);
    return 0;
}

/* ---- claims and their exclusive / shared pieces ------------------------------------- */

static void claim(struct sj_claim *out, size_t *n, size_t span, int64_t pid, int64_t tid, int64_t a,
                  int64_t b)
{
    if (a == SJ_NONE || b == SJ_NONE)
        return;
    out[*n] = (struct sj_claim){span, pid, tid, a < b ? a : b, a < b ? b : a};
    (*n)++;
}

size_t sockjoin_claims(const struct sj_result *res, size_t ns, struct sj_claim *out)
{
    size_t n = 0;

    for (size_t i = 0; i < ns; i++) {
        const struct sj_result *r = &res[i];
        if (r->reader_tid >= 0 && r->reader_tid == r->writer_tid) {
            /* one thread read it all, then answered: the work lies in between */
            claim(out, &n, i, r->reader_pid, r->reader_tid, r->req_last_ts,
                  r->resp_last_ts != SJ_NONE ? r->resp_last_ts : r->resp_first_ts);
            continue;
        }
        if (r->reader_tid >= 0)
            claim(out, &n, i, r->reader_pid, r->reader_tid, r->req_first_ts, r->req_last_ts);
        if (r->writer_tid >= 0)
            claim(out, &n, i, r->writer_pid, r->writer_tid, r->resp_first_ts,
                  r->resp_last_ts != SJ_NONE ? r->resp_last_ts : r->resp_first_ts);
    }
    return n;
}

struct edge {
    int64_t tid, ts;
    int open; /* 1 start, 0 end */
    size_t claim;
};

static int cmp_edge(const void *x, const void *y)
{
    const struct edge *a = x, *b = y;

    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    /* ends before starts at one instant: touching claims do not overlap */
    if (a->open != b->open)
        return a->open - b->open;
    return a->claim < b->claim ? -1 : a->claim > b->claim;
}

/* Emit the piece [from, to) of thread tid while the claims in act[0..na) are open. */
static int piece(const struct sj_claim *cl, const size_t *act, size_t na, int64_t from, int64_t to,
                 size_t *spans, sj_piece_fn emit, void *ctx)
{
    size_t n = 0;

    if (na == 0 || to <= from)
        return 0;
    for (size_t k = 0; k < na; k++) {
        size_t s = cl[act[k]].span, j;
        for (j = 0; j < n && spans[j] != s; j++)
            ;
        if (j == n)
            spans[n++] = s;
    }
    return emit(ctx, cl[act[0]].pid, cl[act[0]].tid, from, to, spans, n);
}

int sockjoin_split(const struct sj_claim *cl, size_t n, sj_piece_fn emit, void *ctx)
{
    struct edge *ed = malloc((2 * n + 1) * sizeof(*ed));
    size_t *act = malloc((n + 1) * sizeof(*act)), *spans = malloc((n + 1) * sizeof(*spans));
    size_t na = 0;
    int rc = 0;

    if (ed == NULL || act == NULL || spans == NULL) {
        free(ed);
        free(act);
        free(spans);
        return SF_E_NOMEM;
    }
    size_t ne = 0;

    for (size_t i = 0; i < n; i++) {
        if (cl[i].end_ns <= cl[i].start_ns)
            continue; /* an instant owns no time */
        ed[ne++] = (struct edge){cl[i].tid, cl[i].start_ns, 1, i};
        ed[ne++] = (struct edge){cl[i].tid, cl[i].end_ns, 0, i};
    }
    qsort(ed, ne, sizeof(*ed), cmp_edge);
    for (size_t i = 0; i < ne && rc == 0; i++) {
        const struct edge *e = &ed[i];
        if (i > 0 && ed[i - 1].tid == e->tid)
            rc = piece(cl, act, na, ed[i - 1].ts, e->ts, spans, emit, ctx);
        if (i > 0 && ed[i - 1].tid != e->tid)
            na = 0; /* a new thread (every claim of the last one has ended) */
        if (e->open) {
            act[na++] = e->claim;
        } else {
            for (size_t k = 0; k < na; k++) {
                if (act[k] == e->claim) {
                    act[k] = act[--na];
                    break;
                }
            }
        }
    }
    free(ed);
    free(act);
    free(spans);
    return rc;
}

/* ---- event loops: shared time taken apart by the readiness waits -------------------- */

/* A thread's marks in time order: its socket events (the span whose bytes each copied)
 * and its readiness waits, each [from, ts) off its CPU.  Between two waits lies one
 * iteration of its loop. */
struct mark {
    int64_t tid, ts, from; /* from: a wait's call; an event's own time */
    size_t span;           /* an event's; SJ_NOSPAN for a wait */
    int wait;
};

static int cmp_mark(const void *x, const void *y)
{
    const struct mark *a = x, *b = y;

    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->wait - b->wait;
}

struct loops {
    struct mark *m;
    size_t nm;
    sj_piece_fn emit, loop_emit;
    void *ctx;
};

/* The first mark of tid at or after ts (or the end of tid's marks). */
static size_t mark_at(const struct loops *L, int64_t tid, int64_t ts)
{
    size_t lo = 0, hi = L->nm;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->m[mid].tid < tid || (L->m[mid].tid == tid && L->m[mid].ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int is_candidate(size_t span, const size_t *spans, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (spans[k] == span)
            return 1;
    return 0;
}

/* Whose is the time at t of thread tid, among the candidates spans[0..n): the one span
 * the loop's order names, or SJ_NOSPAN (it stays shared).  m[k] is the thread's first
 * mark after t.  Only within an iteration seen whole (a wait's return before it, a
 * wait's call after it):
 *   - in a wait (between its call and its return) the thread is off its CPU serving
 *     no one: shared;
 *   - before a call of the iteration (since its wait returned, or since the call before):
 *     the span whose bytes that call copies: a loop prepares an answer, then writes it;
 *   - after the iteration's last call, until the next wait: that call's span (nginx fills
 *     its next buffer after a write the socket did not take whole);
 *   - a call on several spans' bytes or on none (another socket), or a span not among the
 *     candidates: shared.
 * Chosen by measurement on nginx (tracefs2spans.md, "Event loops"). */
static size_t owner(const struct loops *L, size_t k, int64_t tid, int64_t t, const size_t *spans,
                    size_t n)
{
    size_t first = k, last = k, who;

    /* the wait that ends this iteration, or the one t lies in */
    while (last < L->nm && L->m[last].tid == tid && !L->m[last].wait)
        last++;
    if (last >= L->nm || L->m[last].tid != tid || L->m[last].from <= t)
        return SJ_NOSPAN; /* inside a wait, or no wait after it */
    /* back to the wait that began it */
    while (first > 0 && L->m[first - 1].tid == tid && !L->m[first - 1].wait)
        first--;
    if (first == 0 || L->m[first - 1].tid != tid || first == last)
        return SJ_NOSPAN; /* no wait before it, or an iteration without calls */
    who = k < last ? L->m[k].span : L->m[last - 1].span;
    return who < SJ_SPANS && is_candidate(who, spans, n) ? who : SJ_NOSPAN;
}

static int emit_run(struct loops *L, int64_t pid, int64_t tid, int64_t a, int64_t b, size_t who,
                    const size_t *spans, size_t n)
{
    if (b <= a)
        return 0;
    if (who == SJ_NOSPAN)
        return L->emit(L->ctx, pid, tid, a, b, spans, n);
    return L->loop_emit(L->ctx, pid, tid, a, b, &who, 1);
}

/* A piece of sockjoin_split: shared ones of a thread with waits are cut at its marks and
 * each part given by owner(); neighbouring parts with one owner go out as one piece. */
static int loop_piece(void *ctx, int64_t pid, int64_t tid, int64_t start, int64_t end,
                      const size_t *spans, size_t n)
{
    struct loops *L = ctx;
    size_t k = mark_at(L, tid, start);
    int64_t a = start, run_from = start;
    size_t run_who = SJ_NOSPAN;
    int rc;

    if (n < 2 || k >= L->nm || L->m[k].tid != tid)
        return L->emit(L->ctx, pid, tid, start, end, spans, n);
    /* a part: [a, b) with b the next mark's time (a wait's call and return both count) */
    while (a < end) {
        int64_t b = end;
        size_t who;
        while (k < L->nm && L->m[k].tid == tid && L->m[k].ts <= a)
            k++;
        if (k < L->nm && L->m[k].tid == tid) {
            int64_t next = L->m[k].wait && L->m[k].from > a ? L->m[k].from : L->m[k].ts;
            if (next < b)
                b = next;
        }
        who = owner(L, k, tid, a, spans, n);
        if (who != run_who) {
            if ((rc = emit_run(L, pid, tid, run_from, a, run_who, spans, n)) < 0)
                return rc;
            run_from = a;
            run_who = who;
        }
        a = b;
    }
    return emit_run(L, pid, tid, run_from, end, run_who, spans, n);
}

int sockjoin_split_loops(const struct sj_claim *cl, size_t n, const struct sj_event *ev,
                         const size_t *ev_span, size_t ne, sj_piece_fn emit, sj_piece_fn loop_emit,
                         void *ctx)
{
    struct loops L = {.emit = emit, .loop_emit = loop_emit, .ctx = ctx};
    size_t waits = 0;
    int rc;

    for (size_t j = 0; j < ne; j++)
        waits += ev[j].wait;
    if (waits == 0) /* nothing to go by: the plain split */
        return sockjoin_split(cl, n, emit, ctx);
    if ((L.m = malloc(ne * sizeof(*L.m))) == NULL)
        return SF_E_NOMEM;
    for (size_t j = 0; j < ne; j++) {
        if (ev[j].wait)
            L.m[L.nm++] = (struct mark){ev[j].tid, ev[j].ts_ns,
                                        ev[j].from_ns < ev[j].ts_ns ? ev[j].from_ns : ev[j].ts_ns,
                                        SJ_NOSPAN, 1};
        else if (ev[j].len)
            L.m[L.nm++] = (struct mark){ev[j].tid, ev[j].ts_ns, ev[j].ts_ns, ev_span[j], 0};
    }
    qsort(L.m, L.nm, sizeof(*L.m), cmp_mark);
    rc = sockjoin_split(cl, n, loop_piece, &L);
    free(L.m);
    return rc;
}

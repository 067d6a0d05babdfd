/* report_explore.c - the data behind the page's explorer (report_explore.js): every
 * request and every CPU sample attributed to one, so that the page folds any
 * selection itself, offline, with no server.
 *
 * The samples are those `spanfold stacks` folds (perf-fold's attribution query,
 * spans_attrib_cte), so a selection's flame graph in the page is the fold `spanfold
 * stacks --during A..B` prints for the same range.  One JSON document (format 1):
 *
 *   v, unit           1; what a weight counts ("ns": cpu-clock periods)
 *   base_ms           CLOCK_REALTIME ms that every "start" counts from (a whole ms, so
 *                     a range snapped to ms compares exactly)
 *   eps[g]            endpoint names, in the report's group order
 *   frames[k]         every frame name once
 *   nodes[2(i-1)], nodes[2(i-1)+1]
 *                     node i >= 1 of the stack trie: its parent (0: the root) and
 *                     frame; node i is the stack "frames of its path joined by ';'",
 *                     stacks.frames exactly
 *   span.{id, ep, start, dur, req, srv, resp, hs}
 *                     the spans in start order: id, endpoint index, start (ns after
 *                     base_ms), duration and phases in us (null: unknown); hs, the TCP
 *                     and TLS handshakes it waited for before its first byte (the first
 *                     request on a connection it opened; null for the others)
 *   at[s] .. at[s+1]  span s's samples in the arrays node, w (period), dt (us after
 *                     the span's start, null where the sample's clock has no fit),
 *                     in time order
 *   off.{at, node, w, dt}
 *                     the same of the off-CPU intervals attributed to the spans (what
 *                     `spanfold stacks --offcpu` folds): w their length in ns, dt when
 *                     the thread left its CPU
 *   marks.{span, dt, kind, text}
 *                     the span markers (span_events of the span's id), same clock
 *   kept.{spans, of, fraction}
 *                     the spans carried, of how many: past --page-samples samples the
 *                     page carries a uniform sample of the requests (each kept when a
 *                     hash of its span id falls below the fraction that brings the
 *                     samples under the limit: sf_thin_kept), so that a page of a long incident
 *                     stays one that opens; the page says so wherever it shows a figure
 *
 * Every time is CLOCK_REALTIME through clock_fits, as the rest of the page.  The
 * document is deflated (zlib) and base64'ed into the page by report_html.c; the
 * page inflates it with the browser's DecompressionStream.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../perf-fold/perf_fold.h"
#include "ch_pull.h"
#include "ch_sets.h"
#include "report.h"
#include "sf_json.h"
#include "sf_map.h"
#include "sf_select.h"
#include "sf_thin.h"

#define EX_CLOCKS 8   /* clocks with a fit to realtime remembered */
#define EX_TEXT   160 /* bytes of a marker's text kept */

struct ex_fit {
    char clock[32];
    struct rp_fit fit;
};

struct ex_sample {
    uint32_t span, node; /* node: set once the kept spans are known (intern_nodes) */
    int64_t stack;       /* stacks.id */
    int64_t t;           /* CLOCK_REALTIME ns, INT64_MIN: unknown */
    int64_t weight;      /* the period; an off-CPU interval's length in ns */
};

/* The rows of one kind attributed to the spans: CPU samples, or off-CPU intervals. */
struct ex_rows {
    struct ex_sample *s;
    size_t n, cap;
};

struct ex_mark {
    uint32_t span;
    int64_t t;
    char kind[12];
    char *text;
};

struct ex {
    sqlite3 *h;
    struct ex_fit fit[EX_CLOCKS];
    int nfit;
    /* the trie: frame names interned, node i's parent and frame (node 0 the root) */
    char **frames;
    size_t nframes, cframes;
    struct sf_map frame_map; /* index + 1, by name */
    struct {
        uint32_t parent, frame;
    } * node;
    size_t nnodes, cnodes;
    struct sf_map edge_map;  /* node index, by (parent, frame) */
    struct sf_map stack_map; /* index + 1 into stack, by stacks.id */
    struct {
        int64_t id;    /* stacks.id */
        uint32_t node; /* its node */
    } * stack;
    size_t nstacks, cstacks;
    sqlite3_stmt *frames_st;
    struct ex_rows cpu, off;
    struct ex_mark *m;
    size_t nm, cm;
    const struct rp_span **by_id; /* the spans sorted by id */
    uint32_t *kept;               /* kept[i]: span i's index in the page, or UINT32_MAX */
    uint32_t *orig;               /* orig[k]: the span that is the page's span k */
    int64_t *hs;                  /* hs[i]: span i's handshakes in ns, or -1 */
    size_t nkept;
    double fraction; /* of the spans kept */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    void *np;
    size_t nc;

    if (need <= *cap)
        return 0;
    nc = *cap ? *cap * 2 : 1024;
    while (nc < need)
        nc *= 2;
    if ((np = realloc(*p, nc * size)) == NULL)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

/* A time of clock `clock` as CLOCK_REALTIME (clock_fits' relation, each clock's read
 * once), or INT64_MIN where none relates it. */
static int64_t to_real(struct ex *x, const char *clock, int64_t t)
{
    struct ex_fit *f = NULL;

    if (clock == NULL)
        return INT64_MIN;
    for (int i = 0; i < x->nfit && f == NULL; i++)
        if (strcmp(x->fit[i].clock, clock) == 0)
            f = &x->fit[i];
    if (f == NULL && x->nfit < EX_CLOCKS) {
        f = &x->fit[x->nfit++];
        snprintf(f->clock, sizeof(f->clock), "%s", clock);
        if (rp_fit_read(x->h, clock, &f->fit) < 0)
            f->fit.have = 0;
    }
    return f && f->fit.have ? rp_fit_apply(&f->fit, t) : INT64_MIN;
}

/* The index of frame name s[0..n), interned. */
static long frame_of(struct ex *x, const char *s, size_t n)
{
    uint64_t h = sf_hash(s, n);
    struct sf_map_slot *sl;

    if (sf_map_reserve(&x->frame_map, 1) < 0)
        return -1;
    SF_MAP_RUN(&x->frame_map, h, sl)
    {
        const char *f = x->frames[(uintptr_t)sl->val - 1];
        if (sl->hash == h && strlen(f) == n && memcmp(f, s, n) == 0)
            return (long)((uintptr_t)sl->val - 1);
    }
    if (grow((void **)&x->frames, &x->cframes, x->nframes + 1, sizeof(*x->frames)) < 0 ||
        (x->frames[x->nframes] = strndup(s, n)) == NULL)
        return -1;
    sf_map_fill(&x->frame_map, sl, h, (void *)(uintptr_t)(x->nframes + 1));
    return (long)x->nframes++;
}

/* The child of node p for frame k, made when new. */
static long child_of(struct ex *x, uint32_t p, uint32_t k)
{
    uint64_t key = (uint64_t)p << 32 | k, h = sf_hash_u64(key);
    struct sf_map_slot *sl;

    if (sf_map_reserve(&x->edge_map, 1) < 0)
        return -1;
    SF_MAP_RUN(&x->edge_map, h, sl)
    {
        size_t i = (uintptr_t)sl->val;
        if (sl->hash == h && x->node[i].parent == p && x->node[i].frame == k)
            return (long)i;
    }
    if (grow((void **)&x->node, &x->cnodes, x->nnodes + 1, sizeof(*x->node)) < 0)
        return -1;
    x->node[x->nnodes].parent = p;
    x->node[x->nnodes].frame = k;
    sf_map_fill(&x->edge_map, sl, h, (void *)(uintptr_t)x->nnodes);
    return (long)x->nnodes++;
}

/* The trie node of stacks row id (its frames inserted the first time). */
static long node_of(struct ex *x, int64_t id)
{
    uint64_t h = sf_hash_u64((uint64_t)id);
    struct sf_map_slot *sl;
    const char *fr;
    size_t len, i = 0;
    long node = 0;

    if (sf_map_reserve(&x->stack_map, 1) < 0)
        return -1;
    SF_MAP_RUN(&x->stack_map, h, sl)
    {
        size_t k = (uintptr_t)sl->val - 1;
        if (sl->hash == h && x->stack[k].id == id)
            return x->stack[k].node;
    }
    sqlite3_reset(x->frames_st);
    sqlite3_bind_int64(x->frames_st, 1, id);
    if (sqlite3_step(x->frames_st) != SQLITE_ROW)
        return 0; /* a sample whose stack row is gone: the root, weighed, unnamed */
    fr = (const char *)sqlite3_column_text(x->frames_st, 0);
    len = (size_t)sqlite3_column_bytes(x->frames_st, 0);
    while (fr && i <= len) {
        const char *semi = memchr(fr + i, ';', len - i);
        size_t n = semi ? (size_t)(semi - (fr + i)) : len - i;
        long k = frame_of(x, fr + i, n);
        if (k < 0 || (node = child_of(x, (uint32_t)node, (uint32_t)k)) < 0)
            return -1;
        i += n + 1;
    }
    if (grow((void **)&x->stack, &x->cstacks, x->nstacks + 1, sizeof(*x->stack)) < 0)
        return -1;
    x->stack[x->nstacks].id = id;
    x->stack[x->nstacks].node = (uint32_t)node;
    sf_map_fill(&x->stack_map, sl, h, (void *)(uintptr_t)(++x->nstacks));
    return node;
}

/* The index in c->spans of the span with id, or -1 (the first of equal ids). */
static long span_of(const struct ex *x, const struct rp_ctx *c, const char *id)
{
    const struct rp_span *sp = rp_span_find(x->by_id, c->nspans, id);
    return sp ? sp - c->spans : -1;
}

/* The rows of table (samples or offcpu) attributed to a span, through cte (the
 * attribution query of those rows), into r. */
static int read_rows(struct ex *x, const struct rp_ctx *c, const char *cte, const char *table,
                     struct ex_rows *r)
{
    struct sf_buf sql;
    sqlite3_stmt *st;
    int rc = -1, step;

    sf_buf_init(&sql, 1 << 16);
    if (sf_buf_printf(&sql,
                      "%s SELECT b.span_id, s.ts_ns, so.clock, b.stack_id, b.period FROM b "
                      "JOIN %s s ON s.id = b.row_id JOIN sources so ON so.id = s.source_id "
                      "WHERE b.span_id IS NOT NULL",
                      cte, table) < 0 ||
        sqlite3_prepare_v2(x->h, (const char *)sql.data, -1, &st, NULL) != SQLITE_OK) {
        sf_buf_free(&sql);
        return -1;
    }
    sf_buf_free(&sql);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long sp = span_of(x, c, (const char *)sqlite3_column_text(st, 0));
        struct ex_sample *e;
        if (sp < 0)
            continue;
        if (grow((void **)&r->s, &r->cap, r->n + 1, sizeof(*r->s)) < 0)
            goto out;
        e = &r->s[r->n++];
        e->span = (uint32_t)sp;
        e->stack = sqlite3_column_int64(st, 3);
        e->t =
            sqlite3_column_type(st, 1) == SQLITE_NULL
                ? INT64_MIN
                : to_real(x, (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 1));
        e->weight = sqlite3_column_int64(st, 4);
    }
    rc = step == SQLITE_DONE ? 0 : -1;
out:
    sqlite3_finalize(st);
    return rc;
}

static int read_marks(struct ex *x, const struct rp_ctx *c)
{
    sqlite3_stmt *st;
    int step;

    if (sqlite3_prepare_v2(
            x->h,
            "SELECT e.span_id, e.ts_ns, so.clock, e.kind, e.message FROM span_events "
            "e JOIN sources so ON so.id = e.source_id WHERE e.span_id IS NOT NULL "
            "AND e.kind <> 'raw'",
            -1, &st, NULL) != SQLITE_OK)
        return 0; /* a database pulled from ClickHouse has no markers: none shown */
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long sp = span_of(x, c, (const char *)sqlite3_column_text(st, 0));
        const char *text = (const char *)sqlite3_column_text(st, 4);
        struct ex_mark *m;
        if (sp < 0)
            continue;
        if (grow((void **)&x->m, &x->cm, x->nm + 1, sizeof(*x->m)) < 0) {
            sqlite3_finalize(st);
            return -1;
        }
        m = &x->m[x->nm++];
        m->span = (uint32_t)sp;
        m->t = to_real(x, (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 1));
        snprintf(m->kind, sizeof(m->kind), "%s",
                 sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
        m->text = text ? strndup(text, EX_TEXT) : NULL;
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? 0 : -1;
}

/* A span (its id cut to 16 bytes, as the report keeps ids) is among the explorer's
 * uniform sample of share f when sf_thin_kept(id, f) (sf_thin.h: the share of n samples
 * in max is sf_thin_share); KEPT_SQL is the same test on the cluster. */
#define KEPT_SQL                                                                                   \
    "span_id IS NOT NULL AND " SF_THIN_HASH_CH("substring(assumeNotNull(span_id), 1, 16)") " < "   \
                                                                                           "%llu"

/* A uniform sample of the spans whose samples fit in max (all of them when they do;
 * the cluster's fraction where the file holds only the kept spans' samples): span i is
 * kept_in the fraction; the samples and markers of the others are dropped, the rest
 * renumbered. */
static int sample_spans(struct ex *x, const struct rp_ctx *c, int64_t max)
{
    size_t j = 0, n = 0;

    for (size_t i = 0; i < x->cpu.n; i++) /* the samples of the requests analysed */
        n += (size_t)c->spans[x->cpu.s[i].span].kept;
    x->fraction = c->explore_fixed ? c->explore_fraction : sf_thin_share(n, max);
    if ((x->kept = malloc((c->nspans ? c->nspans : 1) * sizeof(*x->kept))) == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        x->kept[i] = c->spans[i].kept && sf_thin_kept(c->spans[i].id, x->fraction)
                         ? (uint32_t)x->nkept++
                         : UINT32_MAX;
    for (int k = 0; k < 2; k++) {
        struct ex_rows *r = k ? &x->off : &x->cpu;
        j = 0;
        for (size_t i = 0; i < r->n; i++)
            if (x->kept[r->s[i].span] != UINT32_MAX) {
                r->s[j] = r->s[i];
                r->s[j++].span = x->kept[r->s[i].span];
            }
        r->n = j;
    }
    if ((x->orig = malloc((x->nkept ? x->nkept : 1) * sizeof(*x->orig))) == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        if (x->kept[i] != UINT32_MAX)
            x->orig[x->kept[i]] = (uint32_t)i;
    j = 0;
    for (size_t i = 0; i < x->nm; i++) {
        if (x->kept[x->m[i].span] == UINT32_MAX) {
            free(x->m[i].text);
            continue;
        }
        x->m[j] = x->m[i];
        x->m[j++].span = x->kept[x->m[i].span];
    }
    x->nm = j;
    return 0;
}

/* hs[i] for every span: the handshakes of its connection (pcap2spans' connection_events,
 * "ns=N") where span i is the connection's first kept request (the spans are in start order),
 * else -1.  The query gives the connections in id order, so each span finds its own by
 * a binary search; a connection's sum is taken by its first span. */
static int read_handshakes(struct ex *x, const struct rp_ctx *c)
{
    struct hs {
        int64_t conn, ns;
    } *v = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st;

    if ((x->hs = malloc((c->nspans ? c->nspans : 1) * sizeof(*x->hs))) == NULL)
        return -1;
    for (size_t i = 0; i < c->nspans; i++)
        x->hs[i] = -1;
    if (sqlite3_prepare_v2(x->h,
                           "SELECT connection_id, sum(CAST(substr(detail, instr(detail, '=') + 1) "
                           "AS INTEGER)) FROM connection_events WHERE kind = 'tcp_handshake_done' "
                           "OR kind = 'tls_handshake_done' GROUP BY connection_id "
                           "ORDER BY connection_id",
                           -1, &st, NULL) != SQLITE_OK)
        return 0; /* a database pulled from ClickHouse has no connection events */
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
            sqlite3_finalize(st);
            free(v);
            return -1;
        }
        v[n++] = (struct hs){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < c->nspans; i++) {
        size_t lo = 0, hi = n;
        if (!c->spans[i].kept)
            continue; /* not analysed: the first kept request takes its connection's */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].conn < c->spans[i].conn)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (c->spans[i].conn && lo < n && v[lo].conn == c->spans[i].conn && v[lo].ns >= 0) {
            x->hs[i] = v[lo].ns;
            v[lo].ns = -1; /* its later requests waited for none */
        }
    }
    free(v);
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct ex_sample *p = a, *q = b;
    if (p->span != q->span)
        return p->span < q->span ? -1 : 1;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return (p->node > q->node) - (p->node < q->node);
}

/* A time in ms as integer us (exact, and a third of %.17g's size), or null. */
static void us_or_null(struct sf_jw *w, double ms)
{
    if (isfinite(ms))
        sf_jw_int(w, NULL, llround(ms * 1e3));
    else
        sf_jw_null(w, NULL);
}

/* A CLOCK_REALTIME time as us after a span's start, or null. */
static void dt_of(struct sf_jw *w, int64_t t, int64_t start)
{
    if (t == INT64_MIN)
        sf_jw_null(w, NULL);
    else
        sf_jw_int(w, NULL, llround((double)(t - start) / 1e3));
}

/* Rows r as the members at, node, w, dt of the object open in w. */
static void write_rows(struct sf_jw *w, const struct ex *x, const struct rp_ctx *c,
                       const struct ex_rows *r)
{
    size_t k = 0;

    sf_jw_arr(w, "at");
    sf_jw_int(w, NULL, 0);
    for (size_t i = 0; i < x->nkept; i++) {
        while (k < r->n && r->s[k].span == i)
            k++;
        sf_jw_int(w, NULL, (int64_t)k);
    }
    sf_jw_end(w);
    sf_jw_arr(w, "node");
    for (size_t i = 0; i < r->n; i++)
        sf_jw_int(w, NULL, r->s[i].node);
    sf_jw_end(w);
    sf_jw_arr(w, "w");
    for (size_t i = 0; i < r->n; i++)
        sf_jw_int(w, NULL, r->s[i].weight);
    sf_jw_end(w);
    sf_jw_arr(w, "dt");
    for (size_t i = 0; i < r->n; i++)
        dt_of(w, r->s[i].t, rp_realtime(c, c->spans[x->orig[r->s[i].span]].start_ns));
    sf_jw_end(w);
}

static void write_json(FILE *f, const struct ex *x, const struct rp_ctx *c, int64_t base_ms)
{
    static const char *const phase[] = {"dur", "req", "srv", "resp"};
    int64_t base = base_ms * 1000000;
    struct sf_jw w;

    sf_jw_init(&w, f);
    sf_jw_obj(&w, NULL);
    sf_jw_int(&w, "v", 1);
    sf_jw_str(&w, "unit", c->count_unit);
    sf_jw_int(&w, "base_ms", base_ms);
    sf_jw_obj(&w, "kept");
    sf_jw_int(&w, "spans", (int64_t)x->nkept);
    sf_jw_int(&w, "of", (int64_t)c->nkept);
    sf_jw_num(&w, "fraction", x->fraction);
    sf_jw_end(&w);
    sf_jw_arr(&w, "eps");
    for (size_t g = 0; g < c->sw.ng; g++)
        sf_jw_str(&w, NULL, c->sw.g[g].name);
    sf_jw_end(&w);
    sf_jw_arr(&w, "frames");
    for (size_t i = 0; i < x->nframes; i++)
        sf_jw_str(&w, NULL, x->frames[i]);
    sf_jw_end(&w);
    sf_jw_arr(&w, "nodes");
    for (size_t i = 1; i < x->nnodes; i++) {
        sf_jw_int(&w, NULL, x->node[i].parent);
        sf_jw_int(&w, NULL, x->node[i].frame);
    }
    sf_jw_end(&w);
    sf_jw_obj(&w, "span");
    sf_jw_arr(&w, "id");
    for (size_t i = 0; i < x->nkept; i++)
        sf_jw_str(&w, NULL, c->spans[x->orig[i]].id);
    sf_jw_end(&w);
    sf_jw_arr(&w, "ep");
    for (size_t i = 0; i < x->nkept; i++)
        sf_jw_int(&w, NULL, (int64_t)c->spans[x->orig[i]].group);
    sf_jw_end(&w);
    sf_jw_arr(&w, "start");
    for (size_t i = 0; i < x->nkept; i++)
        sf_jw_int(&w, NULL, rp_realtime(c, c->spans[x->orig[i]].start_ns) - base);
    sf_jw_end(&w);
    sf_jw_arr(&w, "hs");
    for (size_t i = 0; i < x->nkept; i++)
        if (x->hs[x->orig[i]] >= 0)
            sf_jw_int(&w, NULL, (x->hs[x->orig[i]] + 500) / 1000);
        else
            sf_jw_null(&w, NULL);
    sf_jw_end(&w);
    for (int p = 0; p < 4; p++) {
        sf_jw_arr(&w, phase[p]);
        for (size_t i = 0; i < x->nkept; i++) {
            const struct rp_span *sp = &c->spans[x->orig[i]];
            double ph[3];
            rp_phases(sp, &ph[0], &ph[1], &ph[2]);
            us_or_null(&w, p == 0 ? sp->lat_ms : ph[p - 1]);
        }
        sf_jw_end(&w);
    }
    sf_jw_end(&w);
    write_rows(&w, x, c, &x->cpu);
    sf_jw_obj(&w, "off");
    write_rows(&w, x, c, &x->off);
    sf_jw_end(&w);
    sf_jw_obj(&w, "marks");
    sf_jw_arr(&w, "span");
    for (size_t i = 0; i < x->nm; i++)
        sf_jw_int(&w, NULL, x->m[i].span);
    sf_jw_end(&w);
    sf_jw_arr(&w, "dt");
    for (size_t i = 0; i < x->nm; i++)
        dt_of(&w, x->m[i].t, rp_realtime(c, c->spans[x->orig[x->m[i].span]].start_ns));
    sf_jw_end(&w);
    sf_jw_arr(&w, "kind");
    for (size_t i = 0; i < x->nm; i++)
        sf_jw_str(&w, NULL, x->m[i].kind);
    sf_jw_end(&w);
    sf_jw_arr(&w, "text");
    for (size_t i = 0; i < x->nm; i++)
        sf_jw_str(&w, NULL, x->m[i].text);
    sf_jw_end(&w);
    sf_jw_end(&w);
    sf_jw_end(&w);
    sf_jw_finish(&w);
}

static void ex_free(struct ex *x)
{
    for (size_t i = 0; i < x->nframes; i++)
        free(x->frames[i]);
    for (size_t i = 0; i < x->nm; i++)
        free(x->m[i].text);
    free(x->frames);
    free(x->node);
    free(x->stack);
    free(x->cpu.s);
    free(x->off.s);
    free(x->m);
    free(x->by_id);
    free(x->kept);
    free(x->orig);
    free(x->hs);
    sf_map_free(&x->frame_map);
    sf_map_free(&x->edge_map);
    sf_map_free(&x->stack_map);
    if (x->frames_st)
        sqlite3_finalize(x->frames_st);
}

/* The stack trie of the kept rows, in their order (CPU, then off CPU): the page carries
 * the frames of what it shows, and the same ones whichever rows were read. */
static int intern_nodes(struct ex *x)
{
    for (int k = 0; k < 2; k++) {
        struct ex_rows *r = k ? &x->off : &x->cpu;
        for (size_t i = 0; i < r->n; i++) {
            long node = node_of(x, r->s[i].stack);
            if (node < 0)
                return -1;
            r->s[i].node = (uint32_t)node;
        }
    }
    return 0;
}

/* Where the samples stay on the cluster: the fraction from its count of the samples the
 * explorer would carry, and the kept spans' samples (and their stacks) brought into the
 * file, so that the page carries what it would from a file that has them all. */
static int bring_samples(struct rp_ctx *c)
{
    struct sf_buf where;
    struct sf_err err;
    uint64_t n = 0;
    double f;
    int rc;

    sf_err_clear(&err);
    if ((rc = ch_sets_explore_count(c->chq, &n, NULL, &err)) != 0)
        goto out;
    c->explore_fraction = sf_thin_share(n, c->o.page_samples);
    c->explore_fixed = 1;
    sf_buf_init(&where, 4096);
    /* sf_thin_kept, asked of the cluster: the same hash; past --spans-max only the requests
       analysed are shown, and their key is this one (a span id's), so the smaller share */
    f = c->explore_fraction < c->thin ? c->explore_fraction : c->thin;
    if (f >= 1.0)
        rc = sf_buf_printf(&where, "span_id IS NOT NULL");
    else
        rc = sf_buf_printf(&where, KEPT_SQL, (unsigned long long)sf_thin_bound(f));
    if (rc)
        rc = sf_err_set(&err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    else
        rc = ch_pull_samples(c->ch, c->o.cho.cluster, (const char *)where.data, c->o.db, &err);
    sf_buf_free(&where);
out:
    if (rc != 0)
        fprintf(stderr, "spanfold report: %s: the explorer's samples from the cluster: %s\n",
                c->o.name, err.msg);
    return rc ? -1 : 0;
}

int rp_explore(struct rp_ctx *c, sqlite3 *h)
{
    struct ex x;
    char *text = NULL;
    size_t len = 0;
    FILE *m;
    int rc = -1;

    memset(&x, 0, sizeof(x));
    x.h = h;
    sf_buf_init(&c->explore, (size_t)1 << 31);
    if (c->chq && bring_samples(c) < 0)
        return -1;
    if ((x.by_id = rp_spans_by_id(c)) == NULL ||
        grow((void **)&x.node, &x.cnodes, 1, sizeof(*x.node)) < 0)
        goto out;
    x.nnodes = 1; /* the root: no parent, no frame */
    x.node[0].parent = x.node[0].frame = 0;
    if (sqlite3_prepare_v2(h, "SELECT frames FROM stacks WHERE id = ?1", -1, &x.frames_st, NULL) !=
            SQLITE_OK ||
        read_rows(&x, c, spans_attrib_cte, "samples", &x.cpu) < 0 ||
        read_rows(&x, c, spans_attrib_offcpu_cte, "offcpu", &x.off) < 0 || read_marks(&x, c) < 0 ||
        read_handshakes(&x, c) < 0 || sample_spans(&x, c, c->o.page_samples) < 0 ||
        intern_nodes(&x) < 0)
        goto out;
    qsort(x.cpu.s, x.cpu.n, sizeof(*x.cpu.s), cmp_sample);
    qsort(x.off.s, x.off.n, sizeof(*x.off.s), cmp_sample);
    if ((m = open_memstream(&text, &len)) == NULL)
        goto out;
    write_json(m, &x, c, c->nspans ? rp_win_time(c, 0) / 1000000 : 0);
    rc = fclose(m) != 0 ? -1 : sf_buf_append(&c->explore, text, len);
    c->explore_samples = x.cpu.n;
    c->explore_spans = x.nkept;
out:
    free(text);
    ex_free(&x);
    return rc < 0 ? -1 : 0;
}

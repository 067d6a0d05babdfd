/* sf_explain.c - why the kept share drifted.  See sf_explain.h for the measure.
 *
 *   read_trials()   one trial per trace: side, kept, who decided, the attribute sources
 *   read_headers()  the kept request headers of those trials (span_headers)
 *   tally()         per attribute and value: trials and kept trials per side
 *   rank()          explained(v), z, mix and rate parts; the significant ones, best first
 */
#include "sf_explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_db.h"
#include "sf_db_int.h"
#include "sf_json.h"
#include "sf_spans.h"
#include "sf_thin.h"

struct trial {
    int64_t id, ts;
    int side, kept;
    char *src; /* decision, authority, client, baggage, tracestate, then the sampling
                  parameters (rpc_params): NUL-separated */
    char *hdr; /* kept headers "name\0value\0"... */
    size_t hlen, hcap;
};

struct akey {
    char name[SF_ATTR_KEY_MAX];
    int nv;
    char val[SF_EXPLAIN_MAX_VALUES][SF_ATTR_VALUE_MAX];
    /* [value; SF_EXPLAIN_MAX_VALUES is "(other)"][side] */
    struct sf_explain_cell c[SF_EXPLAIN_MAX_VALUES + 1][2];
};

struct tally {
    struct akey *k;
    int nk;
    uint64_t seen; /* keys met by the current trial (bit per key) */
    const struct trial *t;
    struct sf_explain_cell tot[2];
    size_t over_values, over_keys;
};

static double ratio(struct sf_explain_cell c)
{
    return c.n ? (double)c.k / (double)c.n : NAN;
}

static struct sf_explain_cell minus(struct sf_explain_cell a, struct sf_explain_cell b)
{
    struct sf_explain_cell r = {a.n - b.n, a.k - b.k};
    return r;
}

/* Binomial variance of a kept share, smoothed so that 0 of n is not certain. */
static double var_of(struct sf_explain_cell c)
{
    double p = ((double)c.k + 0.5) / ((double)c.n + 1);
    return c.n ? p * (1 - p) / (double)c.n : 0;
}

/* The value's share of the trials moved by at least SF_EXPLAIN_JUMP between the sides,
 * significantly (z >= SF_EXPLAIN_Z on the two shares). */
static int mix_jump(struct sf_explain_cell v0, struct sf_explain_cell v1, struct sf_explain_cell t0,
                    struct sf_explain_cell t1)
{
    double s0 = ((double)v0.n + 0.5) / ((double)t0.n + 1),
           s1 = ((double)v1.n + 0.5) / ((double)t1.n + 1);
    double se = sqrt(s0 * (1 - s0) / (double)t0.n + s1 * (1 - s1) / (double)t1.n);

    return fabs(s1 - s0) >= SF_EXPLAIN_JUMP && se > 0 && fabs(s1 - s0) / se >= SF_EXPLAIN_Z;
}

double sf_explain_part(struct sf_explain_cell v0, struct sf_explain_cell v1,
                       struct sf_explain_cell t0, struct sf_explain_cell t1, double *z)
{
    struct sf_explain_cell q0 = minus(t0, v0), q1 = minus(t1, v1);
    int known = v0.n >= SF_EXPLAIN_MIN_N; /* v's own rate before, else the rest's */
    double d, base, x, var, e;

    *z = 0;
    /* v was all of the before side: the baseline the change is measured from */
    if (t0.n == 0 || t1.n == 0 || v1.n == 0 || q0.n == 0)
        return 0;
    d = ratio(t0) - ratio(t1);
    if (d == 0)
        return 0;
    base = known ? ratio(v0) : ratio(q0);
    e = (double)v1.n / (double)t1.n * (base - ratio(v1)) / d;
    /* the contrast: v's change against the rest's, or against nothing when v took all
     * of the after side (then only a value new since can be named) */
    if (q1.n) {
        double za, va = var_of(v1) + var_of(q1);
        x = (base - ratio(v1)) - (ratio(q0) - ratio(q1));
        var = va + (known ? var_of(v0) + var_of(q0) : 0);
        /* and after the change, v's requests are kept apart from the others'; a value
         * whose share of traffic jumped at the change needs only SF_EXPLAIN_Z_MIX (a
         * uniform rate change does not move the mix) */
        za = va > 0 ? (ratio(q1) - ratio(v1)) / sqrt(va) * (d > 0 ? 1 : -1) : 0;
        *z = var > 0 ? x / sqrt(var) * (d > 0 ? 1 : -1) : 0;
        *z = za < *z ? za : *z;
        if (mix_jump(v0, v1, t0, t1))
            *z += SF_EXPLAIN_Z - SF_EXPLAIN_Z_MIX;
        return e < 0 ? 0 : e > 1 ? 1 : e;
    } else if (!known) {
        x = base - ratio(v1);
        var = var_of(v1) + var_of(q0);
    } else {
        return 0;
    }
    *z = var > 0 ? x / sqrt(var) * (d > 0 ? 1 : -1) : 0;
    return e < 0 ? 0 : e > 1 ? 1 : e;
}

void sf_explain_shapley(struct sf_explain_cell v0, struct sf_explain_cell v1,
                        struct sf_explain_cell t0, struct sf_explain_cell t1, double *mix,
                        double *rate)
{
    double s0 = t0.n ? (double)v0.n / (double)t0.n : 0, s1 = t1.n ? (double)v1.n / (double)t1.n : 0;
    double r0 = v0.n ? ratio(v0) : v1.n ? ratio(v1) : 0, r1 = v1.n ? ratio(v1) : r0;

    *mix = (s1 - s0) * (r0 + r1) / 2;
    *rate = (r1 - r0) * (s0 + s1) / 2;
}

/* ---- reading ---------------------------------------------------------------------- */

static void trials_free(struct trial *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].src);
        free(t[i].hdr);
    }
    free(t);
}

/* The sampling parameters a JSON-RPC request carried (pcap2spans/rpc.h), as attributes
 * named like their columns. */
static const char *const rpc_params[] = {"temperature", "top_p", "max_tokens", "model_hint"};
#define NSRC (5 + 4)

static char *join_src(const unsigned char *const s[NSRC])
{
    size_t len[NSRC], tot = 0;
    char *r, *p;

    for (int i = 0; i < NSRC; i++)
        tot += (len[i] = s[i] ? strlen((const char *)s[i]) : 0) + 1;
    if ((p = r = malloc(tot)) == NULL)
        return NULL;
    for (int i = 0; i < NSRC; i++) {
        memcpy(p, s[i] ? (const char *)s[i] : "", len[i]);
        p[len[i]] = 0;
        p += len[i] + 1;
    }
    return r;
}

static int db_fail(sqlite3 *h, struct sf_err *err, const char *what)
{
    return sf_err_set(err, SF_E_DB, UINT64_MAX, "%s: %s", what, sqlite3_errmsg(h));
}

/* sql with ?1, ?2 the request-start range [b0, a1) and ?3 the group, or NULL. */
static sqlite3_stmt *prepare_range(sqlite3 *h, const char *sql, int64_t b0, int64_t a1,
                                   const char *group)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, b0);
    sqlite3_bind_int64(st, 2, a1);
    sqlite3_bind_text(st, 3, group, -1, SQLITE_STATIC);
    return st;
}

/* One trial per trace (its first span of the group in [b0, a1)) whose decision is known,
 * of the spans kept at share thin (sf_thin.h: all at 1). */
static int read_trials(sqlite3 *h, const char *group_sql, const char *group, int64_t b0, int64_t a1,
                       double thin, struct trial **out, size_t *nout, struct sf_err *err)
{
    char sql[3072];
    sqlite3_stmt *st;
    struct trial *t = NULL;
    size_t n = 0, cap = 0;
    char last[33] = "";
    int r, rc = 0;

    snprintf(sql, sizeof(sql),
             "SELECT s.id, s.trace_id, s.req_start_ns, s.sampled, %s, s.ctx_format, "
             "s.authority, c.client_addr, "
             "(SELECT x.raw FROM contexts x WHERE x.span_row = s.id AND x.direction = "
             "'request' AND x.format = 'baggage' LIMIT 1), "
             "(SELECT x.tracestate FROM contexts x WHERE x.span_row = s.id AND x.direction = "
             "'request' AND x.tracestate IS NOT NULL LIMIT 1), "
             "CAST(s.temperature AS TEXT), CAST(s.top_p AS TEXT), CAST(s.max_tokens AS TEXT), "
             "s.model_hint, s.span_id "
             "FROM spans s LEFT JOIN connections c ON c.id = s.connection_id "
             "WHERE s.req_start_ns >= ?1 AND s.req_start_ns < ?2 AND s.trace_id IS NOT NULL "
             "AND (%s) = ?3 ORDER BY s.trace_id, s.req_start_ns, s.id",
             sf_spans_decision_sql(), group_sql);
    if ((st = prepare_range(h, sql, b0, a1, group)) == NULL)
        return db_fail(h, err, "explain: query spans");
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *trace = (const char *)sqlite3_column_text(st, 1);
        int64_t ts = sqlite3_column_int64(st, 2);
        int up = sqlite3_column_type(st, 3) != SQLITE_NULL; /* the request carried it */
        int dec = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
        char decision[48];
        const unsigned char *src[NSRC];
        if (trace == NULL ||
            !sf_thin_request(trace, (const char *)sqlite3_column_text(st, 14), ts, thin) ||
            strcmp(trace, last) == 0)
            continue; /* left out of the sample, or a later span of the same trace */
        snprintf(last, sizeof(last), "%s", trace);
        if (dec < 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct trial *g = realloc(t, nc * sizeof(*t));
            if (g == NULL) {
                rc = SF_E_NOMEM;
                break;
            }
            t = g;
            cap = nc;
        }
        snprintf(decision, sizeof(decision), "%s%.30s", up ? "upstream:" : "service",
                 up && sqlite3_column_type(st, 5) != SQLITE_NULL
                     ? (const char *)sqlite3_column_text(st, 5)
                     : "");
        if (up && sqlite3_column_type(st, 5) == SQLITE_NULL)
            decision[8] = 0; /* "upstream" */
        src[0] = (const unsigned char *)decision;
        for (int i = 1; i < NSRC; i++)
            src[i] = sqlite3_column_text(st, 5 + i);
        memset(&t[n], 0, sizeof(t[n]));
        t[n].id = sqlite3_column_int64(st, 0);
        t[n].ts = ts;
        t[n].kept = dec > 0;
        if ((t[n].src = join_src(src)) == NULL) {
            rc = SF_E_NOMEM;
            break;
        }
        n++;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = db_fail(h, err, "explain: reading spans");
    else if (rc)
        sf_err_set(err, rc, UINT64_MAX, "explain: out of memory");
    sqlite3_finalize(st);
    if (rc) {
        trials_free(t, n);
        return rc;
    }
    *out = t;
    *nout = n;
    return 0;
}

static int cmp_trial(const void *a, const void *b)
{
    const struct trial *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int add_header(struct trial *t, const char *name, const char *value)
{
    size_t nl = strlen(name) + 1, vl = strlen(value) + 1;

    if (t->hlen + nl + vl > 4096)
        return 0; /* pcap2spans keeps 1 KiB a request: a bigger list is not its */
    if (t->hlen + nl + vl > t->hcap) {
        size_t nc = t->hcap ? t->hcap * 2 : 256;
        char *g;
        while (nc < t->hlen + nl + vl)
            nc *= 2;
        if ((g = realloc(t->hdr, nc)) == NULL)
            return SF_E_NOMEM;
        t->hdr = g;
        t->hcap = nc;
    }
    memcpy(t->hdr + t->hlen, name, nl);
    memcpy(t->hdr + t->hlen + nl, value, vl);
    t->hlen += nl + vl;
    return 0;
}

static int read_headers(sqlite3 *h, const char *group_sql, const char *group, int64_t b0,
                        int64_t a1, struct trial *t, size_t n, struct sf_err *err)
{
    char sql[1536];
    sqlite3_stmt *st;
    int r, rc = 0;

    snprintf(sql, sizeof(sql),
             "SELECT h.span_row, h.name, h.value FROM span_headers h JOIN spans s ON s.id = "
             "h.span_row WHERE s.req_start_ns >= ?1 AND s.req_start_ns < ?2 AND (%s) = ?3 "
             "ORDER BY h.id",
             group_sql);
    if ((st = prepare_range(h, sql, b0, a1, group)) == NULL)
        return db_fail(h, err, "explain: query span_headers");
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        struct trial key = {.id = sqlite3_column_int64(st, 0)};
        struct trial *hit = bsearch(&key, t, n, sizeof(*t), cmp_trial);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *value = (const char *)sqlite3_column_text(st, 2);
        if (hit && name && value)
            rc = add_header(hit, name, value);
    }
    if (rc)
        sf_err_set(err, rc, UINT64_MAX, "explain: out of memory");
    else if (r != SQLITE_DONE)
        rc = db_fail(h, err, "explain: reading span_headers");
    sqlite3_finalize(st);
    return rc;
}

/* ---- tallying --------------------------------------------------------------------- */

static int on_attr(void *arg, const char *key, const char *value)
{
    struct tally *ta = arg;
    const struct trial *t = ta->t;
    struct akey *k = NULL;
    int ki, v;

    for (ki = 0; ki < ta->nk; ki++)
        if (strcmp(ta->k[ki].name, key) == 0) {
            k = &ta->k[ki];
            break;
        }
    if (k == NULL) {
        if (ta->nk == SF_EXPLAIN_MAX_KEYS) {
            ta->over_keys++;
            return 0;
        }
        k = &ta->k[ki = ta->nk++];
        snprintf(k->name, sizeof(k->name), "%s", key);
    }
    if (ta->seen >> ki & 1)
        return 0; /* the first of a repeated key */
    ta->seen |= UINT64_C(1) << ki;
    for (v = 0; v < k->nv; v++)
        if (strcmp(k->val[v], value) == 0)
            break;
    if (v == k->nv) {
        if (k->nv < SF_EXPLAIN_MAX_VALUES)
            snprintf(k->val[k->nv++], SF_ATTR_VALUE_MAX, "%s", value);
        else
            ta->over_values++;
    }
    k->c[v][t->side].n++;
    k->c[v][t->side].k += (uint64_t)t->kept;
    return 0;
}

/* Every attribute of trial t, in order (sf_attrs.h's names), to fn. */
static void each_attr(const struct trial *t, sf_attr_fn fn, void *arg)
{
    const char *src[NSRC], *p = t->src, *name;
    size_t pos = 0;

    for (int i = 0; i < NSRC; i++) {
        src[i] = p;
        p += strlen(p) + 1;
    }
    (void)fn(arg, "decision", src[0]);
    if (*src[1])
        (void)fn(arg, "authority", src[1]);
    if (*src[2])
        (void)fn(arg, "client", src[2]);
    (void)sf_attrs_baggage(src[3], fn, arg);
    (void)sf_attrs_tracestate(src[4], fn, arg);
    for (int i = 0; i < 4; i++)
        if (*src[5 + i])
            (void)fn(arg, rpc_params[i], src[5 + i]);
    while (pos < t->hlen) {
        name = t->hdr + pos;
        p = name + strlen(name) + 1;
        (void)sf_attrs_one("header.", name, strlen(name), p, strlen(p), fn, arg);
        pos = (size_t)(p - t->hdr) + strlen(p) + 1;
    }
}

static void tally_trial(struct tally *ta, const struct trial *t)
{
    ta->t = t;
    ta->seen = 0;
    ta->tot[t->side].n++;
    ta->tot[t->side].k += (uint64_t)t->kept;
    each_attr(t, on_attr, ta);
}

/* The first value of one attribute (struct match). */
struct match {
    const char *attribute;
    int found;
    char value[SF_ATTR_VALUE_MAX];
};

static int on_match(void *arg, const char *key, const char *value)
{
    struct match *m = arg;

    if (m->found || strcmp(key, m->attribute) != 0)
        return 0;
    m->found = 1;
    snprintf(m->value, sizeof(m->value), "%s", value);
    return 0;
}

/* ---- ranking ---------------------------------------------------------------------- */

/* The decision attribute says who decided, not why: another value that explains
 * nearly as much (within SF_EXPLAIN_WHO) is named before it. */
static double rank_key(const struct sf_explain_item *it)
{
    return it->explained - (strcmp(it->attribute, "decision") == 0 ? SF_EXPLAIN_WHO : 0);
}

static int cmp_item(const void *a, const void *b)
{
    const struct sf_explain_item *x = a, *y = b;
    double kx = rank_key(x), ky = rank_key(y);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (x->z != y->z)
        return x->z < y->z ? 1 : -1;
    return strcmp(x->attribute, y->attribute);
}

static void consider(struct sf_explain *ex, const char *attr, const char *value, int absent,
                     struct sf_explain_cell v0, struct sf_explain_cell v1,
                     struct sf_explain_cell t0, struct sf_explain_cell t1)
{
    struct sf_explain_item it;
    double z, e = sf_explain_part(v0, v1, t0, t1, &z);

    if (z < SF_EXPLAIN_Z || e <= 0 || (v0.n < SF_EXPLAIN_MIN_N && v1.n < SF_EXPLAIN_MIN_N))
        return;
    memset(&it, 0, sizeof(it));
    snprintf(it.attribute, sizeof(it.attribute), "%s", attr);
    snprintf(it.value, sizeof(it.value), "%s", value);
    it.absent = absent;
    it.before = v0;
    it.after = v1;
    it.share_before = (double)v0.n / (double)t0.n;
    it.share_after = (double)v1.n / (double)t1.n;
    it.kept_before = ratio(v0);
    it.kept_after = ratio(v1);
    it.explained = e;
    it.z = z;
    sf_explain_shapley(v0, v1, t0, t1, &it.mix, &it.rate);
    if (ex->n < SF_EXPLAIN_MAX_ITEMS) {
        ex->items[ex->n++] = it;
    } else if (cmp_item(&it, &ex->items[ex->n - 1]) < 0) {
        ex->items[ex->n - 1] = it;
    } else {
        return;
    }
    qsort(ex->items, ex->n, sizeof(ex->items[0]), cmp_item);
}

static void rank(struct sf_explain *ex, const struct tally *ta)
{
    struct sf_explain_cell t0 = ta->tot[0], t1 = ta->tot[1];

    for (int ki = 0; ki < ta->nk; ki++) {
        const struct akey *k = &ta->k[ki];
        struct sf_explain_cell p0 = {0, 0}, p1 = {0, 0};
        for (int v = 0; v <= k->nv && v <= SF_EXPLAIN_MAX_VALUES; v++) {
            const struct sf_explain_cell *c = k->c[v];
            p0.n += c[0].n, p0.k += c[0].k, p1.n += c[1].n, p1.k += c[1].k;
            if (v < k->nv)
                consider(ex, k->name, k->val[v], 0, c[0], c[1], t0, t1);
            else if (c[0].n + c[1].n)
                consider(ex, k->name, "(other)", 0, c[0], c[1], t0, t1);
        }
        if (p0.n < t0.n || p1.n < t1.n)
            consider(ex, k->name, "", 1, minus(t0, p0), minus(t1, p1), t0, t1);
    }
}

/* Binomial log-likelihood of k kept of n at their own rate. */
static double loglik(double k, double n)
{
    return (k > 0 ? k * log(k / n) : 0) + (n - k > 0 ? (n - k) * log((n - k) / n) : 0);
}

static int cmp_ts(const void *a, const void *b)
{
    const struct trial *x = a, *y = b;
    int c = (x->ts > y->ts) - (x->ts < y->ts);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* The trials in time order, cut where one change of the kept share is likeliest
 * (at least SF_EXPLAIN_MIN_N trials either side; the hint when there are too few):
 * side 0 before the cut, 1 from it. */
static void split(struct trial *t, size_t n, int64_t hint)
{
    size_t best = 0, kept = 0, acc = 0;
    double bl = -INFINITY;

    qsort(t, n, sizeof(*t), cmp_ts);
    for (size_t i = 0; i < n; i++)
        kept += (size_t)t[i].kept;
    for (size_t i = 0; i < n; i++) {
        acc += (size_t)t[i].kept; /* kept among t[0..i] */
        if (i + 1 >= SF_EXPLAIN_MIN_N && n - i - 1 >= SF_EXPLAIN_MIN_N) {
            double l = loglik((double)acc, (double)(i + 1)) +
                       loglik((double)(kept - acc), (double)(n - i - 1));
            if (l > bl) {
                bl = l;
                best = i + 1;
            }
        }
    }
    if (bl == -INFINITY)
        for (best = 0; best < n && t[best].ts < hint; best++)
            ;
    for (size_t i = 0; i < n; i++)
        t[i].side = i >= best;
}

/* The trials of group in [b0, a1) with their attribute sources and kept headers,
 * sorted by span id; *has_headers 0 when the database predates span_headers. */
static int load(struct sf_db *db, const char *group_sql, const char *group, int64_t b0, int64_t a1,
                double thin, struct trial **t, size_t *n, int *has_headers, struct sf_err *err)
{
    int64_t h = 0;
    int rc = sf_dbi_query_int(db,
                              "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name "
                              "= 'span_headers'",
                              &h, err);

    *t = NULL;
    *n = 0;
    *has_headers = h > 0;
    if (rc == 0)
        rc = read_trials(sf_db_handle(db), group_sql, group, b0, a1, thin, t, n, err);
    return rc;
}

static int open_db(struct sf_db **db, const char *path, int complete_only, struct sf_err *err)
{
    int rc = sf_db_open_mode(db, path, SF_DB_READ, err);

    if (rc == 0 && complete_only && (rc = sf_db_complete_only(*db, err)) < 0) {
        sf_db_close(*db, NULL);
        *db = NULL;
    }
    return rc;
}

int sf_explain_drift(const char *path, int complete_only, const char *group_sql, const char *group,
                     int64_t b0, int64_t hint, int64_t a1, double thin, struct sf_explain *ex,
                     struct sf_err *err)
{
    struct sf_db *db = NULL;
    struct trial *t = NULL;
    struct tally ta;
    size_t n = 0;
    int rc, has_headers = 0;

    memset(ex, 0, sizeof(*ex));
    memset(&ta, 0, sizeof(ta));
    if ((rc = open_db(&db, path, complete_only, err)) < 0)
        return rc;
    rc = load(db, group_sql, group, b0, a1, thin, &t, &n, &has_headers, err);
    if (rc == 0) {
        split(t, n, hint);
        qsort(t, n, sizeof(*t), cmp_trial);
        if (has_headers)
            rc = read_headers(sf_db_handle(db), group_sql, group, b0, a1, t, n, err);
    }
    if (rc == 0 && (ta.k = calloc(SF_EXPLAIN_MAX_KEYS, sizeof(*ta.k))) == NULL)
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "explain: out of memory");
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            tally_trial(&ta, &t[i]);
        ex->before = ta.tot[0];
        ex->after = ta.tot[1];
        if (ex->before.n && ex->after.n)
            rank(ex, &ta);
        ex->values_over_cap = ta.over_values;
        ex->keys_over_cap = ta.over_keys;
    }
    free(ta.k);
    trials_free(t, n);
    sf_db_close(db, NULL);
    return rc;
}

int sf_explain_share(const char *path, int complete_only, const char *group_sql, const char *group,
                     const char *attribute, const char *value, uint64_t *n, uint64_t *k,
                     struct sf_err *err)
{
    struct sf_db *db = NULL;
    struct trial *t = NULL;
    size_t nt = 0;
    int rc, has_headers = 0;

    *n = *k = 0;
    if (group == NULL) {
        group_sql = "'all'";
        group = "all";
    }
    if ((rc = open_db(&db, path, complete_only, err)) < 0)
        return rc;
    rc = load(db, group_sql, group, INT64_MIN, INT64_MAX, 1.0, &t, &nt, &has_headers, err);
    if (rc == 0) {
        qsort(t, nt, sizeof(*t), cmp_trial);
        if (has_headers)
            rc = read_headers(sf_db_handle(db), group_sql, group, INT64_MIN, INT64_MAX, t, nt, err);
    }
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        struct match m = {attribute, 0, ""};
        each_attr(&t[i], on_match, &m);
        if (value ? m.found && strcmp(m.value, value) == 0 : !m.found) {
            (*n)++;
            *k += (uint64_t)t[i].kept;
        }
    }
    trials_free(t, nt);
    sf_db_close(db, NULL);
    return rc;
}

/* ---- words ------------------------------------------------------------------------ */

/* "with ATTR = VALUE" or "without ATTR". */
static void what_text(const struct sf_explain_item *it, char *buf, size_t n)
{
    if (it->absent)
        snprintf(buf, n, "without %s", it->attribute);
    else
        snprintf(buf, n, "with %s = %s", it->attribute, it->value);
}

const struct sf_explain_item *sf_explain_decided(const struct sf_explain *ex)
{
    for (size_t i = 0; i < ex->n; i++)
        if (strcmp(ex->items[i].attribute, "decision") == 0 &&
            ex->items[i].explained >= SF_EXPLAIN_WHO_NAME)
            return &ex->items[i];
    return NULL;
}

const struct sf_explain_item *sf_explain_named(const struct sf_explain *ex)
{
    for (size_t i = 0; i < ex->n; i++)
        if (strcmp(ex->items[i].attribute, "decision") != 0)
            return ex->items[i].explained >= SF_EXPLAIN_NAME ? &ex->items[i] : NULL;
    return NULL;
}

/* "kept 0.14 after (none before); their share of traffic rose 0 % -> 66 %" */
static void kept_text(const struct sf_explain_item *it, char *buf, size_t n)
{
    const char *trend = it->share_after > it->share_before + 0.005   ? "rose"
                        : it->share_after < it->share_before - 0.005 ? "fell"
                                                                     : "stayed";
    char kb[32];

    if (isnan(it->kept_before))
        snprintf(kb, sizeof(kb), "none before");
    else
        snprintf(kb, sizeof(kb), "%.2f before", it->kept_before);
    snprintf(buf, n, "kept %.2f after (%s); their share of traffic %s %.0f %% \xe2\x86\x92 %.0f %%",
             isnan(it->kept_after) ? 0 : it->kept_after, kb, trend, 100 * it->share_before,
             100 * it->share_after);
}

void sf_explain_words(const struct sf_explain *ex, int fell, char *buf, size_t n)
{
    const struct sf_explain_item *it = sf_explain_named(ex), *who = sf_explain_decided(ex);
    const char *dir = fell ? "drop" : "rise";
    char what[SF_ATTR_KEY_MAX + SF_ATTR_VALUE_MAX + 16], kept[160];
    size_t len = 0;
    int k;

    buf[0] = 0;
    if (ex->before.n < SF_EXPLAIN_MIN_N || ex->after.n < SF_EXPLAIN_MIN_N) {
        snprintf(buf, n, "too few traces to tell why (%llu before the change, %llu after)",
                 (unsigned long long)ex->before.n, (unsigned long long)ex->after.n);
        return;
    }
    if (who) {
        int service = strcmp(who->value, "service") == 0;
        k = snprintf(buf, n, "%.0f %% of the %s is in the %s%s%s", 100 * who->explained, dir,
                     service ? "service's own sampling decisions (deferred to it)"
                             : "decisions made upstream (",
                     service ? "" : who->value + (strncmp(who->value, "upstream:", 9) ? 0 : 9),
                     service ? "" : "'s sampled flag)");
        len = k > 0 && (size_t)k < n ? (size_t)k : strlen(buf);
        if (it == NULL && fabs(who->share_after - who->share_before) >= 0.1) {
            /* who decides changed, not how: e.g. requests that stopped carrying a flag */
            kept_text(who, kept, sizeof(kept));
            snprintf(buf + len, n - len, ", %s; no other attribute explains it", kept);
            return;
        }
        if (len + 2 < n) {
            memcpy(buf + len, "; ", 3);
            len += 2;
        }
    }
    if (it) {
        what_text(it, what, sizeof(what));
        kept_text(it, kept, sizeof(kept));
        snprintf(buf + len, n - len, "%.0f %% of the %s is requests %s, %s", 100 * it->explained,
                 dir, what, kept);
    } else {
        snprintf(buf + len, n - len,
                 "no single attribute explains the %s; the rate %s uniformly (a sampler rate "
                 "change)",
                 dir, fell ? "fell" : "rose");
    }
}

void sf_explain_json(struct sf_jw *w, const struct sf_explain *ex)
{
    sf_jw_arr(w, "explained_by");
    for (size_t i = 0; i < ex->n; i++) {
        const struct sf_explain_item *it = &ex->items[i];
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "attribute", it->attribute);
        if (it->absent)
            sf_jw_null(w, "value");
        else
            sf_jw_str(w, "value", it->value);
        sf_jw_num(w, "share_before", it->share_before);
        sf_jw_num(w, "share_after", it->share_after);
        sf_jw_num(w, "kept_before", it->kept_before);
        sf_jw_num(w, "kept_after", it->kept_after);
        sf_jw_num(w, "explained", it->explained);
        sf_jw_num(w, "mix", it->mix);
        sf_jw_num(w, "rate", it->rate);
        sf_jw_int(w, "trials_before", (int64_t)it->before.n);
        sf_jw_int(w, "trials_after", (int64_t)it->after.n);
        sf_jw_num(w, "z", it->z);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

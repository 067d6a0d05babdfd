/* sf_select.c - the span selection language (see sf_select.h and docs/spanfold.md):
 * the selection's buffers, the SQL and parameter writers every term uses, the
 * shorthand options, --during, and error formatting.  The --where language itself
 * is sf_select_expr.c.  A failed call truncates the fragment and the parameters
 * back to what they were.
 */
#include "sf_select.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_select_int.h"
#include "sf_walltime.h"

/* ---- the selection's buffers ---------------------------------------------------------- */

void sf_select_init(struct sf_select *s)
{
    memset(s, 0, sizeof(*s));
    sf_buf_init(&s->sql, SF_SELECT_SQL_MAX);
    s->spans = "spans";
}

void sf_select_dialect(struct sf_select *s, enum sf_select_dialect d, const char *spans_table)
{
    s->dialect = d;
    s->spans = spans_table ? spans_table : "spans";
}

void sf_select_ch_ask(struct sf_select *s, sf_select_ask_fn fn, void *arg)
{
    s->ask = fn;
    s->ask_arg = arg;
}

const char *sf_sel_dialect_sql(const struct sf_sel_comp *c, const char *sqlite, const char *ch)
{
    return c->s->dialect == SF_SELECT_CLICKHOUSE ? ch : sqlite;
}

static void drop_params(struct sf_select *s, size_t keep)
{
    while (s->nparam > keep) {
        s->nparam--;
        free(s->param[s->nparam].text);
    }
}

void sf_select_free(struct sf_select *s)
{
    drop_params(s, 0);
    free(s->param);
    sf_buf_free(&s->sql);
    memset(s, 0, sizeof(*s));
}

const char *sf_select_sql(const struct sf_select *s)
{
    return s->sql.len ? (const char *)s->sql.data : "1";
}

int sf_select_bind(const struct sf_select *s, sqlite3_stmt *st, int first)
{
    for (size_t i = 0; i < s->nparam; i++) {
        const struct sf_select_param *p = &s->param[i];
        int idx = first + (int)i, rc;
        if (p->type == SF_SELECT_P_TEXT)
            rc = sqlite3_bind_text(st, idx, p->text, -1, SQLITE_TRANSIENT);
        else if (p->type == SF_SELECT_P_INT)
            rc = sqlite3_bind_int64(st, idx, p->i);
        else
            rc = sqlite3_bind_double(st, idx, p->r);
        if (rc != SQLITE_OK)
            return SF_E_DB;
    }
    return first + (int)s->nparam;
}

int sf_sel_fail(struct sf_sel_comp *c, int code, size_t off, const char *fmt, ...)
{
    va_list ap;

    if (c->failed)
        return c->failed;
    c->failed = code;
    if (c->err) {
        c->err->code = code;
        c->err->off = off;
        c->err->col = (uint32_t)off + 1;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

int sf_sel_emit(struct sf_sel_comp *c, const char *sql)
{
    if (c->failed)
        return c->failed;
    if (sf_buf_append(&c->s->sql, sql, strlen(sql)) < 0)
        return sf_sel_fail(c, SF_E_LIMIT, 0, "selection too long (more than %u bytes of SQL)",
                           SF_SELECT_SQL_MAX);
    return 0;
}

static struct sf_select_param *push(struct sf_sel_comp *c)
{
    struct sf_select *s = c->s;

    if (c->failed)
        return NULL;
    if (s->nparam >= SF_SELECT_PARAMS_MAX) {
        sf_sel_fail(c, SF_E_LIMIT, 0, "more than %d literals in one selection",
                    SF_SELECT_PARAMS_MAX);
        return NULL;
    }
    if (s->nparam == s->capparam) {
        size_t cap = s->capparam ? 2 * s->capparam : 16;
        struct sf_select_param *np = realloc(s->param, cap * sizeof(*np));
        if (np == NULL) {
            sf_sel_fail(c, SF_E_NOMEM, 0, "out of memory");
            return NULL;
        }
        s->param = np;
        s->capparam = cap;
    }
    memset(&s->param[s->nparam], 0, sizeof(s->param[0]));
    return &s->param[s->nparam++];
}

/* ClickHouse: a literal written inline (see sf_select.h). */
static int emit_ch_fmt(struct sf_sel_comp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int emit_ch_fmt(struct sf_sel_comp *c, const char *fmt, ...)
{
    char buf[64];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return sf_sel_emit(c, buf);
}

int sf_select_ch_literal(struct sf_buf *b, const char *t, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = sf_buf_append(b, "'", 1);

    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char ch = (unsigned char)t[i];
        char esc[4] = {'\\', (char)ch, 0, 0};
        size_t len = 2;
        if (ch < 0x20 || ch == 0x7f) {
            esc[1] = 'x';
            esc[2] = hex[ch >> 4];
            esc[3] = hex[ch & 15];
            len = 4;
        } else if (ch != '\\' && ch != '\'') {
            esc[0] = (char)ch;
            len = 1;
        }
        rc = sf_buf_append(b, esc, len);
    }
    return rc ? rc : sf_buf_append(b, "'", 1);
}

int sf_sel_emit_ch_quoted(struct sf_sel_comp *c, const char *t, size_t n)
{
    if (c->failed)
        return c->failed;
    if (sf_select_ch_literal(&c->s->sql, t, n) < 0)
        return sf_sel_fail(c, SF_E_LIMIT, 0, "selection too long (more than %u bytes of SQL)",
                           SF_SELECT_SQL_MAX);
    return 0;
}

int sf_sel_emit_int(struct sf_sel_comp *c, int64_t v)
{
    struct sf_select_param *p;

    if (c->s->dialect == SF_SELECT_CLICKHOUSE)
        return emit_ch_fmt(c, v < 0 ? "(%lld)" : "%lld", (long long)v);
    p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_INT;
    p->i = v;
    return sf_sel_emit(c, "?");
}

int sf_sel_emit_real(struct sf_sel_comp *c, double v)
{
    struct sf_select_param *p;

    if (c->s->dialect == SF_SELECT_CLICKHOUSE)
        return emit_ch_fmt(c, v < 0 ? "(%.17g)" : "%.17g", v);
    p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_REAL;
    p->r = v;
    return sf_sel_emit(c, "?");
}

int sf_sel_emit_text(struct sf_sel_comp *c, const char *t, size_t n)
{
    struct sf_select_param *p;

    if (c->s->dialect == SF_SELECT_CLICKHOUSE)
        return sf_sel_emit_ch_quoted(c, t, n);
    p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_TEXT;
    if ((p->text = malloc(n + 1)) == NULL)
        return sf_sel_fail(c, SF_E_NOMEM, 0, "out of memory");
    memcpy(p->text, t, n);
    p->text[n] = '\0';
    return sf_sel_emit(c, "?");
}

/* Start a term: "(" plus " AND (" when the selection has one already. */
void sf_sel_begin(struct sf_sel_comp *c)
{
    c->sql_len0 = c->s->sql.len;
    c->nparam0 = c->s->nparam;
    c->failed = 0;
    sf_sel_emit(c, c->s->sql.len ? " AND (" : "(");
}

/* Finish a term: ")" on success, roll back on failure.  Returns 0 or the error. */
int sf_sel_end(struct sf_sel_comp *c)
{
    sf_sel_emit(c, ")");
    if (c->failed) {
        c->s->sql.len = c->sql_len0;
        if (c->s->sql.data)
            c->s->sql.data[c->sql_len0] = '\0';
        drop_params(c->s, c->nparam0);
        return c->failed;
    }
    c->s->nterms++;
    return 0;
}

/* The values of col over every span of table spans with a value, as a subquery:
 * "(SELECT col AS v FROM spans WHERE v IS NOT NULL)". */
static int values_sql(struct sf_buf *b, const char *col, const char *spans)
{
    return sf_buf_printf(b, "(SELECT %s AS v FROM %s WHERE v IS NOT NULL)", col, spans);
}

static int emit_values(struct sf_sel_comp *c, const char *col)
{
    struct sf_buf b;
    int rc;

    sf_buf_init(&b, SF_SELECT_SQL_MAX);
    rc = values_sql(&b, col, c->s->spans) ? sf_sel_fail(c, SF_E_LIMIT, 0, "query too long")
                                          : sf_sel_emit(c, (const char *)b.data);
    sf_buf_free(&b);
    return rc;
}

/* 1 when t is a number as ClickHouse writes one in TabSeparated (-?digits[.digits]
 * [e[+-]digits]): what may stand in the fragment as it is. */
static int ch_number(const char *t)
{
    const char *p = t + (*t == '-');
    size_t d = strspn(p, "0123456789");

    if (d == 0)
        return 0;
    p += d;
    if (*p == '.' && (d = strspn(p + 1, "0123456789")) > 0)
        p += 1 + d;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        if ((d = strspn(p, "0123456789")) == 0)
            return 0;
        p += d;
    }
    return *p == '\0';
}

/* Ask sql of the cluster (the selection's asker); 0 and the answer in out, or the
 * call's error. */
static int ask(struct sf_sel_comp *c, const struct sf_buf *sql, char *out, size_t n)
{
    int rc = c->s->ask(c->s->ask_arg, (const char *)sql->data, out, n, c->err);

    if (rc != 0)
        c->failed = c->failed ? c->failed : rc;
    return rc;
}

/* ClickHouse with an asker: the count of those values, k in C as SQLite's arithmetic
 * has it (ceil(count * share / 100.0), at least 1; or min(n, count)), then the
 * servers' partial sort for the k-th value, written in as a literal, exactly as the
 * server wrote it; NULL without a value. */
static int ch_kth_asked(struct sf_sel_comp *c, const char *col, int desc, int pct, double share,
                        int64_t n)
{
    struct sf_buf q;
    char a[64] = "";
    uint64_t count = 0, k;
    int rc;

    if (c->failed) /* no question for a term that is rolled back */
        return c->failed;
    sf_buf_init(&q, SF_SELECT_SQL_MAX);
    rc = sf_buf_printf(&q, "SELECT count() FROM ") || values_sql(&q, col, c->s->spans);
    if (rc)
        rc = sf_sel_fail(c, SF_E_LIMIT, 0, "query too long");
    else if ((rc = ask(c, &q, a, sizeof(a))) == 0 && (a[0] < '0' || a[0] > '9'))
        rc = sf_sel_fail(c, SF_E_DB, 0, "ClickHouse: not a count: %.40s", a);
    if (rc == 0 && (count = strtoull(a, NULL, 10)) > 0) {
        if (pct) {
            double kf = ceil((double)count * share / 100.0);
            k = kf < 1 ? 1 : kf >= (double)count ? count : (uint64_t)kf;
        } else {
            k = (uint64_t)n < count ? (uint64_t)n : count;
        }
        q.len = 0;
        if (sf_buf_printf(&q, "SELECT v FROM ") || values_sql(&q, col, c->s->spans) ||
            sf_buf_printf(&q, " ORDER BY v%s LIMIT %llu, 1", desc ? " DESC" : "",
                          (unsigned long long)(k - 1)))
            rc = sf_sel_fail(c, SF_E_LIMIT, 0, "query too long");
        else if ((rc = ask(c, &q, a, sizeof(a))) == 0 && a[0] != '\0' && !ch_number(a) &&
                 strcmp(a, "\\N") != 0)
            rc = sf_sel_fail(c, SF_E_DB, 0, "ClickHouse: not a number: %.40s", a);
    }
    sf_buf_free(&q);
    if (rc != 0)
        return c->failed;
    /* none, or gone since counted: NULL, as SQLite's subquery without a row */
    if (count == 0 || a[0] == '\0' || a[0] == '\\')
        return sf_sel_emit(c, "NULL");
    sf_sel_emit(c, a[0] == '-' ? "(" : "");
    sf_sel_emit(c, a);
    return sf_sel_emit(c, a[0] == '-' ? ")" : "");
}

/* ClickHouse: the k-th value (1-based; k = ceil(count * share / 100), at least 1, or
 * min(n, count)) of col sorted ascending or (desc) descending over every span with a
 * value, NULL when none has one, as SQLite's gives.  Without an asker an array of the
 * values: 18.16 takes no subquery in LIMIT. */
static int ch_kth(struct sf_sel_comp *c, const char *col, int desc, int pct, double share,
                  int64_t n)
{
    if (c->s->ask)
        return ch_kth_asked(c, col, desc, pct, share, n);
    sf_sel_emit(c, "(SELECT if(count() > 0, ");
    sf_sel_emit(c, desc ? "arrayReverseSort" : "arraySort");
    sf_sel_emit(c, "(groupArray(v))[toUInt64(");
    if (pct) {
        sf_sel_emit(c, "greatest(1, ceil(count() * ");
        sf_sel_emit_real(c, share);
        sf_sel_emit(c, " / 100.0))");
    } else {
        sf_sel_emit(c, "least(count(), ");
        sf_sel_emit_int(c, n);
        sf_sel_emit(c, ")");
    }
    sf_sel_emit(c, ")], NULL) FROM ");
    emit_values(c, col);
    return sf_sel_emit(c, ")");
}

/* The nearest-rank percentile p of a column over every span with a value. */
int sf_sel_percentile(struct sf_sel_comp *c, const char *col, double p)
{
    if (c->s->dialect == SF_SELECT_CLICKHOUSE)
        return ch_kth(c, col, 0, 1, p, 0);
    sf_sel_emit(c, "(SELECT v FROM ");
    emit_values(c, col);
    sf_sel_emit(c, " ORDER BY v LIMIT 1 OFFSET (SELECT max(0, "
                   "CAST(k AS INTEGER) + (k > CAST(k AS INTEGER)) - 1) FROM (SELECT count(");
    sf_sel_emit(c, col);
    sf_sel_emit(c, ") * ");
    sf_sel_emit_real(c, p);
    sf_sel_emit(c, " / 100.0 AS k FROM ");
    sf_sel_emit(c, c->s->spans);
    return sf_sel_emit(c, ")))");
}

int sf_sel_is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')))
            return 0;
    return 1;
}

/* ---- shorthands ----------------------------------------------------------------------- */

static int hex_id(struct sf_sel_comp *c, const char *id, size_t want1, size_t want2,
                  const char *what)
{
    size_t n = strlen(id);

    if (!((n == want1 || n == want2) && sf_sel_is_hex(id, n)))
        return sf_sel_fail(c, SF_E_USAGE, 0, "%s", what);
    return 0;
}

static int emit_lower(struct sf_sel_comp *c, const char *id)
{
    char buf[33];
    size_t n = strlen(id);

    for (size_t i = 0; i < n && i < 32; i++)
        buf[i] = (char)(id[i] >= 'A' && id[i] <= 'Z' ? id[i] + 32 : id[i]);
    return sf_sel_emit_text(c, buf, n < 32 ? n : 32);
}

int sf_select_trace_id(struct sf_select *s, const char *id, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};

    sf_sel_begin(&c);
    if (hex_id(&c, id, 16, 32, "a trace id is 32 hex digits (or 16 for a 64-bit id)") == 0) {
        sf_sel_emit(
            &c, strlen(id) == 32
                    ? "trace_id = "
                    : sf_sel_dialect_sql(&c, "trace_id_lo = ", "substring(trace_id, 17, 16) = "));
        emit_lower(&c, id);
    }
    return sf_sel_end(&c);
}

int sf_select_span_id(struct sf_select *s, const char *id, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};

    sf_sel_begin(&c);
    if (hex_id(&c, id, 16, 16, "a span id is 16 hex digits") == 0) {
        sf_sel_emit(&c, "span_id = ");
        emit_lower(&c, id);
    }
    return sf_sel_end(&c);
}

int sf_select_status(struct sf_select *s, const char *spec, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};
    size_t i = 0, n = strlen(spec);

    sf_sel_begin(&c);
    if (n == 0)
        sf_sel_fail(&c, SF_E_USAGE, 0, "empty status (5xx, 404 or 4xx,503)");
    while (i < n && !c.failed) {
        size_t k = i;
        while (k < n && spec[k] != ',')
            k++;
        if (i > 0)
            sf_sel_emit(&c, " OR ");
        if (k - i == 3 && spec[i] >= '1' && spec[i] <= '9' && (spec[i + 1] | 0x20) == 'x' &&
            (spec[i + 2] | 0x20) == 'x') {
            sf_sel_emit(&c, "status BETWEEN ");
            sf_sel_emit_int(&c, (spec[i] - '0') * 100);
            sf_sel_emit(&c, " AND ");
            sf_sel_emit_int(&c, (spec[i] - '0') * 100 + 99);
        } else if (k - i == 3 && spec[i] >= '1' && spec[i] <= '9' && spec[i + 1] >= '0' &&
                   spec[i + 1] <= '9' && spec[i + 2] >= '0' && spec[i + 2] <= '9') {
            sf_sel_emit(&c, "status = ");
            sf_sel_emit_int(&c,
                            (spec[i] - '0') * 100 + (spec[i + 1] - '0') * 10 + spec[i + 2] - '0');
        } else {
            sf_sel_fail(&c, SF_E_USAGE, i,
                        "a status is a code (404) or a class (5xx), comma-separated");
        }
        i = k + 1;
    }
    if (!c.failed && n > 0 && spec[n - 1] == ',')
        sf_sel_fail(&c, SF_E_USAGE, n - 1, "a status list does not end in ','");
    return sf_sel_end(&c);
}

int sf_select_grpc_method(struct sf_select *s, const char *m, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};
    size_t n = strlen(m);

    sf_sel_begin(&c);
    if (n == 0)
        sf_sel_fail(&c, SF_E_USAGE, 0, "empty gRPC method (Method or package.Service/Method)");
    sf_sel_emit(&c, "grpc_method = ");
    sf_sel_emit_text(&c, m, n);
    sf_sel_emit(&c, " OR grpc_service || '/' || grpc_method = ");
    sf_sel_emit_text(&c, m, n);
    return sf_sel_end(&c);
}

int sf_select_slowest(struct sf_select *s, const char *spec, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};
    const char *d = "(resp_end_ns - req_start_ns)";
    size_t n = strlen(spec);
    int64_t v;

    sf_sel_begin(&c);
    if (n > 1 && spec[n - 1] == '%') {
        if (sf_walltime_decimal(spec, n - 1, 1000, &v) < 0 || v <= 0 || v > 100000)
            sf_sel_fail(&c, SF_E_USAGE, 0, "--slowest takes a share above 0 and up to 100%%");
    } else if (sf_walltime_decimal(spec, n, 1, &v) < 0 || v <= 0 || memchr(spec, '.', n) != NULL) {
        sf_sel_fail(&c, SF_E_USAGE, 0, "--slowest takes N%% or a number of spans");
    }
    if (c.failed)
        return sf_sel_end(&c);
    /* the k-th longest duration, k = ceil(share * count) or N, ties kept */
    if (s->dialect == SF_SELECT_CLICKHOUSE) {
        sf_sel_emit(&c, d);
        sf_sel_emit(&c, " >= ");
        ch_kth(&c, d, 1, spec[n - 1] == '%', (double)v / 1000, v);
        return sf_sel_end(&c);
    }
    sf_sel_emit(&c, d);
    sf_sel_emit(&c, " >= (SELECT v FROM ");
    emit_values(&c, d);
    sf_sel_emit(&c, " ORDER BY v DESC LIMIT 1 OFFSET ");
    if (spec[n - 1] == '%') {
        sf_sel_emit(&c, "(SELECT max(0, CAST(k AS INTEGER) + (k > CAST(k AS INTEGER)) - 1) FROM "
                        "(SELECT count(");
        sf_sel_emit(&c, d);
        sf_sel_emit(&c, ") * ");
        sf_sel_emit_real(&c, (double)v / 1000);
        sf_sel_emit(&c, " / 100.0 AS k FROM ");
        sf_sel_emit(&c, s->spans);
        sf_sel_emit(&c, ")))");
    } else { /* more than there are: every span */
        sf_sel_emit(&c, "(SELECT max(0, min(count(");
        sf_sel_emit(&c, d);
        sf_sel_emit(&c, "), ");
        sf_sel_emit_int(&c, v);
        sf_sel_emit(&c, ") - 1) FROM ");
        sf_sel_emit(&c, s->spans);
        sf_sel_emit(&c, "))");
    }
    return sf_sel_end(&c);
}

/* ---- --during: wall-clock windows ----------------------------------------------------- */

/* A span source and how to place its clock on CLOCK_REALTIME. */
struct src_clock {
    int64_t id, first;
    int invert;       /* the fit goes realtime -> this clock */
    int64_t off, ref; /* clock_fits row (off = 0, k = 0: already realtime) */
    long double k;    /* skew_ppm * 1e-6 */
};

static int64_t to_real(const struct src_clock *sc, int64_t t)
{
    if (sc->invert) /* t = r + off + k (r - ref) */
        return sc->ref + (int64_t)((long double)(t - sc->off - sc->ref) / (1 + sc->k));
    return t + sc->off + (int64_t)(sc->k * (long double)(t - sc->ref));
}

static int64_t from_real(const struct src_clock *sc, int64_t r)
{
    if (sc->invert)
        return r + sc->off + (int64_t)(sc->k * (long double)(r - sc->ref));
    return sc->ref + (int64_t)((long double)(r - sc->off - sc->ref) / (1 + sc->k));
}

#define MAX_SPAN_SOURCES 256

/* The clock_fits row (most points) that places clock on realtime, into sc. */
static int find_fit(struct sf_sel_comp *c, sqlite3 *h, const char *clock, struct src_clock *sc)
{
    static const char sql[] =
        "SELECT from_clock = 'realtime', offset_ns, ref_ns, skew_ppm FROM clock_fits"
        " WHERE (from_clock = ?1 AND to_clock = 'realtime')"
        "    OR (from_clock = 'realtime' AND to_clock = ?1) ORDER BY points DESC, id LIMIT 1";
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sf_sel_fail(c, SF_E_DB, 0, "clock_fits: %s", sqlite3_errmsg(h));
    sqlite3_bind_text(st, 1, clock, -1, SQLITE_TRANSIENT);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sc->invert = sqlite3_column_int(st, 0);
        sc->off = sqlite3_column_int64(st, 1);
        sc->ref = sqlite3_column_int64(st, 2);
        sc->k = (long double)sqlite3_column_double(st, 3) * 1e-6L;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW    ? 0
           : rc == SQLITE_DONE ? 1
                               : sf_sel_fail(c, SF_E_DB, 0, "clock_fits: %s", sqlite3_errmsg(h));
}

/* Every source with spans, its first time and its clock's fit; *n of them. */
static int span_sources(struct sf_sel_comp *c, sqlite3 *h, struct src_clock *out, size_t *n)
{
    static const char sql[] = "SELECT s.id, s.clock, s.path, min(sp.req_start_ns),"
                              " (SELECT min(first_ns) FROM connections WHERE source_id = s.id)"
                              " FROM sources s JOIN spans sp ON sp.source_id = s.id"
                              " WHERE sp.req_start_ns IS NOT NULL GROUP BY s.id ORDER BY s.id";
    sqlite3_stmt *st;
    int rc;

    *n = 0;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sf_sel_fail(c, SF_E_DB, 0, "spans: %s", sqlite3_errmsg(h));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->failed) {
        struct src_clock *sc = &out[*n];
        const char *clock = (const char *)sqlite3_column_text(st, 1);
        int64_t first = sqlite3_column_int64(st, 3);
        if (*n == MAX_SPAN_SOURCES) {
            sf_sel_fail(c, SF_E_LIMIT, 0, "more than %d sources with spans", MAX_SPAN_SOURCES);
            break;
        }
        memset(sc, 0, sizeof(*sc));
        sc->id = sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_int64(st, 4) < first)
            first = sqlite3_column_int64(st, 4);
        if (clock && strcmp(clock, "realtime") != 0 && find_fit(c, h, clock, sc) == 1)
            sf_sel_fail(c, SF_E_USAGE, 0,
                        "source %lld (%.100s) is on clock '%s' with no clock fit to realtime: its "
                        "spans cannot be placed on the wall clock",
                        (long long)sc->id, (const char *)sqlite3_column_text(st, 2), clock);
        sc->first = to_real(sc, first);
        (*n)++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && !c->failed)
        sf_sel_fail(c, SF_E_DB, 0, "spans: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
    if (!c->failed && *n == 0)
        sf_sel_fail(c, SF_E_USAGE, 0, "no spans with a start time in the database");
    return c->failed;
}

/* The span's source is id: source_id on SQLite; on ClickHouse id is the source's skey
 * (as int64, the way spanfold/ch_pull.c writes sources.id for this). */
static void source_is(struct sf_sel_comp *c, int64_t id)
{
    char key[32];

    if (c->s->dialect != SF_SELECT_CLICKHOUSE) {
        sf_sel_emit(c, "source_id = ");
        sf_sel_emit_int(c, id);
        return;
    }
    snprintf(key, sizeof(key), "skey = %llu", (unsigned long long)(uint64_t)id);
    sf_sel_emit(c, key);
}

int sf_select_during(struct sf_select *s, sqlite3 *h, const char *range, const char *tz,
                     struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};
    struct src_clock *src = NULL;
    const char *dots = strstr(range, "..");
    struct sf_walltime a, b;
    struct sf_err werr;
    size_t n = 0, la;
    int32_t zone;
    int64_t start = INT64_MAX, ra = 0, rb = 0;

    sf_sel_begin(&c);
    if (sf_walltime_zone(tz, &zone) < 0)
        sf_sel_fail(&c, SF_E_USAGE, 0, "--tz is UTC, local or +HH:MM");
    else if (dots == NULL)
        sf_sel_fail(&c, SF_E_USAGE, strlen(range),
                    "a window is A..B (12:03:10..12:03:40, +10s..+40s)");
    if (c.failed)
        return sf_sel_end(&c);
    la = (size_t)(dots - range);
    sf_err_clear(&werr);
    if (sf_walltime_parse(range, la, zone, &a, &werr) < 0)
        sf_sel_fail(&c, SF_E_USAGE, werr.off, "%s", werr.msg);
    else if (sf_walltime_parse(dots + 2, strlen(dots + 2), zone, &b, &werr) < 0)
        sf_sel_fail(&c, SF_E_USAGE, la + 2 + werr.off, "%s", werr.msg);
    if (c.failed)
        return sf_sel_end(&c);
    if (a.kind == SF_WALLTIME_OPEN && b.kind == SF_WALLTIME_OPEN)
        sf_sel_fail(&c, SF_E_USAGE, 0, "a window needs a start, an end or both");
    else if ((src = calloc(MAX_SPAN_SOURCES, sizeof(*src))) == NULL)
        sf_sel_fail(&c, SF_E_NOMEM, 0, "out of memory");
    else if (span_sources(&c, h, src, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            start = src[i].first < start ? src[i].first : start;
        ra = sf_walltime_ns(&a, start);
        rb = sf_walltime_ns(&b, start);
        if (b.kind == SF_WALLTIME_TOD && a.kind == SF_WALLTIME_TOD && rb <= ra) /* 23:59..00:01 */
            rb += 86400LL * 1000000000LL;
        if (a.kind != SF_WALLTIME_OPEN && b.kind != SF_WALLTIME_OPEN && rb <= ra)
            sf_sel_fail(&c, SF_E_USAGE, la + 2, "the window ends before it starts");
    }
    for (size_t i = 0; i < n && !c.failed; i++) {
        sf_sel_emit(&c, i ? " OR (" : "(");
        source_is(&c, src[i].id);
        if (a.kind != SF_WALLTIME_OPEN) {
            sf_sel_emit(&c, " AND req_start_ns >= ");
            sf_sel_emit_int(&c, from_real(&src[i], ra));
        }
        if (b.kind != SF_WALLTIME_OPEN) {
            sf_sel_emit(&c, " AND req_start_ns < ");
            sf_sel_emit_int(&c, from_real(&src[i], rb));
        }
        sf_sel_emit(&c, ")");
    }
    free(src);
    return sf_sel_end(&c);
}

/* ---- errors --------------------------------------------------------------------------- */

int sf_select_format_error(const char *text, const struct sf_err *err, char *out, size_t outsz)
{
    struct sf_buf b;
    size_t n = strlen(text), col = err && err->col ? err->col - 1 : 0, shown = 0;
    int len;

    sf_buf_init(&b, 4 * SF_SELECT_EXPR_MAX + 64);
    sf_buf_append(&b, "  ", 2);
    for (size_t i = 0; i < n && i < SF_SELECT_EXPR_MAX; i++) {
        unsigned char ch = (unsigned char)text[i];
        char q = '?';
        sf_buf_append(&b, ch < 0x20 || ch == 0x7f ? &q : &text[i], 1);
    }
    sf_buf_append(&b, "\n  ", 3);
    for (size_t i = 0; i < col && i < n; i++)
        if (((unsigned char)text[i] & 0xc0) != 0x80) /* one per UTF-8 character */
            shown++;
    for (size_t i = 0; i < shown; i++)
        sf_buf_append(&b, " ", 1);
    sf_buf_append(&b, "^\n", 2);
    len = snprintf(out, outsz, "%.*s", (int)b.len, b.data ? (const char *)b.data : "");
    sf_buf_free(&b);
    return len;
}

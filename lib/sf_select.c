/* sf_select.c - the span selection language (see sf_select.h and docs/spanfold.md).
 *
 * A recursive-descent parser over the expression's bytes that writes the SQL as it
 * goes: every column is an expression from the table below, every literal a "?"
 * with its value pushed on the parameter list in the same order, so that the
 * fragment never holds a byte of the input.  A failed call truncates the fragment
 * and the parameters back to what they were.
 */
#include "sf_select.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum kind {
    K_TEXT,     /* string comparisons, ~ (GLOB) and like */
    K_GRPC,     /* text; "Service/Method" compares with grpc_service || '/' || grpc_method */
    K_TRACE,    /* hex id, lowercased; 16 digits match the low half */
    K_SPAN,     /* hex id, lowercased */
    K_INT,      /* integer */
    K_STATUS,   /* integer, and status classes (5xx) */
    K_DURATION, /* nanoseconds; literals need a unit */
    K_BOOL      /* 0/1, true/false; alone it means "= 1" */
};

struct column {
    const char *name;
    enum kind kind;
    const char *sql;
};

/* The path without its query string; a gRPC call's "package.Service/Method". */
#define ENDPOINT_SQL                                                                               \
    "(CASE WHEN grpc_method IS NOT NULL THEN COALESCE(grpc_service || '/', '') || grpc_method"     \
    " WHEN instr(path, '?') > 0 THEN substr(path, 1, instr(path, '?') - 1) ELSE path END)"

static const struct column columns[] = {
    {"endpoint", K_TEXT, ENDPOINT_SQL},
    {"method", K_TEXT, "method"},
    {"path", K_TEXT, "path"},
    {"authority", K_TEXT, "authority"},
    {"proto", K_TEXT, "proto"},
    {"status", K_STATUS, "status"},
    {"grpc_status", K_INT, "grpc_status"},
    {"grpc_service", K_TEXT, "grpc_service"},
    {"grpc_method", K_GRPC, "grpc_method"},
    {"duration", K_DURATION, "(resp_end_ns - req_start_ns)"},
    {"trace_id", K_TRACE, "trace_id"},
    {"span_id", K_SPAN, "span_id"},
    {"early_data", K_BOOL, "early_data"},
    {"partial", K_BOOL, "partial"},
    {"sampled", K_BOOL, "sampled"},
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static const char column_list[] =
    "endpoint, method, path, authority, proto, status, grpc_status, grpc_service, grpc_method, "
    "duration, trace_id, span_id, early_data, partial, sampled";

const char *sf_select_columns(void)
{
    return column_list;
}

/* ---- the selection's buffers ---------------------------------------------------------- */

void sf_select_init(struct sf_select *s)
{
    memset(s, 0, sizeof(*s));
    sf_buf_init(&s->sql, SF_SELECT_SQL_MAX);
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

/* Compilation state of one call. */
struct comp {
    struct sf_select *s;
    struct sf_err *err;
    size_t sql_len0, nparam0; /* to roll back to */
    int failed;
};

static int fail(struct comp *c, int code, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct comp *c, int code, size_t off, const char *fmt, ...)
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

static int emit(struct comp *c, const char *sql)
{
    if (c->failed)
        return c->failed;
    if (sf_buf_append(&c->s->sql, sql, strlen(sql)) < 0)
        return fail(c, SF_E_LIMIT, 0, "selection too long (more than %u bytes of SQL)",
                    SF_SELECT_SQL_MAX);
    return 0;
}

static struct sf_select_param *push(struct comp *c)
{
    struct sf_select *s = c->s;

    if (c->failed)
        return NULL;
    if (s->nparam >= SF_SELECT_PARAMS_MAX) {
        fail(c, SF_E_LIMIT, 0, "more than %d literals in one selection", SF_SELECT_PARAMS_MAX);
        return NULL;
    }
    if (s->nparam == s->capparam) {
        size_t cap = s->capparam ? 2 * s->capparam : 16;
        struct sf_select_param *np = realloc(s->param, cap * sizeof(*np));
        if (np == NULL) {
            fail(c, SF_E_NOMEM, 0, "out of memory");
            return NULL;
        }
        s->param = np;
        s->capparam = cap;
    }
    memset(&s->param[s->nparam], 0, sizeof(s->param[0]));
    return &s->param[s->nparam++];
}

static int emit_int(struct comp *c, int64_t v)
{
    struct sf_select_param *p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_INT;
    p->i = v;
    return emit(c, "?");
}

static int emit_real(struct comp *c, double v)
{
    struct sf_select_param *p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_REAL;
    p->r = v;
    return emit(c, "?");
}

static int emit_text(struct comp *c, const char *t, size_t n)
{
    struct sf_select_param *p = push(c);

    if (p == NULL)
        return c->failed;
    p->type = SF_SELECT_P_TEXT;
    if ((p->text = malloc(n + 1)) == NULL)
        return fail(c, SF_E_NOMEM, 0, "out of memory");
    memcpy(p->text, t, n);
    p->text[n] = '\0';
    return emit(c, "?");
}

/* Start a term: "(" plus " AND (" when the selection has one already. */
static void begin(struct comp *c)
{
    c->sql_len0 = c->s->sql.len;
    c->nparam0 = c->s->nparam;
    c->failed = 0;
    emit(c, c->s->sql.len ? " AND (" : "(");
}

/* Finish a term: ")" on success, roll back on failure.  Returns 0 or the error. */
static int end(struct comp *c)
{
    emit(c, ")");
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

/* The nearest-rank percentile p of a column over every span with a value. */
static int emit_percentile(struct comp *c, const char *col, double p)
{
    emit(c, "(SELECT v FROM (SELECT ");
    emit(c, col);
    emit(c, " AS v FROM spans WHERE v IS NOT NULL) ORDER BY v LIMIT 1 OFFSET (SELECT max(0, "
            "CAST(k AS INTEGER) + (k > CAST(k AS INTEGER)) - 1) FROM (SELECT count(");
    emit(c, col);
    emit(c, ") * ");
    emit_real(c, p);
    return emit(c, " / 100.0 AS k FROM spans)))");
}

/* ---- numbers and durations ------------------------------------------------------------ */

struct unit {
    const char *name;
    int64_t ns;
};
static const struct unit units[] = {
    {"ns", 1},         {"us", 1000},         {"ms", 1000000},
    {"s", 1000000000}, {"m", 60000000000LL}, {"h", 3600000000000LL}};

/* DIGITS[.DIGITS] at s[0..n) times mult, exactly (at most 9 fraction digits count).
 * Returns 0, or -1 (not a number, overflow). */
static int scaled(const char *s, size_t n, int64_t mult, int64_t *out)
{
    size_t i = 0;
    int64_t ip = 0, frac = 0, scale = 1;

    if (n == 0 || s[0] < '0' || s[0] > '9')
        return -1;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (ip > (INT64_MAX - 9) / 10)
            return -1;
        ip = ip * 10 + (s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        size_t d0 = ++i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (i - d0 < 9) {
                frac = frac * 10 + (s[i] - '0');
                scale *= 10;
            }
        if (i == d0)
            return -1;
    }
    if (i != n || (mult > 0 && ip > INT64_MAX / mult))
        return -1;
    /* frac / scale < 1, so frac * mult / scale < mult: compute it without overflow */
    *out = ip * mult + (int64_t)((__int128)frac * mult / scale);
    return 0;
}

/* A duration "1.5s", "120ms" into ns.  Returns 0, -1 (bad number), -2 (no or bad unit). */
static int parse_duration(const char *s, size_t n, int64_t *ns)
{
    size_t k = n;

    while (k > 0 && ((s[k - 1] >= 'a' && s[k - 1] <= 'z') || (s[k - 1] >= 'A' && s[k - 1] <= 'Z')))
        k--;
    if (k == n)
        return -2;
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        if (strlen(units[u].name) == n - k && strncmp(units[u].name, s + k, n - k) == 0)
            return scaled(s, k, units[u].ns, ns) < 0 ? -1 : 0;
    return -2;
}

/* ---- the lexer ------------------------------------------------------------------------ */

enum tok {
    T_END,
    T_LP,
    T_RP,
    T_OP,
    T_AND,
    T_OR,
    T_NOT,
    T_TRUE,
    T_FALSE,
    T_IDENT,
    T_STRING,
    T_NUMBER, /* digits, fraction, unit letters: 120ms, 5xx, 404 */
    T_PCT     /* p95, p99.9 */
};

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_GLOB, OP_LIKE };
static const char *const op_sql[] = {
    " = ", " != ", " < ", " <= ", " > ", " >= ", " GLOB ", " LIKE "};

struct parser {
    struct comp *c;
    const char *s;
    size_t n, pos;
    int depth;
    /* the current token */
    enum tok t;
    size_t off, len;
    enum op op;
    struct sf_buf str; /* T_STRING: the decoded text */
};

static int is_ident(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

static int word(const struct parser *p, const char *w)
{
    size_t n = strlen(w);

    if (p->len != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = p->s[p->off + i];
        if ((ch >= 'A' && ch <= 'Z' ? ch + 32 : ch) != w[i])
            return 0;
    }
    return 1;
}

static int lex_string(struct parser *p)
{
    size_t i = p->pos + 1;

    sf_buf_reset(&p->str);
    for (; i < p->n && p->s[i] != '"'; i++) {
        char ch = p->s[i];
        if (ch == '\\') {
            if (i + 1 >= p->n || (p->s[i + 1] != '"' && p->s[i + 1] != '\\'))
                return fail(p->c, SF_E_USAGE, i, "unknown escape in string (use \\\" or \\\\)");
            ch = p->s[++i];
        }
        if (sf_buf_append(&p->str, &ch, 1) < 0)
            return fail(p->c, SF_E_LIMIT, i, "string too long");
    }
    if (i >= p->n)
        return fail(p->c, SF_E_USAGE, p->pos, "string not closed (a '\"' is missing)");
    p->t = T_STRING;
    p->pos = i + 1;
    return 0;
}

static int lex_op(struct parser *p)
{
    const char *s = p->s + p->pos;
    size_t left = p->n - p->pos;
    static const struct {
        const char *text;
        enum op op;
    } ops[] = {{"!=", OP_NE}, {"<>", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"==", OP_EQ},
               {"=", OP_EQ},  {"<", OP_LT},  {">", OP_GT},  {"~", OP_GLOB}};

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        size_t k = strlen(ops[i].text);
        if (k <= left && memcmp(s, ops[i].text, k) == 0) {
            p->t = T_OP;
            p->op = ops[i].op;
            p->pos += k;
            return 0;
        }
    }
    return fail(p->c, SF_E_USAGE, p->pos, "unexpected character '%c'",
                (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?');
}

/* Read the next token into p.  Returns 0 or the error. */
static int next(struct parser *p)
{
    const char *s = p->s;

    while (p->pos < p->n && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n'))
        p->pos++;
    p->off = p->pos;
    if (p->pos >= p->n) {
        p->t = T_END;
        p->len = 0;
        return 0;
    }
    if (s[p->pos] == '(' || s[p->pos] == ')') {
        p->t = s[p->pos++] == '(' ? T_LP : T_RP;
    } else if (s[p->pos] == '"') {
        if (lex_string(p))
            return p->c->failed;
    } else if ((s[p->pos] >= '0' && s[p->pos] <= '9') ||
               (s[p->pos] == 'p' && p->pos + 1 < p->n && s[p->pos + 1] >= '0' &&
                s[p->pos + 1] <= '9')) {
        p->t = s[p->pos] == 'p' ? T_PCT : T_NUMBER;
        p->pos += p->t == T_PCT;
        while (p->pos < p->n && (is_ident((unsigned char)s[p->pos]) || s[p->pos] == '.'))
            p->pos++;
    } else if (is_ident((unsigned char)s[p->pos])) {
        p->t = T_IDENT;
        while (p->pos < p->n && is_ident((unsigned char)s[p->pos]))
            p->pos++;
    } else {
        p->len = 1;
        if (lex_op(p))
            return p->c->failed;
    }
    p->len = p->pos - p->off;
    if (p->t == T_IDENT) { /* keywords are not column names */
        p->t = word(p, "and")     ? T_AND
               : word(p, "or")    ? T_OR
               : word(p, "not")   ? T_NOT
               : word(p, "true")  ? T_TRUE
               : word(p, "false") ? T_FALSE
                                  : T_IDENT;
        if (word(p, "like")) {
            p->t = T_OP;
            p->op = OP_LIKE;
        }
    }
    return 0;
}

/* ---- comparisons ---------------------------------------------------------------------- */

static const char *tok_name(enum tok t)
{
    static const char *const names[] = {
        "the end", "'('",     "')'",    "an operator", "'and'",    "'or'",        "'not'",
        "'true'",  "'false'", "a name", "a string",    "a number", "a percentile"};
    return names[t];
}

static int value_bool(struct parser *p, const struct column *col, enum op op, size_t op_off)
{
    int v;

    if (op != OP_EQ && op != OP_NE)
        return fail(p->c, SF_E_USAGE, op_off, "%s is yes/no: compare it with = or !=", col->name);
    if (p->t == T_TRUE || p->t == T_FALSE)
        v = p->t == T_TRUE;
    else if (p->t == T_NUMBER && p->len == 1 && (p->s[p->off] == '0' || p->s[p->off] == '1'))
        v = p->s[p->off] == '1';
    else
        return fail(p->c, SF_E_USAGE, p->off, "%s is yes/no: compare it with true, false, 1 or 0",
                    col->name);
    emit(p->c, col->sql);
    emit(p->c, op_sql[op]);
    return emit_int(p->c, v);
}

/* 5xx: the class as a range. */
static int value_class(struct parser *p, const struct column *col, enum op op)
{
    char d = p->s[p->off];

    if (op != OP_EQ && op != OP_NE)
        return fail(p->c, SF_E_USAGE, p->off, "a status class (%cxx) takes = or !=", d);
    emit(p->c, op == OP_NE ? "NOT (" : "(");
    emit(p->c, col->sql);
    emit(p->c, " BETWEEN ");
    emit_int(p->c, (d - '0') * 100);
    emit(p->c, " AND ");
    emit_int(p->c, (d - '0') * 100 + 99);
    return emit(p->c, ")");
}

static int value_number(struct parser *p, const struct column *col, enum op op)
{
    const char *v = p->s + p->off;
    int64_t x;

    if (op == OP_GLOB || op == OP_LIKE)
        return fail(p->c, SF_E_USAGE, p->off, "%s is a number: patterns (~, like) need text",
                    col->name);
    if (p->t == T_PCT) {
        double pct;
        int64_t milli;
        if (scaled(v + 1, p->len - 1, 1000, &milli) < 0 || milli > 100000)
            return fail(p->c, SF_E_USAGE, p->off, "a percentile is p0 to p100 (p95, p99.9)");
        pct = (double)milli / 1000;
        emit(p->c, col->sql);
        emit(p->c, op_sql[op]);
        return emit_percentile(p->c, col->sql, pct);
    }
    if (p->t != T_NUMBER)
        return fail(p->c, SF_E_USAGE, p->off, "%s is a number: %s cannot be compared with it",
                    col->name, tok_name(p->t));
    if (col->kind == K_STATUS && p->len == 3 && v[0] >= '1' && v[0] <= '9' &&
        (v[1] | 0x20) == 'x' && (v[2] | 0x20) == 'x')
        return value_class(p, col, op);
    if (col->kind == K_DURATION) {
        int r = parse_duration(v, p->len, &x);
        if (r == -2)
            return fail(p->c, SF_E_USAGE, p->off,
                        "a duration needs a unit: ns, us, ms, s, m or h (120ms, 1.5s)");
        if (r < 0)
            return fail(p->c, SF_E_USAGE, p->off, "bad duration");
    } else if (scaled(v, p->len, 1, &x) < 0 || memchr(v, '.', p->len) != NULL) {
        return fail(p->c, SF_E_USAGE, p->off, "%s takes a whole number", col->name);
    }
    emit(p->c, col->sql);
    emit(p->c, op_sql[op]);
    return emit_int(p->c, x);
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')))
            return 0;
    return 1;
}

/* A text value: ids lowercased, "Service/Method" against both gRPC columns. */
static int value_text(struct parser *p, const struct column *col, enum op op)
{
    char *t = (char *)p->str.data;
    size_t n = p->str.len;
    const char *sql = col->sql;

    if (p->t != T_STRING)
        return fail(p->c, SF_E_USAGE, p->off, "%s is text: put the value in double quotes",
                    col->name);
    if (t == NULL)
        t = "";
    if (col->kind == K_TRACE || col->kind == K_SPAN)
        for (size_t i = 0; i < n; i++)
            if (t[i] >= 'A' && t[i] <= 'Z')
                t[i] += 32;
    if (op == OP_EQ || op == OP_NE) {
        if (col->kind == K_TRACE && n == 16 && is_hex(t, n))
            sql = "trace_id_lo";
        if (col->kind == K_GRPC && memchr(t, '/', n) != NULL)
            sql = "(grpc_service || '/' || grpc_method)";
    }
    emit(p->c, sql);
    emit(p->c, op_sql[op]);
    return emit_text(p->c, t, n);
}

static const struct column *find_column(const struct parser *p)
{
    for (size_t i = 0; i < NCOLUMNS; i++)
        if (word(p, columns[i].name))
            return &columns[i];
    return NULL;
}

/* COLUMN OP value, or a yes/no column alone. */
static int comparison(struct parser *p)
{
    const struct column *col;
    enum op op;
    size_t op_off;

    if (p->t != T_IDENT)
        return fail(p->c, SF_E_USAGE, p->off, "expected a column name, found %s", tok_name(p->t));
    if ((col = find_column(p)) == NULL)
        return fail(p->c, SF_E_USAGE, p->off, "unknown column '%.*s' (columns: %s)",
                    (int)(p->len > 40 ? 40 : p->len), p->s + p->off, column_list);
    if (next(p))
        return p->c->failed;
    if (p->t != T_OP) {
        if (col->kind != K_BOOL)
            return fail(p->c, SF_E_USAGE, p->off, "expected an operator after %s, found %s",
                        col->name, tok_name(p->t));
        emit(p->c, "(");
        emit(p->c, col->sql);
        return emit(p->c, " = 1)");
    }
    op = p->op;
    op_off = p->off;
    if (next(p))
        return p->c->failed;
    emit(p->c, "(");
    if (col->kind == K_BOOL)
        value_bool(p, col, op, op_off);
    else if (col->kind == K_INT || col->kind == K_STATUS || col->kind == K_DURATION)
        value_number(p, col, op);
    else
        value_text(p, col, op);
    emit(p->c, ")");
    return p->c->failed ? p->c->failed : next(p);
}

static int expr(struct parser *p);

static int factor(struct parser *p)
{
    if (++p->depth > SF_SELECT_DEPTH_MAX)
        return fail(p->c, SF_E_LIMIT, p->off, "nested more than %d deep", SF_SELECT_DEPTH_MAX);
    if (p->t == T_NOT) {
        if (next(p))
            return p->c->failed;
        emit(p->c, "NOT ");
        factor(p);
    } else if (p->t == T_LP) {
        size_t open = p->off;
        if (next(p))
            return p->c->failed;
        emit(p->c, "(");
        if (expr(p))
            return p->c->failed;
        if (p->t != T_RP)
            return fail(p->c, SF_E_USAGE, p->t == T_END ? open : p->off, "%s",
                        p->t == T_END ? "'(' not closed" : "expected ')', 'and' or 'or'");
        emit(p->c, ")");
        next(p);
    } else {
        comparison(p);
    }
    p->depth--;
    return p->c->failed;
}

static int term(struct parser *p)
{
    if (factor(p))
        return p->c->failed;
    while (p->t == T_AND) {
        if (next(p))
            return p->c->failed;
        emit(p->c, " AND ");
        if (factor(p))
            return p->c->failed;
    }
    return 0;
}

static int expr(struct parser *p)
{
    emit(p->c, "(");
    if (term(p))
        return p->c->failed;
    while (p->t == T_OR) {
        if (next(p))
            return p->c->failed;
        emit(p->c, " OR ");
        if (term(p))
            return p->c->failed;
    }
    return emit(p->c, ")");
}

int sf_select_where(struct sf_select *s, const char *text, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};
    struct parser p = {.c = &c, .s = text, .n = strlen(text)};

    begin(&c);
    sf_buf_init(&p.str, SF_SELECT_EXPR_MAX);
    if (p.n > SF_SELECT_EXPR_MAX)
        fail(&c, SF_E_LIMIT, SF_SELECT_EXPR_MAX, "expression longer than %d bytes",
             SF_SELECT_EXPR_MAX);
    else if (next(&p) == 0 && p.t == T_END)
        fail(&c, SF_E_USAGE, 0, "empty expression");
    else if (!c.failed && expr(&p) == 0 && p.t != T_END)
        fail(&c, SF_E_USAGE, p.off, "expected 'and', 'or' or the end, found %s", tok_name(p.t));
    sf_buf_free(&p.str);
    return end(&c);
}

/* ---- shorthands ----------------------------------------------------------------------- */

static int hex_id(struct comp *c, const char *id, size_t want1, size_t want2, const char *what)
{
    size_t n = strlen(id);

    if (!((n == want1 || n == want2) && is_hex(id, n)))
        return fail(c, SF_E_USAGE, 0, "%s", what);
    return 0;
}

static int emit_lower(struct comp *c, const char *id)
{
    char buf[33];
    size_t n = strlen(id);

    for (size_t i = 0; i < n && i < 32; i++)
        buf[i] = (char)(id[i] >= 'A' && id[i] <= 'Z' ? id[i] + 32 : id[i]);
    return emit_text(c, buf, n < 32 ? n : 32);
}

int sf_select_trace_id(struct sf_select *s, const char *id, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};

    begin(&c);
    if (hex_id(&c, id, 16, 32, "a trace id is 32 hex digits (or 16 for a 64-bit id)") == 0) {
        emit(&c, strlen(id) == 16 ? "trace_id_lo = " : "trace_id = ");
        emit_lower(&c, id);
    }
    return end(&c);
}

int sf_select_span_id(struct sf_select *s, const char *id, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};

    begin(&c);
    if (hex_id(&c, id, 16, 16, "a span id is 16 hex digits") == 0) {
        emit(&c, "span_id = ");
        emit_lower(&c, id);
    }
    return end(&c);
}

int sf_select_status(struct sf_select *s, const char *spec, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};
    size_t i = 0, n = strlen(spec);

    begin(&c);
    if (n == 0)
        fail(&c, SF_E_USAGE, 0, "empty status (5xx, 404 or 4xx,503)");
    while (i < n && !c.failed) {
        size_t k = i;
        while (k < n && spec[k] != ',')
            k++;
        if (i > 0)
            emit(&c, " OR ");
        if (k - i == 3 && spec[i] >= '1' && spec[i] <= '9' && (spec[i + 1] | 0x20) == 'x' &&
            (spec[i + 2] | 0x20) == 'x') {
            emit(&c, "status BETWEEN ");
            emit_int(&c, (spec[i] - '0') * 100);
            emit(&c, " AND ");
            emit_int(&c, (spec[i] - '0') * 100 + 99);
        } else if (k - i == 3 && spec[i] >= '1' && spec[i] <= '9' && spec[i + 1] >= '0' &&
                   spec[i + 1] <= '9' && spec[i + 2] >= '0' && spec[i + 2] <= '9') {
            emit(&c, "status = ");
            emit_int(&c, (spec[i] - '0') * 100 + (spec[i + 1] - '0') * 10 + spec[i + 2] - '0');
        } else {
            fail(&c, SF_E_USAGE, i, "a status is a code (404) or a class (5xx), comma-separated");
        }
        i = k + 1;
    }
    if (!c.failed && n > 0 && spec[n - 1] == ',')
        fail(&c, SF_E_USAGE, n - 1, "a status list does not end in ','");
    return end(&c);
}

int sf_select_grpc_method(struct sf_select *s, const char *m, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};
    size_t n = strlen(m);

    begin(&c);
    if (n == 0)
        fail(&c, SF_E_USAGE, 0, "empty gRPC method (Method or package.Service/Method)");
    emit(&c, "grpc_method = ");
    emit_text(&c, m, n);
    emit(&c, " OR grpc_service || '/' || grpc_method = ");
    emit_text(&c, m, n);
    return end(&c);
}

int sf_select_slowest(struct sf_select *s, const char *spec, struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};
    const char *d = "(resp_end_ns - req_start_ns)";
    size_t n = strlen(spec);
    int64_t v;

    begin(&c);
    if (n > 1 && spec[n - 1] == '%') {
        if (scaled(spec, n - 1, 1000, &v) < 0 || v <= 0 || v > 100000)
            fail(&c, SF_E_USAGE, 0, "--slowest takes a share above 0 and up to 100%%");
    } else if (scaled(spec, n, 1, &v) < 0 || v <= 0 || memchr(spec, '.', n) != NULL) {
        fail(&c, SF_E_USAGE, 0, "--slowest takes N%% or a number of spans");
    }
    if (c.failed)
        return end(&c);
    /* the k-th longest duration, k = ceil(share * count) or N, ties kept */
    emit(&c, d);
    emit(&c, " >= (SELECT v FROM (SELECT ");
    emit(&c, d);
    emit(&c, " AS v FROM spans WHERE v IS NOT NULL) ORDER BY v DESC LIMIT 1 OFFSET ");
    if (spec[n - 1] == '%') {
        emit(&c, "(SELECT max(0, CAST(k AS INTEGER) + (k > CAST(k AS INTEGER)) - 1) FROM "
                 "(SELECT count(");
        emit(&c, d);
        emit(&c, ") * ");
        emit_real(&c, (double)v / 1000);
        emit(&c, " / 100.0 AS k FROM spans)))");
    } else {
        emit_int(&c, v - 1);
        emit(&c, ")");
    }
    return end(&c);
}

/* ---- --during: wall-clock windows ----------------------------------------------------- */

#define NS_PER_S   1000000000LL
#define SECS_DAY   86400LL
#define ZONE_LOCAL INT32_MIN /* the TZ environment, through mktime */

/* One end of a window as written. */
struct wall {
    enum { W_OPEN, W_REL, W_TOD, W_DATE } kind;
    int64_t rel_ns;   /* W_REL */
    int y, mo, d;     /* W_DATE */
    int64_t tod_ns;   /* W_TOD, W_DATE: time of day */
    int32_t zone_min; /* minutes east of UTC, or ZONE_LOCAL */
};

/* A span source and how to place its clock on CLOCK_REALTIME. */
struct src_clock {
    int64_t id, first;
    int invert;       /* the fit goes realtime -> this clock */
    int64_t off, ref; /* clock_fits row (off = 0, k = 0: already realtime) */
    long double k;    /* skew_ppm * 1e-6 */
};

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, size_t n, size_t at, size_t k, int *v)
{
    *v = 0;
    if (at + k > n)
        return -1;
    for (size_t i = at; i < at + k; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

/* "Z", "+HH:MM", "+HHMM", "+HH" at s[at..n): minutes east.  Returns the bytes read or -1. */
static int parse_zone(const char *s, size_t n, size_t at, int32_t *zone)
{
    int hh, mm = 0, sign;
    size_t k;

    if (at < n && (s[at] == 'Z' || s[at] == 'z') && at + 1 == n) {
        *zone = 0;
        return 1;
    }
    if (at >= n || (s[at] != '+' && s[at] != '-') || digits(s, n, at + 1, 2, &hh))
        return -1;
    sign = s[at] == '-' ? -1 : 1;
    k = at + 3;
    if (k < n && s[k] == ':')
        k++;
    if (k < n && digits(s, n, k, 2, &mm) == 0)
        k += 2;
    if (k != n || hh > 23 || mm > 59)
        return -1;
    *zone = sign * (hh * 60 + mm);
    return (int)(k - at);
}

/* HH:MM[:SS[.frac]] at s[at..): the time of day; *end after it. */
static int parse_tod(const char *s, size_t n, size_t at, int64_t *tod, size_t *end)
{
    int hh, mm, ss = 0;
    size_t k = at + 5, f;
    int64_t frac = 0;

    if (digits(s, n, at, 2, &hh) || s[at + 2] != ':' || digits(s, n, at + 3, 2, &mm))
        return -1;
    if (k < n && s[k] == ':') {
        if (digits(s, n, k + 1, 2, &ss))
            return -1;
        k += 3;
        if (k < n && s[k] == '.') {
            for (f = k + 1; f < n && s[f] >= '0' && s[f] <= '9'; f++)
                ;
            if (f == k + 1 || f - k - 1 > 9)
                return -1;
            scaled(s + k + 1, f - k - 1, 1, &frac);
            for (size_t z = f - k - 1; z < 9; z++)
                frac *= 10;
            k = f;
        }
    }
    if (hh > 23 || mm > 59 || ss > 60)
        return -1;
    *tod = ((int64_t)hh * 3600 + mm * 60 + ss) * NS_PER_S + frac;
    *end = k;
    return 0;
}

/* One end of the window, s[0..n), at offset base of the whole text. */
static int parse_wall(struct comp *c, const char *s, size_t n, size_t base, int32_t tz,
                      struct wall *w)
{
    size_t k = 0;

    memset(w, 0, sizeof(*w));
    w->zone_min = tz;
    if (n == 0)
        return 0;
    if (s[0] == '+') {
        int r = parse_duration(s + 1, n - 1, &w->rel_ns);
        w->kind = W_REL;
        if (r < 0)
            return fail(c, SF_E_USAGE, base, "%s",
                        r == -2 ? "a relative time needs a unit (+10s)"
                                : "bad relative time (+10s, +1.5m)");
        return 0;
    }
    w->kind = W_TOD;
    if (n >= 10 && s[4] == '-') {
        if (digits(s, n, 0, 4, &w->y) || digits(s, n, 5, 2, &w->mo) || s[7] != '-' ||
            digits(s, n, 8, 2, &w->d) || w->mo < 1 || w->mo > 12 || w->d < 1 || w->d > 31 ||
            n < 11 || (s[10] != 'T' && s[10] != ' '))
            return fail(c, SF_E_USAGE, base, "bad date (YYYY-MM-DDTHH:MM:SS)");
        w->kind = W_DATE;
        k = 11;
    }
    if (parse_tod(s, n, k, &w->tod_ns, &k) < 0)
        return fail(c, SF_E_USAGE, base + k, "bad time of day (HH:MM, HH:MM:SS or HH:MM:SS.frac)");
    if (k < n && parse_zone(s, n, k, &w->zone_min) < 0)
        return fail(c, SF_E_USAGE, base + k, "bad time zone (Z, +HH:MM or -HH:MM)");
    return 0;
}

/* Seconds since the epoch of a civil date and time of day (seconds) in zone. */
static int64_t civil_to_epoch(int y, int mo, int d, int64_t tod_s, int32_t zone)
{
    if (zone == ZONE_LOCAL) {
        struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1};
        tm.tm_sec = (int)tod_s;
        return (int64_t)mktime(&tm);
    }
    return days_from_civil(y, mo, d) * SECS_DAY + tod_s - (int64_t)zone * 60;
}

/* The civil date of epoch second t in zone. */
static void epoch_to_civil(int64_t t, int32_t zone, int *y, int *mo, int *d)
{
    struct tm tm;
    time_t tt = (time_t)(zone == ZONE_LOCAL ? t : t + (int64_t)zone * 60);

    if (zone == ZONE_LOCAL)
        localtime_r(&tt, &tm);
    else
        gmtime_r(&tt, &tm);
    *y = tm.tm_year + 1900;
    *mo = tm.tm_mon + 1;
    *d = tm.tm_mday;
}

/* Realtime ns of w; a time of day falls on the capture's day (the next one when it is
 * more than 12 h before the capture start, so that a window may cross midnight). */
static int64_t wall_ns(const struct wall *w, int64_t start)
{
    int64_t s_sec = start >= 0 ? start / NS_PER_S : -((-start + NS_PER_S - 1) / NS_PER_S);
    int64_t sub = w->tod_ns % NS_PER_S, t;
    int y, mo, d;

    if (w->kind == W_REL)
        return start + w->rel_ns;
    if (w->kind == W_DATE)
        return civil_to_epoch(w->y, w->mo, w->d, w->tod_ns / NS_PER_S, w->zone_min) * NS_PER_S +
               sub;
    epoch_to_civil(s_sec, w->zone_min, &y, &mo, &d);
    t = civil_to_epoch(y, mo, d, w->tod_ns / NS_PER_S, w->zone_min) * NS_PER_S + sub;
    if (t < start - 12 * 3600 * NS_PER_S)
        t = civil_to_epoch(y, mo, d + 1, w->tod_ns / NS_PER_S, w->zone_min) * NS_PER_S + sub;
    return t;
}

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
static int find_fit(struct comp *c, sqlite3 *h, const char *clock, struct src_clock *sc)
{
    static const char sql[] =
        "SELECT from_clock = 'realtime', offset_ns, ref_ns, skew_ppm FROM clock_fits"
        " WHERE (from_clock = ?1 AND to_clock = 'realtime')"
        "    OR (from_clock = 'realtime' AND to_clock = ?1) ORDER BY points DESC, id LIMIT 1";
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(c, SF_E_DB, 0, "clock_fits: %s", sqlite3_errmsg(h));
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
                               : fail(c, SF_E_DB, 0, "clock_fits: %s", sqlite3_errmsg(h));
}

/* Every source with spans, its first time and its clock's fit; *n of them. */
static int span_sources(struct comp *c, sqlite3 *h, struct src_clock *out, size_t *n)
{
    static const char sql[] = "SELECT s.id, s.clock, s.path, min(sp.req_start_ns),"
                              " (SELECT min(first_ns) FROM connections WHERE source_id = s.id)"
                              " FROM sources s JOIN spans sp ON sp.source_id = s.id"
                              " WHERE sp.req_start_ns IS NOT NULL GROUP BY s.id ORDER BY s.id";
    sqlite3_stmt *st;
    int rc;

    *n = 0;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(c, SF_E_DB, 0, "spans: %s", sqlite3_errmsg(h));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->failed) {
        struct src_clock *sc = &out[*n];
        const char *clock = (const char *)sqlite3_column_text(st, 1);
        int64_t first = sqlite3_column_int64(st, 3);
        if (*n == MAX_SPAN_SOURCES) {
            fail(c, SF_E_LIMIT, 0, "more than %d sources with spans", MAX_SPAN_SOURCES);
            break;
        }
        memset(sc, 0, sizeof(*sc));
        sc->id = sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_int64(st, 4) < first)
            first = sqlite3_column_int64(st, 4);
        if (clock && strcmp(clock, "realtime") != 0 && find_fit(c, h, clock, sc) == 1)
            fail(c, SF_E_USAGE, 0,
                 "source %lld (%.100s) is on clock '%s' with no clock fit to realtime: its "
                 "spans cannot be placed on the wall clock",
                 (long long)sc->id, (const char *)sqlite3_column_text(st, 2), clock);
        sc->first = to_real(sc, first);
        (*n)++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && !c->failed)
        fail(c, SF_E_DB, 0, "spans: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
    if (!c->failed && *n == 0)
        fail(c, SF_E_USAGE, 0, "no spans with a start time in the database");
    return c->failed;
}

/* tz: NULL/"UTC" -> 0, "local" -> ZONE_LOCAL, "+HH:MM" -> minutes. */
static int parse_tz(const char *tz, int32_t *zone)
{
    if (tz == NULL || strcmp(tz, "UTC") == 0 || strcmp(tz, "utc") == 0 || strcmp(tz, "Z") == 0) {
        *zone = 0;
        return 0;
    }
    if (strcmp(tz, "local") == 0) {
        *zone = ZONE_LOCAL;
        return 0;
    }
    return parse_zone(tz, strlen(tz), 0, zone) < 0 ? -1 : 0;
}

int sf_select_during(struct sf_select *s, sqlite3 *h, const char *range, const char *tz,
                     struct sf_err *err)
{
    struct comp c = {.s = s, .err = err};
    struct src_clock *src = NULL;
    const char *dots = strstr(range, "..");
    struct wall a, b;
    size_t n = 0, la;
    int32_t zone;
    int64_t start = INT64_MAX, ra = 0, rb = 0;

    begin(&c);
    if (parse_tz(tz, &zone) < 0)
        fail(&c, SF_E_USAGE, 0, "--tz is UTC, local or +HH:MM");
    else if (dots == NULL)
        fail(&c, SF_E_USAGE, strlen(range), "a window is A..B (12:03:10..12:03:40, +10s..+40s)");
    if (c.failed)
        return end(&c);
    la = (size_t)(dots - range);
    if (parse_wall(&c, range, la, 0, zone, &a) ||
        parse_wall(&c, dots + 2, strlen(dots + 2), la + 2, zone, &b))
        return end(&c);
    if (a.kind == W_OPEN && b.kind == W_OPEN)
        fail(&c, SF_E_USAGE, 0, "a window needs a start, an end or both");
    else if ((src = calloc(MAX_SPAN_SOURCES, sizeof(*src))) == NULL)
        fail(&c, SF_E_NOMEM, 0, "out of memory");
    else if (span_sources(&c, h, src, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            start = src[i].first < start ? src[i].first : start;
        ra = wall_ns(&a, start);
        rb = wall_ns(&b, start);
        if (b.kind == W_TOD && a.kind == W_TOD && rb <= ra) /* 23:59..00:01 */
            rb += SECS_DAY * NS_PER_S;
        if (a.kind != W_OPEN && b.kind != W_OPEN && rb <= ra)
            fail(&c, SF_E_USAGE, la + 2, "the window ends before it starts");
    }
    for (size_t i = 0; i < n && !c.failed; i++) {
        emit(&c, i ? " OR (source_id = " : "(source_id = ");
        emit_int(&c, src[i].id);
        if (a.kind != W_OPEN) {
            emit(&c, " AND req_start_ns >= ");
            emit_int(&c, from_real(&src[i], ra));
        }
        if (b.kind != W_OPEN) {
            emit(&c, " AND req_start_ns < ");
            emit_int(&c, from_real(&src[i], rb));
        }
        emit(&c, ")");
    }
    free(src);
    return end(&c);
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

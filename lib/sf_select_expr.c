/* sf_select_expr.c - the --where language of sf_select (grammar in sf_select.h,
 * reference in docs/spanfold.md): the column table, the lexer and a recursive-descent
 * parser that writes the SQL as it goes.  Every column is an expression from the
 * table below, every literal a "?" with its value pushed on the parameter list in the
 * same order, so that the fragment never holds a byte of the input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_buf.h"
#include "sf_glob_ch.h"
#include "sf_select_int.h"
#include "sf_walltime.h"

enum kind {
    K_TEXT,     /* string comparisons, ~ (GLOB) and like */
    K_GRPC,     /* text; "Service/Method" compares with grpc_service || '/' || grpc_method */
    K_TRACE,    /* hex id, lowercased; 16 digits match the low half */
    K_SPAN,     /* hex id, lowercased */
    K_INT,      /* integer */
    K_REAL,     /* a number with a fraction (0.7, 1e-3) */
    K_STATUS,   /* integer, and status classes (5xx) */
    K_DURATION, /* nanoseconds; literals need a unit */
    K_BOOL      /* 0/1, true/false; alone it means "= 1" */
};

struct column {
    const char *name;
    enum kind kind;
    const char *sql;
    const char *ch_sql; /* ClickHouse's, when it differs */
};

#define ENDPOINT_SQL SF_ENDPOINT_SQL
#define ENDPOINT_CH  SF_ENDPOINT_CH

static const struct column columns[] = {
    {"endpoint", K_TEXT, ENDPOINT_SQL, ENDPOINT_CH},
    {"method", K_TEXT, "method", NULL},
    {"path", K_TEXT, "path", NULL},
    {"authority", K_TEXT, "authority", NULL},
    {"proto", K_TEXT, "proto", NULL},
    {"status", K_STATUS, "status", NULL},
    {"grpc_status", K_INT, "grpc_status", NULL},
    {"grpc_service", K_TEXT, "grpc_service", NULL},
    {"grpc_method", K_GRPC, "grpc_method", NULL},
    {"duration", K_DURATION, "(resp_end_ns - req_start_ns)", NULL},
    {"trace_id", K_TRACE, "trace_id", NULL},
    {"span_id", K_SPAN, "span_id", NULL},
    {"early_data", K_BOOL, "early_data", NULL},
    {"partial", K_BOOL, "partial", NULL},
    {"sampled", K_BOOL, "sampled", NULL},
    /* JSON-RPC calls (pcap2spans/rpc.h); method above is the JSON-RPC method on them */
    {"rpc_name", K_TEXT, "rpc_name", NULL},
    {"rpc_direction", K_TEXT, "rpc_direction", NULL},
    {"rpc_session", K_TEXT, "rpc_session", NULL},
    {"rpc_error_code", K_INT, "rpc_error_code", NULL},
    /* the sampling parameters a JSON-RPC request carried (sampling/createMessage) */
    {"temperature", K_REAL, "temperature", NULL},
    {"top_p", K_REAL, "top_p", NULL},
    {"max_tokens", K_INT, "max_tokens", NULL},
    {"model_hint", K_TEXT, "model_hint", NULL},
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static const char column_list[] =
    "endpoint, method, path, authority, proto, status, grpc_status, grpc_service, grpc_method, "
    "duration, trace_id, span_id, early_data, partial, sampled, rpc_name, rpc_direction, "
    "rpc_session, rpc_error_code, temperature, top_p, max_tokens, model_hint";

/* The column's SQL in the selection's dialect. */
static const char *col_sql(const struct sf_sel_comp *c, const struct column *col)
{
    return sf_sel_dialect_sql(c, col->sql, col->ch_sql ? col->ch_sql : col->sql);
}

const char *sf_select_columns(void)
{
    return column_list;
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
    struct sf_sel_comp *c;
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
                return sf_sel_fail(p->c, SF_E_USAGE, i,
                                   "unknown escape in string (use \\\" or \\\\)");
            ch = p->s[++i];
        }
        if (sf_buf_append(&p->str, &ch, 1) < 0)
            return sf_sel_fail(p->c, SF_E_LIMIT, i, "string too long");
    }
    if (i >= p->n)
        return sf_sel_fail(p->c, SF_E_USAGE, p->pos, "string not closed (a '\"' is missing)");
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
    return sf_sel_fail(p->c, SF_E_USAGE, p->pos, "unexpected character '%c'",
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
        return sf_sel_fail(p->c, SF_E_USAGE, op_off,
                           "%s is yes/no: compare it with = or !=", col->name);
    if (p->t == T_TRUE || p->t == T_FALSE)
        v = p->t == T_TRUE;
    else if (p->t == T_NUMBER && p->len == 1 && (p->s[p->off] == '0' || p->s[p->off] == '1'))
        v = p->s[p->off] == '1';
    else
        return sf_sel_fail(p->c, SF_E_USAGE, p->off,
                           "%s is yes/no: compare it with true, false, 1 or 0", col->name);
    sf_sel_emit(p->c, col_sql(p->c, col));
    sf_sel_emit(p->c, op_sql[op]);
    return sf_sel_emit_int(p->c, v);
}

/* 5xx: the class as a range. */
static int value_class(struct parser *p, const struct column *col, enum op op)
{
    char d = p->s[p->off];

    if (op != OP_EQ && op != OP_NE)
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "a status class (%cxx) takes = or !=", d);
    sf_sel_emit(p->c, op == OP_NE ? "NOT (" : "(");
    sf_sel_emit(p->c, col_sql(p->c, col));
    sf_sel_emit(p->c, " BETWEEN ");
    sf_sel_emit_int(p->c, (d - '0') * 100);
    sf_sel_emit(p->c, " AND ");
    sf_sel_emit_int(p->c, (d - '0') * 100 + 99);
    return sf_sel_emit(p->c, ")");
}

static int value_number(struct parser *p, const struct column *col, enum op op)
{
    const char *v = p->s + p->off;
    int64_t x;

    if (op == OP_GLOB || op == OP_LIKE)
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "%s is a number: patterns (~, like) need text",
                           col->name);
    if (p->t == T_PCT) {
        double pct;
        int64_t milli;
        if (sf_walltime_decimal(v + 1, p->len - 1, 1000, &milli) < 0 || milli > 100000)
            return sf_sel_fail(p->c, SF_E_USAGE, p->off, "a percentile is p0 to p100 (p95, p99.9)");
        pct = (double)milli / 1000;
        sf_sel_emit(p->c, col_sql(p->c, col));
        sf_sel_emit(p->c, op_sql[op]);
        return sf_sel_percentile(p->c, col_sql(p->c, col), pct);
    }
    if (p->t != T_NUMBER)
        return sf_sel_fail(p->c, SF_E_USAGE, p->off,
                           "%s is a number: %s cannot be compared with it", col->name,
                           tok_name(p->t));
    if (col->kind == K_REAL) {
        char t[64], *end;
        double r;
        if (p->len >= sizeof(t))
            return sf_sel_fail(p->c, SF_E_USAGE, p->off, "%s: number too long", col->name);
        memcpy(t, v, p->len);
        t[p->len] = 0;
        r = strtod(t, &end);
        if (*end || r != r)
            return sf_sel_fail(p->c, SF_E_USAGE, p->off, "%s takes a number (0.7, 1e-3)",
                               col->name);
        sf_sel_emit(p->c, col_sql(p->c, col));
        sf_sel_emit(p->c, op_sql[op]);
        return sf_sel_emit_real(p->c, r);
    }
    if (col->kind == K_STATUS && p->len == 3 && v[0] >= '1' && v[0] <= '9' &&
        (v[1] | 0x20) == 'x' && (v[2] | 0x20) == 'x')
        return value_class(p, col, op);
    if (col->kind == K_DURATION) {
        int r = sf_walltime_duration(v, p->len, &x);
        if (r == SF_E_USAGE)
            return sf_sel_fail(p->c, SF_E_USAGE, p->off,
                               "a duration needs a unit: ns, us, ms, s, m or h (120ms, 1.5s)");
        if (r < 0)
            return sf_sel_fail(p->c, SF_E_USAGE, p->off, "bad duration");
    } else if (sf_walltime_decimal(v, p->len, 1, &x) < 0 || memchr(v, '.', p->len) != NULL) {
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "%s takes a whole number", col->name);
    }
    sf_sel_emit(p->c, col_sql(p->c, col));
    sf_sel_emit(p->c, op_sql[op]);
    return sf_sel_emit_int(p->c, x);
}

/* ClickHouse has no GLOB, its LIKE is case-sensitive, and its RE2 never matches an
 * invalid UTF-8 byte with '.': SQLite's meaning, byte for byte, as lib/sf_glob_ch.h
 * writes it (an anchored RE2 over the column cut into SQLite's characters; for LIKE
 * the column lower()ed, which folds ASCII only, as SQLite's LIKE does). */
static int ch_pattern(struct sf_sel_comp *c, const char *sql, enum op op, const char *t, size_t n)
{
    struct sf_buf re;
    char col[512], tokens[sizeof(col) + 160];
    const char *why = NULL;
    int rc, r;

    sf_buf_init(&re, 16 * SF_SELECT_EXPR_MAX + 64);
    r = sf_glob_ch_regex(t, n, op == OP_LIKE, &re, &why);
    snprintf(col, sizeof(col), op == OP_LIKE ? "lower(%s)" : "%s", sql);
    snprintf(tokens, sizeof(tokens), SF_GLOB_CH_TOKENS, col);
    if (r < 0) {
        rc = sf_sel_fail(c, SF_E_LIMIT, 0, "%s: cannot be asked of ClickHouse", why);
    } else if (r == 0) {
        rc = sf_sel_emit(c, "(1 = 0)"); /* an unclosed class: SQLite matches nothing */
    } else {
        sf_sel_emit(c, "match(");
        sf_sel_emit(c, tokens);
        sf_sel_emit(c, ", ");
        rc = sf_sel_emit_ch_quoted(c, (const char *)re.data, re.len);
        if (rc == 0)
            rc = sf_sel_emit(c, ")");
    }
    sf_buf_free(&re);
    return rc;
}

/* A text value: ids lowercased, "Service/Method" against both gRPC columns. */
static int value_text(struct parser *p, const struct column *col, enum op op)
{
    char *t = (char *)p->str.data;
    size_t n = p->str.len;
    const char *sql = col_sql(p->c, col);

    if (p->t != T_STRING)
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "%s is text: put the value in double quotes",
                           col->name);
    if (t == NULL)
        t = "";
    if (col->kind == K_TRACE || col->kind == K_SPAN)
        for (size_t i = 0; i < n; i++)
            if (t[i] >= 'A' && t[i] <= 'Z')
                t[i] += 32;
    if (op == OP_EQ || op == OP_NE) {
        if (col->kind == K_TRACE && n == 16 && sf_sel_is_hex(t, n))
            sql = sf_sel_dialect_sql(p->c, "trace_id_lo", "substring(trace_id, 17, 16)");
        if (col->kind == K_GRPC && memchr(t, '/', n) != NULL)
            sql = "(grpc_service || '/' || grpc_method)";
    }
    if (p->c->s->dialect == SF_SELECT_CLICKHOUSE && (op == OP_GLOB || op == OP_LIKE))
        return ch_pattern(p->c, sql, op, t, n);
    sf_sel_emit(p->c, sql);
    sf_sel_emit(p->c, op_sql[op]);
    return sf_sel_emit_text(p->c, t, n);
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
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "expected a column name, found %s",
                           tok_name(p->t));
    if ((col = find_column(p)) == NULL)
        return sf_sel_fail(p->c, SF_E_USAGE, p->off, "unknown column '%.*s' (columns: %s)",
                           (int)(p->len > 40 ? 40 : p->len), p->s + p->off, column_list);
    if (next(p))
        return p->c->failed;
    if (p->t != T_OP) {
        if (col->kind != K_BOOL)
            return sf_sel_fail(p->c, SF_E_USAGE, p->off, "expected an operator after %s, found %s",
                               col->name, tok_name(p->t));
        sf_sel_emit(p->c, "(");
        sf_sel_emit(p->c, col_sql(p->c, col));
        return sf_sel_emit(p->c, " = 1)");
    }
    op = p->op;
    op_off = p->off;
    if (next(p))
        return p->c->failed;
    sf_sel_emit(p->c, "(");
    if (col->kind == K_BOOL)
        value_bool(p, col, op, op_off);
    else if (col->kind == K_INT || col->kind == K_REAL || col->kind == K_STATUS ||
             col->kind == K_DURATION)
        value_number(p, col, op);
    else
        value_text(p, col, op);
    sf_sel_emit(p->c, ")");
    return p->c->failed ? p->c->failed : next(p);
}

static int expr(struct parser *p);

static int factor(struct parser *p)
{
    if (++p->depth > SF_SELECT_DEPTH_MAX)
        return sf_sel_fail(p->c, SF_E_LIMIT, p->off, "nested more than %d deep",
                           SF_SELECT_DEPTH_MAX);
    if (p->t == T_NOT) {
        if (next(p))
            return p->c->failed;
        sf_sel_emit(p->c, "NOT ");
        factor(p);
    } else if (p->t == T_LP) {
        size_t open = p->off;
        if (next(p))
            return p->c->failed;
        sf_sel_emit(p->c, "(");
        if (expr(p))
            return p->c->failed;
        if (p->t != T_RP)
            return sf_sel_fail(p->c, SF_E_USAGE, p->t == T_END ? open : p->off, "%s",
                               p->t == T_END ? "'(' not closed" : "expected ')', 'and' or 'or'");
        sf_sel_emit(p->c, ")");
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
        sf_sel_emit(p->c, " AND ");
        if (factor(p))
            return p->c->failed;
    }
    return 0;
}

static int expr(struct parser *p)
{
    sf_sel_emit(p->c, "(");
    if (term(p))
        return p->c->failed;
    while (p->t == T_OR) {
        if (next(p))
            return p->c->failed;
        sf_sel_emit(p->c, " OR ");
        if (term(p))
            return p->c->failed;
    }
    return sf_sel_emit(p->c, ")");
}

int sf_select_where(struct sf_select *s, const char *text, struct sf_err *err)
{
    struct sf_sel_comp c = {.s = s, .err = err};
    struct parser p = {.c = &c, .s = text, .n = strlen(text)};

    sf_sel_begin(&c);
    sf_buf_init(&p.str, SF_SELECT_EXPR_MAX);
    if (p.n > SF_SELECT_EXPR_MAX)
        sf_sel_fail(&c, SF_E_LIMIT, SF_SELECT_EXPR_MAX, "expression longer than %d bytes",
                    SF_SELECT_EXPR_MAX);
    else if (next(&p) == 0 && p.t == T_END)
        sf_sel_fail(&c, SF_E_USAGE, 0, "empty expression");
    else if (!c.failed && expr(&p) == 0 && p.t != T_END)
        sf_sel_fail(&c, SF_E_USAGE, p.off, "expected 'and', 'or' or the end, found %s",
                    tok_name(p.t));
    sf_buf_free(&p.str);
    return sf_sel_end(&c);
}

const char *sf_select_endpoint_sql(void)
{
    return ENDPOINT_SQL;
}

const char *sf_select_endpoint(const struct sf_endpoint_of *c, struct sf_buf *scratch)
{
    const char *grpc_service = c->grpc_service, *grpc_method = c->grpc_method, *path = c->path;
    const char *q;
    int rc = 0;

    sf_buf_reset(scratch);
    if (c->proto && strcmp(c->proto, "jsonrpc") == 0) { /* method || ' ' || rpc_name */
        if (c->method == NULL)
            return NULL;
        rc = sf_buf_append(scratch, c->method, strlen(c->method));
        if (c->rpc_name && c->rpc_name[0])
            rc |= sf_buf_append(scratch, " ", 1) |
                  sf_buf_append(scratch, c->rpc_name, strlen(c->rpc_name));
        rc |= sf_buf_append(scratch, "", 1);
        return rc ? NULL : (const char *)scratch->data;
    }
    if (grpc_method) { /* COALESCE(grpc_service || '/', '') || grpc_method */
        if (grpc_service)
            rc = sf_buf_append(scratch, grpc_service, strlen(grpc_service)) |
                 sf_buf_append(scratch, "/", 1);
        rc |= sf_buf_append(scratch, grpc_method, strlen(grpc_method) + 1);
        return rc ? NULL : (const char *)scratch->data;
    }
    if (path == NULL || (q = strchr(path, '?')) == NULL)
        return path;
    if (sf_buf_append(scratch, path, (size_t)(q - path)) < 0 || sf_buf_append(scratch, "", 1) < 0)
        return NULL;
    return (const char *)scratch->data;
}

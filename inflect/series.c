/* series.c - plain time series from CSV (RFC 4180 subset) or NDJSON files.
 *
 *   CSV                                   NDJSON
 *   time,p99,errors                       {"time": "2024-05-01T12:00:00Z", "p99": 12.5}
 *   2024-05-01T12:00:00Z,12.5,0           {"time": 1714564810, "p99": null}
 *   1714564810,,1      <- empty = missing
 *
 * The first CSV column is the time: a number (seconds, or an index) or ISO-8601
 * text; a file with one column is values only (time = row index).  Quoted fields
 * ("a,b", "say ""hi""") are accepted on one line.  Every error names the line and
 * the column (1-based byte position) where it was found.  CRLF line ends and a
 * UTF-8 byte order mark are accepted; NA, N/A, NaN, null, NULL, None are missing.  Lines are parsed
 * one at a time (lib/sf_line), so memory holds the values, never the file.
 */
#include "series.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_line.h"

/* ---- one series --------------------------------------------------------------- */

int series_push(struct inflect_series *s, double t, double v, size_t row, const char *label)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *nv, *nt;
        size_t *nr;
        if (s->n >= SERIES_MAX_ROWS)
            return SF_E_LIMIT;
        if ((nv = realloc(s->v, cap * sizeof(*nv))) == NULL)
            return SF_E_NOMEM;
        s->v = nv;
        if ((nt = realloc(s->t, cap * sizeof(*nt))) == NULL)
            return SF_E_NOMEM;
        s->t = nt;
        if ((nr = realloc(s->row, cap * sizeof(*nr))) == NULL)
            return SF_E_NOMEM;
        s->row = nr;
        if (s->tlabel || (label && s->n == 0)) {
            char **nl = realloc(s->tlabel, cap * sizeof(*nl));
            if (nl == NULL)
                return SF_E_NOMEM;
            s->tlabel = nl;
        }
        s->cap = cap;
    }
    s->v[s->n] = v;
    s->t[s->n] = t;
    s->row[s->n] = row;
    if (s->tlabel) {
        s->tlabel[s->n] = label ? strdup(label) : NULL;
        if (label && s->tlabel[s->n] == NULL)
            return SF_E_NOMEM;
    }
    s->n++;
    return 0;
}

void series_free(struct inflect_series *s)
{
    if (s->tlabel)
        for (size_t i = 0; i < s->n; i++)
            free(s->tlabel[i]);
    free(s->tlabel);
    free(s->trials);
    free(s->v);
    free(s->t);
    free(s->row);
    memset(s, 0, sizeof(*s));
}

void series_table_free(struct inflect_table *tab)
{
    for (size_t i = 0; i < tab->nseries; i++)
        series_free(&tab->s[i]);
    free(tab->s);
    memset(tab, 0, sizeof(*tab));
}

/* ---- ISO-8601 ------------------------------------------------------------------ */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Read exactly `digits` decimal digits at s[*i]. */
static int iso_num(const char *s, size_t n, size_t *i, int digits, int *out)
{
    int v = 0;
    for (int k = 0; k < digits; k++) {
        if (*i >= n || !isdigit((unsigned char)s[*i]))
            return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return 0;
}

int series_parse_iso8601(const char *s, size_t n, double *secs)
{
    size_t i = 0;
    int y, mo = 1, d = 1, h = 0, mi = 0, sec = 0, oh, om;
    double frac = 0, tz = 0;

    if (iso_num(s, n, &i, 4, &y) < 0)
        return SF_E_MALFORMED;
    if (i < n && s[i] == '-') {
        i++;
        if (iso_num(s, n, &i, 2, &mo) < 0 || mo < 1 || mo > 12)
            return SF_E_MALFORMED;
        if (i < n && s[i] == '-') {
            i++;
            if (iso_num(s, n, &i, 2, &d) < 0 || d < 1 || d > 31)
                return SF_E_MALFORMED;
        }
    }
    if (i < n && (s[i] == 'T' || s[i] == ' ')) {
        i++;
        if (iso_num(s, n, &i, 2, &h) < 0 || h > 24 || i >= n || s[i++] != ':' ||
            iso_num(s, n, &i, 2, &mi) < 0 || mi > 59)
            return SF_E_MALFORMED;
        if (i < n && s[i] == ':') {
            i++;
            if (iso_num(s, n, &i, 2, &sec) < 0 || sec > 60)
                return SF_E_MALFORMED;
            if (i < n && (s[i] == '.' || s[i] == ',')) {
                double scale = 0.1;
                i++;
                if (i >= n || !isdigit((unsigned char)s[i]))
                    return SF_E_MALFORMED;
                while (i < n && isdigit((unsigned char)s[i])) {
                    frac += (s[i++] - '0') * scale;
                    scale /= 10;
                }
            }
        }
        if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
            i++;
        } else if (i < n && (s[i] == '+' || s[i] == '-')) {
            int sign = s[i++] == '-' ? -1 : 1;
            if (iso_num(s, n, &i, 2, &oh) < 0)
                return SF_E_MALFORMED;
            if (i < n && s[i] == ':')
                i++;
            if (iso_num(s, n, &i, 2, &om) < 0 || oh > 23 || om > 59)
                return SF_E_MALFORMED;
            tz = sign * (oh * 3600.0 + om * 60.0);
        }
    }
    if (i != n)
        return SF_E_MALFORMED;
    *secs = (double)days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400.0 + h * 3600.0 +
            mi * 60.0 + sec + frac - tz;
    return 0;
}

/* ---- cells ----------------------------------------------------------------------- */

/* A number filling the whole cell, or missing (empty, NA, NaN, null). Returns 1 for
 * a value, 0 for missing, -1 for junk. */
static int cell_number(const char *s, size_t n, double *v)
{
    char tmp[64], *end;

    static const char *const missing[] = {"NA",  "na",   "N/A",  "n/a", "NaN",
                                          "nan", "null", "NULL", "None"};

    if (n == 0)
        return 0;
    for (size_t k = 0; k < sizeof(missing) / sizeof(missing[0]); k++)
        if (strlen(missing[k]) == n && memcmp(s, missing[k], n) == 0)
            return 0;
    if (n >= sizeof(tmp))
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    errno = 0;
    *v = strtod(tmp, &end);
    if (end != tmp + n || errno == ERANGE || !isfinite(*v))
        return -1;
    return 1;
}

struct cell {
    const char *p; /* unquoted text (inside the line, or in the unquote buffer) */
    size_t n;
    size_t col; /* 1-based byte column of the cell's start */
};

struct parser {
    struct inflect_table *tab;
    const char *column; /* wanted value column, or NULL */
    int ndjson;         /* format, fixed by the first line */
    int have_header;    /* CSV header / NDJSON first object seen */
    size_t ncols;       /* CSV: columns in the header */
    int time_col;       /* 0 when the first column is time, -1 when values only */
    int *map;           /* CSV column -> series index, or -1 (skipped) */
    char **keys;        /* NDJSON: key of each series */
    char unq[4096];     /* unquoted cell text */
    struct cell cells[SERIES_MAX_COLS + 1];
    uint64_t lineno;
    size_t row;
};

static int perr(struct parser *ps, struct sf_err *err, int code, size_t col, const char *msg)
{
    sf_err_set(err, code, UINT64_MAX, "%s", msg);
    if (err) {
        err->unit = "line";
        err->unit_no = ps->lineno;
        err->col = (uint32_t)col;
    }
    return code;
}

/* Split a CSV line into cells; quoted cells are unquoted into ps->unq. */
static int csv_split(struct parser *ps, const char *s, size_t n, size_t *ncells, struct sf_err *err)
{
    size_t i = 0, k = 0, u = 0;

    for (;;) {
        struct cell *c;
        if (k > SERIES_MAX_COLS)
            return perr(ps, err, SF_E_LIMIT, i + 1, "more than 256 columns");
        c = &ps->cells[k++];
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        c->col = i + 1;
        if (i < n && s[i] == '"') {
            size_t start = u;
            i++;
            for (;;) {
                if (i >= n)
                    return perr(ps, err, SF_E_MALFORMED, c->col, "unterminated quoted field");
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') {
                        i++;
                    } else {
                        i++;
                        break;
                    }
                }
                if (u + 1 >= sizeof(ps->unq))
                    return perr(ps, err, SF_E_LIMIT, c->col, "quoted fields over 4 KiB");
                ps->unq[u++] = s[i++];
            }
            c->p = ps->unq + start;
            c->n = u - start;
            while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
                i++;
            if (i < n && s[i] != ',')
                return perr(ps, err, SF_E_MALFORMED, i + 1, "text after a quoted field");
        } else {
            size_t start = i, end;
            while (i < n && s[i] != ',')
                i++;
            end = i;
            while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r'))
                end--;
            c->p = s + start;
            c->n = end - start;
        }
        if (i >= n)
            break;
        i++; /* the comma */
    }
    *ncells = k;
    return 0;
}

static int add_series(struct inflect_table *tab, const char *name, size_t n)
{
    struct inflect_series *ns;

    if (tab->nseries >= SERIES_MAX_COLS)
        return SF_E_LIMIT;
    ns = realloc(tab->s, (tab->nseries + 1) * sizeof(*ns));
    if (ns == NULL)
        return SF_E_NOMEM;
    tab->s = ns;
    memset(&ns[tab->nseries], 0, sizeof(*ns));
    if (n >= SERIES_NAME_MAX)
        n = SERIES_NAME_MAX - 1;
    memcpy(ns[tab->nseries].name, name, n);
    ns[tab->nseries].name[n] = 0;
    tab->nseries++;
    return 0;
}

static int csv_header(struct parser *ps, size_t ncells, struct sf_err *err)
{
    int rc;

    ps->ncols = ncells;
    ps->time_col = ncells > 1 ? 0 : -1;
    ps->map = malloc(ncells * sizeof(*ps->map));
    if (ps->map == NULL)
        return SF_E_NOMEM;
    for (size_t c = 0; c < ncells; c++) {
        const struct cell *ce = &ps->cells[c];
        ps->map[c] = -1;
        if ((int)c == ps->time_col)
            continue;
        if (ps->column && (strlen(ps->column) != ce->n || memcmp(ps->column, ce->p, ce->n)))
            continue;
        if (ce->n == 0)
            return perr(ps, err, SF_E_MALFORMED, ce->col, "empty column name in header");
        if ((rc = add_series(ps->tab, ce->p, ce->n)) < 0)
            return perr(ps, err, rc, ce->col, "cannot add column");
        ps->map[c] = (int)ps->tab->nseries - 1;
    }
    if (ps->tab->nseries == 0)
        return perr(ps, err, ps->column ? SF_E_USAGE : SF_E_MALFORMED, 1,
                    ps->column ? "no such column in header" : "no value column in header");
    return 0;
}

/* Time of a data row: number, ISO-8601, or the row index when there is no time
 * column.  *label is set for ISO text (kept for the report). */
static int row_time(struct parser *ps, const struct cell *c, double *t, char *label, size_t labsz,
                    struct sf_err *err)
{
    int r;

    label[0] = 0;
    if (c == NULL) {
        *t = (double)ps->row;
        return 0;
    }
    r = cell_number(c->p, c->n, t);
    if (r == 1 && !ps->tab->time_iso)
        return 0;
    if (r == 0)
        return perr(ps, err, SF_E_MALFORMED, c->col, "empty time cell");
    if (series_parse_iso8601(c->p, c->n, t) < 0)
        return perr(ps, err, SF_E_MALFORMED, c->col, "time is neither a number nor ISO-8601");
    if (ps->row == 0)
        ps->tab->time_iso = 1;
    else if (!ps->tab->time_iso)
        return perr(ps, err, SF_E_MALFORMED, c->col, "ISO-8601 time after numeric times");
    if (c->n < labsz) {
        memcpy(label, c->p, c->n);
        label[c->n] = 0;
    }
    return 0;
}

static int csv_row(struct parser *ps, size_t ncells, struct sf_err *err)
{
    char label[64];
    double t, v;
    int rc;

    if (ncells != ps->ncols)
        return perr(ps, err, SF_E_MALFORMED, ps->cells[ncells - 1].col,
                    ncells < ps->ncols ? "fewer cells than header columns"
                                       : "more cells than header columns");
    rc = row_time(ps, ps->time_col == 0 ? &ps->cells[0] : NULL, &t, label, sizeof(label), err);
    if (rc < 0)
        return rc;
    for (size_t c = 0; c < ncells; c++) {
        int r;
        if (ps->map[c] < 0)
            continue;
        r = cell_number(ps->cells[c].p, ps->cells[c].n, &v);
        if (r < 0)
            return perr(ps, err, SF_E_MALFORMED, ps->cells[c].col, "value is not a number");
        if (r == 0)
            continue;
        rc = series_push(&ps->tab->s[ps->map[c]], t, v, ps->row, ps->tab->time_iso ? label : NULL);
        if (rc < 0)
            return perr(ps, err, rc, ps->cells[c].col,
                        rc == SF_E_LIMIT ? "too many rows" : "out of memory");
    }
    ps->row++;
    return 0;
}

/* ---- NDJSON: flat objects only ----------------------------------------------------- */

struct jval {
    int kind; /* 'n' number, 's' string, '0' null/bool */
    double num;
    const char *p; /* string text (escapes kept; only used for time and names) */
    size_t n;
};

static void skip_ws(const char *s, size_t n, size_t *i)
{
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r'))
        (*i)++;
}

static int j_string(const char *s, size_t n, size_t *i, const char **p, size_t *len)
{
    size_t start;
    if (*i >= n || s[*i] != '"')
        return -1;
    start = ++(*i);
    while (*i < n && s[*i] != '"') {
        if (s[*i] == '\\')
            (*i)++;
        (*i)++;
    }
    if (*i >= n)
        return -1;
    *p = s + start;
    *len = *i - start;
    (*i)++;
    return 0;
}

static int j_value(const char *s, size_t n, size_t *i, struct jval *v)
{
    size_t start = *i;

    if (*i < n && s[*i] == '"') {
        v->kind = 's';
        return j_string(s, n, i, &v->p, &v->n);
    }
    while (*i < n && s[*i] != ',' && s[*i] != '}' && s[*i] != ' ' && s[*i] != '\t')
        (*i)++;
    v->p = s + start;
    v->n = *i - start;
    if ((v->n == 4 && (!memcmp(v->p, "null", 4) || !memcmp(v->p, "true", 4))) ||
        (v->n == 5 && !memcmp(v->p, "false", 5))) {
        v->kind = '0';
        return 0;
    }
    v->kind = 'n';
    return cell_number(v->p, v->n, &v->num) == 1 ? 0 : -1;
}

static int is_time_key(const char *p, size_t n)
{
    return (n == 4 && !memcmp(p, "time", 4)) || (n == 1 && p[0] == 't') ||
           (n == 2 && !memcmp(p, "ts", 2)) || (n == 9 && !memcmp(p, "timestamp", 9));
}

static int nd_key_index(struct parser *ps, const char *k, size_t kn)
{
    for (size_t j = 0; j < ps->tab->nseries; j++)
        if (strlen(ps->keys[j]) == kn && memcmp(ps->keys[j], k, kn) == 0)
            return (int)j;
    return -1;
}

/* First object: its numeric keys become the series. */
static int nd_learn_key(struct parser *ps, const char *k, size_t kn, size_t col, struct sf_err *err)
{
    char **nk;
    int rc;

    if (ps->column && (strlen(ps->column) != kn || memcmp(ps->column, k, kn)))
        return 0;
    if ((rc = add_series(ps->tab, k, kn)) < 0)
        return perr(ps, err, rc, col, "cannot add key");
    nk = realloc(ps->keys, ps->tab->nseries * sizeof(*nk));
    if (nk == NULL)
        return SF_E_NOMEM;
    ps->keys = nk;
    ps->keys[ps->tab->nseries - 1] = strndup(k, kn);
    return ps->keys[ps->tab->nseries - 1] ? 0 : SF_E_NOMEM;
}

static int nd_line(struct parser *ps, const char *s, size_t n, struct sf_err *err)
{
    size_t i = 0, ntv = 0;
    struct jval vals[SERIES_MAX_COLS];
    int idx[SERIES_MAX_COLS];
    struct cell tcell, *tc = NULL;
    char label[64];
    double t;
    int rc, first = !ps->have_header;

    skip_ws(s, n, &i);
    if (i >= n || s[i++] != '{')
        return perr(ps, err, SF_E_MALFORMED, i + 1, "expected a JSON object");
    for (;;) {
        const char *k;
        size_t kn, kcol, keycol;
        struct jval v;
        skip_ws(s, n, &i);
        if (i < n && s[i] == '}' && ntv == 0 && tc == NULL) {
            i++;
            break;
        }
        kcol = keycol = i + 1;
        if (j_string(s, n, &i, &k, &kn) < 0)
            return perr(ps, err, SF_E_MALFORMED, kcol, "expected a string key");
        skip_ws(s, n, &i);
        if (i >= n || s[i++] != ':')
            return perr(ps, err, SF_E_MALFORMED, i, "expected ':'");
        skip_ws(s, n, &i);
        kcol = i + 1;
        if (i < n && (s[i] == '{' || s[i] == '['))
            return perr(ps, err, SF_E_UNSUPPORTED, kcol, "nested values are not supported");
        if (j_value(s, n, &i, &v) < 0)
            return perr(ps, err, SF_E_MALFORMED, kcol, "bad JSON value");
        if (is_time_key(k, kn)) {
            tcell.p = v.p;
            tcell.n = v.n;
            tcell.col = kcol;
            tc = &tcell;
        } else if (v.kind == 'n' || v.kind == '0') {
            int j;
            if (first && v.kind == 'n' && nd_key_index(ps, k, kn) < 0 &&
                (rc = nd_learn_key(ps, k, kn, kcol, err)) < 0)
                return rc;
            j = nd_key_index(ps, k, kn);
            for (size_t q = 0; j >= 0 && q < ntv; q++)
                if (idx[q] == j)
                    return perr(ps, err, SF_E_MALFORMED, keycol, "duplicate key");
            if (j >= 0 && v.kind == 'n' && ntv < SERIES_MAX_COLS) {
                vals[ntv] = v;
                idx[ntv++] = j;
            }
        }
        skip_ws(s, n, &i);
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}') {
            i++;
            break;
        }
        return perr(ps, err, SF_E_MALFORMED, i + 1, "expected ',' or '}'");
    }
    skip_ws(s, n, &i);
    if (i != n)
        return perr(ps, err, SF_E_MALFORMED, i + 1, "text after the object");
    if (first) {
        ps->have_header = 1;
        if (ps->tab->nseries == 0)
            return perr(ps, err, ps->column ? SF_E_USAGE : SF_E_MALFORMED, 1,
                        ps->column ? "no such key in the first object"
                                   : "no numeric value in the first object");
    }
    if (tc && tc->n == 0)
        return perr(ps, err, SF_E_MALFORMED, tc->col, "empty time");
    if ((rc = row_time(ps, tc, &t, label, sizeof(label), err)) < 0)
        return rc;
    for (size_t j = 0; j < ntv; j++) {
        rc = series_push(&ps->tab->s[idx[j]], t, vals[j].num, ps->row,
                         ps->tab->time_iso ? label : NULL);
        if (rc < 0)
            return perr(ps, err, rc, 1, rc == SF_E_LIMIT ? "too many rows" : "out of memory");
    }
    ps->row++;
    return 0;
}

/* ---- driver ------------------------------------------------------------------------ */

static int parse_line(struct parser *ps, const char *s, size_t n, struct sf_err *err)
{
    size_t ncells, i = 0;
    int rc;

    if (ps->lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
        s += 3; /* a UTF-8 byte order mark (spreadsheet exports) */
        n -= 3;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
    if (i == n)
        return 0; /* blank lines are skipped */
    if (!ps->have_header && !ps->ndjson && s[i] == '{')
        ps->ndjson = 1;
    if (ps->ndjson)
        return nd_line(ps, s, n, err);
    if ((rc = csv_split(ps, s, n, &ncells, err)) < 0)
        return rc;
    if (!ps->have_header) {
        ps->have_header = 1;
        return csv_header(ps, ncells, err);
    }
    return csv_row(ps, ncells, err);
}

static void parser_free(struct parser *ps)
{
    if (ps->keys)
        for (size_t j = 0; j < ps->tab->nseries; j++)
            free(ps->keys[j]);
    free(ps->keys);
    free(ps->map);
}

static int finish(struct parser *ps, int rc, struct sf_err *err)
{
    if (rc == 0 && !ps->have_header)
        rc = perr(ps, err, SF_E_MALFORMED, 1, "empty input: no header row");
    ps->tab->rows = ps->row;
    parser_free(ps);
    if (rc < 0)
        series_table_free(ps->tab);
    return rc;
}

int series_parse(struct inflect_table *tab, const char *buf, size_t len, const char *column,
                 struct sf_err *err)
{
    struct parser ps;
    size_t pos = 0;
    int rc = 0;

    memset(tab, 0, sizeof(*tab));
    memset(&ps, 0, sizeof(ps));
    ps.tab = tab;
    ps.column = column;
    while (pos < len && rc == 0) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        ps.lineno++;
        if (memchr(buf + pos, 0, n))
            rc = perr(&ps, err, SF_E_MALFORMED, 1, "NUL byte in text");
        else
            rc = parse_line(&ps, buf + pos, n, err);
        pos += n + 1;
    }
    return finish(&ps, rc, err);
}

int series_read_file(struct inflect_table *tab, const char *path, const char *column,
                     struct sf_err *err)
{
    struct parser ps;
    struct sf_line lr;
    char *line;
    size_t n;
    int fd, rc, r;

    memset(tab, 0, sizeof(*tab));
    memset(&ps, 0, sizeof(ps));
    ps.tab = tab;
    ps.column = column;
    fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);
    if (fd < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot open: %s", strerror(errno));
    if ((rc = sf_line_open(&lr, fd, 0)) < 0) {
        if (fd)
            close(fd);
        return rc;
    }
    rc = 0;
    while (rc == 0 && (r = sf_line_next(&lr, &line, &n)) != 0) {
        ps.lineno = lr.lineno;
        if (r == SF_E_LIMIT)
            rc = perr(&ps, err, SF_E_LIMIT, 1, "line longer than 1 MiB");
        else if (r < 0)
            rc = sf_err_set(err, SF_E_IO, lr.off, "read error: %s", strerror(errno));
        else if (memchr(line, 0, n))
            rc = perr(&ps, err, SF_E_MALFORMED, 1, "NUL byte in text");
        else
            rc = parse_line(&ps, line, n, err);
    }
    sf_line_close(&lr);
    if (fd)
        close(fd);
    return finish(&ps, rc, err);
}

/* sf_jsonrpc.c - JSON-RPC 2.0 messages from JSON text (sf_jsonrpc.h).
 *
 * A recursive-descent reader over the whole text: objects and arrays are walked by
 * obj_each / arr_each, which hand each member or element to a callback that must
 * consume its value (reading the facts it wants, skip_value for the rest).  Nesting is
 * counted by those two, so every path, kept or skipped, has the same depth bound.
 */
#include "sf_jsonrpc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sf_json.h"

struct jp {
    const char *p;
    size_t n, i;
    int depth;
    const char *why; /* first error */
    size_t at;
};

#define KEY_MAX 32 /* member names read; longer ones match nothing we read */

static int fail(struct jp *j, const char *why)
{
    if (j->why == NULL) {
        j->why = why;
        j->at = j->i;
    }
    return -1;
}

static void ws(struct jp *j)
{
    while (j->i < j->n &&
           (j->p[j->i] == ' ' || j->p[j->i] == '\t' || j->p[j->i] == '\n' || j->p[j->i] == '\r'))
        j->i++;
}

static int peek(struct jp *j)
{
    ws(j);
    return j->i < j->n ? (unsigned char)j->p[j->i] : -1;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        int c = (unsigned char)s[k], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        *v = *v << 4 | (unsigned)d;
    }
    return 0;
}

/* Append the code point cp as UTF-8 to out[*len..cap-1) if it fits whole. */
static void put_cp(char *out, size_t cap, size_t *len, int *full, unsigned cp)
{
    char u[4];
    size_t k;

    if (cp < 0x20 || cp == 0x7f)
        cp = '?'; /* kept text is plain (sf_text_copy_plain) */
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        k = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        k = 4;
    }
    if (*full || out == NULL || *len + k >= cap) {
        *full = 1;
        return;
    }
    memcpy(out + *len, u, k);
    *len += k;
}

/* A string at j->i (the opening quote), decoded into out (cap bytes, NUL-terminated,
 * cut at a character boundary; out NULL: only checked).  *cut, when not NULL, tells
 * whether it was cut. */
static int string(struct jp *j, char *out, size_t cap, int *cut)
{
    size_t len = 0;
    int full = 0;

    if (j->i >= j->n || j->p[j->i] != '"')
        return fail(j, "expected a string");
    j->i++;
    for (;;) {
        unsigned char c;
        if (j->i >= j->n)
            return fail(j, "unterminated string");
        c = (unsigned char)j->p[j->i];
        if (c == '"') {
            j->i++;
            break;
        }
        if (c < 0x20)
            return fail(j, "control byte in a string");
        if (c == '\\') {
            unsigned cp, lo;
            if (j->i + 1 >= j->n)
                return fail(j, "unterminated string");
            switch (j->p[j->i + 1]) {
            case '"':
                cp = '"';
                break;
            case '\\':
                cp = '\\';
                break;
            case '/':
                cp = '/';
                break;
            case 'b':
                cp = '\b';
                break;
            case 'f':
                cp = '\f';
                break;
            case 'n':
                cp = '\n';
                break;
            case 'r':
                cp = '\r';
                break;
            case 't':
                cp = '\t';
                break;
            case 'u':
                if (j->i + 6 > j->n || hex4(j->p + j->i + 2, &cp) < 0)
                    return fail(j, "bad \\u escape");
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    return fail(j, "unpaired surrogate in a \\u escape");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (j->i + 12 > j->n || j->p[j->i + 6] != '\\' || j->p[j->i + 7] != 'u' ||
                        hex4(j->p + j->i + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
                        return fail(j, "unpaired surrogate in a \\u escape");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    j->i += 6;
                }
                j->i += 4;
                break;
            default:
                return fail(j, "bad escape in a string");
            }
            j->i += 2;
            put_cp(out, cap, &len, &full, cp);
            continue;
        }
        if (c < 0x80) {
            put_cp(out, cap, &len, &full, c);
            j->i++;
            continue;
        }
        size_t l = sf_json_utf8_len((const unsigned char *)j->p + j->i, j->n - j->i);
        if (l == 0)
            return fail(j, "invalid UTF-8 in a string");
        if (!full && out && len + l < cap) {
            memcpy(out + len, j->p + j->i, l);
            len += l;
        } else {
            full = 1;
        }
        j->i += l;
    }
    if (out)
        out[len] = 0;
    if (cut)
        *cut = full;
    return 0;
}

/* A number (RFC 8259 section 6); its text is p[*s..j->i). */
static int number(struct jp *j, size_t *s)
{
    const char *p = j->p;
    size_t i = j->i, n = j->n;

    *s = i;
    if (i < n && p[i] == '-')
        i++;
    if (i < n && p[i] == '0')
        i++;
    else if (i < n && p[i] >= '1' && p[i] <= '9')
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    else
        return j->i = i, fail(j, "bad number");
    if (i < n && p[i] == '.') {
        if (++i >= n || p[i] < '0' || p[i] > '9')
            return j->i = i, fail(j, "bad number");
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= n || p[i] < '0' || p[i] > '9')
            return j->i = i, fail(j, "bad number");
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    j->i = i;
    return 0;
}

/* A number's value (NaN when it is not one or too long to be a parameter). */
static double number_value(struct jp *j)
{
    char t[40];
    size_t s;

    if (number(j, &s) < 0)
        return NAN;
    if (j->i - s >= sizeof(t))
        return NAN;
    memcpy(t, j->p + s, j->i - s);
    t[j->i - s] = 0;
    return strtod(t, NULL);
}

static int literal(struct jp *j, const char *w)
{
    size_t l = strlen(w);

    if (j->n - j->i < l || memcmp(j->p + j->i, w, l) != 0)
        return fail(j, "bad literal");
    j->i += l;
    return 0;
}

typedef int (*member_fn)(struct jp *j, const char *key, void *arg);
typedef int (*elem_fn)(struct jp *j, size_t k, void *arg);

static int skip_value(struct jp *j);

static int enter(struct jp *j)
{
    if (++j->depth > SF_JRPC_DEPTH)
        return fail(j, "nested deeper than 64 levels");
    j->i++;
    return 0;
}

/* An object at j->i: each member's name (cut names are "") and value to fn. */
static int obj_each(struct jp *j, member_fn fn, void *arg)
{
    char key[KEY_MAX];
    int cut, c;

    if (peek(j) != '{')
        return fail(j, "expected an object");
    if (enter(j) < 0)
        return -1;
    if (peek(j) == '}') {
        j->i++;
        j->depth--;
        return 0;
    }
    for (;;) {
        if (peek(j) != '"')
            return fail(j, "expected a member name");
        if (string(j, key, sizeof(key), &cut) < 0)
            return -1;
        if (cut)
            key[0] = 0;
        if (peek(j) != ':')
            return fail(j, "expected ':'");
        j->i++;
        ws(j);
        if (fn(j, key, arg) < 0)
            return -1;
        c = peek(j);
        j->i++;
        if (c == '}')
            break;
        if (c != ',')
            return j->i--, fail(j, "expected ',' or '}'");
    }
    j->depth--;
    return 0;
}

static int arr_each(struct jp *j, elem_fn fn, void *arg)
{
    size_t k = 0;
    int c;

    if (peek(j) != '[')
        return fail(j, "expected an array");
    if (enter(j) < 0)
        return -1;
    if (peek(j) == ']') {
        j->i++;
        j->depth--;
        return 0;
    }
    for (;;) {
        ws(j);
        if (fn(j, k++, arg) < 0)
            return -1;
        c = peek(j);
        j->i++;
        if (c == ']')
            break;
        if (c != ',')
            return j->i--, fail(j, "expected ',' or ']'");
    }
    j->depth--;
    return 0;
}

static int skip_member(struct jp *j, const char *key, void *arg)
{
    (void)key, (void)arg;
    return skip_value(j);
}

static int skip_elem(struct jp *j, size_t k, void *arg)
{
    (void)k, (void)arg;
    return skip_value(j);
}

static int skip_value(struct jp *j)
{
    size_t s;

    switch (peek(j)) {
    case '{':
        return obj_each(j, skip_member, NULL);
    case '[':
        return arr_each(j, skip_elem, NULL);
    case '"':
        return string(j, NULL, 0, NULL);
    case 't':
        return literal(j, "true");
    case 'f':
        return literal(j, "false");
    case 'n':
        return literal(j, "null");
    case -1:
        return fail(j, "expected a value, found the end");
    default:
        return number(j, &s);
    }
}

/* ---- the facts ---------------------------------------------------------------------- */

/* A string member kept in out, any other value skipped. */
static int opt_string(struct jp *j, char *out)
{
    if (peek(j) != '"')
        return skip_value(j);
    return string(j, out, SF_JRPC_STR, NULL);
}

static int opt_number(struct jp *j, double *v)
{
    int c = peek(j);

    if (c != '-' && (c < '0' || c > '9'))
        return skip_value(j);
    *v = number_value(j);
    return j->why ? -1 : 0;
}

static int opt_int(struct jp *j, int64_t *v)
{
    double d = NAN;

    if (opt_number(j, &d) < 0)
        return -1;
    if (d == d && d >= -9.0e18 && d <= 9.0e18 && d == floor(d))
        *v = (int64_t)d;
    return 0;
}

static int meta_member(struct jp *j, const char *key, void *arg)
{
    struct sf_jrpc_msg *m = arg;

    if (strcmp(key, "traceparent") == 0)
        return opt_string(j, m->traceparent);
    if (strcmp(key, "tracestate") == 0)
        return opt_string(j, m->tracestate);
    if (strcmp(key, "baggage") == 0)
        return opt_string(j, m->baggage);
    return skip_value(j);
}

static int hint_member(struct jp *j, const char *key, void *arg)
{
    return strcmp(key, "name") == 0 ? opt_string(j, arg) : skip_value(j);
}

static int hint_elem(struct jp *j, size_t k, void *arg)
{
    if (k == 0 && peek(j) == '{')
        return obj_each(j, hint_member, arg);
    return skip_value(j);
}

static int prefs_member(struct jp *j, const char *key, void *arg)
{
    if (strcmp(key, "hints") == 0 && peek(j) == '[')
        return arr_each(j, hint_elem, arg);
    return skip_value(j);
}

static int count_elem(struct jp *j, size_t k, void *arg)
{
    *(int64_t *)arg = (int64_t)k + 1;
    return skip_value(j);
}

static int params_member(struct jp *j, const char *key, void *arg)
{
    struct sf_jrpc_msg *m = arg;

    if (strcmp(key, "name") == 0)
        return opt_string(j, m->name);
    if (strcmp(key, "_meta") == 0 && peek(j) == '{')
        return obj_each(j, meta_member, m);
    if (strcmp(key, "temperature") == 0)
        return opt_number(j, &m->temperature);
    if (strcmp(key, "topP") == 0 || strcmp(key, "top_p") == 0)
        return opt_number(j, &m->top_p);
    if (strcmp(key, "maxTokens") == 0 || strcmp(key, "max_tokens") == 0)
        return opt_int(j, &m->max_tokens);
    if (strcmp(key, "stopSequences") == 0 && peek(j) == '[') {
        m->stop_sequences = 0;
        return arr_each(j, count_elem, &m->stop_sequences);
    }
    if (strcmp(key, "modelPreferences") == 0 && peek(j) == '{')
        return obj_each(j, prefs_member, m->model_hint);
    return skip_value(j);
}

static int result_member(struct jp *j, const char *key, void *arg)
{
    struct sf_jrpc_msg *m = arg;

    if (strcmp(key, "isError") == 0 && peek(j) == 't') {
        m->tool_error = 1;
        return literal(j, "true");
    }
    return skip_value(j);
}

struct err_seen {
    struct sf_jrpc_msg *m;
    int code, message;
};

static int error_member(struct jp *j, const char *key, void *arg)
{
    struct err_seen *e = arg;
    double d;
    int c;

    if (strcmp(key, "code") == 0) {
        c = peek(j);
        if (c != '-' && (c < '0' || c > '9'))
            return fail(j, "error.code is not a number");
        d = number_value(j);
        if (j->why)
            return -1;
        if (!(d == floor(d) && d >= -9.0e18 && d <= 9.0e18))
            return fail(j, "error.code is not an integer");
        e->m->error_code = (int64_t)d;
        e->code++;
        return 0;
    }
    if (strcmp(key, "message") == 0) {
        if (peek(j) != '"')
            return fail(j, "error.message is not a string");
        e->message++;
        return string(j, e->m->error_msg, SF_JRPC_STR, NULL);
    }
    return skip_value(j);
}

enum { M_JSONRPC = 1, M_METHOD = 2, M_ID = 4, M_PARAMS = 8, M_RESULT = 16, M_ERROR = 32 };

struct msg_read {
    struct sf_jrpc_msg *m;
    unsigned seen;
    int version_ok;
    struct err_seen err;
};

static int once(struct jp *j, struct msg_read *r, unsigned bit)
{
    if (r->seen & bit)
        return fail(j, "duplicate member");
    r->seen |= bit;
    return 0;
}

static int id_value(struct jp *j, char *out)
{
    char s[SF_JRPC_STR - 2];
    size_t b;
    int c = peek(j);

    if (c == '"') {
        if (string(j, s, sizeof(s), NULL) < 0)
            return -1;
        out[0] = '"';
        b = strlen(s);
        memcpy(out + 1, s, b);
        out[b + 1] = '"';
        out[b + 2] = 0;
        return 0;
    }
    if (c == 'n') {
        memcpy(out, "null", 5);
        return literal(j, "null");
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (number(j, &b) < 0)
            return -1;
        if (j->i - b >= SF_JRPC_STR)
            return fail(j, "id longer than 255 bytes");
        memcpy(out, j->p + b, j->i - b);
        out[j->i - b] = 0;
        return 0;
    }
    return fail(j, "id is not a string, a number or null");
}

static int msg_member(struct jp *j, const char *key, void *arg)
{
    struct msg_read *r = arg;
    struct sf_jrpc_msg *m = r->m;
    char v[8];

    if (strcmp(key, "jsonrpc") == 0) {
        int cut;
        if (once(j, r, M_JSONRPC) < 0)
            return -1;
        if (peek(j) != '"')
            return fail(j, "\"jsonrpc\" is not \"2.0\"");
        if (string(j, v, sizeof(v), &cut) < 0)
            return -1;
        if (cut || strcmp(v, "2.0") != 0)
            return fail(j, "\"jsonrpc\" is not \"2.0\"");
        return 0;
    }
    if (strcmp(key, "method") == 0) {
        if (once(j, r, M_METHOD) < 0)
            return -1;
        if (peek(j) != '"')
            return fail(j, "method is not a string");
        return string(j, m->method, SF_JRPC_STR, NULL);
    }
    if (strcmp(key, "id") == 0)
        return once(j, r, M_ID) < 0 ? -1 : id_value(j, m->id);
    if (strcmp(key, "params") == 0) {
        if (once(j, r, M_PARAMS) < 0)
            return -1;
        if (peek(j) == '{')
            return obj_each(j, params_member, m);
        if (peek(j) == '[')
            return skip_value(j);
        return fail(j, "params is not an object or an array");
    }
    if (strcmp(key, "result") == 0) {
        if (once(j, r, M_RESULT) < 0)
            return -1;
        return peek(j) == '{' ? obj_each(j, result_member, m) : skip_value(j);
    }
    if (strcmp(key, "error") == 0) {
        if (once(j, r, M_ERROR) < 0)
            return -1;
        m->has_error = 1;
        r->err.m = m;
        return obj_each(j, error_member, &r->err);
    }
    return skip_value(j);
}

struct top {
    sf_jrpc_fn fn;
    void *arg;
    long count;
};

static int message(struct jp *j, struct top *t)
{
    struct sf_jrpc_msg m;
    struct msg_read r;
    size_t at = j->i, end;

    memset(&m, 0, sizeof(m));
    m.temperature = m.top_p = NAN;
    m.max_tokens = m.stop_sequences = -1;
    memset(&r, 0, sizeof(r));
    r.m = &m;
    if (peek(j) != '{')
        return fail(j, "a JSON-RPC message is an object");
    if (obj_each(j, msg_member, &r) < 0)
        return -1;
    end = j->i;
    j->i = at; /* errors below are the message's: they point at its start */
    if (!(r.seen & M_JSONRPC))
        return fail(j, "no \"jsonrpc\": \"2.0\"");
    if (r.seen & M_METHOD) {
        if (r.seen & (M_RESULT | M_ERROR))
            return fail(j, "a request with a result or an error");
        m.kind = (r.seen & M_ID) ? SF_JRPC_REQUEST : SF_JRPC_NOTIFICATION;
    } else {
        if (!(r.seen & M_ID))
            return fail(j, "neither a method nor an id");
        if (((r.seen & M_RESULT) != 0) == ((r.seen & M_ERROR) != 0))
            return fail(j, "a response needs exactly one of result and error");
        if ((r.seen & M_ERROR) && (r.err.code != 1 || r.err.message != 1))
            return fail(j, "an error needs one code and one message");
        m.kind = SF_JRPC_RESPONSE;
    }
    j->i = end;
    t->count++;
    t->fn(t->arg, &m);
    return 0;
}

static int batch_elem(struct jp *j, size_t k, void *arg)
{
    (void)k;
    j->depth--; /* a batch's elements are messages, each with the full depth */
    int rc = message(j, arg);
    j->depth++;
    return rc;
}

long sf_jrpc_parse(const char *p, size_t n, sf_jrpc_fn fn, void *arg, struct sf_jrpc_err *e)
{
    struct jp j = {.p = p, .n = n};
    struct top t = {fn, arg, 0};
    int c = peek(&j), rc;

    if (c == '[') {
        rc = arr_each(&j, batch_elem, &t);
        if (rc == 0 && t.count == 0)
            rc = fail(&j, "an empty batch");
    } else if (c == '{') {
        rc = message(&j, &t);
    } else {
        rc = fail(&j, c < 0 ? "no JSON text" : "not a JSON-RPC message (an object or a batch)");
    }
    if (rc == 0 && peek(&j) != -1)
        rc = fail(&j, "text after the message");
    if (rc < 0) {
        e->off = j.at;
        e->why = j.why;
        return -1;
    }
    return t.count;
}

int sf_jrpc_content_kind(const char *v, size_t n)
{
    size_t e = 0;

    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (e < n && v[e] != ';' && v[e] != ' ' && v[e] != '\t')
        e++;
    if (e == 17 && strncasecmp(v, "text/event-stream", 17) == 0)
        return 2;
    if (e < 12 || strncasecmp(v, "application/", 12) != 0)
        return 0;
    if ((e == 16 && strncasecmp(v + 12, "json", 4) == 0) ||
        (e == 20 && strncasecmp(v + 12, "json-rpc", 8) == 0) ||
        (e > 17 && strncasecmp(v + e - 5, "+json", 5) == 0))
        return 1;
    return 0;
}

int sf_jrpc_mentioned(const char *p, size_t n)
{
    const char *e = p + n, *q = p;

    while (e - q >= 9 && (q = memchr(q, '"', (size_t)(e - q - 8))) != NULL) {
        if (memcmp(q, "\"jsonrpc\"", 9) == 0)
            return 1;
        q++;
    }
    return 0;
}

/* h1_head.c - one HTTP/1 header section: its start line and the facts of its fields.
 * See h1_head.h.
 */
#include "h1_head.h"

#include <string.h>
#include <strings.h>

#include "ctx.h"
#include "sf_jsonrpc.h"
#include "sf_text.h"
#include "sf_tracectx.h"

static int name_is(const char *n, size_t nl, const char *want)
{
    size_t wl = strlen(want);

    return nl == wl && strncasecmp(n, want, wl) == 0;
}

/* Case-insensitive token search in a comma list ("gzip, chunked"). */
static int has_token(const char *v, size_t vl, const char *tok)
{
    size_t tl = strlen(tok), pos = 0, l;
    const char *t;

    while (sf_text_list_next(v, vl, &pos, &t, &l))
        if (l == tl && strncasecmp(t, tok, tl) == 0)
            return 1;
    return 0;
}

static int64_t parse_clen(const char *v, size_t vl)
{
    int64_t x = 0;
    size_t i;

    if (vl == 0 || vl > 18)
        return -2;
    for (i = 0; i < vl; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -2;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

static void field(struct h1_head_facts *f, const char *n, size_t nl, const char *v, size_t vl)
{
    int id = sf_tracectx_header_id(n, nl);
    int keep = f->request && sf_attrs_keep_match(&f->pctx->lim.keep, n, nl);

    if (id >= 0 || keep) {
        if (f->ctx == NULL)
            f->ctx = p2s_set_get(f->pctx);
        if (f->ctx && id >= 0)
            sf_tracectx_set_add_id(f->ctx, id, (const uint8_t *)v, vl);
        if (f->ctx && keep)
            sf_tracectx_set_keep(f->ctx, n, nl, (const uint8_t *)v, vl);
    }
    switch (n[0] | 0x20) {
    case 'h':
        if (name_is(n, nl, "host") && f->host == NULL) {
            f->host = v;
            f->host_len = vl;
        } else if (name_is(n, nl, "http2-settings") && f->h2s_count++ == 0) {
            f->h2s = v;
            f->h2s_len = vl;
        }
        break;
    case 'c':
        if (name_is(n, nl, "content-length")) {
            int64_t c = parse_clen(v, vl);
            f->clen = (f->clen >= 0 && c != f->clen) ? -2 : c;
        } else if (name_is(n, nl, "content-type")) {
            f->rpc_kind = sf_jrpc_content_kind(v, vl);
        } else if (name_is(n, nl, "content-encoding")) {
            f->encoding = v;
            f->encoding_len = vl;
        }
        break;
    case 's':
        if (name_is(n, nl, "sec-websocket-extensions") && f->ws_ext == NULL) {
            f->ws_ext = v;
            f->ws_ext_len = vl;
        }
        break;
    case 'm':
        if (name_is(n, nl, "mcp-session-id") && f->session == NULL) {
            f->session = v;
            f->session_len = vl;
        }
        break;
    case 't':
        if (name_is(n, nl, "transfer-encoding") && vl >= 7 &&
            strncasecmp(v + vl - 7, "chunked", 7) == 0)
            f->chunked = 1;
        break;
    case 'u':
        if (name_is(n, nl, "upgrade")) {
            f->upgrade_any = 1;
            f->upgrade_h2c |= has_token(v, vl, "h2c");
            f->upgrade_ws |= has_token(v, vl, "websocket");
        }
        break;
    default:
        break;
    }
}

void h1_head_fields(struct h1_head_facts *f, struct p2s_ctx *ctx, int request, const char *p,
                    const char *end)
{
    memset(f, 0, sizeof(*f));
    f->clen = -1;
    f->pctx = ctx;
    f->request = request;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *e, *colon, *v;
        if (nl == NULL)
            nl = end;
        e = nl;
        if (e > p && e[-1] == '\r')
            e--;
        colon = memchr(p, ':', (size_t)(e - p));
        /* skip obs-fold continuations and lines without a colon */
        if (colon && colon > p && *p != ' ' && *p != '\t') {
            v = colon + 1;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
            field(f, p, (size_t)(colon - p), v, (size_t)(e - v));
        }
        p = nl + 1;
    }
}

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

int h1_head_request_line(const char *p, size_t n, size_t *ml, const char **t, size_t *tl)
{
    size_t i = 0, j;

    while (i < n && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i > 32 || i >= n || p[i] != ' ')
        return -1;
    *ml = i;
    j = ++i;
    while (j < n && p[j] != ' ')
        j++;
    if (j == i || n - j != 9 || memcmp(p + j, " HTTP/1.", 8) != 0)
        return -1;
    *t = p + i;
    *tl = j - i;
    return 0;
}

int h1_head_status_line(const char *p, size_t n, int *status)
{
    if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' || p[9] < '1' || p[9] > '5' ||
        p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' || (n > 12 && p[12] != ' '))
        return -1;
    *status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    return 0;
}

size_t h1_head_end(const uint8_t *p, size_t n)
{
    const uint8_t *q = p, *end = p + n;

    while ((q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
        if (end - q >= 2 && q[1] == '\n')
            return (size_t)(q - p) + 2;
        if (end - q >= 3 && q[1] == '\r' && q[2] == '\n')
            return (size_t)(q - p) + 3;
        q++;
    }
    return 0;
}

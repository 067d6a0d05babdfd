/* ch.c - a ClickHouse HTTP client over libcurl, and the RowBinary encoding (see ch.h).
 *
 * One easy handle per connection, reused for every request (keep-alive).  A request
 * that fails before the server answered, or that the server refuses for load, is
 * tried again after 100, 200, 400, 800 ms; every other failure is the query's and
 * comes back at once with the server's message.  An INSERT is not tried again blindly
 * when the server may have written it (ch_insert): a lost answer must not write the
 * rows twice, and ClickHouse 18.16 dedupes inserts only into Replicated tables.
 */
#include "ch.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sf_sha256.h"

struct ch {
    CURL *curl;
    char *url; /* base URL, with '?' or '&' ready for query= */
    char db[CH_IDENT_MAX];
    long fail_at, fail_count, nreq; /* SF_CH_FAIL_AT / SF_CH_FAIL_COUNT */
    int trace;                      /* SF_CH_TRACE: each request's number and start */
    unsigned long long qid_base;    /* random: query_id of this client's INSERTs */
    unsigned long ninsert;
    char *answering;        /* ch_cluster found shards missing: those that answer, for remote() */
    unsigned long nquery;   /* ch_query's answers: how many, */
    unsigned long long nin; /* and their bytes */
    int mem_known;          /* ch_mem_limit's, once asked */
    uint64_t mem_limit;
};

/* Transient failures: 1 nothing was written, 2 the request may have been. */
enum { CH_AGAIN = 1, CH_UNKNOWN = 2 };

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if (v == NULL || *v == '\0')
        return dflt;
    n = strtol(v, &end, 10);
    return *end == '\0' ? n : dflt;
}

int ch_opt(struct ch_opts *o, int opt, const char *arg)
{
    const char **to = opt == CH_O_URL        ? &o->url
                      : opt == CH_O_CLUSTER  ? &o->cluster
                      : opt == CH_O_DATABASE ? &o->database
                                             : NULL;

    if (to)
        *to = arg;
    return to != NULL;
}

int ch_ident_ok(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n < CH_IDENT_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

int ch_open(struct ch **out, const char *url, const char *db, struct sf_err *err)
{
    struct ch *c;
    size_t n = strlen(url), dn = strlen(db);

    *out = NULL;
    if (!ch_ident_ok(db))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "database name '%.64s': letters, digits and '_' only", db);
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "ClickHouse URL '%.200s': http://HOST:PORT/ (the HTTP interface)", url);
    if ((c = calloc(1, sizeof(*c))) == NULL || (c->url = malloc(n + 2)) == NULL ||
        curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || (c->curl = curl_easy_init()) == NULL) {
        ch_close(c);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "cannot start libcurl");
    }
    memcpy(c->url, url, n);
    c->url[n] = memchr(url, '?', n) ? '&' : '?';
    c->url[n + 1] = '\0';
    memcpy(c->db, db, dn + 1);
    c->fail_at = env_long("SF_CH_FAIL_AT", 0);
    c->fail_count = env_long("SF_CH_FAIL_COUNT", 1);
    c->trace = env_long("SF_CH_TRACE", 0) > 0;
    if (getentropy(&c->qid_base, sizeof(c->qid_base)) != 0)
        c->qid_base = (unsigned long long)getpid() << 32 ^ (unsigned long long)time(NULL);
    *out = c;
    return 0;
}

void ch_close(struct ch *c)
{
    if (c == NULL)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->url);
    free(c->answering);
    free(c);
}

int ch_connect(struct ch **out, const struct ch_opts *o, struct ch_shards *s, struct sf_err *err)
{
    int rc = ch_open(out, o->url, o->database ? o->database : CH_DATABASE_DEFAULT, err);

    memset(s, 0, sizeof(*s));
    if (rc == 0 && o->cluster && (rc = ch_cluster(*out, o->cluster, s, err)) != 0) {
        ch_close(*out);
        *out = NULL;
    }
    return rc;
}

void ch_data_name(const struct ch_opts *o, char *out, size_t n)
{
    char shown[256];

    ch_url_shown(o->url, shown, sizeof(shown));
    snprintf(out, n, "%s %s%s%s", shown, o->database ? o->database : CH_DATABASE_DEFAULT,
             o->cluster ? " on cluster " : "", o->cluster ? o->cluster : "");
}

void ch_url_shown(const char *url, char *out, size_t n)
{
    const char *host = strstr(url, "://"), *at, *slash;

    host = host ? host + 3 : url;
    at = strchr(host, '@');
    slash = strchr(host, '/');
    if (at && (slash == NULL || at < slash))
        snprintf(out, n, "%.*s%s", (int)(host - url), url, at + 1);
    else
        snprintf(out, n, "%s", url);
}

const char *ch_db(const struct ch *c)
{
    return c->db;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    return sf_buf_append(arg, p, size * n) == 0 ? size * n : 0;
}

/* Server codes that mean "try again": overload and network trouble between shards.
 * Returns 0 (not transient), CH_AGAIN (refused before any row was written) or
 * CH_UNKNOWN. */
static int transient_code(const struct sf_buf *r)
{
    static const int codes[] = {
        159 /* TIMEOUT_EXCEEDED */,     209 /* SOCKET_TIMEOUT */,
        210 /* NETWORK_ERROR */,        216 /* QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING */,
        279 /* ALL_CONNECTION_TRIES */, 319 /* UNKNOWN_STATUS_OF_INSERT */};
    int code;

    if (r->len < 7 || memcmp(r->data, "Code: ", 6) != 0)
        return 0;
    code = (int)strtol((const char *)r->data + 6, NULL, 10);
    if (code == 202 /* TOO_MANY_QUERIES */ || code == 252 /* TOO_MANY_PARTS */)
        return CH_AGAIN;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (code == codes[i])
            return CH_UNKNOWN;
    return 0;
}

/* One attempt.  Returns 0, CH_AGAIN or CH_UNKNOWN (transient: try again) or SF_E_DB. */
static int attempt(struct ch *c, const char *url, const void *body, size_t n, struct sf_buf *r,
                   struct sf_err *err)
{
    CURLcode cc;
    long status = 0;

    sf_buf_reset(r);
    c->nreq++;
    if (c->trace) /* the tests' fault injection counts these */
        fprintf(stderr, "ClickHouse request %ld: %.*s\n", c->nreq, (int)(n < 70 ? n : 70),
                n ? (const char *)body : "");
    if (c->fail_at > 0 && c->nreq >= c->fail_at && c->nreq < c->fail_at + c->fail_count) {
        sf_err_set(err, SF_E_DB, UINT64_MAX, "request %ld failed (SF_CH_FAIL_AT)", c->nreq);
        return CH_AGAIN;
    }
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 600L);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    cc = curl_easy_perform(c->curl);
    if (cc == CURLE_WRITE_ERROR) /* on_data: the answer outgrew its buffer */
        return sf_err_set(err, SF_E_LIMIT, UINT64_MAX,
                          "ClickHouse: an answer larger than %zu MiB (CH_BODY_MAX)", r->max >> 20);
    if (cc != CURLE_OK) {
        sf_err_set(err, SF_E_DB, UINT64_MAX, "ClickHouse: %s", curl_easy_strerror(cc));
        /* only a connection never made is sure to have sent nothing */
        return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
                       cc == CURLE_COULDNT_RESOLVE_PROXY
                   ? CH_AGAIN
                   : CH_UNKNOWN;
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200)
        return 0;
    {
        const char *t = r->len ? (const char *)r->data : "";
        size_t k = 0;
        while (k < r->len && k < 400 && t[k] != '\n')
            k++;
        sf_err_set(err, SF_E_DB, UINT64_MAX, "ClickHouse: HTTP %ld: %.*s", status, (int)k, t);
    }
    if (status >= 502 && status <= 504)
        return CH_UNKNOWN;
    return transient_code(r) ? transient_code(r) : SF_E_DB;
}

/* After an INSERT's attempt of query_id qid failed with CH_UNKNOWN: wait until no
 * query of that id runs, then ask landed.  Returns 1 (it landed), 0 (send again) or
 * an error. */
static int insert_landed(struct ch *c, const char *qid, ch_landed_fn landed, void *arg,
                         struct sf_err *err)
{
    char sql[160];
    uint64_t running = 1;
    int rc = 0;

    snprintf(sql, sizeof(sql), "SELECT count() FROM system.processes WHERE query_id = '%s'", qid);
    for (int i = 0; i < 600 && rc == 0 && running; i++) {
        struct timespec ts = {0, 100000000L};
        if ((rc = ch_scalar(c, sql, &running, err)) == 0 && running)
            nanosleep(&ts, NULL);
    }
    if (rc == 0 && running)
        return sf_err_set(err, SF_E_DB, UINT64_MAX,
                          "ClickHouse: an INSERT whose answer was lost still runs after 60 s");
    return rc ? rc : landed(arg, err);
}

/* ch_query and ch_insert: qid NULL for a query, else the INSERT's query_id. */
static int request(struct ch *c, const char *sql, const void *body, size_t n, struct sf_buf *out,
                   const char *qid, ch_landed_fn landed, void *arg, int tries, struct sf_err *err)
{
    struct sf_buf url, tmp;
    char *q = NULL;
    int rc = 0;

    sf_buf_init(&url, 1u << 20);
    sf_buf_init(&tmp, CH_BODY_MAX);
    if (body != NULL && (q = curl_easy_escape(c->curl, sql, 0)) == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    /* no database= parameter: it must exist, and every name here is qualified */
    if (sf_buf_printf(&url, "%s%s%s%s%s", c->url, q ? "query=" : "", q ? q : "",
                      qid ? "&query_id=" : "", qid ? qid : ""))
        rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "statement too long for a URL");
    /* a query longer than the server parses by default (max_query_size, 256 KiB: the IN
     * list of some thousand sources, long names) says how long it is; only then, since a
     * read-only user may not change settings */
    if (rc == 0 && body == NULL && strlen(sql) > CH_QUERY_PARSE_DEFAULT &&
        sf_buf_printf(&url, "max_query_size=%zu", strlen(sql) + 1))
        rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "statement too long for a URL");
    curl_free(q);
    if (body == NULL) {
        body = sql;
        n = strlen(sql);
    }
    for (int i = 0; (i == 0 && rc == 0) || (rc > 0 && i < tries); i++) {
        if (i > 0) {
            struct timespec ts = {0, (100L << (i - 1)) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (rc == CH_UNKNOWN && qid && landed) {
            char lost[sizeof(err->msg)], why[sizeof(err->msg)];
            snprintf(lost, sizeof(lost), "%s", err->msg);
            if ((rc = insert_landed(c, qid, landed, arg, err)) == 1) {
                rc = 0;
                break;
            }
            if (rc < 0) {
                snprintf(why, sizeof(why), "%s", err->msg);
                sf_err_set(err, rc, UINT64_MAX, "%.100s (%.60s), and then: %s", lost, sql, why);
                break;
            }
        }
        rc = attempt(c, (const char *)url.data, body, n, out ? out : &tmp, err);
    }
    if (rc > 0)
        rc = SF_E_DB;
    sf_buf_free(&url);
    sf_buf_free(&tmp);
    return rc;
}

int ch_query(struct ch *c, const char *sql, const void *body, size_t n, struct sf_buf *out,
             struct sf_err *err)
{
    int rc = request(c, sql, body, n, out, NULL, NULL, NULL, CH_RETRIES, err);

    if (rc == 0) { /* out holds the answer alone */
        c->nquery++;
        c->nin += out ? out->len : 0;
    }
    return rc;
}

void ch_received(const struct ch *c, unsigned long *queries, unsigned long long *bytes)
{
    *queries = c ? c->nquery : 0;
    *bytes = c ? c->nin : 0;
}

int ch_insert(struct ch *c, const char *sql, const void *body, size_t n, ch_landed_fn landed,
              void *arg, struct sf_err *err)
{
    char qid[64];

    assert(body != NULL && strncmp(sql, "INSERT", 6) == 0);
    snprintf(qid, sizeof(qid), "spanfold-%016llx-%lu", c->qid_base, ++c->ninsert);
    return request(c, sql, body, n, NULL, qid, landed, arg, CH_RETRIES, err);
}

int ch_scalar(struct ch *c, const char *sql, uint64_t *v, struct sf_err *err)
{
    struct sf_buf r;
    int rc;

    sf_buf_init(&r, 4096);
    rc = ch_query(c, sql, NULL, 0, &r, err);
    if (rc == 0 && (r.len == 0 || r.data[0] < '0' || r.data[0] > '9'))
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "ClickHouse: not a number: %.40s",
                        r.len ? (const char *)r.data : "(empty)");
    if (rc == 0)
        *v = strtoull((const char *)r.data, NULL, 10);
    sf_buf_free(&r);
    return rc;
}

int ch_mem_limit(struct ch *c, uint64_t *limit, struct sf_err *err)
{
    int rc = 0;

    if (!c->mem_known && (rc = ch_scalar(c,
                                         "SELECT toUInt64(value) FROM system.settings WHERE name = "
                                         "'max_memory_usage'",
                                         &c->mem_limit, err)) == 0)
        c->mem_known = 1;
    *limit = c->mem_limit;
    return rc;
}

uint64_t ch_env_bytes(const char *env, uint64_t dflt)
{
    const char *s = getenv(env);
    char *end;
    unsigned long long v;

    if (s == NULL || *s == '\0' || s[0] == '-')
        return dflt;
    errno = 0;
    v = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0' && v > 0 ? (uint64_t)v : dflt;
}

unsigned ch_buckets(uint64_t items, uint64_t bytes, uint64_t limit)
{
    uint64_t per = bytes ? limit / bytes : limit;

    if (limit == 0)
        return 1;
    per = per ? per : 1;
    return items / per >= 4096 ? 4096u : (unsigned)(items / per + 1);
}

int ch_select_ask(void *arg, const char *sql, char *out, size_t n, struct sf_err *err)
{
    struct ch *c = arg;
    struct sf_buf q, r;
    uint64_t limit = 0;
    size_t len;
    int rc;

    assert(n > 0);
    sf_buf_init(&q, strlen(sql) + 128);
    sf_buf_init(&r, 4096);
    rc = ch_mem_limit(c, &limit, err);
    /* a partial sort keeps every block it reads on 18.16: spilled past half the limit */
    if (rc == 0 && (sf_buf_printf(&q, "%s", sql) ||
                    (limit && sf_buf_printf(&q, " SETTINGS max_bytes_before_external_sort = %llu",
                                            (unsigned long long)(limit / 2)))))
        rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "query too long");
    if (rc == 0)
        rc = ch_query(c, (const char *)q.data, NULL, 0, &r, err);
    for (len = 0; rc == 0 && len < r.len && r.data[len] != '\t' && r.data[len] != '\n'; len++)
        ;
    if (rc == 0 && len >= n)
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX,
                        "ClickHouse: an answer of %zu bytes, not one value", len);
    if (rc == 0) {
        if (len)
            memcpy(out, r.data, len);
        out[len] = '\0';
    }
    sf_buf_free(&q);
    sf_buf_free(&r);
    return rc;
}

/* ---- a cluster's shards ----------------------------------------------------------------- */

/* The next TabSeparated field of the line at *p (up to end), NUL-terminated in place. */
static char *field(char **p, char *end)
{
    char *f = *p, *e = f;

    while (e < end && *e != '\t' && *e != '\n')
        e++;
    *p = e < end ? e + 1 : end;
    *e = '\0';
    return f;
}

/* Whether shard `addrs` ("host:port", replicas '|'-separated) has database db: 1, 0,
 * or -1 (it did not answer: the reason in why). */
static int shard_has_db(struct ch *c, const char *addrs, char *why, size_t n)
{
    char sql[1024];
    struct sf_buf r;
    struct sf_err err;
    int rc;

    snprintf(sql, sizeof(sql),
             "SELECT count() FROM remote('%s', system, databases) WHERE name = '%s'"
             " SETTINGS skip_unavailable_shards = 0",
             addrs, c->db);
    sf_buf_init(&r, 4096);
    sf_err_clear(&err);
    rc = request(c, sql, NULL, 0, &r, NULL, NULL, NULL, 1, &err);
    if (rc == 0 && r.len > 0 && (r.data[0] == '0' || r.data[0] == '1'))
        rc = r.data[0] == '1';
    else {
        const char *m = rc ? err.msg : "not a number";
        /* what the server says of a dead shard differs by release (18.16: "Empty list of
         * columns passed"; later ones: connection refused): not worth repeating */
        (void)m;
        snprintf(why, n, "did not answer");
        rc = -1;
    }
    sf_buf_free(&r);
    return rc;
}

int ch_cluster(struct ch *c, const char *cluster, struct ch_shards *s, struct sf_err *err)
{
    char sql[256], *url, *p, *end, addrs[512] = "", shard[16] = "", why[256];
    char *missing = s->missing;
    size_t len = strlen(c->url), used = 0, n = sizeof(s->missing);
    struct sf_buf r, ok;
    int rc;

    assert(ch_ident_ok(cluster));
    memset(s, 0, sizeof(*s));
    /* every query from here on answers with the shards that can */
    if ((url = realloc(c->url, len + 32)) == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    memcpy(url + len, "skip_unavailable_shards=1&", 27);
    c->url = url;
    snprintf(sql, sizeof(sql),
             "SELECT shard_num, host_address, port FROM system.clusters WHERE cluster = '%s'"
             " ORDER BY shard_num, replica_num FORMAT TabSeparated",
             cluster);
    sf_buf_init(&r, CH_BODY_MAX);
    sf_buf_init(&ok, CH_TABLE_MAX - 64);
    if ((rc = ch_query(c, sql, NULL, 0, &r, err)) != 0 || sf_buf_append(&r, "", 1) != 0) {
        sf_buf_free(&r);
        return rc ? rc : sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    p = (char *)r.data;
    end = p + r.len - 1;
    /* rows of one shard are its replicas: probe a shard when the next one starts */
    for (;;) {
        char *num = p < end ? field(&p, end) : NULL, *host = NULL, *port = NULL;
        if (num) {
            host = field(&p, end);
            port = field(&p, end);
        }
        if (shard[0] && (num == NULL || strcmp(num, shard) != 0)) {
            int has = shard_has_db(c, addrs, why, sizeof(why));
            s->total++;
            s->up += has == 1;
            s->no_db += has == 0;
            s->down += has < 0;
            if (has != 1 && used < n)
                used += (size_t)snprintf(missing + used, n - used, "%sshard %s (%s): %s",
                                         used ? "; " : "", shard, addrs,
                                         has == 0 ? "no database" : why);
            if (has == 1 && sf_buf_printf(&ok, "%s%s", ok.len ? "," : "", addrs) != 0)
                rc = SF_E_LIMIT;
            addrs[0] = '\0';
        }
        if (num == NULL)
            break;
        /* an address from the server's own config, quoted into SQL: refuse anything odd */
        if (strspn(host, "0123456789abcdefABCDEF.:") != strlen(host) ||
            strspn(port, "0123456789") != strlen(port) || !*port) {
            sf_buf_free(&r);
            sf_buf_free(&ok);
            return sf_err_set(err, SF_E_DB, UINT64_MAX, "cluster %s: an odd shard address %.40s",
                              cluster, host);
        }
        snprintf(shard, sizeof(shard), "%.15s", num);
        snprintf(addrs + strlen(addrs), sizeof(addrs) - strlen(addrs), "%s%s%s%s:%s",
                 addrs[0] ? "|" : "", strchr(host, ':') ? "[" : "", host,
                 strchr(host, ':') ? "]" : "", port);
    }
    sf_buf_free(&r);
    if (rc == 0 && s->up < s->total && s->up > 0) {
        free(c->answering);
        if ((c->answering = malloc(ok.len + 1)) == NULL)
            rc = SF_E_NOMEM;
        else {
            memcpy(c->answering, ok.data, ok.len);
            c->answering[ok.len] = '\0';
        }
    }
    sf_buf_free(&ok);
    if (rc)
        return sf_err_set(err, rc, UINT64_MAX, "cluster %s: too many shards answered (%u)", cluster,
                          s->up);
    if (s->total == 0)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "no cluster %s in system.clusters", cluster);
    if (s->up == 0)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "no shard of cluster %s answered: %s", cluster,
                          missing);
    if (s->up < s->total) {
        char head[96];
        snprintf(head, sizeof(head), "%u of %u shards of cluster %s answered; missing: ", s->up,
                 s->total, cluster);
        if (strlen(head) + strlen(missing) + 1 <= n) {
            memmove(missing + strlen(head), missing, strlen(missing) + 1);
            memcpy(missing, head, strlen(head));
        }
    }
    return 0;
}

int ch_partial(const struct ch *c)
{
    return c->answering != NULL;
}

int ch_table(const struct ch *c, int cluster, const char *table, char *out, size_t n)
{
    int k;

    if (!cluster)
        k = snprintf(out, n, "%s.%s", c->db, table);
    else if (c->answering == NULL)
        k = snprintf(out, n, "%s.%s_d", c->db, table);
    else
        k = snprintf(out, n, "remote('%s', %s, %s)", c->answering, c->db, table);
    return k > 0 && (size_t)k < n ? 0 : SF_E_LIMIT;
}

/* ---- RowBinary ------------------------------------------------------------------------ */

int ch_put_u64(struct sf_buf *b, uint64_t v)
{
    unsigned char x[8];

    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    return sf_buf_append(b, x, 8);
}

int ch_put_f64(struct sf_buf *b, double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof(u));
    return ch_put_u64(b, u);
}

int ch_put_str(struct sf_buf *b, const void *s, size_t n)
{
    unsigned char x[10];
    size_t k = 0, v = n;

    do {
        x[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return sf_buf_append(b, x, k) || sf_buf_append(b, s, n) ? SF_E_LIMIT : 0;
}

int ch_put_null(struct sf_buf *b, int is_null)
{
    unsigned char x = is_null ? 1 : 0;

    return sf_buf_append(b, &x, 1);
}

int ch_get_u64(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    if (end - *p < 8)
        return -1;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = (*v << 8) | (*p)[i];
    *p += 8;
    return 0;
}

int ch_get_str(const unsigned char **p, const unsigned char *end, const unsigned char **s,
               size_t *n)
{
    uint64_t v = 0;
    int shift = 0;

    for (;;) {
        if (*p >= end || shift > 56)
            return -1;
        v |= (uint64_t)(**p & 0x7f) << shift;
        shift += 7;
        if ((*(*p)++ & 0x80) == 0)
            break;
    }
    if ((uint64_t)(end - *p) < v)
        return -1;
    *s = *p;
    *n = (size_t)v;
    *p += v;
    return 0;
}

uint64_t ch_hash(const void *s, size_t n)
{
    return s ? sf_sha256_u64(s, n) : 0;
}

uint64_t ch_source_key(const char *sha256_hex, const char *path, const char *started)
{
    uint64_t v = 0;

    if (sha256_hex && strlen(sha256_hex) >= 16 && strspn(sha256_hex, "0123456789abcdef") >= 16) {
        for (int i = 0; i < 16; i++) {
            char ch = sha256_hex[i];
            v = (v << 4) | (uint64_t)(ch <= '9' ? ch - '0' : ch - 'a' + 10);
        }
        return v;
    }
    {
        struct sf_buf b;
        sf_buf_init(&b, 1u << 16);
        sf_buf_printf(&b, "%s", path ? path : "");
        sf_buf_append(&b, "", 1);
        sf_buf_printf(&b, "%s", started ? started : "");
        v = ch_hash(b.data, b.len);
        sf_buf_free(&b);
    }
    return v;
}

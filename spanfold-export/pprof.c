/* pprof.c - pprof profiles (gzip-compressed protobuf, export/profile.proto via
 * protobuf-c) with the sample labels Pyroscope uses to link profiles to traces:
 * span_id, trace_id and span_name.
 *
 * Samples are aggregated by (stack, span): one pprof Sample each, values
 * [samples/count, cpu/nanoseconds] (the period summed; for events that are not
 * time-based the second value is the summed event period).  Every distinct frame
 * name is one Function and one Location (no addresses: the folded stacks carry
 * symbols only); location ids are leaf first, as pprof wants.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "profile.pb-c.h"
#include "strmap.h"

struct agg {
    struct strmap keys; /* "frames\x1fspan" */
    int64_t *count, *period;
    size_t cap;
    int64_t t_first, t_last, period_hint;
};

static int agg_add(struct agg *a, const struct ex_sample *s)
{
    size_t fl = s->frames ? strlen(s->frames) : 0, sl = s->span_id ? strlen(s->span_id) : 0;
    char *k = malloc(fl + sl + 2);
    long i;

    if (k == NULL)
        return -1;
    memcpy(k, s->frames ? s->frames : "", fl);
    k[fl] = '\x1f';
    memcpy(k + fl + 1, s->span_id ? s->span_id : "", sl);
    i = strmap_intern(&a->keys, k, fl + 1 + sl);
    free(k);
    if (i < 0)
        return -1;
    if ((size_t)i >= a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 1024;
        int64_t *c = realloc(a->count, nc * sizeof(*c)), *p;
        if (c == NULL)
            return -1;
        a->count = c;
        p = realloc(a->period, nc * sizeof(*p));
        if (p == NULL)
            return -1;
        a->period = p;
        memset(a->count + a->cap, 0, (nc - a->cap) * sizeof(*c));
        memset(a->period + a->cap, 0, (nc - a->cap) * sizeof(*p));
        a->cap = nc;
    }
    a->count[i]++;
    a->period[i] += s->period > 0 ? s->period : 1;
    if (a->period_hint == 0 && s->period > 0)
        a->period_hint = s->period;
    return 0;
}

/* Everything the Profile message points into, freed at once. */
struct build {
    struct strmap strs, funcs;
    Perftools__Profiles__Profile prof;
    Perftools__Profiles__ValueType vt[3];
    Perftools__Profiles__ValueType *vtp[2];
};

static int64_t str_idx(struct build *b, const char *s)
{
    return strmap_intern(&b->strs, s ? s : "", s ? strlen(s) : 0);
}

static void span_labels(struct ex_ctx *c, const char *span, char *trace, size_t tn, char *name,
                        size_t nn)
{
    sqlite3_stmt *st;

    trace[0] = name[0] = 0;
    if (sqlite3_prepare_v2(sf_db_handle(c->db),
                           "SELECT trace_id, method, path, grpc_service, grpc_method FROM spans "
                           "WHERE span_id = ?1 LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, span, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        const char *m = (const char *)sqlite3_column_text(st, 1),
                   *p = (const char *)sqlite3_column_text(st, 2);
        const char *gs = (const char *)sqlite3_column_text(st, 3),
                   *gm = (const char *)sqlite3_column_text(st, 4);
        snprintf(trace, tn, "%s", t ? t : "");
        if (gs && gm)
            snprintf(name, nn, "%s/%s", gs, gm);
        else
            snprintf(name, nn, "%s %s", m ? m : "", p ? p : "");
    }
    sqlite3_finalize(st);
}

static Perftools__Profiles__Label *label(struct build *b, const char *key, const char *val)
{
    Perftools__Profiles__Label *l = malloc(sizeof(*l));

    if (l == NULL)
        return NULL;
    perftools__profiles__label__init(l);
    l->key = str_idx(b, key);
    l->str = str_idx(b, val);
    return l;
}

/* One pprof Sample for aggregate i ("frames\x1fspan"). */
static Perftools__Profiles__Sample *make_sample(struct ex_ctx *c, struct build *b, struct agg *a,
                                                size_t i)
{
    Perftools__Profiles__Sample *s = calloc(1, sizeof(*s));
    const char *key = a->keys.keys[i], *sep = strchr(key, '\x1f'), *f = key;
    size_t nf = 1;

    if (s == NULL)
        return NULL;
    perftools__profiles__sample__init(s);
    for (const char *p = key; p < sep; p++)
        nf += *p == ';';
    s->location_id = calloc(nf, sizeof(uint64_t));
    s->value = calloc(2, sizeof(int64_t));
    s->label = calloc(3, sizeof(*s->label));
    if (!s->location_id || !s->value || !s->label)
        return s;
    /* folded stacks are root first; pprof wants the leaf first */
    for (size_t k = nf; f < sep && k > 0; k--) {
        const char *e = memchr(f, ';', (size_t)(sep - f));
        size_t len = e ? (size_t)(e - f) : (size_t)(sep - f);
        long fn = strmap_intern(&b->funcs, f, len);
        s->location_id[k - 1] = (uint64_t)fn + 1;
        s->n_location_id++;
        f += len + (e != NULL);
    }
    if (s->n_location_id < nf) /* an empty frame list: keep ids contiguous */
        memmove(s->location_id, s->location_id + (nf - s->n_location_id),
                s->n_location_id * sizeof(uint64_t));
    s->n_value = 2;
    s->value[0] = a->count[i];
    s->value[1] = a->period[i];
    if (sep[1]) {
        char trace[40], name[512];
        span_labels(c, sep + 1, trace, sizeof(trace), name, sizeof(name));
        s->label[s->n_label++] = label(b, "span_id", sep + 1);
        if (trace[0])
            s->label[s->n_label++] = label(b, "trace_id", trace);
        if (name[0])
            s->label[s->n_label++] = label(b, "span_name", name);
    }
    return s;
}

static int gzip_write(FILE *out, const uint8_t *buf, size_t n)
{
    z_stream z = {0};
    uint8_t chunk[65536];
    int rc;

    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    z.next_in = (uint8_t *)buf;
    z.avail_in = (uInt)n;
    do {
        size_t have;

        z.next_out = chunk;
        z.avail_out = sizeof(chunk);
        rc = deflate(&z, Z_FINISH);
        /* deflate filled the first `have` bytes of chunk (cppcheck cannot see that);
         * a short write (disk full) fails the export */
        have = sizeof(chunk) - z.avail_out;
        // cppcheck-suppress uninitvar
        if (have > 0 && fwrite(chunk, 1, have, out) != have)
            rc = Z_ERRNO;
    } while (rc == Z_OK);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

static int pack_and_write(struct ex_ctx *c, struct build *b)
{
    size_t len = perftools__profiles__profile__get_packed_size(&b->prof);
    uint8_t *buf = malloc(len ? len : 1);
    int rc;

    if (buf == NULL)
        return ex_fail("out of memory packing the profile");
    perftools__profiles__profile__pack(&b->prof, buf);
    rc = gzip_write(c->out, buf, len);
    free(buf);
    return rc ? ex_fail("failed to compress the profile") : 0;
}

static void free_build(struct build *b)
{
    Perftools__Profiles__Profile *p = &b->prof;

    for (size_t i = 0; i < p->n_sample; i++) {
        for (size_t k = 0; k < p->sample[i]->n_label; k++)
            free(p->sample[i]->label[k]);
        free(p->sample[i]->label);
        free(p->sample[i]->location_id);
        free(p->sample[i]->value);
        free(p->sample[i]);
    }
    for (size_t i = 0; i < p->n_location; i++) {
        free(p->location[i]->line[0]);
        free(p->location[i]->line);
        free(p->location[i]);
        free(p->function[i]);
    }
    free(p->sample);
    free(p->location);
    free(p->function);
    free(p->string_table);
    strmap_free(&b->strs);
    strmap_free(&b->funcs);
}

static int build_profile(struct ex_ctx *c, struct build *b, struct agg *a)
{
    Perftools__Profiles__Profile *p = &b->prof;

    perftools__profiles__profile__init(p);
    str_idx(b, ""); /* string_table[0] must be "" */
    for (int i = 0; i < 3; i++)
        perftools__profiles__value_type__init(&b->vt[i]);
    b->vt[0].type = str_idx(b, "samples");
    b->vt[0].unit = str_idx(b, "count");
    b->vt[1].type = str_idx(b, "cpu");
    b->vt[1].unit = str_idx(b, "nanoseconds");
    b->vt[2] = b->vt[1];
    b->vtp[0] = &b->vt[0];
    b->vtp[1] = &b->vt[1];
    p->n_sample_type = 2;
    p->sample_type = b->vtp;
    p->period_type = &b->vt[2];
    p->period = a->period_hint;
    p->time_nanos = a->t_first;
    p->duration_nanos = a->t_last - a->t_first;
    p->sample = calloc(a->keys.n ? a->keys.n : 1, sizeof(*p->sample));
    if (p->sample == NULL)
        return -1;
    for (size_t i = 0; i < a->keys.n; i++) {
        if ((p->sample[p->n_sample] = make_sample(c, b, a, i)) == NULL)
            return -1;
        p->n_sample++;
    }
    p->n_location = p->n_function = b->funcs.n;
    p->location = calloc(b->funcs.n ? b->funcs.n : 1, sizeof(*p->location));
    p->function = calloc(b->funcs.n ? b->funcs.n : 1, sizeof(*p->function));
    if (!p->location || !p->function)
        return -1;
    for (size_t i = 0; i < b->funcs.n; i++) {
        Perftools__Profiles__Function *fn = calloc(1, sizeof(*fn));
        Perftools__Profiles__Location *loc = calloc(1, sizeof(*loc));
        Perftools__Profiles__Line *line = calloc(1, sizeof(*line));
        if (!fn || !loc || !line)
            return -1;
        perftools__profiles__function__init(fn);
        perftools__profiles__location__init(loc);
        perftools__profiles__line__init(line);
        if ((loc->line = calloc(1, sizeof(*loc->line))) == NULL)
            return -1;
        fn->id = i + 1;
        fn->name = fn->system_name = str_idx(b, b->funcs.keys[i]);
        loc->id = i + 1;
        line->function_id = i + 1;
        loc->line[0] = line;
        loc->n_line = 1;
        p->function[i] = fn;
        p->location[i] = loc;
    }
    p->n_string_table = b->strs.n;
    p->string_table = b->strs.keys;
    return 0;
}

int pprof_write(struct ex_ctx *c)
{
    struct ex_sample_iter *it = ex_sample_iter_new(c);
    struct ex_sample s;
    struct agg a = {0};
    struct build b = {0};
    int rc;

    if (it == NULL)
        return 2;
    while ((rc = ex_sample_next(it, &s)) == 1) {
        int64_t t = s.ts_rt_ns != INT64_MIN ? s.ts_rt_ns : s.ts_ns;
        if (agg_add(&a, &s)) {
            rc = -1;
            break;
        }
        if (c->samples++ == 0)
            a.t_first = t;
        a.t_last = t;
    }
    ex_sample_iter_free(it);
    if (rc == 0 && build_profile(c, &b, &a) == 0)
        rc = pack_and_write(c, &b);
    else if (rc == 0)
        rc = ex_fail("out of memory building the profile");
    b.prof.string_table = NULL; /* owned by b.strs */
    free_build(&b);
    strmap_free(&a.keys);
    free(a.count);
    free(a.period);
    return rc < 0 ? 2 : rc;
}

/* collect.c - first-pass collection of trace contexts for the Trace Context
 * postdissector (see collect.h).
 *
 * The tree is walked in dissection order, which is what pairs fields that
 * Wireshark keeps in separate arrays:
 *
 *   tcp.stream                      -> the connection (request/response linking)
 *   http.request.method             -> a new HTTP/1 request; http.request.line items follow
 *   http.response.code              -> a new HTTP/1 response; http.response.line items follow
 *   http2.streamid                  -> a new HTTP/2 frame on that stream; then
 *   http2.header.name/.value pairs  -> its header block (":method" request, ":status" response)
 *   tls.handshake.type 1 + tls.handshake.extension.type 42 -> 0-RTT offered
 *   tls.handshake.type 20 from the client -> the client's Finished: early data is over
 *
 * Header values are read from the bytes behind each field (fi->ds_tvb), not from
 * the string value, because gRPC "true binary" metadata starts with a NUL byte.
 * Every header goes through lib/sf_tracectx, the parser pcap2spans uses.
 */
#include "collect.h"

#include <epan/proto.h>
#include <math.h>
#include <string.h>

#include "sf_attrs.h"
#include "sf_jsonrpc.h"
#include "sf_sse.h"
#include "sf_tracectx.h"

/* Per TCP connection, in file scope. */
struct tc_conn {
    wmem_list_t *h1_pending; /* HTTP/1 requests awaiting their response, oldest first */
    wmem_map_t *h2_pending;  /* HTTP/2 stream id -> request awaiting its response */
    wmem_map_t *h2_reqs;     /* HTTP/2 stream id -> its request, for the stream's other frames */
    address client;          /* the side that sent the ClientHello or the first request */
    guint32 client_port;
    gboolean client_known;
    gboolean early_offered;   /* ClientHello carried the early_data extension */
    gboolean client_finished; /* the client's Finished has been seen */
    int early_outcome;        /* enum tc_early, from EncryptedExtensions */
    wmem_array_t *early_msgs; /* early-data requests waiting for that verdict */
    wmem_map_t *rpc_reqs;     /* "DIR ID" -> struct rpc_req: JSON-RPC requests seen */
};

struct rpc_req {
    const char *method;
    guint32 frame;
};

struct tc_pending {
    struct tc_msg *msg;
    guint32 frame;
    nstime_t ts;
};

enum msg_kind { MSG_NONE, MSG_H1_REQ, MSG_H1_RESP, MSG_H2 };

struct walk {
    const struct tc_wanted *w;
    packet_info *pinfo;
    struct tc_conn *conn;
    guint32 h2_stream;
    enum msg_kind kind;
    int h2_role; /* 1 request, 2 response, 0 not yet known (trailers) */
    struct sf_tracectx_set *set;
    guint8 *name; /* last HTTP/2 header name, awaiting its value */
    gsize name_len;
    int last_hs_type;
    gboolean ee_seen, ee_early; /* EncryptedExtensions in this frame, with early_data */
    GPtrArray *done;            /* finished struct tc_msg * */
    GPtrArray *rel;             /* const struct tc_msg * of streams touched by this frame */
    int rpc_kind;               /* the HTTP/1 message's body: sf_jrpc_content_kind */
    GArray *rpc;                /* struct tc_rpc of the frame */
};

/* Connections by tcp.stream index; rebuilt for every capture file. */
static wmem_map_t *conns;

GArray *tc_wanted_init(struct tc_wanted *w)
{
    static const char *const names[] = {
        "tcp.stream",         "http.request.method",
        "http.response.code", "http.request.line",
        "http.response.line", "http2.streamid",
        "http2.header.name",  "http2.header.value",
        "tls.handshake.type", "tls.handshake.extension.type",
        "http.content_type",  "http.file_data",
    };
    int *slots[] = {&w->tcp_stream,    &w->http_req_method,   &w->http_resp_code,
                    &w->http_req_line, &w->http_resp_line,    &w->h2_streamid,
                    &w->h2_hdr_name,   &w->h2_hdr_value,      &w->tls_hs_type,
                    &w->tls_ext_type,  &w->http_content_type, &w->http_file_data};
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(int));

    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        *slots[i] = proto_registrar_get_id_byname(names[i]);
        if (*slots[i] > 0)
            g_array_append_val(ids, *slots[i]);
    }
    return ids;
}

void tc_collect_reset(void)
{
    conns = NULL; /* file-scope memory is freed by Wireshark */
}

static struct tc_conn *conn_get(guint32 index)
{
    struct tc_conn *c;

    if (conns == NULL)
        conns = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    c = wmem_map_lookup(conns, GUINT_TO_POINTER(index + 1));
    if (c == NULL) {
        c = wmem_new0(wmem_file_scope(), struct tc_conn);
        c->h1_pending = wmem_list_new(wmem_file_scope());
        c->h2_pending = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
        c->h2_reqs = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
        c->early_msgs = wmem_array_new(wmem_file_scope(), sizeof(struct tc_msg *));
        c->rpc_reqs = wmem_map_new(wmem_file_scope(), g_str_hash, g_str_equal);
        wmem_map_insert(conns, GUINT_TO_POINTER(index + 1), c);
    }
    return c;
}

static gboolean from_client(const struct walk *wk)
{
    const struct tc_conn *c = wk->conn;

    return c && c->client_known && addresses_equal(&c->client, &wk->pinfo->src) &&
           c->client_port == wk->pinfo->srcport;
}

static void note_client(struct walk *wk)
{
    if (wk->conn && !wk->conn->client_known) {
        copy_address_wmem(wmem_file_scope(), &wk->conn->client, &wk->pinfo->src);
        wk->conn->client_port = wk->pinfo->srcport;
        wk->conn->client_known = TRUE;
    }
}

static const char *fs_strdup(const char *s)
{
    return (s && *s) ? wmem_strdup(wmem_file_scope(), s) : NULL;
}

/* Two valid contexts that name different traces.  A 64-bit id (left-padded) is
 * compared on the low half only, since 64-bit systems truncate 128-bit ids. */
static gboolean contexts_disagree(const struct sf_tracectx_set *s)
{
    const struct sf_tracectx *first = NULL;

    for (int i = 0; i < s->n; i++) {
        const struct sf_tracectx *c = &s->ctx[i];
        int low_only;
        if (!c->valid || c->trace_id[0] == 0)
            continue;
        if (first == NULL) {
            first = c;
            continue;
        }
        low_only = first->trace_id_64 || c->trace_id_64;
        if (strcmp(first->trace_id + (low_only ? 16 : 0), c->trace_id + (low_only ? 16 : 0)) != 0)
            return TRUE;
    }
    return FALSE;
}

/* The default list of kept headers (pcap2spans' without --keep-header). */
static const struct sf_attrs_keep *keep_list(void)
{
    static struct sf_attrs_keep k;
    static gboolean ready;

    if (!ready) {
        sf_attrs_keep_default(&k);
        ready = TRUE;
    }
    return &k;
}

struct attr_acc {
    GPtrArray *k, *v;
};

static int on_attr(void *arg, const char *key, const char *value)
{
    struct attr_acc *a = arg;

    g_ptr_array_add(a->k, (gpointer)fs_strdup(key));
    g_ptr_array_add(a->v, (gpointer)fs_strdup(value));
    return 0;
}

/* A request's attributes: baggage and tracestate members, kept headers. */
static void copy_attrs(struct tc_msg *m, const struct sf_tracectx_set *s)
{
    struct attr_acc a = {g_ptr_array_new(), g_ptr_array_new()};
    const char *name, *value;
    size_t pos = 0;

    for (int i = 0; i < s->n; i++) {
        if (s->ctx[i].format == SF_CTX_BAGGAGE)
            (void)sf_attrs_baggage(s->ctx[i].raw, on_attr, &a);
        if (s->ctx[i].tracestate[0])
            (void)sf_attrs_tracestate(s->ctx[i].tracestate, on_attr, &a);
    }
    while (sf_tracectx_kept_next(s, &pos, &name, &value))
        (void)sf_attrs_one("header.", name, strlen(name), value, strlen(value), on_attr, &a);
    m->nattr = a.k->len;
    m->attr_key = wmem_alloc0_array(wmem_file_scope(), const char *, m->nattr ? m->nattr : 1);
    m->attr_value = wmem_alloc0_array(wmem_file_scope(), const char *, m->nattr ? m->nattr : 1);
    for (guint i = 0; i < m->nattr; i++) {
        m->attr_key[i] = g_ptr_array_index(a.k, i);
        m->attr_value[i] = g_ptr_array_index(a.v, i);
    }
    g_ptr_array_free(a.k, TRUE);
    g_ptr_array_free(a.v, TRUE);
}

static void copy_contexts(struct tc_msg *m, const struct sf_tracectx_set *s)
{
    m->n = (guint)s->n;
    m->dropped = (guint)s->dropped;
    m->ctx = wmem_alloc0_array(wmem_file_scope(), struct tc_ctx, m->n ? m->n : 1);
    for (int i = 0; i < s->n; i++) {
        const struct sf_tracectx *c = &s->ctx[i];
        struct tc_ctx *t = &m->ctx[i];
        t->format = sf_tracectx_format_name(c->format);
        t->trace_id = fs_strdup(c->trace_id);
        t->span_id = fs_strdup(c->span_id);
        t->parent_id = fs_strdup(c->parent_id);
        t->tracestate = fs_strdup(c->tracestate);
        t->error = fs_strdup(c->error);
        t->raw = fs_strdup(c->raw);
        t->sampled = c->sampled;
        t->debug = c->debug;
        t->flags = c->flags;
        t->trace_id_64 = c->trace_id_64;
        t->valid = c->valid;
    }
    m->preferred = sf_tracectx_set_preferred(s);
    m->disagree = contexts_disagree(s);
}

/* Pair a response with its request (HTTP/1: oldest pending; HTTP/2: by stream). */
static void link_message(struct walk *wk, struct tc_msg *m)
{
    struct tc_conn *c = wk->conn;
    struct tc_pending *p = NULL;

    if (c == NULL)
        return;
    if (m->is_request) {
        p = wmem_new0(wmem_file_scope(), struct tc_pending);
        p->msg = m;
        p->frame = wk->pinfo->num;
        p->ts = wk->pinfo->abs_ts;
        if (wk->kind == MSG_H1_REQ) {
            wmem_list_append(c->h1_pending, p);
        } else {
            wmem_map_insert(c->h2_pending, GUINT_TO_POINTER(m->stream), p);
            wmem_map_insert(c->h2_reqs, GUINT_TO_POINTER(m->stream), m);
        }
        return;
    }
    if (wk->kind == MSG_H1_RESP) {
        wmem_list_frame_t *head = wmem_list_head(c->h1_pending);
        p = head ? wmem_list_frame_data(head) : NULL;
        if (p)
            wmem_list_remove_frame(c->h1_pending, head);
    } else {
        p = wmem_map_remove(c->h2_pending, GUINT_TO_POINTER(m->stream));
    }
    if (p == NULL)
        return;
    m->peer_frame = p->frame;
    m->req = p->msg;
    p->msg->peer_frame = wk->pinfo->num;
    nstime_delta(&m->delta, &wk->pinfo->abs_ts, &p->ts);
    m->has_delta = TRUE;
}

/* Close the message being assembled, if any. */
static void finish_message(struct walk *wk)
{
    struct tc_msg *m;

    if (wk->kind == MSG_NONE)
        return;
    sf_tracectx_set_finish(wk->set);
    if (wk->kind == MSG_H2 && wk->h2_role == 0 && wk->set->n == 0) {
        /* a trailer block without trace context: nothing to show */
        wk->kind = MSG_NONE;
        return;
    }
    m = wmem_new0(wmem_file_scope(), struct tc_msg);
    /* An HTTP/2 block without pseudo-headers is a CONTINUATION part Wireshark decoded on
     * its own, or trailers: its direction is that of its sender. */
    m->is_request = wk->kind == MSG_H1_REQ || (wk->kind == MSG_H2 && wk->h2_role == 1) ||
                    (wk->kind == MSG_H2 && wk->h2_role == 0 && from_client(wk));
    m->stream = wk->kind == MSG_H2 ? wk->h2_stream : 0;
    m->frame = wk->pinfo->num;
    copy_contexts(m, wk->set);
    if (m->is_request)
        copy_attrs(m, wk->set);
    /* a CONTINUATION part (HTTP/2, no pseudo-headers) belongs to a request already seen */
    if (m->is_request && !(wk->kind == MSG_H2 && wk->h2_role == 0)) {
        note_client(wk);
        m->early_data =
            wk->conn && wk->conn->early_offered && !wk->conn->client_finished && from_client(wk);
        /* the verdict comes with the server's EncryptedExtensions, usually later */
        if (m->early_data && wk->conn->early_outcome)
            m->early_outcome = wk->conn->early_outcome;
        else if (m->early_data)
            wmem_array_append_one(wk->conn->early_msgs, m);
    }
    if (wk->kind != MSG_H2 || wk->h2_role != 0)
        link_message(wk, m);
    g_ptr_array_add(wk->done, m);
    wk->kind = MSG_NONE;
}

static void start_message(struct walk *wk, enum msg_kind kind)
{
    finish_message(wk);
    sf_tracectx_set_init(wk->set);
    wk->kind = kind;
    wk->h2_role = 0;
    wk->rpc_kind = 0;
}

/* ---- JSON-RPC ---------------------------------------------------------------------- */

static const char *fs_str(const char *s)
{
    return s && s[0] ? wmem_strdup(wmem_file_scope(), s) : NULL;
}

static void rpc_message(void *arg, const struct sf_jrpc_msg *m)
{
    static const char *const kinds[] = {"request", "notification", "response"};
    struct walk *wk = arg;
    gboolean c2s = wk->kind == MSG_H1_REQ;
    struct tc_rpc r = {0};
    struct rpc_req *q;
    char *key;

    r.kind = kinds[m->kind];
    r.direction = c2s ? "c2s" : "s2c";
    r.method = fs_str(m->method);
    r.id = fs_str(m->id);
    r.name = fs_str(m->name);
    r.has_error = m->has_error;
    r.error_code = m->error_code;
    r.error_msg = m->has_error ? fs_str(m->error_msg) : NULL;
    r.tool_error = m->tool_error;
    r.max_tokens = m->max_tokens;
    r.temperature = m->temperature;
    if (wk->conn && m->kind == SF_JRPC_REQUEST) { /* remembered for its response */
        q = wmem_new(wmem_file_scope(), struct rpc_req);
        q->method = r.method;
        q->frame = wk->pinfo->num;
        key = wmem_strdup_printf(wmem_file_scope(), "%s %s", r.direction, m->id);
        wmem_map_insert(wk->conn->rpc_reqs, key, q);
    } else if (wk->conn && m->kind == SF_JRPC_RESPONSE) {
        key = wmem_strdup_printf(wmem_packet_scope(), "%s %s", c2s ? "s2c" : "c2s", m->id);
        if ((q = wmem_map_lookup(wk->conn->rpc_reqs, key)) != NULL) {
            r.method = q->method;
            r.request_in = q->frame;
        }
    }
    g_array_append_val(wk->rpc, r);
}

/* One JSON text of the body: its messages, or one malformed entry saying why. */
static void rpc_text(struct walk *wk, const char *p, size_t n)
{
    struct sf_jrpc_err e;
    struct tc_rpc r = {0};

    if (sf_jrpc_parse(p, n, rpc_message, wk, &e) >= 0 || !sf_jrpc_mentioned(p, n))
        return;
    r.kind = "malformed";
    r.direction = wk->kind == MSG_H1_REQ ? "c2s" : "s2c";
    r.max_tokens = -1;
    r.temperature = NAN;
    r.why = wmem_strdup_printf(wmem_file_scope(), "%s at byte %zu", e.why, e.off);
    g_array_append_val(wk->rpc, r);
}

static void rpc_event(void *arg, const struct sf_sse_event *ev)
{
    if (strcmp(ev->type, "message") == 0 && !ev->over && ev->len)
        rpc_text(arg, ev->data, ev->len);
}

static void rpc_body(struct walk *wk, const guint8 *p, size_t n)
{
    struct sf_sse sse;

    if (wk->rpc_kind == 1) {
        rpc_text(wk, (const char *)p, n);
    } else if (wk->rpc_kind == 2) {
        sf_sse_init(&sse, n);
        sf_sse_feed(&sse, p, n, 0, rpc_event, wk);
        sf_sse_feed(&sse, (const guint8 *)"\n\n", sf_sse_pending(&sse) ? 2 : 0, 0, rpc_event,
                    wk); /* a body ends its last event */
        sf_sse_free(&sse);
    }
}

/* "Name: value\r\n" of an HTTP/1 header line, fed to the set. */
static void add_h1_line(struct walk *wk, const guint8 *p, gint len)
{
    gint colon = 0, vs, ve = len;

    while (colon < len && p[colon] != ':')
        colon++;
    if (colon == len)
        return;
    vs = colon + 1;
    while (vs < ve && (p[vs] == ' ' || p[vs] == '\t'))
        vs++;
    while (ve > vs &&
           (p[ve - 1] == '\n' || p[ve - 1] == '\r' || p[ve - 1] == ' ' || p[ve - 1] == '\t'))
        ve--;
    sf_tracectx_set_add(wk->set, (const char *)p, (size_t)colon, p + vs, (size_t)(ve - vs));
    if (sf_attrs_keep_match(keep_list(), (const char *)p, (size_t)colon))
        sf_tracectx_set_keep(wk->set, (const char *)p, (size_t)colon, p + vs, (size_t)(ve - vs));
}

static const guint8 *field_bytes(field_info *fi)
{
    if (fi->ds_tvb == NULL || fi->length <= 0)
        return NULL;
    return tvb_get_ptr(fi->ds_tvb, fi->start, fi->length);
}

static void visit_field(struct walk *wk, field_info *fi)
{
    const struct tc_wanted *w = wk->w;
    int id = fi->hfinfo->id;
    const guint8 *b;

    if (id == w->tcp_stream) {
        wk->conn = conn_get(fvalue_get_uinteger(&fi->value));
    } else if (id == w->http_req_method) {
        start_message(wk, MSG_H1_REQ);
    } else if (id == w->http_resp_code) {
        start_message(wk, MSG_H1_RESP);
    } else if ((id == w->http_req_line && wk->kind == MSG_H1_REQ) ||
               (id == w->http_resp_line && wk->kind == MSG_H1_RESP)) {
        if ((b = field_bytes(fi)) != NULL)
            add_h1_line(wk, b, fi->length);
    } else if (id == w->http_content_type && (wk->kind == MSG_H1_REQ || wk->kind == MSG_H1_RESP)) {
        const char *v = fvalue_get_string(&fi->value);
        wk->rpc_kind = v ? sf_jrpc_content_kind(v, strlen(v)) : 0;
    } else if (id == w->http_file_data && wk->rpc_kind) {
        if ((b = field_bytes(fi)) != NULL)
            rpc_body(wk, b, (size_t)fi->length);
        wk->rpc_kind = 0;
    } else if (id == w->h2_streamid) {
        const struct tc_msg *req;
        if (wk->kind == MSG_H2)
            finish_message(wk);
        wk->h2_stream = fvalue_get_uinteger(&fi->value);
        req = wk->conn && wk->h2_stream
                  ? wmem_map_lookup(wk->conn->h2_reqs, GUINT_TO_POINTER(wk->h2_stream))
                  : NULL;
        if (req && req->frame != wk->pinfo->num && !g_ptr_array_find(wk->rel, req, NULL))
            g_ptr_array_add(wk->rel, (gpointer)req);
    } else if (id == w->h2_hdr_name) {
        if (wk->kind != MSG_H2)
            start_message(wk, MSG_H2);
        b = field_bytes(fi);
        wk->name = b ? (guint8 *)wmem_memdup(wmem_packet_scope(), b, (size_t)fi->length) : NULL;
        wk->name_len = b ? (gsize)fi->length : 0;
    } else if (id == w->h2_hdr_value && wk->kind == MSG_H2 && wk->name) {
        static const guint8 empty[1] = {0};
        b = field_bytes(fi);
        if (wk->name_len == 7 && memcmp(wk->name, ":method", 7) == 0)
            wk->h2_role = 1;
        else if (wk->name_len == 7 && memcmp(wk->name, ":status", 7) == 0)
            wk->h2_role = 2;
        sf_tracectx_set_add(wk->set, (const char *)wk->name, wk->name_len, b ? b : empty,
                            b ? (size_t)fi->length : 0);
        if (sf_attrs_keep_match(keep_list(), (const char *)wk->name, wk->name_len))
            sf_tracectx_set_keep(wk->set, (const char *)wk->name, wk->name_len, b ? b : empty,
                                 b ? (size_t)fi->length : 0);
        wk->name = NULL;
    } else if (id == w->tls_hs_type) {
        wk->last_hs_type = (int)fvalue_get_uinteger(&fi->value);
        if (wk->last_hs_type == 8) /* EncryptedExtensions: the server's 0-RTT verdict */
            wk->ee_seen = TRUE;
        if (wk->last_hs_type == 1)
            note_client(wk);
        else if (wk->last_hs_type == 20 && wk->conn && from_client(wk))
            wk->conn->client_finished = TRUE;
    } else if (id == w->tls_ext_type && wk->conn && fvalue_get_uinteger(&fi->value) == 42) {
        if (wk->last_hs_type == 1)
            wk->conn->early_offered = TRUE;
        else if (wk->last_hs_type == 8)
            wk->ee_early = TRUE;
    }
}

/* The server answered 0-RTT: give the verdict to the requests that were waiting. */
static void settle_early(struct tc_conn *c, int outcome)
{
    c->early_outcome = outcome;
    for (guint i = 0; i < wmem_array_get_count(c->early_msgs); i++)
        (*(struct tc_msg **)wmem_array_index(c->early_msgs, i))->early_outcome = outcome;
}

static void visit(proto_node *node, gpointer data)
{
    field_info *fi = PNODE_FINFO(node);

    if (fi && fi->hfinfo)
        visit_field(data, fi);
    proto_tree_children_foreach(node, visit, data);
}

struct tc_frame *tc_collect(const struct tc_wanted *w, packet_info *pinfo, proto_tree *tree)
{
    struct walk wk = {0};
    struct tc_frame *f = NULL;

    if (tree == NULL)
        return NULL;
    wk.w = w;
    wk.pinfo = pinfo;
    wk.set = g_new(struct sf_tracectx_set, 1);
    wk.done = g_ptr_array_new();
    wk.rel = g_ptr_array_new();
    wk.rpc = g_array_new(FALSE, TRUE, sizeof(struct tc_rpc));
    proto_tree_children_foreach(tree, visit, &wk);
    finish_message(&wk);
    if (wk.ee_seen && wk.conn && wk.conn->early_offered)
        settle_early(wk.conn, wk.ee_early ? TC_EARLY_ACCEPTED : TC_EARLY_REJECTED);
    /* a stream whose response headers are in this frame is shown through them */
    for (guint i = 0; i < wk.done->len; i++)
        g_ptr_array_remove(wk.rel, (gpointer)((struct tc_msg *)wk.done->pdata[i])->req);
    if (wk.done->len || wk.rel->len || wk.rpc->len) {
        f = wmem_new0(wmem_file_scope(), struct tc_frame);
        f->nrpc = wk.rpc->len;
        f->rpc = f->nrpc
                     ? wmem_memdup(wmem_file_scope(), wk.rpc->data, f->nrpc * sizeof(struct tc_rpc))
                     : NULL;
        f->n = wk.done->len;
        f->msg = wmem_alloc_array(wmem_file_scope(), struct tc_msg *, f->n ? f->n : 1);
        memcpy(f->msg, wk.done->pdata, f->n * sizeof(*f->msg));
        f->nrel = wk.rel->len;
        f->rel = wmem_alloc_array(wmem_file_scope(), const struct tc_msg *, f->nrel ? f->nrel : 1);
        memcpy(f->rel, wk.rel->pdata, f->nrel * sizeof(*f->rel));
    }
    g_ptr_array_free(wk.done, TRUE);
    g_ptr_array_free(wk.rel, TRUE);
    g_array_free(wk.rpc, TRUE);
    g_free(wk.set);
    return f;
}

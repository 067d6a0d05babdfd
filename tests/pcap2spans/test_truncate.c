/* Truncation sweep: cut the sample captures at every byte and check that reading never
 * crashes, reports the damage, and keeps every span completed before the cut.
 *
 * A span counts as "completed before the cut" when the full run emitted it while
 * processing a packet that the cut run also read whole; the cut run must then emit the
 * same span (method, path, status, ids, timestamps, sizes).  Runs from the top of the
 * tree (make check-pcap2spans).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../pcap2spans/p2s.h"
#include "tap.h"

#define MAXSPANS 64

struct rec {
    int n;
    char key[MAXSPANS][256];
    uint64_t pkt[MAXSPANS];
    struct p2s_ctx *ctx;
};

static int hook(void *arg, struct p2s_conn *conn, const struct p2s_span *s)
{
    struct rec *r = arg;

    (void)conn;
    if (r->n >= MAXSPANS)
        return 0;
    snprintf(r->key[r->n], sizeof(r->key[0]), "%lld %s %s %d %lld %lld %lld %lld %lld %lld %d",
             (long long)s->stream_id, s->method ? s->method : "-", s->path ? s->path : "-",
             s->status, (long long)s->req_start_ns, (long long)s->req_end_ns,
             (long long)s->resp_start_ns, (long long)s->resp_end_ns, (long long)s->req_bytes,
             (long long)s->resp_bytes, s->req_ctx ? s->req_ctx->n : 0);
    r->pkt[r->n] = r->ctx->pkt_no;
    r->n++;
    return 0;
}

/* Read path; returns p2s_pcap_read's code, fills r and *complete_pkts (packets read whole). */
static int run(const char *path, struct rec *r, uint64_t *complete_pkts)
{
    struct p2s_ctx ctx;
    int rc;

    p2s_ctx_init(&ctx);
    ctx.quiet = 1;
    ctx.errors_printed = 1000; /* the sweep would print thousands of expected errors */
    memset(r, 0, sizeof(*r));
    // cppcheck-suppress autoVariables ; r->ctx is only used during this call (hook)
    r->ctx = &ctx;
    ctx.span_hook = hook;
    ctx.span_hook_arg = r;
    rc = p2s_pcap_read(&ctx, path);
    *complete_pkts = ctx.st.packets;
    p2s_ctx_free(&ctx);
    return rc;
}

static void sweep(const char *path)
{
    struct rec full, cut;
    uint64_t full_pkts, cut_pkts;
    char tmp[] = "/dev/shm/p2s-trunc-XXXXXX";
    unsigned char *buf;
    long size;
    FILE *f = fopen(path, "rb");
    int fd, bad_keep = 0, bad_rc = 0, crashes_would_abort = 0;
    long cuts = 0;

    if (f == NULL) {
        TAP_SKIP(path, "sample missing (run from the top of the tree)");
        return;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    rewind(f);
    buf = malloc((size_t)size);
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        TAP_OK(0, "%s: read", path);
        fclose(f);
        free(buf);
        return;
    }
    fclose(f);
    TAP_EQ_INT(run(path, &full, &full_pkts), 0, "%s: full file reads cleanly", path);
    TAP_OK(full.n >= 5, "%s: full file has spans (%d)", path, full.n);
    fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(tmp, sizeof(tmp), "/tmp/p2s-trunc-XXXXXX");
        fd = mkstemp(tmp);
    }
    fflush(stderr);
    if (freopen("/dev/null", "w", stderr) == NULL) /* thousands of expected error lines */
        return;
    for (long len = 0; len < size; len++) {
        int rc;
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len)
            break;
        rc = run(tmp, &cut, &cut_pkts);
        cuts++;
        /* a cut exactly at a record boundary is a valid shorter file */
        if (rc != 0 && rc != SF_E_TRUNC && rc != SF_E_MALFORMED)
            bad_rc++;
        for (int i = 0; i < full.n; i++) {
            int found = 0;
            if (full.pkt[i] > cut_pkts)
                continue;
            for (int j = 0; j < cut.n && !found; j++)
                found = strcmp(full.key[i], cut.key[j]) == 0;
            if (!found) {
                if (bad_keep++ < 3)
                    printf("#   cut at %ld: lost span \"%s\"\n", len, full.key[i]);
            }
        }
    }
    close(fd);
    unlink(tmp);
    free(buf);
    TAP_EQ_INT(cuts, size, "%s: every cut position tried", path);
    TAP_EQ_INT(bad_rc, 0, "%s: every cut gives ok, truncated or malformed", path);
    TAP_EQ_INT(bad_keep, 0, "%s: every span completed before the cut is kept", path);
    (void)crashes_would_abort;
}

int main(void)
{
    sweep("tests/pcap2spans/data/h1-lo.pcap");
    sweep("tests/pcap2spans/data/h1-lo.pcapng");
    return tap_done();
}

/* Unit tests: lib/sf_tracectx (every trace-context wire format).
 *
 *   test_tracectx            table-driven TAP tests (single-value parsers, header sets,
 *                            tracestate, fuzz regressions)
 *   test_tracectx --stdin    corpus driver: header sets on stdin as "name<TAB>value" lines
 *                            (value bytes escaped as \xHH, a backslash as \\), sets separated
 *                            by blank lines; prints one JSON line per context and one
 *                            {"set":N,"end":...} line per set (tests/scripts/tracectx_corpus.py)
 *   test_tracectx --bench N  parse a typical request's headers N times; prints CPU ns per request
 *   test_tracectx --list-formats
 *                            the formats of lib/sf_tc_formats.h, one line each: name, the
 *                            headers it reads (", "-joined), preference rank ("-": never)
 *                            (tests/scripts/t_tracectx_formats.sh checks docs/ against it)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sf_tc_int.h"
#include "sf_tracectx.h"
#include "tap.h"

/* The fuzz target itself: its invariant checks (abort on violation) run here on the seed
 * corpus, on every crash input kept below, and on every table input. */
#include "fuzz/lib/fuzz_tracectx.c"

#define TP  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TID "4bf92f3577b34da6a3ce929d0e0e4736"

/* ---- helpers ------------------------------------------------------------------------ */

/* "format valid trace span parent sampled debug flags t64" ('-' for empty ids). */
static void summary(const struct sf_tracectx *c, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s %d %s %s %s %d %d %d %d", sf_tracectx_format_name(c->format), c->valid,
             c->trace_id[0] ? c->trace_id : "-", c->span_id[0] ? c->span_id : "-",
             c->parent_id[0] ? c->parent_id : "-", c->sampled, c->debug, c->flags, c->trace_id_64);
}

static int parse_one(enum sf_ctx_format f, struct sf_tracectx *c, const char *v, size_t n)
{
    switch (f) {
    case SF_CTX_TRACEPARENT:
        return sf_tracectx_parse_traceparent(c, v, n);
    case SF_CTX_B3_SINGLE:
        return sf_tracectx_parse_b3_single(c, v, n);
    case SF_CTX_GRPC_TRACE_BIN:
        return sf_tracectx_parse_grpc_trace_bin(c, (const uint8_t *)v, n);
    case SF_CTX_UBER:
        return sf_tracectx_parse_uber(c, v, n);
    case SF_CTX_XRAY:
        return sf_tracectx_parse_xray(c, v, n);
    case SF_CTX_BAGGAGE:
        return sf_tracectx_parse_baggage(c, v, n);
    case SF_CTX_SW8:
        return sf_tracectx_parse_sw8(c, v, n);
    default:
        return -2;
    }
}

/* Decode the \xHH / \\ escapes of the driver format (also used by the tables). */
static size_t unescape(uint8_t *out, const char *s, size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\\') {
            out[o++] = '\\';
            i++;
        } else if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x') {
            char h[3] = {s[i + 2], s[i + 3], 0};
            out[o++] = (uint8_t)strtoul(h, NULL, 16);
            i += 3;
        } else {
            out[o++] = (uint8_t)s[i];
        }
    }
    return o;
}

/* ---- single-value parsers ---------------------------------------------------------- */

struct vcase {
    enum sf_ctx_format f;
    const char *in;   /* escaped as in the driver format */
    const char *want; /* summary() */
    const char *err;  /* substring of error, NULL: error must be "" */
};

static const struct vcase vcases[] = {
    /* W3C traceparent */
    {SF_CTX_TRACEPARENT, TP, "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0", NULL},
    {SF_CTX_TRACEPARENT, " \t" TP "\t ", "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0", NULL},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-00",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 0 0 0 0", NULL},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-03",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 3 0", NULL},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-fe",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 0 0 254 0", NULL},
    {SF_CTX_TRACEPARENT, "cc-" TID "-00f067aa0ba902b7-01-future",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0", NULL},
    {SF_CTX_TRACEPARENT, "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
     "traceparent 0 - - - -1 0 -1 0", "traceparent: trace-id is all zeros"},
    {SF_CTX_TRACEPARENT, "00-" TID "-0000000000000000-01", "traceparent 0 - - - -1 0 -1 0",
     "traceparent: parent-id is all zeros"},
    {SF_CTX_TRACEPARENT, "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
     "traceparent 0 - - - -1 0 -1 0", "traceparent: trace-id has uppercase hex digits"},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b-01", "traceparent 0 - - - -1 0 -1 0",
     "traceparent: parent-id has 15 hex digits, need 16"},
    {SF_CTX_TRACEPARENT, "ff-" TID "-00f067aa0ba902b7-01", "traceparent 0 - - - -1 0 -1 0",
     "traceparent: version ff is invalid"},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-01-x", "traceparent 0 - - - -1 0 -1 0",
     "version 00 allows nothing after trace-flags"},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7", "traceparent 0 - - - -1 0 -1 0",
     "traceparent: trace-flags missing"},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-0x", "traceparent 0 - - - -1 0 -1 0",
     "trace-flags has illegal character 'x' at offset 1"},
    {SF_CTX_TRACEPARENT, "00-" TID "-00f067aa0ba902b7-01\\x00", "traceparent 0 - - - -1 0 -1 0",
     "illegal character 0x00"},
    {SF_CTX_TRACEPARENT, "", "traceparent 0 - - - -1 0 -1 0", "traceparent: empty value"},
    {SF_CTX_TRACEPARENT, "00", "traceparent 0 - - - -1 0 -1 0", "trace-id missing"},
    /* B3 single */
    {SF_CTX_B3_SINGLE, "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90",
     "b3-single 1 80f198ee56343ba864fe8b2a57d3eff7 e457b5a2e4d86bd1 05e3ac9a4f6e3b90 1 0 -1 0",
     NULL},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b7-d",
     "b3-single 1 0000000000000000a3ce929d0e0e4736 00f067aa0ba902b7 - 1 1 -1 1", NULL},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b7",
     "b3-single 1 0000000000000000a3ce929d0e0e4736 00f067aa0ba902b7 - -1 0 -1 1", NULL},
    {SF_CTX_B3_SINGLE, "0", "b3-single 1 - - - 0 0 -1 0", NULL},
    {SF_CTX_B3_SINGLE, "1", "b3-single 1 - - - 1 0 -1 0", NULL},
    {SF_CTX_B3_SINGLE, " d ", "b3-single 1 - - - 1 1 -1 0", NULL},
    {SF_CTX_B3_SINGLE, "2", "b3-single 0 - - - -1 0 -1 0", "sampling state '2' is not 0, 1 or d"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b", "b3-single 0 - - - -1 0 -1 0",
     "b3: span id has 15 hex digits, need 16"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e473-00f067aa0ba902b7", "b3-single 0 - - - -1 0 -1 0",
     "b3: trace id has 15 hex digits, need 32 or 16"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b7-1-", "b3-single 0 - - - -1 0 -1 0",
     "b3: parent span id is empty"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-0000000000000000-1", "b3-single 0 - - - -1 0 -1 0",
     "b3: span id is all zeros"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b7-x", "b3-single 0 - - - -1 0 -1 0",
     "sampling state 'x'"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736-00f067aa0ba902b7-1-05e3ac9a4f6e3b90-9",
     "b3-single 0 - - - -1 0 -1 0", "5 '-'-separated fields"},
    {SF_CTX_B3_SINGLE, "a3ce929d0e0e4736", "b3-single 0 - - - -1 0 -1 0", "b3: span id missing"},
    {SF_CTX_B3_SINGLE, "", "b3-single 0 - - - -1 0 -1 0", "b3: empty value"},
    /* grpc-trace-bin (bytes) */
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 1 0 1 0", NULL},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 0 0 -1 0", NULL},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x03\\xde\\xad",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 0 0 -1 0", NULL},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "options field truncated"},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x01\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "unsupported version 1"},
    {SF_CTX_GRPC_TRACE_BIN, "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "truncated: 13 bytes, need at least 27"},
    {SF_CTX_GRPC_TRACE_BIN, "\\x00\\x01", "grpc-trace-bin 0 - - - -1 0 -1 0",
     "field 1 at byte 1, need 0"},
    {SF_CTX_GRPC_TRACE_BIN, "", "grpc-trace-bin 0 - - - -1 0 -1 0", "empty value"},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x02\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "field 2 at byte 18, need 1 (span id)"},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d\\x00\\x0e\\x47\\x36"
     "\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x01",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "grpc-trace-bin: span id is all zeros"},
    {SF_CTX_GRPC_TRACE_BIN,
     "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
     "\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01",
     "grpc-trace-bin 0 - - - -1 0 -1 0", "trace id is all zeros"},
    /* Jaeger */
    {SF_CTX_UBER, "80f198ee56343ba864fe8b2a57d3eff7:e457b5a2e4d86bd1:0:3",
     "uber-trace-id 1 80f198ee56343ba864fe8b2a57d3eff7 e457b5a2e4d86bd1 - 1 1 3 0", NULL},
    {SF_CTX_UBER, "abc:1:0:1",
     "uber-trace-id 1 00000000000000000000000000000abc 0000000000000001 - 1 0 1 1", NULL},
    {SF_CTX_UBER, "ABC%3a1%3A2:08",
     "uber-trace-id 1 00000000000000000000000000000abc 0000000000000001 0000000000000002 0 0 8 1",
     NULL},
    {SF_CTX_UBER, "0:e457b5a2e4d86bd1:0:1", "uber-trace-id 0 - - - -1 0 -1 0",
     "uber-trace-id: trace id is all zeros"},
    {SF_CTX_UBER, "abc:1:0:123", "uber-trace-id 0 - - - -1 0 -1 0", "flags '123'"},
    {SF_CTX_UBER, "abc:1:0", "uber-trace-id 0 - - - -1 0 -1 0", "3 ':'-separated fields"},
    {SF_CTX_UBER, "abc:12345678901234567:0:1", "uber-trace-id 0 - - - -1 0 -1 0",
     "span id has 17 hex digits, at most 16"},
    {SF_CTX_UBER, "abc::0:1", "uber-trace-id 0 - - - -1 0 -1 0", "span id is empty"},
    /* AWS X-Ray */
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
     "x-amzn-trace-id 1 5759e988bd862e3fe1be46a994272793 53995c3f42cd8ad8 - 1 0 -1 0", NULL},
    {SF_CTX_XRAY,
     "Self=1-67891233-12456789abcdef012345678;Root=1-67891233-abcdef012345678912345678;"
     "CalledFrom=app",
     "x-amzn-trace-id 1 67891233abcdef012345678912345678 - - -1 0 -1 0", NULL},
    {SF_CTX_XRAY, " Root=1-5759e988-bd862e3fe1be46a994272793 ; Sampled=? ;",
     "x-amzn-trace-id 1 5759e988bd862e3fe1be46a994272793 - - -1 0 -1 0", NULL},
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a99427279", "x-amzn-trace-id 0 - - - -1 0 -1 0",
     "Root '1-5759e988-bd862e3fe1be46a99427279' is not"},
    {SF_CTX_XRAY, "Root=1-5759E988-bd862e3fe1be46a994272793", "x-amzn-trace-id 0 - - - -1 0 -1 0",
     "is not 1-<8 hex>-<24 hex>"},
    {SF_CTX_XRAY, "Parent=53995c3f42cd8ad8;Sampled=1", "x-amzn-trace-id 0 - - - -1 0 -1 0",
     "no Root field"},
    {SF_CTX_XRAY, "Root=1-00000000-000000000000000000000000", "x-amzn-trace-id 0 - - - -1 0 -1 0",
     "Root trace id is all zeros"},
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995C3F42CD8AD8",
     "x-amzn-trace-id 0 - - - -1 0 -1 0", "Parent has uppercase hex digits"},
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=yes",
     "x-amzn-trace-id 0 - - - -1 0 -1 0", "Sampled 'yes' is not 0, 1 or ?"},
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000",
     "x-amzn-trace-id 0 - - - -1 0 -1 0", "Parent is all zeros"},
    {SF_CTX_XRAY, "Root=1-5759e988-bd862e3fe1be46a994272793;Lineage",
     "x-amzn-trace-id 0 - - - -1 0 -1 0", "field 'Lineage' has no '='"},
    /* baggage */
    {SF_CTX_BAGGAGE, "userId=Am%C3%A9lie,serverNode=DF%2028,isProduction=false",
     "baggage 1 - - - -1 0 -1 0", NULL},
    {SF_CTX_BAGGAGE, "key1 = value1 ; prop1 ; prop2=x , key2=a=b", "baggage 1 - - - -1 0 -1 0",
     NULL},
    {SF_CTX_BAGGAGE, "k=", "baggage 1 - - - -1 0 -1 0", NULL},
    {SF_CTX_BAGGAGE, "k=a b", "baggage 0 - - - -1 0 -1 0", "must be percent-encoded"},
    {SF_CTX_BAGGAGE, "k=100%", "baggage 1 - - - -1 0 -1 0", NULL},
    {SF_CTX_BAGGAGE,
     "SomeKey \t = \t SomeValue \t ; \t SomePropKey \t = \t SomePropValue , k2=v=equals",
     "baggage 1 - - - -1 0 -1 0", NULL},
    {SF_CTX_BAGGAGE, "SomeKey=%09%20%22%27%3B%3Dasdf%21%40%23%24%25%5E%26%2A%28%29",
     "baggage 1 - - - -1 0 -1 0", NULL},
    {SF_CTX_BAGGAGE, "k=a;p q", "baggage 0 - - - -1 0 -1 0", "key 'p' followed by 'q'"},
    {SF_CTX_BAGGAGE, "k=\"quoted\"", "baggage 0 - - - -1 0 -1 0", "has '\"', which must be"},
    {SF_CTX_BAGGAGE, "k=1,,j=2", "baggage 0 - - - -1 0 -1 0", "empty list member"},
    {SF_CTX_BAGGAGE, "=1", "baggage 0 - - - -1 0 -1 0", "empty key"},
    {SF_CTX_BAGGAGE, "k", "baggage 0 - - - -1 0 -1 0", "key 'k' has no '='"},
    {SF_CTX_BAGGAGE, "k(x)=1", "baggage 0 - - - -1 0 -1 0", "followed by '('"},
    /* sw8 */
    {SF_CTX_SW8,
     "1-YTRlYzZmYzhjY2FiNGJiNGI2ODIwNjQ2OThjYzk3ZTYuNzQuMTYyMTgzODExMDQ1NTAwMDk=-"
     "YTRlYzZmYzhjY2FiNGJiNGI2ODIwNjQ2OThjYzk3ZTYuNzQuMTYyMTgzODExMDQ1NTAwMDg=-2-b25lbW9yZS1h-"
     "ZTFkMmZiYjYzYmJhNDMwNDk5YWY4OTVjMDQwZTMyZmVAMTkyLjE2OC4xLjEwMQ==-L29uZW1vcmUtYS9nZXQ=-"
     "MTkyLjE2OC4xLjEwMjo4MA==",
     "sw8 1 - - - 1 0 -1 0", NULL},
    {SF_CTX_SW8, "0-dA==-cw==-0-cw==-aQ==-ZQ==-cA==", "sw8 1 - - - 0 0 -1 0", NULL},
    {SF_CTX_SW8, "0-dA==-cw==-0-cw==-aQ==-ZQ==", "sw8 0 - - - -1 0 -1 0",
     "7 '-'-separated fields, need 8"},
    {SF_CTX_SW8, "2-dA==-cw==-0-cw==-aQ==-ZQ==-cA==", "sw8 0 - - - -1 0 -1 0", "sample '2'"},
    {SF_CTX_SW8, "1-d!==-cw==-0-cw==-aQ==-ZQ==-cA==", "sw8 0 - - - -1 0 -1 0",
     "trace id is not valid base64"},
    {SF_CTX_SW8, "1-dA==-cw==-x-cw==-aQ==-ZQ==-cA==", "sw8 0 - - - -1 0 -1 0",
     "parent span id 'x' is not a decimal int"},
    {SF_CTX_SW8, "1--cw==-0-cw==-aQ==-ZQ==-cA==", "sw8 0 - - - -1 0 -1 0", "trace id is empty"},
};

static void test_single_values(void)
{
    for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
        const struct vcase *t = &vcases[i];
        uint8_t in[1024];
        size_t n = unescape(in, t->in, strlen(t->in));
        struct sf_tracectx c;
        char got[256];
        int rc;

        memset(&c, 0x5a, sizeof(c)); /* the parser must fill every field */
        rc = parse_one(t->f, &c, (const char *)in, n);
        summary(&c, got, sizeof(got));
        TAP_EQ_STR(got, t->want, "%s %.60s", sf_tracectx_format_name(t->f), t->in);
        TAP_EQ_INT(rc, c.valid ? 0 : -1, "return value matches valid (%.40s)", t->in);
        if (t->err)
            TAP_OK(strstr(c.error, t->err) != NULL, "error of %.40s: \"%s\" has \"%s\"", t->in,
                   c.error, t->err);
        else
            TAP_EQ_STR(c.error, "", "no error for %.60s", t->in);
    }
}

/* ---- header sets ------------------------------------------------------------------- */

struct scase {
    const char *name;
    const char *hdrs; /* "name\tvalue\n" lines, escaped */
    const char *want; /* summaries joined with " | " */
    int preferred;
    const char *err;        /* substring of the first context's error, NULL: don't check */
    const char *tracestate; /* of the first context, NULL: don't check */
};

static const struct scase scases[] = {
    {"b3 multi full",
     "X-B3-TraceId\t463ac35c9f6413ad48485a3953bb6124\nX-B3-SpanId\ta2fb4a1d1a96d312\n"
     "X-B3-ParentSpanId\t0020000000000001\nX-B3-Sampled\t1\n",
     "b3-multi 1 463ac35c9f6413ad48485a3953bb6124 a2fb4a1d1a96d312 0020000000000001 1 0 -1 0", 0,
     "", NULL},
    {"b3 multi lowercase names, 64-bit, legacy true",
     "x-b3-traceid\t463ac35c9f6413ad\nx-b3-spanid\ta2fb4a1d1a96d312\nx-b3-sampled\ttrue\n",
     "b3-multi 1 0000000000000000463ac35c9f6413ad a2fb4a1d1a96d312 - 1 0 -1 1", 0, "", NULL},
    {"b3 multi debug only", "X-B3-Flags\t1\n", "b3-multi 1 - - - 1 1 -1 0", -1, "", NULL},
    {"b3 multi deny only", "X-B3-Sampled\t0\n", "b3-multi 1 - - - 0 0 -1 0", -1, "", NULL},
    {"b3 multi first value wins",
     "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-TraceId\tzzz\nX-B3-SpanId\ta2fb4a1d1a96d312\n",
     "b3-multi 1 0000000000000000463ac35c9f6413ad a2fb4a1d1a96d312 - -1 0 -1 1", 0, "", NULL},
    {"b3 multi parent only", "X-B3-ParentSpanId\t0020000000000001\n", "b3-multi 0 - - - -1 0 -1 0",
     -1, "b3: X-B3-TraceId and X-B3-SpanId missing", NULL},
    {"b3 multi debug overrides deny",
     "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-SpanId\ta2fb4a1d1a96d312\nX-B3-Sampled\t0\n"
     "X-B3-Flags\t1\n",
     "b3-multi 1 0000000000000000463ac35c9f6413ad a2fb4a1d1a96d312 - 1 1 -1 1", 0, "", NULL},
    {"b3 multi span id missing", "X-B3-TraceId\t463ac35c9f6413ad\n", "b3-multi 0 - - - -1 0 -1 0",
     -1, "b3: X-B3-SpanId missing", NULL},
    {"b3 multi empty value", "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-SpanId\t \n",
     "b3-multi 0 - - - -1 0 -1 0", -1, "b3: X-B3-SpanId is empty", NULL},
    {"b3 multi dash value", "X-B3-TraceId\t-\nX-B3-SpanId\ta2fb4a1d1a96d312\n",
     "b3-multi 0 - - - -1 0 -1 0", -1, "b3: X-B3-TraceId is '-'", NULL},
    {"b3 multi bad sampled",
     "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-SpanId\ta2fb4a1d1a96d312\nX-B3-Sampled\tyes\n",
     "b3-multi 0 - - - -1 0 -1 0", -1, "X-B3-Sampled 'yes' is not 1 or 0", NULL},
    {"b3 multi 15-digit span", "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-SpanId\ta2fb4a1d1a96d31\n",
     "b3-multi 0 - - - -1 0 -1 0", -1, "b3: X-B3-SpanId has 15 hex digits, need 16", NULL},
    {"b3 multi very long value",
     "X-B3-TraceId\t463ac35c9f6413ad463ac35c9f6413ad463ac35c9f6413ad463ac35c9f6413ad\n"
     "X-B3-SpanId\ta2fb4a1d1a96d312\n",
     "b3-multi 0 - - - -1 0 -1 0", -1, "X-B3-TraceId has 64 characters", NULL},
    {"single b3 takes precedence over multi",
     "X-B3-TraceId\t463ac35c9f6413ad\nX-B3-SpanId\ta2fb4a1d1a96d312\n"
     "b3\t80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1\n",
     "b3-single 1 80f198ee56343ba864fe8b2a57d3eff7 e457b5a2e4d86bd1 - 1 0 -1 0 | "
     "b3-multi 1 0000000000000000463ac35c9f6413ad a2fb4a1d1a96d312 - -1 0 -1 1",
     0, "", NULL},
    {"traceparent preferred over b3 and datadog",
     "x-datadog-trace-id\t9532127138774266268\nx-datadog-parent-id\t13220735006218805809\n"
     "b3\t80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1\ntraceparent\t" TP "\n",
     "b3-single 1 80f198ee56343ba864fe8b2a57d3eff7 e457b5a2e4d86bd1 - 1 0 -1 0 | "
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0 | "
     "datadog 1 00000000000000008448eb211c80319c b7797c71133e6231 - -1 0 -1 1",
     1, "", NULL},
    {"two traceparent headers", "traceparent\t" TP "\ntracestate\tfoo=1\nTraceParent\t" TP "\n",
     "traceparent 0 - - - -1 0 -1 0", -1, "traceparent: 2 traceparent headers", ""},
    {"tracestate combined in order, OWS dropped",
     "traceparent\t" TP "\ntracestate\tfoo=1 \\x09, bar=2\ntracestate\t\ntracestate\t baz= 3\n",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0", 0, "", "foo=1,bar=2,baz= 3"},
    {"tracestate discarded keeps traceparent",
     "tracestate\tfoo=1\ntraceparent\t" TP "\ntracestate\tFOO=1\n",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0", 0,
     "tracestate discarded: key 'FOO' has illegal character 'F'", ""},
    {"tracestate ignored with an invalid traceparent",
     "traceparent\t00-" TID "-0000000000000000-01\ntracestate\tfoo=1\n",
     "traceparent 0 - - - -1 0 -1 0", -1, "parent-id is all zeros", ""},
    {"tracestate without traceparent is no context", "tracestate\tfoo=1\n", "", -1, NULL, NULL},
    {"grpc-trace-bin unpadded", "grpc-trace-bin\tAABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE\n",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 1 0 1 0", 0, "", NULL},
    {"grpc-trace-bin padded with OWS",
     "grpc-trace-bin\t AABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE= \n",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 1 0 1 0", 0, "", NULL},
    {"grpc-trace-bin true binary",
     "grpc-trace-bin\t\\x00\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92\\x9d"
     "\\x00\\x0e\\x47\\x36\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01\n",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 1 0 1 0", 0, "", NULL},
    {"grpc-trace-bin two values joined",
     "grpc-trace-bin\tAABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE,AABL+"
     "S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgA\n",
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 1 0 1 0 | "
     "grpc-trace-bin 1 4bf92f3577b34da6a3ce929d000e4736 34f067aa0ba902b7 - 0 0 0 0",
     0, "", NULL},
    {"grpc-trace-bin bad base64", "grpc-trace-bin\tAABL+S81d7N!\n",
     "grpc-trace-bin 0 - - - -1 0 -1 0", -1, "grpc-trace-bin: invalid base64", NULL},
    {"grpc-trace-bin empty", "grpc-trace-bin\t\n", "grpc-trace-bin 0 - - - -1 0 -1 0", -1,
     "grpc-trace-bin: empty value", NULL},
    {"datadog with _dd.p.tid",
     "x-datadog-trace-id\t9532127138774266268\nx-datadog-parent-id\t13220735006218805809\n"
     "x-datadog-sampling-priority\t-1\nx-datadog-tags\t_dd.p.dm=-4,_dd.p.tid=640cfd8d00000000\n",
     "datadog 1 640cfd8d000000008448eb211c80319c b7797c71133e6231 - 0 0 -1 0", 0, "", NULL},
    {"datadog keep priority 2",
     "X-Datadog-Trace-Id\t1\nX-Datadog-Parent-Id\t18446744073709551615\n"
     "X-Datadog-Sampling-Priority\t2\n",
     "datadog 1 00000000000000000000000000000001 ffffffffffffffff - 1 0 -1 1", 0, "", NULL},
    {"datadog overflow", "x-datadog-trace-id\t18446744073709551616\nx-datadog-parent-id\t1\n",
     "datadog 0 - - - -1 0 -1 0", -1, "x-datadog-trace-id '18446744073709551616' is not a decimal",
     NULL},
    {"datadog zero", "x-datadog-trace-id\t0\nx-datadog-parent-id\t1\n", "datadog 0 - - - -1 0 -1 0",
     -1, "datadog: x-datadog-trace-id is 0", NULL},
    {"datadog parent missing", "x-datadog-trace-id\t5\n", "datadog 0 - - - -1 0 -1 0", -1,
     "x-datadog-parent-id missing", NULL},
    {"datadog bad tid is a warning",
     "x-datadog-trace-id\t5\nx-datadog-parent-id\t6\nx-datadog-tags\t_dd.p.tid=xyz\n",
     "datadog 1 00000000000000000000000000000005 0000000000000006 - -1 0 -1 1", 0,
     "_dd.p.tid 'xyz' ignored", NULL},
    {"datadog bad priority",
     "x-datadog-trace-id\t5\nx-datadog-parent-id\t6\nx-datadog-sampling-priority\tkeep\n",
     "datadog 0 - - - -1 0 -1 0", -1, "sampling-priority 'keep' is not an integer", NULL},
    {"baggage over two headers", "baggage\ta=1\nBaggage\tb=2;p\n", "baggage 1 - - - -1 0 -1 0", -1,
     "", NULL},
    {"baggage second header invalid", "baggage\ta=1\nbaggage\tb c=2\n", "baggage 0 - - - -1 0 -1 0",
     -1, "baggage: key 'b' followed by 'c'", NULL},
    {"ordinary headers ignored",
     "content-type\tapplication/grpc\nuser-agent\tcurl\nx-b3\t1\nb\t1\ntrace-parent\t" TP "\n", "",
     -1, NULL, NULL},
    {"every format at once",
     "traceparent\t" TP "\nb3\t0\nuber-trace-id\tabc:1:0:1\n"
     "X-Amzn-Trace-Id\tRoot=1-5759e988-bd862e3fe1be46a994272793\nsw8\t0-dA==-cw==-0-cw==-aQ==-ZQ==-"
     "cA==\n"
     "baggage\tk=v\n",
     "traceparent 1 " TID " 00f067aa0ba902b7 - 1 0 1 0 | b3-single 1 - - - 0 0 -1 0 | "
     "uber-trace-id 1 00000000000000000000000000000abc 0000000000000001 - 1 0 1 1 | "
     "x-amzn-trace-id 1 5759e988bd862e3fe1be46a994272793 - - -1 0 -1 0 | sw8 1 - - - 0 0 -1 0 | "
     "baggage 1 - - - -1 0 -1 0",
     0, "", ""},
};

/* Feed "name\tvalue\n" lines into a set. */
static void feed(struct sf_tracectx_set *s, const char *hdrs)
{
    const char *line = hdrs;

    while (*line) {
        const char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        uint8_t val[1024];
        size_t n;

        if (nl == NULL)
            nl = line + strlen(line);
        if (tab && tab < nl) {
            n = unescape(val, tab + 1, (size_t)(nl - tab - 1));
            sf_tracectx_set_add(s, line, (size_t)(tab - line), val, n);
        }
        line = *nl ? nl + 1 : nl;
    }
}

static void test_sets(void)
{
    static struct sf_tracectx_set s; /* 35 KB: keep it off the stack */

    for (size_t i = 0; i < sizeof(scases) / sizeof(scases[0]); i++) {
        const struct scase *t = &scases[i];
        char got[2048] = "", one[256];

        sf_tracectx_set_init(&s);
        feed(&s, t->hdrs);
        sf_tracectx_set_finish(&s);
        for (int k = 0; k < s.n; k++) {
            summary(&s.ctx[k], one, sizeof(one));
            if (k)
                strncat(got, " | ", sizeof(got) - strlen(got) - 1);
            strncat(got, one, sizeof(got) - strlen(got) - 1);
        }
        TAP_EQ_STR(got, t->want, "set: %s", t->name);
        TAP_EQ_INT(sf_tracectx_set_preferred(&s), t->preferred, "set: %s: preferred", t->name);
        if (t->err && s.n > 0) {
            if (t->err[0])
                TAP_OK(strstr(s.ctx[0].error, t->err) != NULL, "set: %s: error \"%s\" has \"%s\"",
                       t->name, s.ctx[0].error, t->err);
            else
                TAP_EQ_STR(s.ctx[0].error, "", "set: %s: no error", t->name);
        }
        if (t->tracestate && s.n > 0)
            TAP_EQ_STR(s.ctx[0].tracestate, t->tracestate, "set: %s: tracestate", t->name);
    }
}

/* raw forms: text, multi-header "name: value; ...", true binary as hex, truncation. */
static void test_raw(void)
{
    static struct sf_tracectx_set s;
    char big[2000];

    sf_tracectx_set_init(&s);
    feed(&s, "traceparent\t" TP "\ntraceparent\tx\n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_STR(s.ctx[0].raw, "traceparent: " TP "; traceparent: x",
               "raw of duplicated traceparent");

    sf_tracectx_set_init(&s);
    feed(&s, "x-b3-spanid\ta2fb4a1d1a96d312\nX-B3-TRACEID\t463ac35c9f6413ad\n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_STR(s.ctx[0].raw, "X-B3-TraceId: 463ac35c9f6413ad; X-B3-SpanId: a2fb4a1d1a96d312",
               "raw of b3 multi");

    sf_tracectx_set_init(&s);
    feed(&s,
         "grpc-trace-bin\t\\x00\\x00\\x00\\x4b\\xf9\\x2f\\x35\\x77\\xb3\\x4d\\xa6\\xa3\\xce\\x92"
         "\\x9d\\x00\\x0e\\x47\\x36\\x01\\x34\\xf0\\x67\\xaa\\x0b\\xa9\\x02\\xb7\\x02\\x01\n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_STR(s.ctx[0].raw, "00004bf92f3577b34da6a3ce929d000e47360134f067aa0ba902b70201",
               "raw of true-binary grpc-trace-bin is hex");

    memset(big, 'a', sizeof(big));
    big[0] = '\n';
    struct sf_tracectx c;
    sf_tracectx_parse_uber(&c, big, sizeof(big));
    TAP_OK(c.raw_truncated && strlen(c.raw) == SF_CTX_RAW_MAX - 1 && c.raw[0] == '?',
           "long raw is truncated, flagged, control bytes shown as '?'");
    TAP_OK(!c.valid, "a 2000-byte uber-trace-id is invalid (%s)", c.error);
}

static void test_limits(void)
{
    static struct sf_tracectx_set s;
    char v[2000];

    sf_tracectx_set_init(&s);
    for (int i = 0; i < SF_CTX_MAX + 3; i++)
        sf_tracectx_set_add(&s, "b3", 2, (const uint8_t *)"1", 1);
    feed(&s, "x-b3-sampled\t1\n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_INT(s.n, SF_CTX_MAX, "a set keeps at most SF_CTX_MAX contexts");
    TAP_EQ_INT(s.dropped, 4, "the rest are counted in dropped");
    TAP_EQ_INT(sf_tracectx_set_finish(&s), SF_CTX_MAX, "finish twice adds nothing");

    /* 30 members of 34 bytes: 1049 bytes normalised, more than SF_CTX_STATE_MAX */
    size_t o = 0;
    for (int i = 0; i < 30; i++)
        o += (size_t)snprintf(v + o, sizeof(v) - o, "%sk%02d=%030d", i ? "," : "", i, i);
    sf_tracectx_set_init(&s);
    sf_tracectx_set_add(&s, "traceparent", 11, (const uint8_t *)TP, strlen(TP));
    sf_tracectx_set_add(&s, "tracestate", 10, (const uint8_t *)v, o);
    sf_tracectx_set_finish(&s);
    TAP_OK(s.ctx[0].valid && s.ctx[0].tracestate_truncated, "oversized tracestate is truncated");
    TAP_EQ_INT(strlen(s.ctx[0].tracestate), 29 * 35 - 1, "whole members dropped from the right");
    TAP_OK(strstr(s.ctx[0].error, "tracestate truncated") != NULL, "truncation noted: %s",
           s.ctx[0].error);

    /* a 255-char member first, then 25 small ones: the long one is dropped to make room */
    o = (size_t)snprintf(v, sizeof(v), "big=");
    memset(v + o, 'x', 251);
    o += 251;
    for (int i = 0; i < 25; i++)
        o += (size_t)snprintf(v + o, sizeof(v) - o, ",k%02d=%030d", i, i);
    sf_tracectx_set_init(&s);
    sf_tracectx_set_add(&s, "traceparent", 11, (const uint8_t *)TP, strlen(TP));
    sf_tracectx_set_add(&s, "tracestate", 10, (const uint8_t *)v, o);
    sf_tracectx_set_finish(&s);
    TAP_OK(s.ctx[0].tracestate_truncated && strncmp(s.ctx[0].tracestate, "k00=", 4) == 0,
           "members over 128 characters are dropped first");
    TAP_EQ_INT(strlen(s.ctx[0].tracestate), 25 * 35 - 1, "all 25 short members kept");
}

/* Limits that need generated inputs: baggage member counts, long sw8 fields. */
static void test_generated_limits(void)
{
    static char v[8000];
    struct sf_tracectx c;
    size_t o = 0;

    for (int i = 0; i < 65; i++)
        o += (size_t)snprintf(v + o, sizeof(v) - o, "%sk%d=%d", i ? "," : "", i, i);
    TAP_EQ_INT(sf_tracectx_parse_baggage(&c, v, o), 0, "baggage: 65 members still valid");
    TAP_OK(strstr(c.error, "over the propagation limit (65 members") != NULL, "note: %s", c.error);
    for (int i = 65; i < 181; i++)
        o += (size_t)snprintf(v + o, sizeof(v) - o, ",k%d=%d", i, i);
    TAP_EQ_INT(sf_tracectx_parse_baggage(&c, v, o), -1, "baggage: 181 members invalid");
    TAP_EQ_STR(c.error, "baggage: more than 180 list members", "181 members: reason");

    o = (size_t)snprintf(v, sizeof(v), "1-");
    memset(v + o, 'A', 2100);
    o += 2100;
    o += (size_t)snprintf(v + o, sizeof(v) - o, "-cw==-0-cw==-aQ==-ZQ==-cA==");
    TAP_EQ_INT(sf_tracectx_parse_sw8(&c, v, o), -1, "sw8: 2100-char field invalid");
    TAP_EQ_STR(c.error, "sw8: trace id is too long (2100 characters)", "sw8 long field: reason");

    memset(v, 'A', 300);
    struct sf_tracectx_set *s = malloc(sizeof(*s));
    if (s == NULL)
        return;
    sf_tracectx_set_init(s);
    sf_tracectx_set_add(s, "grpc-trace-bin", 14, (const uint8_t *)v, 300);
    sf_tracectx_set_finish(s);
    TAP_OK(s->n == 1 && strstr(s->ctx[0].error, "300 base64 characters") != NULL,
           "grpc-trace-bin: 300 base64 characters rejected (%s)", s->ctx[0].error);
    free(s);
}

static void test_tracestate_api(void)
{
    static const char v[] = " foo=1 \t,\t,bar@x= 2 ,,";
    const char *k, *val;
    size_t kl, vl, pos = 0;
    char why[SF_CTX_ERR_MAX], key[300];

    TAP_EQ_INT(sf_tracectx_check_tracestate(v, strlen(v), why, sizeof(why)), 0, "check: valid");
    TAP_OK(sf_tracectx_tracestate_next(v, strlen(v), &pos, &k, &kl, &val, &vl) && kl == 3 &&
               memcmp(k, "foo", 3) == 0 && vl == 1 && val[0] == '1',
           "next: first member foo=1");
    TAP_OK(sf_tracectx_tracestate_next(v, strlen(v), &pos, &k, &kl, &val, &vl) && kl == 5 &&
               memcmp(k, "bar@x", 5) == 0 && vl == 2 && memcmp(val, " 2", 2) == 0,
           "next: second member keeps the value's leading space");
    TAP_EQ_INT(sf_tracectx_tracestate_next(v, strlen(v), &pos, &k, &kl, &val, &vl), 0, "next: end");
    TAP_EQ_INT(sf_tracectx_check_tracestate("foo=bar=baz", 11, why, sizeof(why)), -1,
               "check: '=' in value");
    TAP_OK(strstr(why, "illegal character '='") != NULL, "why: %s", why);
    TAP_EQ_INT(sf_tracectx_check_tracestate("foo=", 4, why, sizeof(why)), -1, "check: empty value");
    TAP_EQ_INT(sf_tracectx_check_tracestate("a=1,foo", 7, why, sizeof(why)), -1, "check: no '='");
    TAP_EQ_STR(why, "member 'foo' has no '='", "why: no '='");
    TAP_EQ_INT(sf_tracectx_check_tracestate("a=1", 3, NULL, 0), 0, "check: why may be NULL");
    memset(key, 'k', sizeof(key));
    key[257] = '=';
    key[258] = '1';
    TAP_EQ_INT(sf_tracectx_check_tracestate(key, 259, why, sizeof(why)), -1, "check: 257-char key");
    TAP_OK(strstr(why, "257 characters") != NULL, "why: %s", why);
}

/* The shapes the fast paths of lib/sf_tc_fast.h take, and the inputs just outside them (which
 * the general code handles): ids at 16-byte block edges, tracestate members around the length
 * limits and with a bad byte in each lane of a block, decimal ids of every width, raw with
 * control, high and NUL bytes. */
static void test_fast_path_edges(void)
{
    static struct sf_tracectx_set s;
    struct sf_tracectx c;
    char v[600], why[SF_CTX_ERR_MAX], one[256];

    /* tracestate: trailing OWS and an inner space, a value scanned in 16-byte blocks */
    sf_tracectx_set_init(&s);
    feed(&s, "traceparent\t" TP "\ntracestate\tcongo=t61rcWkgMzE  , rojo=00f067aa0ba902b7\\x09\n"
             "tracestate\tk=a b,long_key-1*/@x=0123456789abcdef0123456789abcdef!~ \n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_STR(s.ctx[0].tracestate,
               "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,k=a b,"
               "long_key-1*/@x=0123456789abcdef0123456789abcdef!~",
               "tracestate: OWS trimmed, inner space kept, long value kept");
    TAP_EQ_STR(s.ctx[0].error, "", "tracestate: no note");
    for (size_t len = 255; len <= 257; len++) {
        v[0] = 'k';
        v[1] = '=';
        memset(v + 2, 'v', len);
        int rc = sf_tracectx_check_tracestate(v, len + 2, why, sizeof(why));
        TAP_EQ_INT(rc, len <= 256 ? 0 : -1, "tracestate: %zu-character value", len);
        if (len > 256)
            TAP_EQ_STR(why, "value of 'k' has 257 characters, need 1 to 256", "why: %s", why);
    }
    for (size_t at = 2; at < 39; at++) { /* a bad byte in every lane of the first blocks */
        static const char bad[] = {'\t', ',', '=', 0x7f, (char)0x80, 0x1f};
        for (size_t b = 0; b < sizeof(bad); b++) {
            memset(v, 'v', 40);
            memcpy(v, "k=", 2);
            v[at] = bad[b];
            int rc = sf_tracectx_check_tracestate(v, 40, why, sizeof(why));
            /* a ',' ends the member: the next one (all 'v') has no '=' */
            int ok = rc == -1 &&
                     strstr(why, bad[b] == ',' ? (at == 2 ? "has 0 characters" : "has no '='")
                                               : "has illegal character") != NULL;
            if (!ok || (at == 38 && b == sizeof(bad) - 1))
                TAP_OK(ok, "tracestate: byte 0x%02x at %zu rejected (%s)", bad[b] & 0xff, at, why);
            if (!ok)
                return;
        }
    }

    memset(v, 'v', 40);
    memcpy(v, "k=", 2);
    v[39] = '\t'; /* the same at the very end: OWS, trimmed */
    TAP_EQ_INT(sf_tracectx_check_tracestate(v, 40, why, sizeof(why)), 0,
               "tracestate: HTAB at the end is OWS");

    /* b3 single: the usual shapes and their near misses */
    sf_tracectx_parse_b3_single(&c, "a3ce929d0e0e4736-00f067aa0ba902b7-0-05e3ac9a4f6e3b90", 52);
    summary(&c, one, sizeof(one));
    TAP_EQ_STR(one,
               "b3-single 1 0000000000000000a3ce929d0e0e4736 00f067aa0ba902b7 05e3ac9a4f6e3b90 0 0 "
               "-1 1",
               "b3: 64-bit trace, sampled 0, parent");
    sf_tracectx_parse_b3_single(&c, "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-d", 51);
    summary(&c, one, sizeof(one));
    TAP_EQ_STR(one, "b3-single 1 80f198ee56343ba864fe8b2a57d3eff7 e457b5a2e4d86bd1 - 1 1 -1 0",
               "b3: debug");
    TAP_EQ_INT(sf_tracectx_parse_b3_single(
                   &c, "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-0000000000000000", 68),
               -1, "b3: zero parent");
    TAP_EQ_STR(c.error, "b3: parent span id is all zeros", "b3: zero parent: reason");
    TAP_EQ_INT(
        sf_tracectx_parse_b3_single(&c, "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bdG", 49),
        -1, "b3: bad last span digit");
    TAP_EQ_STR(c.error, "b3: span id has illegal character 'G' at offset 15",
               "b3: bad last span digit: reason");
    memcpy(v, "a3ce929d0e0e4736-00f067aa0ba902b7-1\x80\x7f\t", 38);
    sf_tracectx_parse_b3_single(&c, v, 38);
    TAP_EQ_STR(c.raw, "a3ce929d0e0e4736-00f067aa0ba902b7-1\x80?\t",
               "raw: high byte and HTAB kept, DEL shown as '?'");

    /* datadog: decimal ids of every width, the uint64 limit */
    static const char *const dd[][3] = {
        {"18446744073709551615", "1", "0000000000000000ffffffffffffffff 0000000000000001"},
        {"1234567890123456", "12345678", "0000000000000000000462d53c8abac0 0000000000bc614e"},
        {"12345678901234567", "99999999", "0000000000000000002bdc545d6b4b87 0000000005f5e0ff"},
        {"1234567890123456789", "987654321", "0000000000000000112210f47de98115 000000003ade68b1"},
    };
    for (size_t i = 0; i < sizeof(dd) / sizeof(dd[0]); i++) {
        sf_tracectx_set_init(&s);
        sf_tracectx_set_add(&s, "x-datadog-trace-id", 18, (const uint8_t *)dd[i][0],
                            strlen(dd[i][0]));
        sf_tracectx_set_add(&s, "x-datadog-parent-id", 19, (const uint8_t *)dd[i][1],
                            strlen(dd[i][1]));
        sf_tracectx_set_finish(&s);
        snprintf(one, sizeof(one), "%s %s", s.ctx[0].trace_id, s.ctx[0].span_id);
        TAP_EQ_STR(one, dd[i][2], "datadog: %s / %s", dd[i][0], dd[i][1]);
    }
    static const char *const dd_bad[] = {"18446744073709551616", "99999999999999999999", "1234567x",
                                         "12345678x", "123456789012345678901"};
    for (size_t i = 0; i < sizeof(dd_bad) / sizeof(dd_bad[0]); i++) {
        sf_tracectx_set_init(&s);
        feed(&s, "x-datadog-parent-id\t1\n");
        sf_tracectx_set_add(&s, "x-datadog-trace-id", 18, (const uint8_t *)dd_bad[i],
                            strlen(dd_bad[i]));
        sf_tracectx_set_finish(&s);
        TAP_OK(!s.ctx[0].valid && strstr(s.ctx[0].error, "is not a decimal uint64") != NULL,
               "datadog: '%s' rejected (%s)", dd_bad[i], s.ctx[0].error);
    }
    /* raw of a multi-header format: a control byte becomes '?', a NUL ends the value */
    sf_tracectx_set_init(&s);
    feed(&s, "x-datadog-trace-id\t12\\x013\nx-datadog-parent-id\t45\\x006\n");
    sf_tracectx_set_finish(&s);
    TAP_EQ_STR(s.ctx[0].raw, "x-datadog-trace-id: 12?3; x-datadog-parent-id: 45",
               "raw of datadog with a control byte and a NUL");

    /* uber-trace-id without '%', uppercase; grpc-trace-bin lists with empty elements */
    sf_tracectx_parse_uber(&c, "ABC:DEF:0:1", 11);
    summary(&c, one, sizeof(one));
    TAP_EQ_STR(one, "uber-trace-id 1 00000000000000000000000000000abc 0000000000000def - 1 0 1 1",
               "uber: uppercase ids lowercased");
    sf_tracectx_set_init(&s);
    feed(&s, "grpc-trace-bin\t,AABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE,,\n");
    sf_tracectx_set_finish(&s);
    TAP_OK(s.n == 1 && s.ctx[0].valid, "grpc-trace-bin: empty elements skipped (%d contexts)", s.n);
    sf_tracectx_set_init(&s);
    feed(&s, "grpc-trace-bin\t,\n");
    sf_tracectx_set_finish(&s);
    TAP_OK(s.n == 1 && strcmp(s.ctx[0].error, "grpc-trace-bin: empty value") == 0 &&
               strcmp(s.ctx[0].raw, ",") == 0,
           "grpc-trace-bin: ',' alone is one empty value");
    TAP_EQ_INT(sf_tracectx_header_id("traceparenT", 11), sf_tracectx_header_id("traceparent", 11),
               "header_id: last letter in uppercase");
    TAP_EQ_INT(sf_tracectx_header_id("traceparenu", 11), -1, "header_id: last letter differs");
    TAP_EQ_INT(sf_tracectx_header_id("Xraceparent", 11), -1, "header_id: first letter differs");
}

/* Edge cases of the API contract rather than of a format. */
static void test_api_edges(void)
{
    static struct sf_tracectx_set s;
    struct sf_tracectx c;

    TAP_EQ_INT(sf_tracectx_parse_traceparent(&c, NULL, 0), -1, "NULL traceparent is empty");
    TAP_EQ_STR(c.error, "traceparent: empty value", "NULL traceparent error");
    TAP_EQ_INT(sf_tracectx_parse_baggage(&c, NULL, 0), -1, "NULL baggage is empty");
    TAP_EQ_INT(sf_tracectx_parse_sw8(&c, NULL, 0), -1, "NULL sw8 is empty");
    TAP_EQ_INT(sf_tracectx_parse_grpc_trace_bin(&c, NULL, 0), -1, "NULL grpc-trace-bin is empty");
    TAP_EQ_INT(sf_tracectx_check_tracestate(NULL, 0, NULL, 0), 0, "NULL tracestate is empty");

    sf_tracectx_set_init(&s);
    sf_tracectx_set_add(&s, "b3", 2, NULL, 0);
    sf_tracectx_set_add(&s, NULL, 0, (const uint8_t *)"x", 1);
    sf_tracectx_set_finish(&s);
    TAP_OK(s.n == 1 && !s.ctx[0].valid, "set: NULL b3 value is an invalid empty context");
    sf_tracectx_set_add(&s, "b3", 2, (const uint8_t *)"1", 1);
    TAP_EQ_INT(s.n, 1, "set: headers after finish are ignored");

    /* the W3C order: a bad traceparent first means tracestate is never looked at */
    sf_tracectx_set_init(&s);
    feed(&s, "traceparent\tbogus\ntracestate\tFOO=1\n");
    sf_tracectx_set_finish(&s);
    TAP_OK(s.n == 1 && strstr(s.ctx[0].error, "tracestate") == NULL,
           "set: invalid traceparent keeps its own reason (%s)", s.ctx[0].error);
}

/* Edge inputs in the fuzz_tracectx format ("name:value" lines, \xHH escapes); every crash
 * or invariant failure the fuzzer finds is appended here and must pass from then on. */
static const char *const fuzz_regressions[] = {
    "traceparent:\ntracestate:a=1",
    "grpc-trace-bin:\x00",
    "grpc-trace-bin:,,",
};

static void test_fuzz_inputs(void)
{
    const char *dir = "tests/fuzz/corpus/fuzz_tracectx";
    char path[512];
    uint8_t buf[20000];
    struct dirent *e;
    int files = 0;
    DIR *d;

    for (size_t i = 0; i < sizeof(fuzz_regressions) / sizeof(fuzz_regressions[0]); i++) {
        size_t n = unescape(buf, fuzz_regressions[i], strlen(fuzz_regressions[i]));
        LLVMFuzzerTestOneInput(buf, n);
        TAP_OK(1, "fuzz edge input %zu holds the invariants", i);
    }
    for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
        size_t n = unescape(buf, vcases[i].in, strlen(vcases[i].in));
        LLVMFuzzerTestOneInput(buf, n);
    }
    TAP_OK(1, "fuzz invariants hold on every single-value table input");
    d = opendir(dir);
    if (d == NULL) {
        TAP_SKIP("fuzz seed corpus",
                 "tests/fuzz/corpus/fuzz_tracectx not found (run from the repo top)");
        return;
    }
    while ((e = readdir(d)) != NULL) {
        FILE *f;
        size_t n;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        f = fopen(path, "rb");
        if (f == NULL)
            continue;
        n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        files++;
    }
    closedir(d);
    TAP_OK(files > 0, "fuzz invariants hold on %d seed files", files);
}

static void test_header_names(void)
{
    static const char *const yes[] = {"traceparent",
                                      "TRACESTATE",
                                      "b3",
                                      "X-B3-TraceId",
                                      "x-b3-spanid",
                                      "X-B3-ParentSpanId",
                                      "x-b3-sampled",
                                      "X-B3-Flags",
                                      "grpc-trace-bin",
                                      "Uber-Trace-Id",
                                      "x-amzn-trace-id",
                                      "x-datadog-trace-id",
                                      "x-datadog-parent-id",
                                      "x-datadog-sampling-priority",
                                      "x-datadog-tags",
                                      "baggage",
                                      "SW8"};
    static const char *const no[] = {"",
                                     "b",
                                     "host",
                                     "content-type",
                                     "user-agent",
                                     "x-b3",
                                     "traceparents",
                                     "trace-parent",
                                     "x-datadog-origin",
                                     "grpc-trace",
                                     "sw8-correlation",
                                     "tracestat"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        TAP_OK(sf_tracectx_header_id(yes[i], strlen(yes[i])) >= 0, "header_id(%s)", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        TAP_OK(sf_tracectx_header_id(no[i], strlen(no[i])) < 0, "!header_id(%s)", no[i]);
    TAP_EQ_STR(sf_tracectx_format_name(SF_CTX_XRAY), "x-amzn-trace-id", "format name");
    TAP_EQ_STR(sf_tracectx_format_name(SF_CTX_NFORMATS), "unknown", "format name out of range");
}

/* ---- corpus driver ------------------------------------------------------------------- */

static void json_quoted(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_str(const char *key, const char *s)
{
    printf(",\"%s\":", key);
    json_quoted(s);
}

static void print_set(int setno, struct sf_tracectx_set *s)
{
    sf_tracectx_set_finish(s);
    for (int i = 0; i < s->n; i++) {
        const struct sf_tracectx *c = &s->ctx[i];
        const char *k, *v;
        size_t kl, vl, pos = 0;
        char kbuf[300], vbuf[300];
        int first = 1;

        printf("{\"set\":%d,\"index\":%d,\"valid\":%d,\"sampled\":%d,\"debug\":%d,\"flags\":%d,"
               "\"trace_id_64\":%d,\"raw_truncated\":%d",
               setno, i, c->valid, c->sampled, c->debug, c->flags, c->trace_id_64,
               c->raw_truncated);
        json_str("format", sf_tracectx_format_name(c->format));
        json_str("trace_id", c->trace_id);
        json_str("span_id", c->span_id);
        json_str("parent_id", c->parent_id);
        json_str("error", c->error);
        json_str("raw", c->raw);
        json_str("tracestate", c->tracestate);
        printf(",\"tracestate_members\":[");
        while (sf_tracectx_tracestate_next(c->tracestate, strlen(c->tracestate), &pos, &k, &kl, &v,
                                           &vl)) {
            snprintf(kbuf, sizeof(kbuf), "%.*s", (int)kl, k);
            snprintf(vbuf, sizeof(vbuf), "%.*s", (int)vl, v);
            printf("%s[", first ? "" : ",");
            first = 0;
            json_quoted(kbuf);
            putchar(',');
            json_quoted(vbuf);
            putchar(']');
        }
        printf("]}\n");
    }
    printf("{\"set\":%d,\"end\":1,\"n\":%d,\"dropped\":%d,\"preferred\":%d}\n", setno, s->n,
           s->dropped, sf_tracectx_set_preferred(s));
}

static int run_stdin(void)
{
    static struct sf_tracectx_set s;
    static uint8_t val[1 << 16];
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int setno = 0, pending = 0;

    sf_tracectx_set_init(&s);
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0) {
            if (pending)
                print_set(setno++, &s);
            sf_tracectx_set_init(&s);
            pending = 0;
            continue;
        }
        char *tab = memchr(line, '\t', (size_t)len);
        size_t nlen = tab ? (size_t)(tab - line) : (size_t)len;
        size_t vlen = 0;
        if (tab && (size_t)(line + len - tab - 1) <= sizeof(val))
            vlen = unescape(val, tab + 1, (size_t)(line + len - tab - 1));
        sf_tracectx_set_add(&s, line, nlen, val, vlen);
        pending = 1;
    }
    if (pending)
        print_set(setno, &s);
    free(line);
    return 0;
}

/* ---- micro benchmark ---------------------------------------------------------------- */

static int run_bench(long iters)
{
    static const char *const hdr[][2] = {
        {":method", "POST"},
        {":path", "/helloworld.Greeter/SayHello"},
        {"content-type", "application/grpc"},
        {"user-agent", "grpc-python/1.51.1 grpc-c/29.0.0 (linux; chttp2)"},
        {"te", "trailers"},
        {"grpc-accept-encoding", "identity,deflate,gzip"},
        {"traceparent", TP},
        {"tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"},
        {"grpc-trace-bin", "AABL+S81d7NNpqPOkp0ADkc2ATTwZ6oLqQK3AgE"},
        {"b3", "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90"},
    };
    static struct sf_tracectx_set s;
    struct timespec t0, t1;
    long ctx_headers = 0, misses = 0;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (long i = 0; i < iters; i++) {
        sf_tracectx_set_init(&s);
        for (size_t h = 0; h < sizeof(hdr) / sizeof(hdr[0]); h++)
            sf_tracectx_set_add(&s, hdr[h][0], strlen(hdr[h][0]), (const uint8_t *)hdr[h][1],
                                strlen(hdr[h][1]));
        sf_tracectx_set_finish(&s);
        ctx_headers += s.n;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec));
    printf(
        "set of %zu headers (3 contexts): %.0f CPU ns per request (%ld requests, %ld contexts)\n",
        sizeof(hdr) / sizeof(hdr[0]), ns / (double)iters, iters, ctx_headers);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (long i = 0; i < iters * 10; i++)
        for (size_t h = 0; h < 6; h++)
            misses += sf_tracectx_header_id(hdr[h][0], strlen(hdr[h][0])) < 0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec));
    printf("header_id on ordinary headers: %.1f CPU ns per name (%ld rejected)\n",
           ns / (double)(iters * 60), misses);
    return 0;
}

static int list_formats(void)
{
    for (int f = 0; f < SF_CTX_NFORMATS; f++) {
        const char *sep = "";
        printf("%s\t", sf_tracectx_format_name((enum sf_ctx_format)f));
        for (int h = 0; h < SF_TC_H_COUNT; h++) {
            if (sf_tc_headers[h].format != (enum sf_ctx_format)f)
                continue;
            printf("%s%s", sep, sf_tc_headers[h].shown);
            sep = ", ";
        }
        if (sf_tc_formats[f].rank)
            printf("\t%d\n", sf_tc_formats[f].rank);
        else
            printf("\t-\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--stdin") == 0)
        return run_stdin();
    if (argc > 1 && strcmp(argv[1], "--list-formats") == 0)
        return list_formats();
    if (argc > 2 && strcmp(argv[1], "--bench") == 0)
        return run_bench(strtol(argv[2], NULL, 10));
    test_single_values();
    test_sets();
    test_raw();
    test_limits();
    test_tracestate_api();
    test_generated_limits();
    test_api_edges();
    test_fast_path_edges();
    test_header_names();
    test_fuzz_inputs();
    return tap_done();
}

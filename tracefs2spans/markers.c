/* markers.c - the configurable span-marker grammar.
 *
 * A marker is the text of a bpf_trace_printk / trace_marker line.  It is split into
 * tokens at blanks, ',' and ';'.  A grammar is a list of keys "FIELD=PREFIX":
 *
 *   span=PREFIX      a token PREFIX<1-16 hex> (optional 0x) is the span id (left-padded)
 *   trace=PREFIX     a token PREFIX<1-32 hex> is the trace id (64-bit ids left-padded)
 *   decision=PREFIX  a token PREFIX<0|1|true|false|yes|no|keep|drop> is the decision
 *   begin=WORD       a token equal to WORD marks a begin
 *   end=WORD         a token equal to WORD marks an end
 *
 * For value keys a token equal to PREFIX takes its value from the next token
 * ("span: 00f067aa0ba902b7").  Keys are tried in order; keys match case-sensitively.
 * The default grammar accepts what spantrace and the demo write:
 *
 *   span:00f067aa0ba902b7 decision:1          trace:4bf92f3577b34da6a3ce929d0e0e4736
 *   begin span=00f067aa0ba902b7               span_id=... trace_id=... sampled=1 end
 */
#include <string.h>

#include "sf_hex.h"
#include "t2s.h"

static const char *const default_keys[] = {
    "span=span:",         "span=span=",         "span=span_id=",     "span=span_id:",
    "trace=trace:",       "trace=trace=",       "trace=trace_id=",   "trace=trace_id:",
    "decision=decision:", "decision=decision=", "decision=sampled=", "decision=sampled:",
    "begin=begin",        "begin=BEGIN",        "end=end",           "end=END",
};

void markers_default(struct mk_grammar *g)
{
    g->n = 0;
    for (size_t i = 0; i < sizeof(default_keys) / sizeof(default_keys[0]); i++)
        markers_add_key(g, default_keys[i], NULL);
}

int markers_add_key(struct mk_grammar *g, const char *spec, struct sf_err *err)
{
    static const struct {
        const char *name;
        enum mk_field f;
    } fields[] = {{"span", MK_SPAN},
                  {"trace", MK_TRACE},
                  {"decision", MK_DECISION},
                  {"begin", MK_BEGIN},
                  {"end", MK_END}};
    const char *eq = strchr(spec, '=');
    size_t flen, plen;

    if (eq == NULL)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "marker key '%s': expected FIELD=PREFIX",
                          spec);
    flen = (size_t)(eq - spec);
    plen = strlen(eq + 1);
    if (plen == 0 || plen > MK_MAX_PREFIX || strpbrk(eq + 1, " \t,;"))
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                          "marker key '%s': PREFIX must be 1-%d characters without blanks, ',' "
                          "or ';'",
                          spec, MK_MAX_PREFIX);
    if (g->n >= MK_MAX_KEYS)
        return sf_err_set(err, SF_E_USAGE, UINT64_MAX, "more than %d marker keys", MK_MAX_KEYS);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (strlen(fields[i].name) == flen && memcmp(spec, fields[i].name, flen) == 0) {
            struct mk_key *k = &g->keys[g->n++];
            k->field = fields[i].f;
            memcpy(k->prefix, eq + 1, plen + 1);
            k->len = plen;
            return 0;
        }
    }
    return sf_err_set(err, SF_E_USAGE, UINT64_MAX,
                      "marker key '%s': FIELD must be span, trace, decision, begin or end", spec);
}

static int is_sep(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == ';';
}

/* Hex id of at most width digits, optional 0x, into out (left-padded). */
static int take_hex(char *out, size_t width, const char *v, size_t n)
{
    if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
        v += 2, n -= 2;
    if (n == 0 || n > width)
        return -1;
    return sf_hex_pad_lower(out, width, v, n) == 0 ? 0 : -1;
}

static int take_decision(const char *v, size_t n)
{
    static const char *const yes[] = {"1", "true", "yes", "keep", "sampled"};
    static const char *const no[] = {"0", "false", "no", "drop"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        if (strlen(yes[i]) == n && memcmp(v, yes[i], n) == 0)
            return 1;
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (strlen(no[i]) == n && memcmp(v, no[i], n) == 0)
            return 0;
    return -1;
}

/* Apply one key to its value; a failed value is counted, the first good one wins. */
static void take(struct mk_result *r, enum mk_field f, const char *v, size_t n)
{
    int d;

    switch (f) {
    case MK_SPAN:
        if (r->has_span)
            return;
        if (take_hex(r->span_id, 16, v, n) == 0 && !sf_hex_is_zero(r->span_id, 16))
            r->has_span = 1;
        else
            r->bad_values++;
        return;
    case MK_TRACE:
        if (r->has_trace)
            return;
        if (take_hex(r->trace_id, 32, v, n) == 0 && !sf_hex_is_zero(r->trace_id, 32))
            r->has_trace = 1;
        else
            r->bad_values++;
        return;
    case MK_DECISION:
        if ((d = take_decision(v, n)) < 0)
            r->bad_values++;
        else if (r->decision < 0)
            r->decision = d;
        return;
    case MK_BEGIN:
    case MK_END:
        return;
    }
}

int markers_parse(const struct mk_grammar *g, const char *msg, size_t n, struct mk_result *out)
{
    size_t i = 0;

    memset(out, 0, sizeof(*out));
    out->decision = -1;
    while (i < n) {
        size_t a, len;
        while (i < n && is_sep(msg[i]))
            i++;
        for (a = i; i < n && !is_sep(msg[i]); i++)
            ;
        len = i - a;
        if (len == 0)
            break;
        for (int k = 0; k < g->n; k++) {
            const struct mk_key *key = &g->keys[k];
            if (len < key->len || memcmp(msg + a, key->prefix, key->len) != 0)
                continue;
            if (key->field == MK_BEGIN || key->field == MK_END) {
                if (len != key->len)
                    continue;
                if (key->field == MK_BEGIN)
                    out->begin = 1;
                else
                    out->end = 1;
            } else if (len > key->len) {
                take(out, key->field, msg + a + key->len, len - key->len);
            } else {
                /* "span: 00f0..." - the value is the next token */
                size_t b;
                while (i < n && is_sep(msg[i]))
                    i++;
                for (b = i; i < n && !is_sep(msg[i]); i++)
                    ;
                take(out, key->field, msg + b, i - b);
            }
            break;
        }
    }
    return out->has_span;
}

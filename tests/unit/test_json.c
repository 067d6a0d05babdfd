/* Unit tests: lib/sf_json escaping, the compact writer and the indented one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sf_json.h"
#include "tap.h"

static char *esc(const char *s, size_t n)
{
    static char out[256];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    sf_json_str(f, s, n);
    fclose(f);
    snprintf(out, sizeof(out), "%s", buf);
    free(buf);
    return out;
}

/* The calls of an inflect-like summary: an object with an array of objects, an
 * inline array holding an array and an object, empty containers of each kind. */
static void shape(struct sf_jw *w)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "name", "p99");
    sf_jw_int(w, "n", 120);
    sf_jw_arr(w, "points");
    sf_jw_obj(w, NULL);
    sf_jw_int(w, "index", 60);
    sf_jw_num(w, "change", 0.5);
    sf_jw_end(w);
    sf_jw_end(w);
    sf_jw_obj(w, "by");
    sf_jw_arr_inline(w, "pelt");
    sf_jw_int(w, NULL, 60);
    sf_jw_int(w, NULL, 90);
    sf_jw_arr(w, NULL); /* inside an inline array: stays on the line */
    sf_jw_int(w, NULL, 1);
    sf_jw_int(w, NULL, 2);
    sf_jw_end(w);
    sf_jw_obj(w, NULL);
    sf_jw_bool(w, "k", 0);
    sf_jw_null(w, "z");
    sf_jw_end(w);
    sf_jw_end(w);
    sf_jw_arr_inline(w, "cusum");
    sf_jw_end(w);
    sf_jw_end(w);
    sf_jw_arr(w, "gates");
    sf_jw_end(w);
    sf_jw_obj(w, "model");
    sf_jw_end(w);
    sf_jw_end(w);
}

/* Write the calls of fn with a compact (indent 0) or an indented writer; returns
 * the text and what sf_jw_finish returned (caller frees). */
static char *render(void (*fn)(struct sf_jw *), int indent, int prec, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct sf_jw w;

    if (indent)
        sf_jw_init_pretty(&w, f, indent, prec);
    else
        sf_jw_init(&w, f);
    fn(&w);
    *rc = sf_jw_finish(&w);
    fclose(f);
    return buf;
}

/* One number through sf_jw_num with prec digits (0: the compact writer). */
static char *num(int prec, double v)
{
    static char out[64];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct sf_jw w;

    if (prec)
        sf_jw_init_pretty(&w, f, 2, prec);
    else
        sf_jw_init(&w, f);
    sf_jw_num(&w, NULL, v);
    fclose(f);
    snprintf(out, sizeof(out), "%s", buf);
    free(buf);
    return out;
}

static void nested(struct sf_jw *w)
{
    for (int i = 0; i < 3; i++)
        sf_jw_arr(w, NULL);
    sf_jw_str(w, NULL, "x");
    for (int i = 0; i < 3; i++)
        sf_jw_end(w);
    sf_jw_end(w); /* one too many: ignored at the top level */
}

/* 3,000 levels, objects and arrays in turn: past the struct's SF_JW_LEVELS, on the heap */
#define DEEP 3000
static void deep(struct sf_jw *w)
{
    for (int i = 0; i < DEEP; i++)
        if (i % 2)
            sf_jw_arr(w, "c");
        else
            sf_jw_obj(w, NULL);
    sf_jw_int(w, NULL, 7);
    for (int i = 0; i < DEEP; i++)
        sf_jw_end(w);
}

static void escaped_key(struct sf_jw *w)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "a\"b\n", "\xff");
    sf_jw_end(w);
}

static void compact_calls(struct sf_jw *w)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "a", "x");
    sf_jw_arr(w, "b");
    sf_jw_int(w, NULL, -5);
    sf_jw_int_str(w, NULL, 1544712660000000000LL);
    sf_jw_num(w, NULL, 0.0 / 0.0);
    sf_jw_obj(w, NULL);
    sf_jw_end(w);
    sf_jw_end(w);
    sf_jw_bool(w, "c", 1);
    sf_jw_str(w, "d", NULL);
    sf_jw_end(w);
}

int main(void)
{
    char *out;
    int rc;
    FILE *ro;
    struct sf_jw w;

    TAP_EQ_STR(esc("abc", 3), "\"abc\"", "plain string");
    TAP_EQ_STR(esc("a\"b\\c", 5), "\"a\\\"b\\\\c\"", "quote and backslash escaped");
    TAP_EQ_STR(esc("\n\r\t\x01", 4), "\"\\n\\r\\t\\u0001\"", "control characters escaped");
    TAP_EQ_STR(esc("x\0y", 3), "\"x\\u0000y\"", "NUL inside a value is kept, escaped");
    TAP_EQ_STR(esc("Am\xc3\xa9lie", 7), "\"Am\xc3\xa9lie\"", "valid UTF-8 passes through");
    TAP_EQ_STR(esc("\xff\xc3", 2), "\"\\u00ff\\u00c3\"",
               "invalid and truncated UTF-8 become \\u00XX");
    TAP_EQ_STR(esc("\xed\xa0\x80", 3), "\"\\u00ed\\u00a0\\u0080\"",
               "UTF-16 surrogates are not UTF-8");
    TAP_EQ_STR(esc("\xe2\x82\xac", 3), "\"\xe2\x82\xac\"", "three-byte sequence kept");

    out = render(compact_calls, 0, 0, &rc);
    TAP_EQ_STR(out,
               "{\"a\":\"x\",\"b\":[-5,\"1544712660000000000\",null,{}],\"c\":true,\"d\":null}\n",
               "writer: nesting, commas, 64-bit as string, NaN as null");
    free(out);

    /* the same calls, compact: arr_inline is a plain array, no whitespace */
    out = render(shape, 0, 0, &rc);
    TAP_EQ_STR(out,
               "{\"name\":\"p99\",\"n\":120,\"points\":[{\"index\":60,\"change\":0.5}],"
               "\"by\":{\"pelt\":[60,90,[1,2],{\"k\":false,\"z\":null}],\"cusum\":[]},"
               "\"gates\":[],\"model\":{}}\n",
               "compact: inline arrays are plain arrays, no whitespace");
    TAP_EQ_INT(rc, 0, "compact: finish returns 0 on a good stream");
    free(out);

    out = render(shape, 2, 10, &rc);
    TAP_EQ_STR(out,
               "{\n"
               "  \"name\": \"p99\",\n"
               "  \"n\": 120,\n"
               "  \"points\": [\n"
               "    {\n"
               "      \"index\": 60,\n"
               "      \"change\": 0.5\n"
               "    }\n"
               "  ],\n"
               "  \"by\": {\n"
               "    \"pelt\": [60, 90, [1, 2], {\"k\": false, \"z\": null}],\n"
               "    \"cusum\": []\n"
               "  },\n"
               "  \"gates\": [],\n"
               "  \"model\": {}\n"
               "}\n",
               "pretty: one member a line, inline arrays on one line with what they hold, "
               "empty containers closed at once");
    TAP_EQ_INT(rc, 0, "pretty: finish returns 0 on a good stream");
    free(out);

    out = render(nested, 4, 10, &rc);
    TAP_EQ_STR(out, "[\n    [\n        [\n            \"x\"\n        ]\n    ]\n]\n",
               "pretty: indent width is a parameter; an extra end is ignored");
    free(out);
    out = render(nested, 99, 10, &rc);
    TAP_OK(strncmp(out, "[\n                [", 19) == 0 && out[19] == '\n',
           "pretty: indent clamped to 16");
    free(out);

    {
        size_t ok = 1, n;
        out = render(deep, 0, 0, &rc);
        n = strlen(out);
        /* {"c":[{"c":[ ... 7 ... ]}]}: each level opened and closed by its own bracket */
        for (int i = 0; i < DEEP && ok; i++) {
            const char *open = i % 2 ? "\"c\":[" : "{";
            ok = strncmp(out + (i / 2) * 6 + (i % 2), open, strlen(open)) == 0;
        }
        for (int i = 0; i < DEEP && ok; i++)
            ok = out[n - 2 - i] == (i % 2 ? ']' : '}'); /* level i closes i from the end */
        TAP_OK(ok && rc == 0, "compact: 3,000 levels closed in order (beyond the %d in the struct)",
               SF_JW_LEVELS);
        free(out);
        out = render(deep, 1, 10, &rc);
        TAP_OK(rc == 0 && out[strlen(out) - 2] == '}', "pretty: 3,000 levels, closed");
        free(out);
    }

    out = render(escaped_key, 2, 10, &rc);
    TAP_EQ_STR(out, "{\n  \"a\\\"b\\n\": \"\\u00ff\"\n}\n", "pretty: keys and values escaped");
    free(out);

    TAP_EQ_STR(num(0, 0.1), "0.10000000000000001", "compact numbers: 17 digits, round trip");
    TAP_EQ_STR(num(10, 0.1), "0.1", "pretty numbers: the digits asked for (10)");
    TAP_EQ_STR(num(10, 1.0 / 3), "0.3333333333", "10 digits of 1/3");
    TAP_EQ_STR(num(10, 12345678901234.0), "1.23456789e+13", "exponent form past the digits");
    TAP_EQ_STR(num(3, -2.5e-7), "-2.5e-07", "small negative keeps its sign");
    TAP_EQ_STR(num(10, -0.0), "0", "-0 written as 0 (pretty)");
    TAP_EQ_STR(num(0, -0.0), "0", "-0 written as 0 (compact)");
    TAP_EQ_STR(num(10, INFINITY), "null", "infinity -> null");
    TAP_EQ_STR(num(10, -INFINITY), "null", "-infinity -> null");
    TAP_EQ_STR(num(10, NAN), "null", "NaN -> null");
    TAP_EQ_STR(num(99, 0.1), "0.10000000000000001", "precision clamped to 17");
    TAP_EQ_STR(num(-5, 0.25), "0.2", "precision clamped to 1");

    /* a stream that cannot be written: the error shows at finish */
    ro = fopen("/dev/null", "r");
    if (ro == NULL) {
        TAP_SKIP("finish reports a stream error", "cannot open /dev/null");
    } else {
        sf_jw_init_pretty(&w, ro, 2, 10);
        sf_jw_obj(&w, NULL);
        sf_jw_int(&w, "a", 1);
        sf_jw_end(&w);
        TAP_EQ_INT(sf_jw_finish(&w), -1, "finish returns -1 after a write error");
        fclose(ro);
    }
    return tap_done();
}

/* Unit tests: lib/sf_json escaping and the compact writer. */
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

int main(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
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

    f = open_memstream(&buf, &len);
    sf_jw_init(&w, f);
    sf_jw_obj(&w, NULL);
    sf_jw_str(&w, "a", "x");
    sf_jw_arr(&w, "b");
    sf_jw_int(&w, NULL, -5);
    sf_jw_int_str(&w, NULL, 1544712660000000000LL);
    sf_jw_num(&w, NULL, 0.0 / 0.0);
    sf_jw_obj(&w, NULL);
    sf_jw_end(&w);
    sf_jw_end(&w);
    sf_jw_bool(&w, "c", 1);
    sf_jw_str(&w, "d", NULL);
    sf_jw_end(&w);
    fclose(f);
    TAP_EQ_STR(buf,
               "{\"a\":\"x\",\"b\":[-5,\"1544712660000000000\",null,{}],\"c\":true,\"d\":null}",
               "writer: nesting, commas, 64-bit as string, NaN as null");
    free(buf);
    return tap_done();
}

/* Unit tests: lib/sf_text - Markdown code spans and text, XML text, CSV fields, labels and
 * UTF-8-safe truncation, each on hostile strings. */
#include <stdlib.h>
#include <string.h>

#include "sf_text.h"
#include "tap.h"

typedef void (*writer_fn)(FILE *f, const char *s, size_t n, unsigned flags);

static void w_xml(FILE *f, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    sf_text_xml(f, s, n);
}

static void w_xml_text(FILE *f, const char *s, size_t n, unsigned flags)
{
    sf_text_xml_esc(f, s, n, flags);
}

static void w_csv(FILE *f, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    sf_text_csv(f, s, n);
}

/* What fn writes for s[0..n) (static buffer; long enough for every case below). */
static const char *out(writer_fn fn, const char *s, size_t n, unsigned flags)
{
    static char res[4096];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    fn(f, s, n, flags);
    fclose(f);
    snprintf(res, sizeof(res), "%s", buf);
    free(buf);
    return res;
}

struct tcase {
    const char *in;
    const char *want;
};

static void code_spans(void)
{
    static const struct tcase cases[] = {
        {"main;foo", "`main;foo`"},
        {"a`b", "``a`b``"},
        {"a``b`c", "```a``b`c```"},
        {"`x", "`` `x ``"}, /* a leading backtick would join the fence */
        {"x`", "`` x` ``"}, /* so would a trailing one */
        {" x ", "`  x  `"}, /* CommonMark strips one space each side */
        {" x", "` x`"},     /* only when both sides have one */
        {"  ", "`  `"},     /* all spaces: nothing stripped */
        {"", "` `"},        /* `` is no code span */
        {"a\nb\r\tc", "`a\xe2\x90\x8a"
                      "b\xe2\x90\x8d\xe2\x90\x89"
                      "c`"},                      /* no line break */
        {"x\xff", "`x\xef\xbf\xbd`"},             /* not UTF-8 */
        {"\xe2\x80\xaeRTL", "`\xef\xbf\xbdRTL`"}, /* U+202E override */
        {"<img onerror=x>", "`<img onerror=x>`"}, /* literal inside code */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        TAP_EQ_STR(out(sf_text_md_code, cases[i].in, strlen(cases[i].in), 0), cases[i].want,
                   "md code span %zu", i);
    TAP_EQ_STR(out(sf_text_md_code, "a|b\\|c", 6, SF_TEXT_CELL), "`a\\|b\\\\|c`",
               "md code span in a table cell: every '|' escaped");
    TAP_EQ_STR(out(sf_text_md_code, "a|b", 3, 0), "`a|b`", "md code span outside a table: '|'");
    TAP_EQ_STR(out(sf_text_md_code, "a\0b", 3, 0),
               "`a\xe2\x90\x80"
               "b`",
               "NUL: U+2400");
}

static void md_text(void)
{
    static const struct tcase cases[] = {
        {"plain text 42", "plain text 42"},
        {"# H", "\\# H"},
        {"![x](http://e/)", "\\!\\[x\\]\\(http\\:\\/\\/e\\/\\)"},
        {"<b>&amp;", "\\<b\\>\\&amp\\;"},
        {"a|b", "a\\|b"},
        {"x@y.z", "x\\@\xe2\x81\xa0y\\.z"}, /* no e-mail autolink */
        {"www.a.com", "www\\.a\\.com"},
        {"l1\n# l2", "l1\xe2\x90\x8a\\# l2"},
        {"\\*", "\\\\\\*"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        TAP_EQ_STR(out(sf_text_md, cases[i].in, strlen(cases[i].in), 0), cases[i].want,
                   "md text %zu", i);
}

static void w_cell(FILE *f, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    sf_text_md_cell(f, s, n);
}

static void md_cells(void)
{
    static const struct tcase cases[] = {
        {"p99", "p99"},
        {"+12.5%", "+12.5%"},
        {"perf", "perf"},
        {"t (s)", "t (s)"},
        {"a/b", "a/b"},
        {"[x](y)", "`[x](y)`"},
        {"http://x", "`http://x`"},
        {"1, 2 -3", "1, 2 -3"},
        {"error_rate", "`error_rate`"},
        {"-1", "-1"},
        {" x", "` x`"}, /* a table would trim the space */
        {"", "` `"},
        {"evil www.x.com", "`evil www.x.com`"},
        {"WWW.x", "`WWW.x`"},
        {"a|b", "`a\\|b`"},
        {"x\ny", "`x\xe2\x90\x8ay`"},
        {"\xc3\xa9t\xc3\xa9", "`\xc3\xa9t\xc3\xa9`"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        TAP_EQ_STR(out(w_cell, cases[i].in, strlen(cases[i].in), 0), cases[i].want, "md cell %zu",
                   i);
}

static void xml_text(void)
{
    static const struct tcase cases[] = {
        {"a<b>&\"'", "a&lt;b&gt;&amp;&quot;&#39;"},
        {"]]>", "]]&gt;"},
        {"t\tn\nr\r", "t\tn\nr&#13;"},
        {"\x01\x1b[31m", "\xe2\x90\x81\xe2\x90\x9b[31m"},
        {"\xef\xbf\xbe\xef\xbf\xbf", "\xef\xbf\xbd\xef\xbf\xbd"}, /* U+FFFE U+FFFF */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate: 3 bytes */
        {"\xc3\xa9\xf0\x9f\x94\xa5", "\xc3\xa9\xf0\x9f\x94\xa5"}, /* é and U+1F525 kept */
        {"\xc2\x85", "\xef\xbf\xbd"},                             /* C1 NEL */
        {"\xe2\x81\xa6x", "\xef\xbf\xbdx"},                       /* U+2066 isolate */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        TAP_EQ_STR(out(w_xml, cases[i].in, strlen(cases[i].in), 0), cases[i].want, "xml %zu", i);
    TAP_EQ_STR(out(w_xml_text, "<'\"&\x01", 5, 0), "&lt;'\"&amp;\xe2\x90\x81",
               "xml_esc without flags: quotes kept, the rest as sf_text_xml");
    TAP_EQ_STR(out(w_xml_text, "'\"", 2, SF_TEXT_QUOT), "'&quot;", "xml_esc SF_TEXT_QUOT");
    TAP_EQ_STR(out(w_xml_text, "'\"", 2, SF_TEXT_APOS), "&#39;\"", "xml_esc SF_TEXT_APOS");
}

static void csv_fields(void)
{
    static const struct tcase cases[] = {
        {"GET /a", "\"GET /a\""},
        {"\",0,0,1,1,99999\nx", "\"\"\",0,0,1,1,99999\nx\""},
        {"=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
        {"+1", "\"'+1\""},
        {"-1", "\"'-1\""},
        {"@SUM(A1)", "\"'@SUM(A1)\""},
        {"\tx", "\"'\tx\""},
        {"a=b", "\"a=b\""},
        {"", "\"\""},
        {"\x07\xff", "\"\xe2\x90\x87\xef\xbf\xbd\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        TAP_EQ_STR(out(w_csv, cases[i].in, strlen(cases[i].in), 0), cases[i].want, "csv %zu", i);
}

static void cuts(void)
{
    const char *s = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5"; /* a b é € U+1F525 */
    size_t n = strlen(s);
    static const size_t want[] = {0, 1, 2, 2, 4, 4, 4, 7, 7, 7, 7, 11, 11};

    for (size_t max = 0; max <= n + 1; max++)
        TAP_EQ_INT(sf_text_utf8_cut(s, n, max), want[max], "utf8 cut at %zu", max);
    TAP_EQ_INT(sf_text_utf8_cut("a\xff\xfe", 3, 2), 2, "a byte that is not UTF-8 is one char");
}

static void bounded(void)
{
    char b[32];
    const char *name = "h\xc3\xa9llo-world-a-very-long-frame-name";
    size_t r;

    r = sf_text_md_code_str(b, sizeof(b), "x", 1, 0);
    TAP_OK(r == 3 && strcmp(b, "`x`") == 0, "md code str: fits whole");
    r = sf_text_md_code_str(b, 16, name, strlen(name), 0);
    TAP_EQ_STR(b, "`h\xc3\xa9llo-wor\xe2\x80\xa6`", "md code str: cut, ellipsis inside the span");
    TAP_EQ_INT(r, strlen(b), "md code str: returns the length");
    r = sf_text_md_code_str(b, 12, "``````x", 7, 0);
    TAP_OK(r == 0 && b[0] == 0, "md code str: no room for the fences gives \"\"");
    r = sf_text_md_code_str(b, 16, "`a`b`c`d`e`f`g`h", 16, 0);
    TAP_EQ_STR(b, "`` `a`b`c\xe2\x80\xa6 ``", "md code str: cut keeps the pad of a leading `");
    sf_text_xml_str(b, 10, "a&b&c&d", 7);
    TAP_EQ_STR(b, "a&amp;\xe2\x80\xa6", "xml str: an entity is never cut");
    sf_text_label(b, 8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8);
    TAP_EQ_STR(b, "\xc3\xa9\xc3\xa9\xe2\x80\xa6", "label: cut between characters");
    sf_text_label(b, sizeof(b), "a]]>b\nc'd", 9);
    TAP_EQ_STR(b,
               "a]]\xef\xbc\x9e"
               "b\xe2\x90\x8a"
               "c'd",
               "label: ]]> broken, one line");
    sf_text_md_str(b, 6, "#####", 5, 0);
    TAP_EQ_STR(b, "\\#\xe2\x80\xa6", "md str: an escape is never cut");
    TAP_EQ_INT(sf_text_label(b, 0, "x", 1), 0, "cap 0 writes nothing");
}

/* sf_text_list_next: the members of an HTTP comma list, trimmed, empty ones skipped. */
static void lists(void)
{
    static const char v[] = " gzip ,\tbr,, zstd\t, ";
    char got[64] = "";
    size_t pos = 0, l, used = 0;
    const char *t;

    while (sf_text_list_next(v, sizeof(v) - 1, &pos, &t, &l))
        used += (size_t)snprintf(got + used, sizeof(got) - used, "[%.*s]", (int)l, t);
    TAP_EQ_STR(got, "[gzip][br][zstd]", "a comma list: members trimmed, empty ones skipped");
    pos = 0;
    TAP_OK(!sf_text_list_next(" , ,", 4, &pos, &t, &l) && pos == 4, "an empty list: no member");
}

int main(void)
{
    lists();
    code_spans();
    md_text();
    md_cells();
    xml_text();
    csv_fields();
    cuts();
    bounded();
    return tap_done();
}

/* fuzz_text.c - libFuzzer target for lib/sf_text: every writer on any bytes.  Asserts
 * what docs/output-safety.md promises: valid UTF-8 out, no character XML forbids, no
 * bidirectional control, and each format's own shape (XML without '<' or a stray '&', a
 * code span with balanced fences and no line break, Markdown text with every ASCII
 * punctuation escaped, one quoted CSV field without a formula start, a label without
 * "]]>"); the bounded forms never overflow and cut only between characters. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_json.h"
#include "sf_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Valid UTF-8 with only the C0 controls in keep, and no character of the list. */
static void check_chars(const char *s, size_t n, const char *keep)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0; i < n;) {
        size_t l = sf_json_utf8_len(u + i, n - i);
        uint32_t cp = u[i];
        if (l == 0)
            abort();
        if (l > 1)
            cp = u[i] & (0x7f >> l);
        for (size_t k = 1; k < l; k++)
            cp = cp << 6 | (u[i + k] & 0x3f);
        if ((cp < 0x20 && (cp == 0 || !strchr(keep, (int)cp))) || cp == 0x7f ||
            (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
            (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfffe || cp == 0xffff)
            abort();
        i += l;
    }
}

static void check_xml(const char *s, size_t n, unsigned flags)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#13;"};

    check_chars(s, n, "\t\n");
    for (size_t i = 0; i < n; i++) {
        int ok = 0;
        if (s[i] == '<' || s[i] == '>' || ((flags & SF_TEXT_QUOT) && s[i] == '"') ||
            ((flags & SF_TEXT_APOS) && s[i] == '\''))
            abort();
        if (s[i] != '&')
            continue;
        for (size_t k = 0; k < sizeof(ent) / sizeof(ent[0]); k++)
            ok |= strncmp(s + i, ent[k], strlen(ent[k])) == 0;
        if (!ok)
            abort();
    }
}

/* One code span: a fence of k backticks each side, no run of k inside, no line break;
 * in a table cell every '|' has a backslash before it. */
static void check_code(const char *s, size_t n, unsigned flags)
{
    size_t k = 0, e = 0, run = 0;

    check_chars(s, n, "");
    while (k < n && s[k] == '`')
        k++;
    while (e < n && s[n - 1 - e] == '`')
        e++;
    if (k == 0 || k != e || 2 * k >= n)
        abort();
    for (size_t i = k; i < n - k; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run >= k || ((flags & SF_TEXT_CELL) && s[i] == '|' && s[i - 1] != '\\'))
            abort();
    }
    if (s[k] == '`' || s[n - k - 1] == '`')
        abort();
}

static int punct(char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

static void check_md(const char *s, size_t n)
{
    check_chars(s, n, "");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n && punct(s[i + 1]))
            i++;
        else if (punct(s[i]))
            abort();
    }
}

static void check_csv(const char *s, size_t n)
{
    check_chars(s, n, "\t\n\r");
    if (n < 2 || s[0] != '"' || s[n - 1] != '"' || (n > 2 && strchr("=+-@\t\r", s[1])))
        abort();
    for (size_t i = 1; i < n - 1; i++)
        if (s[i] == '"' && s[++i] != '"')
            abort();
}

typedef void (*writer_fn)(FILE *f, const char *s, size_t n, unsigned flags);

static void w_xml(FILE *f, const char *s, size_t n, unsigned flags)
{
    sf_text_xml_esc(f, s, n, flags);
}

static void w_csv(FILE *f, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    sf_text_csv(f, s, n);
}

static void w_cell(FILE *f, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    sf_text_md_cell(f, s, n);
}

/* What fn writes (caller frees; *len its length). */
static char *written(writer_fn fn, const char *s, size_t n, unsigned flags, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);

    if (f == NULL)
        abort();
    fn(f, s, n, flags);
    fclose(f);
    return buf;
}

static void bounded(const char *s, size_t n, size_t cap)
{
    char *b = malloc(cap + 1);
    size_t r;

    if (b == NULL)
        return;
    b[cap] = 'Z'; /* past the end: never written */
    r = sf_text_xml_str(b, cap, s, n);
    if (r >= cap || strlen(b) != r || b[cap] != 'Z')
        abort();
    check_xml(b, r, SF_TEXT_QUOT | SF_TEXT_APOS);
    r = sf_text_md_code_str(b, cap, s, n, SF_TEXT_CELL);
    if (r >= cap || strlen(b) != r || b[cap] != 'Z')
        abort();
    if (r > 0)
        check_code(b, r, SF_TEXT_CELL);
    r = sf_text_label(b, cap, s, n);
    if (r >= cap || strlen(b) != r || b[cap] != 'Z' || strstr(b, "]]>"))
        abort();
    check_chars(b, r, "");
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t len, cut;
    char *o;

    if (size > 4096)
        return 0;
    for (unsigned fl = 0; fl < 4; fl++) {
        o = written(w_xml, s, size, fl << 1, &len);
        check_xml(o, len, fl << 1);
        free(o);
    }
    o = written(sf_text_md_code, s, size, SF_TEXT_CELL, &len);
    check_code(o, len, SF_TEXT_CELL);
    free(o);
    o = written(sf_text_md, s, size, 0, &len);
    check_md(o, len);
    free(o);
    o = written(w_cell, s, size, 0, &len);
    if (len == 0)
        abort();
    if (o[0] == '`')
        check_code(o, len, SF_TEXT_CELL);
    else if (len != size || memcmp(o, s, size) != 0 || strpbrk(o, "`|<>[]*_&\\:@!#\n"))
        abort(); /* a cell written as it is holds none of Markdown's inline syntax */
    check_chars(o, len, "");
    free(o);
    o = written(w_csv, s, size, 0, &len);
    check_csv(o, len);
    free(o);
    /* a cut ends where a character ends */
    cut = sf_text_utf8_cut(s, size, size / 2);
    if (cut > size / 2)
        abort();
    for (size_t i = 0; i < cut;) {
        size_t l = sf_json_utf8_len(data + i, size - i);
        i += l ? l : 1;
        if (i > cut)
            abort();
    }
    bounded(s, size, 1 + size % 97);
    bounded(s, size, 16 + size);
    return 0;
}

/* sf_text.c - captured strings made inert for Markdown, XML/HTML, CSV and labels (see
 * sf_text.h; the rules are in docs/output-safety.md).
 *
 * Every writer walks its input one character at a time (struct ch) and sends each
 * character's representation whole to a sink: a FILE, a bounded buffer or a counter.
 * The bounded buffer refuses a piece that does not fit, so a cut never splits a
 * character or an escape, and it keeps `reserve` bytes free for what closes the text
 * (a code span's fence, U+2026).
 */
#include "sf_text.h"

#include <stdint.h>
#include <string.h>

#include "sf_json.h"

#define REPL     "\xef\xbf\xbd" /* U+FFFD */
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

struct sink {
    FILE *f;        /* FILE mode; else buffer mode (buf != NULL) or counting mode */
    char *buf;      /* buffer mode: dst[0..cap) */
    size_t cap;     /* buffer mode: size of buf */
    size_t len;     /* bytes written (all modes) */
    size_t reserve; /* buffer mode: bytes kept free after len (besides the NUL) */
    int full;       /* buffer mode: a piece did not fit; nothing more is written */
};

/* Send p[0..n) whole; returns 0, or -1 (buffer mode) when it did not fit. */
static int put(struct sink *k, const char *p, size_t n)
{
    if (k->f) {
        fwrite(p, 1, n, k->f);
    } else if (k->buf) {
        if (k->full || k->len + n + k->reserve + 1 > k->cap) {
            k->full = 1;
            return -1;
        }
        memcpy(k->buf + k->len, p, n);
        k->buf[k->len + n] = 0;
    }
    k->len += n;
    return 0;
}

/* One character of the input: its bytes, its code point, and the neutral form of a
 * character that no output may hold as it is (nrep > 0). */
struct ch {
    const char *raw;
    size_t len;
    uint32_t cp;
    char rep[4];
    size_t nrep;
};

static void set_rep(struct ch *c, const char *r)
{
    c->nrep = strlen(r);
    memcpy(c->rep, r, c->nrep);
}

static void decode(const char *s, size_t n, struct ch *c)
{
    const unsigned char *u = (const unsigned char *)s;

    c->raw = s;
    c->nrep = 0;
    c->len = sf_json_utf8_len(u, n);
    if (c->len == 0) { /* not UTF-8: this byte alone becomes U+FFFD */
        c->len = 1;
        c->cp = 0xfffd;
        set_rep(c, REPL);
        return;
    }
    c->cp = c->len == 1 ? u[0] : (uint32_t)(u[0] & (0x7f >> c->len));
    for (size_t i = 1; i < c->len; i++)
        c->cp = c->cp << 6 | (u[i] & 0x3f);
    if (c->cp < 0x20 || c->cp == 0x7f) { /* control pictures U+2400..241F, U+2421 */
        uint32_t pic = c->cp == 0x7f ? 0x2421 : 0x2400 + c->cp;
        c->rep[0] = (char)0xe2;
        c->rep[1] = (char)(0x80 | (pic >> 6 & 0x3f));
        c->rep[2] = (char)(0x80 | (pic & 0x3f));
        c->nrep = 3;
    } else if ((c->cp >= 0x80 && c->cp <= 0x9f) || (c->cp >= 0x202a && c->cp <= 0x202e) ||
               (c->cp >= 0x2066 && c->cp <= 0x2069) || c->cp == 0xfffe || c->cp == 0xffff) {
        set_rep(c, REPL);
    }
}

/* The neutral form if there is one, else the character as it came. */
static int put_ch(struct sink *k, const struct ch *c)
{
    return c->nrep ? put(k, c->rep, c->nrep) : put(k, c->raw, c->len);
}

int sf_text_list_next(const char *v, size_t n, size_t *pos, const char **item, size_t *len)
{
    size_t i = *pos;

    while (i < n) {
        size_t j = i, e;
        while (j < n && v[j] != ',')
            j++;
        e = j;
        while (i < e && (v[i] == ' ' || v[i] == '\t'))
            i++;
        while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        *pos = j < n ? j + 1 : n;
        if (e > i) {
            *item = v + i;
            *len = e - i;
            return 1;
        }
        i = *pos;
    }
    *pos = n;
    return 0;
}

char *sf_text_copy_plain(char *dst, const char *s, size_t n, int lower)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (char)(c < 0x20 || c == 0x7f ? '?' : lower && c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return dst + n;
}

size_t sf_text_utf8_cut(const char *s, size_t n, size_t max)
{
    size_t i = 0;

    if (max >= n)
        return n;
    while (i < max) {
        size_t l = sf_json_utf8_len((const unsigned char *)s + i, n - i);
        l = l ? l : 1; /* a byte that is not UTF-8 is a character of its own */
        if (i + l > max)
            break;
        i += l;
    }
    return i;
}

/* ---- XML / HTML ------------------------------------------------------------------- */

static void xml_run(struct sink *k, const char *s, size_t n, unsigned flags)
{
    struct ch c;

    for (size_t i = 0; i < n; i += c.len) {
        const char *e = NULL;
        decode(s + i, n - i, &c);
        switch (c.cp) {
        case '&':
            e = "&amp;";
            break;
        case '<':
            e = "&lt;";
            break;
        case '>':
            e = "&gt;";
            break;
        case '"':
            e = flags & SF_TEXT_QUOT ? "&quot;" : NULL;
            break;
        case '\'':
            e = flags & SF_TEXT_APOS ? "&#39;" : NULL;
            break;
        case '\t':
        case '\n':
        case '\r':
            e = c.raw[0] == '\t' ? "\t" : c.raw[0] == '\n' ? "\n" : "&#13;";
            break;
        default:
            break;
        }
        if ((e ? put(k, e, strlen(e)) : put_ch(k, &c)) < 0)
            return;
    }
}

void sf_text_xml(FILE *f, const char *s, size_t n)
{
    struct sink k = {.f = f};
    xml_run(&k, s, n, SF_TEXT_QUOT | SF_TEXT_APOS);
}

void sf_text_xml_esc(FILE *f, const char *s, size_t n, unsigned flags)
{
    struct sink k = {.f = f};
    xml_run(&k, s, n, flags);
}

/* ---- Markdown --------------------------------------------------------------------- */

static int ascii_punct(uint32_t c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* Inline text: ASCII punctuation backslash-escaped (CommonMark 2.4: any of it may be).
 * cmark-gfm finds e-mail autolinks after escapes are resolved, so '@' is also followed
 * by U+2060 WORD JOINER, which no address part may start with. */
static void md_run(struct sink *k, const char *s, size_t n)
{
    struct ch c;

    for (size_t i = 0; i < n; i += c.len) {
        char e[2] = {'\\', 0};
        int rc;
        decode(s + i, n - i, &c);
        if (c.nrep == 0 && ascii_punct(c.cp)) {
            e[1] = (char)c.cp;
            rc = c.cp == '@' ? put(k, "\\@\xe2\x81\xa0", 5) : put(k, e, 2);
        } else {
            rc = put_ch(k, &c);
        }
        if (rc < 0)
            return;
    }
}

void sf_text_md(FILE *f, const char *s, size_t n, unsigned flags)
{
    struct sink k = {.f = f};
    (void)flags; /* '|' is punctuation, escaped in every context */
    md_run(&k, s, n);
}

/* Longest run of backticks in s[0..n). */
static size_t backtick_run(const char *s, size_t n)
{
    size_t best = 0, run = 0;

    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

/* The content of a code span: literal, except that a table cell's '|' is written "\|"
 * (GFM 0.29 example 200: the table removes that backslash, also inside code). */
static int code_run(struct sink *k, const char *s, size_t n, unsigned flags)
{
    struct ch c;

    for (size_t i = 0; i < n; i += c.len) {
        int rc;
        decode(s + i, n - i, &c);
        if (c.cp == '|' && (flags & SF_TEXT_CELL))
            rc = put(k, "\\|", 2);
        else
            rc = put_ch(k, &c);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int all_spaces(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

/* A space inside each fence when the content starts or ends with a backtick (it would
 * join the fence) or both starts and ends with a space (CommonMark strips one from each
 * side then, so the padding is what gets stripped). */
static int code_pad(const char *s, size_t n, int cut)
{
    if (n == 0 || all_spaces(s, n))
        return 0;
    if (s[0] == '`' || (!cut && s[n - 1] == '`'))
        return 1;
    return !cut && s[0] == ' ' && s[n - 1] == ' ';
}

/* A code span of s[0..n): when cut, the content is what fits and then U+2026. */
static void code_span(struct sink *k, const char *s, size_t n, unsigned flags, int cut)
{
    size_t fence = backtick_run(s, n) + 1;
    int pad = code_pad(s, n, cut);

    if (n == 0) /* an empty span does not exist: one space is a span holding a space */
        s = " ", n = 1;
    for (size_t i = 0; i < fence; i++)
        put(k, "`", 1);
    if (pad)
        put(k, " ", 1);
    k->reserve = fence + (size_t)pad + (cut ? 3 : 0);
    code_run(k, s, n, flags);
    k->reserve = 0;
    k->full = 0; /* what closes the span was reserved: it fits */
    if (cut)
        put(k, ELLIPSIS, 3);
    if (pad)
        put(k, " ", 1);
    for (size_t i = 0; i < fence; i++)
        put(k, "`", 1);
}

void sf_text_md_code(FILE *f, const char *s, size_t n, unsigned flags)
{
    struct sink k = {.f = f};
    code_span(&k, s, n, flags, 0);
}

/* Nothing in these makes inline structure (no emphasis, code, link, HTML, entity or
 * autolink: "www." excepted by hand), and a cell or heading holds inline content only;
 * a space first or last would be trimmed away. */
static int md_plain(const char *s, size_t n)
{
    if (n == 0 || s[0] == ' ' || s[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
              strchr(" .,%+-()/", c)) ||
            c == 0)
            return 0;
        if (c == '.' && i >= 3 && (s[i - 1] | 0x20) == 'w' && (s[i - 2] | 0x20) == 'w' &&
            (s[i - 3] | 0x20) == 'w')
            return 0;
    }
    return 1;
}

void sf_text_md_cell(FILE *f, const char *s, size_t n)
{
    if (md_plain(s, n))
        fwrite(s, 1, n, f);
    else
        sf_text_md_code(f, s, n, SF_TEXT_CELL);
}

/* ---- CSV -------------------------------------------------------------------------- */

/* RFC 4180 field, always quoted; a leading = + - @ tab or CR makes spreadsheets read a
 * formula, so such a field starts with ' (OWASP's advice for CSV injection). */
static void csv_run(struct sink *k, const char *s, size_t n)
{
    struct ch c;

    put(k, "\"", 1);
    if (n > 0 && s[0] && strchr("=+-@\t\r", s[0]))
        put(k, "'", 1);
    for (size_t i = 0; i < n; i += c.len) {
        decode(s + i, n - i, &c);
        if (c.cp == '"')
            put(k, "\"\"", 2);
        else if (c.cp == '\t' || c.cp == '\n' || c.cp == '\r')
            put(k, c.raw, 1); /* inside the quotes, as RFC 4180 allows */
        else
            put_ch(k, &c);
    }
    put(k, "\"", 1);
}

void sf_text_csv(FILE *f, const char *s, size_t n)
{
    struct sink k = {.f = f};
    csv_run(&k, s, n);
}

/* ---- labels ----------------------------------------------------------------------- */

static void label_run(struct sink *k, const char *s, size_t n)
{
    struct ch c;

    for (size_t i = 0; i < n; i += c.len) {
        int rc;
        decode(s + i, n - i, &c);
        if (c.cp == '>' && i >= 2 && s[i - 1] == ']' && s[i - 2] == ']')
            rc = put(k, "\xef\xbc\x9e", 3); /* U+FF1E: "]]>" may not appear in XML text */
        else
            rc = put_ch(k, &c);
        if (rc < 0)
            return;
    }
}

/* ---- bounded forms ---------------------------------------------------------------- */

enum form { F_XML, F_MD, F_LABEL };

static void run(struct sink *k, enum form form, const char *s, size_t n)
{
    if (form == F_XML)
        xml_run(k, s, n, SF_TEXT_QUOT | SF_TEXT_APOS);
    else if (form == F_MD)
        md_run(k, s, n);
    else
        label_run(k, s, n);
}

/* Write the form of s[0..n) into dst[0..cap): whole when it fits, else what fits of it
 * and U+2026. */
static size_t bounded(char *dst, size_t cap, enum form form, const char *s, size_t n)
{
    struct sink count = {0}, k = {.buf = dst, .cap = cap};

    if (cap == 0)
        return 0;
    dst[0] = 0;
    run(&count, form, s, n);
    if (count.len < cap) {
        run(&k, form, s, n);
        return k.len;
    }
    if (cap < 4)
        return 0;
    k.reserve = 3;
    run(&k, form, s, n);
    k.reserve = 0;
    k.full = 0;
    put(&k, ELLIPSIS, 3);
    return k.len;
}

size_t sf_text_xml_str(char *dst, size_t cap, const char *s, size_t n)
{
    return bounded(dst, cap, F_XML, s, n);
}

size_t sf_text_md_str(char *dst, size_t cap, const char *s, size_t n, unsigned flags)
{
    (void)flags;
    return bounded(dst, cap, F_MD, s, n);
}

size_t sf_text_label(char *dst, size_t cap, const char *s, size_t n)
{
    return bounded(dst, cap, F_LABEL, s, n);
}

size_t sf_text_md_code_str(char *dst, size_t cap, const char *s, size_t n, unsigned flags)
{
    struct sink count = {0}, k = {.buf = dst, .cap = cap};
    size_t fence = backtick_run(s, n) + 1;

    if (cap == 0)
        return 0;
    dst[0] = 0;
    code_span(&count, s, n, flags, 0);
    if (count.len < cap) {
        code_span(&k, s, n, flags, 0);
        return k.len;
    }
    /* fences, a pad each side, at least one character (4 bytes) and U+2026 */
    if (2 * fence + 2 + 4 + 3 + 1 > cap)
        return 0;
    code_span(&k, s, n, flags, 1);
    return k.len;
}

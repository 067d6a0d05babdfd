/* sf_text.h - captured strings made inert for every text output: Markdown (CommonMark 0.30
 * and GitHub Flavored Markdown 0.29), XML 1.0 / HTML text, RFC 4180 CSV, one-line labels,
 * and UTF-8-safe truncation.
 *
 * HTTP paths, gRPC methods, function names and comms come from the systems under study;
 * every writer of a report, a CI comment, a CSV, an SVG or an HTML page passes them
 * through here, so that the rules live in one place (docs/output-safety.md):
 *
 *   all         bytes that are not UTF-8 become U+FFFD; C0 controls become their control
 *               pictures (U+2400 + c, DEL U+2421) except where the format keeps them
 *               (XML: tab, LF, CR; CSV: tab, LF, CR inside the quotes); C1 controls,
 *               U+FFFE, U+FFFF and the bidirectional overrides and isolates (U+202A..202E,
 *               U+2066..2069) become U+FFFD.
 *   Markdown    text: every ASCII punctuation character is backslash-escaped, so data
 *               makes no heading, list, emphasis, link, image, raw HTML, entity or
 *               autolink (`http:`, `www.`, and `a@b`: '@' is followed by U+2060); code
 *               span: a backtick fence one longer than the longest backtick run inside,
 *               padded with a space when needed; cell: words and numbers as they are,
 *               anything else a code span.  SF_TEXT_CELL: inside a GFM table cell,
 *               where `|` is escaped (also in a code span, which GFM allows) so that no
 *               data can add a column.
 *   XML/HTML    & < > " ' as entities (the quotes as flags say with sf_text_xml_esc);
 *               characters XML 1.0 forbids replaced as above.
 *   CSV         always one quoted field, '"' doubled; a field starting with = + - @
 *               (or tab, CR) gets a leading ' so that spreadsheets do not run it.
 *   label       a plain single line (gnuplot titles): the "all" rule, and `]]>` broken
 *               as `]]` U+FF1E, since gnuplot's SVG terminal escapes only < and &.
 *
 * Nothing here prints anything else or fails: the FILE writers rely on the caller's
 * ferror() check; the _str forms never overflow dst and always NUL-terminate it.
 */
#ifndef SF_TEXT_H
#define SF_TEXT_H

#include <stddef.h>
#include <stdio.h>

#define SF_TEXT_CELL 1u /* the text is inside a GFM table cell */
#define SF_TEXT_QUOT 2u /* XML: '"' as &quot; (text inside a "-quoted attribute) */
#define SF_TEXT_APOS 4u /* XML: '\'' as &#39; (text inside a '-quoted attribute) */

/* Largest length <= max (and <= n) of a prefix of s[0..n) that does not end in the
 * middle of a UTF-8 character: cutting there never splits a valid sequence. */
size_t sf_text_utf8_cut(const char *s, size_t n, size_t max);

/* The next member of the comma-separated list v[0..n) from *pos (RFC 9110 5.6.1: "#rule",
 * optional white space around each member), in *item / *len; empty members are skipped.
 * Returns 1, or 0 at the end.  Start with *pos = 0. */
int sf_text_list_next(const char *v, size_t n, size_t *pos, const char **item, size_t *len);

/* Copy s[0..n) to dst (n bytes, no NUL added) with every control byte (C0, DEL) as '?',
 * and ASCII letters lowercased when lower: a captured header name or value made safe to
 * keep as text.  Returns dst + n. */
char *sf_text_copy_plain(char *dst, const char *s, size_t n, int lower);

/* s[0..n) as XML 1.0 character data (also valid in an attribute value in quotes and in
 * HTML text): sf_text_xml_esc with SF_TEXT_QUOT | SF_TEXT_APOS. */
void sf_text_xml(FILE *f, const char *s, size_t n);

/* The same with & < > escaped, and '"' and '\'' only as flags say (SF_TEXT_QUOT,
 * SF_TEXT_APOS): for writers that must match another tool's output byte for byte. */
void sf_text_xml_esc(FILE *f, const char *s, size_t n, unsigned flags);

/* s[0..n) as inert Markdown inline text (flags: SF_TEXT_CELL). */
void sf_text_md(FILE *f, const char *s, size_t n, unsigned flags);

/* s[0..n) as one Markdown code span, backticks included (flags: SF_TEXT_CELL). */
void sf_text_md_code(FILE *f, const char *s, size_t n, unsigned flags);

/* A GFM table cell (or a heading's text) that may hold data: plain words and numbers
 * (ASCII letters, digits, inner spaces and . , % + - ( ) /, no "www.") as they are, so
 * that tables of numbers stay readable; anything else as a code span with SF_TEXT_CELL. */
void sf_text_md_cell(FILE *f, const char *s, size_t n);

/* s[0..n) as one quoted RFC 4180 field, formula characters neutralised. */
void sf_text_csv(FILE *f, const char *s, size_t n);

/* The same as the writers above into dst[0..cap), NUL-terminated; returns the length
 * written.  When the whole does not fit, the text is cut at a character boundary and
 * ends with U+2026 (inside the code span for _md_code_str, which stays well formed);
 * when not even that fits, dst is "" and 0 is returned. */
size_t sf_text_xml_str(char *dst, size_t cap, const char *s, size_t n);
size_t sf_text_md_str(char *dst, size_t cap, const char *s, size_t n, unsigned flags);
size_t sf_text_md_code_str(char *dst, size_t cap, const char *s, size_t n, unsigned flags);

/* s[0..n) as a plain label into dst[0..cap) (see "label" above), NUL-terminated, cut at
 * a character boundary with U+2026 when it does not fit; returns its length. */
size_t sf_text_label(char *dst, size_t cap, const char *s, size_t n);

#endif

/* sf_glob_ch.h - SQLite's GLOB and LIKE, byte for byte, in ClickHouse's terms.
 *
 * SQLite matches a pattern character by character, reading both strings with its own
 * UTF-8 reader: a byte below 0xC0 is one character (an ASCII byte, or a stray
 * continuation byte 0x80..0xBF standing for itself), a byte from 0xC0 up starts one
 * that takes every continuation byte after it.  Any byte string has a match result;
 * invalid UTF-8 is no exception.  ClickHouse's match() runs RE2 on UTF-8, where '.'
 * never matches an invalid byte: `path ~ "*"` lost every path with one.
 *
 * So the column is first cut into SQLite's characters, as hex with a ',' after each
 * (SF_GLOB_CH_TOKENS: "é!" = C3 A9 21 becomes "C3A9,21,"), and the pattern becomes an
 * anchored RE2 expression over that text, where every character is a whole token:
 *
 *   '*' / '%'   (?:[0-9A-F]+,)*         any characters
 *   '?' / '_'   [0-9A-F]+,              one character
 *   c           the tokens that read as c: its UTF-8 and, for 0x80..0xBF, the
 *               stray byte (LIKE: an ASCII letter's lower case; the column is
 *               lower()ed, which folds ASCII only, as SQLite's LIKE does)
 *   [...]       the tokens of its members (ranges listed, at most
 *               SF_GLOB_CH_RANGE_MAX characters); [^...] every other token
 *
 * Refused (an error, never a different answer): a pattern character SQLite reads as
 * U+FFFD — an invalid byte in the pattern, or U+FFFD itself — which SQLite matches
 * against every invalid sequence of the column.  Not the same: overlong forms of a
 * pattern character that start at a lead of value 0 (C0 80 A9 reads as U+00A9 in
 * SQLite), and continuation runs longer than UTF-8's.  A class that is never closed
 * matches nothing, as in SQLite.
 */
#ifndef SF_GLOB_CH_H
#define SF_GLOB_CH_H

#include <stddef.h>

#include "sf_buf.h"

/* The ClickHouse expression that cuts column COL (a printf %s) into tokens. */
#define SF_GLOB_CH_TOKENS                                                                          \
    "replaceRegexpAll(hex(%s), '[0-7][0-9A-F]|[89AB][0-9A-F]|[C-F][0-9A-F](?:[89AB][0-9A-F])*', "  \
    "'\\\\0,')"

#define SF_GLOB_CH_RANGE_MAX 4096

/* The RE2 expression for pattern p[0..n) (GLOB when like is 0, else LIKE without an
 * escape character) into re.  Returns 1 (re holds it), 0 (the pattern never matches:
 * an unclosed class) or -1 (*why says what ClickHouse cannot be asked: a range too
 * wide, out of memory). */
int sf_glob_ch_regex(const char *p, size_t n, int like, struct sf_buf *re, const char **why);

/* The token text of s[0..n) that SF_GLOB_CH_TOKENS makes on the server, into out (for
 * tests, and for running a translated pattern without ClickHouse). */
void sf_glob_ch_tokens(const unsigned char *s, size_t n, struct sf_buf *out);

#endif

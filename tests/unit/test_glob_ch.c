/* Unit tests: lib/sf_glob_ch, SQLite's GLOB and LIKE as RE2 over SQLite's characters.
 * Thousands of random patterns against random byte strings (invalid UTF-8 included):
 * the translation, run with POSIX regexec on the token text that SF_GLOB_CH_TOKENS
 * makes, must agree with SQLite's own GLOB and LIKE on every pair.  (The strings
 * leave out overlong encodings of the patterns' characters, the one documented
 * difference; tests/spanfold/t_clickhouse.sh runs the same on a server.) */
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_buf.h"
#include "sf_glob_ch.h"
#include "tap.h"

static uint64_t rng = 0x9E3779B97F4A7C15u;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* SQLite's answer: 1, 0. */
static int sqlite_says(sqlite3 *db, int like, const char *s, size_t sn, const char *p, size_t pn)
{
    sqlite3_stmt *st;
    int r;

    sqlite3_prepare_v2(db, like ? "SELECT ?1 LIKE ?2" : "SELECT ?1 GLOB ?2", -1, &st, NULL);
    sqlite3_bind_text(st, 1, s, (int)sn, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p, (int)pn, SQLITE_STATIC);
    r = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return r;
}

/* The translation's answer on the tokens of s: 1, 0, or -1 (untranslatable). */
static int regex_says(int like, const char *s, size_t sn, const char *p, size_t pn)
{
    struct sf_buf re, tok, ere;
    const char *why;
    regex_t rx;
    int rc;

    sf_buf_init(&re, 1 << 20);
    sf_buf_init(&tok, 1 << 16);
    sf_buf_init(&ere, 1 << 20);
    rc = sf_glob_ch_regex(p, pn, like, &re, &why);
    if (rc == 1) {
        /* POSIX ERE has no (?:, and needs no grouping that does not capture */
        for (size_t i = 0; i < re.len; i++) {
            if (i + 2 < re.len && memcmp(re.data + i, "(?:", 3) == 0) {
                sf_buf_append(&ere, "(", 1);
                i += 2;
            } else {
                sf_buf_append(&ere, re.data + i, 1);
            }
        }
        sf_buf_append(&ere, "", 1);
        char low[64];
        for (size_t i = 0; i < sn && i < sizeof(low); i++) /* ClickHouse's lower(): ASCII */
            low[i] = (char)(like && s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
        sf_glob_ch_tokens((const unsigned char *)low, sn < sizeof(low) ? sn : sizeof(low), &tok);
        sf_buf_append(&tok, "", 1);
        if (regcomp(&rx, (const char *)ere.data, REG_EXTENDED | REG_NOSUB) != 0) {
            fprintf(stderr, "# bad regex %s\n", (const char *)ere.data);
            rc = -1;
        } else {
            rc = regexec(&rx, (const char *)tok.data, 0, NULL, 0) == 0;
            regfree(&rx);
        }
    }
    sf_buf_free(&re);
    sf_buf_free(&tok);
    sf_buf_free(&ere);
    return rc;
}

static void show(const char *what, const char *s, size_t n)
{
    fprintf(stderr, "# %s:", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %02x", (unsigned char)s[i]);
    fprintf(stderr, "\n");
}

static int agree(sqlite3 *db, int like, const char *s, size_t sn, const char *p, size_t pn)
{
    int a = sqlite_says(db, like, s, sn, p, pn), b = regex_says(like, s, sn, p, pn);
    if (a != b) {
        fprintf(stderr, "# %s: sqlite %d, translation %d\n", like ? "LIKE" : "GLOB", a, b);
        show("string", s, sn);
        show("pattern", p, pn);
    }
    return a == b;
}

static void test_random(sqlite3 *db, int like, int rounds)
{
    /* the string's bytes: ASCII, class syntax, stray continuation bytes, leads of two
     * three and four bytes; no lead of value 0 (C0, E0, F0, F8, FC, FE, FF: the overlong
     * forms of the patterns' characters) */
    static const unsigned char sb[] = {'a', 'b',  'c',  'A',  ']',  '-',  '^',  '%',
                                       '_', 0x80, 0xA9, 0xBF, 0xC2, 0xC3, 0xE2, 0xF5};
    static const char *const glob_parts[] = {
        "a",           "b",        "c",        "A",     "*",
        "?",           "[ab]",     "[^a]",     "[a-c]", "[]a]",
        "[^]a]",       "\xc3\xa9", "\xc2\xa9", "\xa9",  "[\xc3\xa9\xc2\xa9]",
        "[^\xc3\xa9]", "-",        "]",        "[",     "[b-a]",
        "[-a]",        "[a-]",     "^"};
    static const char *const like_parts[] = {"a",        "b",    "A", "%", "_", "\xc3\xa9",
                                             "\xc2\xa9", "\xa9", "]", "[", "c"};
    const char *const *parts = like ? like_parts : glob_parts;
    size_t np =
        like ? sizeof(like_parts) / sizeof(*like_parts) : sizeof(glob_parts) / sizeof(*glob_parts);
    int bad = 0;

    for (int r = 0; r < rounds; r++) {
        char s[16], p[64];
        size_t sn = rnd(8), pn = 0;
        for (size_t i = 0; i < sn; i++)
            s[i] = (char)sb[rnd(sizeof(sb))];
        for (unsigned k = rnd(5) + 1; k > 0; k--) {
            const char *x = parts[rnd((unsigned)np)];
            memcpy(p + pn, x, strlen(x));
            pn += strlen(x);
        }
        for (int t = 0; t < 8; t++) {
            if (!agree(db, like, s, sn, p, pn) && bad++ > 5)
                break;
            sn = rnd(8);
            for (size_t i = 0; i < sn; i++)
                s[i] = (char)sb[rnd(sizeof(sb))];
        }
    }
    TAP_EQ_INT(bad, 0,
               like ? "LIKE: the translation agrees with SQLite on random pairs"
                    : "GLOB: the translation agrees with SQLite on random pairs");
}

int main(void)
{
    sqlite3 *db;
    struct sf_buf re, tok;
    const char *why;

    sqlite3_open(":memory:", &db);
    sf_buf_init(&tok, 1024);
    sf_glob_ch_tokens((const unsigned char *)"\xc3\xa9!\x80\xc3", 5, &tok);
    TAP_OK(tok.len == 14 && memcmp(tok.data, "C3A9,21,80,C3,", 14) == 0,
           "tokens: a character's bytes, then ',': C3A9,21,80,C3,");
    sf_buf_free(&tok);
    TAP_EQ_INT(regex_says(0,
                          "a\xff"
                          "b",
                          3, "*", 1),
               1, "'*' matches a string with invalid UTF-8");
    TAP_EQ_INT(regex_says(0, "\xc3\xa9", 2,
                          "?"
                          "?",
                          2),
               0, "two '?' do not match one two-byte character (SQLite: one character)");
    TAP_EQ_INT(regex_says(0, "\xe2\xa9", 2, "\xc2\xa9", 2), 1,
               "a truncated E2 A9 reads as U+00A9, as in SQLite");
    TAP_EQ_INT(regex_says(0, "\xa9", 1, "\xc2\xa9", 2), 1,
               "a stray byte 0xA9 reads as U+00A9, as in SQLite");
    TAP_EQ_INT(regex_says(0, "x", 1, "[ab", 3), 0, "an unclosed class matches nothing");
    sf_buf_init(&re, 1 << 20);
    TAP_EQ_INT(sf_glob_ch_regex("[a-\xe4\xb8\x80]", 7, 0, &re, &why), -1,
               "a class range wider than 4096 characters is refused");
    sf_buf_reset(&re);
    TAP_OK(sf_glob_ch_regex("*\xff?", 3, 0, &re, &why) == -1 && strstr(why, "invalid UTF-8"),
           "an invalid byte in the pattern (SQLite: U+FFFD, any invalid sequence) is refused");
    sf_buf_free(&re);
    test_random(db, 0, 4000);
    test_random(db, 1, 2000);
    sqlite3_close(db);
    return tap_done();
}

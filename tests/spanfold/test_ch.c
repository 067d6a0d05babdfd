/* test_ch.c - spanfold/ch.c and ch_schema.c without a server: RowBinary written and read
 * back (LEB128 lengths across the 1- and 2-byte boundary, little-endian numbers, NULL
 * flags), a truncated or lying answer refused rather than over-read, the source and
 * stack keys, the DDL's shape, and the URL and name checks of ch_open.  (The server side
 * is tests/spanfold/t_clickhouse.sh.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../spanfold/ch.h"
#include "tap.h"

static void test_rowbinary(void)
{
    struct sf_buf b;
    const unsigned char *p, *end, *s;
    char big[300];
    size_t n;
    uint64_t v;

    memset(big, 'x', sizeof(big));
    sf_buf_init(&b, 1 << 16);
    TAP_EQ_INT(ch_put_u64(&b, 0x0102030405060708ULL), 0, "u64 written");
    TAP_OK(b.len == 8 && b.data[0] == 0x08 && b.data[7] == 0x01, "u64 is little-endian");
    sf_buf_reset(&b);
    ch_put_str(&b, "abc", 3);
    TAP_OK(b.len == 4 && b.data[0] == 3 && memcmp(b.data + 1, "abc", 3) == 0,
           "a short string: one length byte");
    sf_buf_reset(&b);
    ch_put_str(&b, big, 127);
    TAP_OK(b.len == 128 && b.data[0] == 127, "127 bytes: still one length byte");
    sf_buf_reset(&b);
    ch_put_str(&b, big, 300);
    TAP_OK(b.len == 302 && b.data[0] == (0x80 | (300 & 0x7f)) && b.data[1] == 300 >> 7,
           "300 bytes: a two-byte LEB128 length");
    p = b.data;
    end = b.data + b.len;
    TAP_OK(ch_get_str(&p, end, &s, &n) == 0 && n == 300 && p == end, "and read back");
    p = b.data;
    end = b.data + b.len - 1;
    TAP_EQ_INT(ch_get_str(&p, end, &s, &n), -1, "a string cut short is refused");
    sf_buf_reset(&b);
    ch_put_null(&b, 1);
    ch_put_null(&b, 0);
    TAP_OK(b.len == 2 && b.data[0] == 1 && b.data[1] == 0, "Nullable: 1 is NULL, 0 a value");
    {
        /* a length of 2^63 in ten bytes: no over-read, no overflow */
        static const unsigned char lie[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0x7f, 'a'};
        p = lie;
        TAP_EQ_INT(ch_get_str(&p, lie + sizeof(lie), &s, &n), -1, "a huge length is refused");
    }
    p = b.data;
    TAP_EQ_INT(ch_get_u64(&p, b.data + b.len, &v), -1, "a u64 of two bytes is refused");
    sf_buf_free(&b);
}

static void test_keys(void)
{
    const char *sha = "72d9a7376618c4e9b117f3066cad1f5cef97ffda9738723e06cb6e2a7722541e";

    TAP_OK(ch_source_key(sha, "a", "t") == 0x72d9a7376618c4e9ULL,
           "the source key is the sha256's first 64 bits");
    TAP_OK(ch_source_key(sha, "other", "path") == ch_source_key(sha, "a", "t"),
           "the same file on any host has the same key");
    TAP_OK(ch_source_key(NULL, "a", "t1") != ch_source_key(NULL, "a", "t2"),
           "without a sha256: path and start time");
    TAP_OK(ch_source_key("XYZ", "a", "t1") == ch_source_key(NULL, "a", "t1"),
           "a malformed sha256 counts as none");
    TAP_OK(ch_hash("main;f", 6) == ch_hash("main;f", 6) &&
               ch_hash("main;f", 6) != ch_hash("main;g", 6),
           "a stack's key is its content's");
    TAP_OK(ch_hash(NULL, 0) == 0, "no stack: key 0");
}

static void test_schema(void)
{
    struct sf_buf b;
    const char *t;

    sf_buf_init(&b, 1 << 20);
    TAP_EQ_INT(ch_schema_sql(&b, "sfx", "sf"), 0, "DDL generated");
    t = (const char *)b.data;
    TAP_OK(strncmp(t, "CREATE DATABASE IF NOT EXISTS sfx;\n", 35) == 0, "the database first");
    TAP_OK(strstr(t, "CREATE TABLE IF NOT EXISTS sfx.spans (skey UInt64, id Int64,") != NULL,
           "spans starts with its source key and id");
    TAP_OK(strstr(t, "ENGINE = Distributed(sf, sfx, samples, cityHash64(ifNull(span_id, "
                     "toString(skey))));") != NULL,
           "samples are sharded by their span");
    TAP_OK(
        strstr(t, "sfx.stacks (stack_key UInt64, frames String) ENGINE = ReplacingMergeTree()") !=
            NULL,
        "stacks are one row per content");
    for (size_t i = 0; i < ch_ntables; i++) {
        char want[96];
        snprintf(want, sizeof(want), "sfx.%s_d AS sfx.%s ", ch_tables[i].name, ch_tables[i].name);
        TAP_OK(strstr(t, want) != NULL, "%s has a Distributed table", ch_tables[i].name);
    }
    sf_buf_reset(&b);
    ch_schema_sql(&b, "sfx", NULL);
    TAP_OK(strstr((const char *)b.data, "Distributed") == NULL, "no cluster: no Distributed");
    sf_buf_free(&b);
}

static void test_open(void)
{
    struct ch *c;
    struct sf_err err;
    char shown[64];

    ch_url_shown("http://u:secret@h:8123/x@y", shown, sizeof(shown));
    TAP_EQ_STR(shown, "http://h:8123/x@y", "a URL is shown without its user and password");
    ch_url_shown("http://h:8123/", shown, sizeof(shown));
    TAP_EQ_STR(shown, "http://h:8123/", "and as it is without them");

    sf_err_clear(&err);
    TAP_EQ_INT(ch_open(&c, "ftp://h/", "spanfold", &err), SF_E_USAGE, "ftp:// is refused");
    TAP_OK(c == NULL && strstr(err.msg, "HTTP interface") != NULL, "saying what is wanted");
    TAP_EQ_INT(ch_open(&c, "http://h/", "a;DROP", &err), SF_E_USAGE, "a name with ';' is refused");
    TAP_EQ_INT(ch_open(&c, "http://127.0.0.1:1/", "spanfold", &err), 0, "a good URL opens");
    ch_close(c);
}

int main(void)
{
    test_rowbinary();
    test_keys();
    test_schema();
    test_open();
    return tap_done();
}

/*
 * test_xid.c - the CSV reader and the Xid/SXid catalogs shipped in data/.
 *
 * Expected counts come from data/xid-catalog.csv and data/sxid-catalog.csv as described in
 * data/SOURCE.md (173 Xid rows, 92 fatal by the product rule, 43 marking the GPU unhealthy;
 * 93 SXid rows, 21 always fatal, 67 potentially fatal).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/xid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *data_path(const char *name, char *buf, size_t size)
{
    const char *src = getenv("HN_SOURCE_DIR");
    snprintf(buf, size, "%s/data/%s", src ? src : HN_DATADIR "/..", name);
    return buf;
}

/* Writes text to a new temporary file; the caller unlinks it. */
static void write_temp(char *path, size_t size, const void *text, size_t len)
{
    snprintf(path, size, "/tmp/hn_test_xid_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/* ---- CSV reader ---- */

static void test_csv_simple(void **state)
{
    (void)state;
    const char *in = "a,b,c\n1,,3\n";
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, in, strlen(in));
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_int_equal(r.nfields, 3);
    assert_string_equal(r.field[0], "a");
    assert_string_equal(r.field[2], "c");
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_int_equal(r.rec_line, 2);
    assert_string_equal(r.field[1], "");
    assert_int_equal(r.field_len[1], 0);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 0);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 0);
    hn_csv_reader_fini(&r);
}

static void test_csv_quoted(void **state)
{
    (void)state;
    /* "" escapes, an embedded newline, CRLF ends, a blank line, a trailing empty field and
     * a last record without a line end. */
    const char in[] = "\"x\"\"y\",\"l1\nl2\"\r\n\r\nz,\n\"\",\"a,b\"";
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, in, sizeof(in) - 1);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_int_equal(r.rec_line, 1);
    assert_int_equal(r.nfields, 2);
    assert_string_equal(r.field[0], "x\"y");
    assert_string_equal(r.field[1], "l1\nl2");
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_int_equal(r.rec_line, 4);
    assert_int_equal(r.nfields, 2);
    assert_string_equal(r.field[0], "z");
    assert_string_equal(r.field[1], "");
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_int_equal(r.rec_line, 5);
    assert_string_equal(r.field[0], "");
    assert_string_equal(r.field[1], "a,b");
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 0);
    hn_csv_reader_fini(&r);
}

/* Runs the reader over in until it fails; checks the code and that err names the line. */
static void expect_csv_error(const char *in, size_t len, int code, const char *msg_part)
{
    char err[128] = "";
    struct hn_csv_reader r;
    int rc;
    hn_csv_reader_init(&r, in, len);
    while ((rc = hn_csv_reader_next(&r, err, sizeof(err))) == 1)
        ;
    assert_int_equal(rc, code);
    if (!strstr(err, msg_part))
        fail_msg("error '%s' lacks '%s'", err, msg_part);
    /* A failed reader keeps failing instead of reading on from a bad position. */
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), -EINVAL);
    hn_csv_reader_fini(&r);
}

static void test_csv_errors(void **state)
{
    (void)state;
    expect_csv_error("a,\"b\"c\n", 7, -EINVAL, "line 1: text after the closing quote");
    expect_csv_error("a\nb\"c\n", 6, -EINVAL, "line 2: quote inside");
    expect_csv_error("x\n\"abc\n\n", 8, -EINVAL, "line 2: quoted field opened here");
    expect_csv_error("a\nb\0c\n", 6, -EINVAL, "line 2: NUL byte");

    char many[HN_CSV_MAX_FIELDS + 2];
    memset(many, ',', sizeof(many));
    expect_csv_error(many, sizeof(many), -E2BIG, "line 1: more than");

    size_t big = HN_CSV_MAX_FIELD + 10;
    char *longf = malloc(big);
    assert_non_null(longf);
    memset(longf, 'x', big);
    expect_csv_error(longf, big, -E2BIG, "line 1: field longer than");
    free(longf);

    /* Many fields just under the field cap overflow the record cap instead. */
    size_t per = HN_CSV_MAX_FIELD - 1, n = 5, total = n * (per + 1);
    char *longr = malloc(total);
    assert_non_null(longr);
    memset(longr, 'y', total);
    for (size_t i = 1; i < n; i++)
        longr[i * (per + 1) - 1] = ',';
    expect_csv_error(longr, total, -E2BIG, "line 1: record longer than");
    free(longr);
}

static void test_csv_caller_caps(void **state)
{
    (void)state;
    const char *in = "ok,abcdef\n";
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, in, strlen(in));
    r.max_field = 4;
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "longer than 4"));
    hn_csv_reader_fini(&r);
}

/* ---- Xid catalog ---- */

static void test_xid_catalog_rows(void **state)
{
    (void)state;
    char path[4096], err[256] = "";
    struct hn_xid_catalog *cat =
        hn_xid_catalog_new(data_path("xid-catalog.csv", path, sizeof(path)), err, sizeof(err));
    if (!cat)
        fail_msg("%s", err);
    assert_int_equal(hn_xid_catalog_size(cat), 173);

    size_t fatal = 0, unhealthy = 0;
    for (size_t i = 0; i < hn_xid_catalog_size(cat); i++) {
        const struct hn_xid_entry *e = hn_xid_catalog_at(cat, i);
        assert_non_null(e);
        assert_int_equal(e->code, i + 1); /* Xid 1-173, sorted, no gaps */
        assert_ptr_equal(hn_xid_lookup(cat, e->code), e);
        assert_non_null(e->mnemonic);
        assert_non_null(e->immediate_resolution);
        assert_non_null(e->investigatory_resolution);
        fatal += (size_t)hn_xid_is_fatal(e);
        unhealthy += e->marks_unhealthy;
    }
    assert_int_equal(fatal, 92);
    assert_int_equal(unhealthy, 43);
    assert_null(hn_xid_catalog_at(cat, 173));

    const struct hn_xid_entry *e = hn_xid_lookup(cat, 119);
    assert_non_null(e);
    assert_string_equal(e->mnemonic, "GSP_RPC_TIMEOUT");
    assert_string_equal(e->immediate_resolution, "RESET_GPU");
    assert_string_equal(e->event_type, "Fatal");
    assert_true(e->marks_unhealthy);
    assert_true(hn_xid_is_fatal(e));

    /* The quoted mnemonic with an embedded newline survives. */
    e = hn_xid_lookup(cat, 13);
    assert_string_equal(e->mnemonic,
                        "ROBUST_CHANNEL_GR_EXCEPTION /\nROBUST_CHANNEL_GR_ERROR_SW_NOTIFY");
    assert_string_equal(e->immediate_resolution, "RESTART_APP");
    assert_false(hn_xid_is_fatal(e));
    assert_false(e->marks_unhealthy);

    static const unsigned sick[] = {48, 79, 94, 95, 119};
    for (size_t i = 0; i < sizeof(sick) / sizeof(sick[0]); i++)
        assert_true(hn_xid_lookup(cat, sick[i])->marks_unhealthy);

    /* 94 marks the GPU unhealthy in gpud but its action is RESTART_APP: not fatal here. */
    assert_false(hn_xid_is_fatal(hn_xid_lookup(cat, 94)));
    assert_false(hn_xid_is_fatal(hn_xid_lookup(cat, 43))); /* IGNORE */
    assert_false(hn_xid_is_fatal(hn_xid_lookup(cat, 63))); /* IGNORE, yet unhealthy */
    assert_true(hn_xid_is_fatal(hn_xid_lookup(cat, 79)));  /* RESTART_BM */
    assert_true(hn_xid_is_fatal(hn_xid_lookup(cat, 48)));  /* WORKFLOW_XID_48 */
    assert_true(hn_xid_is_fatal(hn_xid_lookup(cat, 145))); /* WORKFLOW_NVLINK5_ERR */

    /* 173 exists only in gpud's map: no NVIDIA action, so not fatal. 133 lacks gpud data. */
    e = hn_xid_lookup(cat, 173);
    assert_string_equal(e->immediate_resolution, "");
    assert_false(hn_xid_is_fatal(e));
    e = hn_xid_lookup(cat, 133);
    assert_string_equal(e->event_type, "");
    assert_false(e->marks_unhealthy);

    assert_null(hn_xid_lookup(cat, 0));
    assert_null(hn_xid_lookup(cat, 99999));
    assert_false(hn_xid_is_fatal(NULL));
    assert_null(hn_xid_lookup(NULL, 13));
    hn_xid_catalog_free(cat);
    hn_xid_catalog_free(NULL);
}

static void test_xid_default_path(void **state)
{
    (void)state;
    const char *p = hn_xid_default_catalog();
    const char *tail = "/xid-catalog.csv";
    assert_true(strlen(p) > strlen(tail));
    assert_string_equal(p + strlen(p) - strlen(tail), tail);
    char err[256] = "";
    struct hn_xid_catalog *cat = hn_xid_catalog_new(p, err, sizeof(err));
    if (!cat)
        fail_msg("%s", err);
    hn_xid_catalog_free(cat);

    struct hn_sxid_catalog *scat = hn_sxid_catalog_new(hn_sxid_default_catalog(), err, sizeof(err));
    if (!scat)
        fail_msg("%s", err);
    hn_sxid_catalog_free(scat);
}

/* Loads text as an Xid catalog and expects failure with msg_part in the message. */
static void expect_load_error(const char *text, const char *msg_part)
{
    char path[64], err[256] = "";
    write_temp(path, sizeof(path), text, strlen(text));
    struct hn_xid_catalog *cat = hn_xid_catalog_new(path, err, sizeof(err));
    unlink(path);
    if (cat) {
        hn_xid_catalog_free(cat);
        fail_msg("loaded a bad catalog; expected '%s'", msg_part);
    }
    if (!strstr(err, msg_part) || !strstr(err, path))
        fail_msg("error '%s' lacks '%s' or the path", err, msg_part);
}

#define XID_HEADER                                                                                 \
    "code,mnemonic,description,immediate_resolution,gpud_event_type,gpud_marks_unhealthy\n"

static void test_xid_catalog_errors(void **state)
{
    (void)state;
    expect_load_error("", "empty file");
    expect_load_error("code,mnemonic\n1,A\n", "header lacks column 'description'");
    expect_load_error(XID_HEADER "1,A,d,IGNORE,Warning,no\nx,B,d,IGNORE,Warning,no\n",
                      "line 3: code 'x' is not a code");
    expect_load_error(XID_HEADER "1,A,d,IGNORE,Warning,no\n1,B,d,IGNORE,Warning,no\n",
                      "code 1 appears twice");
    expect_load_error(XID_HEADER "1,A,d,IGNORE,Warning\n", "line 2: 5 fields, the header has 6");
    expect_load_error(XID_HEADER "1,A,d,IGNORE,Warning,maybe\n", "line 2: gpud_marks_unhealthy");
    expect_load_error(XID_HEADER "1,A,\"d\nmore,IGNORE,Warning,no\n",
                      "line 2: quoted field opened here is never closed");
    expect_load_error(XID_HEADER "99999999999,A,d,IGNORE,Warning,no\n", "is not a code");

    char err[256] = "";
    assert_null(hn_xid_catalog_new("/nonexistent/xid.csv", err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent/xid.csv"));
    assert_null(hn_xid_catalog_new("/tmp", err, sizeof(err)));
    assert_non_null(strstr(err, "not a regular file"));
    assert_null(hn_xid_catalog_new("/nonexistent", NULL, 0));

    /* A file past the size cap is refused before it is parsed (sparse, so it costs no disk). */
    char path[64];
    write_temp(path, sizeof(path), XID_HEADER, strlen(XID_HEADER));
    assert_int_equal(truncate(path, HN_CSV_MAX_FILE + 1), 0);
    assert_null(hn_xid_catalog_new(path, err, sizeof(err)));
    unlink(path);
    assert_non_null(strstr(err, "larger than"));
}

static void test_xid_catalog_minimal(void **state)
{
    (void)state;
    /* Columns in another order, extra columns ignored, optional ones absent, CRLF, a BOM. */
    const char *text = "\xEF\xBB\xBF"
                       "gpud_marks_unhealthy,extra,code,mnemonic,description,"
                       "immediate_resolution,gpud_event_type\r\n"
                       "yes,zz,200,NEW_ONE,\"A \"\"new\"\" one\",RESET_GPU,Fatal\r\n"
                       "no,zz,7,OLD,old,,Info\r\n";
    char path[64], err[256] = "";
    write_temp(path, sizeof(path), text, strlen(text));
    struct hn_xid_catalog *cat = hn_xid_catalog_new(path, err, sizeof(err));
    unlink(path);
    if (!cat)
        fail_msg("%s", err);
    assert_int_equal(hn_xid_catalog_size(cat), 2);
    assert_int_equal(hn_xid_catalog_at(cat, 0)->code, 7);
    const struct hn_xid_entry *e = hn_xid_lookup(cat, 200);
    assert_string_equal(e->description, "A \"new\" one");
    assert_string_equal(e->repair_actions, "");
    assert_string_equal(e->investigatory_resolution, "");
    assert_true(e->marks_unhealthy);
    assert_true(hn_xid_is_fatal(e));
    assert_false(hn_xid_is_fatal(hn_xid_lookup(cat, 7)));
    hn_xid_catalog_free(cat);
}

/* ---- SXid catalog ---- */

static void test_sxid_catalog_rows(void **state)
{
    (void)state;
    char path[4096], err[256] = "";
    struct hn_sxid_catalog *cat =
        hn_sxid_catalog_new(data_path("sxid-catalog.csv", path, sizeof(path)), err, sizeof(err));
    if (!cat)
        fail_msg("%s", err);
    assert_int_equal(hn_sxid_catalog_size(cat), 93);
    size_t always = 0, potential = 0;
    unsigned prev = 0;
    for (size_t i = 0; i < hn_sxid_catalog_size(cat); i++) {
        const struct hn_sxid_entry *e = hn_sxid_catalog_at(cat, i);
        assert_true(e->code > prev);
        prev = e->code;
        assert_ptr_equal(hn_sxid_lookup(cat, e->code), e);
        always += e->always_fatal;
        potential += e->potential_fatal;
    }
    assert_int_equal(always, 21);
    assert_int_equal(potential, 67);
    assert_int_equal(hn_sxid_catalog_at(cat, 0)->code, 10001);
    assert_int_equal(hn_sxid_catalog_at(cat, 92)->code, 24007);

    const struct hn_sxid_entry *e = hn_sxid_lookup(cat, 20034);
    assert_non_null(e);
    assert_string_equal(e->name, "LTSSM Fault Up");
    assert_true(e->potential_fatal);
    assert_false(e->always_fatal);
    assert_string_equal(e->event_type, "Fatal");

    e = hn_sxid_lookup(cat, 11012);
    assert_non_null(e);
    assert_false(e->potential_fatal);
    assert_false(e->always_fatal);
    assert_string_equal(e->event_type, "Warning");

    e = hn_sxid_lookup(cat, 10003);
    assert_true(e->always_fatal);
    assert_non_null(strstr(e->recovery, "reset to all GPUs"));

    /* The unknown codes used in the line fixtures. */
    assert_null(hn_sxid_lookup(cat, 99999));
    assert_null(hn_sxid_lookup(cat, 20123));
    assert_null(hn_sxid_lookup(cat, 11111));
    hn_sxid_catalog_free(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_simple),         cmocka_unit_test(test_csv_quoted),
        cmocka_unit_test(test_csv_errors),         cmocka_unit_test(test_csv_caller_caps),
        cmocka_unit_test(test_xid_catalog_rows),   cmocka_unit_test(test_xid_default_path),
        cmocka_unit_test(test_xid_catalog_errors), cmocka_unit_test(test_xid_catalog_minimal),
        cmocka_unit_test(test_sxid_catalog_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

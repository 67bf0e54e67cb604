/*
 * test_expo.c - the Prometheus text writer (agent/expo.h): HELP/TYPE lines, samples with and
 * without labels, number formatting, label escaping, and what happens when the output buffer
 * reaches its cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/expo.h"
#include "common/buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Renders one unlabelled sample with value v and returns its text after "m ". */
static const char *fmt(struct hn_buf *b, double v)
{
    struct hn_expo e;
    hn_buf_reset(b);
    hn_expo_init(&e, b);
    hn_expo_sample(&e, "m", NULL, v);
    assert_int_equal(e.series, 1);
    assert_true(b->len > 3);
    assert_int_equal(b->data[b->len - 1], '\n');
    b->data[b->len - 1] = '\0'; /* drop the newline for the comparison */
    assert_int_equal(strncmp(b->data, "m ", 2), 0);
    return b->data + 2;
}

/* Each test renders into a buffer owned by the fixture, so a failed assertion leaks nothing. */
static int buf_setup(void **state)
{
    struct hn_buf *b = malloc(sizeof(*b));
    if (!b)
        return -1;
    hn_buf_init(b, 4096);
    *state = b;
    return 0;
}

static int buf_teardown(void **state)
{
    hn_buf_fini(*state);
    free(*state);
    return 0;
}

/* Gives the fixture's buffer a new cap. */
static struct hn_buf *buf_with_max(void **state, size_t max)
{
    struct hn_buf *b = *state;
    hn_buf_init(b, max);
    return b;
}

static void test_family(void **state)
{
    struct hn_expo e;
    struct hn_buf *b = buf_with_max(state, 4096);
    hn_expo_init(&e, b);
    assert_ptr_equal(e.out, b);
    assert_int_equal(e.families, 0);
    hn_expo_family(&e, "houston_x_total", "Things that happened.", HN_COUNTER);
    hn_expo_family(&e, "houston_y", "Current y (in C).", HN_GAUGE);
    assert_string_equal(b->data, "# HELP houston_x_total Things that happened.\n"
                                 "# TYPE houston_x_total counter\n"
                                 "# HELP houston_y Current y (in C).\n"
                                 "# TYPE houston_y gauge\n");
    assert_int_equal(e.families, 2);
    assert_int_equal(e.series, 0);
    assert_int_equal(e.truncated, 0);
}

static void test_samples(void **state)
{
    struct hn_expo e;
    struct hn_buf *b = buf_with_max(state, 4096);
    hn_expo_init(&e, b);
    hn_expo_family(&e, "t", "T.", HN_GAUGE);
    hn_expo_sample(&e, "t", NULL, 1);
    hn_expo_sample(&e, "t", "", 2);
    hn_expo_sample(&e, "t", "gpu=\"0\",UUID=\"GPU-1\"", 61.5);
    hn_expo_sample(&e, "t", "gpu=\"1\"", NAN);
    hn_expo_sample(&e, "t", "gpu=\"2\"", -4);
    assert_string_equal(b->data, "# HELP t T.\n"
                                 "# TYPE t gauge\n"
                                 "t 1\n"
                                 "t 2\n"
                                 "t{gpu=\"0\",UUID=\"GPU-1\"} 61.5\n"
                                 "t{gpu=\"2\"} -4\n");
    assert_int_equal(e.series, 4); /* the NaN one is not a series */
    assert_int_equal(e.families, 1);
    assert_int_equal(e.truncated, 0);
}

static void test_number_format(void **state)
{
    struct hn_buf *b = buf_with_max(state, 4096);
    assert_string_equal(fmt(b, 0), "0");
    assert_string_equal(fmt(b, 42), "42");
    assert_string_equal(fmt(b, -3), "-3");
    assert_string_equal(fmt(b, 612), "612");
    /* Large counters stay exact integers (energy in mJ reaches 1e12 and more). */
    assert_string_equal(fmt(b, 1234567890123.0), "1234567890123");
    assert_string_equal(fmt(b, 9007199254740991.0), "9007199254740991");
    assert_string_equal(fmt(b, 0.5), "0.5");
    assert_string_equal(fmt(b, 2.25), "2.25");
    assert_string_equal(fmt(b, -0.125), "-0.125");
    assert_string_equal(fmt(b, 1234.75), "1234.75");
    /* Small values keep their significant digits (sub-microsecond durations). */
    assert_string_equal(fmt(b, 2.5e-7), "2.5e-07");
    assert_string_equal(fmt(b, 0.000123456), "0.000123456");
    assert_string_equal(fmt(b, INFINITY), "+Inf");
    assert_string_equal(fmt(b, -INFINITY), "-Inf");
}

static void test_nan_skipped(void **state)
{
    struct hn_expo e;
    struct hn_buf *b = buf_with_max(state, 4096);
    hn_expo_init(&e, b);
    hn_expo_sample(&e, "n", NULL, NAN);
    hn_expo_sample(&e, "n", "a=\"b\"", -NAN);
    assert_int_equal(b->len, 0);
    assert_int_equal(e.series, 0);
    assert_int_equal(e.truncated, 0);
}

static void test_label(void **unused)
{
    (void)unused;
    char buf[128];
    size_t len = 0;
    buf[0] = '\0';
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "gpu", "0"), 0);
    assert_string_equal(buf, "gpu=\"0\"");
    assert_int_equal(len, strlen(buf));
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "UUID", "GPU-abc"), 0);
    assert_string_equal(buf, "gpu=\"0\",UUID=\"GPU-abc\"");
    assert_int_equal(len, strlen(buf));
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "empty", ""), 0);
    assert_string_equal(buf, "gpu=\"0\",UUID=\"GPU-abc\",empty=\"\"");
    assert_int_equal(len, strlen(buf));
}

static void test_label_escaping(void **unused)
{
    (void)unused;
    char buf[128];
    size_t len = 0;
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "v", "a\\b\"c\nd"), 0);
    assert_string_equal(buf, "v=\"a\\\\b\\\"c\\nd\"");
    assert_int_equal(len, strlen(buf));
    len = 0;
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "q", "\"\"\\"), 0);
    assert_string_equal(buf, "q=\"\\\"\\\"\\\\\"");
}

static void test_label_no_room(void **unused)
{
    (void)unused;
    char buf[16], before[16];
    size_t len = 0;
    memset(buf, 'Z', sizeof(buf));
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "gpu", "0"), 0);
    memcpy(before, buf, sizeof(buf));
    /* ,model="NVIDIA H100" is 20 more characters: refused, nothing touched. */
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "model", "NVIDIA H100"), -ENOSPC);
    assert_int_equal(len, 7);
    assert_memory_equal(buf, before, sizeof(buf));
    /* Escapes count: "" escapes to 4 characters and does not fit in the 8 bytes left, */
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "x", "\"\""), -ENOSPC);
    assert_int_equal(len, 7);
    assert_memory_equal(buf, before, sizeof(buf));
    /* while 2 plain characters do. */
    assert_int_equal(hn_expo_label(buf, sizeof(buf), &len, "x", "ab"), 0);
    assert_string_equal(buf, "gpu=\"0\",x=\"ab\"");
    assert_int_equal(len, 14);
}

/* A label that fits exactly (its last character in size-2, the NUL in size-1) is accepted. */
static void test_label_exact_fit(void **unused)
{
    (void)unused;
    char buf[8];
    size_t len = 0;
    /* a="\"" is 6 characters; with the NUL, 7 bytes. */
    assert_int_equal(hn_expo_label(buf, 7, &len, "a", "\""), 0);
    assert_string_equal(buf, "a=\"\\\"\"");
    assert_int_equal(len, 6);
    len = 0;
    assert_int_equal(hn_expo_label(buf, 6, &len, "a", "\""), -ENOSPC);
    assert_int_equal(len, 0);
    /* With a comma: gpu="0" then ,b="" is 12 characters in 13 bytes. */
    char two[13];
    len = 0;
    assert_int_equal(hn_expo_label(two, sizeof(two), &len, "gpu", "0"), 0);
    assert_int_equal(hn_expo_label(two, sizeof(two), &len, "b", ""), 0);
    assert_string_equal(two, "gpu=\"0\",b=\"\"");
}

static void test_truncated(void **state)
{
    struct hn_expo e;
    struct hn_buf *b = buf_with_max(state, 40);
    hn_expo_init(&e, b);
    hn_expo_family(&e, "a", "b", HN_GAUGE); /* 26 bytes */
    assert_int_equal(e.truncated, 0);
    assert_int_equal(b->len, 26);
    hn_expo_sample(&e, "a_long_metric_name", "x=\"y\"", 1); /* 28 more: over the cap */
    assert_int_equal(e.truncated, 1);
    assert_string_equal(b->data, "# HELP a b\n# TYPE a gauge\n");
    /* Everything after the cap is a no-op, even what would fit. */
    hn_expo_sample(&e, "a", NULL, 1);
    hn_expo_family(&e, "c", "d", HN_GAUGE);
    assert_int_equal(b->len, 26);
    assert_string_equal(b->data, "# HELP a b\n# TYPE a gauge\n");
    assert_int_equal(e.truncated, 1);
}

/* series and families count what is in the output, not what was attempted past the cap
 * (houston_agent_series reports e.series). */
static void test_truncated_counts(void **state)
{
    struct hn_expo e;
    struct hn_buf *b = buf_with_max(state, 40);
    hn_expo_init(&e, b);
    hn_expo_family(&e, "a", "b", HN_GAUGE);
    hn_expo_sample(&e, "a", NULL, 1); /* "a 1\n": 30 bytes so far */
    assert_int_equal(e.series, 1);
    hn_expo_sample(&e, "a", "long=\"label value\"", 2); /* does not fit */
    assert_int_equal(e.truncated, 1);
    assert_int_equal(e.series, 1);
    assert_int_equal(e.families, 1);
    hn_buf_reset(b);
    hn_expo_init(&e, b);
    hn_expo_family(&e, "a_family_name_too_long_for_forty_bytes", "help", HN_GAUGE);
    assert_int_equal(e.truncated, 1);
    assert_int_equal(e.families, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_family, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_samples, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_number_format, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_nan_skipped, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_label, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_label_escaping, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_label_no_room, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_label_exact_fit, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_truncated, buf_setup, buf_teardown),
        cmocka_unit_test_setup_teardown(test_truncated_counts, buf_setup, buf_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

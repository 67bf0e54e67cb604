/*
 * test_settings.c - the settings-table mechanism (common/settings.h): each type takes what it
 * should and refuses the rest with the words each verb has always used, a refused value
 * changes nothing, unknown keys are named, nested tables and custom rows, and the getopt_long
 * options made from a table.
 */
#include "testutil.h"

#include "common/settings.h"

#include <errno.h>
#include <math.h>

struct sub {
    double x;
};

struct conf {
    double tick;
    int ms;
    unsigned ranks;
    size_t frames;
    unsigned queue;
    uint64_t seed;
    int full;
    int policy;
    char name[8];
    char dtype[8];
    struct sub sub;
    char url[16];
};

static const char *const syncs[] = {"normal", "full", NULL};
static const char *const policies[] = {"reactive", "straggler", "predictive", NULL};
static const char *const dtypes[] = {"bf16", "fp8", "fp4", NULL};

static const struct hn_setting sub_rows[] = {
    {"x", HN_SET_DOUBLE, offsetof(struct sub, x), .lo = 0, .hi = 1},
};
static const struct hn_settings sub_table = {sub_rows, 1, HN_SETTINGS_PLAIN};

/* A custom row: an http:// URL, its own words for a refusal; "" means it says nothing. */
static int set_url(const struct hn_setting *row, void *obj, const char *key, const char *value,
                   char *err, size_t errsize)
{
    if (strcmp(value, "quiet") == 0)
        return -1;
    if (strncmp(value, "http://", 7) != 0) {
        snprintf(err, errsize, "%s: '%s' is not http://...", key, value);
        return -1;
    }
    hn_strlcpy((char *)obj + row->offset, value, sizeof(((struct conf *)NULL)->url));
    return 0;
}

#define C(field) offsetof(struct conf, field)
static const struct hn_setting rows[] = {
    {"tick", HN_SET_DOUBLE, C(tick), .lo = 0.01, .hi = 3600},
    {"timeout", HN_SET_INT, C(ms), .lo = 0.1, .hi = 600, .scale = 1000},
    {"ranks", HN_SET_UNSIGNED, C(ranks), .lo = 1, .hi = 1 << 20, .flags = HN_SET_WHOLE},
    {"frames", HN_SET_SIZE, C(frames), .lo = 1024, .hi = 256.0 * 1024 * 1024},
    {"queue", HN_SET_COUNT, C(queue), .lo = 1, .hi = 100000, .what = "number of frames"},
    {"seed", HN_SET_U64, C(seed), .lo = 0, .hi = (double)UINT64_MAX},
    {"sync", HN_SET_ENUM, C(full), .names = syncs},
    {"policy", HN_SET_ENUM, C(policy), .names = policies},
    {"predictive", HN_SET_BOOL, .offset = C(full)},
    {"name", HN_SET_STRING, C(name), .size = sizeof(((struct conf *)NULL)->name)},
    {"dtype", HN_SET_STRING, C(dtype), .size = 8, .names = dtypes},
    {"sub-", HN_SET_TABLE, C(sub), .sub = &sub_table},
    {"url", HN_SET_CUSTOM, C(url), .parse = set_url},
};

static const struct hn_settings plain = {rows, HN_ARRAY_LEN(rows), HN_SETTINGS_PLAIN};
static const struct hn_settings value_style = {rows, HN_ARRAY_LEN(rows), HN_SETTINGS_VALUE};
static const struct hn_settings terse = {rows, HN_ARRAY_LEN(rows), HN_SETTINGS_TERSE};

static void set_ok(const struct hn_settings *t, struct conf *c, const char *key, const char *v)
{
    char err[256] = "";
    if (hn_settings_set(t, c, key, v, err, sizeof(err)) != 0)
        fail_msg("%s = %s: %s", key, v, err);
}

/* The value is refused with exactly `want` and rc, and the struct is left as it was. */
static void refused(const struct hn_settings *t, const char *key, const char *v, int rc,
                    const char *want)
{
    struct conf c, before;
    memset(&c, 0, sizeof(c));
    c.tick = 5;
    before = c;
    char err[256] = "";
    assert_int_equal(hn_settings_set(t, &c, key, v, err, sizeof(err)), rc);
    assert_string_equal(err, want);
    assert_memory_equal(&c, &before, sizeof(c));
}

static void numbers(void **state)
{
    (void)state;
    struct conf c;
    memset(&c, 0, sizeof(c));
    set_ok(&plain, &c, "tick", " 2.5 ");
    assert_true(c.tick == 2.5);
    set_ok(&plain, &c, "timeout", "0.25"); /* seconds in, milliseconds kept */
    assert_int_equal(c.ms, 250);
    set_ok(&plain, &c, "ranks", "1e3");
    assert_int_equal(c.ranks, 1000);
    set_ok(&plain, &c, "frames", "2048.9"); /* truncated, as (size_t) does */
    assert_int_equal(c.frames, 2048);
    set_ok(&plain, &c, "queue", "360");
    assert_int_equal(c.queue, 360);
    set_ok(&plain, &c, "seed", "18446744073709551615"); /* all 64 bits, not through a double */
    assert_true(c.seed == UINT64_MAX);

    refused(&plain, "tick", "abc", -EINVAL, "tick: 'abc' is not a number in [0.01, 3600]");
    refused(&plain, "tick", "nan", -EINVAL, "tick: 'nan' is not a number in [0.01, 3600]");
    refused(&plain, "tick", "0", -EINVAL, "tick: '0' is not a number in [0.01, 3600]");
    refused(&plain, "tick", "", -EINVAL, "tick: '' is not a number in [0.01, 3600]");
    refused(&plain, "frames", "10", -EINVAL, "frames: '10' is not a number in [1024, 2.68435e+08]");
    refused(&plain, "ranks", "1.5", -EINVAL, "ranks: '1.5' is not a whole number in [1, 1048576]");
    refused(&plain, "ranks", "0", -EINVAL, "ranks: '0' is not a whole number in [1, 1048576]");
    refused(&plain, "queue", "1e3", -EINVAL,
            "queue: '1e3' is not a number of frames in [1, 100000]");
    refused(&plain, "queue", "-1", -EINVAL, "queue: '-1' is not a number of frames in [1, 100000]");
    refused(&plain, "queue", "100001", -EINVAL,
            "queue: '100001' is not a number of frames in [1, 100000]");
    refused(&terse, "seed", "18446744073709551616", -EINVAL,
            "seed: bad value '18446744073709551616'");
    refused(&terse, "tick", "0", -EINVAL, "tick: bad value '0'");

    /* A filled struct's numbers read back as the rows see them. */
    assert_true(hn_settings_number(&rows[1], &c) == 0.25);
    assert_true(hn_settings_number(&rows[2], &c) == 1000);
    assert_true(isnan(hn_settings_number(&rows[6], &c)));
    hn_settings_store(&rows[1], &c, 2);
    assert_int_equal(c.ms, 2000);
}

static void words(void **state)
{
    (void)state;
    struct conf c;
    memset(&c, 0, sizeof(c));
    set_ok(&plain, &c, "sync", "full");
    assert_int_equal(c.full, 1);
    set_ok(&plain, &c, "predictive", "no");
    assert_int_equal(c.full, 0);
    set_ok(&plain, &c, "policy", "predictive");
    assert_int_equal(c.policy, 2);
    set_ok(&plain, &c, "name", "gpu0017");
    assert_string_equal(c.name, "gpu0017");
    set_ok(&plain, &c, "dtype", "fp8");
    assert_string_equal(c.dtype, "fp8");

    refused(&plain, "sync", "fast", -EINVAL, "sync: 'fast' is not normal or full");
    refused(&plain, "policy", "magic", -EINVAL,
            "policy: 'magic' is not one of reactive, straggler, predictive");
    refused(&plain, "predictive", "1", -EINVAL, "predictive: '1' is not yes or no");
    refused(&plain, "dtype", "fp32", -EINVAL, "dtype: 'fp32' is not one of bf16, fp8, fp4");
    refused(&plain, "name", "gpu00017", -EINVAL, "name: longer than 7 bytes");
    refused(&value_style, "name", "gpu00017", -EINVAL, "name: value longer than 7 bytes");
    refused(&terse, "name", "gpu00017", -EINVAL, "name: bad value 'gpu00017'");
    refused(&terse, "precursors", "x", -ENOENT, "unknown setting 'precursors'");
    refused(&terse, "sync", "fast", -EINVAL, "sync: bad value 'fast'");
}

static void keys_tables_and_custom_rows(void **state)
{
    (void)state;
    struct conf c;
    memset(&c, 0, sizeof(c));
    refused(&plain, "colour", "blue", -ENOENT, "unknown setting 'colour'");
    refused(&plain, "", "x", -ENOENT, "unknown setting ''");
    set_ok(&plain, &c, "sub-x", "0.5");
    assert_true(c.sub.x == 0.5);
    refused(&plain, "sub-x", "2", -EINVAL, "sub-x: '2' is not a number in [0, 1]");
    refused(&plain, "sub-y", "2", -ENOENT, "unknown setting 'sub-y'");
    refused(&plain, "sub-", "2", -ENOENT, "unknown setting 'sub-'");
    set_ok(&plain, &c, "url", "http://a");
    assert_string_equal(c.url, "http://a");
    refused(&plain, "url", "ftp://a", -EINVAL, "url: 'ftp://a' is not http://...");
    refused(&terse, "url", "quiet", -EINVAL, "url: bad value 'quiet'");

    /* One row, its reason alone (hn_strag_config_set's way) or under another name. */
    char err[128];
    const struct hn_setting *r = hn_settings_find(&plain, "ranks");
    assert_non_null(r);
    assert_null(hn_settings_find(&plain, "rank"));
    assert_int_equal(hn_settings_put(&plain, r, &c, NULL, "2", err, sizeof(err)), 0);
    assert_int_equal(c.ranks, 2);
    assert_int_equal(hn_settings_put(&plain, r, &c, NULL, "2.5", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "'2.5' is not a whole number in [1, 1048576]");
    assert_int_equal(hn_settings_put(&plain, r, &c, "--ranks", "x", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "--ranks: 'x' is not a whole number in [1, 1048576]");
    /* A short err buffer is cut, not overrun; none at all is fine. */
    assert_int_equal(hn_settings_set(&plain, &c, "tick", "0", err, 8), -EINVAL);
    assert_string_equal(err, "tick: '");
    assert_int_equal(hn_settings_set(&plain, &c, "tick", "0", NULL, 0), -EINVAL);
}

static void options(void **state)
{
    (void)state;
    struct option o[HN_ARRAY_LEN(rows) + 2];
    o[0] = (struct option){"scenario", required_argument, NULL, 'S'};
    size_t n = hn_settings_options(&plain, o, 1, HN_ARRAY_LEN(o) - 1, 300, 1);
    assert_int_equal(n, HN_ARRAY_LEN(rows)); /* every row but the table, after --scenario */
    assert_string_equal(o[1].name, "tick");
    assert_int_equal(o[1].has_arg, required_argument);
    assert_int_equal(o[1].val, 300);
    assert_string_equal(o[2].name, "timeout");
    assert_int_equal(o[2].val, 301);
    assert_string_equal(o[n - 1].name, "url"); /* sub- is no flag */
    n = hn_settings_options(&plain, o, 0, HN_ARRAY_LEN(o), 0, 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(o[i].val, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers),
        cmocka_unit_test(words),
        cmocka_unit_test(keys_tables_and_custom_rows),
        cmocka_unit_test(options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

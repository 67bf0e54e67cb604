/*
 * test_rules.c - the rule thresholds as data (common/rules.h): a SKU's row overrides the
 * fleet-wide value for that SKU only, the shipped data/rules.csv holds the built-in values,
 * a malformed row is refused with the file and record and changes nothing, and `houston check`
 * takes its retired-pages limit from the rules, per SKU.
 */
#include "testutil.h"

#include "common/fsroot.h"
#include "common/rules.h"
#include "common/settings.h"
#include "verbs.h"

#include <errno.h>
#include <math.h>

static const char *write_rules(const char *name, const char *text)
{
    static char path[PATH_MAX];
    tu_write_in(path, sizeof(path), tu_tmpdir(), name, text);
    return path;
}

static void load_ok(struct hn_rules *r, const char *path)
{
    char err[512] = "";
    if (hn_rules_load(r, path, NULL, NULL, err, sizeof(err)) != 0)
        fail_msg("%s: %s", path, err);
}

static void sku_overrides_fleet(void **state)
{
    (void)state;
    struct hn_rules r;
    hn_rules_init(&r);
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_RETIRED_PAGES) == 63); /* nothing read */
    load_ok(&r, write_rules("sku.csv", "sku,key,value,source\n"
                                       "*,retired-pages-limit,40,\"ours\"\n"
                                       "gb200,retired-pages-limit,48,\"vendor advice\"\n"
                                       "GB200,nvlink-crc-per-s,20,x\n"
                                       "*,hang-min,30,x\n"));
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_RETIRED_PAGES) == 48);
    assert_true(hn_rules_get(&r, "gB200", HN_RULE_RETIRED_PAGES) == 48); /* any case */
    assert_true(hn_rules_get(&r, "H100", HN_RULE_RETIRED_PAGES) == 40);
    assert_true(hn_rules_get(&r, NULL, HN_RULE_RETIRED_PAGES) == 40);
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_NVLINK_CRC) == 20);
    assert_true(hn_rules_get(&r, "H100", HN_RULE_NVLINK_CRC) == 100); /* the default */
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_PCIE_REPLAY) == 0.5);
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_HANG_MIN) == 30);
    assert_int_equal(r.nskus, 1);
    assert_string_equal(r.skus[0].sku, "gb200"); /* as first written */
    /* A later file wins where it says something. */
    load_ok(&r, write_rules("later.csv", "sku,key,value,source\nGB200,retired-pages-limit,50,x\n"));
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_RETIRED_PAGES) == 50);
    assert_true(hn_rules_get(&r, "GB200", HN_RULE_NVLINK_CRC) == 20);
    assert_true(hn_rules_get(&r, "H100", HN_RULE_RETIRED_PAGES) == 40);
    hn_rules_fini(&r);
}

static void shipped_file_holds_the_defaults(void **state)
{
    (void)state;
    struct hn_rules r;
    hn_rules_init(&r);
    load_ok(&r, hn_rules_default_path());
    int set = 0;
    for (int i = 0; i < HN_RULE_COUNT; i++) {
        assert_int_equal(hn_rule_find(hn_rule_name(i)), i);
        if (isnan(r.fleet[i]))
            continue;
        set++;
        if (r.fleet[i] != hn_rule_default(i))
            fail_msg("data/rules.csv: %s = %g, built in %g", hn_rule_name(i), r.fleet[i],
                     hn_rule_default(i));
    }
    assert_int_equal(set, 14);
    assert_int_equal(r.nskus, 0);
    assert_int_equal(hn_rule_find("listen"), -1);
    hn_rules_fini(&r);
}

/* A malformed row: refused with "rules-file PATH: record N: why", nothing applied. */
static void malformed_rows(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"sku,key,value,source\n*,hang-min,30,x\n*,hang-min,0,x\n",
         "record 3: hang-min: '0' is not a number in [1, 86400]"},
        {"sku,key,value,source\n*,hang-min,30,x\n*,listen,0.0.0.0:1,x\n",
         "record 3: 'listen' is not a rule threshold"},
        {"sku,key,value,source\n*,hang-min,30,x\nH100,laggard-k,3,x\n",
         "record 3: rule: 'laggard-k' is not retired-pages-limit, nvlink-crc-per-s or "
         "pcie-replay-per-lane-per-min"},
        {"sku,key,value,source\n*,hang-min,30,x\nH100,retired-pages-limit,-1,x\n",
         "record 3: rule: want 'SKU KEY VALUE', got 'H100 retired-pages-limit -1'"},
        {"sku,key,value,source\n*,hang-min,30,x\n*,hang-k\n",
         "record 3: want sku,key,value,source"},
        {"sku,key,value,source\n*,hang-min,30,x\n*,straggler-quorum,0.4,x\n",
         "record 3: 'straggler-quorum' is not a rule threshold"},
        {"a,b,c,d\n", "the header must be sku,key,value,source"},
    };
    struct hn_rules r;
    hn_rules_init(&r);
    load_ok(&r, write_rules("good.csv", "sku,key,value,source\nH100,retired-pages-limit,9,x\n"));
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        char name[32], want[512], err[512] = "";
        snprintf(name, sizeof(name), "bad%zu.csv", i);
        const char *path = write_rules(name, bad[i].text);
        snprintf(want, sizeof(want), "rules-file %s: %s", path, bad[i].why);
        assert_int_equal(hn_rules_load(&r, path, NULL, NULL, err, sizeof(err)), -1);
        assert_string_equal(err, want);
        assert_true(isnan(r.fleet[HN_RULE_HANG_MIN])); /* record 2 was not kept either */
        assert_int_equal(r.nskus, 1);
    }
    char err[512];
    assert_int_equal(hn_rules_load(&r, "/nonexistent/rules.csv", NULL, NULL, err, sizeof(err)), -1);
    assert_string_equal(err, "rules-file: /nonexistent/rules.csv: No such file or directory");
    assert_true(hn_rules_get(&r, "H100", HN_RULE_RETIRED_PAGES) == 9);
    hn_rules_fini(&r);
}

struct extra {
    double quorum;
};

/* The caller's own keys in a rules file: a settings table of theirs. */
static void other_keys(void **state)
{
    (void)state;
    static const struct hn_setting rows[] = {
        {"my-quorum", HN_SET_DOUBLE, offsetof(struct extra, quorum), .lo = 0, .hi = 1},
    };
    static const struct hn_settings more = {rows, 1, HN_SETTINGS_PLAIN};
    struct hn_rules r;
    hn_rules_init(&r);
    struct extra x = {0.5};
    char err[512];
    const char *path = write_rules("more.csv", "sku,key,value,source\n*,my-quorum,0.25,x\n");
    assert_int_equal(hn_rules_load(&r, path, &more, &x, err, sizeof(err)), 0);
    assert_true(x.quorum == 0.25);
    path = write_rules("more2.csv", "sku,key,value,source\n*,my-quorum,2,x\n*,your-quorum,1,x\n");
    assert_int_equal(hn_rules_load(&r, path, &more, &x, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "record 2: my-quorum: '2' is not a number in [0, 1]"));
    hn_rules_fini(&r);
}

static void set_lines(void **state)
{
    (void)state;
    struct hn_rules r;
    hn_rules_init(&r);
    char err[256];
    assert_int_equal(hn_rules_set(&r, "laggard-cycles", "5", err, sizeof(err)), 0);
    assert_true(hn_rules_get(&r, NULL, HN_RULE_LAGGARD_CYCLES) == 5);
    assert_int_equal(hn_rules_set(&r, "laggard-cycles", "0", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "laggard-cycles: '0' is not a number in [1, 1000]");
    assert_int_equal(hn_rules_set(&r, "tick", "5", err, sizeof(err)), -ENOENT);
    assert_int_equal(
        hn_rules_set_sku(&r, "H100 pcie-replay-per-lane-per-min 0.25", err, sizeof(err)), 0);
    assert_true(hn_rules_get(&r, "H100", HN_RULE_PCIE_REPLAY) == 0.25);
    assert_true(isnan(r.skus[0].v[HN_RULE_RETIRED_PAGES]));
    /* At most HN_RULE_SKUS_MAX SKUs; one more is refused, a known one still takes values. */
    for (int i = 1; i < HN_RULE_SKUS_MAX; i++) {
        char line[64];
        snprintf(line, sizeof(line), "S%d retired-pages-limit 5", i);
        assert_int_equal(hn_rules_set_sku(&r, line, err, sizeof(err)), 0);
    }
    assert_int_equal(hn_rules_set_sku(&r, "S999 retired-pages-limit 5", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "rule: more than 256 SKUs");
    assert_int_equal(hn_rules_set_sku(&r, "h100 retired-pages-limit 7", err, sizeof(err)), 0);
    assert_true(hn_rules_get(&r, "H100", HN_RULE_RETIRED_PAGES) == 7);
    hn_rules_fini(&r);
}

/* `houston check` on the fake NVML (H100s) with 50 retired pages on GPU 2: healthy under the
 * shipped limit of 63, failing under a fleet-wide 40 and under an H100 row of 48. */
static int check_with(const char *rules, char *out, size_t outsize)
{
    char sys[PATH_MAX], state[PATH_MAX], kmsg[PATH_MAX];
    const char *fake = getenv("HN_FAKENVML");
    assert_non_null(fake);
    tu_fixture(sys, sizeof(sys), "sysfs-h100");
    tu_write_in(state, sizeof(state), tu_tmpdir(), "nvml-state", "gpu 2 retired dbe 50\n");
    tu_write_in(kmsg, sizeof(kmsg), tu_tmpdir(), "kmsg", "");
    setenv("HN_FAKENVML_STATE", state, 1);
    char *argv[16] = {"check", "--nvml-lib", (char *)fake, "--sysfs-root",
                      sys,     "--kmsg",     kmsg,         "--no-ib"};
    int argc = 8;
    if (rules) {
        argv[argc++] = "--rules";
        argv[argc++] = (char *)rules;
    }
    struct tu_capture c;
    tu_capture_begin(&c);
    int rc = hn_cmd_check(argc, argv);
    tu_capture_end(&c);
    assert_true(hn_read_file(c.out, out, outsize) >= 0);
    return rc;
}

static void check_reads_the_rules(void **state)
{
    (void)state;
    char out[1024];
    assert_int_equal(check_with(NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    const char *fleet = write_rules("check-fleet.csv", "sku,key,value,source\n"
                                                       "*,retired-pages-limit,40,x\n"
                                                       "GB200,retired-pages-limit,60,x\n");
    assert_int_equal(check_with(fleet, out, sizeof(out)), 1);
    assert_non_null(strstr(out, "has 50 retired pages (limit 40)"));
    const char *sku = write_rules("check-sku.csv", "sku,key,value,source\n"
                                                   "*,retired-pages-limit,70,x\n"
                                                   "h100,retired-pages-limit,48,x\n");
    assert_int_equal(check_with(sku, out, sizeof(out)), 1);
    assert_non_null(strstr(out, "has 50 retired pages (limit 48)"));
    const char *bad = write_rules("check-bad.csv", "sku,key,value,source\n*,hang-min,0,x\n");
    assert_int_equal(check_with(bad, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "check failed to run: cannot read the rules: rules-file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sku_overrides_fleet), cmocka_unit_test(shipped_file_holds_the_defaults),
        cmocka_unit_test(malformed_rows),      cmocka_unit_test(other_keys),
        cmocka_unit_test(set_lines),           cmocka_unit_test(check_reads_the_rules),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

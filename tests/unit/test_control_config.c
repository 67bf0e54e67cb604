/*
 * test_control_config.c - the controller's rule thresholds as data: the shipped
 * data/rules.csv holds exactly the compiled-in defaults, an operator's rules file sets
 * fleet-wide and per-SKU thresholds (the straggler detector's too), later config lines win,
 * bad files are refused with the record that is wrong and change nothing, and the rules'
 * built-in values are the brain's.
 */
#include "testutil.h"

#include "control/control.h"

#include <math.h>

static void set_ok(struct hn_control_config *c, const char *key, const char *value)
{
    char err[512] = "";
    if (hn_control_config_set(c, key, value, err, sizeof(err)) != 0)
        fail_msg("%s = %s: %s", key, value, err);
}

static void set_fails(struct hn_control_config *c, const char *key, const char *value,
                      const char *why)
{
    char err[512] = "";
    assert_int_equal(hn_control_config_set(c, key, value, err, sizeof(err)), -1);
    if (!strstr(err, why))
        fail_msg("%s = %s: '%s' does not say '%s'", key, value, err, why);
}

/* step-trusted-uids: a list of user ids, "" for none; anything else is refused. */
static void step_trusted_uids(void **state)
{
    (void)state;
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    assert_int_equal(c.brain.n_step_trusted_uids, 0);
    set_ok(&c, "step-trusted-uids", " 1234, 5678 ,");
    assert_int_equal(c.brain.n_step_trusted_uids, 2);
    assert_true(c.brain.step_trusted_uids[0] == 1234 && c.brain.step_trusted_uids[1] == 5678);
    set_fails(&c, "step-trusted-uids", "alice", "'alice' is not a user id");
    set_fails(&c, "step-trusted-uids", "4294967295", "is not a user id");
    set_fails(&c, "step-trusted-uids", "-1", "is not a user id");
    set_fails(&c, "step-trusted-uids", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "more than 16");
    assert_int_equal(c.brain.n_step_trusted_uids, 2); /* a refused line changes nothing */
    set_ok(&c, "step-trusted-uids", "");
    assert_int_equal(c.brain.n_step_trusted_uids, 0);
}

/* store-retention: days, 365 unless set, 0 keeps everything; jobs-max: a whole number. */
static void retention_and_jobs_max(void **state)
{
    (void)state;
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    assert_true(c.retention_days == 365);
    set_ok(&c, "store-retention", "30");
    assert_true(c.retention_days == 30);
    set_ok(&c, "store-retention", "0");
    assert_true(c.retention_days == 0);
    set_fails(&c, "store-retention", "-1", "store-retention");
    set_fails(&c, "store-retention", "forever", "store-retention");
    set_ok(&c, "jobs-max", "16");
    assert_int_equal(c.brain.jobs_max, 16);
    set_fails(&c, "jobs-max", "15", "jobs-max");
    hn_control_config_fini(&c);
}

/* straggler-NAME: the detector's thresholds by the names of houston straggler's flags, range
 * checked as there; straggler-horizon and straggler-hold stay the policy's. */
static void straggler_thresholds(void **state)
{
    (void)state;
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    struct hn_strag_config d;
    hn_strag_config_default(&d);
    assert_memory_equal(&c.brain.straggler, &d, sizeof(d));
    set_ok(&c, "straggler-threshold", "14");
    set_ok(&c, "straggler-min-slowdown", "0.05");
    set_ok(&c, "straggler-warmup", "12");
    set_ok(&c, "straggler-horizon", "600");
    assert_true(c.brain.straggler_hold_s == 600); /* the default */
    set_ok(&c, "straggler-hold", "0");
    assert_true(c.brain.straggler_hold_s == 0);
    set_fails(&c, "straggler-hold", "-1", "straggler-hold");
    assert_true(c.brain.straggler.cusum_h == 14 && c.brain.straggler.min_slowdown == 0.05);
    assert_int_equal(c.brain.straggler.warmup, 12);
    assert_true(c.brain.straggler_horizon_s == 600);
    set_fails(&c, "straggler-warmup", "2",
              "straggler-warmup: '2' is not a whole number in [3, 16]");
    set_fails(&c, "straggler-quorum", "1.5", "straggler-quorum: '1.5' is not a number in [0, 1]");
    set_fails(&c, "straggler-shift", "3", "unknown setting 'straggler-shift'");
    set_fails(&c, "straggler-", "3", "unknown setting 'straggler-'");
    assert_int_equal(c.brain.straggler.warmup, 12); /* refused lines change nothing */
    hn_control_config_fini(&c);
}

static void shipped_rules_are_the_defaults(void **state)
{
    (void)state;
    struct hn_control_config a, b;
    hn_control_config_defaults(&a);
    hn_control_config_defaults(&b);
    set_ok(&b, "rules-file", hn_control_rules_default_path());
    const struct hn_brain_config *x = &a.brain, *y = &b.brain;
    assert_true(x->retired_pages_limit == y->retired_pages_limit);
    assert_true(x->nvlink_crc_per_s_limit == y->nvlink_crc_per_s_limit);
    assert_true(x->pcie_replay_per_lane_min == y->pcie_replay_per_lane_min);
    assert_true(x->laggard_min_util == y->laggard_min_util && x->laggard_k == y->laggard_k);
    assert_true(x->laggard_min_drop == y->laggard_min_drop);
    assert_int_equal(x->laggard_cycles, y->laggard_cycles);
    assert_int_equal(x->laggard_min_peers, y->laggard_min_peers);
    assert_true(x->hot_min_delta_c == y->hot_min_delta_c);
    assert_true(x->hang_min_s == y->hang_min_s && x->hang_k == y->hang_k);
    assert_true(x->hang_pause_k == y->hang_pause_k && x->hang_pause_max_s == y->hang_pause_max_s);
    assert_true(x->sbe_rate_per_h == y->sbe_rate_per_h);
    assert_int_equal(b.nsku_rules, 0);
    /* Every row of the shipped file names its source. */
    size_t len;
    char *text = tu_slurp(hn_control_rules_default_path(), &len);
    assert_int_equal(tu_count(text, "\n*,"), 14);
    assert_null(strstr(text, ",,"));
    free(text);
    hn_control_config_fini(&a);
    hn_control_config_fini(&b);
}

/* The rules' built-in values (common/rules.h, what `houston check` uses when no file sets
 * one) are the brain's: setting each rule to its default changes nothing. */
static void rule_defaults_are_the_brains(void **state)
{
    (void)state;
    struct hn_control_config a, b;
    hn_control_config_defaults(&a);
    hn_control_config_defaults(&b);
    for (int i = 0; i < HN_RULE_COUNT; i++) {
        char v[32];
        snprintf(v, sizeof(v), "%.17g", hn_rule_default(i));
        set_ok(&b, hn_rule_name(i), v);
    }
    assert_memory_equal(&a.brain, &b.brain, sizeof(a.brain));
    hn_control_config_fini(&a);
    hn_control_config_fini(&b);
}

/* A rules file refused at its last row leaves everything as it was, its straggler rows too;
 * per-SKU rules from files and lines add up. */
static void rules_files_and_lines(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "half.csv",
                "sku,key,value,source\n"
                "*,hang-min,30,x\n"
                "*,straggler-quorum,0.4,x\n"
                "GB200,retired-pages-limit,48,x\n"
                "*,hang-k,0,x\n");
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    set_fails(&c, "rules-file", path, "record 5: hang-k: '0' is not a number in [1, 1000]");
    assert_true(c.brain.hang_min_s == 120);
    assert_true(c.brain.straggler.quorum == 0.5);
    assert_int_equal(c.nsku_rules, 0);
    set_ok(&c, "rule", "GB200 retired-pages-limit 48");
    set_ok(&c, "rule", "h100 nvlink-crc-per-s 20");
    set_ok(&c, "rule", "gb200 pcie-replay-per-lane-per-min 0.25");
    assert_int_equal(c.nsku_rules, 2);
    assert_string_equal(c.sku_rules[0].sku, "GB200");
    assert_true(c.sku_rules[0].retired_pages_limit == 48);
    assert_true(c.sku_rules[0].pcie_replay_per_lane_min == 0.25);
    assert_true(isnan(c.sku_rules[0].nvlink_crc_per_s_limit));
    assert_true(c.sku_rules[1].nvlink_crc_per_s_limit == 20);
    set_ok(&c, "laggard-cycles", "5.9"); /* a count, truncated as it always was */
    assert_int_equal(c.brain.laggard_cycles, 5);
    set_ok(&c, "scheduler-timeout", "2.5");
    assert_int_equal(c.sched_timeout_ms, 2500);
    set_fails(&c, "scheduler", "pbs", "scheduler: 'pbs' is not one of slurm, dry-run");
    set_ok(&c, "scheduler", "dry-run");
    assert_string_equal(c.scheduler, "dry-run");
    set_ok(&c, "store-sync", "full");
    assert_int_equal(c.store_full_sync, 1);
    set_fails(&c, "store-sync", "fast", "store-sync: 'fast' is not normal or full");
    hn_control_config_fini(&c);
}

static void operator_rules_file(void **state)
{
    (void)state;
    const char *dir = tu_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/rules.csv", dir);
    tu_write_file(path, "sku,key,value,source\n"
                        "*,hang-min,30,\"our jobs checkpoint often\"\n"
                        "*,hang-pause-k,2,\"our saves take the same time\"\n"
                        "*,hang-pause-max,900,x\n"
                        "*,retired-pages-limit,40,\n"
                        "*,straggler-min-slowdown,0.04,\"small slowdowns cost us little\"\n"
                        "GB200,retired-pages-limit,48,\"vendor advice\"\n"
                        "GB200,nvlink-crc-per-s,20,x\n");
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    set_ok(&c, "rules-file", path);
    assert_true(c.brain.hang_min_s == 30);
    assert_true(c.brain.hang_pause_k == 2 && c.brain.hang_pause_max_s == 900);
    assert_true(c.brain.retired_pages_limit == 40);
    assert_true(c.brain.straggler.min_slowdown == 0.04);
    assert_int_equal(c.nsku_rules, 1);
    assert_string_equal(c.sku_rules[0].sku, "GB200");
    assert_true(c.sku_rules[0].retired_pages_limit == 48);
    assert_true(c.sku_rules[0].nvlink_crc_per_s_limit == 20);
    assert_true(isnan(c.sku_rules[0].pcie_replay_per_lane_min));
    /* A later config line wins over the file. */
    set_ok(&c, "hang-min", "45");
    assert_true(c.brain.hang_min_s == 45);
    set_ok(&c, "hang-pause-k", "0"); /* 0: pauses do not raise the limit */
    assert_true(c.brain.hang_pause_k == 0);
    hn_control_config_fini(&c);
}

static void bad_rules_files(void **state)
{
    (void)state;
    const char *dir = tu_tmpdir();
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"sku,key,value,source\n*,listen,0.0.0.0:1,evil\n", "record 2: 'listen' is not a rule"},
        {"sku,key,value,source\n*,hang-min,-3,x\n", "record 2:"},
        {"sku,key,value,source\n*,hang-pause-k,101,x\n",
         "record 2: hang-pause-k: '101' is not a number in [0, 100]"},
        {"sku,key,value,source\nH100,laggard-k,3,x\n", "record 2: rule:"},
        {"sku,key,value,source\n*,straggler-quorum,2,x\n", "record 2: straggler-quorum:"},
        {"sku,key,value,source\n*,straggler-csv,x,x\n", "record 2: 'straggler-csv' is not a rule"},
        {"sku,key,value,source\n*,hang-min\n", "record 2: want sku,key,value"},
        {"a,b,c,d\n", "header must be sku,key,value,source"},
        {"sku,key,value,source\n*,\"hang-min,3\n", "rules-file"},
    };
    struct hn_control_config c;
    hn_control_config_defaults(&c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/bad%zu.csv", dir, i);
        tu_write_file(path, bad[i].text);
        set_fails(&c, "rules-file", path, bad[i].why);
    }
    set_fails(&c, "rules-file", "/nonexistent/rules.csv", "rules-file");
    hn_control_config_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(step_trusted_uids),
        cmocka_unit_test(retention_and_jobs_max),
        cmocka_unit_test(straggler_thresholds),
        cmocka_unit_test(shipped_rules_are_the_defaults),
        cmocka_unit_test(operator_rules_file),
        cmocka_unit_test(bad_rules_files),
        cmocka_unit_test(rule_defaults_are_the_brains),
        cmocka_unit_test(rules_files_and_lines),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

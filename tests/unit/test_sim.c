/*
 * test_sim.c - the fleet simulator: its ETTR against Meta's expected value for random failures
 * and reactive recovery, its books (kept + lost = wall), determinism, and what each policy
 * buys (stragglers replaced, failures avoided by precursors).
 */
#include "brain_fleet.h"
#include "sim/sim.h"

#include <math.h>

static void write_failures(const char *path, const char *rows)
{
    char text[1024];
    snprintf(text, sizeof(text), "cause,interruptions,signal,precursor_prob,precursor_lead_h\n%s",
             rows);
    tu_write_file(path, text);
}

static struct hn_sim_result run(struct hn_sim_config *cfg)
{
    char err[512];
    struct hn_sim *s = hn_sim_new(cfg, err, sizeof(err));
    if (!s)
        fail_msg("hn_sim_new: %s", err);
    hn_sim_run(s);
    struct hn_sim_result r;
    hn_sim_result(s, &r);
    hn_sim_free(s);
    return r;
}

static void set(struct hn_sim_config *cfg, const char *key, const char *value)
{
    char err[256];
    if (hn_sim_config_set(cfg, key, value, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

/* The defaults, then the settings in kv: "key", "value", ..., NULL (the names of
 * `houston sim --KEY VALUE`). */
static void configure(struct hn_sim_config *cfg, const char *const *kv)
{
    hn_sim_config_default(cfg);
    for (; kv[0]; kv += 2)
        set(cfg, kv[0], kv[1]);
}

static void assert_same_double(const char *what, double a, double b)
{
    if (!(a == b || (isnan(a) && isnan(b))))
        fail_msg("%s: %.17g != %.17g", what, a, b);
}

/* Two runs gave the same result: every field, compared by value (not the padding). */
static void assert_same_result(const struct hn_sim_result *a, const struct hn_sim_result *b)
{
    assert_same_double("ettr", a->ettr, b->ettr);
    assert_same_double("mfu", a->mfu, b->mfu);
    assert_same_double("effective_mfu", a->effective_mfu, b->effective_mfu);
    for (int c = 0; c < HN_SIM_NCAUSES; c++) {
        assert_same_double("lost_gpu_h", a->lost_gpu_h[c], b->lost_gpu_h[c]);
        assert_same_double("lost_s", a->lost_s[c], b->lost_s[c]);
    }
    assert_same_double("job_gpu_h", a->job_gpu_h, b->job_gpu_h);
    assert_int_equal(a->interruptions, b->interruptions);
    assert_int_equal(a->failures, b->failures);
    assert_int_equal(a->job_failures, b->job_failures);
    assert_int_equal(a->stragglers, b->stragglers);
    assert_int_equal(a->detected, b->detected);
    assert_same_double("detect_median_s", a->detect_median_s, b->detect_median_s);
    assert_same_double("detect_p95_s", a->detect_p95_s, b->detect_p95_s);
    assert_int_equal(a->drains, b->drains);
    assert_int_equal(a->false_drains, b->false_drains);
    assert_int_equal(a->predicted, b->predicted);
    assert_same_double("brain_ettr", a->brain_ettr, b->brain_ettr);
    assert_same_double("wall_s", a->wall_s, b->wall_s);
    assert_same_double("kept_s", a->kept_s, b->kept_s);
    assert_int_equal(a->events, b->events);
    assert_int_equal(a->step_reports, b->step_reports);
}

/* Only random, detectable failures, reactive recovery, spares enough: the simulated ETTR must
 * match E[ETTR] = (1 - N r (u0 + dt/2)) / (1 + w/dt) within one percentage point. */
static void ettr_matches_theory(void **state)
{
    (void)state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/xid-only.csv", tu_tmpdir());
    write_failures(path, "faulty_gpu,1,xid:79,0,0\n");
    static const struct {
        unsigned job_nodes;
        double rate, ckpt_s, write_s, u0_s, days;
    } sets[] = {
        {32, 0.09, 1800, 30, 600, 700},   /* 2.9 failures a day, 30 min checkpoints */
        {48, 0.05, 3600, 60, 300, 800},   /* 2.4 a day, hourly checkpoints, quick restarts */
        {24, 0.06, 7200, 120, 900, 1200}, /* 1.4 a day, 2 h checkpoints, slow restarts */
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        struct hn_sim_config cfg;
        hn_sim_config_default(&cfg);
        char v[64];
        cfg.gpus = (sets[i].job_nodes + 16) * 8;
        cfg.spares = 16;
        cfg.days = sets[i].days;
        cfg.node_failure_rate = sets[i].rate;
        cfg.ckpt_interval_s = sets[i].ckpt_s;
        cfg.ckpt_write_s = sets[i].write_s;
        cfg.restart_overhead_s = sets[i].u0_s;
        cfg.straggler_rate = 0;
        cfg.repair_s = 7200;
        cfg.report_s = 600;
        cfg.tick_s = 600;
        cfg.policy = HN_SIM_REACTIVE;
        cfg.precursors = 0;
        cfg.timeline_max = 0;
        snprintf(v, sizeof(v), "%u", (unsigned)(7 + i));
        set(&cfg, "seed", v);
        hn_strlcpy(cfg.failures_file, path, sizeof(cfg.failures_file));
        struct hn_sim_result r = run(&cfg);
        double expected = hn_sim_expected_ettr(sets[i].job_nodes, sets[i].rate / 86400,
                                               sets[i].u0_s, sets[i].ckpt_s, sets[i].write_s);
        printf("set %zu: %u job failures, ETTR %.4f, expected %.4f, brain %.4f\n", i,
               r.job_failures, r.ettr, expected, r.brain_ettr);
        assert_true(r.job_failures > 800);
        assert_near(r.ettr, expected, 0.01);
        /* The brain's own ledger sees the same job. */
        assert_near(r.brain_ettr, r.ettr, 0.01);
        assert_int_equal(r.false_drains, 0);
    }
}

/* Every second of wall time is kept or lost, and the same seed gives the same run. */
static void books_balance_and_runs_repeat(void **state)
{
    (void)state;
    struct hn_sim_config cfg;
    configure(&cfg, (const char *const[]){"gpus", "512", "spares", "8", "repair-time", "12h",
                                          "days", "20", "node-failure-rate", "0.05",
                                          "straggler-rate", "0.02", "seed", "42", NULL});
    struct hn_sim_result a = run(&cfg), b = run(&cfg);
    double lost = 0;
    for (int c = 0; c < HN_SIM_NCAUSES; c++)
        lost += a.lost_s[c];
    printf("kept %.0f + lost %.0f = %.0f (wall %.0f)\n", a.kept_s, lost, a.kept_s + lost, a.wall_s);
    assert_near(a.kept_s + lost, a.wall_s, 1e-6 * a.wall_s);
    assert_true(a.failures > 10 && a.interruptions > 5 && a.stragglers > 3);
    assert_same_result(&a, &b);
    set(&cfg, "seed", "43");
    struct hn_sim_result c = run(&cfg);
    assert_true(c.ettr != a.ettr || c.failures != a.failures);
}

/* Checkpoint writes of 20 minutes, far beyond the brain's 5-minute hang floor: the job
 * announces each one (a pause notice), so none is a hang; no faults, so no interruption at
 * all, and ETTR is what the writes leave (1 h of compute per 1 h 20 min: 0.75). */
static void long_checkpoint_writes_are_no_hang(void **state)
{
    (void)state;
    struct hn_sim_config cfg;
    configure(&cfg, (const char *const[]){"gpus", "512", "days", "3", "node-failure-rate", "0",
                                          "straggler-rate", "0", "ckpt-write", "20m", NULL});
    struct hn_sim_result r = run(&cfg);
    assert_int_equal(r.interruptions, 0);
    assert_true(r.lost_gpu_h[HN_SIM_LOST_HANG] == 0 && r.lost_gpu_h[HN_SIM_LOST_FAILURE] == 0);
    assert_near(r.ettr, 0.75, 0.01);
}

/* The straggler policy replaces slow nodes at a checkpoint; reactive only reports them. */
static void straggler_policy_pays(void **state)
{
    (void)state;
    struct hn_sim_config cfg;
    configure(&cfg, (const char *const[]){"gpus", "512", "days", "30", "node-failure-rate", "0",
                                          "straggler-rate", "0.01", "seed", "5", "policy",
                                          "reactive", NULL});
    struct hn_sim_result re = run(&cfg);
    set(&cfg, "policy", "straggler");
    struct hn_sim_result st = run(&cfg);
    printf("reactive: MFU %.3f, %u drains; straggler: MFU %.3f, %u drains, %u stragglers, %u "
           "found, latency median %.0f s\n",
           re.mfu, re.drains, st.mfu, st.drains, st.stragglers, st.detected, st.detect_median_s);
    assert_int_equal(re.drains, 0);
    assert_true(st.drains > 0);
    assert_int_equal(st.false_drains, 0);
    assert_true(st.effective_mfu > re.effective_mfu);
    assert_true(st.lost_gpu_h[HN_SIM_LOST_STRAGGLER] < re.lost_gpu_h[HN_SIM_LOST_STRAGGLER]);
}

/* The job's ranks one per GPU (as `houston demo` runs it): the brain's ledger counts its GPUs,
 * so its GPU-hours lost to a throttled GPU are the simulator's, not a quarter of them; the
 * detector still finds that GPU's rank among the node's four and drains the node. */
static void one_rank_per_gpu_counts_gpu_hours(void **state)
{
    (void)state;
    struct hn_sim_config cfg;
    configure(&cfg, (const char *const[]){"gpus",
                                          "72",
                                          "gpus-per-node",
                                          "4",
                                          "days",
                                          "1",
                                          "node-failure-rate",
                                          "0",
                                          "straggler-rate",
                                          "0",
                                          "ckpt-interval",
                                          "5m",
                                          "ckpt-write",
                                          "10s",
                                          "restart-overhead",
                                          "2m",
                                          "report",
                                          "10s",
                                          "tick",
                                          "30s",
                                          NULL});
    cfg.ranks_per_node = 4;
    char err[512];
    struct hn_sim *s = hn_sim_new(&cfg, err, sizeof(err));
    if (!s)
        fail_msg("hn_sim_new: %s", err);
    hn_sim_run_until(s, 3600);
    assert_true(hn_sim_inject_slowdown(s, 5, 0.3) >= 0);
    hn_sim_run_until(s, 2 * 3600);
    struct hn_sim_result r;
    hn_sim_result(s, &r);
    struct hn_job_view v;
    job_view(hn_sim_brain(s), hn_sim_job_id(s), &v);
    double job_gpus = r.job_gpu_h * 3600 / r.wall_s;
    printf("ranks %u of %.0f GPUs; detected %u, drains %u (false %u); straggler GPU-hours: "
           "brain %.2f, simulator %.2f\n",
           v.l.ranks, job_gpus, r.detected, r.drains, r.false_drains,
           v.lost_gpu_h[HN_LOSS_STRAGGLER], r.lost_gpu_h[HN_SIM_LOST_STRAGGLER]);
    assert_int_equal(v.l.ranks, (unsigned)job_gpus);
    assert_int_equal(r.detected, 1);
    assert_int_equal(r.drains, 1);
    assert_int_equal(r.false_drains, 0);
    double ratio = v.lost_gpu_h[HN_LOSS_STRAGGLER] / r.lost_gpu_h[HN_SIM_LOST_STRAGGLER];
    assert_true(ratio > 0.6 && ratio < 1.5);
    hn_sim_free(s);
}

/* With precursors, the predictive policy replaces failing nodes before they fail. */
static void predictive_policy_avoids_failures(void **state)
{
    (void)state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/hbm.csv", tu_tmpdir());
    write_failures(path, "gpu_hbm3,1,dbe,1,24\n");
    struct hn_sim_config cfg;
    configure(&cfg,
              (const char *const[]){"gpus", "512", "spares", "8", "repair-time", "12h", "days",
                                    "30", "node-failure-rate", "0.02", "straggler-rate", "0",
                                    "failures-file", path, "policy", "straggler", NULL});
    struct hn_sim_result st = run(&cfg);
    set(&cfg, "policy", "predictive");
    struct hn_sim_result pr = run(&cfg);
    printf("straggler: ETTR %.4f, %u failures, %u avoided; predictive: ETTR %.4f, %u failures, "
           "%u avoided\n",
           st.ettr, st.failures, st.predicted, pr.ettr, pr.failures, pr.predicted);
    assert_int_equal(st.predicted, 0);
    assert_true(pr.predicted > 0);
    assert_true(pr.failures < st.failures);
    assert_true(pr.ettr > st.ettr);
}

static void bad_settings(void **state)
{
    (void)state;
    struct hn_sim_config cfg;
    hn_sim_config_default(&cfg);
    char err[256];
    assert_int_equal(hn_sim_config_set(&cfg, "gpus", "0", err, sizeof(err)), -1);
    assert_int_equal(hn_sim_config_set(&cfg, "ckpt-interval", "-5m", err, sizeof(err)), -1);
    assert_int_equal(hn_sim_config_set(&cfg, "policy", "magic", err, sizeof(err)), -1);
    assert_int_equal(hn_sim_config_set(&cfg, "nope", "1", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "unknown setting 'nope'"));
    assert_int_equal(hn_sim_config_set(&cfg, "ckpt-interval", "2h", err, sizeof(err)), 0);
    assert_true(cfg.ckpt_interval_s == 7200);
    set(&cfg, "failures-file", "/nonexistent.csv");
    assert_null(hn_sim_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "failures-file"));
    hn_sim_config_default(&cfg);
    set(&cfg, "gpus", "16");
    set(&cfg, "spares", "2");
    assert_null(hn_sim_new(&cfg, err, sizeof(err)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ettr_matches_theory),
        cmocka_unit_test(books_balance_and_runs_repeat),
        cmocka_unit_test(straggler_policy_pays),
        cmocka_unit_test(one_rank_per_gpu_counts_gpu_hours),
        cmocka_unit_test(predictive_policy_avoids_failures),
        cmocka_unit_test(bad_settings),
        cmocka_unit_test(long_checkpoint_writes_are_no_hang),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

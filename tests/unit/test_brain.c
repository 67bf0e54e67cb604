/*
 * test_brain.c - the controller's brain driven by scripts in virtual time: rules, the
 * lifecycle, the guard, operators, laggards, and determinism.
 */
#include "brain_fleet.h"

/* A fleet of `nodes` nodes of 8 H100 GPUs, two per rack, all ready. */
static struct hn_brain *rack_fleet(int nodes, double guard_fraction)
{
    struct hn_brain_config cfg;
    hn_brain_config_default(&cfg);
    cfg.xid_catalog = catalog;
    cfg.guard_fraction = guard_fraction;
    cfg.guard_per_rack = 8;
    return fleet_of(&cfg, nodes, 8, 2, NULL);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_fatal_xid_drains_and_requeues(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.5);
    hn_brain_node_job(b, 0, hn_brain_find_node(b, "n2"), "1234");
    hn_brain_xid(b, 10, hn_brain_find_node(b, "n2"), 3, 79);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n2 xid sev=3 gpu=3: xid 79 "
                              "(ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 3\n"));
    assert_non_null(strstr(t, "transition n2 ready->draining by xid\n"));
    assert_non_null(strstr(t, "action n2 drain job= reason=houston: xid 79 "
                              "(ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 3\n"));
    assert_non_null(strstr(t, "action n2 requeue job=1234"));
    assert_int_equal(state_of(b, "n2"), HN_NODE_DRAINING);
    assert_int_equal(state_of(b, "n1"), HN_NODE_READY);

    /* The scheduler reports the node empty: quarantined. */
    hn_brain_node_idle(b, 20, hn_brain_find_node(b, "n2"));
    assert_non_null(strstr(drain_outputs(b), "transition n2 draining->quarantined by scheduler"));
    hn_brain_free(b);
}

static void test_warning_xid_only_recorded(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(2, 0.5);
    hn_brain_xid(b, 1, 0, 0, 13); /* RESTART_APP: the application's problem */
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n1 xid sev=1 gpu=0: xid 13"));
    assert_null(strstr(t, "transition"));
    assert_null(strstr(t, "action"));
    hn_brain_free(b);
}

static void test_dbe_remap_retired(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(8, 1.0);
    sample(b, 1, "n1", 2, HN_F_ECC_DBE_VOL, 0);
    assert_string_equal(drain_outputs(b), "");
    sample(b, 2, "n1", 2, HN_F_ECC_DBE_VOL, 2);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n1 dbe_new sev=3 gpu=2"));
    assert_non_null(strstr(t, "action n1 drain"));
    /* Fires once, not on every later sample. */
    sample(b, 3, "n1", 2, HN_F_ECC_DBE_VOL, 2);
    sample(b, 4, "n1", 2, HN_F_ECC_DBE_VOL, 3);
    assert_string_equal(drain_outputs(b), "");

    sample(b, 5, "n2", 1, HN_F_REMAP_PENDING, 1);
    t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n2 row_remap_pending sev=1"));
    assert_null(strstr(t, "action"));
    sample(b, 6, "n2", 1, HN_F_REMAP_FAILURE, 1);
    assert_non_null(strstr(drain_outputs(b), "action n2 drain job= reason=houston: GPU 1: row "
                                             "remapping failed"));

    sample(b, 7, "n3", 0, HN_F_RETIRED_SBE, 60);
    sample(b, 7, "n3", 0, HN_F_RETIRED_DBE, 2);
    assert_string_equal(drain_outputs(b), "");
    sample(b, 8, "n3", 0, HN_F_RETIRED_DBE, 3);
    assert_non_null(strstr(drain_outputs(b), "finding n3 retired_pages sev=3 gpu=0: GPU 0: 63 "
                                             "retired pages"));
    hn_brain_free(b);
}

static void test_nvlink_pcie_violations(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(8, 1.0);
    /* 50 CRC errors per second: under the limit of 100. */
    sample(b, 0, "n1", 0, HN_F_NVLINK_CRC_FLIT, 1000);
    sample(b, 10, "n1", 0, HN_F_NVLINK_CRC_FLIT, 1500);
    assert_string_equal(drain_outputs(b), "");
    sample(b, 20, "n1", 0, HN_F_NVLINK_CRC_FLIT, 3500); /* 200/s */
    assert_non_null(strstr(drain_outputs(b), "finding n1 nvlink_crc sev=3"));

    sample(b, 0, "n2", 4, HN_F_NVLINK_REPLAY, 0);
    sample(b, 1, "n2", 4, HN_F_NVLINK_REPLAY, 1);
    assert_non_null(strstr(drain_outputs(b), "action n2 drain"));

    /* PCIe: x16 at 0.5 per lane per minute allows 8 replays a minute; 12 warns. */
    sample(b, 0, "n3", 1, HN_F_PCIE_WIDTH, 16);
    sample(b, 0, "n3", 1, HN_F_PCIE_REPLAY, 100);
    sample(b, 60, "n3", 1, HN_F_PCIE_REPLAY, 106);
    assert_string_equal(drain_outputs(b), "");
    sample(b, 120, "n3", 1, HN_F_PCIE_REPLAY, 118);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n3 pcie_replay sev=1"));
    assert_null(strstr(t, "action"));

    /* A rising thermal violation counter warns once per episode. */
    sample(b, 0, "n4", 0, HN_F_THERMAL_VIOLATION, 10);
    sample(b, 1, "n4", 0, HN_F_THERMAL_VIOLATION, 20);
    sample(b, 2, "n4", 0, HN_F_THERMAL_VIOLATION, 30);
    t = drain_outputs(b);
    assert_non_null(strstr(t, "thermal_violation"));
    assert_null(strstr(strstr(t, "thermal_violation") + 1, "thermal_violation sev"));
    sample(b, 3, "n4", 0, HN_F_THERMAL_VIOLATION, 30);
    sample(b, 4, "n4", 0, HN_F_THERMAL_VIOLATION, 40);
    assert_non_null(strstr(drain_outputs(b), "thermal_violation"));
    assert_int_equal(state_of(b, "n4"), HN_NODE_READY);
    hn_brain_free(b);
}

static void test_ib_gpu_count_lost(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(8, 1.0);
    hn_brain_ib_port(b, 0, 0, "mlx5_0/1", 1, 3);
    hn_brain_ib_port(b, 1, 0, "mlx5_0/1", 1, 3);
    assert_string_equal(drain_outputs(b), "");
    hn_brain_ib_port(b, 2, 0, "mlx5_0/1", 0, 4);
    assert_non_null(strstr(drain_outputs(b), "finding n1 ib_link_downed sev=3 gpu=-1: IB port "
                                             "mlx5_0/1 went down"));

    hn_brain_gpu_count(b, 0, 1, 8);
    assert_string_equal(drain_outputs(b), "");
    hn_brain_gpu_count(b, 1, 1, 7);
    assert_non_null(strstr(drain_outputs(b), "action n2 drain job= reason=houston: 7 GPUs "
                                             "found, 8 expected"));
    hn_brain_gpu_lost(b, 0, 2, 5, 1);
    assert_non_null(strstr(drain_outputs(b), "reason=houston: GPU 5 is lost"));
    hn_brain_free(b);
}

static void test_guard_holds_until_approved(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.25);
    for (int i = 0; i < 3; i++)
        hn_brain_xid(b, 100 + i, i, 0, 79);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "action n1 drain"));
    assert_null(strstr(t, "action n2"));
    assert_null(strstr(t, "action n3"));
    assert_non_null(strstr(t, "held n2 xid: guard: 1 of 4 nodes already drained"));
    assert_non_null(strstr(t, "held n3 xid: guard"));
    assert_int_equal(state_of(b, "n2"), HN_NODE_SUSPECT);
    struct hn_node_view v;
    hn_brain_node_view(b, 1, &v);
    assert_int_equal(v.held, 1);

    /* A second fatal finding on a held node does not add a second hold. */
    sample(b, 110, "n2", 0, HN_F_REMAP_FAILURE, 1);
    t = drain_outputs(b);
    assert_null(strstr(t, "held"));
    assert_null(strstr(t, "action"));

    assert_int_equal(hn_brain_approve(b, 120, 1, "alice"), 0);
    t = drain_outputs(b);
    assert_non_null(strstr(t, "transition n2 suspect->draining by operator:alice"));
    assert_non_null(strstr(t, "action n2 drain job= reason=houston: xid 79"));
    assert_int_equal(hn_brain_approve(b, 121, 3, "alice"), -EINVAL); /* n4 holds nothing */

    /* After the window the guard allows the next automatic removal. */
    hn_brain_xid(b, 100 + 3600 + 1, 3, 0, 79);
    assert_non_null(strstr(drain_outputs(b), "action n4 drain"));
    hn_brain_free(b);
}

static void test_operator_drain_resume(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.5);
    assert_int_equal(hn_brain_drain(b, 1, 0, "bad fan", "bob"), 0);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "transition n1 ready->draining by operator:bob"));
    assert_non_null(strstr(t, "action n1 drain job= reason=houston: operator bob: bad fan"));
    assert_int_equal(hn_brain_resume(b, 2, 0, "bob"), 0);
    t = drain_outputs(b);
    assert_non_null(strstr(t, "transition n1 draining->ready by operator:bob"));
    assert_non_null(strstr(t, "action n1 resume"));

    /* A node houston never drained is not resumed in the scheduler. */
    hn_brain_set_state(b, 3, 1, HN_NODE_REPAIR, "bob");
    assert_non_null(strstr(drain_outputs(b), "transition n2 ready->repair by operator:bob"));
    hn_brain_resume(b, 4, 1, "bob");
    t = drain_outputs(b);
    assert_non_null(strstr(t, "transition n2 repair->ready"));
    assert_null(strstr(t, "action"));
    assert_int_equal(hn_brain_drain(b, 5, 9, "x", "bob"), -EINVAL);

    /* After a resume the rules are armed again. */
    hn_brain_xid(b, 6, 0, 0, 79);
    hn_brain_resume(b, 7, 0, "bob");
    drain_outputs(b);
    hn_brain_xid(b, 8, 0, 0, 79);
    assert_non_null(strstr(drain_outputs(b), "action n1 drain"));
    hn_brain_free(b);
}

/* One round of samples: every GPU of every node at full load, n1 GPU 5 at `slow` MHz. */
static void load_round(struct hn_brain *b, double now, double slow)
{
    static const unsigned f[] = {HN_F_GPU_UTIL, HN_F_SM_CLOCK, HN_F_POWER, HN_F_GPU_TEMP};
    for (size_t n = 0; n < hn_brain_node_count(b); n++) {
        for (unsigned g = 0; g < 8; g++) {
            double jitter = (double)((n * 8 + g) % 5); /* real peers differ a little */
            double v[] = {97, (n == 0 && g == 5) ? slow : 1980 - jitter, 690, 70};
            assert_int_equal(hn_brain_samples(b, now, (int)n, g, f, v, 4), 0);
        }
    }
    hn_brain_tick(b, now);
}

static void test_laggard_becomes_suspect(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.25);
    load_round(b, 1, 1975);
    load_round(b, 2, 1978);
    assert_string_equal(drain_outputs(b), "");
    /* Throttled by 30%: suspect after three evaluations in a row, never drained. */
    load_round(b, 3, 1386);
    load_round(b, 4, 1386);
    assert_string_equal(drain_outputs(b), "");
    load_round(b, 5, 1386);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n1 laggard sev=2 gpu=5: GPU 5: SM clock 1386 MHz, 30% "
                              "below its H100 peers\n"));
    assert_non_null(strstr(t, "transition n1 ready->suspect by laggard\n"));
    assert_null(strstr(t, "action"));
    load_round(b, 6, 1386);
    assert_null(strstr(drain_outputs(b), "laggard"));
    assert_int_equal(state_of(b, "n1"), HN_NODE_SUSPECT);

    /* A one-cycle dip is not a laggard. */
    struct hn_brain *b2 = rack_fleet(4, 0.25);
    load_round(b2, 1, 1386);
    load_round(b2, 2, 1979);
    load_round(b2, 3, 1386);
    load_round(b2, 4, 1979);
    assert_string_equal(drain_outputs(b2), "");
    hn_brain_free(b2);
    hn_brain_free(b);
}

/* A repaired node in burnin that reports cleanly for burnin_s is back in service, and the
 * scheduler's drain houston set is undone; a fatal finding during burn-in drains it again. */
static void test_burnin_passes(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(8, 1.0);
    hn_brain_xid(b, 10, 0, 0, 79);
    hn_brain_set_state(b, 50, 0, HN_NODE_REPAIR, "ops");
    hn_brain_set_state(b, 100, 0, HN_NODE_BURNIN, "ops");
    drain_outputs(b);
    sample(b, 650, "n1", 0, HN_F_GPU_UTIL, 90);
    hn_brain_tick(b, 650);
    assert_int_equal(state_of(b, "n1"), HN_NODE_BURNIN); /* 550 s < 600 s */
    sample(b, 701, "n1", 0, HN_F_GPU_UTIL, 90);
    hn_brain_tick(b, 701);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n1 burnin sev=0 gpu=-1: burn-in passed after 601 s"));
    assert_non_null(strstr(t, "transition n1 burnin->ready by burnin"));
    assert_non_null(strstr(t, "action n1 resume"));

    /* n2: a fatal finding during burn-in drains it; it never passes on its own. */
    hn_brain_set_state(b, 100, 1, HN_NODE_BURNIN, "ops");
    sample(b, 200, "n2", 0, HN_F_REMAP_FAILURE, 1);
    assert_non_null(strstr(drain_outputs(b), "transition n2 burnin->draining"));
    sample(b, 800, "n2", 0, HN_F_GPU_UTIL, 90);
    hn_brain_tick(b, 800);
    assert_null(strstr(drain_outputs(b), "burnin->ready"));
    hn_brain_free(b);
}

/* A silent agent makes its node suspect once per silence; new samples re-arm it. */
static void test_agent_silent(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(2, 0.5);
    hn_brain_node_silent(b, 100, 0, 130);
    hn_brain_node_silent(b, 105, 0, 135);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n1 agent_silent sev=2 gpu=-1: no telemetry from the "
                              "node's agent for 130 s\n"));
    assert_non_null(strstr(t, "transition n1 ready->suspect by agent_silent"));
    assert_null(strstr(t, "135 s"));
    assert_null(strstr(t, "action"));
    sample(b, 110, "n1", 0, HN_F_GPU_UTIL, 90);
    hn_brain_node_silent(b, 300, 0, 190);
    assert_non_null(strstr(drain_outputs(b), "agent_silent"));
    hn_brain_free(b);
}

/* A SKU's own thresholds override the fleet's. */
static void test_sku_rules(void **unused)
{
    (void)unused;
    static const struct hn_sku_rules rules[] = {{"h100", 10, NAN, NAN}};
    struct hn_brain_config cfg;
    hn_brain_config_default(&cfg);
    cfg.sku_rules = rules;
    cfg.nsku_rules = 1;
    struct hn_brain *b = hn_brain_new(&cfg);
    hn_brain_add_node(b, "a1", "r1", "H100", 8, HN_NODE_READY);
    hn_brain_add_node(b, "b1", "r1", "B200", 8, HN_NODE_READY);
    sample(b, 1, "a1", 0, HN_F_RETIRED_DBE, 10);
    sample(b, 1, "b1", 0, HN_F_RETIRED_DBE, 10);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding a1 retired_pages"));
    assert_null(strstr(t, "finding b1"));
    hn_brain_free(b);
}

/* One round where n2 GPU 1 runs `hot` C at the same power as its peers; n3 GPU 2 is as hot
 * but draws 30% more power (so it is not comparable, and not flagged). */
static void heat_round(struct hn_brain *b, double now, double hot)
{
    static const unsigned f[] = {HN_F_GPU_UTIL, HN_F_SM_CLOCK, HN_F_POWER, HN_F_GPU_TEMP};
    for (size_t n = 0; n < hn_brain_node_count(b); n++) {
        for (unsigned g = 0; g < 8; g++) {
            double temp = 68 + (double)((n * 8 + g) % 4);
            double power = 690;
            if (n == 1 && g == 1)
                temp = hot;
            if (n == 2 && g == 2) {
                temp = hot;
                power = 900;
            }
            double v[] = {97, 1980, power, temp};
            assert_int_equal(hn_brain_samples(b, now, (int)n, g, f, v, 4), 0);
        }
    }
    hn_brain_tick(b, now);
}

static void test_hot_at_equal_power(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.25);
    for (int r = 1; r <= 3; r++)
        heat_round(b, r, 85);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n2 hot sev=2 gpu=1: GPU 1: 85 C, "));
    assert_non_null(strstr(t, "hotter than its H100 peers at equal power"));
    assert_non_null(strstr(t, "transition n2 ready->suspect by hot"));
    assert_null(strstr(t, "finding n3 hot"));
    assert_null(strstr(t, "action"));
    /* 4 C warmer is within the 8 C margin. */
    struct hn_brain *b2 = rack_fleet(4, 0.25);
    for (int r = 1; r <= 4; r++)
        heat_round(b2, r, 74);
    assert_string_equal(drain_outputs(b2), "");
    hn_brain_free(b2);
    hn_brain_free(b);
}

/* A node running several jobs: a fatal fault requeues each; a new poll starts the list over. */
static void test_several_jobs_per_node(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 1.0);
    hn_brain_node_job(b, 1, 0, "101");
    hn_brain_node_job(b, 1, 0, "102");
    hn_brain_node_job(b, 1, 0, "101"); /* listed twice: kept once */
    hn_brain_node_job(b, 1, 1, "");
    hn_brain_node_job(b, 1, 1, "103");
    hn_brain_node_job(b, 2, 1, ""); /* the next poll: n2 runs nothing now */
    hn_brain_xid(b, 3, 0, 0, 79);
    hn_brain_xid(b, 3, 1, 0, 79);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "action n1 requeue job=101"));
    assert_non_null(strstr(t, "action n1 requeue job=102"));
    assert_int_equal(count_of(t, "requeue"), 2);
    hn_brain_free(b);
}

/* One round of loaded samples where every GPU reports clock reasons `all`, except GPU 3 of
 * n3, which reports `odd`. */
static void reasons_round(struct hn_brain *b, double now, unsigned all, unsigned odd)
{
    static const unsigned f[] = {HN_F_GPU_UTIL, HN_F_SM_CLOCK, HN_F_POWER, HN_F_CLOCK_REASONS};
    for (size_t n = 0; n < hn_brain_node_count(b); n++) {
        for (unsigned g = 0; g < 8; g++) {
            double v[] = {97, 1980, 690, (double)(n == 2 && g == 3 ? odd : all)};
            assert_int_equal(hn_brain_samples(b, now, (int)n, g, f, v, 4), 0);
        }
    }
    hn_brain_tick(b, now);
}

/* A throttle reason its peers do not have makes a GPU suspect; one they all share (every GPU
 * at its power cap) is the workload and says nothing. */
static void test_throttled_among_peers(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.25);
    reasons_round(b, 1, 0x4, 0x4 | 0x8);
    reasons_round(b, 2, 0x4, 0x4 | 0x8);
    assert_string_equal(drain_outputs(b), "");
    reasons_round(b, 3, 0x4, 0x4 | 0x8);
    const char *t = drain_outputs(b);
    assert_non_null(strstr(t, "finding n3 throttled sev=2 gpu=3: GPU 3: throttled (hw_slowdown) "
                              "while its H100 peers are not\n"));
    assert_non_null(strstr(t, "transition n3 ready->suspect by throttled"));
    assert_null(strstr(t, "action"));

    /* Every GPU at its power cap, one also thermally slowed but only for two samples. */
    struct hn_brain *b2 = rack_fleet(4, 0.25);
    for (int r = 1; r <= 5; r++)
        reasons_round(b2, r, 0x4, r == 2 || r == 3 ? 0x4 | 0x40 : 0x4);
    assert_string_equal(drain_outputs(b2), "");
    /* Half the fleet thermally slowed (a hot aisle): not one part's fault. */
    struct hn_brain *b3 = rack_fleet(4, 0.25);
    static const unsigned f[] = {HN_F_GPU_UTIL, HN_F_SM_CLOCK, HN_F_POWER, HN_F_CLOCK_REASONS};
    for (int r = 1; r <= 4; r++) {
        for (size_t n = 0; n < 4; n++) {
            for (unsigned g = 0; g < 8; g++) {
                double v[] = {97, 1980, 690, n < 2 ? 0x20 : 0};
                assert_int_equal(hn_brain_samples(b3, r, (int)n, g, f, v, 4), 0);
            }
        }
        hn_brain_tick(b3, r);
    }
    assert_string_equal(drain_outputs(b3), "");
    hn_brain_free(b3);
    hn_brain_free(b2);
    hn_brain_free(b);
}

/* Persistence counts samples: ticks without a new sample do not make a laggard, and a GPU
 * whose agent went silent stops being anybody's peer. */
static void test_laggard_needs_fresh_samples(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(4, 0.25);
    load_round(b, 1, 1386);
    for (int t = 2; t < 10; t++)
        hn_brain_tick(b, t);
    assert_string_equal(drain_outputs(b), "");
    /* 61 s later every sample is stale: no peers, nothing evaluated. */
    hn_brain_tick(b, 200);
    hn_brain_tick(b, 201);
    assert_string_equal(drain_outputs(b), "");
    hn_brain_free(b);
}

/* The same script twice gives the same outputs, byte for byte. */
static void run_script(struct hn_brain *b)
{
    hn_brain_node_job(b, 0, 1, "77");
    for (int r = 1; r <= 6; r++)
        load_round(b, r, r > 2 ? 1300 : 1980);
    hn_brain_xid(b, 7, 1, 2, 79);
    hn_brain_xid(b, 8, 2, 2, 48);
    hn_brain_ib_port(b, 9, 3, "mlx5_0/1", 1, 0);
    hn_brain_ib_port(b, 10, 3, "mlx5_0/1", 0, 1);
    hn_brain_approve(b, 11, 2, "carol");
}

static void test_deterministic(void **unused)
{
    (void)unused;
    struct hn_brain *a = rack_fleet(4, 0.25), *b = rack_fleet(4, 0.25);
    run_script(a);
    run_script(b);
    char first[16384];
    snprintf(first, sizeof(first), "%s", drain_outputs(a));
    assert_true(strlen(first) > 200);
    assert_string_equal(first, drain_outputs(b));
    hn_brain_free(a);
    hn_brain_free(b);
}

static void test_fleet_model(void **unused)
{
    (void)unused;
    struct hn_brain *b = rack_fleet(2, 0.25);
    assert_int_equal(hn_brain_add_node(b, "n1", "r1", "H100", 8, HN_NODE_READY), -EEXIST);
    assert_int_equal(hn_brain_add_node(b, "", "r1", "H100", 8, HN_NODE_READY), -EINVAL);
    assert_int_equal(hn_brain_find_node(b, "nope"), -ENOENT);
    assert_int_equal(hn_brain_samples(b, 0, 0, 8, (const unsigned[]){0}, (const double[]){1}, 1),
                     -EINVAL);
    /* Unknown field ids (a newer agent) are ignored. */
    assert_int_equal(hn_brain_samples(b, 0, 0, 0, (const unsigned[]){9999}, (const double[]){1}, 1),
                     0);
    enum hn_node_state s;
    assert_int_equal(hn_node_state_parse("quarantined", &s), 0);
    assert_int_equal(s, HN_NODE_QUARANTINED);
    assert_int_equal(hn_node_state_parse("bogus", &s), -EINVAL);
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatal_xid_drains_and_requeues),
        cmocka_unit_test(test_warning_xid_only_recorded),
        cmocka_unit_test(test_dbe_remap_retired),
        cmocka_unit_test(test_nvlink_pcie_violations),
        cmocka_unit_test(test_ib_gpu_count_lost),
        cmocka_unit_test(test_guard_holds_until_approved),
        cmocka_unit_test(test_operator_drain_resume),
        cmocka_unit_test(test_laggard_becomes_suspect),
        cmocka_unit_test(test_laggard_needs_fresh_samples),
        cmocka_unit_test(test_sku_rules),
        cmocka_unit_test(test_agent_silent),
        cmocka_unit_test(test_burnin_passes),
        cmocka_unit_test(test_hot_at_equal_power),
        cmocka_unit_test(test_throttled_among_peers),
        cmocka_unit_test(test_several_jobs_per_node),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_fleet_model),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

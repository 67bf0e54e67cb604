/*
 * test_ledger.c - the brain's ledger of a job, driven by scripted step reports in virtual time:
 * productive and lost time by cause, interruptions and the restarts that follow them (a wait
 * charged at the interrupted run's size, work the next run redoes, restarts houston did not
 * cause), ETTR, and MFU from reported rates against each SKU's peak.
 */
#include "brain_fleet.h"

static void ledger_counts_failure_and_restart(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    hn_brain_node_job(b, 0, 0, "77");
    hn_brain_node_job(b, 0, 1, "77");
    double t = 1000;
    /* 100 steps of 1 s; a checkpoint of step 50 is reported from step 51 on. */
    for (uint64_t s = 1; s <= 100; s++, t += 1)
        step_all(b, t, "77", 8, s, 1.0, NULL, s > 50 ? 50 : -1);
    struct hn_job_view v;
    job_view(b, "77", &v);
    assert_int_equal(v.l.ranks, 8);
    assert_int_equal(v.nodes, 2);
    assert_int_equal((int)v.l.step, 100);
    assert_int_equal((int)v.l.checkpoint, 50);
    assert_string_equal(v.state, "running");
    assert_near(v.l.productive_s, 100, 1e-6);
    assert_near(v.step_seconds, 1, 1e-9);

    /* Xid 79 on n2 at t=1100: drained, the job requeued, the 50 s since the checkpoint lost. */
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    hn_brain_xid(b, t, 1, 0, 79);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 2);
    job_view(b, "77", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 50, 1e-6);
    assert_near(v.l.productive_s, 50, 1e-6);

    /* The job comes back 120 s later on n1 and n3 from step 51: the wait is lost too. */
    hn_brain_add_node(b, "n3", "r1", "H100", 4, HN_NODE_READY);
    t += 120;
    for (int r = 0; r < 8; r++) {
        struct hn_step_in s = report("77", r, 8, 51, 1.0);
        assert_int_equal(hn_brain_step(b, t, r < 4 ? 0 : 2, &s), 0);
    }
    job_view(b, "77", &v);
    assert_string_equal(v.state, "running");
    /* Lost: 50 s of recomputation, and 1099..1220 minus the new step's own second. */
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 50 + (t - 1.0 - 1099), 1e-6);
    assert_near(v.lost_gpu_h[HN_LOSS_FAILURE], v.l.lost_s[HN_LOSS_FAILURE] * 8 / 3600, 1e-9);
    assert_near(v.l.productive_s, 51, 1e-6);
    double wall = t - (1000 - 1.0);
    assert_near(v.ettr, 51 / wall, 1e-9);
    hn_brain_free(b);
}

/* Job `id` (8 ranks on n1, n2) runs steps 1..300 of 1 s (reporting checkpoint `ckpt` from
 * step 200 on, -1: none), fails on n2 (Xid 79) and comes back 60 s later on n1 and n3 from
 * step `from`. Returns its view then. */
static struct hn_job_view restart_from(const char *id, int64_t ckpt, uint64_t from)
{
    struct hn_brain *b = fleet(2);
    hn_brain_add_node(b, "n3", "r1", "H100", 4, HN_NODE_READY);
    hn_brain_node_job(b, 0, 0, id);
    hn_brain_node_job(b, 0, 1, id);
    double t = 1000;
    for (uint64_t s = 1; s <= 300; s++, t += 1)
        step_all(b, t, id, 8, s, 1.0, NULL, s >= 200 ? ckpt : -1);
    hn_brain_xid(b, t, 1, 0, 79);
    t += 60;
    for (int r = 0; r < 8; r++) {
        struct hn_step_in s = report(id, r, 8, from, 1.0);
        assert_int_equal(hn_brain_step(b, t, r < 4 ? 0 : 2, &s), 0);
    }
    struct hn_job_view v;
    job_view(b, id, &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.l.interruptions, 1);
    hn_brain_free(b);
    return v;
}

/* The work a restart loses is what the next run does again, known from its first step: all
 * of it was charged before when the job reported no checkpoint (`houston tail` reports none),
 * and too little when it restarted from an older checkpoint than the one it reported. */
static void restart_loses_what_the_next_run_redoes(void **state)
{
    (void)state;
    /* The wait, 1299..1360 less the new step's own second, is lost in every case. */
    const double wait = 1360 - 1.0 - 1299;
    /* No checkpoint reported, back from step 251: 50 steps redone (was: all 300 s lost). */
    struct hn_job_view v = restart_from("a", -1, 251);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 50 + wait, 1e-6);
    assert_near(v.l.productive_s, 251, 1e-6);
    /* Checkpoint 250 reported, back from 251: the same, as before. */
    v = restart_from("b", 250, 251);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 50 + wait, 1e-6);
    /* Checkpoint 250 reported, but back from 151 (an older one): 150 steps redone. */
    v = restart_from("c", 250, 151);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 150 + wait, 1e-6);
    assert_near(v.l.productive_s, 151, 1e-6);
    /* No checkpoint, back from step 1: everything. */
    v = restart_from("d", -1, 1);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 300 + wait, 1e-6);
    assert_near(v.l.productive_s, 1, 1e-6);
    /* Back from step 311: steps 301-310 were done after the last report houston saw (lost
     * with the node) and kept; 10 s of the wait were theirs, and nothing is redone. */
    v = restart_from("e", 250, 311);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], wait - 10, 1e-6);
    assert_near(v.l.productive_s, 311, 1e-6);
}

/* While a job is down (requeued, waiting for its next run) it does no model FLOPs: its MFU
 * history has no figure for that time, where it repeated the last run's 50%. */
static void mfu_history_while_down_is_not_the_last_runs(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    hn_brain_node_job(b, 0, 0, "m2");
    double t = 1000;
    for (uint64_t s = 1; s <= 120; s++, t += 1)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("m2", r, 4, s, 1.0);
            in.tflops = 494.7;
            assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
        }
    hn_brain_xid(b, t, 0, 0, 79);
    double down = t;
    for (int k = 0; k < 60; k++) {
        t += 60;
        hn_brain_tick(b, t);
    }
    struct hn_job_view v;
    job_view(b, "m2", &v);
    assert_string_equal(v.state, "restarting");
    assert_near(v.mfu, 0.5, 1e-3); /* the view keeps the last run's */
    size_t before = 0, during = 0;
    for (size_t i = 0; i < v.nseries; i++) {
        if (v.series[i].time <= down)
            before += fabs(v.series[i].mfu - 0.5) < 1e-3;
        else if (!isnan(v.series[i].mfu))
            fail_msg("point at t=%.0f, %.0f s into the outage: mfu %.3f", v.series[i].time,
                     v.series[i].time - down, v.series[i].mfu);
        else
            during++;
    }
    assert_true(before >= 1 && during >= 50);
    hn_brain_free(b);
}

/* A job requeued onto another SKU: its MFU is against the new GPUs' peak, from the new run's
 * rates alone; a job across two SKUs is measured against each one's. */
static void requeued_job_on_another_sku_takes_its_peak(void **state)
{
    (void)state;
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    struct hn_brain *b = hn_brain_new(&cfg);
    assert_int_equal(hn_brain_add_node(b, "h1", "r1", "H100", 4, HN_NODE_READY), 0);
    assert_int_equal(hn_brain_add_node(b, "b1", "r1", "B200", 4, HN_NODE_READY), 1);
    double now = 10;
    for (uint64_t s = 1; s <= 50; s++, now += 2) {
        struct hn_step_in in = report("j1", 0, 1, s, 2.0);
        in.tflops = 494.7; /* half of the H100's 989.4 dense BF16 TFLOP/s */
        assert_int_equal(hn_brain_step(b, now, 0, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "j1", &v);
    assert_near(v.mfu, 0.5, 1e-6);
    /* Restarted from step 1 on the B200 node: 562.5 TFLOP/s is a quarter of its 2250. */
    now += 120;
    for (uint64_t s = 1; s <= 50; s++, now += 1) {
        struct hn_step_in in = report("j1", 0, 1, s, 1.0);
        in.tflops = 562.5;
        assert_int_equal(hn_brain_step(b, now, 1, &in), 0);
    }
    job_view(b, "j1", &v);
    assert_int_equal(v.l.interruptions, 1);
    assert_near(v.mfu, 0.25, 1e-6);
    /* A job across both: each rank at half its own GPU's peak is MFU 0.5 (against the first
     * report's H100 alone, the B200 ranks' 1125 TFLOP/s would make it 0.82). */
    for (uint64_t s = 1; s <= 50; s++, now += 1) {
        for (int r = 0; r < 8; r++) {
            struct hn_step_in in = report("j2", r, 8, s, 1.0);
            in.tflops = r < 4 ? 494.7 : 1125;
            assert_int_equal(hn_brain_step(b, now, r / 4, &in), 0);
        }
    }
    job_view(b, "j2", &v);
    assert_near(v.mfu, 0.5, 1e-6);
    hn_brain_free(b);
}

static void mfu_from_reported_tflops_and_from_flops_per_token(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    for (uint64_t s = 1; s <= 50; s++) {
        struct hn_step_in in = report("j1", 0, 1, s, 2.0);
        in.tflops = 494.7; /* half of the H100's 989.4 dense BF16 TFLOP/s */
        assert_int_equal(hn_brain_step(b, 10.0 + 2.0 * (double)s, 0, &in), 0);
        in = report("j2", 0, 1, s, 2.0);
        in.tokens = 8192;
        in.flops_per_token = 6 * 8e9; /* 4096 tok/s x 4.8e10 = 196.6 TFLOP/s */
        assert_int_equal(hn_brain_step(b, 10.0 + 2.0 * (double)s, 0, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "j1", &v);
    assert_near(v.mfu, 0.5, 1e-6);
    assert_true(v.nseries >= 1);
    job_view(b, "j2", &v);
    assert_near(v.tokens_per_s, 4096, 1e-6);
    assert_near(v.mfu, 4096 * 6 * 8e9 / 989.4e12, 1e-6);
    assert_near(v.effective_mfu, v.mfu * v.ettr, 1e-12);
    hn_brain_free(b);
}

/* The ranks of job id on node 1 (4-7) report `step` of 1 s, received at `at`. */
static void step_on_n2(struct hn_brain *b, double at, const char *id, uint64_t step)
{
    for (int r = 4; r < 8; r++) {
        struct hn_step_in s = report(id, r, 8, step, 1.0);
        assert_int_equal(hn_brain_step(b, at, 1, &s), 0);
    }
}

/* job_first_heard_after_its_node_failed_is_requeued across a controller restart between the
 * removal and the job's first reports (an agent's frame delivered after the restart): the
 * node's last removal is saved with it (hn_node_view's removed_*, schema 10) and restored, so
 * the job is still interrupted and requeued. Before, the removal's time was lost with the
 * restart and the job ran on as if nothing had happened. */
static void job_first_heard_after_a_restore_is_requeued(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    assert_int_equal(hn_brain_node_heard(b, 990.5, 1, 990, 1), 0);
    assert_int_equal(hn_brain_node_heard(b, 1000, 1, 999, 1), 0);
    hn_brain_xid(b, 1000, 1, 0, 79);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 1); /* drain n2 */
    struct hn_node_view nv;
    assert_int_equal(hn_brain_node_view(b, 1, &nv), 0);
    assert_true(nv.removed_at == 1000 && nv.removed_from == 990);
    assert_int_equal(nv.removed_cause, HN_LOSS_FAILURE);
    hn_brain_free(b);

    for (int restored = 0; restored < 2; restored++) {
        b = fleet(2);
        assert_int_equal(hn_brain_restore_node(b, 1, nv.state, nv.drained_by_houston, nv.held,
                                               nv.since, nv.reason),
                         0);
        if (restored)
            assert_int_equal(
                hn_brain_restore_removal(b, 1, nv.removed_at, nv.removed_from, nv.removed_cause),
                0);
        step_on_n2(b, 989, "backlog", 1); /* before the frame at 990: not the node's */
        step_on_n2(b, 999.5, "late", 1);
        struct hn_out o;
        int requeues = find_output(b, HN_OUT_ACTION, NULL, &o);
        struct hn_job_view v;
        job_view(b, "late", &v);
        print_message("%s: %d requeue(s), job late %s\n", restored ? "removal restored" : "not",
                      requeues, v.state);
        if (!restored) { /* what a restart without the saved removal does */
            assert_int_equal(requeues, 0);
            assert_string_equal(v.state, "running");
        } else {
            assert_int_equal(requeues, 1);
            assert_int_equal(o.action.kind, HN_ACT_REQUEUE);
            assert_string_equal(o.action.job, "late");
            assert_string_equal(o.action.node, "n2");
            assert_string_equal(v.state, "restarting");
            assert_true(v.l.lost_s[HN_LOSS_FAILURE] > 0);
        }
        job_view(b, "backlog", &v);
        assert_string_equal(v.state, "running");
        hn_brain_free(b);
    }
    b = fleet(2);
    assert_int_equal(hn_brain_restore_removal(b, 1, 1000, 990, HN_LOSS_NCAUSES), -EINVAL);
    assert_int_equal(hn_brain_restore_removal(b, 2, 1000, 990, HN_LOSS_FAILURE), -EINVAL);
    hn_brain_free(b);
}

/* A job interrupted 100 s after its last report (an Xid on n2) waits for its next run, and
 * the controller restarts. A report of the run it ended, stamped 90 s after that last report
 * (before the requeue) and delivered late, is not its next run: the requeue's time is saved
 * with its ledger (schema 11). Before, the restore took its last report for the requeue's
 * time, and that report started a "next run" that had not begun. */
static void restored_requeue_time_keeps_late_reports_out(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "rq", 0, 1, 20) - 2; /* its last report */
    hn_brain_xid(b, t + 100, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    struct hn_job_ledger saved = *ledger_of(b, "rq");
    assert_true(saved.pending == 1 && saved.requeued_at == t + 100);
    hn_brain_free(b);
    for (int known = 0; known < 2; known++) {
        b = fleet(2);
        struct hn_job_ledger l = saved;
        if (!known)
            l.requeued_at = 0; /* a ledger of schema 10 */
        assert_int_equal(hn_brain_restore_job(b, &l), 0);
        struct hn_step_in in = report("rq", 0, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t + 90, 0, &in), 0);
        struct hn_job_view v;
        job_view(b, "rq", &v);
        print_message("requeue time %s: the late report leaves the job %s\n",
                      known ? "saved" : "not saved", v.state);
        assert_string_equal(v.state, known ? "restarting" : "running");
        hn_brain_free(b);
    }
}

/* A job of 8 ranks interrupted (an Xid on n2) gets an early report of a bigger next run (rank
 * 12 of 16) before that run counts as started: the job grows to 16 ranks, but its wait is
 * still charged at the 8 of the run it interrupted, also after a controller restart (the
 * ledger's charged_ranks, schema 11). Before, the restored wait was charged at 16. */
static void restored_wait_keeps_the_interrupted_runs_size(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "gw", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    struct hn_step_in in = report("gw", 12, 16, 1, 2.0);
    assert_int_equal(hn_brain_step(b, t + 10, 0, &in), 0);
    struct hn_job_view v;
    job_view(b, "gw", &v);
    assert_int_equal(v.l.ranks, 16);
    assert_string_equal(v.state, "restarting");
    struct hn_job_ledger saved = *ledger_of(b, "gw");
    hn_brain_tick(b, t + 1000);
    job_view(b, "gw", &v);
    double before = v.l.lost_gpu_s[HN_LOSS_FAILURE];
    struct hn_brain *again = fleet(2);
    assert_int_equal(hn_brain_restore_job(again, &saved), 0);
    hn_brain_tick(again, t + 1000);
    job_view(again, "gw", &v);
    print_message("wait charged: %.0f GPU-s, %.0f after a restart\n", before,
                  v.l.lost_gpu_s[HN_LOSS_FAILURE]);
    assert_near(v.l.lost_gpu_s[HN_LOSS_FAILURE], before, 1e-6);
    hn_brain_free(again);
    hn_brain_free(b);
}

/* A job houston did not know ran on a node when a fault took the node out (its first reports
 * came in the same frame as the fault, after it in the controller's order, or the scheduler's
 * poll had not listed it yet): its reports received on the node before the removal, and after
 * the collection of the agent's frame before the fault's, interrupt and requeue it as the
 * node's other jobs were, once; the rest of them do not start its next run. Reports received
 * after the removal are not the failed run's, nor those received before that frame. Before,
 * the job stayed "running" where it had failed, and nothing requeued it. */
static void job_first_heard_after_its_node_failed_is_requeued(void **state)
{
    (void)state;
    struct hn_job_view v;
    struct hn_brain *b = fleet(2);
    /* n2's agent collected frames at 990 and 999; the second, with the Xid, came at 1000. */
    assert_int_equal(hn_brain_node_heard(b, 990.5, 1, 990, 1), 0);
    assert_int_equal(hn_brain_node_heard(b, 1000, 1, 999, 1), 0);
    hn_brain_xid(b, 1000, 1, 0, 79);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 1);
    assert_int_equal(o.action.kind, HN_ACT_DRAIN);
    /* Received before the frame at 990 was collected: a backlog of a job that had ended, not
     * one on the node at the fault (it would have been in a frame read before). */
    step_on_n2(b, 989, "backlog", 1);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    job_view(b, "backlog", &v);
    assert_string_equal(v.state, "running");
    step_on_n2(b, 999.5, "late", 1);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 1);
    assert_int_equal(o.action.kind, HN_ACT_REQUEUE);
    assert_string_equal(o.action.job, "late");
    assert_string_equal(o.action.node, "n2");
    job_view(b, "late", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] > 0);
    /* More of the failed run's reports, of ranks not heard before among them: still
     * restarting, no second requeue. */
    step_on_n2(b, 999.9, "late", 2);
    struct hn_step_in s0 = report("late", 0, 8, 2, 1.0);
    assert_int_equal(hn_brain_step(b, 1000, 0, &s0), 0);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    job_view(b, "late", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    /* Received after the removal: not the failed run's. */
    step_on_n2(b, 1000.5, "after", 1);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    job_view(b, "after", &v);
    assert_string_equal(v.state, "running");
    hn_brain_free(b);

    /* A poll that began before the removal (its time) but was applied after it names the job
     * on n2: the removal did not requeue it, so its report does. */
    b = fleet(2);
    hn_brain_xid(b, 1000, 1, 0, 79);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 1); /* drain */
    for (int i = 0; i < 2; i++)
        hn_brain_node_job(b, 999, i, "");
    hn_brain_node_job(b, 999, 1, "slow_poll");
    step_on_n2(b, 999.5, "slow_poll", 1);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 1);
    assert_int_equal(o.action.kind, HN_ACT_REQUEUE);
    assert_string_equal(o.action.job, "slow_poll");
    hn_brain_free(b);

    /* Named on n2 by the poll the removal went by: requeued by the removal, not again. */
    b = fleet(2);
    hn_brain_node_job(b, 990, 1, "named");
    hn_brain_xid(b, 1000, 1, 0, 79);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 2); /* drain, requeue */
    step_on_n2(b, 999.5, "named", 1);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    job_view(b, "named", &v);
    assert_string_equal(v.state, "restarting");
    hn_brain_free(b);
}

/* An operator drains n2 under a job the scheduler lists on n1 and n2, of which only n2's ranks
 * had reported: n1's ranks, heard first after the drain, are the interrupted run going on
 * until the requeue takes it off its nodes, not its next run; once the scheduler lists it
 * waiting, they are. Before, their first report restarted the job's clock, and the real
 * restart counted as a second interruption. */
static void unheard_ranks_of_a_drained_job_wait_for_the_scheduler(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    for (int i = 0; i < 2; i++)
        hn_brain_node_job(b, 990, i, "ops");
    step_on_n2(b, 995, "ops", 1);
    assert_int_equal(hn_brain_drain(b, 1000, 1, "maintenance", "root"), 0);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 2); /* drain, requeue */
    for (int r = 0; r < 4; r++) {
        struct hn_step_in s = report("ops", r, 8, 2, 1.0);
        assert_int_equal(hn_brain_step(b, 1001 + r, 0, &s), 0);
    }
    struct hn_job_view v;
    job_view(b, "ops", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(hn_brain_job_waiting(b, 1050, "ops", HN_WAIT_QUEUED), 0);
    for (int r = 0; r < 4; r++) {
        struct hn_step_in s = report("ops", r, 8, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 1100, 0, &s), 0);
    }
    job_view(b, "ops", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.l.interruptions, 1);
    assert_true(v.l.lost_s[HN_LOSS_OPERATOR] > 0);
    assert_true(v.l.lost_s[HN_LOSS_OTHER] == 0);
    hn_brain_free(b);
}

/* A next run whose first step's time reaches back before the interrupted run's last progress
 * (the clocks of the old and the new nodes differ, or the client counts its start-up in the
 * step): that time was the old run's, charged lost or productive already. Productive and lost
 * time together never exceed the wall time. Before, the overlap was counted twice (by 23 s). */
static void first_step_reaching_back_is_not_counted_twice(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    double t = failed_and_requeued(b, "ov"); /* last progress at t - 2 */
    assert_int_equal(wait_listed_waiting(b, "ov", t, 60, HN_WAIT_QUEUED), 0);
    for (int r = 0; r < 8; r++) { /* 100 s from t + 65: from t - 35 */
        struct hn_step_in s = report("ov", r, 8, 21, 100.0);
        assert_int_equal(hn_brain_step(b, t + 65, r / 4, &s), 0);
    }
    struct hn_job_view v;
    job_view(b, "ov", &v);
    assert_string_equal(v.state, "running");
    double lost = 0;
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        lost += v.l.lost_s[c];
    print_message("wall %.1f s, productive %.1f s, lost %.1f s\n", v.wall_s, v.l.productive_s,
                  lost);
    assert_true(v.l.productive_s + lost <= v.wall_s + 1e-6);
    hn_brain_free(b);
}

/* A report received late (an agent's backlog after an outage: its frames keep the time they
 * were collected, up to an hour back) says nothing of the time now: the wait a restarting job
 * shows lost so far, and its wall time, do not go back with it. */
static void late_report_does_not_take_back_a_wait_shown(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    double t = failed_and_requeued(b, "rq");
    assert_int_equal(wait_listed_waiting(b, "rq", t, 3600, HN_WAIT_QUEUED), 0);
    struct hn_job_view v;
    job_view(b, "rq", &v);
    assert_string_equal(v.state, "restarting");
    double lost = v.l.lost_s[HN_LOSS_FAILURE], gpu_h = v.lost_gpu_h[HN_LOSS_FAILURE],
           wall = v.wall_s;
    assert_true(lost > 3600);
    /* n3's agent delivers its backlog: a step of another job collected 50 minutes ago, then one
     * of rq's interrupted run. */
    struct hn_step_in in = report("bk", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, t + 600, 2, &in), 0);
    job_view(b, "rq", &v);
    print_message("lost to the failure: %.0f s shown, %.0f s after a late report\n", lost,
                  v.l.lost_s[HN_LOSS_FAILURE]);
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] >= lost);
    assert_true(v.lost_gpu_h[HN_LOSS_FAILURE] >= gpu_h);
    assert_true(v.wall_s >= wall);
    in = report("rq", 0, 8, 20, 2.0);
    (void)hn_brain_step(b, t - 1, 0, &in);
    job_view(b, "rq", &v);
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] >= lost);
    assert_true(v.wall_s >= wall);
    hn_brain_free(b);
}

/* A straggler's share of the steps a failure then throws away was charged to the straggler as
 * the steps came; the failure gets the rest of them, so that no second of the job is lost
 * twice (before, 310.8 s were lost of the 253.7 s since the checkpoint) and lost time only
 * grows. */
static void straggler_share_of_lost_work_is_not_charged_twice(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, "sf");
    double slow[16] = {0};
    double t = 0;
    uint64_t s = 1;
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "sf", 16, s, 1.0, NULL, s == 60 ? 60 : -1);
    double at_ckpt = t - 1; /* the checkpoint step's progress */
    slow[9] = 0.27;
    for (; s <= 260; s++, t += 1.27)
        step_all(b, t, "sf", 16, s, 1.0, slow, -1);
    struct hn_job_view v;
    job_view(b, "sf", &v);
    assert_int_equal(v.straggler_rank, 9);
    double strag = v.l.lost_s[HN_LOSS_STRAGGLER];
    assert_true(strag > 30);
    double last = t - 1.27;
    hn_brain_xid(b, t, 0, 0, 79); /* n1 fails: the work since checkpoint 60 is lost */
    job_view(b, "sf", &v);
    double lost = 0;
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        lost += v.l.lost_s[c];
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] == strag);
    assert_near(lost, last - at_ckpt, 1e-6); /* every second since the checkpoint */
    /* Its next run starts where it stopped (a checkpoint at 260 it had not reported): almost
     * nothing was lost after all. The kept steps are productive again; their straggler share
     * stays the straggler's, and the failure gives back the rest, never going below 0 (before,
     * it went to -10.6 s). */
    double productive = v.l.productive_s, failure = v.l.lost_s[HN_LOSS_FAILURE];
    for (int r = 0; r < 16; r++) {
        struct hn_step_in in = report("sf", r, 16, 260, 1.27);
        assert_int_equal(hn_brain_step(b, t + 2, r / 4, &in), 0);
    }
    job_view(b, "sf", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] == strag);
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] >= 0 && v.l.lost_s[HN_LOSS_FAILURE] < failure);
    /* One step redone, at 1.27 s: its time less its straggler share is the failure's redo. */
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] - (t + 2 - 1.27 - last) < 1.27);
    assert_true(v.l.productive_s > productive + 250);
    hn_brain_free(b);

    /* A checkpoint at step 200, complete by step 211, keeps the steps up to it: the failure at
     * 260 gets steps 201..260 less the straggler's 0.27 s of each, 1 s a step. (A restart
     * costs more than the slowdown wastes here: the straggler stays.) */
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.restart_s = 1e9;
    b = fleet_from(&cfg, 4, NULL);
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, "sk");
    t = 0;
    for (s = 1; s <= 60; s++, t += 1)
        step_all(b, t, "sk", 16, s, 1.0, NULL, s == 60 ? 60 : -1);
    double before = 0;
    for (; s <= 260; s++, t += 1.27) {
        step_all(b, t, "sk", 16, s, 1.0, slow, s > 210 ? 200 : 60); /* saved by 211 */
        if (s == 200) {
            job_view(b, "sk", &v);
            before = v.l.lost_s[HN_LOSS_STRAGGLER];
        }
    }
    job_view(b, "sk", &v);
    assert_int_equal(v.straggler_rank, 9);
    /* What the straggler got for steps 201..260 is not the failure's. */
    double share = v.l.lost_s[HN_LOSS_STRAGGLER] - before;
    assert_true(before > 10 && share > 15 && share < 20);
    hn_brain_xid(b, t, 0, 0, 79);
    job_view(b, "sk", &v);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 60 * 1.27 - share, 0.5);
    hn_brain_free(b);
}

static void restart_without_houston_is_other(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    for (uint64_t s = 1; s <= 30; s++)
        step_all(b, (double)s, "r1", 4, s, 1.0, NULL, s >= 20 ? 20 : -1);
    /* 40 s later the job is at step 21 again: it was restarted from checkpoint 20. */
    step_all(b, 70, "r1", 4, 21, 1.0, NULL, 20);
    struct hn_job_view v;
    job_view(b, "r1", &v);
    assert_int_equal(v.l.interruptions, 1);
    assert_near(v.l.lost_s[HN_LOSS_OTHER], 10 + (70 - 1 - 30), 1e-6);
    assert_near(v.l.productive_s, 21, 1e-6);
    hn_brain_free(b);
}

/* GPU-hours a 16-GPU run lost do not shrink when the next run is smaller. */
static void lost_gpu_hours_of_a_bigger_run_stay(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (int n = 0; n < 4; n++)
        hn_brain_node_job(b, 0, n, "g");
    double t = 1000;
    for (uint64_t s = 1; s <= 300; s++, t += 1)
        step_all(b, t, "g", 16, s, 1.0, NULL, s >= 200 ? 200 : -1);
    hn_brain_xid(b, t, 3, 0, 79); /* n4 fails: 100 s of 16 GPUs' work lost */
    struct hn_job_view v;
    job_view(b, "g", &v);
    double at_failure = v.lost_gpu_h[HN_LOSS_FAILURE];
    print_message("at the failure: lost_s=%.0f ranks=%u lost_gpu_h=%.3f\n",
                  v.l.lost_s[HN_LOSS_FAILURE], v.l.ranks, at_failure);
    t += 60;
    for (uint64_t s = 201; s <= 230; s++, t += 1) /* back from ckpt 200 with 4 ranks on n1 */
        step_all(b, t, "g", 4, s, 1.0, NULL, -1);
    job_view(b, "g", &v);
    print_message("after the 4-rank run began: lost_s=%.0f ranks=%u lost_gpu_h=%.3f\n",
                  v.l.lost_s[HN_LOSS_FAILURE], v.l.ranks, v.lost_gpu_h[HN_LOSS_FAILURE]);
    assert_int_equal(v.l.interruptions, 1);
    /* 100 s x 16 GPUs were lost, plus the 60 s wait: never less than at the failure. */
    assert_true(v.lost_gpu_h[HN_LOSS_FAILURE] >= at_failure - 1e-9);
    hn_brain_free(b);
}

/* A 4-rank job (n1) that reported no checkpoint fails (Xid on n1): all 300 s of its
 * 4 GPUs' work charged (1200 GPU-s). Its next run has 8 ranks (n2, n3) and starts at step
 * 301: nothing was lost but the 60 s wait. The 300 s are given back, and the wait charged,
 * at the interrupted run's 4 ranks, not the 8 the first report grew the job to (that made
 * lost GPU time negative). */
static void give_back_after_a_bigger_requeue_uses_the_charge_ranks(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    double t = 1000;
    for (uint64_t s = 1; s <= 300; s++, t += 1)
        step_all(b, t, "gb", 4, s, 1.0, NULL, -1);
    hn_brain_xid(b, t, 0, 0, 79);
    t += 60;
    for (int r = 0; r < 8; r++) {
        struct hn_step_in in = report("gb", r, 8, 301, 1.0);
        assert_int_equal(hn_brain_step(b, t, 1 + r / 4, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "gb", &v);
    print_message("lost_s=%.1f ranks=%u lost_gpu_s=%.1f\n", v.l.lost_s[HN_LOSS_FAILURE], v.l.ranks,
                  v.lost_gpu_h[HN_LOSS_FAILURE] * 3600);
    assert_int_equal(v.l.ranks, 8);
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], 60, 1e-6);
    assert_true(v.lost_gpu_h[HN_LOSS_FAILURE] >= 0);
    /* The interrupted run's size, as requeued_smaller_job_finds_its_straggler has it. */
    assert_near(v.lost_gpu_h[HN_LOSS_FAILURE] * 3600, 60 * 4, 1e-6);
    hn_brain_free(b);
}

/* A 4-rank job restarted without houston with 8 ranks (world 8) from step 1: the old run's
 * lost work counts its 4 GPUs, although the first report grew the job to 8 before it was
 * charged. */
static void restart_without_houston_bigger_charges_the_old_run(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = 10;
    for (uint64_t s = 1; s <= 100; s++, t += 1)
        step_all(b, t, "rb", 4, s, 1.0, NULL, -1);
    t += 30;
    for (uint64_t s = 1; s <= 5; s++, t += 1)
        step_all(b, t, "rb", 8, s, 1.0, NULL, -1);
    struct hn_job_view v;
    job_view(b, "rb", &v);
    print_message("lost_s=%.1f ranks=%u lost_gpu_s=%.1f\n", v.l.lost_s[HN_LOSS_OTHER], v.l.ranks,
                  v.lost_gpu_h[HN_LOSS_OTHER] * 3600);
    assert_int_equal(v.l.interruptions, 1);
    assert_int_equal(v.l.ranks, 8);
    assert_true(v.l.lost_s[HN_LOSS_OTHER] > 100);
    assert_near(v.lost_gpu_h[HN_LOSS_OTHER] * 3600, v.l.lost_s[HN_LOSS_OTHER] * 4, 1e-6);
    hn_brain_free(b);
}

/* Job e: 8 ranks on n1-n2 to step 100 (checkpoint 50), n2 fails, then 3 steps of its next
 * run, 4 ranks (world 4) on n3. Returns the time after them. */
static double eight_then_four(struct hn_brain *b)
{
    double t = 1000;
    for (uint64_t s = 1; s <= 100; s++, t += 1)
        step_all(b, t, "e", 8, s, 1.0, NULL, s >= 50 ? 50 : -1);
    hn_brain_xid(b, t, 1, 0, 79);
    t += 60;
    for (uint64_t s = 51; s <= 53; s++, t += 1)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("e", r, 4, s, 1.0);
            assert_int_equal(hn_brain_step(b, t, 2, &in), 0);
        }
    return t;
}

/* An 8-rank job fails; its next run (world 4 on n3) fails again after 3 steps, before its
 * first row is out: that run's loss and wait are charged at its own 4 GPUs, not 8. */
static void run_interrupted_before_its_first_row_charges_its_own_size(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    hn_brain_add_node(b, "n3", "r1", "H100", 4, HN_NODE_READY);
    hn_brain_add_node(b, "n4", "r1", "H100", 4, HN_NODE_READY);
    double t = eight_then_four(b);
    struct hn_job_view v;
    job_view(b, "e", &v);
    double l1 = v.l.lost_s[HN_LOSS_FAILURE], g1 = v.lost_gpu_h[HN_LOSS_FAILURE] * 3600;
    print_message("run 2 before its failure: ranks=%u lost_s=%.1f gpu_s=%.1f\n", v.l.ranks, l1, g1);
    hn_brain_xid(b, t, 2, 0, 79); /* n3 fails */
    t += 600;
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report("e", r, 4, 51, 1.0);
        assert_int_equal(hn_brain_step(b, t, 3, &in), 0);
    }
    job_view(b, "e", &v);
    double l2 = v.l.lost_s[HN_LOSS_FAILURE] - l1, g2 = v.lost_gpu_h[HN_LOSS_FAILURE] * 3600 - g1;
    print_message("the 4-rank run's loss: %.1f s, %.1f GPU-s (x%.2f)\n", l2, g2, g2 / l2);
    assert_int_equal(v.l.interruptions, 2);
    assert_near(g2, l2 * 4, 1e-6);
    hn_brain_free(b);
}

/* As run_interrupted_before_its_first_row_charges_its_own_size, but the controller restarts
 * while the job waits for its third run: the ledger it restores has the 4-rank run's size, so
 * the wait after the restore is charged at 4. */
static void restored_wait_of_a_run_interrupted_before_its_first_row(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    hn_brain_add_node(b, "n3", "r1", "H100", 4, HN_NODE_READY);
    double t = eight_then_four(b);
    hn_brain_xid(b, t, 2, 0, 79); /* n3 fails */
    struct hn_job_view v;
    job_view(b, "e", &v);
    double l1 = v.l.lost_s[HN_LOSS_FAILURE], g1 = v.l.lost_gpu_s[HN_LOSS_FAILURE];
    hn_brain_free(b);
    b = fleet(4); /* the controller restarts */
    assert_int_equal(hn_brain_restore_job(b, &v.l), 0);
    t += 600;
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report("e", r, 4, 51, 1.0);
        assert_int_equal(hn_brain_step(b, t, 3, &in), 0);
    }
    job_view(b, "e", &v);
    double l2 = v.l.lost_s[HN_LOSS_FAILURE] - l1, g2 = v.l.lost_gpu_s[HN_LOSS_FAILURE] - g1;
    print_message("saved ranks=%u; the wait after the restore: %.1f s, %.1f GPU-s (x%.2f)\n",
                  v.l.ranks, l2, g2, g2 / l2);
    assert_near(g2, l2 * 4, 1e-6);
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ledger_counts_failure_and_restart),
        cmocka_unit_test(job_first_heard_after_its_node_failed_is_requeued),
        cmocka_unit_test(job_first_heard_after_a_restore_is_requeued),
        cmocka_unit_test(restored_requeue_time_keeps_late_reports_out),
        cmocka_unit_test(restored_wait_keeps_the_interrupted_runs_size),
        cmocka_unit_test(unheard_ranks_of_a_drained_job_wait_for_the_scheduler),
        cmocka_unit_test(restart_loses_what_the_next_run_redoes),
        cmocka_unit_test(mfu_from_reported_tflops_and_from_flops_per_token),
        cmocka_unit_test(requeued_job_on_another_sku_takes_its_peak),
        cmocka_unit_test(mfu_history_while_down_is_not_the_last_runs),
        cmocka_unit_test(late_report_does_not_take_back_a_wait_shown),
        cmocka_unit_test(first_step_reaching_back_is_not_counted_twice),
        cmocka_unit_test(straggler_share_of_lost_work_is_not_charged_twice),
        cmocka_unit_test(restart_without_houston_is_other),
        cmocka_unit_test(lost_gpu_hours_of_a_bigger_run_stay),
        cmocka_unit_test(give_back_after_a_bigger_requeue_uses_the_charge_ranks),
        cmocka_unit_test(restart_without_houston_bigger_charges_the_old_run),
        cmocka_unit_test(run_interrupted_before_its_first_row_charges_its_own_size),
        cmocka_unit_test(restored_wait_of_a_run_interrupted_before_its_first_row),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

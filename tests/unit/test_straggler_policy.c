/*
 * test_straggler_policy.c - the straggler policy: whether a drain at the next checkpoint pays
 * (the waste over the time left against the cost of a restart: the job's own restarts and the
 * other jobs on the node), the plan it says, and the drain at the checkpoint.
 */
#include "brain_fleet.h"

/* A straggler worth a drain in a job that has reported no checkpoint: the plan waits for one,
 * and says that none has come, so that nobody waits for a drain a client without ckpt= never
 * lets happen. Before, it said "drain n3 at the next checkpoint" and nothing more, for ever. */
static void straggler_plan_says_no_checkpoint_was_reported(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    hn_brain_node_job(b, 0, 0, "nc");
    double slow[16] = {0};
    double t = 0;
    for (uint64_t s = 1; s <= 60; s++, t += 1)
        step_all(b, t, "nc", 16, s, 1.0, NULL, -1);
    slow[9] = 0.27;
    for (uint64_t s = 61; s <= 90; s++, t += 1.27)
        step_all(b, t, "nc", 16, s, 1.0, slow, -1);
    struct hn_job_view v;
    job_view(b, "nc", &v);
    assert_int_equal(v.straggler_rank, 9);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(v.plan, "; the job has reported no checkpoint yet (ckpt=)"));
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT);
    hn_brain_free(b);
}

static void straggler_suspect_then_drained_at_checkpoint(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    hn_brain_node_job(b, 0, 0, "9");
    double slow[16] = {0};
    double t = 0;
    for (uint64_t s = 1; s <= 60; s++, t += 1)
        step_all(b, t, "9", 16, s, 1.0, NULL, 0);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    /* Rank 9 (n3, GPU 1) computes 30% longer from step 61 on. */
    slow[9] = 0.27; /* 0.9 s of compute + 0.27 */
    struct hn_out o;
    int found = 0;
    uint64_t s = 61;
    for (; s <= 80 && !found; s++, t += 1) {
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
        struct hn_out first;
        int n = 0;
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "straggler") == 0 && !n++)
                first = o;
        }
        if (n) {
            o = first;
            found = 1;
        }
    }
    assert_true(found);
    assert_true(s - 61 <= 6); /* found within 5 steps of the onset (s is one past) */
    assert_string_equal(o.node, "n3");
    assert_int_equal(o.finding.gpu, 1);
    assert_int_equal(o.finding.severity, HN_SEV_SUSPECT);
    assert_string_equal(o.job, "9");
    assert_non_null(strstr(o.finding.evidence, "rank=9"));
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT);
    struct hn_job_view v;
    job_view(b, "9", &v);
    assert_int_equal(v.straggler_rank, 9);
    assert_string_equal(v.straggler_node, "n3");
    assert_true(v.straggler_slowdown > 0.2 && v.straggler_slowdown < 0.45);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    assert_null(v.straggler_phase); /* no phase times reported */
    assert_null(strstr(o.finding.evidence, "phase="));

    /* Slow steps cost the job: part of each step is lost to the straggler. */
    for (int k = 0; k < 5; k++, s++, t += 1.27)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    job_view(b, "9", &v);
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] > 0);
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT); /* not drained before the checkpoint */

    /* The next checkpoint: n3 is drained and the job requeued, charged to the straggler. */
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    step_all(b, t, "9", 16, s, 1.0, slow, (int64_t)s);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 2);
    assert_string_equal(o.node, "n3");
    assert_int_equal(o.action.kind, HN_ACT_DRAIN);
    assert_int_equal(node_state(b, 2), HN_NODE_DRAINING);
    job_view(b, "9", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    hn_brain_free(b);
}

/* Job `id` (16 ranks, 4 a node of n1-n4, steps of 1 s) whose rank 9 (n3) becomes 30% slower at
 * step 61; the scheduler says then that it has `left` seconds to its time limit (negative:
 * none known). Once the straggler is found, `later` seconds of slow steps pass. Returns the
 * time of the next step (*s: its step, slow: the ranks' slowdowns), the job's plan at
 * detection in plan, its outputs read. */
static double straggler_found_with_time_left(struct hn_brain *b, const char *id, double left,
                                             double later, uint64_t *s, double slow[16], char *plan,
                                             size_t size)
{
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, id);
    double t = 0;
    for (*s = 1; *s <= 60; (*s)++, t += 1)
        step_all(b, t, id, 16, *s, 1.0, NULL, 0);
    assert_int_equal(hn_brain_job_time_left(b, t, id, left), 0);
    slow[9] = 0.27;
    struct hn_job_view v;
    for (v.straggler_rank = -1; *s <= 90 && v.straggler_rank < 0; (*s)++, t += 1.27) {
        step_all(b, t, id, 16, *s, 1.0, slow, 0);
        job_view(b, id, &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    snprintf(plan, size, "%s", v.plan);
    for (double end = t + later; t < end; (*s)++, t += 1.27)
        step_all(b, t, id, 16, *s, 1.0, slow, 0);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    return t;
}

/* As straggler_found_with_time_left, then a checkpoint. Returns the job's plan at detection in
 * plan and whether n3 was drained at the checkpoint. */
static int straggler_with_time_left(const char *id, double left, double later, char *plan,
                                    size_t size)
{
    struct hn_brain *b = fleet(4);
    double slow[16] = {0};
    uint64_t s;
    double t = straggler_found_with_time_left(b, id, left, later, &s, slow, plan, size);
    struct hn_job_view v;
    step_all(b, t, id, 16, s, 1.0, slow, (int64_t)s);
    int drained = node_state(b, 2) == HN_NODE_DRAINING;
    job_view(b, id, &v);
    if (!drained) /* the plan says why it kept the node */
        snprintf(plan + strlen(plan), size - strlen(plan), " | %s", v.plan);
    hn_brain_free(b);
    return drained;
}

/* The straggler policy weighs the waste over the job's time left when Slurm gives one (a 30%
 * straggler wastes 23% of it; a restart costs 60 s here), else over straggler-horizon (1 h);
 * and weighs it again at the checkpoint, by when the time left may no longer pay. */
static void straggler_policy_weighs_the_time_left(void **state)
{
    (void)state;
    char plan[600];
    /* No limit known: 3,600 s, 830 s wasted, drained. */
    assert_true(straggler_with_time_left("h1", -1, 5, plan, sizeof(plan)));
    assert_non_null(strstr(plan, "of every 3600 s of the job"));
    /* 200 s left: about 40 s wasted, less than a restart: kept. */
    assert_false(straggler_with_time_left("h2", 200, 5, plan, sizeof(plan)));
    assert_non_null(strstr(plan, "keep n3: the slowdown wastes"));
    assert_non_null(strstr(plan, "s the job has left, less than a restart (60 s)"));
    /* A week left: drained (a 5% straggler would be too: 30,000 s wasted). */
    assert_true(straggler_with_time_left("h3", 7 * 86400, 5, plan, sizeof(plan)));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    /* 400 s left when found (about 70 s wasted: a drain planned), but the checkpoint comes
     * 250 s later, with 30 s to waste: kept then. */
    assert_false(straggler_with_time_left("h4", 400, 250, plan, sizeof(plan)));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(plan, " | keep n3: at checkpoint "));
}

/* Job `other` (`world` ranks, 4 a node from n3 on, listed there) runs `steps` steps of 1 s,
 * each saved (a checkpoint of that step) when `saves`, else none; then job "a" (16 ranks on n1-n4)
 * gets a 30% straggler on n3, whose drain would interrupt `other` too. Returns a's plan. */
static void straggler_beside(const char *other, int world, uint64_t steps, int saves, char *plan,
                             size_t size)
{
    struct hn_brain *b = fleet(4);
    for (int n = 2; n < 4; n++)
        hn_brain_node_job(b, 0, n, other);
    for (uint64_t s = 1; s <= steps; s++) {
        for (int r = 0; r < world; r++) {
            struct hn_step_in in = report(other, r, world, s, 1.0);
            in.checkpoint = saves ? (int64_t)s : -1;
            assert_int_equal(hn_brain_step(b, (double)s - (double)steps, 2 + r / 4, &in), 0);
        }
    }
    double slow[16] = {0};
    uint64_t s;
    (void)straggler_found_with_time_left(b, "a", -1, 0, &s, slow, plan, size);
    hn_brain_free(b);
}

/* A drain of the straggler's node interrupts every job there: the others' restarts and the
 * work they did since their last checkpoint (at their own size, over the straggler's job's 16
 * ranks) add to the cost of the straggler's job's own restart (60 s here), against the 830 s
 * its 30% straggler wastes of every hour. Before, only the job's own restart was weighed. A
 * job the scheduler lists there that reports no steps counts a restart on its GPUs; before,
 * nothing. */
static void straggler_policy_counts_the_other_jobs_on_the_node(void **state)
{
    (void)state;
    char plan[300];
    /* 2 ranks that just saved: (60 + 0) x 2 / 16 = 8 s more; drained. */
    straggler_beside("o1", 2, 100, 1, plan, sizeof(plan));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(plan, ", a restart costs 60 s, and 8 s more for 1 other job there"));
    /* 8 ranks with 2,000 s of work and no checkpoint: (60 + 2000) x 8 / 16 = 1030 s; kept. */
    straggler_beside("o2", 8, 2000, 0, plan, sizeof(plan));
    assert_non_null(strstr(plan, "keep n3: the slowdown wastes "));
    assert_non_null(
        strstr(plan, "less than a restart (60 s, and 1030 s more for 1 other job there)"));
    /* Listed on n3 and n4, with "a", and no step reports: a restart of its share of their 8
     * GPUs, 60 x 4 / 16 = 15 s. */
    straggler_beside("o3", 8, 0, 0, plan, sizeof(plan));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(plan, ", a restart costs 60 s, and 15 s more for 1 other job there (1 "
                                 "without step reports: a restart)"));
}

/* Four jobs the scheduler lists on n3 (4 GPUs) only, none reporting steps: the drain of n3
 * interrupts at most its 4 GPUs' worth of them, 4 x 60 / 16 = 15 s of job "a"'s 16 ranks,
 * whichever way those jobs share it. Before, each counted every GPU of n3, 60 s in all: four
 * times the GPUs the node has (docs/jobs.md says the count is a floor). */
static void unreported_jobs_on_a_node_count_its_gpus_once(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    static const char *const others[] = {"u1", "u2", "u3", "u4"};
    for (int k = 0; k < 4; k++)
        hn_brain_node_job(b, 0, 2, others[k]);
    double slow[16] = {0};
    uint64_t s;
    char plan[HN_DETAIL_MAX];
    (void)straggler_found_with_time_left(b, "a", -1, 0, &s, slow, plan, sizeof(plan));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    double more = -1;
    const char *at = strstr(plan, ", and ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, ", and %lf s more for 4 other jobs there", &more), 1);
    assert_true(more <= 15);
    hn_brain_free(b);
}

/* A job listed on n3 and n4 that reported steps (8 ranks) and now waits for its next run
 * (requeued, starting again there, no step yet) is interrupted by the drain too: it counts as a
 * job without step reports, a restart of its share of the nodes' GPUs (8 / 2, as job "a" is
 * listed there too: 60 x 4 / 16 = 15 s). Before, neither sum counted it. */
static void waiting_job_on_the_node_counts_a_restart(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (int n = 2; n < 4; n++)
        hn_brain_node_job(b, 0, n, "w");
    for (uint64_t k = 1; k <= 10; k++) {
        for (int r = 0; r < 8; r++) {
            struct hn_step_in in = report("w", r, 8, k, 1.0);
            assert_int_equal(hn_brain_step(b, (double)k, 2 + r / 4, &in), 0);
        }
    }
    assert_int_equal(hn_brain_job_waiting(b, 11, "w", HN_WAIT_QUEUED), 0);
    struct hn_job_view wv;
    job_view(b, "w", &wv);
    assert_string_equal(wv.state, "restarting");
    double slow[16] = {0};
    uint64_t s;
    char plan[HN_DETAIL_MAX];
    (void)straggler_found_with_time_left(b, "a", -1, 0, &s, slow, plan, sizeof(plan));
    assert_non_null(strstr(plan, ", and 15 s more for 1 other job there (1 without step "
                                 "reports: a restart)"));
    hn_brain_free(b);
}

/* Job `id` (16 ranks on n1-n4, steps of 1 s, a checkpoint every 10 steps) is requeued by the
 * scheduler n times, each run waiting waits[k] s for its next; after the last, rank 9 (n3)
 * becomes 30% slower. Returns the job's plan once the straggler is found in plan, and its
 * measured restart (l.restart_s) in *took. */
static void straggler_after_restarts(const char *id, const double *waits, int n, char *plan,
                                     size_t size, double *took)
{
    struct hn_brain *b = fleet(4);
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, id);
    double t = 0, slow[16] = {0};
    uint64_t s = 1;
    for (int k = 0; k <= n; k++) {
        for (int m = 0; m < (k < n ? 10 : 60); m++, s++, t += 1)
            step_all(b, t, id, 16, s, 1.0, NULL, (int64_t)((s - 1) / 10 * 10));
        if (k == n)
            break;
        assert_int_equal(hn_brain_job_waiting(b, t, id, HN_WAIT_QUEUED), 0);
        t += waits[k];
        for (int i = 0; i < 4; i++)
            hn_brain_node_job(b, t, i, id);
        s = (s - 1) / 10 * 10 + 1; /* from its last checkpoint */
    }
    *took = ledger_of(b, id)->restart_s;
    slow[9] = 0.27;
    struct hn_job_view v;
    for (v.straggler_rank = -1; v.straggler_rank < 0 && s < 10000; s++, t += 1.27) {
        step_all(b, t, id, 16, s, 1.0, slow, 0);
        job_view(b, id, &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    snprintf(plan, size, "%s", v.plan);
    hn_brain_free(b);
}

/* A restart costs the job what its own restarts took, once one was measured: from the
 * requeue to the next run's first step, queue included (the first step's own second is
 * training). A 30% straggler wastes about 830 s of every hour: more than restart-overhead
 * (60 s here), less than a restart that waited 1,500 s; with later restarts of 100 and 200 s
 * the median (200 s) decides, and the job is drained after all. */
static void straggler_policy_weighs_the_jobs_own_restarts(void **state)
{
    (void)state;
    char plan[300];
    double took;
    straggler_after_restarts("r0", NULL, 0, plan, sizeof(plan), &took);
    assert_true(took == 0);
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(plan, ", a restart costs 60 s"));
    const double once[] = {1500};
    straggler_after_restarts("r1", once, 1, plan, sizeof(plan), &took);
    assert_near(took, 1499, 1e-6);
    assert_non_null(strstr(plan, "keep n3: the slowdown wastes "));
    assert_non_null(strstr(plan, ", less than a restart (1499 s, measured)"));
    const double thrice[] = {1500, 100, 200};
    straggler_after_restarts("r3", thrice, 3, plan, sizeof(plan), &took);
    assert_near(took, 199, 1e-6);
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    assert_non_null(strstr(plan, ", a restart costs 199 s, median of its last 3"));
}

/* The straggler policy's plan is whole however long it gets (docs/jobs.md, "Policy"): on
 * nodes with the longest names the configuration allows, a job that never reported a
 * checkpoint, restarted 5 times (about 2,000 s each), with two weeks left, and another job on
 * the straggler's node. Before, the words of the measured restart pushed the plan and its
 * finding past 255 bytes, and the end of what it says ("(ckpt=)") was cut off; with the other
 * job's words, also after the restart's were made shorter. */
static void straggler_plan_with_measured_restarts_is_whole(void **state)
{
    (void)state;
    char names[4][HN_NAME_MAX];
    const char *name[4];
    for (int i = 0; i < 4; i++) {
        memset(names[i], 'a' + i, HN_NAME_MAX - 1);
        names[i][HN_NAME_MAX - 1] = '\0';
        name[i] = names[i];
    }
    struct hn_brain *b = fleet_named(4, 0, name);
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, "lp");
    double t = 0, slow[16] = {0};
    uint64_t s = 1;
    for (int k = 0; k < 5; k++) {
        for (; s <= 10; s++, t += 1)
            step_all(b, t, "lp", 16, s, 1.0, NULL, -1);
        assert_int_equal(hn_brain_job_waiting(b, t, "lp", HN_WAIT_QUEUED), 0);
        t += 2000 + k;
        for (int i = 0; i < 4; i++)
            hn_brain_node_job(b, t, i, "lp");
        s = 1; /* no checkpoint: from the start */
    }
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "lp", 16, s, 1.0, NULL, -1);
    assert_int_equal(hn_brain_job_time_left(b, t, "lp", 14 * 86400), 0);
    hn_brain_node_job(b, t, 2, "lo"); /* 2 ranks that save every step */
    for (uint64_t k = 1; k <= 20; k++) {
        for (int r = 0; r < 2; r++) {
            struct hn_step_in in = report("lo", r, 2, k, 1.0);
            in.checkpoint = (int64_t)k;
            assert_int_equal(hn_brain_step(b, t - 20 + (double)k, 2, &in), 0);
        }
    }
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    slow[9] = 0.27;
    struct hn_job_view v;
    for (v.straggler_rank = -1; v.straggler_rank < 0 && s < 200; s++, t += 1.27) {
        step_all(b, t, "lp", 16, s, 1.0, slow, -1);
        job_view(b, "lp", &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    assert_near(v.l.restart_s, 2001, 1e-6);
    assert_non_null(strstr(v.plan, "drain ccc"));
    assert_non_null(strstr(v.plan, " s more for 1 other job there"));
    static const char end[] = "; the job has reported no checkpoint yet (ckpt=)";
    size_t n = strlen(v.plan);
    assert_true(n > strlen(end) && strcmp(v.plan + n - strlen(end), end) == 0);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler_policy", &o), 1);
    assert_string_equal(o.finding.detail, v.plan);
    hn_brain_free(b);
}

/* After houston drains the straggler's node at a checkpoint and the job runs again, the plan
 * says what was done, not that it will drain that node. Before, the old plan stayed. */
static void plan_says_what_was_done_after_a_restart(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    double slow[16] = {0};
    uint64_t s;
    double t = rank9_slow(b, "pl", slow, &s);
    struct hn_job_view v;
    job_view(b, "pl", &v);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    step_all(b, t, "pl", 16, s, 1.0, slow, (int64_t)s); /* the checkpoint: n3 drained */
    assert_int_equal(node_state(b, 2), HN_NODE_DRAINING);
    t += 100;
    for (uint64_t k = s + 1; k < s + 20; k++, t += 1) /* the next run, n3's ranks on n5 */
        for (int r = 0; r < 16; r++) {
            struct hn_step_in in = report("pl", r, 16, k, 1.0);
            in.comm_s = 0.1;
            assert_int_equal(hn_brain_step(b, t, r / 4 == 2 ? 4 : r / 4, &in), 0);
        }
    job_view(b, "pl", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.straggler_rank, -1);
    if (strncmp(v.plan, "drained n3 at checkpoint 81: rank 9 was ", 40) != 0)
        fail_msg("plan: %s", v.plan);
    hn_brain_free(b);

    /* A restart houston did not cause before the planned drain: nothing is planned any more. */
    b = fleet(5);
    memset(slow, 0, sizeof(slow));
    t = rank9_slow(b, "pr", slow, &s);
    job_view(b, "pr", &v);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    step_all(b, t, "pr", 16, 70, 1.0, NULL, 0); /* back to step 70: restarted */
    job_view(b, "pr", &v);
    assert_int_equal(v.l.interruptions, 1);
    assert_string_equal(v.plan, "");
    hn_brain_free(b);
}

/* A straggler found small and kept (5% with 1,000 s left: 47 s wasted, less than a 60 s
 * restart) whose GPU then gets worse, to 50% slower: the job goes by its figure now, its
 * share of each step and its plan (made again once, a drain at the next checkpoint), and the
 * checkpoint replaces the node. Before, the detector's figure at detection stayed for good:
 * the plan kept the node, the straggler was charged 5% and nothing was ever drained. */
static void straggler_that_gets_worse_is_weighed_again(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (int i = 0; i < 4; i++)
        hn_brain_node_job(b, 0, i, "gw");
    double slow[16] = {0};
    double t = 0;
    uint64_t s = 1;
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "gw", 16, s, 1.0, NULL, 0);
    assert_int_equal(hn_brain_job_time_left(b, t, "gw", 1000), 0);
    slow[9] = 0.045; /* rank 9 (n3): 5% */
    struct hn_job_view v;
    for (v.straggler_rank = -1; s <= 120 && v.straggler_rank < 0; s++, t += 1.05) {
        step_all(b, t, "gw", 16, s, 1.0, slow, 0);
        job_view(b, "gw", &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    assert_non_null(strstr(v.plan, "keep n3: the slowdown wastes"));
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    double lost = v.l.lost_s[HN_LOSS_STRAGGLER];
    slow[9] = 0.45; /* 50% */
    int policies = 0;
    for (int k = 0; k < 100; k++, s++, t += 1.5) {
        step_all(b, t, "gw", 16, s, 1.0, slow, 0);
        policies += find_output(b, HN_OUT_FINDING, "straggler_policy", NULL);
    }
    assert_int_equal(policies, 1); /* made again once, no flapping */
    job_view(b, "gw", &v);
    assert_true(v.straggler_slowdown > 0.4 && v.straggler_slowdown < 0.6);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    /* 100 steps of 1.5 s, a third of each (0.5 / 1.5) lost to it, less the ones before its
     * figure caught up: at 5% it got 7 s. */
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] - lost > 30);
    step_all(b, t, "gw", 16, s, 1.0, slow, (int64_t)s); /* a checkpoint */
    assert_int_equal(node_state(b, 2), HN_NODE_DRAINING);
    hn_brain_free(b);
}

/* Job id's straggler, rank 9, had its node n3 drained at a checkpoint, but the scheduler
 * refused the requeue: the job runs on there, rank 9 still slow, for 150 steps. Returns the
 * time of the next step (*s the last one). */
static double straggler_on_draining_node(struct hn_brain *b, const char *id, uint64_t *s)
{
    double slow[16] = {0};
    double t = rank9_slow(b, id, slow, s);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    step_all(b, t, id, 16, *s, 1.0, slow, (int64_t)*s); /* the checkpoint: n3 drained */
    assert_int_equal(node_state(b, 2), HN_NODE_DRAINING);
    struct hn_out o;
    int requeue = 0;
    while (!requeue && hn_brain_poll(b, &o))
        requeue = o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE;
    assert_true(requeue);
    hn_brain_action_done(b, t + 1, &o.action, 0, "Requeue of the job not possible");
    t += 2;
    for (int k = 0; k < 150; k++, t += 1.3)
        step_all(b, t, id, 16, ++*s, 1.0, slow, 0);
    return t;
}

/* As straggler_on_a_node_draining_already_is_not_drained_again, but when the operator puts n3
 * back its drain no longer pays (30 s left): the plan is made again all the same and says so.
 * Before, a decision that stayed "no drain" left the plan saying n3 was draining for good. */
static void straggler_node_back_in_service_keeps_with_a_new_plan(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    uint64_t s;
    double t = straggler_on_draining_node(b, "rf", &s);
    struct hn_job_view v;
    job_view(b, "rf", &v);
    if (!strstr(v.plan, "none: n3 is draining already"))
        fail_msg("plan: %s", v.plan);
    assert_int_equal(hn_brain_job_time_left(b, t, "rf", 30), 0);
    assert_int_equal(hn_brain_resume(b, t, 2, "op"), 0);
    double slow[16] = {0};
    slow[9] = 0.27;
    for (int k = 0; k < 3; k++, t += 1.3)
        step_all(b, t, "rf", 16, ++s, 1.0, slow, 0);
    job_view(b, "rf", &v);
    if (!strstr(v.plan, "keep n3"))
        fail_msg("plan after n3 was resumed: %s", v.plan);
    hn_brain_free(b);
}

/* The straggler's node was drained at a checkpoint but the scheduler refused the requeue: the
 * job runs on there, rank 9 still slow, and its next run finds it again. Its node is out of
 * service already, so nothing is planned and nothing claimed. Before, the plan said "drain n3
 * at the next checkpoint", and after it "drained n3 at checkpoint ..." though nothing was
 * done. */
static void straggler_on_a_node_draining_already_is_not_drained_again(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    uint64_t s;
    double t = straggler_on_draining_node(b, "rf", &s);
    double slow[16] = {0};
    slow[9] = 0.27;
    struct hn_job_view v;
    job_view(b, "rf", &v);
    assert_int_equal(v.straggler_rank, 9);
    if (!strstr(v.plan, "none: n3 is draining already"))
        fail_msg("plan: %s", v.plan);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    s++;
    step_all(b, t, "rf", 16, s, 1.0, slow, (int64_t)s); /* the next checkpoint */
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    job_view(b, "rf", &v);
    assert_string_equal(v.state, "running");
    assert_null(strstr(v.plan, "drained"));
    assert_non_null(strstr(v.plan, "n3 is draining already"));
    /* An operator puts n3 back in service (a requeue moved nothing off it): rank 9 is still
     * slow there, and the plan is made again. Before, it stayed "none" for good. */
    assert_int_equal(hn_brain_resume(b, t, 2, "op"), 0);
    for (int k = 0; k < 3; k++, t += 1.3)
        step_all(b, t, "rf", 16, ++s, 1.0, slow, 0);
    job_view(b, "rf", &v);
    if (!strstr(v.plan, "drain n3 at the next checkpoint"))
        fail_msg("plan after n3 was resumed: %s", v.plan);
    hn_brain_free(b);
}

/* A drain planned with 400 s left (about 70 s to waste against a 60 s restart); 250 s later,
 * as the checkpoint comes, an Xid on n3 has the guard hold n3 (n5's failure took the one
 * removal it allows). With 30 s left to waste the drain no longer pays: kept, as without the
 * hold. Before, a held node skipped that sum: a fatal "replaced at checkpoint" finding, held
 * for an operator to approve a drain that no longer paid. */
static void held_node_at_the_checkpoint_still_weighs_the_drain(void **state)
{
    (void)state;
    struct hn_brain *b = fleet_removal_spent(5, 0); /* on n5 */
    double slow[16] = {0};
    uint64_t s;
    char plan[HN_DETAIL_MAX];
    double t = straggler_found_with_time_left(b, "hk", 400, 250, &s, slow, plan, sizeof(plan));
    assert_non_null(strstr(plan, "drain n3 at the next checkpoint"));
    struct hn_job_view v;
    hn_brain_xid(b, t, 2, 1, 79);
    struct hn_node_view nv;
    hn_brain_node_view(b, 2, &nv);
    assert_true(nv.held);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    step_all(b, t, "hk", 16, s, 1.0, slow, (int64_t)s); /* the checkpoint */
    struct hn_out o;
    int fatal = 0;
    while (hn_brain_poll(b, &o))
        fatal += o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "straggler") == 0 &&
                 o.finding.severity == HN_SEV_FATAL;
    assert_int_equal(fatal, 0);
    job_view(b, "hk", &v);
    if (!strstr(v.plan, "keep n3: at checkpoint"))
        fail_msg("plan: %s", v.plan);
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(straggler_suspect_then_drained_at_checkpoint),
        cmocka_unit_test(straggler_plan_says_no_checkpoint_was_reported),
        cmocka_unit_test(straggler_policy_weighs_the_time_left),
        cmocka_unit_test(straggler_policy_weighs_the_jobs_own_restarts),
        cmocka_unit_test(straggler_policy_counts_the_other_jobs_on_the_node),
        cmocka_unit_test(unreported_jobs_on_a_node_count_its_gpus_once),
        cmocka_unit_test(waiting_job_on_the_node_counts_a_restart),
        cmocka_unit_test(straggler_plan_with_measured_restarts_is_whole),
        cmocka_unit_test(plan_says_what_was_done_after_a_restart),
        cmocka_unit_test(straggler_that_gets_worse_is_weighed_again),
        cmocka_unit_test(straggler_on_a_node_draining_already_is_not_drained_again),
        cmocka_unit_test(straggler_node_back_in_service_keeps_with_a_new_plan),
        cmocka_unit_test(held_node_at_the_checkpoint_still_weighs_the_drain),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

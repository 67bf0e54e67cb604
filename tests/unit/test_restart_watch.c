/*
 * test_restart_watch.c - a job houston requeued is watched until its next run steps: waiting in
 * the queue is no hang, a start that hangs is; a requeue the scheduler refuses is told, and the
 * job goes on (and may hang, or announce a save) where it runs; restarts are measured whole,
 * also across a controller restart.
 */
#include "brain_fleet.h"

/* A job requeued after a failure is watched until its next run steps: waiting in the queue
 * is no hang however long; running again without a step for hang-pause-max (a start that
 * hangs: a bad node of the new allocation, a stuck rendezvous) is one, requeued again, and
 * the time from that start on is the hang's; a job the scheduler no longer lists at all
 * (cancelled while it waited) has ended and its wall time stops. Before, a requeued job
 * stayed "restarting" for ever, unchecked. */
static void requeued_job_is_watched_until_it_steps(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "rq", 0, 1, 20); /* steps of 2 s, checkpoint 20 */
    hn_brain_xid(b, t, 1, 0, 79);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 2); /* drain n2, requeue */
    hn_brain_set_state(b, t, 1, HN_NODE_READY, "test");           /* replaced, back in service */
    struct hn_job_view v;
    job_view(b, "rq", &v);
    assert_string_equal(v.state, "restarting");
    /* An hour in the queue: no hang, not ended; the hour is shown lost to the failure as it
     * goes (docs/jobs.md: lost so far). */
    assert_int_equal(wait_listed_waiting(b, "rq", t, 3600, HN_WAIT_QUEUED), 0);
    job_view(b, "rq", &v);
    assert_string_equal(v.state, "restarting");
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] > 3600 && v.l.lost_s[HN_LOSS_FAILURE] < 3640);
    assert_near(v.lost_gpu_h[HN_LOSS_FAILURE], v.l.lost_s[HN_LOSS_FAILURE] * 8 / 3600, 1e-9);
    /* Its limit is the restart's (hang-pause-max), not its running rhythm's 120 s. */
    assert_true(v.hang_limit_s == 2700);
    t += 3600;
    /* It runs again from t + 10 but sends no step: a hang after 2,700 s, and requeued. */
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "rq", t, 2700, NULL, NULL), 0);
    /* Until the hang is found, the whole wait is shown lost to the failure; the hang then
     * takes the time from the start on (docs/jobs.md): the failure's figure goes down. */
    job_view(b, "rq", &v);
    double before_hang = v.l.lost_s[HN_LOSS_FAILURE];
    assert_true(before_hang > 3600 + 2700);
    assert_int_equal(wait_as(b, "rq", t + 2700, 20, NULL, NULL), 1);
    assert_non_null(strstr(last_hang, "runs again"));
    assert_int_equal(requeues_seen, 1);
    job_view(b, "rq", &v);
    assert_string_equal(v.state, "hung");
    assert_int_equal(v.l.interruptions, 2);
    /* Lost so far: the failure's from the last progress to the start (t + 10), 3,600 s and
     * more; the hang's from that start to now (the last tick, t + 2,720), charged for good
     * with the next run's first step, or when the job ends. */
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] > 3600 && v.l.lost_s[HN_LOSS_FAILURE] < 3640);
    assert_near(v.l.lost_s[HN_LOSS_HANG], 2710, 1e-6);
    assert_near(v.lost_gpu_h[HN_LOSS_HANG], 2710.0 * 8 / 3600, 1e-9);
    /* The next run steps from 21 at t + 3000: the 2,990 s since that start are the hang's. */
    double back = t + 3000;
    for (int r = 0; r < 8; r++) {
        struct hn_step_in s = report("rq", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, back, r / 4, &s), 0);
    }
    job_view(b, "rq", &v);
    assert_string_equal(v.state, "running");
    assert_near(v.l.lost_s[HN_LOSS_HANG], back - 2.0 - (t + 10), 1e-6);
    hn_brain_free(b);

    /* Cancelled while it waited: the next poll does not list it, and it has ended. */
    b = fleet(2);
    t = run_steps(b, "cx", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    assert_int_equal(wait_listed_waiting(b, "cx", t, 600, HN_WAIT_QUEUED), 0);
    job_view(b, "cx", &v);
    double stopped = v.l.interrupted_at, failed = ledger_of(b, "cx")->lost_s[HN_LOSS_FAILURE];
    for (int i = 0; i < 2; i++)
        hn_brain_node_job(b, t + 610, i, "");
    hn_brain_tick(b, t + 610);
    job_view(b, "cx", &v);
    assert_string_equal(v.state, "ended");
    /* Its wait, from its last progress to the last poll that listed it (t + 600), is the
     * failure's; so is its wall time up to then. */
    double wall = v.wall_s;
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], failed + t + 600 - stopped, 1e-6);
    assert_near(wall, t + 600 - v.l.first_seen, 1e-6);
    hn_brain_tick(b, t + 100000);
    job_view(b, "cx", &v);
    assert_true(v.wall_s == wall); /* it no longer grows */
    assert_near(v.l.lost_s[HN_LOSS_FAILURE], failed + t + 600 - stopped, 1e-6);
    hn_brain_free(b);

    /* Suspended for an hour (listed, not running): no hang; running again, the clock starts
     * then (its limit after 20 steps of 2 s is hang-min, 120 s), and the hour is not a pause
     * of its own to allow next time. */
    b = fleet(2);
    t = run_steps(b, "sp", 0, 1, 20);
    assert_int_equal(wait_listed_waiting(b, "sp", t, 3600, HN_WAIT_SUSPENDED), 0);
    job_view(b, "sp", &v);
    assert_string_equal(v.state, "waiting");
    assert_true(isnan(v.hang_limit_s) && isnan(v.no_progress_s)); /* not checked meanwhile */
    assert_int_equal(wait_as(b, "sp", t + 3600, 110, NULL, NULL), 0);
    job_view(b, "sp", &v);
    assert_string_equal(v.state, "running");
    t = run_steps(b, "sp", t + 3710, 21, 40);
    job_view(b, "sp", &v);
    assert_true(v.l.pause_s < 10 && v.hang_limit_s == 120);
    assert_int_equal(v.l.interruptions, 0);
    assert_int_equal(wait_as(b, "sp", t, 110, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "sp", t + 110, 20, NULL, NULL), 1);
    hn_brain_free(b);

    /* Requeued by Slurm, not houston (listed pending while houston saw it run): an
     * interruption of cause other, and its next run has hang-pause-max to step, not the 120 s
     * of its steps (a false hang while it loaded its checkpoint, before). */
    b = fleet(2);
    t = run_steps(b, "sq", 0, 1, 20);
    assert_int_equal(wait_listed_waiting(b, "sq", t, 600, HN_WAIT_QUEUED), 0);
    job_view(b, "sq", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    assert_int_equal(wait_as(b, "sq", t + 600, 2690, NULL, NULL), 0);
    for (int r = 0; r < 8; r++) {
        struct hn_step_in s = report("sq", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t + 3300, r / 4, &s), 0);
    }
    job_view(b, "sq", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.lost_s[HN_LOSS_OTHER] > 3200 && v.l.lost_s[HN_LOSS_FAILURE] == 0);
    hn_brain_free(b);

    /* A requeue the scheduler never acted on (the job stays listed running): no hang at start
     * however long, it is not a new run. */
    b = fleet(2);
    t = failed_and_requeued(b, "nw");
    assert_int_equal(wait_as(b, "nw", t, 9000, NULL, NULL), 0);
    hn_brain_free(b);

    /* Hung at start again and again: requeued twice, then reported and left alone. */
    b = fleet(2);
    t = failed_and_requeued(b, "lp");
    requeues_seen = 0;
    int hangs = 0;
    for (int round = 0; round < 4; round++, t += 2730) {
        assert_int_equal(wait_listed_waiting(b, "lp", t, 10, HN_WAIT_QUEUED), 0);
        hangs += wait_as(b, "lp", t + 10, 2720, NULL, NULL);
        if (round == 2)
            assert_non_null(strstr(last_hang, "not requeued again"));
    }
    assert_int_equal(hangs, 3);
    assert_int_equal(requeues_seen, 2);
    job_view(b, "lp", &v);
    assert_int_equal(v.l.interruptions, 3);
    for (int k = 0; k < HN_LOSS_NCAUSES; k++)
        assert_true(v.l.lost_s[k] >= 0);
    hn_brain_free(b);
}

/* Job id (8 ranks on n1 and n2, steps 1-20 of 2 s) is interrupted by an Xid 79 on n2, and the
 * scheduler refuses its requeue at t + 30: it goes on where it runs. Returns t, the Xid's
 * time. */
static double refused_requeue(struct hn_brain *b, const char *id)
{
    double t = run_steps(b, id, 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    struct hn_out o;
    while (hn_brain_poll(b, &o)) {
        if (o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE)
            hn_brain_action_done(b, t + 30, &o.action, 0, "Job is not requeueable");
    }
    return t;
}

/* A job interrupted for its node (Xid 79 on n2) whose requeue the scheduler refuses goes on
 * where it runs; listed running, its agents heard, and never stepping again, it is hung
 * (docs/jobs.md, "Hangs"), once. Before, it stayed "restarting" for ever, unchecked. */
static void refused_requeue_after_a_node_fault_can_hang(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "nf");
    struct hn_job_view v;
    job_view(b, "nf", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.requeue_failed, 1);
    /* Within its limit (120 s: steps of 2 s), no hang; past it, one. */
    assert_int_equal(wait_as(b, "nf", t + 30, 60, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "nf", t + 90, 3600, NULL, NULL), 1);
    job_view(b, "nf", &v);
    assert_string_equal(v.state, "hung");
    /* It steps again: it runs on. */
    run_steps(b, "nf", t + 3700, 21, 25);
    job_view(b, "nf", &v);
    assert_string_equal(v.state, "running");
    hn_brain_free(b);
}

/* A job whose requeue failed, and that then hangs where it runs, is requeued again: the
 * scheduler may take it this time (it did not answer before, say). A second refusal is told,
 * now that the job stays hung; a requeue taken has its restart watched like any other. Before,
 * no requeue was tried (the hang named no culprit), the job stayed hung with only the first
 * warning's "it goes on where it runs", and a requeue that a drain issued after all left its
 * restart unwatched. */
static void refused_requeue_job_that_hangs_is_requeued_again(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "ra");
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "ra", t + 30, 3600, NULL, NULL), 1);
    assert_int_equal(requeues_seen, 1);
    struct hn_job_view v;
    job_view(b, "ra", &v);
    assert_string_equal(v.state, "hung");
    assert_int_equal(v.l.requeue_failed, 0);
    assert_true(v.hang_limit_s == 2700); /* a restart's */
    struct hn_action a = {.kind = HN_ACT_REQUEUE};
    snprintf(a.job, sizeof(a.job), "ra");
    hn_brain_action_done(b, t + 3631, &a, 0, "Job is not requeueable");
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "requeue_failed", &o), 1);
    assert_non_null(strstr(o.finding.detail, "it stays hung where it runs"));
    /* Left to people from then on: no hang, no requeue. */
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "ra", t + 3631, 3600, NULL, NULL), 0);
    assert_int_equal(requeues_seen, 0);
    job_view(b, "ra", &v);
    assert_string_equal(v.state, "hung");
    hn_brain_free(b);

    /* Taken this time: listed waiting, then running, its new run never steps: a hang at start,
     * requeued again. */
    b = fleet(2);
    t = refused_requeue(b, "rb");
    assert_int_equal(wait_as(b, "rb", t + 30, 3600, NULL, NULL), 1);
    assert_int_equal(wait_listed_waiting(b, "rb", t + 3630, 60, HN_WAIT_QUEUED), 0);
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "rb", t + 3690, 3000, NULL, NULL), 1);
    assert_non_null(strstr(last_hang, "runs again"));
    assert_int_equal(requeues_seen, 1);
    hn_brain_free(b);
}

/* A job on n1 (ranks 0-3) and n2 (4-7) is requeued after an Xid on n2 and runs again on n3
 * (ranks 0-3) and n4 (4-7); n3's ranks' reports do not reach houston (its agent sends frames,
 * not their steps), n4's do. The new run hangs with no culprit and is requeued alone, by a
 * node the scheduler lists it on: the executor skips a requeue by a node the job left. Before,
 * it went by rank 0's node of the old run, n1, and the job stayed hung where it ran. */
static void hang_requeue_goes_by_a_node_of_the_job(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    double t = run_steps(b, "mv", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    for (int n = 0; n < 4; n++)
        hn_brain_node_job(b, t + 10, n, "");
    assert_int_equal(hn_brain_job_waiting(b, t + 10, "mv", HN_WAIT_QUEUED), 0);
    hn_brain_tick(b, t + 10);
    double u = t + 100; /* the new run on n3 and n4, from checkpoint 10 */
    for (uint64_t s = 11; s <= 30; s++, u += 2) {
        for (int n = 0; n < 4; n++)
            hn_brain_node_job(b, u, n, n >= 2 ? "mv" : "");
        for (int n = 2; n < 4; n++)
            assert_int_equal(hn_brain_node_heard(b, u, n, u, 1), 0);
        for (int r = 4; r < 8; r++) {
            struct hn_step_in in = report("mv", r, 8, s, 2.0);
            assert_int_equal(hn_brain_step(b, u, 3, &in), 0);
        }
        hn_brain_tick(b, u);
    }
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    struct hn_out o;
    int hangs = 0;
    char by[HN_NAME_MAX] = "";
    for (double k = 10; k <= 200; k += 10) {
        for (int n = 0; n < 4; n++)
            hn_brain_node_job(b, u + k, n, n >= 2 ? "mv" : "");
        for (int n = 2; n < 4; n++)
            assert_int_equal(hn_brain_node_heard(b, u + k, n, u + k, 1), 0);
        hn_brain_tick(b, u + k);
        while (hn_brain_poll(b, &o)) {
            hangs += o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0;
            if (o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE)
                snprintf(by, sizeof(by), "%s", o.action.node);
        }
    }
    assert_int_equal(hangs, 1);
    if (strcmp(by, "n3") != 0 && strcmp(by, "n4") != 0)
        fail_msg("the requeue went by '%s', not a node of the job (n3, n4)", by);
    hn_brain_free(b);
}

/* The scheduler refuses to requeue a hung job (`sbatch --no-requeue`): houston says so once,
 * with the scheduler's words, and the job stays hung, its time the hang's, until it steps again
 * (then it runs on) or ends. A job interrupted for its node goes on where it runs. Before, a
 * refused requeue was only a failed action in the log. */
static void refused_requeue_is_reported(void **state)
{
    (void)state;
    static const int only_n1[2] = {1, 0};
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "nr", 0, 1, 20);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    /* n2's ranks stop at 20 while n1's report 21: n2 is drained and the job requeued. */
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report("nr", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
    }
    struct hn_action requeue = {0};
    struct hn_out o;
    int hangs = 0;
    for (double k = 10; k <= 130; k += 10) {
        for (int i = 0; i < 2; i++) {
            hn_brain_node_job(b, t + k, i, "nr");
            assert_int_equal(hn_brain_node_heard(b, t + k, i, t + k, 1), 0);
        }
        hn_brain_tick(b, t + k);
        while (hn_brain_poll(b, &o)) {
            hangs += o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0;
            if (o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE)
                requeue = o.action;
        }
    }
    assert_int_equal(hangs, 1);
    assert_string_equal(requeue.job, "nr");
    static const char said[] =
        "scontrol: error: Requested operation is presently disabled for job nr";
    hn_brain_action_done(b, t + 131, &requeue, 0, said);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "requeue_failed", &o), 1);
    assert_int_equal(o.finding.severity, HN_SEV_WARN);
    assert_string_equal(o.job, "nr");
    assert_non_null(strstr(o.finding.detail, "it stays hung where it runs"));
    assert_non_null(strstr(o.finding.evidence, said));
    assert_non_null(strstr(o.finding.evidence, "hung=1"));
    hn_brain_action_done(b, t + 132, &requeue, 0, said); /* a second refusal: said once */
    assert_int_equal(find_output(b, HN_OUT_FINDING, "requeue_failed", NULL), 0);
    /* A drain that failed, or a requeue that worked, says nothing. */
    struct hn_action drain = requeue;
    drain.kind = HN_ACT_DRAIN;
    hn_brain_action_done(b, t + 133, &drain, 0, "no");
    hn_brain_action_done(b, t + 133, &requeue, 1, "requeued");
    assert_int_equal(find_output(b, HN_OUT_FINDING, NULL, NULL), 0);
    struct hn_job_view v;
    job_view(b, "nr", &v);
    assert_string_equal(v.state, "hung");
    /* An hour later it is still hung (no hang at start: it never left its nodes); the hour
     * is the hang's once it steps again. */
    assert_int_equal(wait_as(b, "nr", t + 130, 3600, only_n1, NULL), 0);
    job_view(b, "nr", &v);
    assert_string_equal(v.state, "hung");
    /* So it stays after a controller restart: not taken for a new run that hung at start. */
    struct hn_job_ledger saved = *hn_brain_job_ledger(b, 0);
    assert_true(saved.requeue_failed == 1 && saved.hung == 1);
    struct hn_brain *again = fleet(2);
    assert_int_equal(hn_brain_restore_job(again, &saved), 0);
    requeues_seen = 0;
    assert_int_equal(wait_as(again, "nr", t + 3730, 6000, NULL, NULL), 0);
    assert_int_equal(requeues_seen, 0);
    job_view(again, "nr", &v);
    assert_string_equal(v.state, "hung");
    hn_brain_free(again);
    double back = t + 3800;
    for (int r = 0; r < 8; r++) {
        struct hn_step_in in = report("nr", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, back, r / 4, &in), 0);
    }
    job_view(b, "nr", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.lost_s[HN_LOSS_HANG] > 3700);
    hn_brain_free(b);

    /* Interrupted by a failure of n2 (Xid 79): it goes on where it runs. */
    b = fleet(2);
    t = run_steps(b, "nf", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    int found = 0, refused = 0;
    while (hn_brain_poll(b, &o)) {
        if (o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE) {
            /* not attempted (the job is gone, say): nothing to say */
            hn_brain_action_done(b, t + 30, &o.action, -1, "Invalid job id specified");
            hn_brain_action_done(b, t + 30, &o.action, 0, "Job is not requeueable");
            found++;
        }
        if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "requeue_failed") == 0) {
            refused++;
            assert_non_null(strstr(o.finding.evidence, "Job is not requeueable"));
            assert_non_null(strstr(o.finding.detail, "houston could not requeue job nf: "
                                                     "it goes on where it runs"));
        }
    }
    assert_int_equal(found, 1);
    assert_int_equal(refused, 1);
    /* Its next steps, right after the refusal, are its run going on: the work since the
     * checkpoint was not lost after all, only the wait. Before, steps for a minute were
     * dropped and their time charged to the failure. */
    struct hn_job_view v2;
    job_view(b, "nf", &v2);
    double productive = v2.l.productive_s, failure = v2.l.lost_s[HN_LOSS_FAILURE];
    run_steps(b, "nf", t + 32, 21, 30);
    job_view(b, "nf", &v2);
    assert_string_equal(v2.state, "running");
    assert_int_equal((int)v2.l.step, 30);
    assert_int_equal(v2.l.interruptions, 1);
    /* Lost: from its last progress (t - 2) to its first step after the refusal (t + 30). */
    assert_near(v2.l.lost_s[HN_LOSS_FAILURE], 32, 1e-6);
    assert_true(failure == 0);
    assert_near(v2.l.productive_s, productive + 20, 1e-6);
    hn_brain_free(b);
}

/* A restored ledger whose interruption is later than the next run's first step (the
 * controller's clock went back across the restart, or a damaged database): the new run's
 * progress is not put in the future, so it is still checked for hangs. */
static void next_run_after_a_future_interruption_can_hang(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "fu", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    struct hn_job_ledger l = *hn_brain_job_ledger(b, (size_t)hn_brain_find_job(b, "fu"));
    assert_int_equal(l.pending, 1);
    hn_brain_free(b);

    l.interrupted_at = t + 1e6;
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    t = run_steps(b, "fu", t + 1000, 11, 11); /* its next run, from checkpoint 10 */
    struct hn_job_view v;
    job_view(b, "fu", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(wait_as(b, "fu", t, 3000, NULL, NULL), 1);
    hn_brain_free(b);
}

/* A job waiting for its next run when the controller stopped still is after the restart (its
 * ledger says so): the scheduler listing it queued is not a second interruption, and the time
 * since its last progress goes to the cause of the first. */
static void restored_restarting_job_stays_so(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "rs", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    size_t i = (size_t)hn_brain_find_job(b, "rs");
    struct hn_job_ledger l = *hn_brain_job_ledger(b, i);
    assert_true(l.pending == 1 && l.pending_cause == HN_LOSS_FAILURE && l.interrupted_at > 0);
    hn_brain_free(b);

    b = fleet(2); /* the controller restarted with that ledger */
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    struct hn_job_view v;
    job_view(b, "rs", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(wait_listed_waiting(b, "rs", t + 100, 600, HN_WAIT_QUEUED), 0);
    job_view(b, "rs", &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    for (int r = 0; r < 8; r++) {
        struct hn_step_in s = report("rs", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t + 1000, r / 4, &s), 0);
    }
    job_view(b, "rs", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] > 990 && v.l.lost_s[HN_LOSS_OTHER] == 0);
    assert_int_equal(hn_brain_job_ledger(b, 0)->pending, 0);
    /* A poll that began before that first step (squeue runs a while) still lists it queued:
     * stale, not a second interruption. */
    assert_int_equal(hn_brain_job_waiting(b, t + 999, "rs", HN_WAIT_QUEUED), 0);
    hn_brain_tick(b, t + 1001);
    job_view(b, "rs", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.l.interruptions, 1);
    hn_brain_free(b);

    /* A requeued job one poll missed (taken as ended) that the next lists running again is
     * watched for a hang at start all the same. */
    b = fleet(2);
    t = failed_and_requeued(b, "ms");
    for (int n = 0; n < 2; n++)
        hn_brain_node_job(b, t + 5, n, "");
    hn_brain_tick(b, t + 5);
    job_view(b, "ms", &v);
    assert_string_equal(v.state, "ended");
    assert_int_equal(wait_as(b, "ms", t + 5, 2700, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "ms", t + 2705, 30, NULL, NULL), 1);
    hn_brain_free(b);

    /* The same with a controller restart in between: its saved ledger still waits for its next
     * run. Before, the restore dropped that: the job stayed "ended" while the scheduler ran it,
     * unwatched, and the wait until its next run's first step was charged to no cause. */
    b = fleet(2);
    t = failed_and_requeued(b, "mr");
    for (int n = 0; n < 2; n++)
        hn_brain_node_job(b, t + 5, n, "");
    hn_brain_tick(b, t + 5);
    struct hn_job_ledger gone = *ledger_of(b, "mr");
    assert_true(gone.ended && gone.pending);
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &gone), 0);
    assert_int_equal(wait_as(b, "mr", t + 5, 2700, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "mr", t + 2705, 30, NULL, NULL), 1);
    assert_non_null(strstr(last_hang, "runs again"));
    run_steps(b, "mr", t + 3000, 21, 22);
    job_view(b, "mr", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.l.interruptions, 2);
    assert_true(v.l.lost_s[HN_LOSS_FAILURE] + v.l.lost_s[HN_LOSS_HANG] > 2990);
    hn_brain_free(b);

    /* A job left alone after three hangs at start stays hung and left alone across a restart
     * (before, the count was not saved: it was requeued twice more after each restart). */
    b = fleet(2);
    t = failed_and_requeued(b, "la");
    for (int round = 0; round < 3; round++, t += 2730) {
        assert_int_equal(wait_listed_waiting(b, "la", t, 10, HN_WAIT_QUEUED), 0);
        assert_int_equal(wait_as(b, "la", t + 10, 2720, NULL, NULL), 1);
    }
    assert_non_null(strstr(last_hang, "not requeued again"));
    struct hn_job_ledger saved = *hn_brain_job_ledger(b, 0);
    assert_true(saved.hung == 1 && saved.restart_hangs == 3);
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &saved), 0);
    job_view(b, "la", &v);
    assert_string_equal(v.state, "hung");
    requeues_seen = 0;
    assert_int_equal(wait_listed_waiting(b, "la", t, 10, HN_WAIT_QUEUED), 0);
    assert_int_equal(wait_as(b, "la", t + 10, 6000, NULL, NULL), 0);
    assert_int_equal(requeues_seen, 0);
    job_view(b, "la", &v);
    assert_string_equal(v.state, "hung");
    /* It steps at last: running, and the count starts again. */
    for (int r = 0; r < 8; r++) {
        struct hn_step_in in = report("la", r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t + 6020, r / 4, &in), 0);
    }
    job_view(b, "la", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.hung == 0 && v.l.restart_hangs == 0);
    hn_brain_free(b);
}

/* A job whose requeue failed runs on where it is, and may announce a checkpoint save as any
 * running job: the notice is taken (a 600 s save is no hang). Before, every notice of a job
 * waiting for its next run was ignored, so the save was a hang at 120 s. */
static void refused_requeue_job_may_announce_a_save(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "ns");
    struct hn_step_in p = pause_in("ns", 0, 20, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t + 31, 0, &p), 0);
    struct hn_job_view v;
    job_view(b, "ns", &v);
    assert_non_null(v.pause);
    assert_string_equal(v.pause, "checkpoint");
    assert_true(v.hang_limit_s == 2700);
    assert_int_equal(wait_as(b, "ns", t + 30, 600, NULL, NULL), 0);
    job_view(b, "ns", &v);
    assert_string_equal(v.state, "restarting"); /* requeue_failed: runs on, not hung */
    assert_int_equal(v.l.requeue_failed, 1);
    run_steps(b, "ns", t + 640, 21, 22); /* back from the save */
    job_view(b, "ns", &v);
    assert_string_equal(v.state, "running");
    assert_null(v.pause);
    hn_brain_free(b);
}

/* A job whose requeue failed announced a save that never ended: a hang, which ends the pause.
 * Its next run (from the checkpoint before) is not in that pause: the hung job and the new
 * run show none, and the new run's hang says nothing of a declared pause. */
static void refused_requeue_job_hung_in_a_save_is_paused_no_more(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "nh");
    struct hn_step_in p = pause_in("nh", 0, 20, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t + 31, 0, &p), 0);
    assert_int_equal(wait_as(b, "nh", t + 30, 3000, NULL, NULL), 1);
    assert_non_null(strstr(last_hang, "a declared checkpoint pause"));
    struct hn_job_view v;
    job_view(b, "nh", &v);
    assert_string_equal(v.state, "hung");
    assert_null(v.pause);
    t = run_steps(b, "nh", t + 3100, 11, 11); /* its next run, from checkpoint 10 */
    job_view(b, "nh", &v);
    assert_string_equal(v.state, "running");
    assert_null(v.pause);
    assert_int_equal(wait_as(b, "nh", t, 3000, NULL, NULL), 1);
    assert_null(strstr(last_hang, "declared"));
    hn_brain_free(b);
}

/* A restart that hung at start is measured from the interruption's requeue (Xid 79 at t),
 * through houston's requeue again at the hang (t + 2,780), to the next run's first step (at
 * t + 3,200; 2 s, its typical one): 3,198 s, also with a controller restart after that second
 * requeue. Before, the restored job measured from the second requeue (418 s): a controller
 * restart changed what the policy weighs. */
static void restart_that_hung_at_start_is_measured_whole_after_a_restore(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "hs", 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    hn_brain_set_state(b, t, 1, HN_NODE_READY, "test"); /* replaced, back in service */
    assert_int_equal(wait_listed_waiting(b, "hs", t, 60, HN_WAIT_QUEUED), 0);
    assert_int_equal(wait_as(b, "hs", t + 60, 2800, NULL, NULL), 1); /* at start: runs again */
    assert_non_null(strstr(last_hang, "runs again"));
    struct hn_job_ledger saved = *ledger_of(b, "hs");
    assert_true(saved.pending && saved.restart_hangs == 1 && saved.requeued_at > t + 2700);
    struct hn_brain *again = fleet(2);
    assert_int_equal(hn_brain_restore_job(again, &saved), 0);
    struct hn_brain *each[2] = {b, again};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(wait_listed_waiting(each[k], "hs", t + 2860, 60, HN_WAIT_QUEUED), 0);
        run_steps(each[k], "hs", t + 3200, 11, 11); /* its next run, from checkpoint 10 */
        struct hn_job_view v;
        job_view(each[k], "hs", &v);
        assert_string_equal(v.state, "running");
        assert_near(v.l.restart_s, 3198, 1e-6);
        hn_brain_free(each[k]);
    }
}

/* A job whose requeue failed announced a save, and then someone requeued it by hand (listed
 * waiting): that run and its pause are over, its next run is in none. */
static void refused_requeue_job_requeued_by_hand_is_paused_no_more(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "nq");
    struct hn_step_in p = pause_in("nq", 0, 20, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t + 31, 0, &p), 0);
    assert_int_equal(hn_brain_job_waiting(b, t + 100, "nq", HN_WAIT_QUEUED), 0);
    struct hn_job_view v;
    job_view(b, "nq", &v);
    assert_int_equal(v.l.requeue_failed, 0);
    assert_null(v.pause);
    run_steps(b, "nq", t + 200, 11, 11); /* its next run, from checkpoint 10 */
    job_view(b, "nq", &v);
    assert_string_equal(v.state, "running");
    assert_null(v.pause);
    hn_brain_free(b);
}

/* A hung job whose requeue the scheduler refuses stays hung where it runs until someone
 * requeues it by hand (listed waiting, at t + 7200 here); its restart is measured from that
 * requeue, which moved it: its next run's first step (2 s, its typical one) comes 100 s
 * later, so the restart took 98 s; also with a controller restart in between. Before, it was
 * measured from houston's refused requeue, with the hour the job sat hung counted as
 * restart (7,178 s). */
static void refused_requeue_job_requeued_by_hand_measures_its_restart_from_then(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = refused_requeue(b, "rh");
    assert_int_equal(wait_as(b, "rh", t + 30, 3600, NULL, NULL), 1); /* hung, requeued again */
    struct hn_action a = {.kind = HN_ACT_REQUEUE};
    snprintf(a.job, sizeof(a.job), "rh");
    hn_brain_action_done(b, t + 3631, &a, 0, "Job is not requeueable");
    assert_int_equal(hn_brain_job_waiting(b, t + 7200, "rh", HN_WAIT_QUEUED), 0);
    struct hn_job_ledger saved = *ledger_of(b, "rh");
    struct hn_brain *again = fleet(2);
    assert_int_equal(hn_brain_restore_job(again, &saved), 0);
    struct hn_brain *each[2] = {b, again};
    for (int k = 0; k < 2; k++) {
        run_steps(each[k], "rh", t + 7300, 11, 11); /* its next run, from checkpoint 10 */
        struct hn_job_view v;
        job_view(each[k], "rh", &v);
        assert_string_equal(v.state, "running");
        assert_near(v.l.restart_s, 98, 1e-6);
        hn_brain_free(each[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requeued_job_is_watched_until_it_steps),
        cmocka_unit_test(refused_requeue_is_reported),
        cmocka_unit_test(refused_requeue_after_a_node_fault_can_hang),
        cmocka_unit_test(refused_requeue_job_that_hangs_is_requeued_again),
        cmocka_unit_test(refused_requeue_job_may_announce_a_save),
        cmocka_unit_test(refused_requeue_job_hung_in_a_save_is_paused_no_more),
        cmocka_unit_test(refused_requeue_job_requeued_by_hand_is_paused_no_more),
        cmocka_unit_test(refused_requeue_job_requeued_by_hand_measures_its_restart_from_then),
        cmocka_unit_test(restart_that_hung_at_start_is_measured_whole_after_a_restore),
        cmocka_unit_test(hang_requeue_goes_by_a_node_of_the_job),
        cmocka_unit_test(restored_restarting_job_stays_so),
        cmocka_unit_test(next_run_after_a_future_interruption_can_hang),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

/*
 * test_hangs.c - hangs: the limit a job's rhythm and its pauses set (declared checkpoint saves
 * included), the node blamed (ranks that stopped, GPUs gone idle in a collective, an agent
 * gone silent), and what is no hang (agents unheard, a backlog, a job that ended).
 */
#include "brain_fleet.h"

/* A collective hang: all 8 ranks of job `id` (4 on n1, 4 on n2) stop at step 20; during the
 * hang n1's GPUs run at util[0] % and n2's at util[1] % (NaN: no sample during the hang).
 * Returns the hang findings; the first one's node (or "") in node and its detail in detail. */
static int collective_hang(const char *id, const double util[2], char *node, char *detail)
{
    struct hn_brain *b = fleet(2);
    double t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        hn_brain_node_job(b, t, 0, id);
        hn_brain_node_job(b, t, 1, id);
        step_all(b, t, id, 8, s, 2.0, NULL, 10);
        hn_brain_tick(b, t);
    }
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    static const unsigned field[1] = {HN_F_GPU_UTIL};
    int hangs = 0;
    node[0] = detail[0] = '\0';
    struct hn_out o;
    for (double k = 10; k <= 130; k += 10) {
        for (int n = 0; n < 2; n++) {
            hn_brain_node_job(b, t + k, n, id);
            assert_int_equal(hn_brain_node_heard(b, t + k, n, t + k, 1), 0);
            for (unsigned g = 0; g < 4 && !isnan(util[n]); g++)
                assert_int_equal(hn_brain_samples(b, t + k, n, g, field, &util[n], 1), 0);
        }
        hn_brain_tick(b, t + k);
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0 && !hangs++) {
                snprintf(node, HN_NAME_MAX, "%s", o.node);
                snprintf(detail, HN_DETAIL_MAX, "%s", o.finding.detail);
            }
        }
    }
    hn_brain_free(b);
    return hangs;
}

/* In a collective hang no node's ranks lag; the node whose GPUs went idle while the others
 * spin in NCCL's kernels is where the hang is (a crashed or stuck process), and is drained
 * like a lagging node. Busy everywhere, idle everywhere, or no sample: no culprit. */
static void collective_hang_blames_the_idle_node(void **state)
{
    (void)state;
    char node[HN_NAME_MAX], detail[HN_DETAIL_MAX];
    static const double idle_n2[2] = {100, 0}, busy[2] = {100, 100}, idle[2] = {0, 0},
                        none[2] = {NAN, NAN}, half[2] = {100, 30};
    assert_int_equal(collective_hang("c1", idle_n2, node, detail), 1);
    assert_string_equal(node, "n2");
    assert_non_null(strstr(detail, "; its GPUs idle on n2 while the others wait in a collective"));
    assert_int_equal(collective_hang("c2", busy, node, detail), 1);
    assert_string_equal(node, "");
    assert_int_equal(collective_hang("c3", idle, node, detail), 1);
    assert_string_equal(node, "");
    assert_int_equal(collective_hang("c4", none, node, detail), 1);
    assert_string_equal(node, "");
    assert_int_equal(collective_hang("c5", half, node, detail), 1);
    assert_string_equal(node, "");
}

/* Job `job` on nodes name[0] and name[1] (NULL: n1, n2), whose ranks on the second stop. */
static void hang_case(const char *job, const char *const *name)
{
    struct hn_brain *b = fleet_named(2, 0, name);
    double t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        hn_brain_node_job(b, t, 0, job);
        hn_brain_node_job(b, t, 1, job);
        step_all(b, t, job, 8, s, 2.0, NULL, 10);
        hn_brain_tick(b, t);
    }
    /* Step 21: only n1's ranks report; n2's ranks never finish it. */
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report(job, r, 8, 21, 2.0);
        assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
    }
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    /* 2 s steps: the limit is max(hang_min 120 s, 10 x 2 s) = 120 s. Both agents still
     * send frames (without progress). */
    for (double k = 10; k <= 110; k += 10) {
        hn_brain_node_job(b, t + k, 0, job);
        hn_brain_node_job(b, t + k, 1, job);
        assert_int_equal(hn_brain_node_heard(b, t + k, 0, t + k, 1), 0);
        assert_int_equal(hn_brain_node_heard(b, t + k, 1, t + k, 1), 0);
        hn_brain_tick(b, t + k);
    }
    assert_int_equal(find_output(b, HN_OUT_FINDING, "hang", NULL), 0);
    hn_brain_node_job(b, t + 130, 0, job);
    hn_brain_node_job(b, t + 130, 1, job);
    assert_int_equal(hn_brain_node_heard(b, t + 130, 0, t + 130, 1), 0);
    hn_brain_tick(b, t + 130);
    struct hn_out o;
    struct hn_out first = {0};
    int hangs = 0, drains = 0, requeues = 0;
    while (hn_brain_poll(b, &o)) {
        if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0 && !hangs++)
            first = o;
        drains += o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_DRAIN;
        requeues += o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE;
    }
    assert_int_equal(hangs, 1);
    assert_string_equal(first.node, name ? name[1] : "n2");
    /* the whole text, however long the job id and node name (the longest a client and the
     * configuration allow) */
    char want[256];
    snprintf(want, sizeof(want), "; ranks behind on %s", first.node);
    size_t dl = strlen(first.finding.detail), wl = strlen(want);
    assert_true(dl > wl && strcmp(first.finding.detail + dl - wl, want) == 0);
    assert_string_equal(first.job, job);
    assert_int_equal(drains, 1);
    assert_int_equal(requeues, 1);
    struct hn_job_view v;
    job_view(b, job, &v);
    assert_int_equal(v.l.interruptions, 1);
    /* Lost to the hang: the 20 s since checkpoint 10 (steps 11-21 less one not yet
     * counted) at least. */
    assert_true(v.l.lost_s[HN_LOSS_HANG] >= 20);
    hn_brain_free(b);
}

static void hang_drains_the_node_whose_ranks_stopped(void **state)
{
    (void)state;
    hang_case("h1", NULL);
    char job[HN_STEP_JOB_MAX + 1], n1[HN_NAME_MAX], n2[HN_NAME_MAX];
    memset(job, 'j', sizeof(job) - 1);
    job[sizeof(job) - 1] = '\0';
    memset(n1, 'a', sizeof(n1) - 1);
    n1[sizeof(n1) - 1] = '\0';
    memcpy(n2, n1, sizeof(n2));
    n2[0] = 'b';
    const char *const names[] = {n1, n2};
    hang_case(job, names);
}

/* A node that dies (its agent silent) stops its ranks at the same step as the others, which
 * wait for it in a collective: no node lags and the dead one sends no GPU samples, so no
 * culprit was named and the job was requeued, maybe onto the same node. The one node whose
 * agent went silent while the others' frames kept arriving is the culprit, drained; also when
 * the job hangs at start (none of its new ranks reported). Silent for less than half the
 * limit, two nodes silent, or the others back from an outage of their own: no culprit. */
static void hang_blames_the_node_gone_silent(void **state)
{
    (void)state;
    static const int only_n1[2] = {1, 0}, only_n2[2] = {0, 1};
    for (int dead = 0; dead < 2; dead++) {
        struct hn_brain *b = fleet(2);
        double t = run_steps(b, "sl", 0, 1, 20);
        (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
        assert_int_equal(wait_as(b, "sl", t, 110, dead ? only_n1 : only_n2, NULL), 0);
        assert_int_equal(wait_as(b, "sl", t + 110, 20, dead ? only_n1 : only_n2, NULL), 1);
        char want[96];
        snprintf(want, sizeof(want), "; %s's agent silent for 122 s", dead ? "n2" : "n1");
        size_t hl = strlen(last_hang), wl = strlen(want);
        assert_true(hl > wl && strcmp(last_hang + hl - wl, want) == 0);
        assert_int_equal(node_state(b, dead), HN_NODE_DRAINING);
        assert_int_equal(node_state(b, !dead), HN_NODE_READY);
        struct hn_job_view v;
        job_view(b, "sl", &v);
        assert_int_equal(v.l.interruptions, 1);
        hn_brain_free(b);
    }

    /* Silent for the last 50 s only (< half the 120 s limit): not named. */
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "sh", 0, 1, 20);
    assert_int_equal(wait_as(b, "sh", t, 80, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "sh", t + 80, 50, only_n1, NULL), 1);
    assert_null(strstr(last_hang, "silent"));
    assert_int_equal(node_state(b, 1), HN_NODE_READY);
    hn_brain_free(b);

    /* Both cut off from the controller for 112 s (no hang_unseen yet: the limit had not
     * passed), then n1's frames arrive again and n2's not yet: n1 was not heard live while n2
     * went silent, so n2 is not blamed for what may be the controller's own outage. */
    static const int none[2] = {0, 0};
    b = fleet(2);
    t = run_steps(b, "ou", 0, 1, 20);
    assert_int_equal(wait_as(b, "ou", t, 100, none, NULL), 0);
    assert_int_equal(wait_as(b, "ou", t + 100, 40, only_n1, NULL), 1);
    assert_null(strstr(last_hang, "silent"));
    assert_int_equal(node_state(b, 1), HN_NODE_READY);
    hn_brain_free(b);

    /* Three nodes, two silent: neither named. */
    b = fleet(3);
    t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        for (int i = 0; i < 3; i++) {
            hn_brain_node_job(b, t, i, "s3");
            assert_int_equal(hn_brain_node_heard(b, t, i, t, 1), 0);
        }
        for (int r = 0; r < 12; r++) {
            struct hn_step_in in = report("s3", r, 12, s, 2.0);
            assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
        }
        hn_brain_tick(b, t);
    }
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    int hangs = 0;
    struct hn_out o;
    for (double k = 10; k <= 130; k += 10) {
        for (int i = 0; i < 3; i++)
            hn_brain_node_job(b, t + k, i, "s3");
        assert_int_equal(hn_brain_node_heard(b, t + k, 0, t + k, 1), 0);
        hn_brain_tick(b, t + k);
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0) {
                hangs++;
                assert_string_equal(o.node, "");
                assert_non_null(strstr(o.finding.evidence, "culprit=unknown"));
            }
            assert_false(o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_DRAIN);
        }
    }
    assert_int_equal(hangs, 1);
    hn_brain_free(b);

    /* A hang at start with n2's agent silent since the job ran again: n2 is named and
     * drained, and the job requeued once. */
    b = fleet(2);
    t = failed_and_requeued(b, "st");
    assert_int_equal(wait_listed_waiting(b, "st", t, 10, HN_WAIT_QUEUED), 0);
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "st", t + 10, 2690, only_n1, NULL), 0);
    assert_int_equal(wait_as(b, "st", t + 2700, 30, only_n1, NULL), 1);
    assert_non_null(strstr(last_hang, "runs again"));
    assert_non_null(strstr(last_hang, "; n2's agent silent for"));
    assert_int_equal(requeues_seen, 1);
    assert_int_equal(node_state(b, 1), HN_NODE_DRAINING);
    hn_brain_free(b);

    /* The same, with the blast-radius guard holding n2 (the failure used up its one
     * removal): n2 is named each time but not drained, so the cap of two requeues holds;
     * at the third it is made suspect and the job left alone. */
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.guard_fraction = 0.01;
    b = fleet_from(&cfg, 2, NULL);
    t = failed_and_requeued(b, "gd");
    requeues_seen = 0;
    hangs = 0;
    for (int round = 0; round < 4; round++, t += 2740) {
        assert_int_equal(wait_listed_waiting(b, "gd", t, 10, HN_WAIT_QUEUED), 0);
        hangs += wait_as(b, "gd", t + 10, 2730, only_n1, NULL);
        assert_non_null(strstr(last_hang, "; n2's agent silent for"));
    }
    assert_int_equal(hangs, 3);
    assert_int_equal(requeues_seen, 2);
    assert_non_null(strstr(last_hang, "not requeued again"));
    assert_int_equal(node_state(b, 1), HN_NODE_SUSPECT);
    hn_brain_free(b);

    /* After a controller restart, a node whose agent has not been heard since: "never
     * heard". */
    b = fleet(2);
    struct hn_job_ledger l = {.ranks = 8,
                              .first_seen = 10,
                              .last_report = 20,
                              .step = 9,
                              .checkpoint = 5,
                              .productive_s = 10,
                              .pending = 1,
                              .pending_cause = HN_LOSS_FAILURE,
                              .interrupted_at = 20};
    snprintf(l.id, sizeof(l.id), "nh");
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    assert_int_equal(wait_as(b, "nh", 20, 2730, only_n1, NULL), 1);
    assert_non_null(strstr(last_hang, "runs again"));
    assert_non_null(strstr(last_hang, "; n2's agent never heard"));
    hn_brain_free(b);
}

/* The controller cut off from the job's nodes sees no progress, and no frames either: that is
 * not a hang (a requeue of every job in the fleet), and it says so once. The agents' backlog
 * decides when they are back: progress in it is progress, a whole limit of frames without
 * any is a hang. */
static void hang_needs_its_agents_heard(void **state)
{
    (void)state;
    static const int none[2] = {0, 0};
    for (int hung = 0; hung <= 1; hung++) {
        struct hn_brain *b = fleet(2);
        double t = run_steps(b, "u1", 0, 1, 20);
        (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
        double last = t - 2; /* the last progress */
        int unseen = 0;
        assert_int_equal(wait_as(b, "u1", t, 600, none, &unseen), 0);
        assert_int_equal(unseen, 1);
        struct hn_job_view v;
        job_view(b, "u1", &v);
        assert_string_equal(v.state, "running");
        assert_int_equal(v.l.interruptions, 0);
        assert_near(v.no_progress_s, 602, 1e-9);
        assert_true(v.hang_limit_s == 120);
        /* Back: both agents send what they collected since, a frame every 2 s of their time,
         * 20 frames a second of the controller's, ticks in between. */
        double now = t + 600, c = last;
        int hangs = 0;
        uint64_t step = 21;
        struct hn_out o;
        for (; c < t + 600; c += 2, now += 0.05) {
            for (int i = 0; i < 2; i++) {
                hn_brain_node_job(b, now, i, "u1");
                hn_brain_node_heard(b, now, i, c, 1);
            }
            if (!hung)
                step_all(b, c, "u1", 8, step++, 2.0, NULL, 20);
            hn_brain_tick(b, now);
            while (hn_brain_poll(b, &o)) {
                hangs += o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0;
                assert_false(o.kind == HN_OUT_FINDING &&
                             strcmp(o.finding.rule, "hang_unseen") == 0);
            }
            if (hung && c < last + 120)
                assert_int_equal(hangs, 0); /* not before a whole limit of its frames */
        }
        assert_int_equal(hangs, hung);
        job_view(b, "u1", &v);
        assert_int_equal(v.l.interruptions, (unsigned)hung);
        if (!hung) /* the wait was not watched: nothing learned from it */
            assert_true(v.l.pause_s == 2);
        hn_brain_free(b);
    }
}

/* After an outage longer than the agents' queues, the first frame that comes is far after the
 * last progress and may carry no step (a checkpoint save): frames were lost, so that is no
 * hang; the progress in the frames after it is progress. */
static void backlog_with_frames_lost_is_no_hang(void **state)
{
    (void)state;
    static const int none[2] = {0, 0};
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "q1", 0, 1, 20);
    assert_int_equal(wait_as(b, "q1", t, 7200, none, NULL), 0);
    /* The oldest kept frames, collected an hour into the outage: no step in the first. */
    double now = t + 7200, c = t + 3600;
    for (int i = 0; i < 2; i++) {
        hn_brain_node_job(b, now, i, "q1");
        assert_int_equal(hn_brain_node_heard(b, now, i, c, 0), 0);
    }
    hn_brain_tick(b, now);
    uint64_t step = 1000;
    for (c += 2, now += 0.05; c < t + 7200; c += 2, now += 0.05) {
        for (int i = 0; i < 2; i++) {
            hn_brain_node_job(b, now, i, "q1");
            assert_int_equal(hn_brain_node_heard(b, now, i, c, 1), 0);
        }
        step_all(b, c, "q1", 8, step++, 2.0, NULL, 990);
        hn_brain_tick(b, now);
    }
    assert_int_equal(find_output(b, HN_OUT_FINDING, "hang", NULL), 0);
    struct hn_job_view v;
    job_view(b, "q1", &v);
    assert_int_equal(v.l.interruptions, 0);
    assert_true(v.l.pause_s == 2); /* the outage was not watched */
    hn_brain_free(b);
}

/* `houston tail` reports one line per log interval of 100 steps of 1.5 s: a wait of 150 s
 * between reports is the job's rhythm, not a hang; a stop is one ten of those later. */
static void sparse_reports_set_the_limit(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    double t = 0;
    int hangs = 0;
    for (uint64_t s = 100; s <= 3000; s += 100, t += 150) {
        for (double k = 10; k < 150; k += 10) {
            hn_brain_node_job(b, t + k, 0, "tail");
            hn_brain_node_heard(b, t + k, 0, t + k, 1);
            hn_brain_tick(b, t + k);
        }
        hn_brain_node_job(b, t + 150, 0, "tail");
        hn_brain_node_heard(b, t + 150, 0, t + 150, 1);
        struct hn_step_in in = report("tail", 0, 1, s, 1.5);
        assert_int_equal(hn_brain_step(b, t + 150, 0, &in), 0);
        hn_brain_tick(b, t + 150);
        hangs += find_output(b, HN_OUT_FINDING, "hang", NULL);
    }
    assert_int_equal(hangs, 0);
    struct hn_job_view v;
    job_view(b, "tail", &v);
    assert_true(v.hang_limit_s == 1500);
    hn_brain_free(b);
}

/* A hung job whose requeue the scheduler refused stays hung an hour, then is cancelled: the
 * hour is the hang's (docs/jobs.md: its time is charged to the hang until it steps again or
 * ends), and its wall time and ETTR count it. Before, the hour vanished from both. */
static void hung_job_that_ends_keeps_its_hang(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "hx", 0, 1, 20);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    assert_int_equal(wait_as(b, "hx", t, 200, NULL, NULL), 1);
    struct hn_job_view v;
    job_view(b, "hx", &v);
    assert_string_equal(v.state, "hung");
    double interrupted = v.l.interrupted_at, hang = ledger_of(b, "hx")->lost_s[HN_LOSS_HANG];
    assert_int_equal(wait_as(b, "hx", t + 200, 3600, NULL, NULL), 0);
    job_view(b, "hx", &v);
    /* Charged when it steps again or ends; shown so far meanwhile (to the last tick). */
    assert_near(v.l.lost_s[HN_LOSS_HANG], hang + t + 3800 - interrupted, 1e-6);
    assert_near(v.lost_gpu_h[HN_LOSS_HANG], v.l.lost_s[HN_LOSS_HANG] * 8 / 3600, 1e-9);
    assert_true(ledger_of(b, "hx")->lost_s[HN_LOSS_HANG] == hang); /* the ledger: not yet */
    double productive = v.l.productive_s;
    /* Cancelled: the next poll lists it no more. */
    hn_brain_node_job(b, t + 3900, 0, "");
    hn_brain_node_job(b, t + 3900, 1, "");
    hn_brain_tick(b, t + 3900);
    job_view(b, "hx", &v);
    assert_string_equal(v.state, "ended");
    assert_near(v.l.lost_s[HN_LOSS_HANG], hang + t + 3800 - interrupted, 1e-6);
    assert_near(v.wall_s, t + 3800 - v.l.first_seen, 1e-6);
    assert_near(v.ettr, productive / v.wall_s, 1e-9);
    assert_true(v.ettr < 0.02);
    /* The same after a controller restart (the ledger saved and restored). */
    struct hn_job_ledger l = *hn_brain_job_ledger(b, (size_t)hn_brain_find_job(b, "hx"));
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    hn_brain_tick(b, t + 9000);
    struct hn_job_view r;
    job_view(b, "hx", &r);
    assert_string_equal(r.state, "ended");
    assert_true(r.wall_s == v.wall_s && r.ettr == v.ettr);
    assert_true(r.l.lost_s[HN_LOSS_HANG] == v.l.lost_s[HN_LOSS_HANG]);
    hn_brain_free(b);
}

/* A second outage is said again: a frame from the job's agents in between re-arms it. */
static void hang_unseen_once_per_outage(void **state)
{
    (void)state;
    static const int none[2] = {0, 0};
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "o1", 0, 1, 20);
    int unseen = 0;
    assert_int_equal(wait_as(b, "o1", t, 300, none, &unseen), 0);
    assert_int_equal(unseen, 1);
    /* One frame of the backlog arrives (collected 10 s after the last progress), then the
     * agents are cut off again. */
    assert_int_equal(hn_brain_node_heard(b, t + 305, 0, t + 8, 1), 0);
    assert_int_equal(wait_as(b, "o1", t + 300, 300, none, &unseen), 0);
    assert_int_equal(unseen, 2);
    hn_brain_free(b);
}

/* The nodes that count are those the job's ranks report from: another node the scheduler
 * lists it on (a `houston tail` job, ranks that do not report) carries none of its progress.
 * An agent's clock that is behind neither makes a hang nor hides one. */
static void hang_is_decided_by_the_nodes_that_report(void **state)
{
    (void)state;
    /* Four ranks, all reporting from n1; the scheduler lists n1 and n2. */
    struct hn_brain *b = fleet(2);
    double t = run_steps_as(b, "one", 4, 0, 1, 20);
    static const int only_n2[2] = {0, 1}, only_n1[2] = {1, 0};
    int unseen = 0;
    assert_int_equal(wait_as(b, "one", t, 600, only_n2, &unseen), 0);
    assert_int_equal(unseen, 1);
    assert_int_equal(wait_as(b, "one", t + 600, 20, only_n1, NULL), 1);
    hn_brain_free(b);

    /* Frames lost (a full queue) or an agent restarted: the record starts again there. */
    b = fleet(2);
    t = run_steps(b, "brk", 0, 1, 20);
    double last = t - 2;
    assert_int_equal(wait_as(b, "brk", t, 100, NULL, NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(hn_brain_node_heard(b, t + 101, i, last + 100, 0), 0);
    assert_int_equal(wait_as(b, "brk", t + 100, 110, NULL, NULL), 0); /* 108 s since */
    assert_int_equal(wait_as(b, "brk", t + 210, 20, NULL, NULL), 1);
    hn_brain_free(b);

    /* A ledger restored after a controller restart, of a job that never reports again: the
     * nodes the scheduler lists it on count until a rank reports; its rhythm unknown, the
     * limit is hang-pause-max (2,700 s); its hang requeues it. */
    b = fleet(2);
    restore_running(b, "gone", 20, 9, 5);
    requeues_seen = 0;
    assert_int_equal(wait_as(b, "gone", 20, 2690, NULL, NULL), 0);
    int hangs = wait_as(b, "gone", 2710, 20, NULL, NULL);
    assert_int_equal(hangs, 1);
    assert_int_equal(requeues_seen, 1);
    hn_brain_node_job(b, 2750, 0, "gone");
    hn_brain_tick(b, 2750);
    struct hn_job_view v;
    job_view(b, "gone", &v);
    assert_int_equal(v.l.interruptions, 1);
    hn_brain_free(b);
}

/* Job `job` (8 ranks on n1 and n2, both agents sending a frame at each report) reports steps
 * from..to at t, `every` s of wall time apart, each `steps` steps on from the last and saying
 * its steps took `dur` s; `burst` reports first come all at t (a log read at once). Returns the
 * time after the last and counts step_time_mismatch findings into *told. */
static double report_every(struct hn_brain *b, const char *job, double t, uint64_t from,
                           uint64_t to, uint64_t steps, double every, double dur, int burst,
                           int *told)
{
    for (uint64_t s = from; s <= to; s += steps) {
        hn_brain_node_job(b, t, 0, job);
        hn_brain_node_job(b, t, 1, job);
        assert_int_equal(hn_brain_node_heard(b, t, 0, t, 1), 0);
        assert_int_equal(hn_brain_node_heard(b, t, 1, t, 1), 0);
        step_all(b, t, job, 8, s, dur, NULL, -1);
        hn_brain_tick(b, t);
        *told += find_output(b, HN_OUT_FINDING, "step_time_mismatch", NULL);
        if (burst > 0)
            burst--;
        else
            t += every;
    }
    return t;
}

/* A client that reports milliseconds as seconds (dur=2000 for steps 2 s apart): the hang limit
 * goes by the wall time, not by 10 x 2,000 s, and a step_time_mismatch finding says why, once.
 * Before, the job stopped for 300 s was not hung (its limit was 20,000 s). Reports that do fit
 * the wall time are not called so: a log read at once (100 lines in one frame, then one line
 * every 10 s), and a line per 100 steps of 10 s, 1,000 s apart. */
static void step_times_that_are_not_wall_time_do_not_stretch_the_hang_limit(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    int told = 0;
    double t = report_every(b, "ms", 0, 1, 200, 1, 2, 2000, 0, &told);
    assert_int_equal(told, 1);
    assert_int_equal(wait_as(b, "ms", t, 300, NULL, NULL), 1);
    hn_brain_free(b);

    b = fleet(2);
    told = 0;
    t = report_every(b, "rd", 0, 1, 160, 1, 10, 10, 100, &told);
    assert_int_equal(told, 0);
    t = report_every(b, "li", t, 100, 3000, 100, 1000, 10, 0, &told);
    assert_int_equal(told, 0);
    assert_int_equal(wait_as(b, "li", t, 3000, NULL, NULL), 0);
    hn_brain_free(b);
}

/* Reports that come back to back, each with its own time (the agent stamps each datagram as it
 * receives it), for steps that ran before: a log that `houston tail` reads from its start when
 * the job ran a while already (60 lines of 100 steps of 1 s, 1 ms apart), and an agent's frames
 * queued while the controller was down, replayed at once after it restored the job (their
 * times are their arrival's, the agent's clock offset being measured anew). Neither is a
 * mismatch: the steps ran before, in the wall time houston did not watch. Then a line every
 * 100 s, as the steps take: its limit stays 10 x 100 s. Before, the backlog's 6,000 s of steps
 * against its 60 ms made a step_time_mismatch once 300 s of live lines came, and the job,
 * healthy, was hung after 290 s without a line. */
static void a_backlog_of_reports_is_not_a_step_time_mismatch(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    int told = 0;
    double t = report_every(b, "bl", 1000, 100, 6000, 100, 0.001, 1, 0, &told);
    t = report_every(b, "bl", t + 100, 6100, 7000, 100, 100, 1, 0, &told);
    assert_int_equal(told, 0);
    assert_int_equal(wait_as(b, "bl", t - 100, 600, NULL, NULL), 0);
    hn_brain_free(b);

    b = fleet(2);
    told = 0;
    t = report_every(b, "cr", 1000, 50, 500, 50, 100, 2, 0, &told);
    struct hn_job_ledger saved = *ledger_of(b, "cr");
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &saved), 0);
    /* Down 30 minutes: 18 reports queued, replayed in 20 ms. */
    t = report_every(b, "cr", t + 1800, 550, 1400, 50, 0.001, 2, 0, &told);
    t = report_every(b, "cr", t + 100, 1450, 1700, 50, 100, 2, 0, &told);
    assert_int_equal(told, 0);
    assert_int_equal(wait_as(b, "cr", t - 100, 600, NULL, NULL), 0);
    hn_brain_free(b);

    /* A client that reports milliseconds (steps of 1.5 s as dur=1500, a line per 100 steps),
     * its log read at once (200 lines 1 ms apart) then a line every 150 s: a mismatch, and its
     * limit goes by the live lines' 150 s (at most 2 x 150 s a wait: hung after 3,000 s), not
     * by the backlog's 1 ms. Before the backlog was left out (WALL_FRAME_MIN_S), its 200
     * advances in 0.2 s brought the wait down to 9 s, and the job was hung 120 s after a line,
     * though lines come every 150 s. */
    b = fleet(2);
    told = 0;
    t = report_every(b, "mb", 1000, 100, 20000, 100, 0.001, 1500, 0, &told);
    t = report_every(b, "mb", t + 150, 20100, 20600, 100, 150, 1500, 0, &told);
    assert_int_equal(told, 1);
    assert_int_equal(wait_as(b, "mb", t - 150, 300, NULL, NULL), 0);
    assert_int_equal(wait_as(b, "mb", t + 150, 3000, NULL, NULL), 1);
    hn_brain_free(b);
}

/* A job that came back from a pause (a checkpoint save) is allowed hang-pause-k times that
 * pause next time, at most hang-pause-max; the ledger keeps the pause over a restart. */
static void hang_limit_allows_the_pauses_it_came_back_from(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "p1", 0, 1, 20);
    struct hn_job_view v;
    job_view(b, "p1", &v);
    assert_true(v.hang_limit_s == 120);
    assert_true(v.l.pause_s == 2);
    /* A 100 s save after step 20 (the last progress at t - 2), then on. */
    assert_int_equal(wait_without_progress(b, "p1", t, 90, 1), 0);
    t = run_steps(b, "p1", t + 98, 21, 40);
    job_view(b, "p1", &v);
    assert_true(v.l.pause_s == 100);
    assert_true(v.hang_limit_s == 300);
    /* The next save takes 250 s: not a hang. */
    assert_int_equal(wait_without_progress(b, "p1", t, 240, 1), 0);
    t = run_steps(b, "p1", t + 248, 41, 60);
    job_view(b, "p1", &v);
    assert_true(v.l.pause_s == 250);
    assert_true(v.hang_limit_s == 750);
    /* A real hang is found after 750 s. */
    assert_int_equal(wait_without_progress(b, "p1", t, 740, 1), 0);
    assert_int_equal(wait_without_progress(b, "p1", t + 740, 20, 1), 1);

    /* Saved and restored (a controller restart): until it advanced twice, the longest limit;
     * then the one it had. */
    int i = hn_brain_find_job(b, "p1");
    struct hn_job_ledger saved = *hn_brain_job_ledger(b, (size_t)i);
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &saved), 0);
    hn_brain_node_job(b, saved.last_report, 0, "p1");
    job_view(b, "p1", &v);
    assert_true(v.l.pause_s == 250 && v.hang_limit_s == 2700);
    double t2 = saved.last_report + 3600;
    run_steps(b, "p1", t2, saved.step + 1, saved.step + 2);
    job_view(b, "p1", &v);
    assert_true(v.l.pause_s == 250 && v.hang_limit_s == 750);
    hn_brain_free(b);

    /* hang-pause-max caps what was learned; hang-pause-k 0 learns nothing. */
    static const struct {
        double k, max, want;
    } cfgs[] = {{3, 600, 600}, {0, 2700, 120}, {2, 2700, 500}};
    for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
        struct hn_brain_config cfg;
        fleet_config(&cfg);
        cfg.hang_pause_k = cfgs[c].k;
        cfg.hang_pause_max_s = cfgs[c].max;
        b = fleet_from(&cfg, 2, NULL);
        assert_int_equal(hn_brain_restore_job(b, &saved), 0);
        run_steps(b, "p1", t2, saved.step + 1, saved.step + 2);
        job_view(b, "p1", &v);
        assert_true(v.hang_limit_s == cfgs[c].want);
        hn_brain_free(b);
    }

    /* Reports of 29 steps lost (the agent's queue was full) while the job stepped on: the 60 s
     * to the next report is those steps' work, not a pause to allow for (before, 60 s were
     * learned and the limit went to 180 s). */
    b = fleet(2);
    t = run_steps(b, "p2", 0, 1, 20);
    t = run_steps(b, "p2", t + 58, 50, 60);
    job_view(b, "p2", &v);
    print_message("after 29 steps unreported: pause %.0f s, limit %.0f s\n", v.l.pause_s,
                  v.hang_limit_s);
    assert_true(v.l.pause_s == 2 && v.hang_limit_s == 120);
    hn_brain_free(b);
}

/* A job that says it is saving a checkpoint may pause up to hang-pause-max (2,700 s), even
 * the first time (nothing learned yet); a save that never ends is still a hang, and says it
 * was one. The next step ends the pause; late notices and ones for unknown jobs change
 * nothing; another user's notice is refused. */
static void declared_pause_is_allowed_up_to_pause_max(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "d1", 0, 1, 20);
    struct hn_job_view v;
    job_view(b, "d1", &v);
    assert_true(v.hang_limit_s == 120 && v.pause == NULL && isnan(v.pause_s));
    struct hn_step_in p = pause_in("d1", 0, 20, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t - 1, 0, &p), 0);
    job_view(b, "d1", &v);
    assert_string_equal(v.pause, "checkpoint");
    assert_true(v.pause_step == 20 && v.hang_limit_s == 2700);
    /* A 1,000 s first save (without the notice, a hang at 120 s: hang_case and others). */
    assert_int_equal(wait_without_progress(b, "d1", t, 1000, 1), 0);
    job_view(b, "d1", &v);
    assert_string_equal(v.state, "running");
    assert_near(v.pause_s, 1001, 1e-9);
    /* Back: the pause is over, and not learned (the next save will be announced too): the
     * limit between saves is its steps' own again. */
    t = run_steps(b, "d1", t + 1006, 21, 30);
    job_view(b, "d1", &v);
    assert_true(v.pause == NULL && v.l.pause_s == 2 && v.hang_limit_s == 120);
    /* A late notice (a step it passed), and one for a job never seen: nothing. */
    p = pause_in("d1", 3, 25, HN_PAUSE_EVAL);
    assert_int_equal(hn_brain_step(b, t, 0, &p), 0);
    p = pause_in("nobody", 0, 25, HN_PAUSE_EVAL);
    assert_int_equal(hn_brain_step(b, t, 0, &p), 0);
    assert_true(hn_brain_find_job(b, "nobody") < 0);
    job_view(b, "d1", &v);
    assert_null(v.pause);
    /* A hang between saves is found after 120 s, as before the save. */
    assert_int_equal(wait_without_progress(b, "d1", t, 110, 1), 0);
    t = run_steps(b, "d1", t + 118, 31, 40);
    job_view(b, "d1", &v);
    assert_true(v.l.pause_s == 120 && v.hang_limit_s == 360); /* that one it learned */
    /* A kind this build does not know reads as "other"; a save that never ends is a hang
     * after 2,700 s, and the finding says it was a declared pause. */
    p = pause_in("d1", 5, 40, 77);
    assert_int_equal(hn_brain_step(b, t, 1, &p), 0);
    job_view(b, "d1", &v);
    assert_string_equal(v.pause, "other");
    assert_int_equal(wait_without_progress(b, "d1", t, 2690, 1), 0);
    assert_int_equal(wait_without_progress(b, "d1", t + 2690, 20, 1), 1);
    assert_non_null(strstr(last_hang, "(a declared other pause)"));
    job_view(b, "d1", &v);
    assert_null(v.pause); /* requeued: the next run starts without it */
    /* Another user's notice is refused like a step. */
    assert_int_equal(hn_brain_job_owner(b, "", -1), 0);
    assert_int_equal(hn_brain_job_owner(b, "d1", 1000), 0);
    p = pause_in("d1", 0, 50, HN_PAUSE_CHECKPOINT);
    p.uid = 1001;
    assert_int_equal(hn_brain_step(b, t, 0, &p), -EPERM);
    hn_brain_free(b);
}

/* Notices that must not hold the long limit: a step far ahead (a sample count) ends after
 * two advances; a later, lower notice neither ends the pause early nor restarts its clock; a
 * restored job ignores notices below its saved step; a notice delayed from the run before a
 * requeue is ignored once the next run reports. */
static void pause_notices_that_do_not_last(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "f1", 0, 1, 20);
    struct hn_step_in p = pause_in("f1", 0, 100000, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t - 1, 0, &p), 0);
    struct hn_job_view v;
    job_view(b, "f1", &v);
    assert_true(v.pause != NULL && v.hang_limit_s == 2700);
    t = run_steps(b, "f1", t, 21, 21);
    job_view(b, "f1", &v);
    assert_true(v.pause != NULL); /* one advance: perhaps the other ranks' step */
    t = run_steps(b, "f1", t, 22, 22);
    job_view(b, "f1", &v);
    assert_true(v.pause == NULL && v.hang_limit_s == 120);
    assert_int_equal(wait_without_progress(b, "f1", t, 130, 1), 1); /* a hang is found again */

    b = (hn_brain_free(b), fleet(2));
    t = run_steps(b, "f2", 0, 1, 20);
    p = pause_in("f2", 0, 21, HN_PAUSE_CHECKPOINT); /* "after step 21", one early */
    assert_int_equal(hn_brain_step(b, t - 1, 0, &p), 0);
    p = pause_in("f2", 4, 20, HN_PAUSE_CHECKPOINT); /* rank 4 says 20, later */
    assert_int_equal(hn_brain_step(b, t + 5, 1, &p), 0);
    t = run_steps(b, "f2", t + 10, 21, 21);
    job_view(b, "f2", &v);
    assert_true(v.pause != NULL && v.pause_step == 21);
    assert_near(v.pause_s, 11, 1e-9);
    hn_brain_free(b);

    /* Restored at step 500: a notice for step 300 (a run restarted from a checkpoint while the
     * controller was away, not yet reported) is not its pause. */
    b = fleet(2);
    restore_running(b, "f3", 1000, 500, 300);
    hn_brain_node_job(b, 1001, 0, "f3");
    p = pause_in("f3", 0, 300, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, 1001, 0, &p), 0);
    job_view(b, "f3", &v);
    assert_null(v.pause);
    hn_brain_free(b);

    /* Hung and requeued; the next run starts at step 11 on rank 0 alone so far. Rank 5's notice
     * of the run before arrives late: not the new run's pause. */
    b = fleet(2);
    t = run_steps(b, "f4", 0, 1, 20);
    assert_int_equal(wait_without_progress(b, "f4", t, 130, 1), 1);
    struct hn_step_in r0 = report("f4", 0, 8, 11, 2.0);
    assert_int_equal(hn_brain_step(b, t + 200, 0, &r0), 0);
    job_view(b, "f4", &v);
    assert_string_equal(v.state, "running");
    p = pause_in("f4", 5, 20, HN_PAUSE_CHECKPOINT);
    assert_int_equal(hn_brain_step(b, t + 201, 1, &p), 0);
    job_view(b, "f4", &v);
    assert_null(v.pause);
    p = pause_in("f4", 0, 11, HN_PAUSE_CHECKPOINT); /* the new run's own */
    assert_int_equal(hn_brain_step(b, t + 202, 0, &p), 0);
    job_view(b, "f4", &v);
    assert_non_null(v.pause);
    hn_brain_free(b);
}

/* A loop that counts its steps from 0: its first report, step 0, is progress as any job's
 * first report is (its time productive, its step time known), and a job that never gets past
 * it is hung once its limit has passed. Before, step 0 was no progress: such a job was never
 * checked for hangs (no time without progress), and that step's time was not counted. */
static void job_counting_from_step_0_can_hang(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "z0", 10, 0, 0);
    struct hn_job_view v;
    job_view(b, "z0", &v);
    assert_true(v.l.productive_s == 2 && v.step_seconds == 2);
    assert_true(v.no_progress_s == 0 && v.hang_limit_s == 2700);
    assert_int_equal(wait_without_progress(b, "z0", t, 2690, 1), 0);
    assert_int_equal(wait_without_progress(b, "z0", t + 2690, 20, 1), 1);
    job_view(b, "z0", &v);
    assert_string_equal(v.state, "hung");
    /* Its next run starts from step 0 again (no checkpoint): that step is progress too. */
    run_steps(b, "z0", t + 3000, 0, 0);
    job_view(b, "z0", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.productive_s == 2 && v.no_progress_s == 0);
    hn_brain_free(b);
}

/* A new run's first steps are a start's, as a new job's are (compilation, warm-up): until the
 * run has advanced twice under watch its limit is hang-pause-max, whatever rhythm its earlier
 * runs had. Before, a requeued job whose new run took 10 minutes over its second step (a
 * recompilation) was hung after 120 s and requeued, and so at every run. */
static void new_run_starts_with_the_longest_limit(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = failed_and_requeued(b, "nr"); /* steps of 2 s: a limit of 120 s */
    assert_int_equal(wait_listed_waiting(b, "nr", t, 60, HN_WAIT_QUEUED), 0);
    t = run_steps(b, "nr", t + 100, 21, 21);
    struct hn_job_view v;
    job_view(b, "nr", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.hang_limit_s == 2700);
    assert_int_equal(wait_without_progress(b, "nr", t, 600, 1), 0);
    t = run_steps(b, "nr", t + 608, 22, 30);
    job_view(b, "nr", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal(v.l.interruptions, 1);
    assert_true(v.l.pause_s == 610 && v.hang_limit_s == 1830); /* its rhythm from then on */
    hn_brain_free(b);
}

/* Waits houston did not watch are not pauses the job came back from: the first step of a run
 * (its time is what the client says), the first after a restore, a job listed again after it
 * ended. */
static void unwatched_waits_are_not_learned(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = run_steps(b, "w1", 0, 1, 20);
    /* Restarted without houston from checkpoint 10: the first step of the run says 400 s. */
    t += 500;
    hn_brain_node_job(b, t, 0, "w1");
    hn_brain_node_job(b, t, 1, "w1");
    step_all(b, t, "w1", 8, 11, 400.0, NULL, 10);
    t = run_steps(b, "w1", t + 2, 12, 40);
    struct hn_job_view v;
    job_view(b, "w1", &v);
    assert_int_equal(v.l.interruptions, 1);
    assert_true(v.l.pause_s == 2);
    /* The scheduler no longer lists it (ended); an hour later it is back at the next step. */
    hn_brain_node_job(b, t, 0, "");
    hn_brain_node_job(b, t, 1, "");
    hn_brain_tick(b, t);
    job_view(b, "w1", &v);
    assert_string_equal(v.state, "ended");
    assert_true(isnan(v.hang_limit_s) && isnan(v.no_progress_s));
    t = run_steps(b, "w1", t + 3600, 41, 60);
    job_view(b, "w1", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.l.pause_s == 2);
    assert_true(v.hang_limit_s == 120);
    /* Restored after a controller restart an hour later: its first step is not a pause. */
    int i = hn_brain_find_job(b, "w1");
    struct hn_job_ledger saved = *hn_brain_job_ledger(b, (size_t)i);
    hn_brain_free(b);
    b = fleet(2);
    assert_int_equal(hn_brain_restore_job(b, &saved), 0);
    run_steps(b, "w1", t + 3600, 61, 70);
    job_view(b, "w1", &v);
    assert_true(v.l.pause_s == 2);
    hn_brain_free(b);

    /* A job the scheduler never listed is not checked: no limit, no time without progress. */
    b = fleet(1);
    step_all(b, 1, "free", 4, 1, 1.0, NULL, -1);
    job_view(b, "free", &v);
    assert_true(isnan(v.hang_limit_s) && isnan(v.no_progress_s));
    hn_brain_free(b);
}

static void job_that_ends_is_not_a_hang(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    for (uint64_t s = 1; s <= 20; s++) {
        hn_brain_node_job(b, (double)s, 0, "e1");
        step_all(b, (double)s, "e1", 4, s, 1.0, NULL, -1);
        hn_brain_tick(b, (double)s);
    }
    /* The scheduler's next poll no longer lists it: it ended. */
    hn_brain_node_job(b, 30, 0, "");
    hn_brain_tick(b, 30);
    hn_brain_node_job(b, 500, 0, "");
    hn_brain_tick(b, 500);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "hang", NULL), 0);
    struct hn_job_view v;
    job_view(b, "e1", &v);
    assert_string_equal(v.state, "ended");
    assert_true(v.l.ended);
    assert_near(v.wall_s, 20, 1e-9); /* frozen at its last report */
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hang_drains_the_node_whose_ranks_stopped),
        cmocka_unit_test(hang_needs_its_agents_heard),
        cmocka_unit_test(collective_hang_blames_the_idle_node),
        cmocka_unit_test(hang_blames_the_node_gone_silent),
        cmocka_unit_test(hang_unseen_once_per_outage),
        cmocka_unit_test(backlog_with_frames_lost_is_no_hang),
        cmocka_unit_test(sparse_reports_set_the_limit),
        cmocka_unit_test(hung_job_that_ends_keeps_its_hang),
        cmocka_unit_test(hang_is_decided_by_the_nodes_that_report),
        cmocka_unit_test(hang_limit_allows_the_pauses_it_came_back_from),
        cmocka_unit_test(step_times_that_are_not_wall_time_do_not_stretch_the_hang_limit),
        cmocka_unit_test(a_backlog_of_reports_is_not_a_step_time_mismatch),
        cmocka_unit_test(unwatched_waits_are_not_learned),
        cmocka_unit_test(job_counting_from_step_0_can_hang),
        cmocka_unit_test(new_run_starts_with_the_longest_limit),
        cmocka_unit_test(declared_pause_is_allowed_up_to_pause_max),
        cmocka_unit_test(pause_notices_that_do_not_last),
        cmocka_unit_test(job_that_ends_is_not_a_hang),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

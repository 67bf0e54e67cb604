/*
 * test_job_steps.c - the brain's intake of step reports: the rank cap that keeps a made-up job
 * from allocating 2^20 ranks, who may report for a job (its owner, root), and a job's size from
 * run to run (shed when smaller, regrown, heterogeneous worlds) with late reports of an old run
 * dropped.
 */
#include "brain_fleet.h"
#include "control/control.h"

/* A job restarts itself (torchrun restarting its workers from checkpoint 20): n1's ranks
 * report the new run's step 21 before n2's agent delivers its ranks' last report of the old
 * run (step 31, received before the restart). That report is the old run's: it neither
 * advances the job nor makes the next real one look like a second restart. */
static void late_report_of_the_run_before_a_restart_is_dropped(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    for (int n = 0; n < 2; n++) /* the scheduler runs it on both (so its pause shows) */
        hn_brain_node_job(b, 0.5, n, "q");
    for (uint64_t s = 1; s <= 30; s++)
        step_all(b, (double)s, "q", 8, s, 1.0, NULL, s >= 20 ? 20 : -1);
    for (int r = 0; r < 4; r++) { /* n1: the new run's first step */
        struct hn_step_in in = report("q", r, 8, 21, 1.0);
        in.checkpoint = 20;
        assert_int_equal(hn_brain_step(b, 36, 0, &in), 0);
    }
    for (int r = 4; r < 8; r++) { /* n2: the old run's step 31, delivered late */
        struct hn_step_in in = report("q", r, 8, 31, 1.0);
        assert_int_equal(hn_brain_step(b, 31.5, 1, &in), 0);
    }
    /* A pause notice of the old run, from a rank the new one has heard, delivered late: not
     * this run's pause. */
    struct hn_step_in notice = report("q", 0, 8, 30, 0);
    notice.pause = HN_PAUSE_CHECKPOINT;
    assert_int_equal(hn_brain_step(b, 35.5, 1, &notice), 0);
    struct hn_job_view v;
    job_view(b, "q", &v);
    assert_int_equal((int)v.l.step, 21);
    assert_null(v.pause);
    for (uint64_t s = 22; s <= 40; s++)
        step_all(b, 37.0 + (double)(s - 21), "q", 8, s, 1.0, NULL, 20);
    job_view(b, "q", &v);
    assert_int_equal(v.l.interruptions, 1);
    assert_int_equal((int)v.l.step, 40);
    /* 40 steps of 1 s kept; the ten redone (21..30) and the restart's wait lost. */
    assert_near(v.l.productive_s, 40, 1e-6);
    assert_near(v.l.lost_s[HN_LOSS_OTHER], 10 + 35 - 30, 1e-6);
    hn_brain_free(b);
}

static unsigned job_ranks(struct hn_brain *b, const char *id)
{
    struct hn_job_view v;
    job_view(b, id, &v);
    return v.l.ranks;
}

static void made_up_world_allocates_at_most_the_cap(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    struct hn_brain_config d;
    hn_brain_config_default(&d);
    assert_int_equal(d.ranks_per_node_max, 64);
    /* One node, a job the scheduler never listed, world 2^20: accepted, sized by the cap. */
    struct hn_step_in in = report("fake", 0, 1 << 20, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 10, 0, &in), 0);
    assert_int_equal(job_ranks(b, "fake"), 64);
    int i = hn_brain_find_job(b, "fake");
    const char *node;
    int gpu;
    double secs;
    assert_int_equal(hn_brain_job_rank(b, (size_t)i, 63, &node, &gpu, &secs), 0);
    assert_int_equal(hn_brain_job_rank(b, (size_t)i, 64, &node, &gpu, &secs), -EINVAL);
    /* Claiming it again from the same node changes nothing; world alone is never refused. */
    in = report("fake", 63, 1 << 20, 2, 1.0);
    assert_int_equal(hn_brain_step(b, 11, 0, &in), 0);
    assert_int_equal(job_ranks(b, "fake"), 64);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", NULL), 0);
    /* 256 made-up jobs from one node: 256 x 64 ranks, not 256 x 2^20. */
    size_t total = 0;
    for (int k = 0; k < 256; k++) {
        char id[16];
        snprintf(id, sizeof(id), "f%d", k);
        in = report(id, 0, 1 << 20, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 12, 0, &in), 0);
    }
    for (size_t k = 0; k < hn_brain_job_count(b); k++) {
        struct hn_job_view v;
        assert_int_equal(hn_brain_job_view(b, k, &v), 0);
        total += v.l.ranks;
    }
    assert_int_equal(hn_brain_job_count(b), 257);
    assert_true(total <= 257 * 64);
    /* A second node reporting for the job doubles its cap. */
    in = report("f255", 64, 1 << 20, 2, 1.0);
    assert_int_equal(hn_brain_step(b, 13, 1, &in), 0);
    assert_int_equal(job_ranks(b, "f255"), 128);
    hn_brain_free(b);

    /* A job the scheduler lists outlives a flood of made-up ids that report after it: they
     * evict each other (and a job nobody lists, "unlisted", goes with them). A table of 64
     * jobs, 1,000 made up. */
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.jobs_max = 64;
    b = fleet_from(&cfg, 2, NULL);
    hn_brain_node_job(b, 1, 0, "real");
    in = report("real", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 2, 0, &in), 0);
    in = report("unlisted", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 2, 1, &in), 0);
    for (int k = 0; k < 1000; k++) {
        char id[16];
        snprintf(id, sizeof(id), "g%d", k);
        in = report(id, 0, 1, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 3 + k, 1, &in), 0);
    }
    assert_true(hn_brain_find_job(b, "real") >= 0);
    assert_true(hn_brain_find_job(b, "unlisted") < 0);
    assert_true(hn_brain_find_job(b, "g999") >= 0);
    hn_brain_free(b);
}

/* Who may report (docs/steps.md): a job the scheduler lists with its owner takes reports from
 * its owner and root; another user's reports are refused before anything of them is applied,
 * and the node that sent them gets a step_owner finding, at most one a minute. */
static void reports_from_another_user_are_refused(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    hn_brain_node_job(b, 1, 0, "42");
    assert_int_equal(hn_brain_job_owner(b, "", -1), 0); /* a poll starts */
    assert_int_equal(hn_brain_job_owner(b, "42", 1000), 0);
    struct hn_step_in in = report("42", 0, 4, 1, 1.0);
    in.uid = 1001;
    assert_int_equal(hn_brain_step(b, 2, 0, &in), -EPERM);
    assert_true(hn_brain_find_job(b, "42") < 0); /* nothing applied, not even a job */
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_owner", &o), 1);
    assert_string_equal(o.node, "n1");
    assert_string_equal(o.job, "42");
    assert_int_equal(o.finding.severity, HN_SEV_WARN);
    assert_string_equal(o.finding.evidence, "job=42 rank=0 uid=1001 owner=1000");
    /* The owner, root and a sender whose uid the agent could not tell are accepted. */
    int64_t ok[] = {1000, 0, -1};
    for (size_t k = 0; k < 3; k++) {
        in = report("42", (int)k, 4, 2 + k, 1.0);
        in.uid = ok[k];
        assert_int_equal(hn_brain_step(b, 3, 0, &in), 0);
    }
    assert_int_equal(job_ranks(b, "42"), 4);
    /* Refused again within the minute: counted by the caller, not logged; from another node
     * it is logged at once; a minute later the first node is logged again. */
    in = report("42", 3, 4, 5, 100.0);
    in.uid = 1001;
    assert_int_equal(hn_brain_step(b, 30, 0, &in), -EPERM);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_owner", NULL), 0);
    assert_int_equal(hn_brain_step(b, 31, 1, &in), -EPERM);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_owner", &o), 1);
    assert_string_equal(o.node, "n2");
    assert_int_equal(hn_brain_step(b, 63, 0, &in), -EPERM);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_owner", NULL), 1);
    /* A job no poll listed has no owner to check against. */
    in = report("43", 0, 1, 1, 1.0);
    in.uid = 1001;
    assert_int_equal(hn_brain_step(b, 64, 0, &in), 0);
    /* A job the next poll no longer lists (it ended, or waits to be requeued) keeps its owner:
     * anyone else's report of it would otherwise be accepted, and acted on (acts_on). */
    assert_int_equal(hn_brain_job_owner(b, "", -1), 0);
    in = report("42", 3, 4, 6, 1.0);
    in.uid = 1001;
    assert_int_equal(hn_brain_step(b, 65, 0, &in), -EPERM);
    in.uid = 1000;
    assert_int_equal(hn_brain_step(b, 65, 0, &in), 0);
    /* Bad owners are refused; a full table says so and keeps what it has. */
    assert_int_equal(hn_brain_job_owner(b, "42", -1), -EINVAL);
    assert_int_equal(hn_brain_job_owner(b, "42", (int64_t)UINT32_MAX + 1), -EINVAL);
    char id[80];
    memset(id, 'x', 64);
    id[64] = '\0';
    assert_int_equal(hn_brain_job_owner(b, id, 5), -EINVAL);
    int full = 0;
    for (int k = 0; k < 7000 && !full; k++) {
        snprintf(id, sizeof(id), "j%d", k);
        int rc = hn_brain_job_owner(b, id, 2000 + k);
        assert_true(rc == 0 || rc == -ENOSPC);
        full = rc == -ENOSPC ? k : 0;
    }
    assert_int_equal(full, 6144);
    for (int k = 0; k < 6144; k += 97) { /* each found at its own slot */
        snprintf(id, sizeof(id), "j%d", k);
        in = report(id, 0, 1, 1, 1.0);
        in.uid = 2000 + k + 1;
        assert_int_equal(hn_brain_step(b, 66, 1, &in), -EPERM);
        in.uid = 2000 + k;
        assert_int_equal(hn_brain_step(b, 66, 1, &in), 0);
    }
    hn_brain_free(b);

    /* step-trusted-uids: a service account's reports count for any job. */
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.step_trusted_uids[0] = 4242;
    cfg.n_step_trusted_uids = 1;
    b = fleet_from(&cfg, 2, NULL);
    assert_int_equal(hn_brain_job_owner(b, "42", 1000), 0);
    in = report("42", 0, 1, 1, 1.0);
    in.uid = 4242;
    assert_int_equal(hn_brain_step(b, 1, 0, &in), 0);
    in.uid = 4243;
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EPERM);
    hn_brain_free(b);
}

/* Reports made up for a job id before Slurm gives it out are accepted (no poll lists the job
 * yet). Once a poll names the owner and a rank of the job was reported by someone else, nothing
 * those reports built is kept (steps, checkpoint, ranks): the job starts again from the owner's
 * report. Without a foreign rank, the job goes on. */
static void job_made_up_before_the_listing_starts_again(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    struct hn_step_in in;
    for (int r = 0; r < 6; r++) {
        in = report("77", r, 6, 1, 1.0);
        in.uid = 1000;
        assert_int_equal(hn_brain_step(b, 1, r / 4, &in), 0);
    }
    /* Someone else claims rank 5 far ahead, with a checkpoint the job never wrote. */
    in = report("77", 5, 6, 1000000, 1.0);
    in.uid = 1001;
    in.checkpoint = 999999;
    assert_int_equal(hn_brain_step(b, 2, 2, &in), 0);
    int i = hn_brain_find_job(b, "77");
    struct hn_job_view v;
    assert_int_equal(hn_brain_job_view(b, (size_t)i, &v), 0);
    assert_int_equal(v.nodes, 3);
    assert_true(v.l.step == 1000000 && v.l.checkpoint == 999999);
    /* The poll lists job 77 as uid 1000's; its owner's next report starts it again. */
    hn_brain_node_job(b, 4, 0, "77");
    hn_brain_node_job(b, 4, 1, "77");
    assert_int_equal(hn_brain_job_owner(b, "77", 1000), 0);
    in = report("77", 0, 6, 2, 1.0);
    in.uid = 1000;
    assert_int_equal(hn_brain_step(b, 4, 0, &in), 0);
    i = hn_brain_find_job(b, "77");
    assert_int_equal(hn_brain_job_view(b, (size_t)i, &v), 0);
    assert_int_equal(v.nodes, 1);
    assert_true(v.l.step == 2 && v.l.checkpoint == -1);
    const char *node;
    int gpu;
    double secs;
    assert_int_equal(hn_brain_job_rank(b, (size_t)i, 5, &node, &gpu, &secs), 0);
    assert_null(node);
    /* Its other ranks report again and the job goes on; a foreign report is refused. */
    for (int r = 1; r < 6; r++) {
        in = report("77", r, 6, 2, 1.0);
        in.uid = r == 4 ? 0 : 1000;
        assert_int_equal(hn_brain_step(b, 5, r / 4, &in), 0);
    }
    in.uid = 1001;
    assert_int_equal(hn_brain_step(b, 5, 2, &in), -EPERM);
    assert_int_equal(hn_brain_job_view(b, (size_t)i, &v), 0);
    assert_int_equal(v.nodes, 2);
    /* The next poll (same owner, root's rank 4 among them) starts nothing again. */
    assert_int_equal(hn_brain_job_owner(b, "", -1), 0);
    assert_int_equal(hn_brain_job_owner(b, "77", 1000), 0);
    in = report("77", 0, 6, 3, 1.0);
    in.uid = 1000;
    assert_int_equal(hn_brain_step(b, 6, 0, &in), 0);
    assert_int_equal(hn_brain_job_view(b, (size_t)i, &v), 0);
    assert_true(v.nodes == 2 && v.l.step == 3);
    hn_brain_free(b);
}

static void rank_beyond_the_cap_is_refused(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    struct hn_step_in in = report("x", 64, 65, 100, 1.0);
    assert_int_equal(hn_brain_step(b, 10, 0, &in), -ERANGE);
    /* Nothing applied: no ranks, nothing to save, and not shown as a job (the API lists
     * what hn_brain_job_view gives). */
    int xi = hn_brain_find_job(b, "x");
    assert_true(xi >= 0);
    struct hn_job_view v;
    assert_int_equal(hn_brain_job_view(b, (size_t)xi, &v), -ENOENT);
    assert_int_equal(hn_brain_job_dirty(b, (size_t)xi, 0), 0);
    /* Logged once: a finding about the node that sent it, naming the job, rank and cap. */
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", &o), 1);
    assert_string_equal(o.node, "n1");
    assert_string_equal(o.job, "x");
    assert_int_equal(o.finding.severity, HN_SEV_WARN);
    assert_non_null(strstr(o.finding.evidence, "job=x rank=64 world=65 cap=64"));
    in = report("x", 1000, -1, 101, 1.0);
    assert_int_equal(hn_brain_step(b, 11, 0, &in), -ERANGE);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", NULL), 0);
    /* Another made-up job from the same node within the minute: refused, not logged... */
    in = report("y", 5000, -1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 30, 0, &in), -ERANGE);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", NULL), 0);
    /* ...until the minute has passed; another node is logged at once. */
    in = report("z", 5000, -1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 31, 1, &in), -ERANGE);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", &o), 1);
    assert_string_equal(o.node, "n2");
    in = report("y", 5000, -1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 71, 0, &in), -ERANGE);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "step_rank_cap", &o), 1);
    assert_string_equal(o.job, "y");
    /* The absolute ceiling stays a bad value whatever the cap. */
    in = report("x", 0, (1 << 20) + 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 72, 0, &in), -EINVAL);
    hn_brain_free(b);
}

static void later_nodes_and_the_scheduler_raise_the_cap(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(6);
    /* A 256-rank job on n1..n4 (64 per node): n2 reports before the scheduler lists it and
     * before the other nodes; its rank 100 is beyond 64 x 1 node. */
    struct hn_step_in in = report("big", 100, 256, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 10, 1, &in), -ERANGE);
    /* Rank 0 on n1 with world 256: accepted, sized by the cap of 2 reporting nodes (the refused
     * report's node counts). */
    in = report("big", 0, 256, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 10, 0, &in), 0);
    assert_int_equal(job_ranks(b, "big"), 128);
    /* n2's next report is now within the cap; the refused one is lost. */
    in = report("big", 100, 256, 2, 1.0);
    assert_int_equal(hn_brain_step(b, 11, 1, &in), 0);
    in = report("big", 255, 256, 2, 1.0);
    assert_int_equal(hn_brain_step(b, 11, 3, &in), -ERANGE); /* 3 nodes: 192 */
    /* The scheduler lists the job on n1..n4: the cap is 4 x 64 and rank 255 is accepted. */
    for (int n = 0; n < 6; n++)
        hn_brain_node_job(b, 12, n, "");
    for (int n = 0; n < 4; n++)
        hn_brain_node_job(b, 12, n, "big");
    in = report("big", 255, 256, 3, 1.0);
    assert_int_equal(hn_brain_step(b, 13, 3, &in), 0);
    assert_int_equal(job_ranks(b, "big"), 256);
    in = report("big", 256, 257, 3, 1.0);
    assert_int_equal(hn_brain_step(b, 13, 3, &in), -ERANGE);
    /* Listed on 6 nodes and nobody else reporting: 384 ranks, whatever world claims. */
    hn_brain_node_job(b, 14, 4, "big");
    hn_brain_node_job(b, 14, 5, "big");
    in = report("big", 383, 1 << 20, 4, 1.0);
    assert_int_equal(hn_brain_step(b, 15, 4, &in), 0);
    assert_int_equal(job_ranks(b, "big"), 384);
    hn_brain_free(b);
}

static void normal_jobs_are_unaffected(void **state)
{
    (void)state;
    /* A tight cap of 4 ranks per node, and 4 ranks on each of 4 nodes, never listed by the
     * scheduler: every report is accepted, in the order step_all sends them. */
    struct hn_brain *b = fleet_cap(4, 4);
    for (uint64_t s = 1; s <= 100; s++)
        step_all(b, (double)s, "ok", 16, s, 1.0, NULL, (int64_t)(s / 50 * 50));
    struct hn_job_view v;
    job_view(b, "ok", &v);
    assert_int_equal(v.l.ranks, 16);
    assert_int_equal(v.nodes, 4);
    assert_int_equal((int)v.l.step, 100);
    assert_near(v.l.productive_s, 100, 1e-6);
    assert_int_equal(find_output(b, HN_OUT_FINDING, NULL, NULL), 0);
    /* A ledger restored with more ranks than the cap keeps them. */
    struct hn_job_ledger l = {.id = "old", .ranks = 512, .first_seen = 1, .last_report = 2};
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    struct hn_step_in in = report("old", 300, 1024, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 200, 0, &in), 0);
    assert_int_equal(job_ranks(b, "old"), 512);
    in = report("old", 512, 1024, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 200, 0, &in), -ERANGE);
    hn_brain_free(b);

    /* The controller key. */
    struct hn_control_config c;
    char err[256];
    hn_control_config_defaults(&c);
    assert_int_equal(c.brain.ranks_per_node_max, 64);
    assert_int_equal(hn_control_config_set(&c, "ranks-per-node-max", "256", err, sizeof(err)), 0);
    assert_int_equal(c.brain.ranks_per_node_max, 256);
    assert_int_equal(hn_control_config_set(&c, "ranks-per-node-max", "0", err, sizeof(err)), -1);
    assert_int_equal(hn_control_config_set(&c, "ranks-per-node-max", "2.5", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "ranks-per-node-max"));
    assert_int_equal(c.brain.ranks_per_node_max, 256);
    assert_int_equal(c.brain.jobs_max, HN_JOBS_MAX_DEFAULT);
    assert_int_equal(hn_control_config_set(&c, "jobs-max", "20000", err, sizeof(err)), 0);
    assert_int_equal(c.brain.jobs_max, 20000);
    assert_int_equal(hn_control_config_set(&c, "jobs-max", "8", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "jobs-max"));
    assert_int_equal(hn_control_config_set(&c, "jobs-max", "65537", err, sizeof(err)), -1);
    assert_int_equal(c.brain.jobs_max, 20000);
    hn_control_config_fini(&c);
}

/* A job requeued with fewer ranks than its last run (16, then 4, its reports saying so) sheds
 * the ranks it no longer has: the detector's quorum is the new run's, so it finds the new
 * run's straggler, and the new run's GPU time counts 4 GPUs. */
static void requeued_smaller_job_finds_its_straggler(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (uint64_t s = 1; s <= 60; s++)
        step_all(b, (double)s, "w", 16, s, 1.0, NULL, -1);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    assert_int_equal(job_ranks(b, "w"), 16);
    double slow[4] = {0};
    int found = 0;
    double t = 100;
    for (uint64_t s = 1; s <= 200; s++, t += 1) { /* restarted from step 1 with world 4 */
        if (s > 100)
            slow[2] = 0.27;
        step_all(b, t, "w", 4, s, 1.0, slow, -1);
        found += find_output(b, HN_OUT_FINDING, "straggler", NULL);
    }
    struct hn_job_view v;
    job_view(b, "w", &v);
    print_message("after the restart: ranks=%u nodes=%u interruptions=%u straggler findings=%d\n",
                  v.l.ranks, v.nodes, v.l.interruptions, found);
    assert_int_equal(v.l.interruptions, 1);
    assert_int_equal(v.l.ranks, 4);
    assert_int_equal(v.nodes, 1);
    assert_true(found > 0);
    /* The restart's loss was the 16-rank run's: charged at 16 GPUs. */
    assert_true(v.l.lost_s[HN_LOSS_OTHER] > 0);
    assert_near(v.lost_gpu_h[HN_LOSS_OTHER], v.l.lost_s[HN_LOSS_OTHER] * 16 / 3600, 1e-9);
    hn_brain_free(b);
}

/* A restored running 8-rank job whose reports carry no world: n1's agent frame (ranks 0-3, 20
 * steps) arrives before n2's. The job still has 8 ranks: without a world nothing is shed. */
static void restored_job_without_world_keeps_its_ranks(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    restore_running(b, "rr", 1000, 500, -1);
    assert_int_equal(job_ranks(b, "rr"), 8);
    double t = 1010;
    for (uint64_t s = 501; s <= 520; s++)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("rr", r, -1, s, 0.5);
            assert_int_equal(hn_brain_step(b, t + 0.5 * (double)(s - 501), 0, &in), 0);
        }
    struct hn_job_view v;
    job_view(b, "rr", &v);
    print_message("after n1's frame: ranks=%u nodes=%u\n", v.l.ranks, v.nodes);
    assert_int_equal(v.l.ranks, 8);
    hn_brain_free(b);
}

/* The same with a requeue of the same size (8 ranks, no world), restarted from step 1. */
static void requeued_same_size_without_world_keeps_its_ranks(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = 10;
    for (uint64_t s = 1; s <= 100; s++, t += 0.5)
        for (int r = 0; r < 8; r++) {
            struct hn_step_in in = report("q", r, -1, s, 0.5);
            assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
        }
    assert_int_equal(job_ranks(b, "q"), 8);
    t += 60; /* restarted from step 1 (no houston): n1's frame first, n2's 10 s later */
    for (uint64_t s = 1; s <= 20; s++)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("q", r, -1, s, 0.5);
            assert_int_equal(hn_brain_step(b, t + 0.5 * (double)s, 0, &in), 0);
        }
    struct hn_job_view v;
    job_view(b, "q", &v);
    print_message("after n1's frame of the new run: ranks=%u interruptions=%u\n", v.l.ranks,
                  v.l.interruptions);
    assert_int_equal(v.l.ranks, 8);
    hn_brain_free(b);
}

/* Job c: 16 ranks (4 a node, a cap of 4 a node, no scheduler), requeued with 4, then with 16
 * again, with a controller restart between the 4-rank run and the third when `restart`.
 * Returns how many of n4's ranks in the third run were refused before n2 and n3 report. */
static int regrown_refusals(int restart)
{
    struct hn_brain *b = fleet_cap(4, 4);
    double t = 10;
    for (uint64_t s = 1; s <= 50; s++, t += 1)
        step_all(b, t, "c", 16, s, 1.0, NULL, -1);
    t += 100;
    for (uint64_t s = 1; s <= 50; s++, t += 1)
        step_all(b, t, "c", 4, s, 1.0, NULL, -1);
    assert_int_equal(job_ranks(b, "c"), 4);
    if (restart) { /* the most ranks the job had is in its ledger */
        struct hn_job_view v;
        job_view(b, "c", &v);
        hn_brain_free(b);
        b = fleet_cap(4, 4);
        assert_int_equal(hn_brain_restore_job(b, &v.l), 0);
    }
    t += 100;
    struct hn_step_in in = report("c", 0, 16, 1, 1.0);
    assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
    int refused = 0;
    for (int r = 12; r < 16; r++) {
        in = report("c", r, 16, 1, 1.0);
        refused += hn_brain_step(b, t, 3, &in) == -ERANGE;
    }
    int warned = find_output(b, HN_OUT_FINDING, "step_rank_cap", NULL);
    print_message("run 3%s: n4's ranks refused: %d of 4, step_rank_cap findings %d\n",
                  restart ? " after a restart" : "", refused, warned);
    hn_brain_free(b);
    return refused;
}

static void regrown_job_reports_are_not_refused(void **state)
{
    (void)state;
    assert_int_equal(regrown_refusals(0), 0);
}

/* A 16-rank job (4 nodes) restarted smaller, from checkpoint 200 with 4 ranks on n1; n4's
 * agent then delivers the old run's step 501 (stamped before the restart), from ranks the
 * shed dropped: the report is dropped, so the job neither regrows to 16 nor jumps to step
 * 501, which made a false hang. */
static void late_old_run_report_after_the_shed_is_dropped(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (int n = 0; n < 4; n++)
        hn_brain_node_job(b, 0.5, n, "L");
    double t = 1;
    for (uint64_t s = 1; s <= 500; s++, t += 1)
        step_all(b, t, "L", 16, s, 1.0, NULL, s >= 200 ? 200 : -1);
    double old_end = t;
    t += 60;
    uint64_t s = 201;
    for (; s <= 215; s++, t += 1) /* the new run: 4 ranks on n1 */
        step_all(b, t, "L", 4, s, 1.0, NULL, 200);
    for (int r = 12; r < 16; r++) { /* n4's old-run step 301, delivered late */
        struct hn_step_in in = report("L", r, 16, 501, 1.0);
        assert_int_equal(hn_brain_step(b, old_end + 0.5, 3, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "L", &v);
    print_message("after the late report: ranks=%u step=%llu\n", v.l.ranks,
                  (unsigned long long)v.l.step);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    int hangs = 0;
    int unseen = 0, requeues = 0;
    for (; s <= 520; s++, t += 1) {
        step_all(b, t, "L", 4, s, 1.0, NULL, 200);
        if (s % 5 == 0) {
            for (int n = 0; n < 4; n++) /* every agent's frames keep coming */
                hn_brain_node_heard(b, t, n, t, 1);
            hn_brain_tick(b, t);
        }
        struct hn_out o;
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_ACTION)
                requeues++;
            else if (strcmp(o.finding.rule, "hang") == 0)
                hangs++;
            else if (strcmp(o.finding.rule, "hang_unseen") == 0)
                unseen++;
            if (o.kind != HN_OUT_ACTION)
                print_message("  t=%.0f step %llu: %s: %s\n", t, (unsigned long long)s,
                              o.finding.rule, o.finding.detail);
        }
    }
    job_view(b, "L", &v);
    print_message("productive_s=%.0f (the new run stepped %llu s) unseen=%d actions=%d\n",
                  v.l.productive_s, (unsigned long long)(s - 201), unseen, requeues);
    job_view(b, "L", &v);
    print_message("at step 520 of the new run: ranks=%u step=%llu state=%s hangs=%d "
                  "interruptions=%u\n",
                  v.l.ranks, (unsigned long long)v.l.step, v.state, hangs, v.l.interruptions);
    assert_int_equal(hangs, 0);
    assert_near(v.l.productive_s, 520, 2);
    hn_brain_free(b);
}

/* A 4-rank job (no world) requeued onto 8 ranks: n1's frame completes the first row (nothing
 * is shed), then n2's frame, whose first reports its agent received 0.2 s before n1's first
 * (agents' clocks, frames sent once a cycle): new ranks, not late reports of a shed rank. */
static void new_ranks_of_an_unshed_run_are_not_dropped(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = 10;
    for (uint64_t s = 1; s <= 100; s++, t += 1)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("ns", r, -1, s, 1.0);
            assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
        }
    t += 30; /* restarted from step 1 with 8 ranks, no world */
    for (uint64_t s = 1; s <= 10; s++)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report("ns", r, -1, s, 1.0);
            assert_int_equal(hn_brain_step(b, t + (double)s, 0, &in), 0);
        }
    assert_int_equal(job_ranks(b, "ns"), 4);
    struct hn_step_in in = report("ns", 4, -1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, t + 1 - 0.2, 1, &in), 0);
    print_message("ranks after n2's first report: %u\n", job_ranks(b, "ns"));
    assert_int_equal(job_ranks(b, "ns"), 5);
    hn_brain_free(b);
}

/* A restored 8-rank job (n1, n2) that Slurm restarted with 4 ranks on n1 while the controller
 * was away (checkpoint 300); n2's agent then delivers its backlog of the old run (step 500,
 * stamped before the restore): dropped, so the job neither regrows nor jumps to step 500 (a
 * false hang). */
static void restored_job_old_backlog_after_the_shed_is_dropped(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    restore_running(b, "rx", 1000, 500, 300);
    double t = 1600;
    uint64_t s = 301;
    for (; s <= 320; s++, t += 2) {
        hn_brain_node_job(b, t, 0, "rx");
        assert_int_equal(hn_brain_node_heard(b, t, 0, t, 1), 0);
        step_all(b, t, "rx", 4, s, 2.0, NULL, 300);
        hn_brain_tick(b, t);
    }
    assert_int_equal(job_ranks(b, "rx"), 4);
    for (int r = 4; r < 8; r++) {
        struct hn_step_in in = report("rx", r, 8, 500, 2.0);
        assert_int_equal(hn_brain_step(b, 999, 1, &in), 0);
    }
    print_message("after n2's backlog: ranks=%u\n", job_ranks(b, "rx"));
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    int hangs = 0;
    for (; s <= 500; s++, t += 2) {
        hn_brain_node_job(b, t, 0, "rx");
        assert_int_equal(hn_brain_node_heard(b, t, 0, t, 1), 0);
        step_all(b, t, "rx", 4, s, 2.0, NULL, 300);
        hn_brain_tick(b, t);
        hangs += find_output(b, HN_OUT_FINDING, "hang", NULL);
    }
    struct hn_job_view v;
    job_view(b, "rx", &v);
    print_message("ranks=%u hangs=%d interruptions=%u state=%s\n", v.l.ranks, hangs,
                  v.l.interruptions, v.state);
    assert_int_equal(hangs, 0);
    assert_int_equal(v.l.ranks, 4);
    hn_brain_free(b);
}

static void regrown_job_after_a_restore_is_not_refused(void **state)
{
    (void)state;
    assert_int_equal(regrown_refusals(1), 0);
}

/* A heterogeneous job: ranks 0-7 (n1,n2) report world 8 (their component's SLURM_NTASKS),
 * ranks 8-11 (n3) world 4. 100 steps, checkpoint 50; n1 fails. Returns the time after. */
static double het_run(struct hn_brain *b)
{
    double t = 1000;
    for (uint64_t s = 1; s <= 100; s++, t += 1)
        for (int r = 0; r < 12; r++) {
            struct hn_step_in in = report("H", r, r < 8 ? 8 : 4, s, 1.0);
            in.checkpoint = s >= 50 ? 50 : -1;
            assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
        }
    assert_int_equal(job_ranks(b, "H"), 12);
    hn_brain_xid(b, t, 0, 0, 79);
    return t + 60;
}

/* Its next run: n1's rank 0 (world 8) comes first; n3's agent, a cycle behind, then delivers
 * its ranks' step 51, received (stamped) half a second before. Of this run: kept. */
static void het_world_report_stamped_before_run_from_is_kept(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    double t = het_run(b);
    struct hn_step_in in = report("H", 0, 8, 51, 1.0);
    assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
    for (int r = 8; r < 12; r++) {
        in = report("H", r, 4, 51, 1.37);
        assert_int_equal(hn_brain_step(b, t - 0.5, 2, &in), 0);
    }
    const char *node;
    int gpu;
    double secs;
    assert_int_equal(hn_brain_job_rank(b, (size_t)hn_brain_find_job(b, "H"), 8, &node, &gpu, &secs),
                     0);
    print_message("rank 8 last secs %.2f (1.37 if kept)\n", secs);
    assert_near(secs, 1.37, 1e-9);
    hn_brain_free(b);
}

/* Its next run: n1, n2 step 51-53, n3's agent not yet delivered; n2 fails. The run had 12 GPUs. */
static void het_run_interrupted_early_charges_all_its_ranks(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(3);
    double t = het_run(b);
    for (uint64_t s = 51; s <= 53; s++, t += 1)
        for (int r = 0; r < 8; r++) {
            struct hn_step_in in = report("H", r, 8, s, 1.0);
            assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
        }
    struct hn_job_view v;
    job_view(b, "H", &v);
    double l1 = v.l.lost_s[HN_LOSS_FAILURE], g1 = v.l.lost_gpu_s[HN_LOSS_FAILURE];
    hn_brain_xid(b, t, 1, 0, 79); /* n2 fails */
    t += 600;
    for (int r = 0; r < 12; r++) {
        struct hn_step_in in = report("H", r, r < 8 ? 8 : 4, 51, 1.0);
        assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
    }
    job_view(b, "H", &v);
    double l2 = v.l.lost_s[HN_LOSS_FAILURE] - l1, g2 = v.l.lost_gpu_s[HN_LOSS_FAILURE] - g1;
    print_message("ranks=%u loss %.1f s %.1f GPU-s (x%.2f)\n", v.l.ranks, l2, g2, g2 / l2);
    assert_near(g2, l2 * 12, 1e-6);
    hn_brain_free(b);
}

/* Job id: 16 ranks on n1-n4 to step 500 (checkpoint 200, its end at *old_end), then a run of
 * 4 ranks (world 4) on n5 from step 201 to `to`, shed to 4. Returns the time after it. */
static double sixteen_then_four(struct hn_brain *b, const char *id, uint64_t to, double *old_end)
{
    double t = 1;
    for (uint64_t s = 1; s <= 500; s++, t += 1)
        step_all(b, t, id, 16, s, 1.0, NULL, s >= 200 ? 200 : -1);
    *old_end = t;
    t += 60;
    for (uint64_t s = 201; s <= to; s++, t += 1)
        for (int r = 0; r < 4; r++) {
            struct hn_step_in in = report(id, r, 4, s, 1.0);
            in.checkpoint = 200;
            assert_int_equal(hn_brain_step(b, t, 4, &in), 0);
        }
    assert_int_equal(job_ranks(b, id), 4);
    return t;
}

/* late_old_run_report_after_the_shed_is_dropped with the 4-rank run on a new node (n5): n1's
 * agent then delivers the old run's rank 0-3 reports (world 16, step 501, stamped before the
 * restart). Ranks the new run kept, but of another world, before the run began: dropped, so
 * the shed job does not regrow to 16. */
static void late_old_report_of_a_kept_rank_does_not_regrow_the_job(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    double old_end;
    (void)sixteen_then_four(b, "L", 215, &old_end);
    /* The shed job keeps its 16 ranks' arrays (it may grow back): its size says so. */
    size_t held = hn_brain_job_bytes(b, (size_t)hn_brain_find_job(b, "L"));
    struct hn_brain *fresh = fleet(5);
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report("L", r, 4, 1, 1.0);
        assert_int_equal(hn_brain_step(fresh, 1, 4, &in), 0);
    }
    size_t four = hn_brain_job_bytes(fresh, (size_t)hn_brain_find_job(fresh, "L"));
    print_message("16 ranks shed to 4: %zu bytes; a 4-rank job: %zu\n", held, four);
    assert_true(held >= four + 12 * sizeof(double) * 4); /* 12 more ranks' rows, ROWS >= 4 */
    hn_brain_free(fresh);
    for (int r = 0; r < 4; r++) { /* n1's old-run step 501, delivered late */
        struct hn_step_in in = report("L", r, 16, 501, 1.0);
        assert_int_equal(hn_brain_step(b, old_end + 0.5, 0, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "L", &v);
    print_message("after the late report: ranks=%u step=%llu\n", v.l.ranks,
                  (unsigned long long)v.l.step);
    assert_int_equal(v.l.ranks, 4);
    assert_true(v.l.step < 501);
    hn_brain_free(b);
}

/* A 16-rank job restarted with 4 ranks (world 4) on n5, shed to 4; n5 fails. n4's agent then
 * delivers the 16-rank run's backlog (stamped before the interruption): dropped as the ended
 * run's before it can regrow the waiting job to 16; after a controller restart the wait is
 * still charged at 4 GPUs. */
static void dropped_report_does_not_regrow_a_waiting_job(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    double old_end, t = sixteen_then_four(b, "W", 230, &old_end);
    hn_brain_xid(b, t, 4, 0, 79);   /* n5 fails */
    for (int r = 12; r < 16; r++) { /* n4's old-run backlog */
        struct hn_step_in in = report("W", r, 16, 501, 1.0);
        assert_int_equal(hn_brain_step(b, old_end + 0.5, 3, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "W", &v);
    print_message("waiting: state=%s ranks=%u ranks_high=%u\n", v.state, v.l.ranks, v.l.ranks_high);
    double l1 = v.l.lost_s[HN_LOSS_FAILURE], g1 = v.l.lost_gpu_s[HN_LOSS_FAILURE];
    hn_brain_free(b);
    b = fleet(5); /* the controller restarts */
    assert_int_equal(hn_brain_restore_job(b, &v.l), 0);
    t += 600;
    for (int r = 0; r < 4; r++) {
        struct hn_step_in in = report("W", r, 4, 201, 1.0);
        assert_int_equal(hn_brain_step(b, t, 0, &in), 0);
    }
    job_view(b, "W", &v);
    double l2 = v.l.lost_s[HN_LOSS_FAILURE] - l1, g2 = v.l.lost_gpu_s[HN_LOSS_FAILURE] - g1;
    print_message("the wait after the restore: %.1f s, %.1f GPU-s (x%.2f)\n", l2, g2, g2 / l2);
    assert_near(g2, l2 * 4, 1e-6);
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(late_report_of_the_run_before_a_restart_is_dropped),
        cmocka_unit_test(requeued_smaller_job_finds_its_straggler),
        cmocka_unit_test(restored_job_without_world_keeps_its_ranks),
        cmocka_unit_test(requeued_same_size_without_world_keeps_its_ranks),
        cmocka_unit_test(regrown_job_reports_are_not_refused),
        cmocka_unit_test(late_old_run_report_after_the_shed_is_dropped),
        cmocka_unit_test(new_ranks_of_an_unshed_run_are_not_dropped),
        cmocka_unit_test(restored_job_old_backlog_after_the_shed_is_dropped),
        cmocka_unit_test(regrown_job_after_a_restore_is_not_refused),
        cmocka_unit_test(het_world_report_stamped_before_run_from_is_kept),
        cmocka_unit_test(het_run_interrupted_early_charges_all_its_ranks),
        cmocka_unit_test(late_old_report_of_a_kept_rank_does_not_regrow_the_job),
        cmocka_unit_test(dropped_report_does_not_regrow_a_waiting_job),
        cmocka_unit_test(made_up_world_allocates_at_most_the_cap),
        cmocka_unit_test(rank_beyond_the_cap_is_refused),
        cmocka_unit_test(reports_from_another_user_are_refused),
        cmocka_unit_test(job_made_up_before_the_listing_starts_again),
        cmocka_unit_test(later_nodes_and_the_scheduler_raise_the_cap),
        cmocka_unit_test(normal_jobs_are_unaffected),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

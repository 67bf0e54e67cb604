/*
 * test_job_views.c - what the brain keeps of a job and shows of it: the job table (jobs_max,
 * memory that stays flat), the history saved to the store and restored, ledgers restored after
 * a controller restart, bad reports, and jobs that end when no scheduler lists them.
 */
#include "brain_fleet.h"

/* A ledger restored after a controller restart, of a job Slurm restarted meanwhile from an
 * earlier checkpoint: its reports behind the saved step advance it (no hang); the ledger's
 * step and productive time move on only past the saved step (the steps before are done
 * again). */
static void restored_job_restarted_from_an_earlier_checkpoint(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    restore_running(b, "rs", 1000, 500, 300);
    double t = run_steps(b, "rs", 1600, 301, 480);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "hang", NULL), 0);
    struct hn_job_view v;
    job_view(b, "rs", &v);
    assert_string_equal(v.state, "running");
    assert_int_equal((int)v.l.step, 500);
    assert_true(v.l.productive_s == 990);
    assert_true(v.hang_limit_s == 120); /* its rhythm is known again */
    run_steps(b, "rs", t, 481, 510);
    job_view(b, "rs", &v);
    assert_int_equal((int)v.l.step, 510);
    assert_near(v.l.productive_s, 1010, 1e-9);
    /* and a stop is a hang */
    assert_int_equal(wait_without_progress(b, "rs", t + 60, 130, 1), 1);
    hn_brain_free(b);
}

/* A ledger restored after a controller restart (step 500, checkpoint 300), and the job hangs
 * before it reports again; it comes back from checkpoint 300. Steps 301..500 are done again:
 * their first time is lost to the hang, not productive twice. A ledger saved with its work
 * since the checkpoint charges it at the hang; one from before that was saved (schema 7)
 * charges it when the next run says where it started, at that run's step time. */
static void restored_job_interrupted_before_it_reports_loses_its_redo(void **state)
{
    (void)state;
    for (int saved = 0; saved < 2; saved++) {
        struct hn_brain *b = fleet(2);
        struct hn_job_ledger l = {.ranks = 8,
                                  .first_seen = 10,
                                  .last_report = 1000,
                                  .step = 500,
                                  .checkpoint = 300,
                                  .productive_s = 990,
                                  .since_ckpt_s = saved ? 400 : 0};
        snprintf(l.id, sizeof(l.id), "rh");
        assert_int_equal(hn_brain_restore_job(b, &l), 0);
        assert_int_equal(wait_as(b, "rh", 1000, 3000, NULL, NULL), 1);
        const struct hn_job_ledger *kept =
            hn_brain_job_ledger(b, (size_t)hn_brain_find_job(b, "rh"));
        assert_true(kept->lost_s[HN_LOSS_HANG] == (saved ? 400 : 0));
        assert_true(kept->productive_s == (saved ? 590 : 990));
        run_steps(b, "rh", 4100, 301, 500);
        struct hn_job_view v;
        job_view(b, "rh", &v);
        assert_string_equal(v.state, "running");
        assert_int_equal((int)v.l.step, 500);
        /* 500 steps of kept progress: 990 s, and the hang has the redo and the wait. */
        assert_near(v.l.productive_s, 990, 1e-6);
        assert_near(v.l.lost_s[HN_LOSS_HANG], 400 + 4100 - 2 - 1000, 1e-6);
        hn_brain_free(b);
    }
}

/* A job no scheduler lists (none polled, or HOUSTON_JOB_ID outside Slurm) that falls silent
 * for longer than its hang limit (120 s: steps of 2 s) has ended, at its last report: its wall
 * time and ETTR stop there. Before, its wall time ran on for ever, its ETTR falling towards 0
 * (0.05 an hour after 20 steps), and it stayed "running". A report brings it back; one waiting
 * for its next run ends too, under a restart's limit (2,700 s). */
/* A job unlisted_end ended that a poll lists again has a silence houston did not watch as the
 * job's own: its next report must not learn it as a pause (as a report that brings it back
 * does not), or its hang limit grows to the hour it was silent. */
static void relisted_job_does_not_learn_its_silence(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        step_all(b, t, "u", 8, s, 2.0, NULL, (int64_t)(s / 10 * 10));
        hn_brain_tick(b, t);
    }
    double last = t - 2;
    hn_brain_tick(b, last + 3600);
    struct hn_job_view v;
    job_view(b, "u", &v);
    assert_string_equal(v.state, "ended");
    for (int i = 0; i < 2; i++)
        hn_brain_node_job(b, last + 3600, i, "u");
    job_view(b, "u", &v);
    assert_string_equal(v.state, "running");
    /* its next report before the controller's next tick */
    step_all(b, last + 3601, "u", 8, 21, 2.0, NULL, 20);
    job_view(b, "u", &v);
    assert_true(v.l.pause_s < 10 && v.hang_limit_s < 600);
    hn_brain_free(b);
}

static void unlisted_job_ends_when_silent(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    double t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        step_all(b, t, "u", 8, s, 2.0, NULL, (int64_t)(s / 10 * 10));
        hn_brain_tick(b, t);
    }
    double last = t - 2;
    struct hn_job_view v;
    hn_brain_tick(b, last + 120);
    job_view(b, "u", &v);
    assert_string_equal(v.state, "running");
    hn_brain_tick(b, last + 121);
    hn_brain_tick(b, last + 3600);
    job_view(b, "u", &v);
    assert_string_equal(v.state, "ended");
    assert_true(v.l.last_report == last);
    assert_near(v.wall_s, last - v.l.first_seen, 1e-9);
    double ettr = v.ettr;
    assert_true(ettr > 0.9);
    /* Back: it runs on, the silence in its wall time. */
    step_all(b, last + 3600, "u", 8, 21, 2.0, NULL, 20);
    job_view(b, "u", &v);
    assert_string_equal(v.state, "running");
    assert_true(v.ettr < 0.1);
    hn_brain_free(b);

    /* Interrupted (Xid 79 on n2), it never runs again: its wait ends at its last report. */
    b = fleet(2);
    t = 0;
    for (uint64_t s = 1; s <= 20; s++, t += 2) {
        step_all(b, t, "w", 8, s, 2.0, NULL, (int64_t)(s / 10 * 10));
        hn_brain_tick(b, t);
    }
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    hn_brain_tick(b, t + 2690);
    job_view(b, "w", &v);
    assert_string_equal(v.state, "restarting");
    hn_brain_tick(b, t + 3000);
    job_view(b, "w", &v);
    assert_string_equal(v.state, "ended");
    assert_near(v.wall_s, t - 2 - v.l.first_seen, 1e-9);
    hn_brain_free(b);
}

/* A job ended for its silence (unlisted_end) that a scheduler poll then lists is not over:
 * a controller restarted after a running job hung (its ledger restored, no poll yet, so no
 * job is listed) ended it at its first tick; the poll that lists it running a moment later
 * must bring it back, so that the hang is found. Before, it stayed "ended" for ever, listed
 * running by Slurm and never checked for hangs. */
static void silent_end_of_a_job_the_scheduler_lists_is_undone(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(2);
    restore_running(b, "rh", 1000, 100, 90);
    hn_brain_tick(b, 4000); /* silent for 3,000 s: longer than a restored job's limit */
    struct hn_job_view v;
    job_view(b, "rh", &v);
    assert_string_equal(v.state, "ended");
    /* The first poll lists it running on n1 and n2, whose agents send frames: hung. */
    assert_int_equal(wait_as(b, "rh", 4000, 3000, NULL, NULL), 1);
    job_view(b, "rh", &v);
    assert_string_equal(v.state, "hung");
    assert_true(v.l.productive_s + v.l.lost_s[HN_LOSS_HANG] <= v.wall_s + 1e-9);
    hn_brain_free(b);
}

/* The job's history reaches the store a point at a time, all of it again when it is thinned,
 * and comes back after a restart (thinned as the brain would have, if longer than it keeps). */
static void history_is_saved_and_restored(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    const struct hn_job_point *p;
    size_t n;
    int replace;
    double t = 1000;
    uint64_t s = 1;
    for (; s <= 10; s++, t += 60)
        step_all(b, t, "hs", 4, s, 1.0, NULL, -1);
    size_t i = (size_t)hn_brain_find_job(b, "hs");
    assert_int_equal(hn_brain_job_points_unsaved(b, i, &p, &n, &replace), 0);
    assert_int_equal(n, 10);
    assert_int_equal(replace, 0);
    assert_true(p[0].time == 1000 && p[9].time == 1540);
    hn_brain_job_points_saved(b, i);
    assert_int_equal(hn_brain_job_points_unsaved(b, i, &p, &n, &replace), 0);
    assert_int_equal(n, 0);
    for (; s <= 13; s++, t += 60)
        step_all(b, t, "hs", 4, s, 1.0, NULL, -1);
    assert_int_equal(hn_brain_job_points_unsaved(b, i, &p, &n, &replace), 0);
    assert_true(n == 3 && !replace && p[0].time == 1600);
    hn_brain_job_points_saved(b, i);
    /* Past 512 points the history keeps every other one: saved anew, whole. */
    for (; s <= 520; s++, t += 60)
        step_all(b, t, "hs", 4, s, 1.0, NULL, -1);
    assert_int_equal(hn_brain_job_points_unsaved(b, i, &p, &n, &replace), 0);
    assert_true(replace && n > 256 && n < 300);
    assert_int_equal(hn_brain_job_points_unsaved(b, 99, &p, &n, &replace), -EINVAL);
    hn_brain_free(b);

    /* Restored: 1,000 saved points become every other one, from the second. */
    b = fleet(1);
    restore_running(b, "hs", 5000, 100, 50);
    struct hn_job_point saved[1000];
    for (int k = 0; k < 1000; k++)
        saved[k] = (struct hn_job_point){1000 + 60.0 * k, 0.4, 0.9, 2.0};
    assert_int_equal(hn_brain_restore_points(b, "nope", saved, 1000), -ENOENT);
    assert_int_equal(hn_brain_restore_points(b, "hs", saved, 1000), 0);
    struct hn_job_view v;
    job_view(b, "hs", &v);
    assert_int_equal(v.nseries, 500);
    assert_true(v.series[0].time == 1060 && v.series[499].time == 1000 + 60.0 * 999);
    i = (size_t)hn_brain_find_job(b, "hs");
    assert_int_equal(hn_brain_job_points_unsaved(b, i, &p, &n, &replace), 0);
    assert_true(replace && n == 500); /* the store gets the thinned history */
    /* 1,025: every other one, back from the newest (the oldest goes). Before, from the
     * second on, and the newest was lost. */
    hn_brain_free(b);
    b = fleet(1);
    restore_running(b, "hs", 5000, 100, 50);
    struct hn_job_point more[1025];
    for (int k = 0; k < 1025; k++)
        more[k] = (struct hn_job_point){1000 + 60.0 * k, 0.4, 0.9, 2.0};
    assert_int_equal(hn_brain_restore_points(b, "hs", more, 1025), 0);
    job_view(b, "hs", &v);
    assert_int_equal(v.nseries, 512);
    assert_true(v.series[511].time == 1000 + 60.0 * 1024 && v.series[0].time == 1000 + 60.0 * 2);
    /* 100 points: kept as they are, nothing to save again. */
    hn_brain_free(b);
    b = fleet(1);
    restore_running(b, "hs", 5000, 100, 50);
    assert_int_equal(hn_brain_restore_points(b, "hs", saved, 100), 0);
    job_view(b, "hs", &v);
    assert_int_equal(v.nseries, 100);
    assert_int_equal(hn_brain_job_points_unsaved(b, 0, &p, &n, &replace), 0);
    assert_true(n == 0 && !replace);
    hn_brain_free(b);
}

/* The job table holds jobs_max jobs, found by id through a hash that stays right as jobs
 * are forgotten (the slots after a forgotten one move down): the one whose last report is
 * oldest goes (ended ones before it: test_control_clock's forgotten_job_is_reloaded). */
static void job_table_keeps_jobs_max(void **state)
{
    (void)state;
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.jobs_max = 16;
    struct hn_brain *b = fleet_from(&cfg, 2, NULL);
    char id[16];
    /* 40 jobs, each reporting once, and job t3 again and again: it stays. */
    for (int k = 0; k < 40; k++) {
        snprintf(id, sizeof(id), "t%d", k);
        struct hn_step_in in = report(id, 0, 1, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 1 + k, 0, &in), 0);
        if (k >= 3) {
            in = report("t3", 0, 1, (uint64_t)k, 1.0);
            assert_int_equal(hn_brain_step(b, 1 + k, 0, &in), 0);
        }
        assert_true(hn_brain_job_count(b) <= 16);
        for (int m = k; m > k - 15 && m >= 0; m--) { /* the 15 latest are all there */
            snprintf(id, sizeof(id), "t%d", m);
            int i = hn_brain_find_job(b, id);
            assert_true(i >= 0);
            assert_string_equal(hn_brain_job_ledger(b, (size_t)i)->id, id);
        }
    }
    assert_int_equal(hn_brain_job_count(b), 16);
    assert_true(hn_brain_find_job(b, "t3") >= 0);
    assert_true(hn_brain_find_job(b, "t0") < 0);
    assert_true(hn_brain_find_job(b, "t24") < 0);
    assert_true(hn_brain_find_job(b, "t25") >= 0);
    for (size_t i = 0; i < hn_brain_job_count(b); i++) /* every slot found by its own id */
        assert_int_equal(hn_brain_find_job(b, hn_brain_job_ledger(b, i)->id), (int)i);
    /* Many more, reporting in a scrambled order (probe chains of a 32-slot index wrap and
     * collide; a forgotten job's entry leaves its chain whole): after each, every slot is
     * found by its own id, and the job forgotten last is not found. */
    for (unsigned k = 0; k < 400; k++) {
        snprintf(id, sizeof(id), "s%u", (k * 7919u) % 97u + 100u * (k / 97u));
        struct hn_step_in in = report(id, 0, 1, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 100 + k, 0, &in), 0);
        assert_int_equal(hn_brain_job_count(b), 16);
        for (size_t i = 0; i < 16; i++)
            assert_int_equal(hn_brain_find_job(b, hn_brain_job_ledger(b, i)->id), (int)i);
        assert_true(hn_brain_find_job(b, id) >= 0);
    }
    assert_true(hn_brain_find_job(b, "t25") < 0);
    hn_brain_free(b);
}

static void memory_stays_flat_over_a_long_job(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    /* A week of 1 s steps, reported by one rank. */
    for (uint64_t s = 1; s <= 7 * 86400; s += 1) {
        struct hn_step_in in = report("long", 0, 1, s, 1.0);
        assert_int_equal(hn_brain_step(b, (double)s, 0, &in), 0);
    }
    struct hn_job_view v;
    job_view(b, "long", &v);
    assert_true(v.nseries <= 512 && v.nseries >= 256);
    assert_true(v.series[v.nseries - 1].time > 6 * 86400);
    assert_near(v.ettr, 1, 1e-6);
    hn_brain_free(b);
}

static void restore_and_bad_reports(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(1);
    struct hn_job_ledger l = {.id = "old",
                              .ranks = 8,
                              .first_seen = 10,
                              .last_report = 20,
                              .step = 5,
                              .checkpoint = 4,
                              .productive_s = 9,
                              .ended = 1};
    l.lost_s[HN_LOSS_HANG] = 1;
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
    assert_int_equal(hn_brain_restore_job(b, &l), -EEXIST);
    struct hn_job_view v;
    job_view(b, "old", &v);
    assert_string_equal(v.state, "ended");
    assert_near(v.ettr, 0.9, 1e-9);
    struct hn_step_in in = report("", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    in = report("x", 0, 1, 1, NAN);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    /* A step of more than a day is no step time (1e308 made lost GPU time overflow). */
    in = report("x", 0, 1, 1, 86400.5);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    in = report("x", 0, 1, 1, 1e308);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    in = report("x", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 1, 7, &in), -EINVAL);
    in.rank = 1 << 21;
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    /* The longest id a client sends (HN_STEP_JOB_MAX bytes, e.g. a UUID-named job outside
     * Slurm) is kept whole; one byte more cannot come from a client and is refused. */
    char id[HN_STEP_JOB_MAX + 2];
    memset(id, 'j', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    in = report(id, 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), -EINVAL);
    id[HN_STEP_JOB_MAX] = '\0';
    in = report(id, 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 1, 0, &in), 0);
    job_view(b, id, &v);
    assert_string_equal(v.l.id, id);
    hn_brain_free(b);
}

/* Job ids made up on the last node of a large fleet: each job's node table follows its own
 * nodes, not the fleet's; so does a job requeued onto a new node every run, whose rank cap
 * counts only its run's reporting nodes. */
static void job_memory_follows_its_nodes_not_the_fleet(void **state)
{
    (void)state;
    const int nodes = 20000;
    struct hn_brain *b = fleet(nodes);
    struct hn_step_in in = report("m", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 10, nodes - 1, &in), 0);
    int i = hn_brain_find_job(b, "m");
    size_t one = hn_brain_job_bytes(b, (size_t)i);
    print_message("a one-rank job on node %d of %d: %zu bytes\n", nodes - 1, nodes, one);
    assert_true(one < 24 * 1024);
    /* 500 runs, each restarted from step 1 on the next node, reporting 64 ranks. */
    double t = 20;
    for (int run = 0; run < 500; run++) {
        for (uint64_t st = 1; st <= 2; st++, t += 1) {
            for (int r = 0; r < 64; r++) {
                in = report("m", r, 64, st, 1.0);
                assert_int_equal(hn_brain_step(b, t, nodes - 1 - run, &in), 0);
            }
        }
    }
    size_t after = hn_brain_job_bytes(b, (size_t)i);
    struct hn_job_view v;
    job_view(b, "m", &v);
    print_message("after %u restarts on new nodes: %zu bytes, %u nodes\n", v.l.interruptions, after,
                  v.nodes);
    assert_int_equal(v.l.interruptions, 499);
    assert_int_equal(v.nodes, 1);
    /* 64 ranks' row buffers and rank state (96 B a rank; 128 allowed), not a node table entry
     * for each of the 500 nodes (6,000 B more would fail this). */
    assert_true(after < one + 64 * (sizeof(double) * 8 + 128) + 1024);
    /* Its cap is its run's one node's 64 ranks, not 64 for each of the 500 nodes it touched. */
    in = report("m", 64, 65, 3, 1.0);
    assert_int_equal(hn_brain_step(b, t, nodes - 500, &in), -ERANGE);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    hn_brain_free(b);
}

/* The jobs to save are a list in the order they changed: a job saved leaves it, one that
 * changes again comes back once, and an evicted job is never named. */
static void changed_jobs_are_a_list(void **state)
{
    (void)state;
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.jobs_max = 16;
    struct hn_brain *b = fleet_from(&cfg, 2, NULL);
    size_t idx[32];
    assert_int_equal(hn_brain_jobs_changed(b, idx, 32), 0);
    struct hn_step_in a = report("a", 0, 1, 1, 1.0), c = report("c", 0, 1, 1, 1.0);
    assert_int_equal(hn_brain_step(b, 10, 0, &c), 0);
    assert_int_equal(hn_brain_step(b, 11, 0, &a), 0);
    assert_int_equal(hn_brain_step(b, 12, 0, &c), 0); /* changed again: still once */
    assert_int_equal(hn_brain_jobs_changed(b, idx, 32), 2);
    assert_int_equal(idx[0], (size_t)hn_brain_find_job(b, "c"));
    assert_int_equal(idx[1], (size_t)hn_brain_find_job(b, "a"));
    /* A caller with room for one learns how many there are. */
    assert_int_equal(hn_brain_jobs_changed(b, idx, 1), 2);
    assert_int_equal(hn_brain_job_dirty(b, idx[0], 1), 1); /* "c" saved */
    assert_int_equal(hn_brain_jobs_changed(b, idx, 32), 1);
    assert_int_equal(idx[0], (size_t)hn_brain_find_job(b, "a"));
    c.step = 2;
    assert_int_equal(hn_brain_step(b, 13, 0, &c), 0);
    assert_int_equal(hn_brain_jobs_changed(b, idx, 32), 2);
    assert_int_equal(idx[1], (size_t)hn_brain_find_job(b, "c"));
    /* Sixteen more jobs push "a" and "c" out of the table: the list names only jobs it has. */
    char id[8];
    for (int k = 0; k < 16; k++) {
        snprintf(id, sizeof(id), "n%d", k);
        struct hn_step_in n = report(id, 0, 1, 1, 1.0);
        assert_int_equal(hn_brain_step(b, 20 + k, 0, &n), 0);
    }
    assert_true(hn_brain_find_job(b, "a") < 0 && hn_brain_find_job(b, "c") < 0);
    size_t n = hn_brain_jobs_changed(b, idx, 32);
    assert_int_equal(n, 16);
    for (size_t k = 0; k < n; k++) {
        snprintf(id, sizeof(id), "n%zu", k);
        assert_int_equal(idx[k], (size_t)hn_brain_find_job(b, id));
    }
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unlisted_job_ends_when_silent),
        cmocka_unit_test(silent_end_of_a_job_the_scheduler_lists_is_undone),
        cmocka_unit_test(relisted_job_does_not_learn_its_silence),
        cmocka_unit_test(job_table_keeps_jobs_max),
        cmocka_unit_test(restored_job_restarted_from_an_earlier_checkpoint),
        cmocka_unit_test(restored_job_interrupted_before_it_reports_loses_its_redo),
        cmocka_unit_test(memory_stays_flat_over_a_long_job),
        cmocka_unit_test(job_memory_follows_its_nodes_not_the_fleet),
        cmocka_unit_test(history_is_saved_and_restored),
        cmocka_unit_test(restore_and_bad_reports),
        cmocka_unit_test(changed_jobs_are_a_list),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

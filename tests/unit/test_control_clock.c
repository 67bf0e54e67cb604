/*
 * test_control_clock.c - the controller puts each agent's times in its own clock before the
 * brain sees them (control.c, agent_clock): agents whose clocks are off, by the same or by
 * different amounts, neither make a hang nor hide one (docs/jobs.md, "Hangs"); and a job the
 * brain forgot (more jobs than jobs-max) gets its saved ledger back when it reports again.
 * Frames go through hn_control_ingest as the HTTP handler would give them.
 */
#include "common/frame.h"
#include "control/control.h"
#include "control_fleet.h"
#include "testutil.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A fleet of n1 and n2 whose controller keeps at most jobs_max jobs (0: the default) and, when
 * squeue is not NULL, polls Slurm through that program (scontrol: /bin/false). */
static void fleet_open_sched(struct fleet *f, const char *name, size_t jobs_max, const char *squeue)
{
    fleet_config(f, name);
    if (jobs_max)
        f->c.cfg.brain.jobs_max = jobs_max;
    if (squeue) {
        hn_strlcpy(f->c.cfg.scheduler, "slurm", sizeof(f->c.cfg.scheduler));
        hn_strlcpy(f->c.cfg.squeue, squeue, sizeof(f->c.cfg.squeue));
        hn_strlcpy(f->c.cfg.scontrol, "/bin/false", sizeof(f->c.cfg.scontrol));
    }
    fleet_start(f);
}

static void fleet_open_max(struct fleet *f, const char *name, size_t jobs_max)
{
    fleet_open_sched(f, name, jobs_max, NULL);
}

static void fleet_open(struct fleet *f, const char *name)
{
    fleet_open_max(f, name, 0);
}

/* Node n (0: n1, 1: n2) sends a frame that arrives at now, collected by an agent whose clock
 * is `behind` seconds slow; with step > 0, four ranks of job `job` (ranks 4n..4n+3 of 8)
 * report it, received half a second before collection; with util >= 0, its four GPUs'
 * utilisation is that. */
static void frame_util(struct fleet *f, const char *job, int n, double now, double behind,
                       uint64_t step, double util)
{
    double collected = now - behind;
    struct hn_frame_writer w;
    hn_frame_begin(&w, &f->buf, 7, ++f->seq[n], (uint64_t)(collected * 1e9));
    hn_frame_node(&w, n ? "n2" : "n1", 4, "H100");
    for (unsigned g = 0; util >= 0 && g < 4; g++)
        hn_frame_sample(&w, g, HN_F_GPU_UTIL, util);
    for (unsigned r = 0; step && r < 4; r++) {
        struct hn_frame_step s = {
            .job = {job, strlen(job)},
            .rank = 4 * (unsigned)n + r,
            .local_rank = r,
            .world = 8,
            .gpu = r,
            .step = step,
            .time_ns = (uint64_t)((collected - 0.5) * 1e9),
            .seconds = 2,
            .tokens = NAN,
            .forward_s = NAN,
            .backward_s = NAN,
            .optimizer_s = NAN,
            .comm_s = NAN,
            .checkpoint = HN_FRAME_NO_U64,
            .tflops = NAN,
            .flops_per_token = NAN,
            .uid = 0,
        };
        hn_frame_step(&w, &s);
    }
    assert_int_equal(hn_frame_end(&w), 0);
    char err[256] = "";
    assert_int_equal(hn_control_ingest(&f->c, f->buf.data, f->buf.len, now, err, sizeof(err)), 200);
}

static void frame_of(struct fleet *f, const char *job, int n, double now, double behind,
                     uint64_t step)
{
    frame_util(f, job, n, now, behind, step, -1);
}

static void frame(struct fleet *f, int n, double now, double behind, uint64_t step)
{
    frame_of(f, "j", n, now, behind, step);
}

/* Job "j" as the brain shows it. */
static void view(struct fleet *f, struct hn_job_view *v)
{
    int i = hn_brain_find_job(f->c.brain, "j");
    assert_true(i >= 0);
    assert_int_equal(hn_brain_job_view(f->c.brain, (size_t)i, v), 0);
}

/* Both nodes run job "j" (the scheduler's poll) and their agents send a frame every 2 s with
 * n1's clock behind by b1 and n2's by b2, the job advancing a step each time while steps are
 * below `until`; from t for secs seconds. Returns the time after and counts the job's hung
 * states seen. */
static double run(struct fleet *f, double t, double secs, double b1, double b2, uint64_t *step,
                  uint64_t until, int *hung)
{
    for (double end = t + secs; t < end; t += 2) {
        for (int n = 0; n < 2; n++)
            hn_brain_node_job(f->c.brain, t, n, "j");
        uint64_t s = *step < until ? ++*step : 0;
        frame(f, 0, t, b1, s);
        frame(f, 1, t + 0.01, b2, s);
        hn_control_tick(&f->c, t + 0.02);
        struct hn_job_view v;
        view(f, &v);
        *hung += strcmp(v.state, "hung") == 0 || v.l.interruptions > 0;
    }
    return t;
}

static void clocks_off_make_no_hang_and_hide_none(void **state)
{
    (void)state;
    static const struct {
        double b1, b2;
    } skews[] = {{0, 0}, {1000, 1000}, {300, 0}, {0, 300}, {3000, 20}};
    for (size_t k = 0; k < sizeof(skews) / sizeof(skews[0]); k++) {
        struct fleet f;
        char name[32];
        snprintf(name, sizeof(name), "skew%zu", k);
        fleet_open(&f, name);
        double t = 1.7e9;
        uint64_t step = 0;
        int hung = 0;
        /* Ten minutes of steps: no hang, and no time without progress to speak of. */
        t = run(&f, t, 600, skews[k].b1, skews[k].b2, &step, UINT64_MAX, &hung);
        assert_int_equal(hung, 0);
        struct hn_job_view v;
        view(&f, &v);
        assert_true(v.no_progress_s < 5);
        assert_true(v.hang_limit_s == 120);
        /* The job stops: no hang within 110 s of its last step, a hang by 130 s. */
        uint64_t last = step;
        t = run(&f, t, 110, skews[k].b1, skews[k].b2, &step, last, &hung);
        assert_int_equal(hung, 0);
        t = run(&f, t, 20, skews[k].b1, skews[k].b2, &step, last, &hung);
        assert_true(hung > 0);
        fleet_close(&f);
    }
}

/* A collective hang in which n2's GPUs go idle while n1's spin in NCCL: n2 is the culprit
 * (docs/jobs.md, "Hangs", by=idle_gpus), whatever the agents' clocks say. Before, an agent
 * 300 s slow had its samples taken as older than the last progress, and no node was named. */
static void idle_culprit_whatever_the_clocks(void **state)
{
    (void)state;
    static const struct {
        double b1, b2;
    } skews[] = {{0, 0}, {0, 300}, {300, 0}, {-200, 300}};
    for (size_t k = 0; k < HN_ARRAY_LEN(skews); k++) {
        struct fleet f;
        char name[32];
        snprintf(name, sizeof(name), "idle%zu", k);
        fleet_open(&f, name);
        double t = 1.7e9;
        uint64_t step = 0;
        for (int i = 0; i < 300; i++, t += 2) { /* ten minutes of steps, every GPU busy */
            for (int n = 0; n < 2; n++)
                hn_brain_node_job(f.c.brain, t, n, "j");
            ++step;
            frame_util(&f, "j", 0, t, skews[k].b1, step, 100);
            frame_util(&f, "j", 1, t + 0.01, skews[k].b2, step, 100);
            hn_control_tick(&f.c, t + 0.02);
        }
        for (int i = 0; i < 75; i++, t += 2) { /* stuck: n1 spins, n2 idle */
            for (int n = 0; n < 2; n++)
                hn_brain_node_job(f.c.brain, t, n, "j");
            frame_util(&f, "j", 0, t, skews[k].b1, 0, 100);
            frame_util(&f, "j", 1, t + 0.01, skews[k].b2, 0, 0);
            hn_control_tick(&f.c, t + 0.02);
        }
        struct hn_job_view v;
        view(&f, &v);
        struct hn_node_view nv;
        assert_int_equal(hn_brain_node_view(f.c.brain, 1, &nv), 0);
        if (strcmp(v.state, "hung") != 0 || nv.state != HN_NODE_DRAINING)
            fail_msg("clocks %g / %g s behind: job %s, n2 not drained", skews[k].b1, skews[k].b2,
                     v.state);
        fleet_close(&f);
    }
}

/* A controller cut off from both nodes for 90 minutes while the job runs, a step every 30 s:
 * the agents' queues hold everything and send it when the link is back. Frames collected more
 * than an hour before they arrive are put an hour back, which says nothing of the time before:
 * no hang while the backlog is read, and none after. */
static void long_outage_backlog_is_no_hang(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "outage");
    double t = 1.7e9;
    uint64_t step = 0;
    int hung = 0;
    t = run(&f, t, 600, 0, 0, &step, UINT64_MAX, &hung);
    assert_int_equal(hung, 0);
    /* Collected every 2 s during the outage; a step in every 15th frame. */
    double cut = t, back = t + 5400;
    double now = back;
    uint64_t k = 0;
    for (double c = cut; c < back; c += 2, k++, now += 0.02) {
        uint64_t s = k % 15 == 14 ? ++step : 0;
        for (int n = 0; n < 2; n++) {
            hn_brain_node_job(f.c.brain, now, n, "j");
            frame(&f, n, now, now - c, s);
        }
        if (k % 10 == 0)
            hn_control_tick(&f.c, now + 0.01);
        struct hn_job_view v;
        view(&f, &v);
        hung += strcmp(v.state, "hung") == 0 || v.l.interruptions > 0;
    }
    assert_int_equal(hung, 0);
    /* Live again, the job steps on. */
    t = run(&f, now, 600, 0, 0, &step, UINT64_MAX, &hung);
    assert_int_equal(hung, 0);
    fleet_close(&f);
}

/* In a controller that keeps 16 jobs, job "j" runs 10 steps and is interrupted (a failure of
 * n2: it waits for its next run); then 20 other jobs report and "j" is forgotten. Its ledger
 * as it was before it was forgotten goes to *before; returns the time after. */
static double forget_j(struct fleet *f, struct hn_job_view *before)
{
    double t = 100;
    for (uint64_t s = 1; s <= 10; s++, t += 2) {
        frame(f, 0, t, 0, s);
        frame(f, 1, t + 0.01, 0, s);
        hn_control_tick(&f->c, t + 0.02);
    }
    hn_brain_xid(f->c.brain, t, 1, 0, 79);
    hn_control_tick(&f->c, t + 0.5);
    view(f, before);
    assert_int_equal(before->l.interruptions, 1);
    assert_true(before->l.first_seen < 100 && before->l.lost_s[HN_LOSS_FAILURE] > 0);
    char id[16];
    for (int k = 0; k < 20; k++, t += 1) {
        snprintf(id, sizeof(id), "other%d", k);
        frame_of(f, id, 0, t, 0, 1);
        hn_control_tick(&f->c, t + 0.5);
    }
    assert_true(hn_brain_find_job(f->c.brain, "j") < 0);
    assert_int_equal(f->c.jobs_reloaded, 0);
    return t;
}

/* When a forgotten job reports again its saved ledger comes back (first report,
 * interruption, lost time, history) instead of a new ledger written over the saved one. */
static void forgotten_job_is_reloaded(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open_max(&f, "forgot", 16);
    struct hn_job_view before;
    double t = forget_j(&f, &before);
    frame(&f, 0, t + 60, 0, 11);
    hn_control_tick(&f.c, t + 60.5);
    struct hn_job_view after;
    view(&f, &after);
    assert_int_equal(f.c.jobs_reloaded, 1);
    assert_true(after.l.first_seen == before.l.first_seen);
    assert_int_equal(after.l.interruptions, 1);
    assert_true(after.l.lost_s[HN_LOSS_FAILURE] >= before.l.lost_s[HN_LOSS_FAILURE]);
    assert_true(after.l.productive_s >= before.l.productive_s);
    assert_true(after.nseries >= before.nseries && after.nseries > 0);
    assert_int_equal((int)after.l.step, 11);
    uint64_t seq = f.seq[0]; /* the agent goes on numbering its frames */
    fleet_close(&f);

    /* After a restart the controller loads 16 of the 21 jobs (j, waiting, and the newest);
     * other0, not loaded, gets its ledger back at its next report all the same. */
    fleet_open_max(&f, "forgot", 16);
    f.seq[0] = seq;
    assert_true(hn_brain_find_job(f.c.brain, "j") >= 0);
    assert_true(hn_brain_find_job(f.c.brain, "other0") < 0);
    frame_of(&f, "other0", 0, t + 120, 0, 2);
    assert_int_equal(f.c.job_reads, 1);
    assert_int_equal(f.c.jobs_reloaded, 1);
    int i = hn_brain_find_job(f.c.brain, "other0");
    assert_true(i >= 0);
    assert_true(hn_brain_job_ledger(f.c.brain, (size_t)i)->first_seen < t);
    fleet_close(&f);
}

/* A job waiting for its next run reports nothing, so it is the first a full table forgets;
 * the scheduler's poll listing it brings its ledger back, and it is watched again (before,
 * only a report did, and a job that never reports again was never checked for a hang at
 * start). squeue is a script that lists "j" queued (PD), and two jobs that report no steps. */
static void forgotten_waiting_job_is_reloaded_by_the_poll(void **state)
{
    (void)state;
    char squeue[PATH_MAX];
    snprintf(squeue, sizeof(squeue), "%s/squeue-pd", tu_tmpdir());
    tu_write_file(squeue, "#!/bin/sh\necho 'j j 0 PD 1:00:00 '\n"
                          "echo 'cpu1 cpu1 0 R 1:00:00 n1'\necho 'cpu2 cpu2 0 PD 1:00:00 '\n");
    assert_int_equal(chmod(squeue, 0755), 0);
    struct fleet f;
    fleet_open_sched(&f, "polled", 16, squeue);
    struct hn_job_view before;
    double t = forget_j(&f, &before);
    hn_control_poll(&f.c, t + 1);
    assert_int_equal(f.c.jobs_reloaded, 1);
    /* Jobs that never reported (cpu1, cpu2) cost no store read, poll after poll. */
    assert_int_equal(f.c.job_reads, 1);
    hn_control_poll(&f.c, t + 2);
    assert_int_equal(f.c.job_reads, 1);
    struct hn_job_view v;
    view(&f, &v);
    assert_string_equal(v.state, "restarting");
    assert_int_equal(v.l.interruptions, 1);
    fleet_close(&f);
}

/* A squeue that fails (here: exits 1, as when slurmctld does not answer) changes nothing: the
 * job it listed is not taken for ended, only counted as a failed poll; the next poll that works
 * is counted too, and a job it no longer lists has ended. */
static void failed_poll_keeps_the_lists(void **state)
{
    (void)state;
    const char *dir = tu_tmpdir();
    char squeue[PATH_MAX], fail_flag[PATH_MAX], gone_flag[PATH_MAX], script[3 * PATH_MAX];
    snprintf(squeue, sizeof(squeue), "%s/squeue-flaky", dir);
    snprintf(fail_flag, sizeof(fail_flag), "%s/squeue-fails", dir);
    snprintf(gone_flag, sizeof(gone_flag), "%s/squeue-gone", dir);
    snprintf(script, sizeof(script),
             "#!/bin/sh\n"
             "if [ -e %s ]; then echo 'slurm_load_jobs error: Socket timed out' >&2; exit 1; fi\n"
             "[ -e %s ] || echo 'j j 0 R 1:00:00 n1,n2'\n",
             fail_flag, gone_flag);
    tu_write_file(squeue, script);
    assert_int_equal(chmod(squeue, 0755), 0);
    struct fleet f;
    fleet_open_sched(&f, "flaky", 0, squeue);
    double t = 100;
    for (uint64_t s = 1; s <= 5; s++, t += 2) {
        hn_control_poll(&f.c, t);
        frame(&f, 0, t + 0.1, 0, s);
        frame(&f, 1, t + 0.11, 0, s);
        hn_control_tick(&f.c, t + 0.2);
    }
    assert_int_equal(f.c.polls_ok, 5);
    assert_int_equal(f.c.polls_failed, 0);
    struct hn_job_view v;
    view(&f, &v);
    assert_string_equal(v.state, "running");

    tu_write_file(fail_flag, "");
    hn_control_poll(&f.c, t);
    hn_control_poll(&f.c, t + 1);
    hn_control_tick(&f.c, t + 1.1);
    assert_int_equal(f.c.polls_failed, 2);
    assert_int_equal(f.c.polls_ok, 5);
    view(&f, &v);
    assert_string_equal(v.state, "running");

    assert_int_equal(unlink(fail_flag), 0);
    tu_write_file(gone_flag, "");
    hn_control_poll(&f.c, t + 2);
    hn_control_tick(&f.c, t + 2.1);
    assert_int_equal(f.c.polls_ok, 6);
    view(&f, &v);
    assert_string_equal(v.state, "ended");
    fleet_close(&f);
}

/* Runs one SQL statement on the database at path, as another program would. */
static void sql(const char *path, const char *stmt)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(db, stmt, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", stmt, msg ? msg : "?");
    sqlite3_close(db);
}

/* Counts the store's events before `before` into *old, and of them those of an action not yet
 * done into *pending. */
struct old_events {
    double before;
    unsigned old, pending;
};

static int count_old(void *ctx, const struct hn_store_event *e)
{
    struct old_events *o = ctx;
    if (e->time < o->before) {
        o->old++;
        o->pending += e->action_id > 0 && e->action_done < 0;
    }
    return 0;
}

static struct old_events old_events(struct fleet *f, double before)
{
    struct old_events o = {before, 0, 0};
    struct hn_event_filter all = {.limit = 10000};
    assert_int_equal(hn_store_query_events(f->c.store, &all, count_old, &o), 0);
    return o;
}

/* store-retention: the tick deletes events older than it (and agent boots' frame records), once
 * an hour, but not those of an action not yet done. An Xid 79 on n2 at 100 s (a finding, its
 * transition, a drain or a guard's hold); with a retention of a day, a tick two days later deletes
 * them but a pending action's; a second Xid's events, as old, wait for the next hour. */
static void retention_runs_in_the_tick(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "retention");
    f.c.cfg.retention_days = 1;
    frame(&f, 0, 99, 0, 0);
    frame(&f, 1, 99, 0, 0);
    for (int n = 0; n < 2; n++)
        assert_int_equal(hn_brain_set_state(f.c.brain, 99, n, HN_NODE_READY, "test"), 0);
    hn_brain_xid(f.c.brain, 100, 1, 0, 79);
    hn_control_tick(&f.c, 100.5);
    assert_int_equal(f.c.pruned[0], 0);
    double later = 100 + 2 * 86400, cut = later - 86400;
    struct old_events o = old_events(&f, cut);
    assert_true(o.old > o.pending);
    hn_control_tick(&f.c, later);
    assert_int_equal(f.c.pruned[0], o.old - o.pending);
    assert_int_equal(f.c.pruned[4], 2); /* both agents' boots, silent since 99 s */
    struct old_events left = old_events(&f, cut);
    assert_int_equal(left.old, o.pending);
    hn_brain_xid(f.c.brain, 100, 0, 0, 79);
    hn_control_tick(&f.c, later + 60);
    assert_int_equal(f.c.pruned[0], o.old - o.pending); /* not before an hour */
    hn_control_tick(&f.c, later + 3601);
    assert_true(f.c.pruned[0] > o.old - o.pending);
    /* A retention run that fails (here a trigger; a full disk, say) is logged, counted and
     * tried an hour later; the controller goes on (it stopped, in a crash loop, before). */
    sql(f.c.cfg.store, "CREATE TRIGGER no_delete BEFORE DELETE ON events"
                       " BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    hn_brain_xid(f.c.brain, 100, 0, 0, 79);
    uint64_t pruned = f.c.pruned[0];
    hn_control_tick(&f.c, later + 7202);
    assert_int_equal(f.c.prune_errors, 1);
    assert_int_equal(f.c.fatal, 0);
    assert_int_equal(f.c.pruned[0], pruned);
    sql(f.c.cfg.store, "DROP TRIGGER no_delete");
    hn_control_tick(&f.c, later + 7300); /* not before the hour */
    assert_int_equal(f.c.pruned[0], pruned);
    hn_control_tick(&f.c, later + 10803);
    assert_true(f.c.pruned[0] > pruned);
    fleet_close(&f);
}

static int count_id(void *ctx, const char *id)
{
    (void)id;
    ++*(size_t *)ctx;
    return 0;
}

static int count_point(void *ctx, const struct hn_job_point *p)
{
    (void)p;
    ++*(size_t *)ctx;
    return 0;
}

/* The jobs the store holds. */
static size_t saved_jobs(struct fleet *f)
{
    size_t n = 0;
    assert_int_equal(hn_store_job_ids(f->c.store, count_id, &n), 0);
    return n;
}

/* Job ids made up faster than they end (any user of a node may send them; here 40 in 40 s to a
 * controller that keeps 16) are forgotten before the tick can call them ended: their saved
 * ledgers, never ended, went unpruned for ever, and so did the saved ids the controller keeps in
 * memory. Retention takes them too once they are silent for as long, as it takes an ended job;
 * a job still in memory is not taken, however silent (one the scheduler lists waiting). */
static void forgotten_jobs_that_never_ended_are_pruned(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open_max(&f, "madeup", 16);
    f.c.cfg.retention_days = 1;
    double t = 100;
    char id[16];
    for (int k = 0; k < 40; k++, t += 1) {
        snprintf(id, sizeof(id), "fake%d", k);
        frame_of(&f, id, 0, t, 0, 1);
        hn_control_tick(&f.c, t + 0.5);
    }
    assert_int_equal(hn_brain_job_count(f.c.brain), 16);
    assert_int_equal(saved_jobs(&f), 40);
    /* A job that reports and then only waits for its next run, for longer than the retention:
     * the scheduler's polls keep it in memory, not ended. */
    frame_of(&f, "queued", 0, t, 0, 1);
    hn_brain_job_waiting(f.c.brain, t, "queued", HN_WAIT_QUEUED);
    hn_control_tick(&f.c, t + 0.5);
    for (double end = t + 3 * 86400; t < end; t += 600) {
        hn_brain_job_waiting(f.c.brain, t, "queued", HN_WAIT_QUEUED);
        hn_control_tick(&f.c, t);
    }
    print_message("after 3 days: %zu saved jobs, %llu pruned\n", saved_jobs(&f),
                  (unsigned long long)f.c.pruned[2]);
    /* The 40 made-up jobs went, those forgotten and those the tick ended; "queued" never did
     * (taken, then saved again at its next change, it would lose its saved history). */
    assert_int_equal(f.c.pruned[2], 40);
    assert_true(hn_brain_find_job(f.c.brain, "queued") >= 0);
    assert_int_equal(saved_jobs(&f), 1);
    assert_int_equal(f.c.saved_jobs.n, 1);
    size_t points = 0;
    assert_int_equal(hn_store_load_points(f.c.store, "queued", count_point, &points), 0);
    assert_true(points > 0);
    fleet_close(&f);
}

/* A fleet whose GPUs have no dense peak for mfu-dtype (fp4 on H100s): the controller says at
 * start, once for the SKU, that the MFU of jobs on them is unknown. */
static void sku_without_a_peak_is_warned(void **state)
{
    (void)state;
    struct fleet f;
    fleet_config(&f, "fp4");
    hn_strlcpy(f.c.cfg.brain.mfu_dtype, "fp4", sizeof(f.c.cfg.brain.mfu_dtype));
    char err[256] = "";
    struct tu_capture cap;
    tu_capture_begin(&cap);
    int rc = hn_control_init(&f.c, err, sizeof(err));
    tu_capture_end(&cap);
    char *text = tu_slurp(cap.err, NULL);
    print_message("stderr: %s", text ? text : "");
    assert_int_equal(rc, 0);
    assert_non_null(text);
    assert_non_null(
        strstr(text, "default-sku (nodes that join): SKU 'H100' has no dense fp4 peak"));
    free(text);
    hn_buf_init(&f.buf, 1 << 16);
    fleet_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clocks_off_make_no_hang_and_hide_none),
        cmocka_unit_test(long_outage_backlog_is_no_hang),
        cmocka_unit_test(idle_culprit_whatever_the_clocks),
        cmocka_unit_test(sku_without_a_peak_is_warned),
        cmocka_unit_test(forgotten_job_is_reloaded),
        cmocka_unit_test(forgotten_waiting_job_is_reloaded_by_the_poll),
        cmocka_unit_test(failed_poll_keeps_the_lists),
        cmocka_unit_test(retention_runs_in_the_tick),
        cmocka_unit_test(forgotten_jobs_that_never_ended_are_pruned),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

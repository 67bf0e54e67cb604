/*
 * test_control_poll.c - the controller's scheduler poll through the backend interface
 * (hn_sched_ops.list_jobs, node_info), with the dry-run backend given a listing
 * (hn_sched_dryrun_set_jobs): which jobs run on which nodes and who owns them reach the brain,
 * a job listed waiting is not running, a draining node is found empty when no job holds it; a
 * backend that lists no jobs is not polled. The Slurm backend's poll, through a fake squeue, is
 * in test_control_clock.c.
 */
#include "common/frame.h"
#include "control/control.h"
#include "control_fleet.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void fleet_open(struct fleet *f, const char *name)
{
    fleet_config(f, name);
    hn_strlcpy(f->c.cfg.scheduler, "dry-run", sizeof(f->c.cfg.scheduler));
    fleet_start(f);
}

/* Node n (0: n1, 1: n2) sends a frame at now in which rank n of job reports step, sent by user
 * uid; returns the controller's answer. */
static int frame(struct fleet *f, int n, double now, const char *job, uint64_t step, uint32_t uid)
{
    struct hn_frame_writer w;
    hn_frame_begin(&w, &f->buf, 7, ++f->seq[n], (uint64_t)(now * 1e9));
    hn_frame_node(&w, n ? "n2" : "n1", 4, "H100");
    struct hn_frame_step s = {
        .job = {job, strlen(job)},
        .rank = (uint32_t)n,
        .local_rank = 0,
        .world = 2,
        .gpu = 0,
        .step = step,
        .time_ns = (uint64_t)(now * 1e9),
        .seconds = 1,
        .tokens = NAN,
        .forward_s = NAN,
        .backward_s = NAN,
        .optimizer_s = NAN,
        .comm_s = NAN,
        .checkpoint = HN_FRAME_NO_U64,
        .tflops = NAN,
        .flops_per_token = NAN,
        .uid = uid,
    };
    hn_frame_step(&w, &s);
    assert_int_equal(hn_frame_end(&w), 0);
    char err[256] = "";
    return hn_control_ingest(&f->c, f->buf.data, f->buf.len, now, err, sizeof(err));
}

static const char *job_state(struct fleet *f, const char *id)
{
    struct hn_job_view v;
    int i = hn_brain_find_job(f->c.brain, id);
    assert_true(i >= 0);
    assert_int_equal(hn_brain_job_view(f->c.brain, (size_t)i, &v), 0);
    return v.state;
}

static enum hn_node_state node_state(struct fleet *f, int n)
{
    struct hn_node_view v;
    assert_int_equal(hn_brain_node_view(f->c.brain, n, &v), 0);
    return v.state;
}

/* dry-run without a listing: no poll, as for any backend that cannot list jobs. */
static void no_listing_no_poll(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "poll-none");
    hn_control_poll(&f.c, 100);
    assert_int_equal(f.c.polls_ok, 0);
    assert_int_equal(f.c.polls_failed, 0);
    fleet_close(&f);
}

/* The listing's owner decides who may report the job; a job listed waiting is not running. */
static void listing_reaches_the_brain(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "poll-owner");
    double t = 100;
    assert_int_equal(frame(&f, 0, t, "j", 1, 0), 200);
    assert_int_equal(frame(&f, 1, t, "j", 1, 0), 200);

    const struct hn_sched_dryrun_job running[] = {
        {"j", 1000, HN_SCHED_JOB_RUNNING, 600, "n1,n2"},
        {"k", 1001, HN_SCHED_JOB_QUEUED, -1, ""},
    };
    assert_int_equal(hn_sched_dryrun_set_jobs(f.c.sched.ctx, running, 2), 0);
    hn_control_poll(&f.c, t + 1);
    assert_int_equal(f.c.polls_ok, 1);
    /* Only its owner (or root) may report j now. */
    uint64_t refused = f.c.steps_not_owner;
    assert_int_equal(frame(&f, 0, t + 2, "j", 2, 1001), 200);
    assert_int_equal(f.c.steps_not_owner, refused + 1);
    assert_int_equal(frame(&f, 0, t + 3, "j", 2, 1000), 200);
    assert_int_equal(f.c.steps_not_owner, refused + 1);
    assert_string_equal(job_state(&f, "j"), "running");

    const struct hn_sched_dryrun_job queued[] = {{"j", 1000, HN_SCHED_JOB_QUEUED, -1, ""}};
    assert_int_equal(hn_sched_dryrun_set_jobs(f.c.sched.ctx, queued, 1), 0);
    hn_control_poll(&f.c, t + 4);
    assert_int_equal(f.c.polls_ok, 2);
    assert_string_not_equal(job_state(&f, "j"), "running");
    fleet_close(&f);
}

/* A draining node stays draining while a job holds it (the backend's node_info says
 * allocated), and is quarantined, and saved so, once none does. */
static void draining_node_found_empty(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "poll-drain");
    double t = 100;
    assert_int_equal(frame(&f, 0, t, "j", 1, 0), 200);
    assert_int_equal(frame(&f, 1, t, "j", 1, 0), 200);
    for (int n = 0; n < 2; n++)
        assert_int_equal(hn_brain_set_state(f.c.brain, t, n, HN_NODE_READY, "test"), 0);
    assert_int_equal(hn_brain_drain(f.c.brain, t, 0, "test drain", "test"), 0);
    assert_int_equal(hn_control_save(&f.c, "test"), 0);
    assert_int_equal(node_state(&f, 0), HN_NODE_DRAINING);

    const struct hn_sched_dryrun_job jobs[] = {{"j", 0, HN_SCHED_JOB_RUNNING, 600, "n1,n2"}};
    assert_int_equal(hn_sched_dryrun_set_jobs(f.c.sched.ctx, jobs, 1), 0);
    hn_control_poll(&f.c, t + 1);
    assert_int_equal(node_state(&f, 0), HN_NODE_DRAINING);

    assert_int_equal(hn_sched_dryrun_set_jobs(f.c.sched.ctx, jobs, 0), 0);
    hn_control_poll(&f.c, t + 2);
    assert_int_equal(node_state(&f, 0), HN_NODE_QUARANTINED);
    assert_int_equal(node_state(&f, 1), HN_NODE_READY);
    assert_int_equal(f.c.store_errors, 0);
    fleet_close(&f);

    /* Saved: a restart on the same store finds it quarantined. */
    fleet_open(&f, "poll-drain");
    assert_int_equal(node_state(&f, hn_brain_find_node(f.c.brain, "n1")), HN_NODE_QUARANTINED);
    fleet_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_listing_no_poll),
        cmocka_unit_test(listing_reaches_the_brain),
        cmocka_unit_test(draining_node_found_empty),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

/*
 * test_control_clock.c - the controller puts each agent's times in its own clock before the
 * brain sees them (control.c, agent_clock): agents whose clocks are off, by the same or by
 * different amounts, neither make a hang nor hide one (docs/jobs.md, "Hangs"). Frames go
 * through hn_control_ingest as the HTTP handler would give them.
 */
#include "common/frame.h"
#include "control/control.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct fleet {
    struct hn_control c;
    struct hn_buf buf;
    uint64_t seq[2];
};

static void fleet_open(struct fleet *f, const char *name)
{
    memset(f, 0, sizeof(*f));
    const char *dir = tu_tmpdir();
    char path[PATH_MAX];
    hn_control_config_defaults(&f->c.cfg);
    snprintf(f->c.cfg.token_file, sizeof(f->c.cfg.token_file), "%s/token", dir);
    tu_write_file(f->c.cfg.token_file, "agent-secret\n");
    snprintf(f->c.cfg.operator_token_file, sizeof(f->c.cfg.operator_token_file), "%s/op", dir);
    tu_write_file(f->c.cfg.operator_token_file, "operator-secret\n");
    snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    hn_strlcpy(f->c.cfg.store, path, sizeof(f->c.cfg.store));
    f->c.cfg.default_gpus = 4;
    char err[256] = "";
    assert_int_equal(hn_control_init(&f->c, err, sizeof(err)), 0);
    hn_buf_init(&f->buf, 1 << 16);
}

static void fleet_close(struct fleet *f)
{
    hn_buf_fini(&f->buf);
    hn_control_fini(&f->c);
    hn_control_config_fini(&f->c.cfg);
}

/* Node n (0: n1, 1: n2) sends a frame that arrives at now, collected by an agent whose clock
 * is `behind` seconds slow; with step > 0, four ranks of job "j" (ranks 4n..4n+3 of 8) report
 * it, received half a second before collection. */
static void frame(struct fleet *f, int n, double now, double behind, uint64_t step)
{
    double collected = now - behind;
    struct hn_frame_writer w;
    hn_frame_begin(&w, &f->buf, 7, ++f->seq[n], (uint64_t)(collected * 1e9));
    hn_frame_node(&w, n ? "n2" : "n1", 4, "H100");
    for (unsigned r = 0; step && r < 4; r++) {
        struct hn_frame_step s = {
            .job = {"j", 1},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clocks_off_make_no_hang_and_hide_none),
        cmocka_unit_test(long_outage_backlog_is_no_hang),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

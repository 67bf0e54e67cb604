/*
 * test_straggler_findings.c - which rank the brain's live detector calls a straggler from step
 * reports: phase times, agents that batch reports, GPUs shared by ranks, thresholds from the
 * configuration, drift, broken timers, jobs the scheduler does not list, and real step reports
 * of a data-parallel job on an H200 (tests/fixtures/step-times/h200).
 */
#include "brain_fleet.h"
#include "control/control.h"

/* Job "ph" (16 ranks on n1-n4, 1 s steps) reports phase times; from step 61 rank 9's backward
 * pass takes 20% longer (0.1 s) and its short optimizer step 30% (0.03 s). With spike >= 0,
 * rank 9's forward pass also takes 0.4 s longer at every third step (step % 3 == spike): a
 * pause of one step in three. Returns the straggler finding (asserted: one). */
static struct hn_out phase_straggler(int spike)
{
    struct hn_brain *b = fleet(4);
    hn_brain_node_job(b, 0, 2, "ph");
    struct hn_out o, found;
    int n = 0;
    double t = 0;
    for (uint64_t s = 1; s <= 90 && !n; s++) {
        int spiked = spike >= 0 && s > 60 && (int)(s % 3) == spike;
        double wall = s > 60 ? 1.13 + (spiked ? 0.4 : 0) : 1.0;
        for (int r = 0; r < 16; r++) {
            double jitter = 0.004 * (double)((s * 7 + (uint64_t)r * 13) % 5) / 4.0;
            int slow = r == 9 && s > 60;
            double fwd = 0.3 + jitter + (slow && spiked ? 0.4 : 0), bwd = slow ? 0.6 : 0.5,
                   opt = slow ? 0.13 : 0.1;
            struct hn_step_in in = report("ph", r, 16, s, wall);
            in.forward_s = fwd;
            in.backward_s = bwd;
            in.optimizer_s = opt;
            in.comm_s = wall - (fwd + bwd + opt);
            assert_int_equal(hn_brain_step(b, t, r / 4, &in), 0);
        }
        t += wall;
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "straggler") == 0 && !n++)
                found = o;
        }
    }
    assert_int_equal(n, 1);
    struct hn_job_view v;
    job_view(b, "ph", &v);
    if (spike < 0) {
        assert_string_equal(v.straggler_phase, "backward");
        assert_near(v.straggler_phase_excess, 0.2, 1e-6);
    }
    hn_brain_free(b);
    return found;
}

/* With phase times (fwd=, bwd=, opt=) the straggler finding says in which phase the rank is
 * slow: the backward pass is where the time goes. The phase goes by each rank's last three
 * reports (their median): a forward pass 0.4 s longer one step in three does not take it
 * over, whichever step the straggler is found at. Before, the last report alone decided: found
 * at a step with the spike, it was "slowest in its forward pass". */
static void straggler_phase_from_phase_times(void **state)
{
    (void)state;
    struct hn_out found = phase_straggler(-1);
    assert_string_equal(found.node, "n3");
    assert_non_null(strstr(found.finding.detail, "; slowest in its backward pass (+20%)"));
    assert_non_null(strstr(found.finding.evidence, " phase=backward phase_excess=0.200"));
    for (int spike = 0; spike < 3; spike++) {
        found = phase_straggler(spike);
        if (!strstr(found.finding.detail, "; slowest in its backward pass (+20%)"))
            fail_msg("spike at step %% 3 == %d: %s", spike, found.finding.detail);
    }
}

/* A job that gains ranks mid-run (elastic training: 16 ranks, then 20 with n5) gets a new
 * straggler detector, which knows nothing of the episode the old one found. The straggler
 * found before goes with it: rank 9 keeps up again from the growth on, and the new detector
 * cannot tell. Before, it stayed the job's straggler for good, charged at 30% a step, and its
 * node was drained at the next checkpoint. A rank still slow is found anew. */
static void grown_job_forgets_the_old_detectors_straggler(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(5);
    for (int i = 0; i < 5; i++)
        hn_brain_node_job(b, 0, i, "g");
    double t = 0, slow[20] = {0};
    uint64_t s = 1;
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "g", 16, s, 1.0, NULL, 0);
    slow[9] = 0.27;
    struct hn_job_view v;
    for (v.straggler_rank = -1; v.straggler_rank < 0 && s < 100; s++, t += 1.27) {
        step_all(b, t, "g", 16, s, 1.0, slow, 0);
        job_view(b, "g", &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    slow[9] = 0;
    step_all(b, t, "g", 20, s++, 1.0, NULL, 0);
    t += 1;
    job_view(b, "g", &v);
    assert_int_equal(v.l.ranks, 20);
    assert_int_equal(v.straggler_rank, -1);
    assert_non_null(strstr(v.plan, "none for now: the job has 20 ranks and its straggler detector "
                                   "starts again; rank 9 is found anew if it is still slow"));
    double lost = v.l.lost_s[HN_LOSS_STRAGGLER];
    for (int k = 0; k < 100; k++, s++, t += 1)
        step_all(b, t, "g", 20, s, 1.0, NULL, (int64_t)s - 1);
    job_view(b, "g", &v);
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] == lost);
    assert_int_equal(v.straggler_rank, -1);
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT); /* not drained */
    /* Slow again: found anew by the new detector, as slow from the start or in an episode. */
    slow[9] = 0.27;
    for (int k = 0; k < 100 && v.straggler_rank < 0; k++, s++, t += 1.27) {
        step_all(b, t, "g", 20, s, 1.0, slow, 0);
        job_view(b, "g", &v);
    }
    assert_int_equal(v.straggler_rank, 9);
    hn_brain_free(b);
}

/* A job of 8 nodes x 4 ranks with steps of step_s whose agents forward each node's reports every
 * 10 s, each node at its own moment; its ranks report the steps first, first + every, ...
 * up to 6,000; rank 5 (n2) computes 30% longer from step 3,000 on. Node 1's agent is cut off
 * for outage_s seconds from t = 300 (its reports come late, all at once). Returns the step at
 * which the straggler was found (0: never) and the job's view at the end. */
static uint64_t batched_job(const char *id, double step_s, uint64_t first, uint64_t every,
                            double outage_s, struct hn_job_view *v)
{
    const int nodes = 8, world = 32;
    const double cycle = 10;
    const uint64_t steps = 6000, onset = 3000;
    struct hn_brain *b = fleet(nodes);
    hn_brain_node_job(b, 0, 0, id);
    uint64_t next[8], found = 0; /* the next step each node's agent forwards */
    for (int n = 0; n < nodes; n++)
        next[n] = first;
    struct hn_out o;
    for (double t = 0; t <= (double)steps * step_s + cycle; t += cycle / nodes) {
        int n = (int)(lround(t / (cycle / nodes)) % nodes); /* this moment's node */
        if (n == 1 && t >= 300 && t < 300 + outage_s)
            continue;
        uint64_t upto = (uint64_t)(t / step_s);
        upto = upto > steps ? steps : upto;
        for (uint64_t s = next[n]; s <= upto; s += every) {
            for (int k = 0; k < 4; k++) {
                int r = n * 4 + k;
                double own = step_s * (1 + 0.02 * (double)((s * 7 + (uint64_t)r * 13) % 5) / 4);
                if (r == 5 && s >= onset)
                    own *= 1.3;
                struct hn_step_in in = report(id, r, world, s, step_s * 1.4);
                in.comm_s = step_s * 1.4 - own;
                assert_int_equal(hn_brain_step(b, t, n, &in), 0);
            }
            next[n] = s + every;
        }
        while (hn_brain_poll(b, &o)) {
            if (o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "straggler") == 0 && !found) {
                assert_non_null(strstr(o.finding.evidence, "rank=5 "));
                assert_string_equal(o.node, "n2");
                found = (uint64_t)(t / step_s);
            }
        }
    }
    job_view(b, id, v);
    hn_brain_free(b);
    return found;
}

/* Agents forward a node's reports once per collection: with 0.3 s steps the other nodes'
 * reports of a step come up to 10 s (33 steps) after the first node's. The rows must wait for
 * them, or the detector sees no row with a quorum and finds nothing (it found nothing before
 * the stride, row_put). Also when the ranks report every tenth step from step 1 (1, 11,
 * 21...: a stride over step numbers would skip them all), and after an agent's outage (its
 * backlog doubles the stride, which comes back down). */
static void fast_steps_from_batching_agents_find_the_straggler(void **state)
{
    (void)state;
    struct hn_job_view v;
    /* Found within a minute of the onset (200 steps), from one row every few steps (4 here:
     * 8 rows of 4 steps span the 10 s between a node's frames). */
    uint64_t found = batched_job("77", 0.3, 1, 1, 0, &v);
    assert_true(found >= 3000 && found - 3000 <= 200);
    assert_true(v.straggler_every >= 2 && v.straggler_every <= 64);
    assert_true(v.late_reports > 0);
    found = batched_job("78", 0.1, 1, 10, 0, &v); /* a report a second, 10 s frames */
    assert_true(found >= 3000 && found - 3000 <= 600);
    assert_true(v.straggler_every >= 2);
    /* A 2-minute outage of n2's agent: its backlog of 400 steps comes late at once. */
    found = batched_job("79", 0.3, 1, 1, 120, &v);
    assert_true(found >= 3000 && found - 3000 <= 200);
    assert_true(v.straggler_every <= 4); /* 8 for good without the halving */
}

/* One case of a shared GPU: job 9's 16 ranks, 4 a node; n1 has n1_gpus GPUs and its ranks 0-3
 * report GPUs gpu[0..3] (the other nodes: 4 GPUs, one a rank). From step `from` rank r
 * computes slow[r] longer (of 0.9 s) until the end, step 90; a rank r < 4 with silent[r]
 * stops reporting at step 50, as a dead process does. */
struct shared_case {
    const char *what;
    unsigned n1_gpus;
    int gpu[4];
    uint64_t from;
    double slow[16];
    int silent[4];
    int shared, suspect; /* straggler_shared_gpu findings; straggler findings (-1: any >= 1) */
};

/* Nodes n1-n4 in one rack: n1 with n1_gpus GPUs, the others with 4. */
static struct hn_brain *shared_fleet(unsigned n1_gpus)
{
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    struct hn_brain *b = hn_brain_new(&cfg);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i + 1);
        assert_int_equal(hn_brain_add_node(b, name, "r1", "H100", i ? 4 : n1_gpus, HN_NODE_READY),
                         i);
    }
    return b;
}

/* Job 9's step: its 16 ranks, 4 a node, rank r < 4 reporting GPU gpu[r] unless skip[r]; rank r
 * computes slow[r] longer (the others wait for the slowest, as in step_all). */
static void step_gpus(struct hn_brain *b, uint64_t step, const int *gpu, const double *slow,
                      const int *skip)
{
    double extra = 0;
    for (int r = 0; r < 16; r++)
        extra = fmax(extra, slow[r]);
    for (int r = 0; r < 16; r++) {
        if (r < 4 && skip[r])
            continue;
        struct hn_step_in s = report("9", r, 16, step, 1.0 + extra);
        if (r < 4)
            s.gpu = gpu[r];
        double jitter = 0.004 * (double)((step * 7 + (uint64_t)r * 13) % 5) / 4.0;
        s.comm_s = extra - slow[r] + 0.1 - jitter;
        assert_int_equal(hn_brain_step(b, (double)step, r / 4, &s), 0);
    }
}

static void run_shared_case(const struct shared_case *c)
{
    struct hn_brain *b = shared_fleet(c->n1_gpus);
    int shared = 0, suspect = 0;
    for (uint64_t step = 1; step <= 90; step++) {
        double slow[16] = {0};
        int skip[4];
        for (int r = 0; r < 16; r++)
            slow[r] = step >= c->from ? c->slow[r] : 0;
        for (int r = 0; r < 4; r++)
            skip[r] = c->silent[r] && step >= 50;
        step_gpus(b, step, c->gpu, slow, skip);
        struct hn_out o;
        while (hn_brain_poll(b, &o)) {
            if (o.kind != HN_OUT_FINDING)
                continue;
            if (strcmp(o.finding.rule, "straggler_shared_gpu") == 0) {
                shared++;
                assert_int_equal(o.finding.severity, HN_SEV_INFO);
                assert_string_equal(o.node, "n1");
            }
            suspect += strcmp(o.finding.rule, "straggler") == 0;
        }
    }
    if (shared != c->shared || (c->suspect >= 0 ? suspect != c->suspect : suspect < 1))
        fail_msg("%s: %d straggler_shared_gpu, %d straggler; want %d and %d", c->what, shared,
                 suspect, c->shared, c->suspect);
    assert_int_equal(node_state(b, 0), c->shared ? HN_NODE_READY : HN_NODE_SUSPECT);
    if (c->shared) {
        struct hn_job_view v;
        job_view(b, "9", &v);
        assert_int_equal(v.straggler_rank, 1);
        assert_non_null(strstr(v.plan, "keep n1: rank 1 shares GPU 0 with 3 ranks"));
    }
    hn_brain_free(b);
}

/* A rank that shares its GPU with ranks of the job that stay normal is slow from the time
 * slicing, not from the GPU: information, the node stays ready, the plan keeps it. Every
 * other case is a straggler as usual. */
static void straggler_on_a_shared_gpu(void **state)
{
    (void)state;
    static const struct shared_case cases[] = {
        /* clang-format off */
        /* what, n1's GPUs, ranks 0-3's GPUs, from, slow, silent, shared, straggler */
        {"one rank of four on n1's one GPU slows down",
         1, {0, 0, 0, 0}, 61, {[1] = 0.27}, {0}, 1, 0},
        {"all four on it slow down together",
         1, {0, 0, 0, 0}, 61, {0.27, 0.27, 0.27, 0.27}, {0}, 0, -1},
        {"the others gather evidence of a 1.5% slowdown",
         1, {0, 0, 0, 0}, 61, {0.0135, 0.27, 0.0135, 0.0135}, {0}, 0, -1},
        {"a GPU for each rank, all say GPU 0 (CUDA's index)",
         4, {0, 0, 0, 0}, 61, {[1] = 0.27}, {0}, 0, 1},
        {"two GPUs, all four say GPU 0: the numbers are not believable",
         2, {0, 0, 0, 0}, 61, {[1] = 0.27, [3] = 0.27}, {0}, 0, -1},
        {"two GPUs, GPU 1 slow from the start (its ranks' normal is slow)",
         2, {0, 1, 0, 1}, 1, {[1] = 0.27, [3] = 0.27}, {0}, 0, -1},
        {"its mates on GPU 0 went silent at step 50",
         1, {0, 0, 0, 0}, 61, {[1] = 0.27}, {1, 0, 1, 1}, 0, 1},
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_shared_case(&cases[i]);
}

/* A straggler on a shared GPU, which houston leaves alone, does not take the place of one it
 * acts on, even a smaller one: rank 9 (n3, 10% slower) keeps its planned drain when n1's
 * rank 1 then slows down by 30% on the GPU it shares. */
static void shared_gpu_straggler_keeps_a_planned_drain(void **state)
{
    (void)state;
    struct hn_brain *b = shared_fleet(1);
    static const int gpu[4] = {0, 0, 0, 0}, skip[4] = {0};
    double slow[16] = {0};
    for (uint64_t step = 1; step <= 120; step++) {
        slow[9] = step > 60 ? 0.09 : 0;
        slow[1] = step > 80 ? 0.27 : 0;
        step_gpus(b, step, gpu, slow, skip);
    }
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler_shared_gpu", NULL), 1);
    struct hn_job_view v;
    job_view(b, "9", &v);
    assert_int_equal(v.straggler_rank, 9);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    assert_int_equal(node_state(b, 0), HN_NODE_READY);
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT);
    hn_brain_free(b);
}

/* Straggler findings of job 9 when rank 9 computes 30% longer from step 61 to 100, with the
 * controller's setting straggler-min-slowdown = min_slowdown. */
static int stragglers_with_min_slowdown(const char *min_slowdown)
{
    struct hn_control_config cc;
    hn_control_config_defaults(&cc);
    char err[256];
    if (hn_control_config_set(&cc, "straggler-min-slowdown", min_slowdown, err, sizeof(err)))
        fail_msg("%s", err);
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.straggler = cc.brain.straggler;
    hn_control_config_fini(&cc);
    struct hn_brain *b = fleet_from(&cfg, 4, NULL);
    hn_brain_node_job(b, 0, 0, "9");
    double slow[16] = {0};
    int n = 0;
    for (uint64_t s = 1; s <= 100; s++) {
        slow[9] = s > 60 ? 0.27 : 0;
        step_all(b, (double)s, "9", 16, s, 1.0, slow, 0);
        n += find_output(b, HN_OUT_FINDING, "straggler", NULL);
    }
    hn_brain_free(b);
    return n;
}

/* The live detector takes its thresholds from the configuration: the 30% straggler is found
 * with straggler-min-slowdown 0.25 and not with 0.5. */
static void straggler_thresholds_come_from_the_config(void **state)
{
    (void)state;
    assert_int_equal(stragglers_with_min_slowdown("0.25"), 1);
    assert_int_equal(stragglers_with_min_slowdown("0.5"), 0);
}

/* A rank that ran 4% faster than its peers slows down: first to 1% slower than them (drift,
 * information), then, in the same episode, to 10% slower than them: a straggler after all, once
 * the median of its recent reports puts it 5% or more behind them. */
static void drift_that_grows_becomes_a_straggler(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    double slow[16] = {0};
    double t = 0;
    uint64_t s = 1;
    slow[5] = -0.036; /* rank 5 (n2) computes 0.864 s, the others 0.9 */
    for (; s <= 100; s++, t += 1)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    assert_int_equal(find_output(b, HN_OUT_FINDING, NULL, NULL), 0);
    slow[5] = 0.009; /* 1% slower than the others, 5% slower than its normal */
    for (; s <= 140; s++, t += 1)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler_drift", &o), 1);
    assert_non_null(strstr(o.finding.evidence, "rank=5"));
    assert_int_equal(node_state(b, 1), HN_NODE_READY);
    struct hn_job_view v;
    job_view(b, "9", &v);
    assert_int_equal(v.straggler_rank, -1);
    slow[5] = 0.09; /* 10% slower than the others */
    for (; s <= 170; s++, t += 1.1)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler", &o), 1);
    assert_int_equal(o.finding.severity, HN_SEV_SUSPECT);
    assert_string_equal(o.node, "n2");
    assert_non_null(strstr(o.finding.evidence, "rank=5 onset_step=101 "));
    assert_int_equal(node_state(b, 1), HN_NODE_SUSPECT);
    job_view(b, "9", &v);
    assert_int_equal(v.straggler_rank, 5);
    assert_true(v.straggler_slowdown >= 0.05 && v.straggler_slowdown < 0.13);
    hn_brain_free(b);
}

/* A second, smaller straggler while the first is still slow (the H200 check saw one: the ranks
 * trade places when one does more work): its node becomes suspect, but the job keeps the
 * first as its straggler, and the checkpoint replaces the first one's node. */
static void second_smaller_straggler_keeps_the_first(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    double slow[16] = {0};
    double t = 0;
    uint64_t s = 1;
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "9", 16, s, 1.0, NULL, 0);
    slow[9] = 0.27; /* rank 9 on n3: 30% */
    for (; s <= 80; s++, t += 1.3)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    slow[2] = 0.09; /* rank 2 on n1: 10% */
    for (; s <= 110; s++, t += 1.3)
        step_all(b, t, "9", 16, s, 1.0, slow, 0);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler", &o), 2);
    assert_int_equal(node_state(b, 0), HN_NODE_SUSPECT);
    assert_int_equal(node_state(b, 2), HN_NODE_SUSPECT);
    struct hn_job_view v;
    job_view(b, "9", &v);
    assert_int_equal(v.straggler_rank, 9);
    assert_true(v.straggler_slowdown > 0.2);
    assert_non_null(strstr(v.plan, "drain n3 at the next checkpoint"));
    step_all(b, t, "9", 16, s, 1.0, slow, (int64_t)s);
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, &o), 2);
    assert_string_equal(o.node, "n3");
    assert_int_equal(node_state(b, 2), HN_NODE_DRAINING);
    assert_int_equal(node_state(b, 0), HN_NODE_SUSPECT);
    hn_brain_free(b);
}

/* With a scheduler that lists jobs, a job it does not list (made up by any user of a node) gets
 * its straggler reported, as information: its node is not made suspect and nothing is drained
 * at its checkpoint. */
static void unlisted_job_straggler_is_not_acted_on(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    hn_brain_node_job(b, 0, 0, "9"); /* a poll: the scheduler lists job 9, not "made-up" */
    double slow[16] = {0};
    double t = 0;
    uint64_t s = 1;
    for (; s <= 60; s++, t += 1)
        step_all(b, t, "made-up", 16, s, 1.0, NULL, 0);
    (void)find_output(b, HN_OUT_FINDING, NULL, NULL);
    slow[9] = 0.27;
    for (; s <= 80; s++, t += 1)
        step_all(b, t, "made-up", 16, s, 1.0, slow, 0);
    struct hn_out o;
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler", &o), 1);
    assert_string_equal(o.node, "n3");
    assert_int_equal(o.finding.severity, HN_SEV_INFO);
    assert_int_equal(node_state(b, 2), HN_NODE_READY);
    struct hn_job_view v;
    job_view(b, "made-up", &v);
    assert_int_equal(v.straggler_rank, 9);
    assert_non_null(strstr(v.plan, "the scheduler does not list job made-up"));
    step_all(b, t, "made-up", 16, s, 1.0, slow, (int64_t)s); /* a checkpoint */
    assert_int_equal(find_output(b, HN_OUT_ACTION, NULL, NULL), 0);
    assert_int_equal(node_state(b, 2), HN_NODE_READY);
    hn_brain_free(b);
}

/* Replays tests/fixtures/step-times/h200/FILE (bench/gpu-check.sh: 4 data-parallel ranks on
 * one H200, rows step,rank,seconds,dur,comm) into a brain of one node in virtual time; returns
 * the brain with its outputs unread. As they ran (as_ran), every rank reports GPU 0; otherwise
 * each rank reports a GPU of its own, as on a machine with one GPU per rank. */
static struct hn_brain *replay_h200_gpus(const char *file, const char *job, int as_ran)
{
    char path[4096];
    FILE *f = fopen(tu_fixture(path, sizeof(path), "step-times/h200/%s", file), "r");
    assert_non_null(f);
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    struct hn_brain *b = hn_brain_new(&cfg);
    /* As it ran: the machine's one H200; otherwise a GPU for each rank. */
    assert_int_equal(hn_brain_add_node(b, "n1", "r1", "H200", as_ran ? 1 : 4, HN_NODE_READY), 0);
    char line[256];
    double t = 0;
    unsigned rows = 0;
    assert_non_null(fgets(line, sizeof(line), f)); /* the header */
    while (fgets(line, sizeof(line), f)) {
        unsigned long long step;
        int rank;
        double secs, dur, comm;
        assert_int_equal(sscanf(line, "%llu,%d,%lf,%lf,%lf", &step, &rank, &secs, &dur, &comm), 5);
        struct hn_step_in s = report(job, rank, 4, step, dur);
        s.comm_s = comm;
        s.checkpoint = (int64_t)(step / 100 * 100);
        if (as_ran)
            s.gpu = 0;
        if (rank == 0)
            t += dur;
        assert_int_equal(hn_brain_step(b, t, 0, &s), 0);
        rows++;
    }
    fclose(f);
    assert_true(rows >= 4 * 700);
    return b;
}

static struct hn_brain *replay_h200(const char *file, const char *job)
{
    return replay_h200_gpus(file, job, 0);
}

/* The real thing a GPU gave: in a healthy job rank 3 ran about 2.7% faster than the others for
 * 900 steps, then went back among them (ranks time-share the GPU and trade places by a few
 * percent). That is slower than its own normal, which the detector reports, but not slower
 * than its peers: information, not a straggler; the node stays ready. Rank 2 of the other runs
 * does more work from step 400 (10% and 6% slower than the others): a straggler each time. */
static void real_h200_ranks_back_among_their_peers_are_no_straggler(void **state)
{
    (void)state;
    struct hn_brain *b = replay_h200("dp4-healthy.csv", "h");
    struct hn_out o;
    int drift = 0, straggler = 0;
    while (hn_brain_poll(b, &o)) {
        if (o.kind != HN_OUT_FINDING)
            continue;
        drift += strcmp(o.finding.rule, "straggler_drift") == 0;
        straggler += strcmp(o.finding.rule, "straggler") == 0;
        if (strcmp(o.finding.rule, "straggler_drift") == 0) {
            assert_int_equal(o.finding.severity, HN_SEV_INFO);
            assert_non_null(strstr(o.finding.evidence, "rank=3"));
            assert_non_null(strstr(o.finding.detail, "not a straggler"));
        }
    }
    assert_int_equal(straggler, 0);
    assert_int_equal(drift, 1);
    assert_int_equal(node_state(b, 0), HN_NODE_READY);
    struct hn_job_view v;
    job_view(b, "h", &v);
    assert_int_equal(v.straggler_rank, -1);
    assert_true(v.l.lost_s[HN_LOSS_STRAGGLER] == 0);
    hn_brain_free(b);

    static const struct {
        const char *file;
        double lo, hi;
    } slow[] = {{"dp4-rank2-slower.csv", 0.07, 0.14},
                {"dp4-rank2-slightly-slower.csv", 0.04, 0.09}};
    for (size_t k = 0; k < sizeof(slow) / sizeof(slow[0]); k++) {
        b = replay_h200(slow[k].file, "s");
        /* found (suspect), then replaced at the next checkpoint (fatal) */
        assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler", &o), 2);
        assert_int_equal(o.finding.severity, HN_SEV_SUSPECT);
        assert_non_null(strstr(o.finding.evidence, "rank=2 onset_step=400 "));
        const char *vs = strstr(o.finding.evidence, "vs_peers=");
        assert_non_null(vs);
        double against_peers = atof(vs + strlen("vs_peers="));
        assert_true(against_peers > slow[k].lo && against_peers < slow[k].hi);
        assert_int_equal(node_state(b, 0), HN_NODE_DRAINING);
        hn_brain_free(b);

        /* As it ran, rank 2 shared GPU 0 with three ranks at their normal speed: the extra
         * work is its own, not the GPU's (docs/jobs.md, "Shared GPUs"). */
        b = replay_h200_gpus(slow[k].file, "s", 1);
        assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler_shared_gpu", &o), 1);
        assert_int_equal(o.finding.severity, HN_SEV_INFO);
        assert_non_null(strstr(o.finding.evidence, "rank=2 onset_step=400 "));
        const char *mates = strstr(o.finding.evidence, "gpu_mates=");
        assert_non_null(mates); /* 1 to 3: a mate whose evidence is gathering does not count */
        assert_true(atoi(mates + strlen("gpu_mates=")) >= 1);
        assert_int_equal(node_state(b, 0), HN_NODE_READY);
        struct hn_job_view v2;
        job_view(b, "s", &v2);
        assert_int_equal(v2.straggler_rank, 2);
        assert_int_equal(v2.l.interruptions, 0);
        hn_brain_free(b);
    }
}

/* A rank whose collective-wait timer reads at least its step time (comm >= dur: the timers
 * disagree) has no compute time to compare; counted at its whole step time it looked 40%
 * slower than its peers and its node was called a straggler. */
static void broken_comm_timer_is_no_straggler(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    hn_brain_node_job(b, 0, 0, "c");
    for (uint64_t s = 1; s <= 300; s++) {
        for (int r = 0; r < 16; r++) {
            struct hn_step_in in = report("c", r, 16, s, 1.4);
            double own = 1.0 + 0.02 * (double)((s * 7 + (uint64_t)r * 13) % 5) / 4;
            in.comm_s = r == 3 && s > 100 ? 1.4 * 1.01 : 1.4 - own;
            assert_int_equal(hn_brain_step(b, (double)s * 1.4, r / 4, &in), 0);
        }
    }
    assert_int_equal(find_output(b, HN_OUT_FINDING, "straggler", NULL), 0);
    assert_int_equal(node_state(b, 0), HN_NODE_READY);
    struct hn_job_view v;
    job_view(b, "c", &v);
    assert_int_equal(v.straggler_rank, -1);
    const char *node;
    int gpu;
    double secs;
    assert_int_equal(hn_brain_job_rank(b, (size_t)hn_brain_find_job(b, "c"), 3, &node, &gpu, &secs),
                     0);
    assert_true(isnan(secs));                 /* no compute time known */
    assert_int_equal(v.untimed_reports, 200); /* counted: steps 101-300 of rank 3 */
    hn_brain_free(b);
}

static void healthy_job_raises_nothing(void **state)
{
    (void)state;
    struct hn_brain *b = fleet(4);
    for (uint64_t s = 1; s <= 400; s++)
        step_all(b, (double)s, "h", 16, s, 1.0, NULL, (int64_t)(s / 50 * 50));
    assert_int_equal(find_output(b, HN_OUT_FINDING, NULL, NULL), 0);
    struct hn_job_view v;
    job_view(b, "h", &v);
    assert_int_equal(v.straggler_rank, -1);
    assert_int_equal(v.l.interruptions, 0);
    hn_brain_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grown_job_forgets_the_old_detectors_straggler),
        cmocka_unit_test(straggler_phase_from_phase_times),
        cmocka_unit_test(fast_steps_from_batching_agents_find_the_straggler),
        cmocka_unit_test(straggler_thresholds_come_from_the_config),
        cmocka_unit_test(straggler_on_a_shared_gpu),
        cmocka_unit_test(shared_gpu_straggler_keeps_a_planned_drain),
        cmocka_unit_test(drift_that_grows_becomes_a_straggler),
        cmocka_unit_test(second_smaller_straggler_keeps_the_first),
        cmocka_unit_test(unlisted_job_straggler_is_not_acted_on),
        cmocka_unit_test(healthy_job_raises_nothing),
        cmocka_unit_test(broken_comm_timer_is_no_straggler),
        cmocka_unit_test(real_h200_ranks_back_among_their_peers_are_no_straggler),
    };
    return cmocka_run_group_tests(tests, fleet_tables_setup, fleet_tables_teardown);
}

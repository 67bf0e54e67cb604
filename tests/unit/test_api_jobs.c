/*
 * test_api_jobs.c - how the controller shows a job's ledger (docs/api.md, docs/metrics.md):
 * GET /v1/jobs, GET /v1/jobs/ID and the houston_job_* series of /metrics, with frames going
 * through hn_control_ingest as the HTTP handler would give them and the replies taken from
 * the controller's routes.
 */
#include "common/frame.h"
#include "common/http.h"
#include "control/control.h"
#include "control_fleet.h"
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A controller whose store is NAME.db, with nodes n1 and n2 (4 H100s each) once they send. */
static void fleet_open(struct fleet *f, const char *name)
{
    fleet_config(f, name);
    fleet_start(f);
}

/* Node n (0: n1, 1: n2) sends a frame at now in which ranks 4n..4n+3 of the 8 of `job` report
 * `step`, which took `secs` and ran at `tflops` per GPU (NaN: not reported). */
static void frame(struct fleet *f, const char *job, int n, double now, uint64_t step, double secs,
                  double tflops)
{
    struct hn_frame_writer w;
    hn_frame_begin(&w, &f->buf, 7, ++f->seq[n], (uint64_t)(now * 1e9));
    hn_frame_node(&w, n ? "n2" : "n1", 4, "H100");
    for (unsigned r = 0; r < 4; r++) {
        struct hn_frame_step s = {
            .job = {job, strlen(job)},
            .rank = 4 * (unsigned)n + r,
            .local_rank = r,
            .world = 8,
            .gpu = r,
            .step = step,
            .time_ns = (uint64_t)((now - 0.5) * 1e9),
            .seconds = secs,
            .tokens = NAN,
            .forward_s = NAN,
            .backward_s = NAN,
            .optimizer_s = NAN,
            .comm_s = NAN,
            .checkpoint = HN_FRAME_NO_U64,
            .tflops = tflops,
            .flops_per_token = NAN,
            .uid = 0,
        };
        hn_frame_step(&w, &s);
    }
    assert_int_equal(hn_frame_end(&w), 0);
    char err[256] = "";
    assert_int_equal(hn_control_ingest(&f->c, f->buf.data, f->buf.len, now, err, sizeof(err)), 200);
}

/* Steps from..to of `job` on both nodes, one every 2 s from
 * t; returns the time after. */
static double run(struct fleet *f, const char *job, double t, uint64_t from, uint64_t to,
                  double secs, double tflops)
{
    for (uint64_t s = from; s <= to && s >= from; s++, t += 2) {
        frame(f, job, 0, t, s, secs, tflops);
        frame(f, job, 1, t + 0.01, s, secs, tflops);
        hn_control_tick(&f->c, t + 0.02);
    }
    return t;
}

/* The reply of the controller's route for GET url (its status in *status), NUL-terminated;
 * the caller frees it. */
static char *get(struct fleet *f, const char *url, int *status)
{
    size_t n;
    const struct hn_http_route *rt = hn_control_routes(&f->c, &n);
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(rt[i].path);
        int prefix = rt[i].path[pl - 1] == '*';
        if (strcmp(rt[i].method, "GET") != 0 ||
            (prefix ? strncmp(url, rt[i].path, pl - 1) != 0 : strcmp(url, rt[i].path) != 0))
            continue;
        struct hn_http_reply r = {.status = 200};
        hn_buf_init(&r.body, 1 << 24);
        rt[i].fn(&f->c, url, &r);
        *status = r.status;
        char *body = strdup(r.body.data ? r.body.data : "");
        hn_buf_fini(&r.body);
        return body;
    }
    fail_msg("no route for %s", url);
    return NULL;
}

static json_t *get_json(struct fleet *f, const char *url, int want_status)
{
    int status;
    char *body = get(f, url, &status);
    assert_int_equal(status, want_status);
    json_error_t je;
    json_t *j = json_loads(body, 0, &je);
    if (!j)
        fail_msg("%s: not JSON (%s): %s", url, je.text, body);
    free(body);
    return j;
}

/* While a job is down (waiting for its next run) it does no model FLOPs: /metrics leaves its
 * MFU and effective MFU out, as its history does, where they went on showing the last run's
 * 40% through the whole outage. The API's job keeps the last run's figure (docs/jobs.md). */
static void metrics_have_no_mfu_while_the_job_is_down(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "down");
    double t = run(&f, "j", 1.7e9, 1, 30, 2, 400);
    int status;
    char *m = get(&f, "/metrics", &status);
    assert_non_null(strstr(m, "\nhouston_job_mfu{job=\"j\"} 0.4"));
    assert_non_null(strstr(m, "\nhouston_job_effective_mfu{job=\"j\"} 0."));
    free(m);
    /* Xid 79 on n2: the job is requeued and waits for its next run. */
    hn_brain_xid(f.c.brain, t, 1, 0, 79);
    hn_control_tick(&f.c, t + 600);
    json_t *j = get_json(&f, "/v1/jobs/j", 200);
    json_t *job = json_object_get(j, "job");
    assert_string_equal(json_string_value(json_object_get(job, "state")), "restarting");
    assert_true(json_real_value(json_object_get(job, "mfu")) > 0.4);
    json_decref(j);
    m = get(&f, "/metrics", &status);
    assert_null(strstr(m, "\nhouston_job_mfu{"));
    assert_null(strstr(m, "\nhouston_job_effective_mfu{"));
    assert_non_null(strstr(m, "\nhouston_job_ettr{job=\"j\"} "));
    free(m);
    fleet_close(&f);
}

/* What the job's restarts took (docs/jobs.md, Policy) is in its API view and /metrics once
 * one was measured: requeued at an Xid at t, its next run's first step of 2 s (its typical
 * one) ends at t + 599.5 (the report's own time, half a second before its frame): 597.5 s
 * from the requeue to that step's start. */
static void measured_restart_is_shown(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "restart");
    double t = run(&f, "j", 1.7e9, 1, 30, 2, 400);
    json_t *j = get_json(&f, "/v1/jobs/j", 200);
    assert_true(json_is_null(json_object_get(json_object_get(j, "job"), "restart_s")));
    json_decref(j);
    int status;
    char *m = get(&f, "/metrics", &status);
    assert_non_null(strstr(m, "# TYPE houston_job_restart_seconds gauge"));
    assert_null(strstr(m, "\nhouston_job_restart_seconds{"));
    free(m);
    hn_brain_xid(f.c.brain, t, 1, 0, 79);
    t = run(&f, "j", t + 600, 1, 3, 2, 400);
    j = get_json(&f, "/v1/jobs/j", 200);
    json_t *job = json_object_get(j, "job");
    assert_string_equal(json_string_value(json_object_get(job, "state")), "running");
    assert_true(fabs(json_number_value(json_object_get(job, "restart_s")) - 597.5) < 1e-6);
    json_decref(j);
    m = get(&f, "/metrics", &status);
    assert_non_null(strstr(m, "\nhouston_job_restart_seconds{job=\"j\"} 597.5\n"));
    free(m);
    fleet_close(&f);
}

/* A rank's step time of more than a day is refused, and counted (any user of a node can send
 * one): 1e308 was taken, and its job's lost GPU time overflowed to infinity, which JSON cannot
 * hold: "failure" went from lost_gpu_hours (houston jobs showed 0 lost). Every real of a job
 * that is not finite is null (api.c, jnum), so such a job would stay in the list. */
static void step_time_beyond_a_day_is_refused(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "inf");
    double t = run(&f, "big", 1.7e9, 1, 3, 2, NAN);
    t = run(&f, "big", t, 4, 6, 1e308, NAN);
    hn_brain_xid(f.c.brain, t, 1, 0, 79);
    hn_control_tick(&f.c, t + 10);
    json_t *j = get_json(&f, "/v1/jobs", 200);
    json_t *job = json_array_get(json_object_get(j, "jobs"), 0);
    assert_non_null(job);
    assert_string_equal(json_string_value(json_object_get(job, "id")), "big");
    assert_int_equal(json_integer_value(json_object_get(job, "step")), 3);
    json_t *lost = json_object_get(job, "lost_gpu_hours");
    assert_int_equal(json_object_size(lost), 5);
    assert_true(json_is_number(json_object_get(lost, "failure")));
    assert_true(json_real_value(json_object_get(lost, "failure")) > 0);
    json_decref(j);
    int status;
    char *m = get(&f, "/metrics", &status);
    assert_non_null(strstr(m, "\nhouston_control_step_reports_total{result=\"refused\"} 24\n"));
    free(m);
    fleet_close(&f);
}

/* A job id is any printable ASCII but '=' (HOUSTON_JOB_ID outside Slurm): GET /v1/jobs/ID finds
 * one with a '/' (it answered 404, no such job), the JSON and the /metrics labels escape its
 * quote and backslash. */
static void job_with_odd_characters_in_its_id(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "odd");
    const char *id = "llama/7b\"#2\\x";
    run(&f, id, 1.7e9, 1, 3, 2, NAN);
    char url[128];
    snprintf(url, sizeof(url), "/v1/jobs/%s", id);
    json_t *j = get_json(&f, url, 200);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "job"), "id")), id);
    json_decref(j);
    j = get_json(&f, "/v1/jobs/llama", 404);
    json_decref(j);
    int status;
    char *m = get(&f, "/metrics", &status);
    tu_check_exposition(m);
    assert_non_null(strstr(m, "\nhouston_job_step{job=\"llama/7b\\\"#2\\\\x\"} 3\n"));
    free(m);
    fleet_close(&f);
}

/* Reports carry a step of 64 unsigned bits: one beyond json_int_t (a C client that sent
 * (uint64_t)-1) showed in the API, and in houston jobs, as step -1. */
static void step_beyond_int64_is_not_negative(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "u64");
    run(&f, "u", 1.7e9, UINT64_MAX, UINT64_MAX, 2, NAN);
    json_t *j = get_json(&f, "/v1/jobs/u", 200);
    assert_true(json_number_value(json_object_get(json_object_get(j, "job"), "step")) > 1.8e19);
    json_decref(j);
    fleet_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metrics_have_no_mfu_while_the_job_is_down),
        cmocka_unit_test(measured_restart_is_shown),
        cmocka_unit_test(step_time_beyond_a_day_is_refused),
        cmocka_unit_test(job_with_odd_characters_in_its_id),
        cmocka_unit_test(step_beyond_int64_is_not_negative),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}

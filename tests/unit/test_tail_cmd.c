/*
 * test_tail_cmd.c - the step reports `houston tail` builds from a log (src/jobs/tail_cmd.c),
 * read from --print: ckpt= from Megatron's checkpoint lines (the real log in
 * tests/fixtures/training-logs/superbenchmark, and made-up ones for the success, async and
 * restart cases), tokens as one rank's share when the reports carry a world size, and
 * DeepSpeed's step times from its lines' time stamps (the real log, and a made-up one with a
 * checkpoint save).
 * tests/integration/test_tail.sh drives the binary over every fixture; this runs the verb in
 * process, so it needs no socket.
 */
#include "testutil.h"

#include "verbs.h"

#include <fcntl.h>
#include <math.h>

#define OUT_MAX ((size_t)64 * 1024)

static const char *fixture_path(void)
{
    static char path[PATH_MAX];
    return tu_fixture(path, sizeof(path), "training-logs/superbenchmark/megatron_deepspeed.log");
}

/*
 * Writes text to a log in the scratch folder and runs `houston tail --print --job 7 ARGS...
 * LOG` (ARGS NULL-terminated) with stdout and stderr sent to files; returns what went to
 * stdout (the datagrams, one a line), which the caller frees, and keeps stderr in last_err.
 * The verb must exit 0.
 */
static char last_err[4096]; /* what the last run_tail wrote to stderr (its summary) */

static char *run_tail(const char *text, ...)
{
    char log[PATH_MAX];
    tu_write_in(log, sizeof(log), tu_tmpdir(), "train.log", text);

    char *argv[16];
    int argc = 0;
    argv[argc++] = xstrdup("tail");
    argv[argc++] = xstrdup("--print");
    argv[argc++] = xstrdup("--job");
    argv[argc++] = xstrdup("7");
    va_list ap;
    va_start(ap, text);
    for (const char *a; (a = va_arg(ap, const char *));) {
        assert_true(argc < 14);
        argv[argc++] = xstrdup(a);
    }
    va_end(ap);
    argv[argc++] = xstrdup(log);
    argv[argc] = NULL;

    struct tu_capture c;
    tu_capture_begin(&c);
    int rc = hn_cmd_tail(argc, argv);
    tu_capture_end(&c);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    char *err = tu_slurp(c.err, NULL);
    if (rc != 0)
        fail_msg("houston tail exited %d: %s", rc, err);
    snprintf(last_err, sizeof(last_err), "%s", err);
    free(err);
    return tu_slurp(c.out, NULL);
}

#define TAIL(text, ...) run_tail((text), __VA_ARGS__, (const char *)NULL)

/* An iteration line as Megatron-DeepSpeed prints it (pdsh prefix, 2048 x 2048 tokens). */
static const char *iter_line(char *buf, size_t size, unsigned step)
{
    int n = snprintf(buf, size,
                     "vm-07-14:  iteration %8u/     100 | consumed samples: %12u | elapsed "
                     "time per iteration (ms): 75000.0 | global batch size:  2048 | actual "
                     "seqlen:  2048 |\n",
                     step, step * 2048);
    assert_true(n > 0 && (size_t)n < size);
    return buf;
}

/* A log made of pieces: "N" is iteration N's line, anything else a line of its own. */
static char *log_of(const char *const *pieces, size_t n)
{
    struct hn_buf b;
    hn_buf_init(&b, OUT_MAX);
    for (size_t i = 0; i < n; i++) {
        char line[512];
        char *end;
        unsigned long step = strtoul(pieces[i], &end, 10);
        if (end != pieces[i] && *end == '\0')
            assert_int_equal(hn_buf_puts(&b, iter_line(line, sizeof(line), (unsigned)step)), 0);
        else
            assert_int_equal(hn_buf_printf(&b, "%s\n", pieces[i]), 0);
    }
    char *text = xstrdup(b.data);
    hn_buf_fini(&b);
    return text;
}

/* The report for `step` in out, just past its " dur="; the report must be there. */
static const char *report_of(const char *out, unsigned step)
{
    char key[64];
    (void)snprintf(key, sizeof(key), " step=%u dur=", step);
    const char *p = strstr(out, key);
    if (!p)
        fail_msg("no report for step %u in:\n%s", step, out);
    return p + strlen(key);
}

/* The ckpt= of the report for `step` in out: its value, -1 when the report has none. */
static long ckpt_of(const char *out, unsigned step)
{
    const char *p = report_of(out, step), *eol = strchr(p, '\n');
    assert_non_null(eol);
    const char *c = strstr(p, " ckpt=");
    if (!c || c > eol)
        return -1;
    return strtol(c + 6, NULL, 10);
}

/* The dur= of the report for `step` in out. */
static double dur_of(const char *out, unsigned step)
{
    return strtod(report_of(out, step), NULL);
}

/* ---- ckpt= ---- */

/* The real log: its one save (step 5, after the last iteration) is followed by neither a step
 * nor a success line (the launcher kills the job's processes next), so no report says it
 * completed. The same log with the job stepping on after the save: every report from then on
 * carries ckpt=5. */
static void test_ckpt_real_log(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture_path(), &len);
    char *out = TAIL(text, "--format", "megatron");
    assert_int_equal(tu_count(out, " dur="), 5);
    assert_null(strstr(out, "ckpt="));
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=5 pause=checkpoint\n"));
    free(out);

    /* Cut after line 1443 (the save), then steps 6 and 7 as the run would have printed them. */
    const char *p = text;
    for (int no = 1; no < 1443; no++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    static const char save[] = "vm-07-05: saving checkpoint at iteration       5 to ";
    assert_int_equal(strncmp(p, save, sizeof(save) - 1), 0);
    p = strchr(p, '\n') + 1;
    struct hn_buf b;
    hn_buf_init(&b, (size_t)1 << 20);
    char line[512];
    assert_int_equal(hn_buf_append(&b, text, (size_t)(p - text)), 0);
    assert_int_equal(hn_buf_puts(&b, iter_line(line, sizeof(line), 6)), 0);
    assert_int_equal(hn_buf_puts(&b, iter_line(line, sizeof(line), 7)), 0);
    out = TAIL(b.data, (const char *)NULL);
    for (unsigned step = 1; step <= 5; step++)
        assert_int_equal(ckpt_of(out, step), -1);
    assert_int_equal(ckpt_of(out, 6), 5);
    assert_int_equal(ckpt_of(out, 7), 5);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=6 dur=75 tokens=4194304 ckpt=5\n"));
    free(out);
    hn_buf_fini(&b);
    free(text);
}

/* A log that prints "successfully saved checkpoint": that line completes a save, and once the
 * log has shown one, a step after a save no longer does. */
static void test_ckpt_success_line(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "10",
        "vm-07-05: saving checkpoint at iteration      10 to /ckpt",
        "vm-07-05:   successfully saved checkpoint at iteration      10 to /ckpt",
        "20",
        "vm-07-05: saving checkpoint at iteration      20 to /ckpt",
        "30", /* no success line for 20: not taken as complete */
        "vm-07-05:   successfully saved checkpoint from iteration      20 to /ckpt [ t 1/1, p "
        "1/1 ]",
        "40",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(ckpt_of(out, 10), -1);
    assert_int_equal(ckpt_of(out, 20), 10);
    assert_int_equal(ckpt_of(out, 30), 10);
    assert_int_equal(ckpt_of(out, 40), 20);
    assert_int_equal(tu_count(out, "pause=checkpoint"), 2);
    free(out);
    free(text);
}

/* --async-save: the save is written while the job steps on, so only its success line, later,
 * completes it. */
static void test_ckpt_async(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "100",
        "saving checkpoint at iteration     100 to /ckpt in torch_dist format",
        "  scheduled an async checkpoint save at iteration     100 to /ckpt",
        "110",
        "  successfully saved checkpoint from iteration     100 to /ckpt [ t 1/2, p 1/1 ]",
        "120",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(ckpt_of(out, 100), -1);
    assert_int_equal(ckpt_of(out, 110), -1);
    assert_int_equal(ckpt_of(out, 120), 100);
    free(out);
    free(text);
}

/* A save that a restart from an earlier step follows (the run went back: the save did not
 * hold) is forgotten; a later completed save still counts. A NeMo tail reads none of it. */
static void test_ckpt_restart(void **state)
{
    (void)state;
    /* Step 11 after the save at 20: the job restarted from step 10. */
    static const char *const pieces[] = {
        "20", "saving checkpoint at iteration      20 to /ckpt", "11",
        "30", "saving checkpoint at iteration      30 to /ckpt", "31",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(ckpt_of(out, 11), -1);
    assert_int_equal(ckpt_of(out, 30), -1);
    assert_int_equal(ckpt_of(out, 31), 30);
    free(out);
    out = TAIL(text, "--format", "nemo");
    assert_string_equal(out, "");
    free(out);
    free(text);
}

/* ---- tokens ---- */

/* The log's tokens are the job's; with world=W > 1 a report carries one rank's share,
 * rounded to the nearest, so that the controller's per-rank mean x W is the job's again. */
static void test_tokens_per_rank(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture_path(), &len);
    char *out = TAIL(text, (const char *)NULL);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=1 dur=76.0153 tokens=4194304 "));
    free(out);
    out = TAIL(text, "--world", "8");
    assert_non_null(strstr(out, "hs1 job=7 rank=0 world=8 step=1 dur=76.0153 tokens=524288 "));
    assert_int_equal(tu_count(out, "tokens=524288 "), 5);
    free(out);
    out = TAIL(text, "--world", "3"); /* 1398101.33 */
    assert_non_null(strstr(out, " world=3 step=1 dur=76.0153 tokens=1398101 "));
    free(out);
    out = TAIL(text, "--world", "1");
    assert_non_null(strstr(out, " world=1 step=1 dur=76.0153 tokens=4194304 "));
    free(out);
    assert_int_equal(setenv("SLURM_NTASKS", "16", 1), 0);
    out = TAIL(text, (const char *)NULL);
    assert_int_equal(unsetenv("SLURM_NTASKS"), 0);
    assert_non_null(strstr(out, " world=16 step=1 dur=76.0153 tokens=262144 "));
    free(out);
    free(text);

    /* Halves round up: 5 tokens over 2 ranks is 3; 7 over 4 is 2 (1.75). */
    static const char line[] =
        " iteration 1/ 9 | elapsed time per iteration (ms): 1000 | global batch size: 5 |\n"
        " iteration 2/ 9 | elapsed time per iteration (ms): 1000 | global batch size: 7 |\n";
    out = TAIL(line, "--seq-len", "1", "--world", "2");
    assert_non_null(strstr(out, " world=2 step=1 dur=1 tokens=3\n"));
    free(out);
    out = TAIL(line, "--seq-len", "1", "--world", "4");
    assert_non_null(strstr(out, " world=4 step=2 dur=1 tokens=2\n"));
    free(out);
}

/* ---- DeepSpeed ---- */

/* The real log read as DeepSpeed's: a step's time is the time between its step line and the
 * last one (the first, step 0 when the engine is set up, only starts the clock), within 0.5%
 * of what Megatron printed for the same steps. No tokens: the lines have none. */
static void test_deepspeed_real_log(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture_path(), &len);
    char *megatron = TAIL(text, "--format", "megatron");
    char *out = TAIL(text, "--format", "deepspeed");
    assert_int_equal(tu_count(out, " dur="), 5);
    assert_int_equal(tu_count(out, "pause="), 0); /* Megatron's save line is not DeepSpeed's */
    assert_null(strstr(out, "tokens="));
    for (unsigned step = 1; step <= 5; step++) {
        double ds = dur_of(out, step), mg = dur_of(megatron, step);
        if (!(fabs(ds - mg) < 0.005 * mg))
            fail_msg("step %u: %.3f s from the stamps, %.3f s from Megatron", step, ds, mg);
    }
    assert_true(fabs(dur_of(out, 1) - 76.061) < 1e-6);
    assert_non_null(strstr(last_err, "(1 step lines only started the clock)"));
    free(megatron);
    free(out);
    free(text);
}

/* A log of DeepSpeed's engine (steps_per_print 10): a checkpoint save after step 20 takes
 * 30 s and is left out of the next step time; the save is announced and completes when
 * the first "ready" line comes (every rank prints one); a step line without its stamp is
 * malformed; a restart from the checkpoint starts the clock again. */
static void test_deepspeed_saves(void **state)
{
    (void)state;
#define DS_STEP(t, n)                                                                              \
    "[2024-03-01 " t "] [INFO] [logging.py:96:log_dist] [Rank 0] step=" #n                         \
    ", skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
    static const char text[] = DS_STEP("10:00:00,000", 10) DS_STEP(
        "10:00:05,000",
        20) "[2024-03-01 10:00:05,010] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
            "global_step20 is about to be saved!\n"
            "[2024-03-01 10:00:35,010] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] "
            "Checkpoint global_step20 is ready now!\n"
            "[2024-03-01 10:00:35,020] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] "
            "Checkpoint global_step20 is ready now!\n" DS_STEP(
                "10:00:40,010",
                30) "[Rank 0] step=40, skipped=0, lr=[0.0001]\n" DS_STEP("10:00:45,010", 40)
                DS_STEP("10:05:00,000", 21) DS_STEP("10:05:04,000", 31);
#undef DS_STEP
    char *out = TAIL(text, "--format", "deepspeed");
    assert_int_equal(tu_count(out, " dur="), 4);
    assert_true(fabs(dur_of(out, 20) - 0.5) < 1e-6);
    assert_true(fabs(dur_of(out, 30) - 0.501) < 1e-6); /* 35.01 s less the save's 30 */
    assert_true(fabs(dur_of(out, 40) - 0.5) < 1e-6);
    assert_true(fabs(dur_of(out, 31) - 0.4) < 1e-6);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=20 pause=checkpoint\n"));
    assert_int_equal(ckpt_of(out, 20), -1);
    assert_int_equal(ckpt_of(out, 30), 20);
    assert_int_equal(ckpt_of(out, 40), 20);
    assert_int_equal(ckpt_of(out, 31), 20);
    assert_non_null(strstr(last_err, " 1 malformed skipped"));
    assert_non_null(strstr(last_err, "(2 step lines only started the clock)"));
    assert_non_null(strstr(last_err, "1 checkpoint saves announced"));
    free(out);

    /* Read as Megatron's, the same log has no iteration at all. */
    out = TAIL(text, (const char *)NULL);
    assert_string_equal(out, "");
    free(out);
}

static int setup(void **state)
{
    /* The reports' identity comes from the flags only. */
    static const char *const vars[] = {"SLURM_JOB_ID", "HOUSTON_JOB_ID", "RANK",
                                       "SLURM_PROCID", "LOCAL_RANK",     "SLURM_LOCALID",
                                       "WORLD_SIZE",   "SLURM_NTASKS",   "HOUSTON_STEP_SOCKET"};
    for (size_t i = 0; i < HN_ARRAY_LEN(vars); i++)
        unsetenv(vars[i]);
    return tu_tmpdir_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ckpt_real_log),   cmocka_unit_test(test_ckpt_success_line),
        cmocka_unit_test(test_ckpt_async),      cmocka_unit_test(test_ckpt_restart),
        cmocka_unit_test(test_tokens_per_rank), cmocka_unit_test(test_deepspeed_real_log),
        cmocka_unit_test(test_deepspeed_saves),
    };
    return cmocka_run_group_tests(tests, setup, tu_tmpdir_teardown);
}

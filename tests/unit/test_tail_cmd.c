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
#include <signal.h>
#include <sys/wait.h>

#define OUT_MAX ((size_t)64 * 1024)

static const char *fixture_path(void)
{
    static char path[PATH_MAX];
    return tu_fixture(path, sizeof(path), "training-logs/superbenchmark/megatron_deepspeed.log");
}

/*
 * Writes data (len bytes) to a log in the scratch folder and runs `houston tail --print --job 7
 * ARGS... LOG` (ARGS NULL-terminated) with stdout and stderr sent to files; returns what went
 * to stdout (the datagrams, one a line), which the caller frees, and keeps stderr in last_err.
 * The verb must exit 0.
 */
static char last_err[4096]; /* what the last run_tail wrote to stderr (its summary) */

static char *run_tail_v(const char *data, size_t len, va_list ap)
{
    char log[PATH_MAX];
    int n = snprintf(log, sizeof(log), "%s/train.log", tu_tmpdir());
    assert_true(n > 0 && (size_t)n < sizeof(log));
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_true(write(fd, data, len) == (ssize_t)len);
    assert_int_equal(close(fd), 0);

    char *argv[16];
    int argc = 0;
    argv[argc++] = xstrdup("tail");
    argv[argc++] = xstrdup("--print");
    argv[argc++] = xstrdup("--job");
    argv[argc++] = xstrdup("7");
    for (const char *a; (a = va_arg(ap, const char *));) {
        assert_true(argc < 14);
        argv[argc++] = xstrdup(a);
    }
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

static char *run_tail(const char *text, ...)
{
    va_list ap;
    va_start(ap, text);
    char *out = run_tail_v(text, strlen(text), ap);
    va_end(ap);
    return out;
}

/* run_tail of len bytes of data, which may hold NULs. */
static char *run_tail_bytes(const void *data, size_t len, ...)
{
    va_list ap;
    va_start(ap, len);
    char *out = run_tail_v(data, len, ap);
    va_end(ap);
    return out;
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

/* NeMo 2's line for 0-based global_step `step` (the report says step + 1). */
static const char *nemo_line(char *buf, size_t size, unsigned step)
{
    int n = snprintf(buf, size,
                     "    Training epoch 0, iteration %u/99 | lr: 3e-05 | global_batch_size: 4 | "
                     "global_step: %u | reduced_train_loss: 1.3 | train_step_timing in s: 0.25 | "
                     "consumed_samples: %u\n",
                     step, step, (step + 1) * 4);
    assert_true(n > 0 && (size_t)n < size);
    return buf;
}

/* A log made of pieces: "N" is iteration N's line (Megatron's), "nN" NeMo's line for its
 * global_step N, anything else a line of its own. */
static char *log_of(const char *const *pieces, size_t n)
{
    struct hn_buf b;
    hn_buf_init(&b, OUT_MAX);
    for (size_t i = 0; i < n; i++) {
        char line[512];
        char *end;
        int nemo = pieces[i][0] == 'n';
        const char *num = pieces[i] + nemo;
        unsigned long step = strtoul(num, &end, 10);
        if (end != num && *end == '\0')
            assert_int_equal(hn_buf_puts(&b, nemo ? nemo_line(line, sizeof(line), (unsigned)step)
                                                  : iter_line(line, sizeof(line), (unsigned)step)),
                             0);
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

/* The reports of out as "step dur ckpt" (dur to the ms, ckpt -1 when none), one a line. */
static void reports_of(const char *out, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *p = out; (p = strstr(p, " step=")) != NULL; p++) {
        unsigned long step = strtoul(p + 6, NULL, 10);
        const char *d = strstr(p, " dur="), *eol = strchr(p, '\n');
        if (!d || !eol || d > eol)
            continue; /* a pause notice */
        const char *c = strstr(p, " ckpt=");
        long ckpt = c && c < eol ? strtol(c + 6, NULL, 10) : -1;
        n += (size_t)snprintf(buf + n, size - n, "%lu %.3f %ld\n", step, strtod(d + 5, NULL), ckpt);
        assert_true(n < size);
    }
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

/* Megatron-DeepSpeed prints two lines when a save begins: one pause notice. */
static void test_ckpt_one_notice(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "10",
        "saving checkpoint at iteration      10 to /ckpt",
        "[2024-05-01 12:00:00] global rank 0 is saving checkpoint at iteration      10 to /ckpt",
        "11",
        "saving checkpoint at iteration      20 to /ckpt",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(tu_count(out, "step=10 pause=checkpoint\n"), 1);
    assert_int_equal(tu_count(out, "step=20 pause=checkpoint\n"), 1);
    assert_int_equal(ckpt_of(out, 11), 10);
    assert_non_null(strstr(last_err, "2 checkpoint saves announced"));
    free(out);
    free(text);
}

/* NeMo 2 with an async save, in the order NeMo prints its lines: Lightning's line and
 * "Global Checkpoint Save" begin it (one notice), "Scheduled async" hands it to the writer,
 * so the steps after it do not complete it (another rank's "Global" line after it does not
 * change that); an evaluation runs; "Successfully saved" comes
 * 14 steps later. Steps are global_step + 1: the save after global_step 49 is ckpt=50. */
static void test_nemo_async_save(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "n48",
        "n49",
        "    Epoch 0, global step 49: 'val_loss' was not in top 5",
        "    [NeMo I 2025-06-18 16:52:43 nemo_logging:393] Global Checkpoint Save : Rank: 0 : "
        "Iteration: 49 : Start time: 1750290740.432s : Save duration: 23.107s",
        "    [NeMo I 2025-06-18 16:52:54 nemo_logging:393] Scheduled async checkpoint save for "
        "/r/ckpt/m-last.ckpt",
        /* every rank prints its own; another rank's may come after rank 0's async line */
        "    [NeMo I 2025-06-18 16:52:54 nemo_logging:393] Global Checkpoint Save : Rank: 1 : "
        "Iteration: 49 : Start time: 1750290740.431s : Save duration: 23.301s",
        "    Validation: iteration 1/20",
        "    Validation: iteration 2/20",
        "n50",
        "n63",
        "    [NeMo I 2025-06-18 16:53:08 nemo_logging:393] Successfully saved checkpoint from "
        "iteration      49 to /r/ckpt/m-last.ckpt",
        "    [NeMo I 2025-06-18 16:53:08 nemo_logging:393] Async checkpoint save for step 50 "
        "(/r/ckpt/m-last.ckpt) finalized successfully.",
        "n64",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, "--format", "nemo");
    assert_int_equal(ckpt_of(out, 50), -1);
    assert_int_equal(ckpt_of(out, 51), -1);
    assert_int_equal(ckpt_of(out, 64), -1);
    assert_int_equal(ckpt_of(out, 65), 50);
    assert_int_equal(tu_count(out, "pause="), 2);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=50 pause=checkpoint\n"));
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=50 pause=eval\n"));
    assert_non_null(strstr(last_err, "1 checkpoint saves announced, 1 evaluations announced"));
    free(out);
    /* Read as Megatron's, none of it is. */
    out = TAIL(text, (const char *)NULL);
    assert_string_equal(out, "");
    free(out);
    free(text);
}

/* NeMo 2 saving synchronously: "Successfully saved" right after the save's first lines. A
 * Lightning job without NeMo's checkpoint IO prints only Lightning's line: the next step
 * completes the save, as Megatron's synchronous one, until a log shows a success line. */
static void test_nemo_sync_save(void **state)
{
    (void)state;
    static const char *const sync[] = {
        "n99",
        "Epoch 0, global step 99: 'val_loss' reached 1.61913 (best 1.61913), saving model to "
        "'/r/ckpt/m--val_loss=1.6191-epoch=0.ckpt' as top 5",
        "[NeMo I 2025-06-18 16:53:19 nemo_logging:393] Global Checkpoint Save : Rank: 0 : "
        "Iteration: 99 : Start time: 1750290797.320s : Save duration: 1.718s",
        "[NeMo I 2025-06-18 16:53:19 nemo_logging:393] Successfully saved checkpoint from "
        "iteration      99 to /r/ckpt/m--val_loss=1.6191-epoch=0.ckpt",
        "n100",
    };
    char *text = log_of(sync, HN_ARRAY_LEN(sync));
    char *out = TAIL(text, "--format", "nemo");
    assert_int_equal(ckpt_of(out, 100), -1);
    assert_int_equal(ckpt_of(out, 101), 100);
    assert_int_equal(tu_count(out, "step=100 pause=checkpoint\n"), 1);
    free(out);
    free(text);

    static const char *const lightning[] = {
        "n9",
        "Epoch 0, global step 9: 'reduced_train_loss' reached 2.5 (best 2.5), saving model to "
        "'/r/ckpt/a.ckpt' as top 1",
        "n10",
        "Epoch 0, global step 19: 'reduced_train_loss' was not in top 1",
        "n15", /* a restart from step 15: the save at 20 did not hold */
        "n16",
    };
    text = log_of(lightning, HN_ARRAY_LEN(lightning));
    out = TAIL(text, "--format", "nemo");
    assert_int_equal(ckpt_of(out, 10), -1);
    assert_int_equal(ckpt_of(out, 11), 10);
    assert_int_equal(ckpt_of(out, 16), 10);
    assert_int_equal(ckpt_of(out, 17), 10);
    free(out);
    free(text);
}

/* Megatron-LM's evaluations after training (the verbose ones, the only ones that print
 * "Evaluating iter"): one pause notice after the last step reported, however many evaluation
 * sets follow (validation, then test); an evaluation before any step (nothing to hold yet)
 * sends none. */
static void test_eval_notice(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "Evaluating on 80 samples",
        "Evaluating iter 1/5",
        "Evaluating iter 2/5",
        "100",
        "110",
        "  successfully saved checkpoint from iteration     110 to /ckpt [ t 1/1, p 1/1 ]",
        "Evaluating on 80 samples",
        "Evaluating iter 1/5",
        "Evaluating iter 5/5",
        " validation loss at the end of training for val data | lm loss value: 2.1 |",
        "Evaluating on 80 samples",
        "Evaluating iter 1/5",
        "Evaluating iter 5/5",
        " validation loss at the end of training for test data | lm loss value: 2.2 |",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(tu_count(out, "pause=eval"), 1);
    assert_non_null(strstr(out, "step=110 dur=75 tokens=4194304\nhs1 job=7 rank=0 step=110 "
                                "pause=eval\n"));
    assert_non_null(strstr(last_err, ", 1 evaluations announced"));
    assert_null(strstr(last_err, "checkpoint saves"));
    free(out);
    /* Read as NeMo's, Megatron's evaluation lines are not. */
    out = TAIL(text, "--format", "nemo");
    assert_string_equal(out, "");
    free(out);
    free(text);
}

/* The steps of the evaluation notices `houston tail` sends for the log of pieces (log_of),
 * each followed by a blank, in got. */
static void eval_notices(const char *const *pieces, size_t n, char *got, size_t size)
{
    char *text = log_of(pieces, n);
    char *out = TAIL(text, (const char *)NULL);
    size_t at = 0;
    got[0] = '\0';
    for (const char *p = out; (p = strstr(p, " pause=eval\n")) != NULL; p++) {
        const char *step = p;
        while (step > out && step[-1] != '=')
            step--;
        at += (size_t)snprintf(got + at, size - at, "%.*s ", (int)(p - step), step);
        assert_true(at < size);
    }
    free(out);
    free(text);
}

/* Megatron-LM's periodic evaluations print nothing until "validation loss at iteration N":
 * once that showed the interval, a pause notice follows the line of each step it divides. A
 * run resumed at 5,500 with an interval of 1,000 evaluates at 6,000 first: taken as the
 * interval until 7,000's shows the greatest common divisor, so 8,000 is announced (one log
 * line per 500 steps). */
static void test_periodic_eval_notice(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "5500", "6000", " validation loss at iteration 6000 | lm loss value: 2.1 |",
        "6500", "7000", " validation loss at iteration 7000 | lm loss value: 2.0 |",
        "7500", "8000", " validation loss at iteration 8000 | lm loss value: 1.9 |",
        "8500",
    };
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_int_equal(tu_count(out, "pause=eval"), 1);
    assert_non_null(strstr(out, "step=8000 dur=75 tokens=4194304\nhs1 job=7 rank=0 step=8000 "
                                "pause=eval\nhs1 job=7 rank=0 step=8500 "));
    assert_non_null(strstr(last_err, ", 1 evaluations announced"));
    free(out);
    free(text);
    /* With its arguments (eval_interval 1000), the first is announced too. */
    static const char *const args[] = {
        "  eval_interval ................................... 1000",
        "  eval_iters ...................................... 10",
        "5500",
        "6000",
        " validation loss at iteration 6000 | lm loss value: 2.1 |",
        "6500",
        "7000",
        " validation loss at iteration 7000 | lm loss value: 2.0 |",
    };
    char got[64];
    eval_notices(args, HN_ARRAY_LEN(args), got, sizeof(got));
    assert_string_equal(got, "6000 7000 ");
    /* eval_iters 0: it never evaluates, nothing is announced. */
    static const char *const never[] = {
        "  eval_interval ................................... 1000",
        "  eval_iters ...................................... 0",
        "6000",
        "7000",
    };
    eval_notices(never, HN_ARRAY_LEN(never), got, sizeof(got));
    assert_string_equal(got, "");
    /* An interval, but no validation data: the first announced evaluation does not come
     * (no "validation loss" line before the next iteration line), and none is announced after
     * it. */
    static const char *const none[] = {
        "  eval_interval ................................... 1000",
        "  eval_iters ...................................... 10",
        "6000",
        "6500",
        "7000",
        "8000",
    };
    eval_notices(none, HN_ARRAY_LEN(none), got, sizeof(got));
    assert_string_equal(got, "6000 ");
    /* A run restarted from its checkpoint at 50, its log appended to the same file, evaluates
     * at 100 again: announced again. */
    static const char *const again[] = {
        "  eval_interval ................................... 100",
        "90",
        "100",
        " validation loss at iteration 100 | lm loss value: 2.1 |",
        "110",
        "60",
        "100",
        " validation loss at iteration 100 | lm loss value: 2.1 |",
        "110",
    };
    eval_notices(again, HN_ARRAY_LEN(again), got, sizeof(got));
    assert_string_equal(got, "100 100 ");
}

/* NeMo 1 (progress bars, one redraw per '\r'): Lightning's checkpoint line prints the steps
 * done (trainer.global_step), where NeMo 2's prints the 0-based iteration: the save after
 * the bar of global_step=49 (step 50) is "global step 50", a pause after step 50 and then
 * ckpt=50. Lightning's sanity check before training and a second validation set send no
 * second evaluation notice. */
static void test_nemo1_save(void **state)
{
    (void)state;
#define BAR(n, gs)                                                                                 \
    "Epoch 0: : " #n "%|#| " #n "/100 [01:00<01:00, reduced_train_loss=2.5, global_step=" #gs      \
    ".000, consumed_samples=512.0, train_step_timing in s=1.5]\r"
    static const char text[] = "Sanity checking Validation: iteration 1/2\n" BAR(49, 48) BAR(
        50,
        49) "\nEpoch 0, global step 50: 'val_loss' reached 1.61913 (best 1.61913), saving model to "
            "'/r/ckpt/megatron_gpt--val_loss=1.62-step=50.ckpt' as top 5\n"
            "Validation: iteration 1/20\nValidation: iteration 1/5\n" BAR(51, 50) BAR(52, 51);
#undef BAR
    char *out = TAIL(text, "--format", "nemo");
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "49 1.500 -1\n50 1.500 -1\n51 1.500 50\n52 1.500 50\n");
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=50 pause=checkpoint\n"));
    assert_int_equal(tu_count(out, "pause=eval"), 1);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=50 pause=eval\n"));
    free(out);
}

/* A log read with the wrong --format reports nothing; a hint on stderr says which format its
 * iteration lines are, once ten of them came (a file followed never ends) or at its end. A
 * log with lines of both (Megatron-DeepSpeed's) gets none under either. */
static void test_format_hint(void **state)
{
    (void)state;
    static const char *const pieces[] = {"n0", "n1", "n2", "n3", "n4",  "n5",
                                         "n6", "n7", "n8", "n9", "n10", "n11"};
    char *text = log_of(pieces, HN_ARRAY_LEN(pieces));
    char *out = TAIL(text, (const char *)NULL);
    assert_string_equal(out, "");
    assert_non_null(strstr(last_err, "houston tail: 10 iteration lines read as nemo's and none as "
                                     "megatron's: is this log --format nemo?\n"));
    assert_int_equal(tu_count(last_err, "is this log"), 1);
    free(out);
    free(text);

    out = TAIL("    Training epoch 0, iteration 0/9 | global_step: 0 | train_step_timing in s: 1\n",
               "--format", "deepspeed");
    assert_non_null(strstr(last_err, "1 iteration lines read as nemo's and none as deepspeed's"));
    free(out);
    out = TAIL("    Training epoch 0, iteration 0/9 | global_step: 0 | train_step_timing in s: 1\n",
               "--format", "nemo");
    assert_null(strstr(last_err, "is this log"));
    free(out);

    size_t len;
    text = tu_slurp(fixture_path(), &len);
    out = TAIL(text, (const char *)NULL);
    assert_null(strstr(last_err, "is this log"));
    free(out);
    out = TAIL(text, "--format", "deepspeed");
    assert_null(strstr(last_err, "is this log"));
    free(out);
    /* Both kinds, neither NeMo's: Megatron's lines, which carry their own step times. */
    out = TAIL(text, "--format", "nemo");
    assert_non_null(strstr(last_err, "5 iteration lines read as megatron's and none as nemo's"));
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
 * last one, within 0.5% of what Megatron printed for the same steps. Step 0 (the engine set
 * up) does not start the clock and step 1 only starts it. No tokens: the lines have none. */
static void test_deepspeed_real_log(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture_path(), &len);
    char *megatron = TAIL(text, "--format", "megatron");
    char *out = TAIL(text, "--format", "deepspeed");
    assert_int_equal(tu_count(out, " dur="), 4);
    assert_null(strstr(out, " step=1 "));
    assert_int_equal(tu_count(out, "pause="), 0); /* Megatron's save line is not DeepSpeed's */
    assert_null(strstr(out, "tokens="));
    for (unsigned step = 2; step <= 5; step++) {
        double ds = dur_of(out, step), mg = dur_of(megatron, step);
        if (!(fabs(ds - mg) < 0.005 * mg))
            fail_msg("step %u: %.3f s from the stamps, %.3f s from Megatron", step, ds, mg);
    }
    assert_true(fabs(dur_of(out, 2) - 75.124) < 1e-6);
    assert_non_null(strstr(last_err, "(2 step lines only started the clock)"));
    free(out);

    /* Tokens from DeepSpeed's train_batch_size (2048) x --seq-len, as Megatron's line says;
     * --flops-per-token on every report, for the MFU the log does not print. */
    out = TAIL(text, "--format", "deepspeed", "--seq-len", "2048", "--flops-per-token", "4.3e10");
    assert_int_equal(tu_count(out, " tokens=4194304 fpt=4.3e+10\n"), 4);
    assert_int_equal(tu_count(megatron, " tokens=4194304 "), 5);
    free(out);
    out = TAIL(text, "--flops-per-token", "4.3e10");
    assert_int_equal(tu_count(out, " fpt=4.3e+10\n"), 5);
    /* Without a world size the controller would take the job's tokens for one GPU's. */
    assert_non_null(strstr(last_err, "warning: --flops-per-token without a world size"));
    free(out);
    out = TAIL(text, "--flops-per-token", "4.3e10", "--world", "16");
    assert_int_equal(tu_count(out, " fpt=4.3e+10\n"), 5);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 world=16 step=1 dur=76.0153 tokens=262144 "));
    assert_null(strstr(last_err, "warning"));
    /* SLURM_NTASKS counts tasks: 2 of them on 2 nodes of 8 GPUs is a torchrun job of 16
     * ranks, most likely; with 16 tasks, or WORLD_SIZE set, or --world, no warning. */
    static const char *const slurm[][2] = {
        {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_GPUS_ON_NODE", "8"}};
    for (size_t i = 0; i < HN_ARRAY_LEN(slurm); i++)
        assert_int_equal(setenv(slurm[i][0], slurm[i][1], 1), 0);
    free(out);
    out = TAIL(text, "--flops-per-token", "4.3e10");
    assert_non_null(strstr(out, " world=2 step=1 "));
    assert_non_null(strstr(last_err, "warning: the world size 2 is SLURM_NTASKS"));
    assert_non_null(strstr(last_err, "give --world 16, or the controller's MFU comes out 8 times"));
    free(out);
    out = TAIL(text, "--flops-per-token", "4.3e10", "--world", "2");
    assert_null(strstr(last_err, "warning"));
    free(out);
    out = TAIL(text, "--seq-len", "2048");
    assert_null(strstr(last_err, "warning")); /* no MFU asked for */
    free(out);
    assert_int_equal(setenv("WORLD_SIZE", "2", 1), 0);
    out = TAIL(text, "--flops-per-token", "4.3e10");
    assert_null(strstr(last_err, "warning"));
    assert_int_equal(unsetenv("WORLD_SIZE"), 0);
    free(out);
    assert_int_equal(setenv("SLURM_NTASKS", "16", 1), 0);
    out = TAIL(text, "--flops-per-token", "4.3e10");
    assert_null(strstr(last_err, "warning"));
    for (size_t i = 0; i < HN_ARRAY_LEN(slurm); i++)
        assert_int_equal(unsetenv(slurm[i][0]), 0);
    free(megatron);
    free(out);
    free(text);
}

/* A log of DeepSpeed's engine (steps_per_print 10): step 0 when the engine is set up; a save
 * after step 20, whose two ranks' "ready" lines come 13 and 30 s after it began: the 30 s
 * are left out of the next step time; a step line without its stamp is malformed; a crash,
 * and a run resumed from step 20 that prints step 0 and then step 30 and 40 again: the clock
 * starts again; a save that never completes leaves nothing out. */
static void test_deepspeed_saves(void **state)
{
    (void)state;
#define DS_STEP(t, n)                                                                              \
    "[2024-03-01 " t "] [INFO] [logging.py:96:log_dist] [Rank 0] step=" #n                         \
    ", skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
#define DS_SAVE(t, n)                                                                              \
    "[2024-03-01 " t                                                                               \
    "] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step" #n                 \
    " is about to be saved!\n"
#define DS_READY(t, n)                                                                             \
    "[2024-03-01 " t "] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint "         \
    "global_step" #n " is ready now!\n"
    static const char text[] =
        DS_STEP("10:00:00,000", 0) DS_STEP("10:00:02,000", 10) DS_STEP("10:00:07,000", 20)
            DS_SAVE("10:00:07,010", 20) DS_READY("10:00:20,010", 20) DS_READY("10:00:37,010", 20)
                DS_STEP("10:00:42,010", 30) "[Rank 0] step=40, skipped=0, lr=[0.0001]\n" DS_STEP(
                    "10:00:47,010", 40) DS_STEP("10:05:00,000", 0) DS_STEP("10:05:12,000", 30)
                    DS_STEP("10:05:17,000", 40) DS_STEP("10:05:22,000", 50)
                        DS_SAVE("10:05:22,010", 50) DS_STEP("10:05:32,010", 60)
                            DS_STEP("10:05:42,010", 70);
    char *out = TAIL(text, "--format", "deepspeed");
    char got[512];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 0.500 -1\n"
                             "30 0.501 20\n" /* 35.01 s less the save's 30 */
                             "40 0.500 20\n"
                             "40 0.500 20\n" /* the resumed run */
                             "50 0.500 20\n"
                             /* 60: after a save with no "ready" line, how long it took is
                              * not known; the save is not complete either */
                             "70 1.000 20\n");
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=20 pause=checkpoint\n"));
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=50 pause=checkpoint\n"));
    assert_non_null(strstr(last_err, " 1 malformed skipped"));
    assert_non_null(strstr(last_err, "(5 step lines only started the clock)"));
    assert_non_null(strstr(last_err, "2 checkpoint saves announced"));
    free(out);

    /* DeepSpeed releases that print no "ready" line: the step after a save only starts the
     * clock, and completes the save (a synchronous save returns to training once written). */
    static const char no_ready[] = DS_STEP("10:00:00,000", 10) DS_STEP(
        "10:00:05,000",
        20) "[2024-03-01 10:00:05,010] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
            "global_step20 is begin to save!\n" DS_STEP("10:01:15,000", 30)
                DS_STEP("10:01:20,000", 40);
    out = TAIL(no_ready, "--format", "deepspeed", "--global-batch", "4", "--seq-len", "8");
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 0.500 -1\n40 0.500 20\n");
    assert_non_null(strstr(last_err, "(2 step lines only started the clock)"));
    assert_int_equal(tu_count(out, " tokens=32"), 2); /* no train_batch_size line: --global-batch */
    free(out);

    /* A "ready" line after the next step line (an async engine): that step is not timed; the
     * save is complete at the first step line after its "ready" line. */
    static const char late_ready[] = DS_STEP("10:00:00,000", 10) DS_STEP("10:00:05,000", 20)
        DS_STEP("10:00:10,000", 30) DS_SAVE("10:00:10,010", 30) DS_READY("10:00:10,520", 30)
            DS_STEP("10:00:15,510", 40) DS_SAVE("10:00:15,520", 40) DS_STEP("10:00:20,000", 50)
                DS_READY("10:00:21,000", 40) DS_STEP("10:00:25,000", 60) DS_SAVE("10:00:25,010", 60)
                    DS_READY("10:00:26,000", 40) DS_STEP("10:00:30,000", 70)
                        DS_STEP("10:00:35,000", 80);
    /* A step line without its stamp after a save ends it as well: the ready line after it
     * does not make the next stamped step timed. */
    static const char stampless[] = DS_STEP("10:00:00,000", 10) DS_STEP("10:00:10,000", 20) DS_SAVE(
        "10:00:10,500", 20) "[Rank 0] step=30, skipped=0, lr=[0.1]\n" DS_READY("10:00:40,000", 20)
        DS_STEP("10:00:50,000", 40) DS_STEP("10:00:55,000", 50);
    out = TAIL(stampless, "--format", "deepspeed");
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 1.000 -1\n50 0.500 20\n");
    free(out);

    out = TAIL(late_ready, "--format", "deepspeed");
    reports_of(out, got, sizeof(got));
    /* 70: the save at 60 had only a late "ready" line of the one at 40, not its own */
    assert_string_equal(got, "20 0.500 -1\n30 0.500 -1\n40 0.500 30\n60 0.500 40\n80 0.500 40\n");
    free(out);

    /* A save under a tag of the job's own ("latest", "epoch-3") names no step: it is of the
     * step the log showed last, announced and completed as a global_stepN one. A "ready"
     * line before any such save, or a save before any step line, goes by nothing. */
#define DS_TAG(t, tag, what)                                                                       \
    "[2024-03-01 " t "] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint " tag " " what \
    "\n"
    static const char tagged[] = DS_TAG("09:59:59,000", "early", "is about to be saved!")
        DS_TAG("09:59:59,500", "stray", "is ready now!") DS_STEP("10:00:00,000", 10)
            DS_STEP("10:00:05,000", 20) DS_TAG("10:00:05,010", "latest", "is about to be saved!")
                DS_TAG("10:00:25,010", "latest", "is ready now!") DS_STEP("10:00:30,010", 30)
                    DS_STEP("10:00:35,010", 40)
                        DS_TAG("10:00:35,020", "epoch-3", "is begin to save!")
                            DS_TAG("10:00:36,020", "epoch-3", "is ready now!")
                                DS_STEP("10:00:40,020", 50);
    out = TAIL(tagged, "--format", "deepspeed");
    reports_of(out, got, sizeof(got));
    /* 30: 25.01 s less the save's 20; 50: 5.01 s less 1 */
    assert_string_equal(got, "20 0.500 -1\n30 0.501 20\n40 0.500 20\n50 0.401 40\n");
    assert_int_equal(tu_count(out, "pause=checkpoint"), 2);
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=20 pause=checkpoint\n"));
    assert_non_null(strstr(out, "hs1 job=7 rank=0 step=40 pause=checkpoint\n"));
    free(out);
#undef DS_TAG
#undef DS_STEP
#undef DS_SAVE
#undef DS_READY

    /* Read as Megatron's, the same log has no iteration at all. */
    out = TAIL(text, (const char *)NULL);
    assert_string_equal(out, "");
    free(out);

    /* torchrun's prefix before the stamp. */
    static const char torchrun[] =
        "[default0]:[2024-03-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, "
        "skipped=0, lr=[0.1]\n"
        "[default0]:[2024-03-01 10:00:04,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, "
        "skipped=0, lr=[0.1]\n";
    out = TAIL(torchrun, "--format", "deepspeed");
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 0.400 -1\n");
    free(out);
}

/* Hugging Face's Trainer on DeepSpeed: an evaluation between two step lines (its metrics give
 * its runtime) is left out of the step time, as a save is; two named evaluation sets count
 * both; an evaluation before the clock starts changes nothing, and one longer than the time
 * between the lines (a clock that went wrong) leaves that step untimed. */
static void test_deepspeed_eval(void **state)
{
    (void)state;
#define DS_STEP(t, n)                                                                              \
    "[2024-03-01 " t "] [INFO] [logging.py:96:log_dist] [Rank 0] step=" #n                         \
    ", skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
    static const char text[] = "{'eval_loss': 2.5, 'eval_runtime': 30.0, 'epoch': 0.0}\n" DS_STEP(
        "10:00:00,000", 10)
        DS_STEP("10:00:05,000",
                20) "{'loss': 1.1, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
                    "{'eval_loss': 1.25, 'eval_runtime': 60.0, 'eval_samples_per_second': 81.0, "
                    "'epoch': 0.2}\n" DS_STEP(
                        "10:01:10,000", 30) "{'eval_a_runtime': 20.0}\n{'eval_b_runtime': "
                                            "'10.0'}\n" DS_STEP("10:01:45,000",
                                                                40) "{'eval_runtime': "
                                                                    "99.0}\n" DS_STEP("10:02:00,"
                                                                                      "000",
                                                                                      50)
                                                                        DS_STEP("10:02:05,000", 60);
#undef DS_STEP
    char *out = TAIL(text, "--format", "deepspeed");
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 0.500 -1\n"
                             "30 0.500 -1\n" /* 65 s less the evaluation's 60 */
                             "40 0.500 -1\n" /* 35 s less 20 + 10 */
                             /* 50: 99 s of evaluation in 15 s: not timed */
                             "60 0.500 -1\n");
    assert_null(strstr(out, "pause="));
    assert_non_null(strstr(last_err, ", 5 evaluations left out of step times"));
    assert_non_null(strstr(last_err, "(2 step lines only started the clock)"));
    free(out);
}

/* ---- damaged input ---- */

/* The summary's malformed count, from last_err. */
static unsigned long malformed_of(void)
{
    const char *p = strstr(last_err, " iterations reported, ");
    assert_non_null(p);
    return strtoul(p + strlen(" iterations reported, "), NULL, 10);
}

/* A run of NULs is no text: logrotate's copytruncate under a writer without O_APPEND (Slurm's
 * output file) leaves a hole of zeros as long as the old log before the next line, a crash
 * zeros a file's last blocks. The line after the hole is read; a line the zeros cut short is
 * malformed (not read as "elapsed ...: 75" ms), never glued to the next. */
static void test_nul_hole(void **state)
{
    (void)state;
    const size_t hole = 40000;
    char l1[512], l2[512], l3[512], l4[512];
    iter_line(l1, sizeof(l1), 1);
    iter_line(l2, sizeof(l2), 2);
    iter_line(l3, sizeof(l3), 3);
    iter_line(l4, sizeof(l4), 4);
    char *cut = strstr(l3, "(ms): 75") + strlen("(ms): 75"); /* 75000.0 cut to 75 */
    size_t n1 = strlen(l1), n2 = strlen(l2), n3 = (size_t)(cut - l3), n4 = strlen(l4);
    size_t len = n1 + hole + n2 + n3 + 16 + n4;
    char *data = xcalloc(1, len), *p = data;
    memcpy(p, l1, n1);
    p += n1 + hole;
    memcpy(p, l2, n2);
    p += n2;
    memcpy(p, l3, n3);
    p += n3 + 16;
    memcpy(p, l4, n4);
    char *out = run_tail_bytes(data, len, (const char *)NULL);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n2 75.000 -1\n4 75.000 -1\n");
    assert_int_equal(malformed_of(), 1);
    free(out);
    free(data);
}

/* A line over 16 KiB is skipped, and malformed when its first or its last 16 KiB look like
 * an iteration: one whose iteration text follows 20,000 bytes of a progress bar drawn without
 * '\r' counts; 40,000 bytes of anything else do not. Before, only the first 16 KiB were
 * looked at, so that line went uncounted. */
static void test_overlong_line(void **state)
{
    (void)state;
    char l1[512], l2[512], l3[512];
    iter_line(l1, sizeof(l1), 1);
    iter_line(l2, sizeof(l2), 2);
    iter_line(l3, sizeof(l3), 3);
    size_t n1 = strlen(l1), n2 = strlen(l2), n3 = strlen(l3), bar = 20000, junk = 40000;
    size_t len = n1 + bar + n2 + junk + 1 + n3;
    char *data = xcalloc(1, len), *p = data;
    memcpy(p, l1, n1);
    memset(p += n1, '#', bar);
    memcpy(p += bar, l2, n2);
    memset(p += n2, 'x', junk);
    p[junk] = '\n';
    memcpy(p + junk + 1, l3, n3);
    char *out = run_tail_bytes(data, len, (const char *)NULL);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n3 75.000 -1\n");
    assert_int_equal(malformed_of(), 1);
    assert_non_null(strstr(last_err, "houston tail: 4 lines read, 2 iterations reported"));
    free(out);
    free(data);
}

/* The last 16 KiB of an overlong line are the line's, not only what came after its first
 * 16 KiB: a NeMo 1 progress bar whose "train_step_timing" straddles byte 16,384 of the line
 * (16,370 bytes of a bar drawn without '\r' before it) is seen whole in the line's last
 * 16 KiB, and counted. Before, the first 16 KiB held "...train_st" and the ring only
 * "ep_timing in s=1.5]": neither looked like a record, and the line went uncounted. */
static void test_overlong_line_straddling(void **state)
{
    (void)state;
    static const char bar[] = "Epoch 0: : 7%|#| 7/100 [01:00<01:00, global_step=6.000, "
                              "train_step_timing in s=1.5]";
    const char *key = strstr(bar, "train_step_timing");
    size_t head = 16384 - (size_t)(key - bar) - 8; /* the line's byte 16,384 is in the key */
    size_t len = head + sizeof(bar) - 1 + 1;
    char *data = xcalloc(1, len);
    memset(data, '#', head);
    memcpy(data + head, bar, sizeof(bar) - 1);
    data[len - 1] = '\n';
    char *out = run_tail_bytes(data, len, "--format", "nemo", (const char *)NULL);
    assert_string_equal(out, "");
    assert_int_equal(malformed_of(), 1);
    free(out);
    free(data);
}

/* The log's last line without its terminator is read when it is whole (a writer that ends
 * without a newline), but a line cut short (a job killed with its output buffered, a file
 * ending mid-write) is malformed, not read with what is left of its numbers: Megatron ends
 * each field with " |", a NeMo 1 progress bar with ']'; other lines must not end in a
 * number. */
static void test_cut_last_line(void **state)
{
    (void)state;
    char l1[512], l2[512];
    iter_line(l1, sizeof(l1), 1);
    iter_line(l2, sizeof(l2), 2);
    char text[1200];
    l2[strlen(l2) - 1] = '\0'; /* whole, no newline */
    (void)snprintf(text, sizeof(text), "%s%s", l1, l2);
    char *out = TAIL(text, (const char *)NULL);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n2 75.000 -1\n");
    assert_int_equal(malformed_of(), 0);
    free(out);

    *(strstr(l2, "(ms): 75") + strlen("(ms): 75")) = '\0'; /* cut in its step time */
    (void)snprintf(text, sizeof(text), "%s%s", l1, l2);
    out = TAIL(text, (const char *)NULL);
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n");
    assert_int_equal(malformed_of(), 1);
    free(out);

#define BAR "Epoch 0: : 7%|#| 7/100 [01:00<01:00, global_step=6.000, train_step_timing in s=49.5"
    out = TAIL(BAR "]   ", "--format", "nemo"); /* tqdm pads a bar with blanks */
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "7 49.500 -1\n");
    free(out);
    out = TAIL(BAR, "--format", "nemo");
    assert_string_equal(out, "");
    assert_int_equal(malformed_of(), 1);
    free(out);
#undef BAR

    /* Lines without such an end are malformed when they end in a number, which may be cut:
     * NeMo 2's in its step time (0.2 of 0.25), a save line in its step (10 of 1000). Before,
     * both were read: a 0.2 s step, a save announced at step 10. */
    char n2[512];
    nemo_line(n2, sizeof(n2), 3);
    *(strstr(n2, "in s: 0.2") + strlen("in s: 0.2")) = '\0';
    out = TAIL(n2, "--format", "nemo");
    assert_string_equal(out, "");
    assert_int_equal(malformed_of(), 1);
    free(out);
    (void)snprintf(text, sizeof(text), "%ssaving checkpoint at iteration      10", l1);
    out = TAIL(text, (const char *)NULL);
    assert_null(strstr(out, "pause="));
    assert_int_equal(malformed_of(), 1);
    free(out);
    /* Cut in its path, after the step: whole. */
    (void)snprintf(text, sizeof(text), "%ssaving checkpoint at iteration    1000 to /ck", l1);
    out = TAIL(text, (const char *)NULL);
    assert_non_null(strstr(out, " step=1000 pause=checkpoint"));
    assert_int_equal(malformed_of(), 0);
    free(out);
}

/* Runs `houston tail --follow --print --job 7 ARGS... LOG` (args: NULL-terminated) in a child
 * whose stdout and stderr go to outp; returns its pid. */
static pid_t spawn_follower(const char *log, const char *outp, const char *const *args)
{
    (void)fflush(stdout);
    (void)fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
            _exit(99);
        char *argv[16] = {"tail", "--follow", "--print", "--job", "7"};
        int argc = 5;
        for (; *args && argc < 14; args++)
            argv[argc++] = (char *)*args;
        argv[argc++] = (char *)log;
        _exit(hn_cmd_tail(argc, argv));
    }
    return pid;
}

/* What outp holds once it holds needle (waited for up to 10 s; the caller frees). */
static char *wait_output(const char *outp, const char *needle)
{
    char *out = NULL;
    for (int i = 0; i < 1000 && (!out || !strstr(out, needle)); i++) {
        tu_sleep_ms(10);
        if (access(outp, F_OK) != 0)
            continue; /* the child has not opened it yet */
        free(out);
        out = tu_slurp(outp, NULL);
    }
    return out ? out : xstrdup("");
}

/* Stops the follower with SIGTERM; it must exit 0. Returns what it wrote (the caller frees). */
static char *stop_follower(pid_t pid, const char *outp)
{
    assert_int_equal(kill(pid, SIGTERM), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    return tu_slurp(outp, NULL);
}

/* --follow stopped (SIGTERM, as a batch script's `kill %1` once the training has ended) still
 * reads what the file held at the stop: the job's last lines, written since the last poll,
 * are not lost. A line still being written is not read. */
static void test_follow_stop(void **state)
{
    (void)state;
    char log[PATH_MAX], outp[PATH_MAX], line[512];
    tu_write_in(log, sizeof(log), tu_tmpdir(), "follow.log", iter_line(line, sizeof(line), 1));
    (void)snprintf(outp, sizeof(outp), "%s/follow.out", tu_tmpdir());
    static const char *const from_start[] = {"--from-start", NULL};
    pid_t pid = spawn_follower(log, outp, from_start);
    /* Step 1 reported: the follower now sleeps between polls. */
    char *out = wait_output(outp, " step=1 ");
    assert_non_null(strstr(out, " step=1 "));
    free(out);
    FILE *f = fopen(log, "a");
    assert_non_null(f);
    assert_true(fputs(iter_line(line, sizeof(line), 2), f) >= 0);
    line[40] = '\0';
    assert_true(fputs(line, f) >= 0); /* step 3's line, half written */
    assert_int_equal(fclose(f), 0);
    out = stop_follower(pid, outp);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n2 75.000 -1\n");
    assert_non_null(strstr(out, "houston tail: 2 lines read, 2 iterations reported, 0 malformed"));
    free(out);
}

/* Whether process pid has path open and has read it up to offset `at` (/proc/PID/fdinfo). */
static int read_to(pid_t pid, const char *path, long at)
{
    char dir[64], link[PATH_MAX], target[PATH_MAX], info[PATH_MAX];
    (void)snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    for (int fd = 3; fd < 64; fd++) {
        (void)snprintf(link, sizeof(link), "%s/%d", dir, fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, path) != 0)
            continue;
        (void)snprintf(info, sizeof(info), "/proc/%d/fdinfo/%d", (int)pid, fd);
        char *text = tu_slurp(info, NULL);
        const char *pos = strstr(text, "pos:");
        long got = pos ? strtol(pos + 4, NULL, 10) : -1;
        free(text);
        return got == at;
    }
    return 0;
}

/*
 * Runs `houston tail --follow --print --job 7 ARGS... LOG` (args: NULL-terminated) in a child,
 * on a log that holds `before`; once the child has read that far, appends `after`, waits for
 * the report of step `last`, and stops the child. Returns what it wrote, stdout and stderr (the
 * caller frees).
 */
static char *follow_from(const char *before, const char *after, unsigned last,
                         const char *const *args)
{
    char log[PATH_MAX], outp[PATH_MAX], want[64];
    tu_write_in(log, sizeof(log), tu_tmpdir(), "from.log", before);
    (void)snprintf(outp, sizeof(outp), "%s/from.out", tu_tmpdir());
    pid_t pid = spawn_follower(log, outp, args);
    int ready = 0;
    for (int i = 0; i < 1000 && !ready; i++) {
        tu_sleep_ms(10);
        ready = read_to(pid, log, (long)strlen(before));
    }
    assert_true(ready);
    FILE *f = fopen(log, "a");
    assert_non_null(f);
    assert_true(fputs(after, f) >= 0);
    assert_int_equal(fclose(f), 0);
    (void)snprintf(want, sizeof(want), " step=%u dur=", last);
    free(wait_output(outp, want));
    return stop_follower(pid, outp);
}

/*
 * --from-end, and --follow without --from-start: the lines the file held at the start are not
 * sent, but what they said holds. Megatron's eval interval, printed with its arguments at the
 * start, makes step 100's line (half written at the start, completed after) followed by an
 * evaluation notice; the line being written is sent once whole (no report was sent for it
 * before). DeepSpeed's last step line before the start times the first one after it.
 */
static void test_from_end(void **state)
{
    (void)state;
    char l90[512], l100[512], l110[512];
    iter_line(l90, sizeof(l90), 90);
    iter_line(l100, sizeof(l100), 100);
    iter_line(l110, sizeof(l110), 110);
    char before[2048], after[2048];
    (void)snprintf(before, sizeof(before),
                   "  eval_interval ................................... 100\n"
                   "  eval_iters ...................................... 10\n%s%.40s",
                   l90, l100);
    (void)snprintf(after, sizeof(after), "%s%s", l100 + 40, l110);

    static const char *const from_end[] = {"--from-end", NULL};
    static const char *const none[] = {NULL};
    static const char *const from_start[] = {"--from-start", NULL};
    for (int flag = 0; flag < 2; flag++) {
        char *out = follow_from(before, after, 110, flag ? from_end : none);
        char got[256];
        reports_of(out, got, sizeof(got));
        assert_string_equal(got, "100 75.000 -1\n110 75.000 -1\n");
        assert_int_equal(tu_count(out, " pause=eval"), 1);
        assert_non_null(strstr(out, " step=100 pause=eval"));
        assert_non_null(strstr(out, "houston tail: 2 lines read, 2 iterations reported, 0 "
                                    "malformed skipped, 0 reports dropped (and 3 lines the file "
                                    "held at the start, not sent)"));
        /* Said when --from-end was not asked for. */
        assert_true((strstr(out, "following from its end: the 1 steps it holds were read, not "
                                 "sent (--from-start sends them)") != NULL) == !flag);
        free(out);
    }
    /* --from-start: all of it. */
    char *out = follow_from(before, after, 110, from_start);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "90 75.000 -1\n100 75.000 -1\n110 75.000 -1\n");
    assert_null(strstr(out, "following from its end"));
    free(out);

    /* DeepSpeed: the step line before the start starts the clock for the one after. */
    static const char *const ds_end[] = {"--format", "deepspeed", "--from-end", NULL};
    out = follow_from("[2023-11-29 08:52:27,711] [INFO] [logging.py:96:log_dist] [Rank 0] "
                      "step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n",
                      "[2023-11-29 08:52:47,711] [INFO] [logging.py:96:log_dist] [Rank 0] "
                      "step=20, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n",
                      20, ds_end);
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "20 2.000 -1\n");
    free(out);
}

/* --follow of a log that is not there yet (the training creates it after the tail started):
 * waited for, and all it holds when it appears is sent (it was written after the start). */
static void test_follow_waits_for_the_file(void **state)
{
    (void)state;
    char log[PATH_MAX], outp[PATH_MAX], line[512];
    (void)snprintf(log, sizeof(log), "%s/later.log", tu_tmpdir());
    (void)snprintf(outp, sizeof(outp), "%s/later.out", tu_tmpdir());
    static const char *const none[] = {NULL};
    pid_t pid = spawn_follower(log, outp, none);
    char *out = wait_output(outp, "not there yet");
    assert_non_null(strstr(out, "houston tail: "));
    assert_non_null(strstr(out, "later.log: not there yet, waiting for it\n"));
    free(out);
    /* It appears with its two lines in it (renamed into place). */
    char tmp[PATH_MAX + 8];
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", log);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    assert_true(fputs(iter_line(line, sizeof(line), 1), f) >= 0);
    assert_true(fputs(iter_line(line, sizeof(line), 2), f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, log), 0);
    free(wait_output(outp, " step=2 "));
    out = stop_follower(pid, outp);
    char got[256];
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "1 75.000 -1\n2 75.000 -1\n");
    assert_null(strstr(out, "following from its end"));
    free(out);

    /* Without --follow a missing file is an error (exit 2), at once. */
    char *argv[] = {"tail", "--print", "--job", "7", "/nonexistent/houston-tail.log", NULL};
    struct tu_capture c;
    tu_capture_begin(&c);
    int rc = hn_cmd_tail(5, argv);
    tu_capture_end(&c);
    char *err = tu_slurp(c.err, NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "houston tail: cannot open /nonexistent/houston-tail.log: No such "
                                "file or directory"));
    free(err);
}

/*
 * A last line without its end, all of it in the file at the start, is not sent by --from-end
 * read once (without --follow): no byte of it came after the start, so its end never came.
 * Before, the end of the input sent it (step 100), as a line written after the start.
 */
static void test_from_end_last_line(void **state)
{
    (void)state;
    char l90[512], l100[512], text[1200];
    iter_line(l90, sizeof(l90), 90);
    iter_line(l100, sizeof(l100), 100);
    l100[strlen(l100) - 1] = '\0'; /* whole, no newline */
    (void)snprintf(text, sizeof(text), "%s%s", l90, l100);
    char *out = TAIL(text, "--from-end");
    assert_string_equal(out, "");
    assert_non_null(strstr(last_err, "houston tail: 0 lines read, 0 iterations reported, 0 "
                                     "malformed skipped, 0 reports dropped (and 2 lines the "
                                     "file held at the start, not sent)"));
    free(out);
}

/*
 * A requeued job's appended log that ends in the middle of the killed run's last line: the new
 * run's first output does not end it (joined, the two read as the old run's step 100, which the
 * controller would take for the new run's first). Without SLURM_RESTART_COUNT the piece is a
 * line still being written, and is ended by what comes next.
 */
static void test_requeued_log_ends_mid_line(void **state)
{
    (void)state;
    char l90[512], l100[512], l10[512], before[2048], after[2048];
    iter_line(l90, sizeof(l90), 90);
    iter_line(l100, sizeof(l100), 100);
    iter_line(l10, sizeof(l10), 10);
    l100[strlen(l100) - 20] = '\0'; /* killed after its step time, before its end */
    (void)snprintf(before, sizeof(before), "%s%s", l90, l100);
    (void)snprintf(after, sizeof(after), "> building GPT model ...\n%s", l10);
    static const char *const none[] = {NULL};
    char got[256];
    char *out = follow_from(before, after, 10, none);
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "100 75.000 -1\n10 75.000 -1\n"); /* what it is without the rule */
    free(out);
    assert_int_equal(setenv("SLURM_RESTART_COUNT", "1", 1), 0);
    out = follow_from(before, after, 10, none);
    assert_int_equal(unsetenv("SLURM_RESTART_COUNT"), 0);
    reports_of(out, got, sizeof(got));
    assert_string_equal(got, "10 75.000 -1\n");
    assert_non_null(strstr(out, "houston tail: 2 lines read, 1 iterations reported, 0 malformed "
                                "skipped, 0 reports dropped (and 2 lines the file held at the "
                                "start, not sent)"));
    free(out);
}

static int setup(void **state)
{
    /* The reports' identity comes from the flags only. */
    static const char *const vars[] = {
        "SLURM_JOB_ID",        "HOUSTON_JOB_ID",     "RANK",
        "SLURM_PROCID",        "LOCAL_RANK",         "SLURM_LOCALID",
        "WORLD_SIZE",          "SLURM_NTASKS",       "HOUSTON_STEP_SOCKET",
        "SLURM_JOB_NUM_NODES", "SLURM_GPUS_ON_NODE", "SLURM_RESTART_COUNT"};
    for (size_t i = 0; i < HN_ARRAY_LEN(vars); i++)
        unsetenv(vars[i]);
    return tu_tmpdir_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ckpt_real_log),
        cmocka_unit_test(test_ckpt_success_line),
        cmocka_unit_test(test_ckpt_async),
        cmocka_unit_test(test_ckpt_restart),
        cmocka_unit_test(test_tokens_per_rank),
        cmocka_unit_test(test_deepspeed_real_log),
        cmocka_unit_test(test_deepspeed_saves),
        cmocka_unit_test(test_ckpt_one_notice),
        cmocka_unit_test(test_nemo_async_save),
        cmocka_unit_test(test_nemo_sync_save),
        cmocka_unit_test(test_eval_notice),
        cmocka_unit_test(test_periodic_eval_notice),
        cmocka_unit_test(test_deepspeed_eval),
        cmocka_unit_test(test_format_hint),
        cmocka_unit_test(test_nemo1_save),
        cmocka_unit_test(test_nul_hole),
        cmocka_unit_test(test_overlong_line),
        cmocka_unit_test(test_overlong_line_straddling),
        cmocka_unit_test(test_cut_last_line),
        cmocka_unit_test(test_follow_stop),
        cmocka_unit_test(test_from_end),
        cmocka_unit_test(test_follow_waits_for_the_file),
        cmocka_unit_test(test_from_end_last_line),
        cmocka_unit_test(test_requeued_log_ends_mid_line),
    };
    return cmocka_run_group_tests(tests, setup, tu_tmpdir_teardown);
}

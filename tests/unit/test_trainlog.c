/*
 * test_trainlog.c - Megatron, NeMo and DeepSpeed lines (src/jobs/trainlog.c): every line of the
 * real logs in tests/fixtures/training-logs against iterations_expected.csv (see its
 * SOURCE.md), then the NeMo formats and malformed lines, written here.
 */
#include "testutil.h"

#include "common/xid.h"
#include "jobs/trainlog.h"

#include <math.h>

#define NLOGS 5

static const char *const logs[NLOGS] = {
    "bigscience/meg_ds_3d_gpt2_perf_n16-ds-off.out",
    "bigscience/meg_ds_3d_gpt2_perf_n16-ds-on.out",
    "bigscience/meg_gpt2_base_n4_dp1_tp4_pp4-1809579.out",
    "bigscience/meg_gpt2_base_n8_dp1_tp4_pp8-1809562.out",
    "superbenchmark/megatron_deepspeed.log",
};

static const char *fixture(const char *name)
{
    static char path[PATH_MAX];
    return tu_fixture(path, sizeof(path), "training-logs/%s", name);
}

/* Parses exactly the n bytes at s (copied to a buffer of that size, so ASan sees overreads). */
static int parse_n(const char *s, size_t n, struct hn_trainlog_rec *rec)
{
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n); /* NOLINT(bugprone-not-null-terminated-result): unterminated on purpose */
    memset(rec, 0x5a, sizeof(*rec));
    int r = hn_trainlog_parse(copy, n, rec);
    free(copy);
    return r;
}

static int parse(const char *s, struct hn_trainlog_rec *rec)
{
    return parse_n(s, strlen(s), rec);
}

/* The parse of every line of one log, by 1-based line number. */
struct parsed {
    int nlines;
    int *rc;
    struct hn_trainlog_rec *rec;
};

static void parse_log(const char *name, struct parsed *out)
{
    size_t len;
    char *text = tu_slurp(fixture(name), &len);
    int cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == '\n';
    out->rc = xcalloc((size_t)cap + 1, sizeof(int));
    out->rec = xcalloc((size_t)cap + 1, sizeof(struct hn_trainlog_rec));
    out->nlines = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        int no = ++out->nlines;
        out->rc[no] = parse_n(p, n, &out->rec[no]);
        p = nl ? nl + 1 : end;
    }
    free(text);
}

static void parsed_free(struct parsed *p)
{
    free(p->rc);
    free(p->rec);
}

/* ---- the real logs ---- */

static int log_index(const char *name)
{
    for (int i = 0; i < NLOGS; i++) {
        if (strcmp(logs[i], name) == 0)
            return i;
    }
    fail_msg("unknown log %s", name);
    return 0;
}

static void test_expected_csv(void **state)
{
    (void)state;
    struct parsed logs_parsed[NLOGS];
    for (int i = 0; i < NLOGS; i++)
        parse_log(logs[i], &logs_parsed[i]);
    int expected_per_log[NLOGS] = {0};

    size_t len;
    char *text = tu_slurp(fixture("iterations_expected.csv"), &len);
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, text, len);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_string_equal(r.field[0], "file");
    assert_string_equal(r.field[5], "elapsed_ms_per_iteration");
    int rows = 0, rc;
    while ((rc = hn_csv_reader_next(&r, err, sizeof(err))) == 1) {
        rows++;
        assert_int_equal(r.nfields, 6);
        int li = log_index(r.field[0]);
        expected_per_log[li]++;
        int64_t no, iter, total;
        double ms;
        assert_int_equal(hn_parse_i64(r.field[1], 10, &no), 0);
        assert_int_equal(hn_parse_i64(r.field[3], 10, &iter), 0);
        assert_int_equal(hn_parse_i64(r.field[4], 10, &total), 0);
        assert_int_equal(hn_parse_double(r.field[5], &ms), 0);
        struct parsed *lp = &logs_parsed[li];
        assert_true(no >= 1 && no <= lp->nlines);
        if (lp->rc[no] != 1)
            fail_msg("%s:%lld: parse gave %d", r.field[0], (long long)no, lp->rc[no]);
        const struct hn_trainlog_rec *rec = &lp->rec[no];
        assert_int_equal(rec->format, HN_TRAINLOG_MEGATRON);
        assert_int_equal(rec->iteration, iter);
        assert_int_equal(rec->train_iters, total);
        assert_true(rec->elapsed_ms == ms); /* the same text through the same strtod */
        assert_string_equal(rec->prefix, r.field[2]);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 156);
    hn_csv_reader_fini(&r);
    free(text);

    /* No other line of the logs is an iteration line, and none looks like a broken one; the
     * one checkpoint save in them (after the last iteration of the Megatron-DeepSpeed run)
     * is read as one; no line says it completed (the launcher kills the job's processes
     * next). */
    int saves = 0, deepspeed_steps = 0;
    for (int i = 0; i < NLOGS; i++) {
        int ones = 0;
        for (int no = 1; no <= logs_parsed[i].nlines; no++) {
            int got = logs_parsed[i].rc[no];
            if (got < 0)
                fail_msg("%s:%d: parse gave -1", logs[i], no);
            if (got == HN_TRAINLOG_ITERATION &&
                logs_parsed[i].rec[no].format == HN_TRAINLOG_DEEPSPEED) {
                deepspeed_steps++; /* the engine's own lines (test_deepspeed_real_logs) */
                continue;
            }
            ones += got == HN_TRAINLOG_ITERATION;
            if (got == HN_TRAINLOG_SAVE_ASYNC || got == HN_TRAINLOG_SAVED)
                fail_msg("%s:%d: parse gave %d", logs[i], no, got);
            if (got == HN_TRAINLOG_SAVE) {
                saves++;
                assert_string_equal(logs[i], "superbenchmark/megatron_deepspeed.log");
                assert_int_equal(no, 1443);
                assert_int_equal(logs_parsed[i].rec[no].iteration, 5);
                assert_string_equal(logs_parsed[i].rec[no].prefix, "vm-07-05");
            }
        }
        assert_int_equal(ones, expected_per_log[i]);
        parsed_free(&logs_parsed[i]);
    }
    assert_int_equal(saves, 1);
    assert_int_equal(deepspeed_steps, 7);
}

/* DeepSpeed's engine lines in the real logs: step 0 when the engine is set up, then a line
 * after every step of the Megatron-DeepSpeed run (steps_per_print 1), each with its time. */
static void test_deepspeed_real_logs(void **state)
{
    (void)state;
    struct parsed p;
    parse_log("superbenchmark/megatron_deepspeed.log", &p);
    static const struct {
        int no;
        unsigned step;
        double time; /* calendar.timegm of the stamp, as Python computes it */
    } want[] = {
        {1221, 0, 1701247871.650}, {1428, 1, 1701247947.711}, {1431, 2, 1701248022.835},
        {1433, 3, 1701248098.114}, {1436, 4, 1701248173.554}, {1439, 5, 1701248248.159},
    };
    int n = 0;
    for (int no = 1; no <= p.nlines; no++) {
        if (p.rc[no] != HN_TRAINLOG_ITERATION || p.rec[no].format != HN_TRAINLOG_DEEPSPEED)
            continue;
        assert_true(n < (int)HN_ARRAY_LEN(want));
        assert_int_equal(no, want[n].no);
        assert_int_equal(p.rec[no].iteration, want[n].step);
        assert_true(fabs(p.rec[no].time_s - want[n].time) < 1e-6);
        assert_true(isnan(p.rec[no].elapsed_ms));
        assert_string_equal(p.rec[no].prefix, "vm-07-05");
        assert_int_equal(p.rec[no].global_batch, -1);
        assert_true(isnan(p.rec[no].tflops));
        n++;
    }
    assert_int_equal(n, HN_ARRAY_LEN(want));
    parsed_free(&p);

    /* The configuration DeepSpeed prints at set-up: the samples of one step. */
    parse_log("superbenchmark/megatron_deepspeed.log", &p);
    int batches = 0;
    for (int no = 1; no <= p.nlines; no++) {
        if (p.rc[no] != HN_TRAINLOG_BATCH)
            continue;
        batches++;
        assert_int_equal(no, 1329);
        assert_int_equal(p.rec[no].format, HN_TRAINLOG_DEEPSPEED);
        assert_int_equal(p.rec[no].global_batch, 2048);
        assert_string_equal(p.rec[no].prefix, "vm-07-05");
    }
    assert_int_equal(batches, 1);
    parsed_free(&p);

    parse_log("bigscience/meg_ds_3d_gpt2_perf_n16-ds-on.out", &p);
    assert_int_equal(p.rc[670], HN_TRAINLOG_ITERATION);
    assert_int_equal(p.rec[670].format, HN_TRAINLOG_DEEPSPEED);
    assert_int_equal(p.rec[670].iteration, 0);
    assert_true(fabs(p.rec[670].time_s - 1623358071.885) < 1e-6);
    assert_string_equal(p.rec[670].prefix, "");
    parsed_free(&p);
}

/* DeepSpeed's checkpoint lines (written here from DeepSpeed's checkpoint engines), its other
 * lines and broken ones. */
static void test_deepspeed(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    static const struct {
        const char *line;
        int kind;
        uint64_t step;
    } lines[] = {
        {"[2024-02-29 23:59:59,500] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
         "global_step100 is about to be saved!",
         HN_TRAINLOG_SAVE, 100},
        {"[2024-03-01 00:00:01.250] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
         "global_step100 is begin to save!",
         HN_TRAINLOG_SAVE, 100},
        {"[2024-03-01 00:00:01,250] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] "
         "Checkpoint global_step100 is ready now!",
         HN_TRAINLOG_SAVED, 100},
        {"0: [2024-03-01 00:00:01,250] [INFO] [logging.py:96:log_dist] [Rank 0] step=110, "
         "skipped=2, lr=[0.0001], mom=[(0.9, 0.999)]",
         HN_TRAINLOG_ITERATION, 110},
        /* no time stamp: still a step line, the reader counts it as malformed */
        {"[Rank 0] step=7, skipped=0, lr=[0.1]", HN_TRAINLOG_ITERATION, 7},
        /* a tag of the job's own: no step (the reader takes its last) */
        {"[2024-03-01 00:00:01,250] [Torch] Checkpoint best is about to be saved!",
         HN_TRAINLOG_SAVE, 0},
        {"[2024-03-01 00:00:01,250] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] "
         "Checkpoint epoch-3 is ready now!",
         HN_TRAINLOG_SAVED, 0},
        /* not DeepSpeed's: a tag without the engine's "[Torch] ", the throughput line, a step
         * without skipped= */
        {"[2024-03-01 00:00:01,250] Checkpoint best is about to be saved!", HN_TRAINLOG_OTHER, 0},
        {"[2024-03-01 00:00:01,250] [Torch] Checkpoint  is about to be saved!", HN_TRAINLOG_OTHER,
         0},
        {"[2024-03-01 00:00:01,250] [Torch] Checkpoint global_step5 was saved", HN_TRAINLOG_OTHER,
         0},
        {"[INFO] [timer.py:215:stop] epoch=0/micro_step=10/global_step=10, "
         "RunningAvgSamplesPerSec=199.08, CurrSamplesPerSec=216.75",
         HN_TRAINLOG_OTHER, 0},
        {"evaluating at step=10 of 100", HN_TRAINLOG_OTHER, 0},
    };
    double t[4];
    for (size_t i = 0; i < HN_ARRAY_LEN(lines); i++) {
        int got = parse(lines[i].line, &rec);
        if (got != lines[i].kind)
            fail_msg("parse gave %d, not %d: %s", got, lines[i].kind, lines[i].line);
        if (got == HN_TRAINLOG_OTHER)
            continue;
        assert_int_equal(rec.format, HN_TRAINLOG_DEEPSPEED);
        assert_int_equal(rec.iteration, lines[i].step);
        assert_int_equal(rec.no_step, strstr(lines[i].line, "global_step") == NULL &&
                                          strstr(lines[i].line, "step=") == NULL);
        if (i < 4)
            t[i] = rec.time_s;
    }
    assert_string_equal(rec.prefix, "");
    assert_true(isnan(rec.time_s)); /* the line without a stamp */
    /* 2024 is a leap year: Feb 29 is a day, and the stamps are 1.75 s apart. */
    assert_true(fabs(t[1] - t[0] - 1.75) < 1e-6);
    assert_true(t[2] == t[1] && t[3] == t[1]);
    assert_true(fabs(t[0] - 1709251199.5) < 1e-6);
    assert_int_equal(parse(lines[3].line, &rec), HN_TRAINLOG_ITERATION);
    assert_string_equal(rec.prefix, "0");
    /* torchrun's prefixes of a worker's lines, also behind a launcher's. */
    static const char *const torchrun[] = {
        "[default0]:[2024-03-01 00:00:01,250] [INFO] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[rank12]: [2024-03-01 00:00:01,250] [INFO] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "node-3: [default7]:[2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[1,0]<stdout>:[2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(torchrun); i++) {
        assert_int_equal(parse(torchrun[i], &rec), HN_TRAINLOG_ITERATION);
        if (!(rec.time_s == t[1]))
            fail_msg("no time read from %s", torchrun[i]);
    }

    /* Stamps that are not dates leave the time unknown; a step that does not fit is broken. */
    static const char *const no_time[] = {
        "[2024-13-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[2024-03-01 24:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[2024-03-01 00:00:01] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[24-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "x [2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[default0] [2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[1,0]<stdout [2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[1,0]<stdout>[2024-03-01 00:00:01,250] [Rank 0] step=1, skipped=0, lr=[0.1]",
        "[a-prefix-of-more-than-32-bytes-xx]:[2024-03-01 00:00:01,250] [Rank 0] step=1, "
        "skipped=0, lr=[0.1]",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(no_time); i++) {
        assert_int_equal(parse(no_time[i], &rec), HN_TRAINLOG_ITERATION);
        if (!isnan(rec.time_s))
            fail_msg("a time read from %s", no_time[i]);
    }
    assert_int_equal(parse("[Rank 0] step=99999999999999999999999, skipped=0, lr=[0.1]", &rec), -1);

    /* The batch size line, and lines that only look like it. */
    assert_int_equal(parse("[INFO] [config.py:978:print]   train_batch_size ..... 16  ", &rec),
                     HN_TRAINLOG_BATCH);
    assert_int_equal(rec.global_batch, 16);
    static const char *const not_batch[] = {
        "[INFO] [config.py:978:print]   train_batch_size ............. 0",
        "[INFO] [config.py:978:print]   train_batch_size ............. 16x",
        "[INFO] [config.py:978:print]   train_batch_size ............. 64 (auto)",
        "[INFO] [config.py:978:print]   train_batch_size ............. None",
        "[INFO] [config.py:978:print]   train_batch_size 16",
        "[INFO] [config.py:978:print]   max_train_batch_size ......... 128",
        "    \"train_batch_size\": 2.048000e+03, ",
        "[INFO] train_batch_size ............. 99999999999999999999999",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(not_batch); i++) {
        if (parse(not_batch[i], &rec) != HN_TRAINLOG_OTHER)
            fail_msg("taken for a batch size: %s", not_batch[i]);
    }
    assert_string_equal(hn_trainlog_format_name(HN_TRAINLOG_DEEPSPEED), "deepspeed");
}

/* The fields besides the step time, on one line of each kind of log. */
static void test_fields(void **state)
{
    (void)state;
    struct parsed p;
    parse_log("superbenchmark/megatron_deepspeed.log", &p);
    const struct hn_trainlog_rec *rec = &p.rec[1429];
    assert_int_equal(p.rc[1429], 1);
    assert_int_equal(rec->consumed_samples, 2048);
    assert_int_equal(rec->consumed_tokens, 4194304);
    assert_int_equal(rec->global_batch, 2048);
    assert_int_equal(rec->seq_len, 2048);
    assert_true(rec->samples_per_s == 26.942);
    assert_true(rec->tflops == 147.61);
    assert_true(isnan(rec->tokens_per_s_gpu));
    parsed_free(&p);

    parse_log("bigscience/meg_ds_3d_gpt2_perf_n16-ds-on.out", &p);
    rec = &p.rec[901];
    assert_int_equal(p.rc[901], 1);
    assert_int_equal(rec->iteration, 1);
    assert_int_equal(rec->global_batch, 1024);
    assert_int_equal(rec->consumed_samples, 1024);
    assert_int_equal(rec->consumed_tokens, -1);
    assert_int_equal(rec->seq_len, -1);
    assert_true(isnan(rec->tflops));
    assert_true(isnan(rec->samples_per_s));
    assert_string_equal(rec->prefix, "");
    parsed_free(&p);
}

/* Logs of other programs: not one iteration line. */
static void test_other_logs(void **state)
{
    (void)state;
    const char *names[] = {"superbenchmark/dist_inference.log",
                           "superbenchmark/nccl_allreduce.log"};
    for (size_t i = 0; i < HN_ARRAY_LEN(names); i++) {
        struct parsed p;
        parse_log(names[i], &p);
        assert_true(p.nlines > 10);
        for (int no = 1; no <= p.nlines; no++) {
            if (p.rc[no] != 0)
                fail_msg("%s:%d: parse gave %d", names[i], no, p.rc[no]);
        }
        parsed_free(&p);
    }
}

/* ---- Megatron-LM's current line and forks ---- */

static void test_megatron_lm(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(
        parse("[2024-05-01 12:00:00] iteration      100/   20000 | consumed samples:       102400 "
              "| elapsed time per iteration (ms): 1523.4 | throughput per GPU (TFLOP/s/GPU): "
              "402.5 | learning rate: 1.000000E-04 | global batch size:  1024 | lm loss: "
              "2.345678E+00 | loss scale: 1.0 | grad norm: 0.512 | number of skipped iterations:   "
              "0 | number of nan iterations:   0 |",
              &rec),
        1);
    assert_int_equal(rec.format, HN_TRAINLOG_MEGATRON);
    assert_int_equal(rec.iteration, 100);
    assert_int_equal(rec.train_iters, 20000);
    assert_true(rec.elapsed_ms == 1523.4);
    assert_true(rec.tflops == 402.5);
    assert_int_equal(rec.global_batch, 1024);
    assert_int_equal(rec.consumed_samples, 102400);
    assert_string_equal(rec.prefix, "");

    /* A fork that prints min/max pairs and per-GPU tokens, after its own logger's brackets. */
    assert_int_equal(parse("[20250101 10:00:00][rank-7/8][INFO ] [trainer.py:100] : iteration "
                           "12/ 500 | consumed samples: 1536 | elapsed time per iteration (ms): "
                           "2000.5/1990.0 | tokens per GPU (tokens/s/GPU): 8000.5/8100.0 | "
                           "throughput per GPU (TFLOP/s/GPU): 450.0/451.0 | global batch size: "
                           "128 |",
                           &rec),
                     1);
    assert_int_equal(rec.iteration, 12);
    assert_int_equal(rec.train_iters, 500);
    assert_true(rec.elapsed_ms == 2000.5);
    assert_true(rec.tokens_per_s_gpu == 8000.5);
    assert_true(rec.tflops == 450.0);

    /* srun --label and pdsh prefixes; a prefix that is too long is not one. */
    assert_int_equal(parse(" 12: iteration 3/ 9 | elapsed time per iteration (ms): 1.5 |", &rec),
                     1);
    assert_string_equal(rec.prefix, "12");
    char line[256];
    memset(line, 'h', 64);
    snprintf(line + 64, sizeof(line) - 64,
             ": iteration 3/ 9 | elapsed time per iteration (ms): 1 |");
    assert_int_equal(parse(line, &rec), 1);
    assert_string_equal(rec.prefix, "");

    /* A known field that is not a number is left unknown; the step still counts. */
    assert_int_equal(parse(" iteration 2/ 9 | elapsed time per iteration (ms): 10 | TFLOPs: inf | "
                           "global batch size: n/a |",
                           &rec),
                     1);
    assert_true(isnan(rec.tflops));
    assert_int_equal(rec.global_batch, -1);
}

/* The lines Megatron's rank 0 prints when a checkpoint save begins, when it goes to a
 * background writer and when it completed, as Megatron-LM and Megatron-DeepSpeed word them,
 * with launcher prefixes. */
static void test_checkpoint_save(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int kind;
        uint64_t iteration;
        const char *prefix;
    } saves[] = {
        {"saving checkpoint at iteration     500 to /ckpt/gpt", HN_TRAINLOG_SAVE, 500, ""},
        {"saving checkpoint at iteration    1000 to /lustre/ckpt in torch_dist format",
         HN_TRAINLOG_SAVE, 1000, ""},
        {"vm-07-14: saving checkpoint at iteration      10 to .//checkpoint/gpt_6.7B",
         HN_TRAINLOG_SAVE, 10, "vm-07-14"},
        {" 0: [2024-05-01 12:00:00] global rank 0 is saving checkpoint at iteration 7 to /c",
         HN_TRAINLOG_SAVE, 7, "0"},
        {"  scheduled an async checkpoint save at iteration    1000 to /lustre/ckpt",
         HN_TRAINLOG_SAVE_ASYNC, 1000, ""},
        {"vm-07-05:   successfully saved checkpoint at iteration       5 to .//checkpoint/gpt",
         HN_TRAINLOG_SAVED, 5, "vm-07-05"},
        {"  successfully saved checkpoint from iteration    1000 to /lustre/ckpt [ t 1/4, p 1/2 ]",
         HN_TRAINLOG_SAVED, 1000, ""},
    };
    struct hn_trainlog_rec rec;
    for (size_t i = 0; i < HN_ARRAY_LEN(saves); i++) {
        if (parse(saves[i].line, &rec) != saves[i].kind)
            fail_msg("not read as checkpoint line %d: %s", saves[i].kind, saves[i].line);
        assert_int_equal(rec.format, HN_TRAINLOG_MEGATRON);
        assert_int_equal(rec.iteration, saves[i].iteration);
        assert_string_equal(rec.prefix, saves[i].prefix);
    }
    /* Without its number, or with one that runs into other text or overflows: garbled. */
    static const char *const bad[] = {
        "saving checkpoint at iteration",
        "saving checkpoint at iteration  to /ckpt",
        "saving checkpoint at iteration 12abc to /ckpt",
        "saving checkpoint at iteration 99999999999999999999999 to /ckpt",
        "successfully saved checkpoint at iteration to /ckpt",
        "successfully saved checkpoint from iteration 5x to /ckpt",
        "scheduled an async checkpoint save at iteration",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        if (parse(bad[i], &rec) != -1)
            fail_msg("garbled save line not flagged: %s", bad[i]);
    }
}

/* ---- NeMo ---- */

/* NeMo 2's checkpoint lines, worded as its MegatronCheckpointIO, its async checkpoint IO and
 * Lightning's ModelCheckpoint print them (after "[NeMo I <date> nemo_logging:393] " for the
 * first three): each names the save by steps completed, NeMo's 0-based iteration plus 1. */
static void test_nemo_checkpoint(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int kind;
        uint64_t iteration;
    } saves[] = {
        {"Epoch 0, global step 49: 'val_loss' was not in top 5", HN_TRAINLOG_SAVE, 50},
        {"Epoch 2, global step 999: 'reduced_train_loss' reached 1.61913 (best 1.61913), saving "
         "model to '/results/ckpt/m--reduced_train_loss=1.6191-epoch=2.ckpt' as top 3",
         HN_TRAINLOG_SAVE, 1000},
        {"[NeMo I 2025-06-18 16:52:43 nemo_logging:393] Global Checkpoint Save : Rank: 0 : "
         "Iteration: 49 : Start time: 1750290740.432s : Save duration: 23.107s",
         HN_TRAINLOG_SAVE, 50},
        {"[NeMo I 2025-06-18 16:52:54 nemo_logging:393] Scheduled async checkpoint save for "
         "/results/ckpt/m--val_loss=0.0000-epoch=0-last.ckpt",
         HN_TRAINLOG_SAVE_ASYNC, 0},
        {"[NeMo I 2025-06-18 16:53:08 nemo_logging:393] Successfully saved checkpoint from "
         "iteration      49 to /results/ckpt/m--val_loss=0.0000-epoch=0-last.ckpt",
         HN_TRAINLOG_SAVED, 50},
        {"[NeMo I 2025-06-18 16:53:08 nemo_logging:393] Async checkpoint save for step 50 "
         "(/results/ckpt/m--val_loss=0.0000-epoch=0-last.ckpt) finalized successfully.",
         HN_TRAINLOG_SAVED, 50},
    };
    struct hn_trainlog_rec rec;
    for (size_t i = 0; i < HN_ARRAY_LEN(saves); i++) {
        if (parse(saves[i].line, &rec) != saves[i].kind)
            fail_msg("not read as checkpoint line %d: %s", saves[i].kind, saves[i].line);
        assert_int_equal(rec.format, HN_TRAINLOG_NEMO);
        assert_int_equal(rec.iteration, saves[i].iteration);
        assert_int_equal(rec.lightning, i < 2); /* Lightning's own line: the reader decides */
    }
    /* Without their number: garbled. */
    static const char *const bad[] = {
        "Epoch 0, global step x: 'val_loss' was not in top 5",
        "Epoch 0, global step 49 'val_loss' reached 1.2 (best 1.2), saving model to 'm.ckpt'",
        "Global Checkpoint Save : Rank: 0 : Iteration:  : Start time: 1.0s",
        "Global Checkpoint Save : Rank: 0 : Start time: 1.0s",
        "Successfully saved checkpoint from iteration 4x9 to /ckpt",
        "Async checkpoint save for step (/ckpt/step=1.ckpt) finalized successfully.",
        "Successfully saved checkpoint from iteration 18446744073709551615 to /ckpt",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        if (parse(bad[i], &rec) != -1)
            fail_msg("garbled save line not flagged: %s", bad[i]);
    }
    /* Lightning's line for a metric that was not kept, and an async save's start and end
     * lines in other words, are not saves. */
    static const char *const other[] = {
        "Epoch 0, global step 49: 'val_loss' reached 1.5 (best 1.4)",
        "global step 49: 'val_loss' was not in top 5",
        "Async checkpoint save for step 50 (/ckpt) failed",
        "Async finalization time took 0.109 s",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) != 0)
            fail_msg("not a checkpoint line, parsed: %s", other[i]);
    }
}

/* Hugging Face Trainer's metrics after an evaluation: the runtimes, summed over the named
 * evaluation sets, for the DeepSpeed reader; the training's own metrics and its final summary
 * are not evaluations. */
static void test_eval_time(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse("{'eval_loss': 0.34769394993782043, 'eval_runtime': 9.2465, "
                           "'eval_samples_per_second': 10.815, 'eval_steps_per_second': 1.406, "
                           "'epoch': 0.9}",
                           &rec),
                     HN_TRAINLOG_EVAL_TIME);
    assert_int_equal(rec.format, HN_TRAINLOG_DEEPSPEED);
    assert_true(fabs(rec.elapsed_ms - 9246.5) < 1e-6);
    assert_int_equal(parse("[default0]:{'eval_wiki_loss': 2.1, 'eval_wiki_runtime': '60.5', "
                           "'eval_code_runtime': 4, 'epoch': 1.0}",
                           &rec),
                     HN_TRAINLOG_EVAL_TIME);
    assert_true(fabs(rec.elapsed_ms - 64500.0) < 1e-6);
    static const char *const other[] = {
        "{'loss': 0.3862, 'grad_norm': 0.1513, 'learning_rate': 7.6e-07, 'epoch': 0.9}",
        "{'train_runtime': 1234.5, 'train_samples_per_second': 8.1, 'epoch': 3.0}",
        "{'eval_runtime_total': 5.0}",
        "'eval_runtime' is the time of one evaluation",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) != 0)
            fail_msg("not an evaluation's metrics, parsed: %s", other[i]);
    }
    static const char *const bad[] = {
        "{'eval_loss': 0.3, 'eval_runtime': nan, 'epoch': 1.0}",
        "{'eval_runtime': -1.5}",
        "{'eval_runtime': '9.5, 'epoch': 1.0}",
        "{'eval_runtime': }",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        if (parse(bad[i], &rec) != -1)
            fail_msg("garbled evaluation runtime not flagged: %s", bad[i]);
    }
}

/* An evaluation's first line (Megatron-LM's, NeMo 2's): format and prefix; its later lines and
 * Megatron's count of samples are other lines. */
static void test_eval(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse("Evaluating iter 1/10", &rec), HN_TRAINLOG_EVAL);
    assert_int_equal(rec.format, HN_TRAINLOG_MEGATRON);
    assert_int_equal(parse(" 3: Evaluating iter 1/32", &rec), HN_TRAINLOG_EVAL);
    assert_string_equal(rec.prefix, "3");
    assert_int_equal(parse("    Validation: iteration 1/20", &rec), HN_TRAINLOG_EVAL);
    assert_int_equal(rec.format, HN_TRAINLOG_NEMO);
    static const char *const other[] = {
        "Evaluating iter 2/10",
        "Evaluating on 80 samples",
        "Evaluating iter /10",
        "Validation: iteration 20/20",
        "Validation: iteration 1",
        "Evaluating iter 10/10",
        "Sanity checking Validation: iteration 1/2",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) != 0)
            fail_msg("not an evaluation's start, parsed: %s", other[i]);
    }
}

/* The end of Megatron's periodic evaluation, the line of tests/fixtures/training-logs/
 * bigscience/meg_gpt2_base_n4_dp1_tp4_pp4-1809579.out; not the one at the end of training. */
static void test_validated(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse(" validation loss at iteration 100 | lm loss value: 8.017406E+00 | lm "
                           "loss PPL: 3.033300E+03 | ",
                           &rec),
                     HN_TRAINLOG_VALIDATED);
    assert_int_equal(rec.format, HN_TRAINLOG_MEGATRON);
    assert_int_equal(rec.iteration, 100);
    assert_int_equal(parse("vm-1: validation loss at iteration 2000 | lm loss value: 2.1 |", &rec),
                     HN_TRAINLOG_VALIDATED);
    assert_int_equal(rec.iteration, 2000);
    assert_string_equal(rec.prefix, "vm-1");
    static const char *const other[] = {
        " validation loss at the end of training for val data | lm loss value: 2.1 |",
        " validation loss at iteration | lm loss value: 2.1 |",
        " validation loss at iteration 1x0 | lm loss value: 2.1 |",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) != 0)
            fail_msg("not an evaluation's end, parsed: %s", other[i]);
    }
}

/* Megatron-LM's evaluations after training (pretrain(), "iteration N on validation set", "on
 * test set") are not periodic ones: their iteration, where training stopped (train_iters, an
 * exit interval or duration), is no multiple of the eval interval, and taken as one it would
 * shrink the interval tail learns (gcd(1000, 1234) = 2). Before, both were read as the end of a
 * periodic evaluation at 1234. */
static void test_validated_after_training_is_not_periodic(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    static const char *const other[] = {
        " validation loss at iteration 1234 on validation set | lm loss value: 2.1 |",
        " validation loss at iteration 1234 on test set | lm loss value: 2.1 |",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) == HN_TRAINLOG_VALIDATED)
            fail_msg("not a periodic evaluation's end, parsed: %s", other[i]);
    }
    assert_int_equal(parse(" validation loss at iteration 1000 |", &rec), HN_TRAINLOG_VALIDATED);
    assert_int_equal(parse(" validation loss at iteration 1000", &rec), HN_TRAINLOG_VALIDATED);
}

/* Megatron's arguments for its periodic evaluations, as the fixtures' logs print them. */
static void test_eval_arguments(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse("  eval_interval ................................... 100", &rec),
                     HN_TRAINLOG_EVAL_INTERVAL);
    assert_int_equal(rec.format, HN_TRAINLOG_MEGATRON);
    assert_int_equal(rec.iteration, 100);
    assert_int_equal(
        parse("vm-07-05:   eval_iters ...................................... 10", &rec),
        HN_TRAINLOG_EVAL_ITERS);
    assert_int_equal(rec.iteration, 10);
    assert_string_equal(rec.prefix, "vm-07-05");
    assert_int_equal(parse("  eval_iters ...................................... 0", &rec),
                     HN_TRAINLOG_EVAL_ITERS);
    assert_int_equal(rec.iteration, 0);
    static const char *const other[] = {
        "  eval_interval ................................... None",
        "  eval_interval ................................... 0",
        "  tensorboard_eval_interval ....................... 100",
        "  eval_interval 100",
        "  eval_interval ................................... 100 steps",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(other); i++) {
        if (parse(other[i], &rec) != 0)
            fail_msg("not an evaluation argument, parsed: %s", other[i]);
    }
}

static void test_nemo2(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse("Training epoch 0, iteration 41/199 | lr: 8.2e-06 | global_batch_size: "
                           "64 | global_step: 41 | reduced_train_loss: 3.117 | train_step_timing "
                           "in s: 0.4375 | consumed_samples: 2688",
                           &rec),
                     1);
    assert_int_equal(rec.format, HN_TRAINLOG_NEMO);
    assert_int_equal(rec.iteration, 42); /* global_step counts from 0 */
    assert_int_equal(rec.train_iters, 200);
    assert_true(rec.elapsed_ms == 437.5);
    assert_int_equal(rec.global_batch, 64);
    assert_int_equal(rec.consumed_samples, 2688);

    /* The first step prints no consumed_samples; TFLOPs and tokens when the job asks. */
    assert_int_equal(parse(" 0: Training epoch 0, iteration 0/99 | lr: 0 | global_batch_size: 8 | "
                           "global_step: 0 | train_step_timing in s: 6.5 | tokens_per_sec_per_gpu: "
                           "1.25e+04 | TFLOPS_per_GPU: 612.5",
                           &rec),
                     1);
    assert_int_equal(rec.iteration, 1);
    assert_int_equal(rec.train_iters, 100);
    assert_true(rec.elapsed_ms == 6500.0);
    assert_true(rec.tokens_per_s_gpu == 12500.0);
    assert_true(rec.tflops == 612.5);
    assert_int_equal(rec.consumed_samples, -1);
    assert_string_equal(rec.prefix, "0");
}

static void test_nemo1_progress_bar(void **state)
{
    (void)state;
    struct hn_trainlog_rec rec;
    assert_int_equal(parse("Epoch 0: :  40%|####      | 8/20 [05:01<07:32, v_num=0, "
                           "reduced_train_loss=10.25, global_step=7.000, consumed_samples=4096.0, "
                           "train_step_timing in s=37.25]",
                           &rec),
                     1);
    assert_int_equal(rec.format, HN_TRAINLOG_NEMO);
    assert_int_equal(rec.iteration, 8);
    assert_int_equal(rec.train_iters, 0);
    assert_true(rec.progress_bar && !rec.lightning);
    assert_true(rec.elapsed_ms == 37250.0);
    assert_int_equal(rec.consumed_samples, 4096);

    /* Four significant digits in exponent form, and a message glued after the bar. */
    assert_int_equal(parse("Epoch 0: : 100%|##########| 3000/3000 [1:00:00<00:00, "
                           "reduced_train_loss=0.031, global_step=3e+3, consumed_samples=3.84e+5, "
                           "train_step_timing in s=1.200, val_loss=0.25][rank: 1] Monitored metric "
                           "val_loss did not improve",
                           &rec),
                     1);
    assert_int_equal(rec.iteration, 3001);
    assert_int_equal(rec.consumed_samples, 384000);
    assert_true(rec.elapsed_ms == 1200.0);

    /* The older name without the unit. */
    assert_int_equal(parse("Epoch 1: 10%|#| 5/50 [00:10<01:30, loss=2.1, global_step=54.0, "
                           "train_step_timing=2.0]",
                           &rec),
                     1);
    assert_int_equal(rec.iteration, 55);
    assert_true(rec.elapsed_ms == 2000.0);
}

/* ---- lines that are not iterations, and broken ones ---- */

static void test_not_iterations(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "",
        "loading checkpoint from /ckpt at iteration 500",
        "successfully saved checkpoint to /ckpt",
        "[Rank 0] (after 1 iterations) memory (MB) | allocated: 17956.49 | max allocated: 68581.8",
        "[INFO] [timer.py:260:stop] epoch=0/micro_step=3/global_step=3, CurrSamplesPerSec=291.6",
        "reiteration 5/ 10 | elapsed",
        "iteration 5/ 10 without a bar",
        "iterations 5/ 10 |",
        "Latency of step 3: 1.8339 ms",
        "  train_iters ..................................... 1000",
    };
    struct hn_trainlog_rec rec;
    for (size_t i = 0; i < HN_ARRAY_LEN(lines); i++) {
        if (parse(lines[i], &rec) != 0)
            fail_msg("not an iteration line, parsed: %s", lines[i]);
    }
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *const lines[] = {
        /* a head without a step time (the log was cut mid-line) */
        " iteration       10/    1000 | consumed samples:           40 | elapsed time per itera",
        " iteration       10/    1000 | consumed samples:           40 |",
        /* a step time that is not a number, negative, or not finite */
        " iteration 10/ 1000 | elapsed time per iteration (ms): abc |",
        " iteration 10/ 1000 | elapsed time per iteration (ms): -5.0 |",
        " iteration 10/ 1000 | elapsed time per iteration (ms): nan |",
        " iteration 10/ 1000 | elapsed time per iteration (ms): 1e999 |",
        " iteration 10/ 1000 | elapsed time per iteration (ms): 12x |",
        /* numbers that do not fit */
        " iteration 99999999999999999999999/ 1000 | elapsed time per iteration (ms): 1 |",
        " iteration 1/ 99999999999999999999999 | elapsed time per iteration (ms): 1 |",
        "Training epoch 0, iteration 1/18446744073709551615 | train_step_timing in s: 1",
        /* a step time without its head */
        "iteration | consumed samples: 40 | elapsed time per iteration (ms): 2152.2 |",
        "Training epoch 0, iteration 28/ | train_step_timing in s: 0.2",
        /* progress bars without a usable global_step or time */
        "Epoch 0: 5%| | 1/20 [00:01<00:19, reduced_train_loss=9.1, train_step_timing in s=1.0]",
        "Epoch 0: 5%| | 1/20 [00:01<00:19, global_step=1.5, train_step_timing in s=1.0]",
        "Epoch 0: 5%| | 1/20 [00:01<00:19, global_step=1, train_step_timing in s=]",
        "Epoch 0: 5%| | 1/20 [00:01<00:19, global_step=1, train_step_timing in s=-2]",
        /* NeMo 2 with a broken global_step */
        "Training epoch 0, iteration 3/9 | global_step: x | train_step_timing in s: 0.5",
        /* seconds that overflow as milliseconds */
        "Training epoch 0, iteration 3/9 | train_step_timing in s: 1e306",
    };
    struct hn_trainlog_rec rec;
    for (size_t i = 0; i < HN_ARRAY_LEN(lines); i++) {
        if (parse(lines[i], &rec) != -1)
            fail_msg("malformed line not flagged: %s", lines[i]);
    }
}

/* Every prefix of a real line, byte by byte: no overread, and never a wrong record. */
static void test_every_prefix(void **state)
{
    (void)state;
    static const char line[] =
        "vm-07-14:  iteration        3/       5 | consumed samples:         6144 | consumed "
        "tokens:     12582912 | elapsed time per iteration (ms): 75249.6 | learning rate: "
        "3.600E-07 | global batch size:  2048 | samples per second: 27.216 | TFLOPs: 149.11 |";
    struct hn_trainlog_rec rec;
    for (size_t n = 0; n <= sizeof(line) - 1; n++) {
        int r = parse_n(line, n, &rec);
        assert_true(r >= -1 && r <= 1);
        if (r == 1) {
            assert_int_equal(rec.iteration, 3);
            assert_int_equal(rec.train_iters, 5);
            assert_true(rec.elapsed_ms > 0 && rec.elapsed_ms <= 75249.6);
        }
    }
    assert_int_equal(parse_n(line, sizeof(line) - 1, &rec), 1);
    assert_true(rec.tflops == 149.11);
    assert_string_equal(hn_trainlog_format_name(HN_TRAINLOG_MEGATRON), "megatron");
    assert_string_equal(hn_trainlog_format_name(HN_TRAINLOG_NEMO), "nemo");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_csv),
        cmocka_unit_test(test_deepspeed_real_logs),
        cmocka_unit_test(test_deepspeed),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_other_logs),
        cmocka_unit_test(test_megatron_lm),
        cmocka_unit_test(test_nemo2),
        cmocka_unit_test(test_nemo1_progress_bar),
        cmocka_unit_test(test_not_iterations),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_every_prefix),
        cmocka_unit_test(test_checkpoint_save),
        cmocka_unit_test(test_nemo_checkpoint),
        cmocka_unit_test(test_eval),
        cmocka_unit_test(test_validated),
        cmocka_unit_test(test_eval_arguments),
        cmocka_unit_test(test_validated_after_training_is_not_periodic),
        cmocka_unit_test(test_eval_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

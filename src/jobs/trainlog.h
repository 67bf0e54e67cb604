/*
 * trainlog.h - reads the per-iteration lines that training frameworks print to their logs, so
 * that `houston tail` can turn a job's log into step reports (docs/tail.md).
 *
 * Formats read (each exactly as the framework prints it; see tests/fixtures/training-logs):
 *
 *   Megatron-LM and Megatron-DeepSpeed (also NeMo 1 jobs built on Megatron):
 *     [TIME] iteration      100/    1000 | consumed samples: 102400 | elapsed time per
 *     iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 401.2 | learning rate: ... |
 *     global batch size:  1024 | lm loss: ... | samples per second: 26.9 | TFLOPs: 147.61 | ...
 *   and, from a checkpoint save (megatron/training/checkpointing.py, print_rank_0), when it
 *   begins, when it was handed to a background writer (--async-save) and when it completed:
 *     saving checkpoint at iteration     500 to /path/to/checkpoints [in torch_dist format]
 *     scheduled an async checkpoint save at iteration     500 to /path/to/checkpoints
 *     successfully saved checkpoint at iteration     500 to /path/to/checkpoints
 *     successfully saved checkpoint from iteration     500 to /path [ t 1/4, p 1/2 ]
 *   (the "at" form is Megatron-DeepSpeed's and older Megatron-LM's, "from" the later one's).
 *   NeMo 2 (Lightning, MegatronProgressBar):
 *     Training epoch 0, iteration 28/99 | lr: ... | global_batch_size: 32 | global_step: 28 |
 *     reduced_train_loss: 2.778 | train_step_timing in s: 0.189 | consumed_samples: 928
 *   and, from a checkpoint save (NeMo's MegatronCheckpointIO and Lightning's ModelCheckpoint;
 *   read_nemo_save in trainlog.c has the whole list), when it begins, when it went to a
 *   background writer and when it completed:
 *     Epoch 0, global step 49: 'val_loss' was not in top 5
 *     Global Checkpoint Save : Rank: 0 : Iteration: 49 : Start time: ... : Save duration: ...
 *     Scheduled async checkpoint save for /ckpt/step=49.ckpt
 *     Successfully saved checkpoint from iteration      49 to /ckpt/step=49.ckpt
 *     Async checkpoint save for step 50 (/ckpt/step=49.ckpt) finalized successfully.
 *   NeMo 1 (Lightning progress bar, one redraw per '\r'):
 *     Epoch 0: : 47%|####| 7/15 [06:19<07:13, reduced_train_loss=11.50, global_step=5.000,
 *     consumed_samples=12288.0, train_step_timing in s=49.50]
 *   The first line of an evaluation, Megatron-LM's "Evaluating iter 1/10" and NeMo 2's
 *   "Validation: iteration 1/20", says the job stops stepping to evaluate.
 *
 * A line may start with a launcher prefix (pdsh's "host: ", srun --label's "0: ") and a time
 * stamp; fields may come in any order and unknown ones are skipped. Megatron numbers
 * iterations from 1 (iteration k closes the k-th step); NeMo's global_step counts from 0, so
 * a NeMo record's iteration is global_step + 1 and its train_iters the printed total + 1: both
 * formats then say "steps completed", as a checkpoint's step number does.
 *
 *   DeepSpeed's engine (a job driven by DeepSpeed without Megatron: Hugging Face's Trainer, a
 *   loop of its own), every steps_per_print steps and around each checkpoint save (its
 *   default tag, global_stepN; DeepSpeed's runtime/engine.py and checkpoint_engine/):
 *     [2023-11-29 08:52:27,711] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0,
 *     lr=[1.2e-07], mom=[(0.9, 0.95)]
 *     [...] [Rank 0] [Torch] Checkpoint global_step10 is about to be saved!
 *     [...] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step10 is ready now!
 *   and, among the configuration it prints when the engine is set up (config.py, print),
 *     [2023-11-29 08:51:11,653] [INFO] [config.py:978:print]   train_batch_size ...... 2048
 *   the samples of one step (the record's global_batch), and Hugging Face Trainer's metrics
 *   after an evaluation (its evaluation time, elapsed_ms, which is not step time):
 *     {'eval_loss': 0.3477, 'eval_runtime': 9.2465, 'eval_samples_per_second': 10.815, ...}
 *   A step line has no step time: the record carries the line's time stamp instead (time_s,
 *   also behind torchrun's "[default0]:" or "[rank0]:"), and the reader divides the time
 *   between two step lines by the steps between. The engine's
 *   throughput lines ("epoch=0/micro_step=3/global_step=3, RunningAvgSamplesPerSec=...") are
 *   not read: their samples per second count micro-batches in a way that gives no step time.
 *
 * Numbers are read with strtod() and so assume the C locale, which houston never changes.
 * The parser is a pure function: no allocation, no global state, safe from any thread, and
 * it reads only line[0..len) (no NUL needed).
 */
#ifndef HN_TRAINLOG_H
#define HN_TRAINLOG_H

#include <stddef.h>
#include <stdint.h>

enum hn_trainlog_format {
    HN_TRAINLOG_MEGATRON = 1,  /* Megatron-LM, Megatron-DeepSpeed */
    HN_TRAINLOG_NEMO = 2,      /* NeMo 2 iteration lines, NeMo 1 progress bars */
    HN_TRAINLOG_DEEPSPEED = 3, /* DeepSpeed's engine: step and checkpoint lines */
};

/* What a line is: hn_trainlog_parse's result when it is not -1. */
enum hn_trainlog_kind {
    HN_TRAINLOG_OTHER = 0,
    HN_TRAINLOG_ITERATION = 1,
    HN_TRAINLOG_SAVE = 2,       /* "saving checkpoint at iteration N": a save begins */
    HN_TRAINLOG_SAVE_ASYNC = 3, /* "scheduled an async checkpoint save at iteration N" */
    HN_TRAINLOG_SAVED = 4,      /* "successfully saved checkpoint at|from iteration N" */
    HN_TRAINLOG_BATCH = 5,      /* DeepSpeed's configuration: "train_batch_size ..... N" */
    HN_TRAINLOG_EVAL = 6,       /* an evaluation begins: "Evaluating iter 1/K" */
    HN_TRAINLOG_EVAL_TIME = 7,  /* an evaluation took this long: "{'eval_runtime': 9.25, ...}" */
    HN_TRAINLOG_VALIDATED = 8,  /* a periodic evaluation ended: "validation loss at iteration N" */
    HN_TRAINLOG_EVAL_INTERVAL = 9, /* Megatron's argument "eval_interval ..... N" (N > 0) */
    HN_TRAINLOG_EVAL_ITERS = 10,   /* Megatron's argument "eval_iters ..... N" (0: no evaluation) */
};

#define HN_TRAINLOG_PREFIX_MAX 64 /* launcher prefix bytes + NUL */

/* One iteration line. Unknown integers are -1 (train_iters 0), unknown reals NaN. */
struct hn_trainlog_rec {
    enum hn_trainlog_format format;
    char prefix[HN_TRAINLOG_PREFIX_MAX]; /* "vm-07-14" for "vm-07-14: ...", else "" */
    uint64_t iteration;                  /* steps completed, see above */
    uint64_t train_iters;                /* the planned total, 0 when not printed */
    double elapsed_ms;                   /* time per iteration, averaged over the log interval; >= 0
                                            (NaN for DeepSpeed: see time_s) */
    double time_s;           /* DeepSpeed: the line's time stamp, seconds since the epoch as
                                if it were UTC (NaN: none); NaN for the other formats */
    double samples_per_s;    /* "samples per second" (the whole job) */
    double tokens_per_s_gpu; /* "tokens per GPU (tokens/s/GPU)", "tokens_per_sec_per_gpu" */
    double tflops;           /* per GPU: "TFLOPs", "throughput per GPU (TFLOP/s/GPU)",
                                "TFLOPS_per_GPU" */
    int64_t global_batch;    /* samples per iteration */
    int64_t consumed_samples;
    int64_t consumed_tokens;
    int64_t seq_len; /* Megatron-DeepSpeed's "actual seqlen" */
    /* NeMo: an iteration line that is NeMo 1's progress bar; and Lightning's checkpoint line,
     * whose iteration is its step + 1, right for NeMo 2 (which logs the 0-based iteration as
     * the step Lightning prints), one too many for NeMo 1 (trainer.global_step: steps done).
     * The reader, which knows which kind of iteration lines the log has, takes the 1 off. */
    int progress_bar, lightning;
    /* A checkpoint line that names no step (DeepSpeed's save under a tag of the job's own):
     * iteration 0; the reader takes the step it saw last. */
    int no_step;
};

/*
 * Parses one line (without its newline). Returns HN_TRAINLOG_ITERATION (1) and fills *out for
 * an iteration line; for one of Megatron's or DeepSpeed's checkpoint lines (printed by rank
 * 0, after iteration N's own line; NeMo's too) HN_TRAINLOG_SAVE when a save begins,
 * HN_TRAINLOG_SAVE_ASYNC when it was handed to a background writer and HN_TRAINLOG_SAVED when
 * it completed (for these *out holds format, prefix, iteration N and time_s only; NeMo's line
 * for the background writer names no step: iteration 0, the save begun last);
 * HN_TRAINLOG_EVAL for an evaluation's first line (format and prefix only; it comes after
 * the last iteration's line); HN_TRAINLOG_VALIDATED for Megatron's line after a periodic
 * evaluation (format, prefix and the iteration it followed); HN_TRAINLOG_EVAL_INTERVAL and
 * HN_TRAINLOG_EVAL_ITERS for Megatron's eval_interval and eval_iters arguments (the value in
 * iteration); HN_TRAINLOG_EVAL_TIME for Hugging
 * Face's evaluation metrics (format DeepSpeed, prefix, and the runtimes' sum in elapsed_ms);
 * HN_TRAINLOG_BATCH for DeepSpeed's train_batch_size line (*out holds format, prefix and
 * global_batch only); HN_TRAINLOG_OTHER (0) for any other line (out then holds nothing useful); or
 * -1 for a line that looks like an iteration line but cannot be read: an "iteration N/M |" head
 * without a step time, a step time or global_step that is not a number (or is negative, or does not
 * fit), a progress bar with a train_step_timing but no usable global_step, a step-time field with
 * no head at all (a line cut short or garbled), a checkpoint line without its number, an evaluation
 * runtime that is not a number, or a DeepSpeed step number that does not fit. A DeepSpeed step line
 * without a time stamp is still an iteration line (time_s NaN): the reader decides. Other known
 * fields that hold no number ("TFLOPs: inf") are left unknown and the line still counts.
 */
int hn_trainlog_parse(const char *line, size_t len, struct hn_trainlog_rec *out);

/* "megatron", "nemo" or "deepspeed". */
const char *hn_trainlog_format_name(enum hn_trainlog_format f);

#endif

/*
 * fuzz_trainlog.c - libFuzzer target for the training-log parser (src/jobs/trainlog.c).
 *
 * The input is one arbitrary line, not NUL-terminated. Besides not crashing or reading past
 * the line, the parser must keep its promises: a result of -1 or an enum hn_trainlog_kind,
 * a Megatron, NeMo or DeepSpeed record with a clean prefix for a checkpoint line (NeMo's
 * counting steps done: from 1 for a save's start, 0 for its async line), a batch of at least
 * 1 for DeepSpeed's batch size line, a Megatron or NeMo record for an evaluation's start, a
 * finite non-negative time for Hugging Face's evaluation metrics, and for an iteration a
 * record with a known format, a non-negative finite step time (DeepSpeed: none, and a time
 * stamp that is unknown or not negative), a terminated prefix made only of the bytes a
 * launcher prefix may hold, and counts that are -1 or more.
 */
#include "jobs/trainlog.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int prefix_ok(const char *p)
{
    size_t n = strnlen(p, HN_TRAINLOG_PREFIX_MAX);
    if (n == HN_TRAINLOG_PREFIX_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hn_trainlog_rec rec;
    int r = hn_trainlog_parse((const char *)data, size, &rec);
    if (r < -1 || r > HN_TRAINLOG_EVAL_TIME)
        abort();
    if (r >= 0 &&
        ((rec.lightning && !(r == HN_TRAINLOG_SAVE && rec.format == HN_TRAINLOG_NEMO)) ||
         (rec.progress_bar && !(r == HN_TRAINLOG_ITERATION && rec.format == HN_TRAINLOG_NEMO))))
        abort(); /* NeMo's marks: Lightning's save line, NeMo 1's progress bar */
    if (r == HN_TRAINLOG_EVAL &&
        ((rec.format != HN_TRAINLOG_MEGATRON && rec.format != HN_TRAINLOG_NEMO) ||
         !prefix_ok(rec.prefix)))
        abort(); /* an evaluation begins */
    if (r == HN_TRAINLOG_EVAL_TIME &&
        (rec.format != HN_TRAINLOG_DEEPSPEED || !(rec.elapsed_ms >= 0) ||
         !isfinite(rec.elapsed_ms) || !prefix_ok(rec.prefix)))
        abort(); /* Hugging Face's evaluation runtime */
    if (r == HN_TRAINLOG_BATCH &&
        (rec.format != HN_TRAINLOG_DEEPSPEED || rec.global_batch < 1 || !prefix_ok(rec.prefix)))
        abort();                                           /* DeepSpeed's batch size */
    if (r >= HN_TRAINLOG_SAVE && r <= HN_TRAINLOG_SAVED) { /* a checkpoint line */
        if (!prefix_ok(rec.prefix))
            abort();
        if (rec.format != HN_TRAINLOG_DEEPSPEED && !isnan(rec.time_s))
            abort();
        if (rec.format == HN_TRAINLOG_NEMO &&
            (r == HN_TRAINLOG_SAVE_ASYNC ? rec.iteration != 0
                                         : r == HN_TRAINLOG_SAVE && rec.iteration == 0))
            abort(); /* a save begins after NeMo's iteration N: N + 1; its async line: 0 */
        if (rec.format == HN_TRAINLOG_DEEPSPEED &&
            (r == HN_TRAINLOG_SAVE_ASYNC || (!isnan(rec.time_s) && !(rec.time_s >= 0))))
            abort(); /* DeepSpeed has no async line; a stamp is a date from 1970 on */
        if (rec.format != HN_TRAINLOG_MEGATRON && rec.format != HN_TRAINLOG_NEMO &&
            rec.format != HN_TRAINLOG_DEEPSPEED)
            abort();
    }
    if (r != HN_TRAINLOG_ITERATION)
        return 0;
    if (rec.format == HN_TRAINLOG_DEEPSPEED) {
        /* No step time; the stamp, when there is one, is a date from 1970 on. */
        if (!isnan(rec.elapsed_ms) || (!isnan(rec.time_s) && !(rec.time_s >= 0)))
            abort();
    } else if (rec.format != HN_TRAINLOG_MEGATRON && rec.format != HN_TRAINLOG_NEMO) {
        abort();
    } else if (!isfinite(rec.elapsed_ms) || rec.elapsed_ms < 0 || !isnan(rec.time_s)) {
        abort();
    }
    if (!prefix_ok(rec.prefix))
        abort();
    if (rec.global_batch < -1 || rec.consumed_samples < -1 || rec.consumed_tokens < -1 ||
        rec.seq_len < -1)
        abort();
    if (rec.format == HN_TRAINLOG_NEMO && rec.iteration == 0)
        abort(); /* NeMo's global_step + 1 */
    return 0;
}

/*
 * fuzz_trainlog.c - libFuzzer target for the training-log parser (src/jobs/trainlog.c).
 *
 * The input is one arbitrary line, not NUL-terminated. Besides not crashing or reading past
 * the line, the parser must keep its promises: a result of -1 or an enum hn_trainlog_kind,
 * a Megatron record with a clean prefix for a checkpoint line, and for an iteration a record
 * with a known format, a non-negative finite step time, a terminated prefix made only of the
 * bytes a launcher prefix may hold, and counts that are -1 or more.
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
    if (r < -1 || r > HN_TRAINLOG_SAVED)
        abort();
    if (r >= HN_TRAINLOG_SAVE && (rec.format != HN_TRAINLOG_MEGATRON || !prefix_ok(rec.prefix)))
        abort(); /* a checkpoint line */
    if (r != HN_TRAINLOG_ITERATION)
        return 0;
    if (rec.format != HN_TRAINLOG_MEGATRON && rec.format != HN_TRAINLOG_NEMO)
        abort();
    if (!isfinite(rec.elapsed_ms) || rec.elapsed_ms < 0)
        abort();
    if (!prefix_ok(rec.prefix))
        abort();
    if (rec.global_batch < -1 || rec.consumed_samples < -1 || rec.consumed_tokens < -1 ||
        rec.seq_len < -1)
        abort();
    if (rec.format == HN_TRAINLOG_NEMO && rec.iteration == 0)
        abort(); /* NeMo's global_step + 1 */
    return 0;
}

/*
 * fuzz_stepmsg.c - libFuzzer target for the agent's step-report reader (src/common/stepmsg.c).
 *
 * Any bytes: a parse either fails with a reason or gives a report whose job id is printable
 * text without '=' or blanks, whose numbers are in range, and which formats back into a
 * datagram the reader accepts with the same values; or a pause notice, with no duration, a
 * known kind, and the same round trip.
 */
#include "common/stepmsg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hn_step_msg m;
    char err[160];
    if (hn_stepmsg_parse((const char *)data, size, &m, err, sizeof(err)) != 0) {
        if (!memchr(err, '\0', sizeof(err)) || !err[0])
            abort();
        return 0;
    }
    size_t jl = strnlen(m.job, sizeof(m.job));
    if (jl == 0 || jl >= sizeof(m.job))
        abort();
    for (size_t i = 0; i < jl; i++) {
        if (m.job[i] <= ' ' || m.job[i] > '~' || m.job[i] == '=')
            abort();
    }
    const char *pause = hn_pause_name(m.pause);
    if (m.pause != HN_PAUSE_NONE && (!pause || !isnan(m.seconds)))
        abort();
    if (m.pause == HN_PAUSE_NONE && (!(m.seconds >= 0) || !isfinite(m.seconds)))
        abort();
    if (m.rank < -1 || m.world < -1 || m.checkpoint < -1 || (!isnan(m.tokens) && !(m.tokens >= 0)))
        abort();
    /* Round trip through the wire format. */
    char again[600];
    if (pause)
        snprintf(again, sizeof(again), "hs1 job=%s step=%llu pause=%s rank=%lld", m.job,
                 (unsigned long long)m.step, pause, (long long)m.rank);
    else
        snprintf(again, sizeof(again), "hs1 job=%s step=%llu dur=%.17g rank=%lld", m.job,
                 (unsigned long long)m.step, m.seconds, (long long)m.rank);
    struct hn_step_msg m2;
    int rc = hn_stepmsg_parse(again, strlen(again), &m2, err, sizeof(err));
    if (m.rank < 0) /* rank=-1 is not sent by clients and is refused */
        return 0;
    if (rc != 0 || strcmp(m2.job, m.job) != 0 || m2.step != m.step || m2.pause != m.pause ||
        (!pause && m2.seconds != m.seconds) || m2.rank != m.rank)
        abort();
    return 0;
}
